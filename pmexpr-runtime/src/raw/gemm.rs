//! `matrixmultiply`'s GEMM on plain buffers, behind a safe call that checks the dimensions and
//! strides against the slices first (once per product, so the check costs nothing measurable).

/// The operands of one plain GEMM call: `c := alpha · a · b`, `a` an `m × k` matrix and `b` a
/// `k × n` one with the given row and column strides, `c` row-major with row stride `c_rs`
/// (`c` need not be initialized: it is not read).
pub(crate) struct PlainGemm<'a, E> {
    pub(crate) m: usize,
    pub(crate) k: usize,
    pub(crate) n: usize,
    pub(crate) alpha: E,
    pub(crate) a: &'a [E],
    pub(crate) a_rs: isize,
    pub(crate) a_cs: isize,
    pub(crate) b: &'a [E],
    pub(crate) b_rs: isize,
    pub(crate) b_cs: isize,
    pub(crate) c: &'a mut [E],
    pub(crate) c_rs: isize,
}

impl<E> PlainGemm<'_, E> {
    /// Panics unless every element the GEMM reads or writes is inside its slice: the dimensions
    /// are not zero, the strides are not negative, the rows of `c` do not overlap, and the last
    /// element of each matrix is in range.
    fn check(&self) {
        // The number of elements from the first to the last of a `rows × cols` matrix, plus one.
        let extent = |rows: usize, cols: usize, rs: isize, cs: isize| -> Option<usize> {
            let (rs, cs) = (usize::try_from(rs).ok()?, usize::try_from(cs).ok()?);
            (rows - 1)
                .checked_mul(rs)?
                .checked_add((cols - 1).checked_mul(cs)?)?
                .checked_add(1)
        };
        let (m, k, n) = (self.m, self.k, self.n);
        assert!(m > 0 && k > 0 && n > 0, "plain GEMM of an empty matrix");
        let fits = |e: Option<usize>, len: usize| e.is_some_and(|e| e <= len);
        assert!(
            fits(extent(m, k, self.a_rs, self.a_cs), self.a.len())
                && fits(extent(k, n, self.b_rs, self.b_cs), self.b.len())
                && usize::try_from(self.c_rs).is_ok_and(|rs| rs >= n)
                && fits(extent(m, n, self.c_rs, 1), self.c.len()),
            "plain GEMM operands outside their buffers"
        );
    }
}

macro_rules! plain_gemm {
    ($t:ty, $gemm:path) => {
        impl PlainGemm<'_, $t> {
            /// Runs the product.
            pub(crate) fn run(self) {
                self.check();
                // SAFETY: `check` proved every element the GEMM reads inside `a` and `b` and
                // every one it writes inside `c`, rows apart; `c` is borrowed mutably, so it
                // aliases neither input, and with `beta == 0` it is not read.
                unsafe {
                    $gemm(
                        self.m,
                        self.k,
                        self.n,
                        self.alpha,
                        self.a.as_ptr(),
                        self.a_rs,
                        self.a_cs,
                        self.b.as_ptr(),
                        self.b_rs,
                        self.b_cs,
                        0.0,
                        self.c.as_mut_ptr(),
                        self.c_rs,
                        1,
                    )
                }
            }
        }
    };
}
plain_gemm!(f64, matrixmultiply::dgemm);
plain_gemm!(f32, matrixmultiply::sgemm);

#[cfg(test)]
mod tests {
    use super::*;

    fn product(a_len: usize, c_rs: isize) -> Vec<f64> {
        let a = vec![1.0_f64; a_len];
        let b = [1.0_f64, 2.0, 3.0, 4.0];
        let mut c = vec![0.0_f64; 4];
        PlainGemm {
            m: 2,
            k: 2,
            n: 2,
            alpha: 1.0,
            a: &a,
            a_rs: 2,
            a_cs: 1,
            b: &b,
            b_rs: 2,
            b_cs: 1,
            c: &mut c,
            c_rs,
        }
        .run();
        c
    }

    /// Operands that fit run; one that would read past its buffer, or rows of `c` that
    /// overlap, panic before the GEMM.
    #[test]
    fn operands_are_checked() {
        assert_eq!(product(4, 2), [4.0, 6.0, 4.0, 6.0]);
        assert!(std::panic::catch_unwind(|| product(3, 2)).is_err());
        assert!(std::panic::catch_unwind(|| product(4, 1)).is_err());
        assert!(std::panic::catch_unwind(|| product(4, 3)).is_err());
    }
}
