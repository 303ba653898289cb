//! Code generation from the monomorphic program.
//!
//! - [`rust`]: Rust code for the CPU backends (`seq`, `cpu`, debug mode), generic over the backend.
//! - [`futhark`]: the Futhark program of a crate's Futhark-class sites, one entry point per site.

pub mod futhark;
pub mod rust;
