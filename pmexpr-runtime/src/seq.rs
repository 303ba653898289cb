//! `Seq`: the representation of a PMExpr sequence `[T]` inside generated code.
//!
//! Sequences are immutable values. A captured Rust `Vec` or slice is *borrowed* (no copy); a
//! sequence built inside the accelerated expression is *owned* and shared by reference counting,
//! so passing it around never copies its elements. `tail` and `subsequence` are views (O(1)), and
//! `set` updates in place when nothing else holds the sequence, as Futhark's in-place updates do.

pub use crate::raw::seq::{Seq, SliceSeq};
