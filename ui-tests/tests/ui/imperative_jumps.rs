// `break`, `continue` and `return` need somewhere to go; a `break 'outer` with a value, and a
// `return` from nested loops of a closure, are not carried out of an inner loop.
use pmexpr::accelerate;

fn main() {
    let n: i64 = 10;
    let _a: i64 = accelerate!(backend = cpu, {
        if n > 3 {
            return 1;
        }
        n
    });
    let _b: i64 = accelerate!(backend = cpu, {
        let mut s = 0;
        for i in 0..n {
            s += i;
        }
        break;
        s
    });
    let _c: i64 = accelerate!(backend = cpu, {
        let mut s = 0;
        for i in 0..n {
            if i > 5 {
                break i;
            }
            s += i;
        }
        s
    });
    let _d: i64 = accelerate!(backend = cpu, {
        'rows: loop {
            for j in 0..n {
                if j > 3 {
                    break 'rows j;
                }
            }
        }
    });
    let _e: Vec<i64> = accelerate!(backend = cpu, {
        map(
            |m: i64| {
                for i in 0..m {
                    for j in 0..m {
                        if i * j == 12 {
                            return i;
                        }
                    }
                }
                -1
            },
            [n],
        )
    });
}
