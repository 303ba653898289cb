// A mutable local belongs to the closure or `fn` that declares it: a closure cannot assign one
// declared outside it (the function of a parallel keyword, whose calls may run in parallel, least
// of all), a `fn` item cannot use one, and a closure that holds one cannot outlive its block.
use pmexpr::accelerate;

fn main() {
    let s: Vec<i64> = vec![1, 2, 3];
    let _a: Vec<i64> = accelerate!({
        let mut total = 0;
        map(|x| {
            total += x;
            x
        }, s)
    });
    let _b: i64 = accelerate!(backend = cpu, {
        let mut count = 0;
        let bump = |k: i64| {
            count = count + k;
            k
        };
        bump(1)
    });
    let _c: i64 = accelerate!(backend = cpu, {
        let mut base = 10;
        base += 1;
        fn add(k: i64) -> i64 {
            k + base
        }
        add(1)
    });
    let _d: i64 = accelerate!(backend = cpu, {
        let f = {
            let mut step = 1;
            step *= 3;
            move |x: i64| x + step
        };
        f(1)
    });
}
