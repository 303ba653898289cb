//! A module compiled by the emulator: its library, loaded (from a private copy when this process
//! has it loaded already), and its kernels' launches.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use libloading::Library;

#[cfg(doc)]
use crate::cuda::device::ParamData;
use crate::cuda::device::{DeviceFailure, DeviceResult, LoadedModule, ModuleData};

use super::compiler::temp_name;
use super::{INDICES_PER_THREAD, THREAD_STACK};

/// Loads a module's library; from a private copy if `private`. A module this process already has
/// loaded is loaded again from a copy: the dynamic loader would hand back the same library, whose
/// globals (the error record) the two loads would then share, unlike two loads of a module on a
/// GPU.
pub(super) fn open_library(so: &Path, private: bool) -> Result<Library, String> {
    let copy = private.then(|| temp_name(so));
    if let Some(copy) = &copy
        && let Err(e) = fs::copy(so, copy)
    {
        let _ = fs::remove_file(copy);
        return Err(format!("cannot copy it to {}: {e}", copy.display()));
    }
    // SAFETY: the library is a module compiled by `Emulator::load`; its initializers only zero
    // globals.
    let library = unsafe { Library::new(copy.as_deref().unwrap_or(so)) };
    if let Some(copy) = &copy {
        // Its code stays mapped (on Windows the removal fails and the copy stays).
        let _ = fs::remove_file(copy);
    }
    library.map_err(|e| format!("cannot load it: {e}"))
}

/// `void <kernel>__pm_emu(void** args)`.
pub(super) type Whole = unsafe extern "C" fn(*const *const c_void);
/// `void <kernel>__pm_emu_part(void** args, unsigned part, unsigned parts)`.
pub(super) type Part = unsafe extern "C" fn(*const *const c_void, u32, u32);
/// `unsigned long long* pm_emu_error_record()`.
pub(super) type ErrorRecord = unsafe extern "C" fn() -> *mut u64;

/// The address of a module's `pmexpr_error`.
pub(super) struct ErrorPtr(pub(super) *mut u64);

// SAFETY: it points into the library that the module keeps loaded; the module is used by one
// thread at a time (`LoadedModule` methods take `&mut self`).
unsafe impl Send for ErrorPtr {}

/// A module compiled for and loaded into this process.
pub(super) struct EmulatedModule {
    pub(super) module: &'static ModuleData,
    pub(super) kernels: Vec<(Whole, Part)>,
    pub(super) error: ErrorPtr,
    pub(super) threads: usize,
    /// Counts it as a user of the cached library.
    pub(super) _in_use: InUse,
    /// Keeps the code above loaded (dropped last).
    pub(super) _library: Library,
}

/// One loaded module's use of a cached library (see [`Device::load`] for [`Emulator`]).
pub(super) struct InUse {
    path: PathBuf,
    /// How many modules use the library, this one included, when this one was loaded.
    pub(super) count: usize,
}

impl InUse {
    /// The modules of this process that use each cached library.
    fn map() -> MutexGuard<'static, BTreeMap<PathBuf, usize>> {
        static IN_USE: Mutex<BTreeMap<PathBuf, usize>> = Mutex::new(BTreeMap::new());
        IN_USE.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn take(path: &Path) -> InUse {
        let mut map = InUse::map();
        let count = map.entry(path.to_path_buf()).or_insert(0);
        *count += 1;
        InUse {
            path: path.to_path_buf(),
            count: *count,
        }
    }
}

impl Drop for InUse {
    fn drop(&mut self) {
        let mut map = InUse::map();
        if let Some(count) = map.get_mut(&self.path) {
            *count -= 1;
            if *count == 0 {
                map.remove(&self.path);
            }
        }
    }
}

impl LoadedModule for EmulatedModule {
    unsafe fn launch(&mut self, kernel: usize, n: i64, params: &[&[u8]]) -> DeviceResult<()> {
        let ns = self.module.namespace;
        let fail = |what: String| DeviceFailure(format!("CUDA emulator, module `{ns}`: {what}"));
        let (Some(k), Some(&(whole, part))) =
            (self.module.kernels.get(kernel), self.kernels.get(kernel))
        else {
            return Err(fail(format!(
                "no kernel #{kernel} (the module has {})",
                self.kernels.len()
            )));
        };
        if params.len() != k.params.len() {
            return Err(fail(format!(
                "kernel `{}` takes {} parameters, the launch gave {}",
                k.name,
                k.params.len(),
                params.len()
            )));
        }
        for (p, bytes) in k.params.iter().zip(params) {
            if bytes.len() != p.size {
                return Err(fail(format!(
                    "kernel `{}`: parameter `{}` ({}) is {} bytes, the launch gave {}",
                    k.name,
                    p.name,
                    p.c_type,
                    p.size,
                    bytes.len()
                )));
            }
        }
        if params.last().is_some_and(|last| *last != n.to_ne_bytes()) {
            return Err(fail(format!(
                "kernel `{}`: the launch is over 0..{n} but its last parameter, `n`, says otherwise",
                k.name
            )));
        }
        // SAFETY: the record is the module's `unsigned long long pmexpr_error[4]`, and no launch
        // of this module runs (`&mut self`).
        unsafe { std::ptr::write_bytes(self.error.0, 0, 4) };
        let args: Vec<*const c_void> = params.iter().map(|p| p.as_ptr().cast()).collect();
        let parts = (n / INDICES_PER_THREAD).clamp(1, self.threads as i64) as u32;
        if parts == 1 {
            // SAFETY: each argument is laid out as the kernel's parameter (the caller's contract,
            // sizes checked above, types checked by the trampoline when it compiled).
            unsafe { whole(args.as_ptr()) };
            return Ok(());
        }
        // Raw pointers are not `Send`; the threads only read the arguments, which outlive them.
        let args_addr = args.as_ptr() as usize;
        std::thread::scope(|scope| {
            let mut inline = Vec::new();
            for p in 1..parts {
                let spawned = std::thread::Builder::new()
                    .stack_size(THREAD_STACK)
                    .spawn_scoped(scope, move || {
                        // SAFETY: as in the one-thread case; each part runs other indices.
                        unsafe { part(args_addr as *const *const c_void, p, parts) }
                    });
                if spawned.is_err() {
                    inline.push(p);
                }
            }
            // SAFETY: as above.
            unsafe { part(args.as_ptr(), 0, parts) };
            for p in inline {
                // SAFETY: as above (a part whose thread could not start runs here).
                unsafe { part(args.as_ptr(), p, parts) };
            }
        });
        Ok(())
    }

    fn error_record(&mut self) -> DeviceResult<[u64; 4]> {
        let mut record = [0u64; 4];
        // SAFETY: the module's `pmexpr_error[4]`; no launch runs (`&mut self`).
        unsafe { std::ptr::copy_nonoverlapping(self.error.0, record.as_mut_ptr(), 4) };
        Ok(record)
    }
}
