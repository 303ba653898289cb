//! The CUDA target emulated on the CPU: the generated CUDA C++ compiled as host C++ by the
//! system's C++ compiler and run on the calling thread (or a few threads).
//!
//! It exists so that the whole CUDA host path — marshaling the captured values, launching the
//! kernels, reading the error record, copying tensors back — is exercised and tested where there
//! is no GPU (this repository's CI has none). It is slow (a compiler run per new module, then
//! the kernels on a handful of CPU threads) and it is not a performance target: use the CPU
//! backends for that.
//!
//! # How a module runs
//!
//! [`Emulator::load`](Device::load) writes one C++ file: a shim that makes CUDA C++ valid host
//! C++ (below), the module's source as generated (the prelude included), and one trampoline per
//! kernel. The trampoline `<kernel>__pm_emu(void** args)` copies each parameter out of the bytes
//! the host laid out ([`ParamData`]), sets `gridDim = blockDim = {1,1,1}` and
//! `blockIdx = threadIdx = {0,0,0}`, and calls the kernel, whose grid-stride loop then covers
//! `0..n` in order. Large launches (`n` of a few thousand and more) are split over up to
//! [`Emulator::threads`] CPU threads, each running the kernel as one block of a grid of that many
//! (`<kernel>__pm_emu_part`), so that each thread takes every `threads`-th index as a GPU's
//! grid-stride loop would. As on a GPU, when several indices fail a runtime check in a launch
//! that ran on several threads, which one the error record holds is unspecified; a launch on one
//! thread records the lowest failing index.
//!
//! The trampolines also check, when the file compiles, that each [`ParamData`]'s size and
//! alignment are what the C++ compiler gives its `c_type` and that the kernel takes exactly the
//! listed types: a layout computed wrongly on the Rust side fails [`Device::load`] with the
//! compiler's message naming the kernel and the parameter.
//!
//! The shim (the file's first lines) defines the CUDA keywords away (`__device__`, `__global__`
//! and `__host__` to nothing, `__noinline__` and `__forceinline__` to their GNU C++ meanings),
//! declares `blockIdx`, `threadIdx`, `blockDim` and `gridDim` as `thread_local` structs of
//! three `unsigned`s, and provides the device functions the generated code calls: `atomicCAS`
//! on `unsigned long long` (GNU `__atomic` builtins), `__longlong_as_double` and `__int_as_float`
//! (NaN and infinity literals of `f64` and `f32`), and the math functions (`sqrt exp log pow sin
//! cos floor`) from `<cmath>`. The host library's math functions may differ from CUDA's in the
//! last bits; integer results, `+ - * /` on `f64` and `f32` (IEEE, not contracted: C++17 mode
//! has GCC's `-ffp-contract=off`, as NVRTC gets `--fmad=false`) and the runtime checks are exact.
//!
//! # The compiler and the cache
//!
//! The C++ compiler is `$PMEXPR_CXX` when it is set (and nothing else), else `$CXX` (and nothing
//! else), else the first of `c++`, `g++` and `clang++` that runs with `--version`; it needs C++17
//! and the GNU extensions GCC and Clang share. A variable may hold a command with arguments
//! (`ccache g++`). Each module is compiled with `-std=c++17 -O2 -shared -fPIC` into
//! `pmexpr-emulator/` under [`std::env::temp_dir`], named after its namespace and a hash of the
//! compiler and the whole C++ text, so that an unchanged module is compiled once and then reused
//! by every run; files are written under temporary names and renamed, so that concurrent
//! threads and processes never see half a file. The directory is created private to the user,
//! and one that other users could write to is refused (the emulator runs the libraries it finds
//! there). A failed compilation leaves its `.cpp` there, for reading.
//!
//! A module that is loaded again while this process has it loaded is loaded from a private copy
//! of its library (deleted once loaded), so that each load has its own globals — its own error
//! record — as each load of a module on a GPU does.
//!
//! # Memory
//!
//! Device memory is host memory: [`Device::alloc`] allocates 16-byte aligned blocks, uploads
//! and downloads are copies, and a [`DevPtr`] is the address. Uploads and downloads are checked
//! against the live allocations; the kernels' own accesses are bounds-checked by the generated
//! code (its runtime checks) and not otherwise.

mod compiler;
mod library;
mod source;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

#[cfg(doc)]
use crate::cuda::device::ParamData;
use crate::cuda::device::{DevPtr, Device, DeviceFailure, DeviceResult, LoadedModule, ModuleData};

use self::compiler::{
    CXX_FLAGS, Compiler, Fnv, find_compiler, prepare_cache_dir, temp_name, truncate_log,
    write_atomically,
};
use self::library::{EmulatedModule, ErrorPtr, ErrorRecord, InUse, Part, Whole, open_library};
use self::source::{cpp_text, validate};

/// The alignment of every allocation (as `cudaMalloc` gives at least).
const ALLOC_ALIGN: usize = 16;

/// The most threads [`Emulator::new`] uses for one launch.
const MAX_THREADS: usize = 16;

/// The number of indices per thread below which a launch is not split further.
const INDICES_PER_THREAD: i64 = 2048;

/// The stack of a launch's extra threads (recursive device functions may go deep).
const THREAD_STACK: usize = 8 << 20;

/// A `Device` that runs the generated CUDA C++ on the CPU (see the module docs).
pub struct Emulator {
    compiler: Compiler,
    threads: usize,
    /// The cache directory, prepared at the first load.
    cache: OnceLock<Result<PathBuf, String>>,
    /// The live allocations: address → size.
    allocations: Mutex<BTreeMap<u64, usize>>,
    /// How many modules it compiled (for tests).
    compilations: AtomicU64,
}

impl Emulator {
    /// Finds a C++ compiler (see the module docs). The error says what was tried.
    pub fn new() -> Result<Emulator, String> {
        let compiler = find_compiler(std::env::var_os("PMEXPR_CXX"), std::env::var_os("CXX"))?;
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(MAX_THREADS);
        Ok(Emulator {
            compiler,
            threads,
            cache: OnceLock::new(),
            allocations: Mutex::new(BTreeMap::new()),
            compilations: AtomicU64::new(0),
        })
    }

    /// The same emulator, running each launch on at most `threads` threads (at least 1).
    pub fn with_threads(mut self, threads: usize) -> Emulator {
        self.threads = threads.max(1);
        self
    }

    /// The most threads one launch runs on.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The compiler command, as found (`c++`, or what `PMEXPR_CXX` or `CXX` says).
    pub fn compiler(&self) -> &str {
        &self.compiler.shown
    }

    /// The bytes of "device" memory allocated and not freed: how tests check that calls free what
    /// they allocate.
    pub fn live_bytes(&self) -> usize {
        self.allocations().values().sum()
    }

    fn allocations(&self) -> MutexGuard<'_, BTreeMap<u64, usize>> {
        self.allocations.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `[ptr, ptr + len)` lies in one live allocation.
    fn check_range(&self, what: &str, ptr: DevPtr, len: usize) -> DeviceResult<()> {
        let allocations = self.allocations();
        let inside = allocations
            .range(..=ptr)
            .next_back()
            .is_some_and(|(&base, &size)| {
                (ptr - base)
                    .checked_add(len as u64)
                    .is_some_and(|end| end <= size as u64)
            });
        if inside {
            Ok(())
        } else {
            Err(DeviceFailure(format!(
                "CUDA emulator: {what} of {len} bytes at {ptr:#x} is not inside a live allocation"
            )))
        }
    }

    fn cache_dir(&self) -> DeviceResult<&Path> {
        self.cache
            .get_or_init(prepare_cache_dir)
            .as_deref()
            .map_err(|e| DeviceFailure(e.clone()))
    }

    /// The C++ file and the shared library of a module's text (in the cache directory).
    fn artifacts(&self, dir: &Path, namespace: &str, text: &str) -> (PathBuf, PathBuf) {
        let mut key = Fnv::new();
        key.write(self.compiler.shown.as_bytes());
        key.write(&[0]);
        key.write(self.compiler.version.as_bytes());
        key.write(&[0]);
        for flag in CXX_FLAGS {
            key.write(flag.as_bytes());
            key.write(&[0]);
        }
        key.write(text.as_bytes());
        let stem_ns: String = namespace.chars().take(100).collect();
        let stem = format!("{stem_ns}-{:016x}", key.finish());
        (
            dir.join(format!("{stem}.cpp")),
            dir.join(format!("{stem}.{}", std::env::consts::DLL_EXTENSION)),
        )
    }

    /// Compiles `cpp` into `so` (under a temporary name, then renamed).
    fn compile(&self, namespace: &str, cpp: &Path, so: &Path) -> DeviceResult<()> {
        self.compilations.fetch_add(1, Ordering::Relaxed);
        let tmp = temp_name(so);
        let output = Command::new(&self.compiler.program)
            .args(&self.compiler.args)
            .args(CXX_FLAGS)
            .arg("-o")
            .arg(&tmp)
            .arg(cpp)
            .output();
        let failure = match output {
            Err(e) => Some(format!("it did not run: {e}")),
            Ok(out) if !out.status.success() => {
                let mut log = String::from_utf8_lossy(&out.stderr).into_owned();
                if log.trim().is_empty() {
                    log = String::from_utf8_lossy(&out.stdout).into_owned();
                }
                Some(format!("{}:\n{}", out.status, truncate_log(&log)))
            }
            Ok(_) => None,
        };
        if let Some(why) = failure {
            let _ = fs::remove_file(&tmp);
            return Err(DeviceFailure(format!(
                "CUDA emulator: the C++ compiler `{}` failed on module `{namespace}` ({}): {why}",
                self.compiler.shown,
                cpp.display()
            )));
        }
        fs::rename(&tmp, so).map_err(|e| {
            let _ = fs::remove_file(&tmp);
            DeviceFailure(format!(
                "CUDA emulator: cannot move the compiled module `{namespace}` to {}: {e}",
                so.display()
            ))
        })
    }
}

impl std::fmt::Debug for Emulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emulator")
            .field("compiler", &self.compiler.shown)
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let allocations = std::mem::take(&mut *self.allocations());
        for (ptr, size) in allocations {
            // SAFETY: allocated by `alloc` with this layout and not freed (still in the map).
            unsafe {
                std::alloc::dealloc(
                    ptr as *mut u8,
                    std::alloc::Layout::from_size_align_unchecked(size, ALLOC_ALIGN),
                )
            };
        }
    }
}

/// The process's emulator, found at the first call (see [`Emulator::new`]); the error says why
/// there is none (no C++ compiler).
pub fn emulator() -> Result<&'static Emulator, String> {
    static EMULATOR: OnceLock<Result<Emulator, String>> = OnceLock::new();
    EMULATOR
        .get_or_init(Emulator::new)
        .as_ref()
        .map_err(Clone::clone)
}

impl Device for Emulator {
    fn name(&self) -> String {
        format!("CPU emulator ({})", self.compiler.shown)
    }

    fn load(&self, module: &'static ModuleData) -> DeviceResult<Box<dyn LoadedModule>> {
        let ns = module.namespace;
        validate(module)
            .map_err(|e| DeviceFailure(format!("CUDA emulator, module {ns:?}: {e}")))?;
        let text = cpp_text(module);
        let dir = self.cache_dir()?;
        let (cpp, so) = self.artifacts(dir, ns, &text);
        let build = || {
            write_atomically(&cpp, &text).map_err(|e| {
                DeviceFailure(format!(
                    "CUDA emulator: cannot write module `{ns}` to {}: {e}",
                    cpp.display()
                ))
            })?;
            self.compile(ns, &cpp, &so)
        };
        let built = !so.is_file();
        if built {
            build()?;
        }
        let load_failed = |what: String| {
            DeviceFailure(format!(
                "CUDA emulator: module `{ns}` ({}): {what}",
                so.display()
            ))
        };
        let in_use = InUse::take(&so);
        let library = match open_library(&so, in_use.count > 1) {
            Ok(library) => library,
            // A cached library that does not load (damaged, or built elsewhere) is built again.
            Err(_) if !built => {
                build()?;
                open_library(&so, in_use.count > 1).map_err(load_failed)?
            }
            Err(e) => return Err(load_failed(e)),
        };
        let mut kernels = Vec::with_capacity(module.kernels.len());
        for k in module.kernels {
            // SAFETY: the trampolines have these signatures (generated above).
            let whole = unsafe { library.get::<Whole>(format!("{}__pm_emu\0", k.name).as_bytes()) }
                .map_err(|e| load_failed(format!("no trampoline for kernel `{}`: {e}", k.name)))?;
            // SAFETY: as above.
            let part =
                unsafe { library.get::<Part>(format!("{}__pm_emu_part\0", k.name).as_bytes()) }
                    .map_err(|e| {
                        load_failed(format!("no trampoline for kernel `{}`: {e}", k.name))
                    })?;
            kernels.push((*whole, *part));
        }
        // SAFETY: as above.
        let record = unsafe { library.get::<ErrorRecord>(b"pm_emu_error_record\0") }
            .map_err(|e| load_failed(format!("no error record: {e}")))?;
        // SAFETY: it returns the address of a global array.
        let error = ErrorPtr(unsafe { record() });
        if error.0.is_null() {
            return Err(load_failed("the error record's address is null".into()));
        }
        Ok(Box::new(EmulatedModule {
            module,
            kernels,
            error,
            threads: self.threads,
            _in_use: in_use,
            _library: library,
        }))
    }

    fn alloc(&self, bytes: usize) -> DeviceResult<DevPtr> {
        if bytes == 0 {
            return Err(DeviceFailure(
                "CUDA emulator: an allocation of 0 bytes".into(),
            ));
        }
        let layout = std::alloc::Layout::from_size_align(bytes, ALLOC_ALIGN).map_err(|_| {
            DeviceFailure(format!(
                "CUDA emulator: cannot allocate {bytes} bytes (too large)"
            ))
        })?;
        // SAFETY: the layout's size is not zero.
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            return Err(DeviceFailure(format!(
                "CUDA emulator: out of memory allocating {bytes} bytes"
            )));
        }
        self.allocations().insert(ptr as u64, bytes);
        Ok(ptr as u64)
    }

    unsafe fn free(&self, ptr: DevPtr) {
        let size = self.allocations().remove(&ptr);
        // A pointer that is not a live allocation is ignored (nothing to free, and no panic).
        if let Some(size) = size {
            // SAFETY: allocated by `alloc` with this layout, and no longer in the map.
            unsafe {
                std::alloc::dealloc(
                    ptr as *mut u8,
                    std::alloc::Layout::from_size_align_unchecked(size, ALLOC_ALIGN),
                )
            };
        }
    }

    unsafe fn upload(&self, dst: DevPtr, src: &[u8]) -> DeviceResult<()> {
        if src.is_empty() {
            return Ok(());
        }
        self.check_range("an upload", dst, src.len())?;
        // SAFETY: `dst..dst + len` lies in a live allocation (checked), which `src` cannot
        // overlap (it is a shared borrow, the allocation is only written through `DevPtr`s).
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst as *mut u8, src.len()) };
        Ok(())
    }

    unsafe fn download(&self, src: DevPtr, dst: &mut [u8]) -> DeviceResult<()> {
        if dst.is_empty() {
            return Ok(());
        }
        self.check_range("a download", src, dst.len())?;
        // SAFETY: `src..src + len` lies in a live allocation (checked); `dst` is borrowed
        // mutably, so it is not that memory.
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }
}
