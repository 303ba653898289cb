//! Which backend runs an accelerated expression.
//!
//! `PMEXPR_BACKEND=auto|cpu|seq|cuda|cuda-emulator|futhark` chooses one for the whole process
//! (`auto` when unset: CUDA-class sites on the GPU when there is a usable one, Futhark-class sites
//! on their Futhark library when the build compiled a `cuda` one and there is a GPU, everything
//! else on all CPU cores); `PMEXPR_DEBUG=1` switches on debug mode (the sequential backend with runtime checks)
//! and takes precedence.
//! [`with_target`] overrides both for the calls made inside a closure on the current thread, which
//! is how tests run one expression on several backends in one process.

use std::cell::Cell;
use std::env;
use std::fmt;
use std::sync::OnceLock;

use crate::site::Site;

/// A backend that can run an accelerated expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Target {
    /// The default: CUDA-class sites on the GPU when one is usable (else, said once on stderr,
    /// on the CPU), Futhark-class sites on their Futhark library when the build compiled a `cuda`
    /// one and there is a GPU, every other site on all CPU cores.
    Auto,
    /// Sequential Rust: the reference semantics.
    Seq,
    /// All CPU cores, through rayon, for every site.
    Cpu,
    /// Debug mode: sequential, with the runtime checks of the paper's debug mode.
    Debug,
    /// CUDA-class sites on the GPU, failing at the site when there is none; other sites on all
    /// CPU cores.
    Cuda,
    /// CUDA-class sites' generated kernels run on the CPU, compiled by the system C++ compiler:
    /// for testing the CUDA path without a GPU (slow). Other sites on all CPU cores. Needs the
    /// `cuda-emulator` feature; without it a CUDA-class site fails saying so.
    CudaEmulator,
    /// Futhark-class sites on the library the `futhark` compiler generated at build time (a site
    /// without one runs on the CPU, said once; a library that cannot be used fails at the site);
    /// other sites on all CPU cores.
    Futhark,
}

impl Target {
    /// The name used in `PMEXPR_BACKEND`.
    pub fn name(self) -> &'static str {
        match self {
            Target::Auto => "auto",
            Target::Seq => "seq",
            Target::Cpu => "cpu",
            Target::Debug => "debug",
            Target::Cuda => "cuda",
            Target::CudaEmulator => "cuda-emulator",
            Target::Futhark => "futhark",
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

thread_local! {
    static OVERRIDE: Cell<Option<Target>> = const { Cell::new(None) };
}

/// Runs `f` with every `accelerate!` that this thread calls inside it running on `target`,
/// whatever the environment says. Nested calls restore the outer choice when they return.
///
/// ```
/// use pmexpr_runtime::{Target, current_target, with_target};
/// assert_eq!(with_target(Target::Seq, current_target), Ok(Target::Seq));
/// ```
pub fn with_target<R>(target: Target, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Target>);
    impl Drop for Restore {
        fn drop(&mut self) {
            OVERRIDE.with(|o| o.set(self.0));
        }
    }
    let _restore = Restore(OVERRIDE.with(|o| o.replace(Some(target))));
    f()
}

fn from_env() -> Result<Target, String> {
    static CHOICE: OnceLock<Result<Target, String>> = OnceLock::new();
    CHOICE
        .get_or_init(|| {
            if let Ok(v) = env::var("PMEXPR_DEBUG") {
                match v.trim() {
                    "" | "0" | "false" => {}
                    "1" | "true" => return Ok(Target::Debug),
                    other => {
                        return Err(format!("PMEXPR_DEBUG={other:?} is neither 1 nor 0"));
                    }
                }
            }
            match env::var("PMEXPR_BACKEND") {
                Err(_) => Ok(Target::Auto),
                Ok(v) => match v.trim() {
                    "" | "auto" => Ok(Target::Auto),
                    "cpu" => Ok(Target::Cpu),
                    "seq" => Ok(Target::Seq),
                    "cuda" => Ok(Target::Cuda),
                    "cuda-emulator" => Ok(Target::CudaEmulator),
                    "futhark" => Ok(Target::Futhark),
                    other => Err(format!(
                        "PMEXPR_BACKEND={other:?} is not a backend (expected auto, cpu, seq, cuda, cuda-emulator or futhark)"
                    )),
                },
            }
        })
        .clone()
}

/// The target that an `accelerate!` called now on this thread runs on, or why the environment
/// does not name one.
pub fn current_target() -> Result<Target, String> {
    match OVERRIDE.with(Cell::get) {
        Some(t) => Ok(t),
        None => from_env(),
    }
}

/// The target for a call at `site` (used by generated code); a bad environment fails at the site.
#[doc(hidden)]
pub fn select(site: &Site) -> Target {
    match current_target() {
        Ok(t) => t,
        Err(e) => site.fail(e),
    }
}

/// The target for a `#[pmexpr]` function called from Rust code: sequential, with the runtime
/// checks in debug mode (used by generated code).
#[doc(hidden)]
pub fn select_sequential(site: &Site) -> Target {
    match select(site) {
        Target::Debug => Target::Debug,
        _ => Target::Seq,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn override_nests_and_restores() {
        with_target(Target::Seq, || {
            assert_eq!(current_target(), Ok(Target::Seq));
            with_target(Target::Debug, || {
                assert_eq!(current_target(), Ok(Target::Debug))
            });
            assert_eq!(current_target(), Ok(Target::Seq));
        });
        let r = std::panic::catch_unwind(|| with_target(Target::Cpu, || panic!("boom")));
        assert!(r.is_err());
        assert_eq!(OVERRIDE.with(Cell::get), None, "restored after a panic");
    }
}
