//! The runtime's unsafe code outside its FFI (the CUDA driver, the Futhark library, the GPU
//! probe), each piece behind a safe API that the rest of the crate uses; `unsafe` is denied
//! everywhere else (the crate root's `deny(unsafe_code)`).
//!
//! - [`slots`] — results written into a buffer's uninitialized capacity (a parallel level by
//!   chunks, the parts of a `hist`'s or a `scan`'s output, the rows of a map of rows), and the one
//!   `set_len` that makes them a `Vec`, once every slot is written.
//! - [`atomic`] — the numbers and `bool` with the relaxed atomic of their width, and a slice of
//!   them viewed as atomics (`scatter` on `cpu` stores through it).
//! - [`caller_runs`] — parallel work that the calling thread runs itself: its chunks borrow the
//!   caller's frame, lent to the pool's workers until every chunk is done.
//! - [`gemm`] — `matrixmultiply`'s GEMM on plain buffers, the operands checked against them.
//! - [`seq`] — [`Seq`](crate::seq::Seq)'s representation: a pointer and a length beside the owner
//!   of the elements, views into one shared buffer for the rows of a map of rows.

pub(crate) mod atomic;
pub(crate) mod caller_runs;
pub(crate) mod gemm;
pub(crate) mod seq;
pub(crate) mod slots;
