//! What several integration tests share.

use pmexpr::futhark::calls_on_this_thread;
use pmexpr::{Target, with_target};

/// Runs `f` on the sequential, multicore and debug targets, checks that they agree, and returns
/// the sequential (reference) result.
#[allow(dead_code)]
pub fn on_every_target<T: PartialEq + std::fmt::Debug>(f: impl Fn() -> T) -> T {
    let seq = with_target(Target::Seq, &f);
    assert_eq!(with_target(Target::Cpu, &f), seq);
    assert_eq!(with_target(Target::Debug, &f), seq);
    for t in accelerated_targets() {
        assert_eq!(with_target(t, &f), seq, "on {t}");
    }
    seq
}

/// [`on_every_target`] for an expression whose integer arithmetic overflows: it wraps (a Rust
/// release build's meaning) on every target but debug mode, which fails at the site where a Rust
/// debug build panics ("attempt to add with overflow", …). Returns the sequential result.
#[allow(dead_code)]
pub fn wraps_on_every_target<T: PartialEq + std::fmt::Debug>(f: impl Fn() -> T) -> T {
    let seq = with_target(Target::Seq, &f);
    assert_eq!(with_target(Target::Cpu, &f), seq);
    let m = failure(Target::Debug, &f);
    assert!(
        m.starts_with("pmexpr: accelerate! at ") && m.contains("with overflow"),
        "debug mode: {m}"
    );
    for t in accelerated_targets() {
        assert_eq!(with_target(t, &f), seq, "on {t}");
    }
    seq
}

/// The targets beyond the CPU ones that this machine can run: [`cuda_targets`], and `futhark`
/// when the build compiled the Futhark library of this package's sites.
#[allow(dead_code)]
pub fn accelerated_targets() -> Vec<Target> {
    let mut t = cuda_targets();
    t.extend(futhark_target());
    t
}

/// Whether the Futhark library was made by a compiler older than the one pmexpr's generator
/// targets (0.25): it leaves some sites' entry points out, so they run on the CPU.
#[allow(dead_code)]
pub fn futhark_older_than_target() -> bool {
    option_env!("PMEXPR_FUTHARK_VERSION").is_some_and(|v| {
        let p: Vec<u32> = v.split('.').filter_map(|x| x.parse().ok()).collect();
        p < vec![0, 25]
    })
}

/// The `futhark` target when the build compiled this package's Futhark library (the build hook
/// sets `PMEXPR_FUTHARK_LIBRARY` to its flavour), said once when it is skipped.
#[allow(dead_code)]
pub fn futhark_target() -> Option<Target> {
    use std::sync::OnceLock;
    static TARGET: OnceLock<Option<Target>> = OnceLock::new();
    *TARGET.get_or_init(|| match option_env!("PMEXPR_FUTHARK_LIBRARY") {
        Some("cuda") if pmexpr::gpu::probe().is_err() => {
            eprintln!("skipped: the futhark target (its library is for CUDA, and there is no usable GPU)");
            None
        }
        Some(_) => Some(Target::Futhark),
        None => {
            eprintln!(
                "skipped: the futhark target (the build did not find the `futhark` compiler: put it on PATH or name it in PMEXPR_FUTHARK)"
            );
            None
        }
    })
}

/// Whether `tool` must be found here: named in `PMEXPR_REQUIRE` (comma-separated; CI sets it, so
/// that a test fails where it would skip for want of a tool the machine must have).
#[allow(dead_code)]
pub fn required(tool: &str) -> bool {
    std::env::var("PMEXPR_REQUIRE").is_ok_and(|v| v.split(',').any(|t| t.trim() == tool))
}

/// The CUDA targets this machine can run — the GPU when the probe finds one, the emulator when a
/// C++ compiler is found — each said once when it is skipped.
#[allow(dead_code)]
pub fn cuda_targets() -> Vec<Target> {
    use std::sync::OnceLock;
    static TARGETS: OnceLock<Vec<Target>> = OnceLock::new();
    TARGETS
        .get_or_init(|| {
            let mut t = Vec::new();
            match pmexpr::gpu::probe() {
                Ok(_) => t.push(Target::Cuda),
                Err(why) => eprintln!("skipped: the cuda target (no usable GPU: {why})"),
            }
            match pmexpr::cuda::emulator::emulator() {
                Ok(_) => t.push(Target::CudaEmulator),
                Err(why) if required("cuda-emulator") => {
                    panic!("the cuda-emulator target is required here (PMEXPR_REQUIRE): {why}")
                }
                Err(why) => eprintln!("skipped: the cuda-emulator target ({why})"),
            }
            t
        })
        .clone()
}

/// The panic message `f` must fail with (it fails the test when `f` returns).
#[allow(dead_code)]
pub fn panic_message<R>(f: impl FnOnce() -> R) -> String {
    let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .err()
        .expect("expected a failure");
    payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default()
}

/// Runs `f` on `target` and returns the panic message it must fail with.
#[allow(dead_code)]
pub fn failure<R>(target: Target, f: impl FnOnce() -> R) -> String {
    panic_message(|| with_target(target, f))
}

/// The failure of `run` on every CPU backend: the same message everywhere, naming a site of
/// `file` and saying `what`.
#[allow(dead_code)]
pub fn same_failure(file: &str, what: &str, run: impl Fn()) {
    let want = failure(Target::Seq, &run);
    assert!(
        want.starts_with(&format!("pmexpr: accelerate! at {file}:")),
        "{want}"
    );
    assert!(want.contains(what), "expected {what:?}: {want}");
    for target in [Target::Cpu, Target::Debug] {
        assert_eq!(failure(target, &run), want, "{target:?}");
    }
}

/// Checks that the `futhark` target called `calls` entry points for `f` (when the build made the
/// library from a compiler that generates every entry), or says why it cannot.
#[allow(dead_code)]
pub fn ran_on_futhark<T>(calls: u64, f: impl Fn() -> T) {
    let Some(t) = futhark_target() else {
        println!("skipped: counting Futhark entry points (no Futhark library was built)");
        return;
    };
    let before = calls_on_this_thread();
    with_target(t, f);
    let ran = calls_on_this_thread() - before;
    if futhark_older_than_target() {
        println!(
            "skipped: counting entry points ({ran} of {calls} called): Futhark is older than 0.25"
        );
    } else {
        assert_eq!(ran, calls, "entry points called on the futhark target");
    }
}
