// Rust syntax with no PMExpr meaning is reported at its own tokens with the PMExpr way to say it.
use pmexpr::accelerate;

fn method(s: &[i64]) -> i64 {
    accelerate!(s.iter().sum())
}

fn cast(s: &[f64]) -> i64 {
    accelerate!(s[0] as u128)
}

fn cast_char(s: &[i64]) -> f64 {
    accelerate!(s[0] as char)
}

fn borrow_mut(s: &[i64]) -> i64 {
    accelerate!(length(&mut s))
}

fn for_windows(s: &[i64]) -> i64 {
    accelerate!(backend = cpu, {
        let mut t = 0;
        for w in s.windows(2) {
            t += 1;
        }
        t
    })
}

fn nested(s: &[i64]) -> i64 {
    accelerate!(accelerate!(length(s)))
}

fn main() {
    let s = vec![1, 2, 3];
    method(&s);
    cast(&[1.5]);
    cast_char(&s);
    borrow_mut(&s);
    for_windows(&s);
    nested(&s);
}
