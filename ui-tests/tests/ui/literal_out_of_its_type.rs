// A literal may be any value of its type (a `u64` up to `u64::MAX`, in a pattern too); one that
// does not fit the type is an error at the literal, as rustc's "literal out of range". (Where
// only a captured value fixes the type, the literal is checked when it runs.)
use pmexpr::accelerate;

fn main() {
    let x: u64 = 9223372036854775808;
    let _ok: i64 = accelerate!(backend = cpu, {
        let y: u64 = x;
        match y {
            9223372036854775808 => 1,
            18446744073709551615 | 0 => 2,
            _ => 0,
        }
    });
    let _r: i64 = accelerate!(backend = cpu, {
        let y: u64 = x;
        match y {
            -1 => 1,
            _ => 0,
        }
    });
    let b: u8 = 7;
    let _s: i64 = accelerate!(backend = cpu, {
        let c: u8 = b;
        match c {
            0..=256 => 1,
            _ => 0,
        }
    });
    let _t: u64 = accelerate!(backend = cpu, x + 18446744073709551616);
}
