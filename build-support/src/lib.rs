//! The build-script hook of pmexpr, in the spirit of `cxx_build`:
//!
//! ```no_run
//! // in build.rs, inside `fn main`:
//! pmexpr_build::Build::new().compile();
//! ```
//!
//! In this version `accelerate!` needs no build step (the macro compiles each site for the CPU
//! targets by itself), so the hook does nothing yet; it exists so that build scripts can adopt it
//! now. The next versions scan the crate for `#[pmexpr]` functions and `accelerate!` sites,
//! extract and classify the accelerated code, and generate and compile the CUDA and Futhark
//! programs into `OUT_DIR`.

#![warn(missing_docs)]

/// The configuration of the build hook.
#[derive(Debug, Clone, Default)]
pub struct Build {
    _private: (),
}

impl Build {
    /// The default configuration.
    pub fn new() -> Self {
        Build::default()
    }

    /// Runs the hook from a build script (nothing to do yet; see the crate documentation). It
    /// will never fail the build because a GPU tool is missing.
    pub fn compile(&self) {}
}
