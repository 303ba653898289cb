//! The CUDA target: runs the kernels that `accelerate!` generated for a CUDA-class site.
//!
//! (Being written: see the submodules.)

pub mod device;
pub mod driver;
pub mod emulator;
