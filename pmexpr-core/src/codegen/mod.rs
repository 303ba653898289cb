//! Code generation from the monomorphic program.
//!
//! - [`rust`]: the expansion of a site: Rust code for the CPU backends (`seq`, `cpu`, debug mode),
//!   generic over the backend, and the host code of the CUDA targets: the launches of the site's
//!   kernel split ([`crate::kernels`]), with what [`crate::glue`] made of the build hook's files.
//! - [`futhark`]: the Futhark program of a crate's Futhark-class sites, one entry point per site.
//! - [`numbers`]: the number types a site's type variables can stand for, and which combinations
//!   the GPU generators emit code for.
//! - [`cuda`]: CUDA C++ device code (kernels and `__device__` functions) for CUDA-class sites,
//!   compiled by NVRTC.

pub mod cuda;
pub mod futhark;
pub mod numbers;
pub mod rust;
