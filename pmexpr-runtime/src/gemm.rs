//! `tensor_gemm(c, a, trans_a, b, trans_b, alpha, beta)`: the dense matrix product
//! `c := alpha · op(a) · op(b) + beta · c` over rank-2 float tensors, where `op(x)` is `x`, or its
//! transpose when the flag is `true`.
//!
//! **Meaning** (the sequential backend and debug mode run exactly this, and it defines the
//! results): with `op(a)` of shape `[m, k]`, `op(b)` `[k, n]` and `c` `[m, n]`, for every `i` in
//! `0..m` and `j` in `0..n` in order, `acc = 0; for l in 0..k { acc = acc + op(a)[i, l] ·
//! op(b)[l, j] }`, then `c[i, j] = alpha · acc + beta · c[i, j]` — except that `beta == 0` does not
//! read `c` (as in BLAS: a NaN there is overwritten). The `cpu` backend runs the multithreaded
//! `matrixmultiply` GEMM, which sums in another order: its results agree within rounding.
//!
//! Every target checks first, and fails at the `accelerate!` site, naming the tensors: each is of
//! rank 2, the shapes agree, and `c` shares no memory with `a` or `b` (the product would read what
//! it writes).
//!
//! On the CUDA targets host code checks the operands ([`gemm_elements`]) and launches a kernel
//! that the CUDA generator made for the product (the prelude's `pm_gemm`: one element of `c` per
//! index, summed in the meaning's order, so the results are the meaning's bit for bit).

use std::cell::RefCell;

use rayon::prelude::*;

use crate::backend::Backend;
use crate::numeric::Float;
use crate::policy::GEMM_COPY_CHUNK as CHUNK;
use crate::prim::{Same, Which};
use crate::raw::gemm::PlainGemm;
use crate::site::Site;
use crate::tensor::{Element, TensorRef};

/// `tensor_gemm` at `site`: checks the operands (`names`: how the site spells `c`, `a`, `b`), then
/// computes on `B` (the triple loop, or the multithreaded GEMM on a parallel backend).
#[allow(clippy::too_many_arguments)] // the intrinsic's seven arguments
pub fn tensor_gemm<B: Backend, T: Float>(
    site: &Site,
    names: [&str; 3],
    c: TensorRef<'_, T>,
    a: TensorRef<'_, T>,
    trans_a: bool,
    b: TensorRef<'_, T>,
    trans_b: bool,
    alpha: T,
    beta: T,
) {
    let g = Gemm::checked(site, names, c, a, trans_a, b, trans_b);
    if g.m == 0 || g.n == 0 {
        return;
    }
    if B::PARALLEL && g.k > 0 {
        g.fast(alpha, beta);
    } else {
        g.loops(alpha, beta);
    }
}

/// `tensor_gemm` at `site` on the CUDA targets: checks the operands as [`tensor_gemm`] does,
/// and gives the number of elements of `c`, which the kernel that computes the product covers
/// (one element per index; the prelude's `pm_gemm`).
#[allow(clippy::too_many_arguments)] // the intrinsic's operands
pub fn gemm_elements<T: Float>(
    site: &Site,
    names: [&str; 3],
    c: TensorRef<'_, T>,
    a: TensorRef<'_, T>,
    trans_a: bool,
    b: TensorRef<'_, T>,
    trans_b: bool,
) -> i64 {
    let g = Gemm::checked(site, names, c, a, trans_a, b, trans_b);
    (g.m * g.n) as i64
}

/// A checked product: the row-major strides of `op(a)`, `op(b)` and `c`.
struct Gemm<'a, T: Element> {
    m: usize,
    k: usize,
    n: usize,
    c: &'a [T::Cell],
    a: &'a [T::Cell],
    b: &'a [T::Cell],
    /// Row and column strides of `op(a)` (`[m, k]`).
    a_rs: usize,
    a_cs: usize,
    /// Row and column strides of `op(b)` (`[k, n]`).
    b_rs: usize,
    b_cs: usize,
}

impl<'a, T: Float> Gemm<'a, T> {
    #[allow(clippy::too_many_arguments)]
    fn checked(
        site: &Site,
        [cn, an, bn]: [&str; 3],
        c: TensorRef<'a, T>,
        a: TensorRef<'a, T>,
        trans_a: bool,
        b: TensorRef<'a, T>,
        trans_b: bool,
    ) -> Self {
        for (t, name, role) in [(&c, cn, "c"), (&a, an, "a"), (&b, bn, "b")] {
            if t.rank() != 2 {
                site.fail(format_args!(
                    "tensor_gemm needs matrices (rank 2): its `{role}` argument `{name}` has shape {:?}",
                    t.shape()
                ));
            }
        }
        // op(x) and its strides in x's row-major storage.
        let op = |t: &TensorRef<'a, T>, trans: bool| {
            let (r, cols) = (t.shape()[0], t.shape()[1]);
            if trans {
                (cols, r, 1, cols)
            } else {
                (r, cols, cols, 1)
            }
        };
        let (m, k, a_rs, a_cs) = op(&a, trans_a);
        let (kb, n, b_rs, b_cs) = op(&b, trans_b);
        let shown = |trans: bool, name: &str, t: &TensorRef<'a, T>| {
            let s = t.shape();
            if trans {
                format!("`{name}`ᵀ [{}, {}]", s[1], s[0])
            } else {
                format!("`{name}` [{}, {}]", s[0], s[1])
            }
        };
        if k != kb || c.shape() != [m, n] {
            site.fail(format_args!(
                "tensor_gemm with shapes that do not agree: {} · {} into `{cn}` {:?} (the product needs [m, k] · [k, n] into [m, n])",
                shown(trans_a, an, &a),
                shown(trans_b, bn, &b),
                c.shape()
            ));
        }
        let (cc, ac, bc) = (c.cells(), a.cells(), b.cells());
        for (x, name) in [(ac, an), (bc, bn)] {
            if overlap(cc, x) {
                site.fail(format_args!(
                    "tensor_gemm writes `{cn}`, which shares memory with its operand `{name}` (write the product into a tensor of its own)"
                ));
            }
        }
        Gemm {
            m,
            k,
            n,
            c: cc,
            a: ac,
            b: bc,
            a_rs,
            a_cs,
            b_rs,
            b_cs,
        }
    }

    /// The meaning: the triple loop.
    fn loops(&self, alpha: T, beta: T) {
        let zero = T::from_lit(0.0, 0.0);
        for i in 0..self.m {
            for j in 0..self.n {
                let mut acc = zero;
                for l in 0..self.k {
                    let x = T::load(&self.a[i * self.a_rs + l * self.a_cs]);
                    let y = T::load(&self.b[l * self.b_rs + j * self.b_cs]);
                    acc = acc.add(x.mul(y));
                }
                let cell = &self.c[i * self.n + j];
                let v = if beta == zero {
                    alpha.mul(acc)
                } else {
                    alpha.mul(acc).add(beta.mul(T::load(cell)))
                };
                T::store(cell, v);
            }
        }
    }

    /// The multithreaded GEMM of `matrixmultiply` (`k > 0`, `m, n > 0`).
    ///
    /// The tensors' cells are atomics that other threads may read or write while the product
    /// runs (a [`Tensor`](crate::Tensor) is a shared handle), and a plain access racing with an
    /// atomic one is undefined behaviour. So the GEMM never touches the cells: `a` and `b` are
    /// loaded into plain buffers (in parallel), the product is computed into a third, and `c` is
    /// updated through its cells (in parallel). The buffers are this thread's scratch, reused
    /// from one product to the next: fresh buffers of tens of megabytes cost a page fault per
    /// 4 KiB, which measured more than the copies themselves.
    fn fast(&self, alpha: T, beta: T) {
        match <T as Element>::WHICH {
            Which::F64(same) => self.product(alpha, beta, &same),
            Which::F32(same) => self.product(alpha, beta, &same),
            // `Float` is implemented for `f64` and `f32` only.
            _ => self.loops(alpha, beta),
        }
    }

    /// `fast` in the concrete element type `E`, which is `T` itself (the caller matched
    /// `T::WHICH`; `same` converts `alpha` and views the scratch buffers): copies, `E`'s GEMM into the plain buffers, the update
    /// of `c`. The copies and the update work in `T` (the scratch buffers are viewed as `T`s), so
    /// that no conversion sits in their loops.
    fn product<E: ScratchElement>(&self, alpha: T, beta: T, same: &Same<T, E>) {
        let (m, k, n) = (self.m, self.k, self.n);
        let (la, lb, lc) = (self.a.len(), self.b.len(), m * n);
        E::with_scratch([la, lb, lc], |a, b, ab| {
            let load = |cells: &[T::Cell], out: &mut [T]| {
                out.par_chunks_mut(CHUNK)
                    .zip(cells.par_chunks(CHUNK))
                    .for_each(|(o, c)| o.iter_mut().zip(c).for_each(|(x, c)| *x = T::load(c)));
            };
            load(self.a, same.from_slice_mut(a));
            load(self.b, same.from_slice_mut(b));
            let s = |x: usize| x as isize;
            E::gemm(PlainGemm {
                m,
                k,
                n,
                alpha: same.to(alpha),
                a,
                a_rs: s(self.a_rs),
                a_cs: s(self.a_cs),
                b,
                b_rs: s(self.b_rs),
                b_cs: s(self.b_cs),
                c: ab,
                c_rs: s(n),
            });
            let ab: &[T] = same.from_slice_mut(ab);
            let zero = T::from_lit(0.0, 0.0);
            self.c
                .par_chunks(CHUNK)
                .zip(ab.par_chunks(CHUNK))
                .for_each(|(cells, vs)| {
                    for (cell, &v) in cells.iter().zip(vs) {
                        // As in the meaning, `beta == 0` does not read `c`.
                        let v = if beta == zero {
                            v
                        } else {
                            v.add(beta.mul(T::load(cell)))
                        };
                        T::store(cell, v);
                    }
                });
        })
    }
}

/// `f64` and `f32`, with this thread's scratch buffers for them and their GEMM.
trait ScratchElement: Copy + Default + Send + Sync + 'static {
    /// `c := alpha · a · b` with `matrixmultiply` (`c` need not be initialized).
    fn gemm(g: PlainGemm<'_, Self>);

    /// Runs `f` on three buffers of the given lengths (contents unspecified).
    fn with_scratch<R>(
        lens: [usize; 3],
        f: impl FnOnce(&mut [Self], &mut [Self], &mut [Self]) -> R,
    ) -> R;
}

macro_rules! scratch_element {
    ($t:ty, $key:ident) => {
        thread_local! {
            static $key: RefCell<[Vec<$t>; 3]> = RefCell::new(Default::default());
        }
        impl ScratchElement for $t {
            fn gemm(g: PlainGemm<'_, Self>) {
                g.run()
            }

            fn with_scratch<R>(
                lens: [usize; 3],
                f: impl FnOnce(&mut [Self], &mut [Self], &mut [Self]) -> R,
            ) -> R {
                let fit = |bufs: &mut [Vec<$t>; 3]| {
                    for (buf, &len) in bufs.iter_mut().zip(&lens) {
                        if buf.len() < len {
                            buf.resize(len, 0.0);
                        }
                    }
                };
                $key.with(|cell| match cell.try_borrow_mut() {
                    Ok(mut bufs) => {
                        fit(&mut bufs);
                        let [a, b, c] = &mut *bufs;
                        f(&mut a[..lens[0]], &mut b[..lens[1]], &mut c[..lens[2]])
                    }
                    // A product while this thread's scratch is in use (a task stolen during the
                    // copies): buffers of its own.
                    Err(_) => {
                        let mut bufs: [Vec<$t>; 3] = Default::default();
                        fit(&mut bufs);
                        let [a, b, c] = &mut bufs;
                        f(a, b, c)
                    }
                })
            }
        }
    };
}
scratch_element!(f64, SCRATCH_F64);
scratch_element!(f32, SCRATCH_F32);

/// Whether two views share an element.
fn overlap<C>(x: &[C], y: &[C]) -> bool {
    let range = |s: &[C]| {
        let p = s.as_ptr() as usize;
        (p, p + std::mem::size_of_val(s))
    };
    let ((x0, x1), (y0, y1)) = (range(x), range(y));
    x0 < y1 && y0 < x1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{CpuBackend, DebugBackend, SeqBackend};
    use crate::tensor::Tensor;

    const SITE: Site = Site::new("gemm.rs", 1, 1);

    /// A deterministic matrix with varied entries.
    fn matrix<T: Float>(rows: usize, cols: usize, seed: u64) -> Tensor<T> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        Tensor::from_fn(&[rows, cols], |_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            T::from_i64((x % 2001) as i64 - 1000).mul(T::from_lit(1e-3, 1e-3))
        })
    }

    /// The triple loop of the meaning, written out over plain vectors.
    #[allow(clippy::too_many_arguments)]
    fn reference(
        c: &[f64],
        (m, n): (usize, usize),
        a: &Tensor<f64>,
        ta: bool,
        b: &Tensor<f64>,
        tb: bool,
        alpha: f64,
        beta: f64,
    ) -> Vec<f64> {
        let at = |t: &Tensor<f64>, tr: bool, i: usize, j: usize| {
            if tr { t.get(&[j, i]) } else { t.get(&[i, j]) }.unwrap()
        };
        let k = if ta { a.shape()[0] } else { a.shape()[1] };
        let mut out = c.to_vec();
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0.0;
                for l in 0..k {
                    acc += at(a, ta, i, l) * at(b, tb, l, j);
                }
                out[i * n + j] = alpha * acc
                    + if beta == 0.0 {
                        0.0
                    } else {
                        beta * c[i * n + j]
                    };
            }
        }
        out
    }

    fn run<B: Backend, T: Float>(
        c: &Tensor<T>,
        a: &Tensor<T>,
        ta: bool,
        b: &Tensor<T>,
        tb: bool,
        alpha: T,
        beta: T,
    ) {
        let v = |t| TensorRef::new(t, &SITE, "t");
        tensor_gemm::<B, T>(
            &SITE,
            ["c", "a", "b"],
            v(c),
            v(a),
            ta,
            v(b),
            tb,
            alpha,
            beta,
        );
    }

    /// `m × k` times `k × n`, non-square, every transpose combination.
    fn operands<T: Float>(ta: bool, tb: bool) -> (Tensor<T>, Tensor<T>, Tensor<T>) {
        let (m, k, n) = (5, 7, 3);
        let a = if ta { matrix(k, m, 1) } else { matrix(m, k, 1) };
        let b = if tb { matrix(n, k, 2) } else { matrix(k, n, 2) };
        (matrix(m, n, 3), a, b)
    }

    #[test]
    fn the_sequential_backends_run_the_triple_loop_exactly() {
        for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
            for beta in [0.0, 1.0, -0.5] {
                let (c, a, b) = operands::<f64>(ta, tb);
                let want = reference(&c.to_vec(), (5, 3), &a, ta, &b, tb, 1.5, beta);
                for debug in [false, true] {
                    let c2 = c.clone();
                    if debug {
                        run::<DebugBackend, f64>(&c2, &a, ta, &b, tb, 1.5, beta);
                    } else {
                        run::<SeqBackend, f64>(&c2, &a, ta, &b, tb, 1.5, beta);
                    }
                    assert_eq!(c2.to_vec(), want, "ta={ta} tb={tb} beta={beta}");
                }
            }
        }
    }

    #[test]
    fn the_cpu_backend_agrees_within_rounding_in_f64_and_f32() {
        for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
            let (c, a, b) = operands::<f64>(ta, tb);
            let want = reference(&c.to_vec(), (5, 3), &a, ta, &b, tb, -0.75, 2.0);
            run::<CpuBackend, f64>(&c, &a, ta, &b, tb, -0.75, 2.0);
            for (x, y) in c.to_vec().iter().zip(&want) {
                assert!((x - y).abs() <= 1e-12, "f64 ta={ta} tb={tb}: {x} vs {y}");
            }
            let (c, a, b) = operands::<f32>(ta, tb);
            let seq = c.clone();
            run::<SeqBackend, f32>(&seq, &a, ta, &b, tb, -0.75, 2.0);
            run::<CpuBackend, f32>(&c, &a, ta, &b, tb, -0.75, 2.0);
            for (x, y) in c.to_vec().iter().zip(&seq.to_vec()) {
                assert!((x - y).abs() <= 1e-5, "f32 ta={ta} tb={tb}: {x} vs {y}");
            }
        }
    }

    #[test]
    fn beta_zero_does_not_read_c_and_empty_products_scale_c() {
        let (c, a, b) = operands::<f64>(false, false);
        c.set(&[0, 0], f64::NAN).unwrap();
        let c2 = c.clone();
        run::<SeqBackend, f64>(&c, &a, false, &b, false, 1.0, 0.0);
        run::<CpuBackend, f64>(&c2, &a, false, &b, false, 1.0, 0.0);
        assert!(!c.to_vec()[0].is_nan() && !c2.to_vec()[0].is_nan());
        // k = 0: c := beta · c on every backend.
        let (a0, b0) = (Tensor::<f64>::zeros(&[2, 0]), Tensor::<f64>::zeros(&[0, 2]));
        for cpu in [false, true] {
            let c = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], &[2, 2]);
            if cpu {
                run::<CpuBackend, f64>(&c, &a0, false, &b0, false, 1.0, 3.0);
            } else {
                run::<SeqBackend, f64>(&c, &a0, false, &b0, false, 1.0, 3.0);
            }
            assert_eq!(c.to_vec(), [3.0, 6.0, 9.0, 12.0]);
        }
    }

    /// The scratch buffers of one product leave nothing in the next: NaNs computed by a first
    /// product are not read by a second with `beta == 0`, smaller or larger.
    #[test]
    fn reused_scratch_leaves_no_trace() {
        for (m, k, n) in [(6, 5, 4), (3, 2, 2), (9, 7, 8)] {
            let nan = Tensor::from_vec(vec![f64::NAN; m * k], &[m, k]);
            let b = matrix::<f64>(k, n, 5);
            run::<CpuBackend, f64>(&Tensor::zeros(&[m, n]), &nan, false, &b, false, 1.0, 0.0);
            let a = matrix::<f64>(m, k, 6);
            let c = Tensor::from_vec(vec![f64::NAN; m * n], &[m, n]);
            run::<CpuBackend, f64>(&c, &a, false, &b, false, 1.0, 0.0);
            let want = reference(&vec![0.0; m * n], (m, n), &a, false, &b, false, 1.0, 0.0);
            for (x, y) in c.to_vec().iter().zip(&want) {
                assert!((x - y).abs() <= 1e-12, "{m}x{k}x{n}: {x} vs {y}");
            }
        }
    }

    fn failure(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
        let e = std::panic::catch_unwind(f).expect_err("fails");
        e.downcast_ref::<String>().cloned().unwrap_or_default()
    }

    #[test]
    fn bad_operands_fail_at_the_site_naming_them() {
        let m = |r, c| Tensor::<f64>::zeros(&[r, c]);
        let call = |c: Tensor<f64>, a: Tensor<f64>, ta, b: Tensor<f64>, tb| {
            failure(move || run::<CpuBackend, f64>(&c, &a, ta, &b, tb, 1.0, 0.0))
        };
        let call_ok = |c: Tensor<f64>, a: Tensor<f64>, ta, b: Tensor<f64>, tb| {
            run::<CpuBackend, f64>(&c, &a, ta, &b, tb, 1.0, 0.0)
        };
        let e = call(m(2, 2), m(2, 3), false, m(2, 2), false);
        assert!(e.starts_with("pmexpr: accelerate! at gemm.rs:1:1: "), "{e}");
        assert!(
            e.contains("shapes that do not agree: `a` [2, 3] · `b` [2, 2]"),
            "{e}"
        );
        // aᵀ · bᵀ is [3, 2]: also accepted, then refused into a [3, 3] `c`.
        call_ok(m(3, 2), m(2, 3), true, m(2, 2), true);
        let e = call(m(3, 3), m(2, 3), true, m(2, 2), true);
        assert!(
            e.contains("`a`ᵀ [3, 2] · `b`ᵀ [2, 2] into `c` [3, 3]"),
            "{e}"
        );
        let e = failure(|| {
            let v = Tensor::<f64>::zeros(&[4]);
            run::<SeqBackend, f64>(&m(2, 2), &v, false, &m(2, 2), false, 1.0, 0.0)
        });
        assert!(e.contains("its `a` argument `a` has shape [4]"), "{e}");
        let e = failure(|| {
            let c = m(2, 2);
            run::<SeqBackend, f64>(&c, &m(2, 2), false, &c, false, 1.0, 0.0)
        });
        assert!(e.contains("shares memory with its operand"), "{e}");
    }
}
