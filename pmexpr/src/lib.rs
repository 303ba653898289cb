//! Expression acceleration for Rust.
pub use pmexpr_macros::accelerate;
pub use pmexpr_runtime::{
    Element, MAX_RANK, Target, Tensor, TensorError, current_target, with_target,
};

#[doc(hidden)]
pub mod __private {
    pub use pmexpr_runtime::__private::*;
}
