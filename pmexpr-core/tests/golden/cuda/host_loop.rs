//! Host code around launches: a `seq_loop` on the host whose body launches two kernels, then a
//! third launch. The loop itself is host code, not generated (see the header).
fn main() {
    accelerate!({
        seq_loop(steps, |s| {
            par_loop(n, |i| tensor_set(next, [i], tensor_get(cur, [i]) + s));
            par_loop(n, |i| tensor_set(cur, [i], tensor_get(next, [i])))
        });
        par_loop(n, |i| tensor_set(cur, [i], tensor_get(cur, [i]) * 2))
    });
}
