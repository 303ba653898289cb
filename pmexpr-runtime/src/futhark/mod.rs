//! The Futhark target: Futhark-class `accelerate!` sites run by the C library that the `futhark`
//! compiler generated for them at build time (`pmexpr-build` compiles it and generates, per site,
//! the glue that calls it).
//!
//! - [`leaf`] — marshaling: captured values cross as primitives and regular arrays of primitives,
//!   and results come back the same way.
//! - [`call`] — the library's context (one per process, created at the first call, calls
//!   serialized) and one call of an entry point, every return code checked.
//!
//! Flavours: `multicore` (the default) and `c` are linked into the program; `cuda` is a shared
//! library opened only after the GPU probe found a usable GPU. The `auto` target runs a site on
//! its library when it is `cuda` and there is a GPU (on the CPU, the `cpu` target is at least as
//! fast); `PMEXPR_BACKEND=futhark` asks for the library whatever its flavour; a site without one runs on the CPU (said once on stderr).

pub mod call;
pub mod leaf;
#[cfg(test)]
mod tests;

pub use call::{
    Entry, EntryCall, EntryFn, FutharkCall, Library, Lookup, calls_on_this_thread, futhark_missing,
};
pub use leaf::{FutharkArg, FutharkPrim, FutharkResult, Leaf, MarshalError};
