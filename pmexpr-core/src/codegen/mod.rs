//! Code generation from the monomorphic program.
//!
//! - [`rust`]: Rust code for the CPU backends (`seq`, `cpu`, debug mode), generic over the backend.
//! - [`futhark`]: the Futhark program of a crate's Futhark-class sites, one entry point per site.
//! - [`cuda`]: CUDA C++ device code (kernels and `__device__` functions) for CUDA-class sites,
//!   compiled by NVRTC.

pub mod cuda;
pub mod cuda_host;
pub mod futhark;
pub mod futhark_host;
pub mod rust;
