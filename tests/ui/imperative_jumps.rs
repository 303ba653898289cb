// `break`, `continue` and `return` need somewhere to go, and this compiler does not send them
// out of an inner loop to an outer one.
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
        let mut s = 0;
        'rows: for i in 0..n {
            for j in 0..n {
                if j > i {
                    continue 'rows;
                }
                s += j;
            }
        }
        s
    });
    let _e: i64 = accelerate!(backend = cpu, {
        fn pair(n: i64) -> i64 {
            for i in 0..n {
                for j in 0..n {
                    if i * j == 12 {
                        return i;
                    }
                }
            }
            -1
        }
        pair(n)
    });
}
