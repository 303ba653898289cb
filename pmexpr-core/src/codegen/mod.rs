//! Code generation from the monomorphic program.
//!
//! - [`rust`]: Rust code for the CPU backends (`seq`, `cpu`, debug mode), generic over the backend.

pub mod rust;
