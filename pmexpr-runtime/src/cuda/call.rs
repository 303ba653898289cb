//! One call of a CUDA-class `accelerate!` on a device: choosing the device and module, marshaling,
//! launching, checking, copying back, freeing.
//!
//! The generated host code of the site creates a [`Call`] with [`Call::begin`] (which returns
//! `None` when the site is to run on the CPU instead), evaluates its sequential parts in Rust,
//! turns each `par_loop` of its host code into [`Call::param`]s and a [`Call::launch`] each time
//! it runs (a kernel in a loop launches once per iteration, on the data already on the device),
//! and ends with [`Call::finish`]. Every allocation belongs to the call and is freed when it ends,
//! also when it fails: sequences are the caller's (a CUDA-class site cannot build one), so a loop
//! uploads each once.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use pmexpr_abi::Number;

use crate::cuda::arg::{DeviceArg, pad};
use crate::cuda::device::{Device, DeviceFailure, DeviceResult, LoadedModule, ModuleData};
#[cfg(feature = "cuda-emulator")]
use crate::cuda::emulator;
use crate::cuda::scalar::DeviceScalar;
use crate::cuda::upload::Uploads;
use crate::cuda::{driver, error};
use crate::site::{Site, say_once};
use crate::target::Target;
use crate::tensor::MAX_RANK;

/// Why the `cuda-emulator` target cannot run in a build without the emulator.
#[cfg(not(feature = "cuda-emulator"))]
const NO_EMULATOR: &str = "this build has no CUDA emulator: enable the `cuda-emulator` feature of pmexpr (or of pmexpr-runtime), e.g. `pmexpr = { version = \"…\", features = [\"cuda-emulator\"] }` in the [dev-dependencies] of the crate whose tests use it";

/// The CUDA code of one site, as `accelerate!` embeds it: a module per instantiation of the
/// site's number types.
#[derive(Debug)]
pub struct SiteKernels {
    /// The modules (at least one).
    pub modules: &'static [ModuleData],
    /// Whether tensors stay on the device from one launch to the next (the host code between
    /// launches does not read or write tensor elements). Otherwise each launch copies tensors to
    /// the device and back.
    pub resident: bool,
}

/// A loaded module and the lock that gives one launch at a time its error record.
struct Slot {
    module: Mutex<Box<dyn LoadedModule>>,
    data: &'static ModuleData,
}

/// Modules loaded in this process, by device and namespace. Loading compiles (the emulator, or
/// NVRTC when the build did not), so it happens once.
fn slot(device: &'static dyn Device, data: &'static ModuleData) -> DeviceResult<&'static Slot> {
    type Slots = Mutex<HashMap<(usize, &'static str), &'static Slot>>;
    static SLOTS: OnceLock<Slots> = OnceLock::new();
    let slots = SLOTS.get_or_init(Default::default);
    let key = (
        device as *const dyn Device as *const () as usize,
        data.namespace,
    );
    let mut map = slots.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = map.get(&key) {
        return Ok(s);
    }
    let module = device.load(data)?;
    let s: &'static Slot = Box::leak(Box::new(Slot {
        module: Mutex::new(module),
        data,
    }));
    map.insert(key, s);
    Ok(s)
}

/// The CUDA targets' side of a CUDA-class site that has no kernels (`why`: the build hook did not
/// run, or did not see the site): an explicit `cuda` or `cuda-emulator` target fails at the site,
/// and [`Target::Auto`] runs it on the CPU, which it says once on stderr.
pub fn missing(site: &'static Site, target: Target, why: &str) {
    if !matches!(target, Target::Auto) {
        site.fail(format_args!(
            "the {target} target cannot run this site: {why}"
        ));
    }
    say_once(
        format!("{site} missing"),
        &format!("pmexpr: accelerate! at {site} runs on the CPU: {why}"),
    );
}

thread_local! {
    static LAUNCHES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many kernels this thread has launched on a CUDA target: how tests tell that a site really
/// ran on the device rather than on the CPU.
pub fn launches_on_this_thread() -> u64 {
    LAUNCHES.with(std::cell::Cell::get)
}

/// One call of a site on a device. See the module docs.
pub struct Call<'a> {
    site: &'static Site,
    device: &'static dyn Device,
    slot: &'static Slot,
    resident: bool,
    uploads: Uploads<'a>,
}

impl<'a> Call<'a> {
    /// Starts a call of the site on the device that `target` names, with the module generated
    /// for `instantiation` (the numbers of the site's number type variables, from the captured
    /// values' Rust types; `None` for an open type that no kernel sees, which any module fits). `None`: run on
    /// the CPU — for [`Target::Auto`] when there is no usable GPU or the site's kernels cannot be
    /// used (said once on stderr), and for any target when no module was generated for these
    /// number types. An explicit `cuda` or `cuda-emulator` target that cannot run fails at the
    /// site.
    pub fn begin(
        site: &'static Site,
        kernels: &'static SiteKernels,
        instantiation: &[Option<Number>],
        target: Target,
    ) -> Option<Call<'a>> {
        let explicit = !matches!(target, Target::Auto);
        let refuse = |why: String| -> Option<Call<'a>> {
            if explicit {
                site.fail(format_args!(
                    "the {target} target cannot run this site: {why}"
                ));
            }
            say_once(
                why.clone(),
                &format!(
                    "pmexpr: CUDA-class accelerate! sites run on the CPU: {why} (set PMEXPR_BACKEND=cpu to choose the CPU and not see this line)"
                ),
            );
            None
        };
        let device: &'static dyn Device = match target {
            #[cfg(feature = "cuda-emulator")]
            Target::CudaEmulator => match emulator::emulator() {
                Ok(e) => e,
                Err(why) => return refuse(why),
            },
            // An explicit target, so `refuse` fails at the site rather than running elsewhere.
            #[cfg(not(feature = "cuda-emulator"))]
            Target::CudaEmulator => return refuse(NO_EMULATOR.to_string()),
            Target::Auto | Target::Cuda => match driver::gpu() {
                Ok(g) => g,
                Err(why) => return refuse(why),
            },
            _ => return None,
        };
        // `None` matches any number: an open type whose values reach no kernel (only counted on
        // the host) leaves every module alike.
        let Some(data) = kernels.modules.iter().find(|m| {
            m.instantiation.len() == instantiation.len()
                && m.instantiation
                    .iter()
                    .zip(instantiation)
                    .all(|(a, b)| b.is_none_or(|b| *a == b))
        }) else {
            let names: Vec<&str> = instantiation
                .iter()
                .map(|n| n.map_or("*", Number::rust_name))
                .collect();
            say_once(
                format!("{site} {names:?}"),
                &format!(
                    "pmexpr: accelerate! at {site} runs on the CPU: no CUDA code was generated for its numbers as {} (modules are generated for every number, and bool for values only compared, moved or counted: at most 32 combinations a site: every variable alike first, then the mixes of i64, f64, usize, i32, f32 …)",
                    names.join(", ")
                ),
            );
            return None;
        };
        if data.max_rank != MAX_RANK {
            return refuse(format!(
                "the kernels were generated for tensors of rank at most {} but this runtime was built for {MAX_RANK} (PMEXPR_TENSOR_MAX_RANK)",
                data.max_rank
            ));
        }
        let slot = match slot(device, data) {
            Ok(s) => s,
            Err(e) => {
                return refuse(format!(
                    "loading the kernels of accelerate! at {site} on {} failed: {e}",
                    device.name()
                ));
            }
        };
        Some(Call {
            site,
            device,
            slot,
            resident: kernels.resident,
            uploads: Uploads::new(device, data.max_rank),
        })
    }

    fn fail(&self, what: &str, e: DeviceFailure) -> ! {
        self.site.fail(format_args!(
            "on the CUDA target ({}), {what} failed: {e}",
            self.device.name()
        ))
    }

    /// The maximum tensor rank of the kernels.
    pub fn max_rank(&self) -> usize {
        self.slot.data.max_rank
    }

    /// A kernel parameter: the value laid out as the kernel declares it.
    pub fn param<V: DeviceArg<'a>>(&mut self, value: &V) -> Vec<u8> {
        let (size, _) = V::layout(self.max_rank());
        let mut out = Vec::with_capacity(size);
        if let Err(e) = value.write(&mut self.uploads, &mut out) {
            self.fail("copying a captured value to the device", e);
        }
        out
    }

    /// Launches kernel `kernel` of the site over `0..n` with `params` (from [`Call::param`],
    /// without `n`) and waits for it; a failed runtime check on the device fails at the site.
    pub fn launch(&mut self, kernel: usize, n: i64, params: Vec<Vec<u8>>) {
        let data = self.slot.data;
        let Some(k) = data.kernels.get(kernel) else {
            self.fail(
                "a launch",
                DeviceFailure(format!("the module has no kernel {kernel}")),
            );
        };
        let mut params = params;
        let mut last = Vec::new();
        n.put(&mut last);
        params.push(last);
        if params.len() != k.params.len() {
            self.fail(
                "a launch",
                DeviceFailure(format!(
                    "kernel `{}` takes {} parameters, the host passed {} (a bug in pmexpr: please report it)",
                    k.name,
                    k.params.len(),
                    params.len()
                )),
            );
        }
        for (p, d) in params.iter_mut().zip(k.params) {
            if p.len() != d.size {
                self.fail(
                    "a launch",
                    DeviceFailure(format!(
                        "parameter `{}` ({}) of kernel `{}` is {} bytes on the device, the host laid out {} (a bug in pmexpr: please report it)",
                        d.name,
                        d.c_type,
                        k.name,
                        d.size,
                        p.len()
                    )),
                );
            }
            pad(p, d.align);
        }
        let record = {
            let mut m = self.slot.module.lock().unwrap_or_else(|e| e.into_inner());
            let refs: Vec<&[u8]> = params.iter().map(Vec::as_slice).collect();
            // SAFETY: each parameter has the kernel's layout (checked above against the
            // generator's sizes), and every device pointer in them belongs to this call.
            if let Err(e) = unsafe { m.launch(kernel, n, &refs) } {
                drop(m);
                self.fail(&format!("kernel `{}`", k.name), e);
            }
            match m.error_record() {
                Ok(r) => r,
                Err(e) => {
                    drop(m);
                    self.fail("reading the device's error record", e);
                }
            }
        };
        LAUNCHES.with(|c| c.set(c.get() + 1));
        if let Some(message) = error::describe(record) {
            let check = usize::try_from(record[1])
                .ok()
                .and_then(|c| c.checked_sub(1))
                .and_then(|c| data.checks.get(c));
            match check {
                Some(c) => self
                    .site
                    .fail(format_args!("{message} (in {c}, on the device)")),
                None => self.site.fail(format_args!("{message} (on the device)")),
            }
        }
        if !self.resident {
            self.copy_back();
        }
    }

    /// Copies every tensor the call uploaded back to the host, and forgets it (the next launch
    /// uploads it again).
    fn copy_back(&mut self) {
        if let Err(e) = self.uploads.copy_back() {
            self.fail("copying a tensor back from the device", e);
        }
    }

    /// Ends the call: copies the tensors back (device memory is freed when the call is dropped).
    pub fn finish(mut self) {
        self.copy_back();
    }
}

#[cfg(all(test, not(feature = "cuda-emulator")))]
mod tests {
    use super::*;

    /// Without the feature the `cuda-emulator` target fails at the site saying how to get it (not
    /// a silent run on the CPU), and a run that requires the emulator fails rather than passing
    /// without its tests.
    #[test]
    fn the_emulator_target_without_the_feature() {
        static SITE: Site = Site::new("t.rs", 1, 2);
        static KERNELS: SiteKernels = SiteKernels {
            modules: &[],
            resident: false,
        };
        let e = std::panic::catch_unwind(|| {
            Call::begin(&SITE, &KERNELS, &[], Target::CudaEmulator).is_some()
        })
        .expect_err("fails at the site");
        let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            msg.starts_with("pmexpr: accelerate! at t.rs:1:2: the cuda-emulator target cannot run")
                && msg.contains("enable the `cuda-emulator` feature"),
            "{msg}"
        );
        let required = std::env::var("PMEXPR_REQUIRE")
            .is_ok_and(|v| v.split(',').any(|t| t.trim() == "cuda-emulator"));
        assert!(
            !required,
            "PMEXPR_REQUIRE names cuda-emulator but this build lacks the feature: run `cargo test -p pmexpr-runtime --features cuda-emulator`"
        );
    }
}
