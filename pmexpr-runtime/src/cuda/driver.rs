//! The CUDA target on an NVIDIA GPU, through cudarc.
//!
//! [`Gpu`] is the [`Device`] of the first GPU: the driver's primary context of device 0, shared by
//! every thread of the process ([`gpu()`]). Each of its methods, and each method of the modules it
//! loads, first makes that context current on the calling thread, since any thread may call them.
//! Work goes to the legacy default stream, which orders it, and every call returns when its work
//! is done: copies are the driver's synchronous ones, and a launch waits for the context.
//!
//! cudarc panics when the driver library is absent, so nothing here touches it before
//! [`crate::gpu::probe`] (which loads the driver itself and never panics) has found a GPU, and
//! cudarc's own library lookup has been checked too.
//!
//! **Modules.** [`Device::load`] takes the PTX the build hook compiled (for `compute_80`), or,
//! when the build had no NVRTC, compiles the CUDA C++ source now with the process's NVRTC
//! ([`crate::nvrtc`]) for the GPU's own virtual architecture ([`compile_for_device`]). When the
//! build's PTX does not load here (a driver older than its PTX ISA, a GPU older than `sm_80`), the
//! source is compiled again at run time if NVRTC is there. The module's kernels and its error
//! record (`pmexpr_error`) are looked up once; the module is unloaded when dropped.
//!
//! **Launch configuration** ([`LaunchConfig`]), chosen per kernel when its module is loaded: the
//! block size the occupancy calculator suggests for the kernel (`cuOccupancyMaxPotentialBlockSize`,
//! no dynamic shared memory), and at most one full wave of blocks: the multiprocessors times the
//! blocks of that size that can be resident on one
//! (`cuOccupancyMaxActiveBlocksPerMultiprocessor`). Each launch over `0..n` then uses
//! `min(ceil(n / block), that wave)` blocks, at least one ([`grid_for`]): the kernels are
//! grid-stride loops, so fewer threads than indices is correct, and a small `n` gets no idle
//! blocks.

use std::ffi::{CString, c_void};
use std::fmt;
use std::sync::{Arc, OnceLock};

use cudarc::driver::{CudaContext, DriverError, result, sys};

use super::device::{
    DevPtr, Device, DeviceFailure, DeviceResult, KernelData, LoadedModule, ModuleData,
};
use crate::gpu::{self, GpuInfo};
use crate::nvrtc::{self, NvrtcError};

/// The `__device__ unsigned long long[4]` where generated code records the first failed runtime
/// check of a launch (`pmexpr_core::codegen::cuda::ERROR_SYMBOL`).
const ERROR_SYMBOL: &str = "pmexpr_error";

/// The size of that record in bytes.
const ERROR_RECORD_BYTES: usize = 4 * std::mem::size_of::<u64>();

/// The largest x dimension of a grid (`2^31 - 1` blocks, every GPU since compute capability 3.0).
const MAX_GRID_X: u64 = (1 << 31) - 1;

/// The NVRTC result for an option it does not accept, such as an unknown `--gpu-architecture`
/// (`NVRTC_ERROR_INVALID_OPTION`).
const NVRTC_ERROR_INVALID_OPTION: i32 = 5;

/// The first NVIDIA GPU of the process, as a [`Device`] for the CUDA target.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    info: GpuInfo,
}

impl fmt::Debug for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gpu").field("info", &self.info).finish()
    }
}

impl Gpu {
    /// Opens device 0: probes for a GPU ([`gpu::probe`]), then retains the driver's primary
    /// context of the device. The error says why there is no usable GPU, in one line.
    ///
    /// Most code wants [`gpu()`], which opens it once per process.
    pub fn open() -> Result<Gpu, String> {
        let info = gpu::probe().map_err(|why| why.to_string())?;
        // SAFETY: only tries to load the driver library under cudarc's names (which the probe
        // has just loaded under one of them).
        if !unsafe { sys::is_culib_present() } {
            return Err(
                "the NVIDIA driver was found, but not under the names cudarc loads it by \
                 (libcuda.so, libcuda.so.1, ...)"
                    .to_string(),
            );
        }
        // cudarc resolves each driver function at its first call and panics when the library
        // lacks it: with a driver the probe accepted, that would be a bug, but it must not take
        // the process down.
        let ctx = std::panic::catch_unwind(|| CudaContext::new(0))
            .map_err(|_| {
                "cudarc panicked while opening GPU 0 (a CUDA driver function it needs is missing)"
                    .to_string()
            })?
            .map_err(|e| driver_error(&e, "opening the primary context of GPU 0"))?;
        Ok(Gpu { ctx, info })
    }

    /// The device memory in use now (total minus free), as the driver reports it: how tests check
    /// that calls free what they allocate.
    pub fn used_bytes(&self) -> Result<usize, String> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| driver_error(&e, "binding the context"))?;
        let (free, total) = self
            .ctx
            .mem_get_info()
            .map_err(|e| driver_error(&e, "reading the memory in use"))?;
        Ok(total - free)
    }

    /// The GPU, as the probe found it.
    pub fn info(&self) -> &GpuInfo {
        &self.info
    }

    /// Makes the context current on the calling thread.
    fn bind(&self) -> DeviceResult<()> {
        bind(&self.ctx)
    }

    /// Loads `ptx` as `module`'s code: the module, its kernels and their launch configuration,
    /// its error record.
    fn load_ptx(&self, module: &'static ModuleData, ptx: &str) -> DeviceResult<GpuModule> {
        let ns = module.namespace;
        self.info
            .check_ptx(ptx)
            .map_err(|why| DeviceFailure(format!("cannot load the PTX of `{ns}`: {why}")))?;
        let image = CString::new(ptx.trim_end_matches('\0')).map_err(|_| {
            DeviceFailure(format!(
                "cannot load the PTX of `{ns}`: it holds a NUL byte"
            ))
        })?;
        self.bind()?;
        // SAFETY: `image` is a NUL-terminated PTX text, alive during the call (the driver copies
        // it); the context is current.
        let handle = unsafe { result::module::load_data(image.as_ptr().cast()) }.map_err(|e| {
            driver_failure(&e, &format!("loading the PTX of `{ns}` (cuModuleLoadData)"))
        })?;
        // From here on, dropping `loaded` unloads the module, on the error paths too.
        let mut loaded = GpuModule {
            ctx: self.ctx.clone(),
            handle,
            kernels: Vec::with_capacity(module.kernels.len()),
            error_record: 0,
            module,
        };
        // SAFETY: `handle` is the module just loaded; the name is a C string.
        let (record, bytes) =
            unsafe { result::module::get_global(handle, c_string(ERROR_SYMBOL)?) }
                .map_err(|e| driver_failure(&e, &format!("finding `{ERROR_SYMBOL}` in `{ns}`")))?;
        if bytes < ERROR_RECORD_BYTES {
            return Err(DeviceFailure(format!(
                "`{ERROR_SYMBOL}` in `{ns}` has {bytes} bytes, not {ERROR_RECORD_BYTES}"
            )));
        }
        loaded.error_record = record;
        for kernel in module.kernels {
            // SAFETY: `handle` is loaded; the name is a C string.
            let func = unsafe { result::module::get_function(handle, c_string(kernel.name)?) }
                .map_err(|e| {
                    driver_failure(&e, &format!("finding kernel `{}` in `{ns}`", kernel.name))
                })?;
            // SAFETY: `func` belongs to the loaded module; the context is current.
            let config = unsafe { LaunchConfig::for_function(func, self.info.multiprocessors) }
                .map_err(|e| {
                    driver_failure(
                        &e,
                        &format!("choosing the launch configuration of `{}`", kernel.name),
                    )
                })?;
            loaded.kernels.push(GpuKernel {
                data: kernel,
                func,
                config,
            });
        }
        Ok(loaded)
    }
}

/// The GPU of this process: device 0, opened once ([`Gpu::open`]) and shared by all threads; the
/// reason, in one line, when there is none.
pub fn gpu() -> Result<&'static Gpu, String> {
    static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
    GPU.get_or_init(Gpu::open).as_ref().map_err(Clone::clone)
}

impl Device for Gpu {
    fn name(&self) -> String {
        let (major, minor) = self.info.compute_capability;
        format!("{} (sm_{major}{minor})", self.info.name)
    }

    fn load(&self, module: &'static ModuleData) -> DeviceResult<Box<dyn LoadedModule>> {
        let ns = module.namespace;
        let loaded = match module.ptx {
            None => {
                let ptx = compile_for_device(&self.info, module.source, &format!("{ns}.cu"))?;
                self.load_ptx(module, &ptx)?
            }
            Some(ptx) => match self.load_ptx(module, ptx) {
                Ok(loaded) => loaded,
                // The build's PTX (for `compute_80`, from the build machine's NVRTC) does not
                // load here: compile for this GPU with this machine's NVRTC, if there is one.
                Err(DeviceFailure(from_build)) => {
                    let ptx = compile_for_device(&self.info, module.source, &format!("{ns}.cu"))
                        .map_err(|_| DeviceFailure(from_build.clone()))?;
                    self.load_ptx(module, &ptx).map_err(|DeviceFailure(now)| {
                        DeviceFailure(format!("{from_build}; compiled again for this GPU: {now}"))
                    })?
                }
            },
        };
        Ok(Box::new(loaded))
    }

    fn alloc(&self, bytes: usize) -> DeviceResult<DevPtr> {
        self.bind()?;
        // SAFETY: the context is current; the memory is not read before it is written.
        unsafe { result::malloc_sync(bytes.max(1)) }.map_err(|e| {
            driver_failure(
                &e,
                &format!("allocating {bytes} bytes of GPU memory (cuMemAlloc)"),
            )
        })
    }

    unsafe fn free(&self, ptr: DevPtr) {
        // Nothing to report to: a failure here leaves the memory allocated.
        if self.bind().is_ok() {
            // SAFETY: the caller passes memory from `alloc` that is no longer used.
            let _ = unsafe { result::free_sync(ptr) };
        }
    }

    unsafe fn upload(&self, dst: DevPtr, src: &[u8]) -> DeviceResult<()> {
        if src.is_empty() {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: the caller guarantees `dst` is valid for `src.len()` bytes; the copy is
        // synchronous with respect to `src`.
        unsafe { result::memcpy_htod_sync(dst, src) }.map_err(|e| {
            driver_failure(
                &e,
                &format!("copying {} bytes to the GPU (cuMemcpyHtoD)", src.len()),
            )
        })
    }

    unsafe fn download(&self, src: DevPtr, dst: &mut [u8]) -> DeviceResult<()> {
        if dst.is_empty() {
            return Ok(());
        }
        self.bind()?;
        let len = dst.len();
        // SAFETY: the caller guarantees `src` is valid for `dst.len()` bytes; the copy has
        // finished when the call returns.
        unsafe { result::memcpy_dtoh_sync(dst, src) }.map_err(|e| {
            driver_failure(
                &e,
                &format!("copying {len} bytes from the GPU (cuMemcpyDtoH)"),
            )
        })
    }
}

/// How a kernel is launched: a one-dimensional grid of `block`-thread blocks, at most one full
/// wave of them (`multiprocessors × blocks_per_multiprocessor`). See the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Threads per block.
    pub block: u32,
    /// The multiprocessors.
    pub multiprocessors: u32,
    /// How many blocks of `block` threads can be resident on one multiprocessor.
    pub blocks_per_multiprocessor: u32,
}

impl LaunchConfig {
    /// The configuration of `func` on a GPU with `multiprocessors` SMs, from the driver's
    /// occupancy calculator (no dynamic shared memory).
    ///
    /// # Safety
    /// `func` is a function of a loaded module, and its context is current on this thread.
    pub unsafe fn for_function(
        func: sys::CUfunction,
        multiprocessors: i32,
    ) -> Result<LaunchConfig, DriverError> {
        // SAFETY: the caller's guarantee; no dynamic shared memory, so no size callback.
        let (_, block) = unsafe { result::occupancy::max_potential_block_size(func, None, 0, 0) }?;
        let block = block.max(1);
        // SAFETY: as above.
        let per_sm =
            unsafe { result::occupancy::max_active_block_per_multiprocessor(func, block, 0) }?;
        Ok(LaunchConfig {
            block: block as u32,
            multiprocessors: multiprocessors.max(0) as u32,
            blocks_per_multiprocessor: per_sm.max(0) as u32,
        })
    }

    /// The number of blocks for a launch over `0..n` ([`grid_for`]).
    pub fn grid(&self, n: i64) -> u32 {
        grid_for(
            n,
            self.block,
            self.multiprocessors,
            self.blocks_per_multiprocessor,
        )
    }
}

/// The number of blocks of `block` threads for a grid-stride loop over `0..n` on a GPU with `sms`
/// multiprocessors, each of which holds `blocks_per_sm` such blocks at once: enough blocks to give
/// every index a thread, but no more than one full wave, and at least one (nor more than the
/// grid's limit).
pub fn grid_for(n: i64, block: u32, sms: u32, blocks_per_sm: u32) -> u32 {
    let needed = (n.max(0) as u64).div_ceil(u64::from(block.max(1)));
    let wave = u64::from(sms) * u64::from(blocks_per_sm);
    needed.min(wave).clamp(1, MAX_GRID_X) as u32
}

/// The virtual architectures to ask NVRTC for, in order, on a GPU of compute capability
/// `major.minor`: its own (`compute_90` on `sm_90`), then, for an NVRTC too old to know it,
/// `compute_90` and `compute_80` where they are older than the GPU (PTX for an older architecture
/// runs on newer GPUs, never the reverse).
pub fn arch_candidates(major: i32, minor: i32) -> Vec<String> {
    let own = major * 10 + minor;
    let mut out = vec![format!("compute_{major}{minor}")];
    out.extend(
        [90, 80]
            .into_iter()
            .filter(|&older| older < own)
            .map(|older| format!("compute_{older}")),
    );
    out
}

/// Whether NVRTC failed because it does not know the architecture asked for (rather than because
/// of the source): then an older one is worth trying.
fn arch_rejected(e: &NvrtcError) -> bool {
    match e {
        NvrtcError::Api { code, .. } => *code == NVRTC_ERROR_INVALID_OPTION,
        NvrtcError::Compile { log, .. } => log.contains("gpu-architecture"),
        _ => false,
    }
}

/// Compiles CUDA C++ `source` (called `name` in messages) to PTX for the GPU `info` with the
/// process's NVRTC ([`crate::nvrtc::nvrtc`]): for the first of [`arch_candidates`] that NVRTC
/// accepts. The error, in words, says how to install NVRTC when it is missing.
pub fn compile_for_device(info: &GpuInfo, source: &str, name: &str) -> Result<String, String> {
    let nvrtc = nvrtc::nvrtc().map_err(|e| no_nvrtc(name, &e))?;
    let (major, minor) = info.compute_capability;
    let candidates = arch_candidates(major, minor);
    let mut first_rejection = None;
    for arch in &candidates {
        match nvrtc.compile_ptx(source, name, arch) {
            Ok(ptx) => return Ok(ptx),
            Err(e) if arch_rejected(&e) => {
                first_rejection.get_or_insert(e);
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    let (nv_major, nv_minor) = nvrtc.version();
    Err(format!(
        "NVRTC {nv_major}.{nv_minor} ({}) accepts none of {} for {name}: {}",
        nvrtc.path(),
        candidates.join(", "),
        first_rejection.map_or_else(String::new, |e| e.to_string())
    ))
}

/// The failure when a module must be compiled at run time and NVRTC cannot be loaded.
fn no_nvrtc(name: &str, e: &NvrtcError) -> String {
    format!(
        "cannot compile {name} for the GPU: NVRTC, which compiles CUDA code at run time when the \
         build did not, is missing: {e}\n  install it (`pip install nvidia-cuda-nvrtc-cu12`, then \
         add site-packages/nvidia/cuda_nvrtc/lib to LD_LIBRARY_PATH), or build with NVRTC \
         installed so that the build compiles the kernels"
    )
}

/// `what` failed with the driver's error, in words: `… failed: CUDA_ERROR_X (its description)`.
fn driver_error_text(what: &str, code: u32, name: Option<&str>, text: Option<&str>) -> String {
    match (name, text) {
        (Some(name), Some(text)) => format!("{what} failed: {name} ({text})"),
        (Some(name), None) => format!("{what} failed: {name}"),
        (None, Some(text)) => format!("{what} failed: {text} (CUDA error {code})"),
        (None, None) => format!("{what} failed: CUDA error {code}"),
    }
}

/// [`driver_error_text`] for a cudarc error (asks the driver for the error's name and text, so
/// only with a driver loaded).
fn driver_error(e: &DriverError, what: &str) -> String {
    let name = e
        .error_name()
        .ok()
        .map(|s| s.to_string_lossy().into_owned());
    let text = e
        .error_string()
        .ok()
        .map(|s| s.to_string_lossy().into_owned());
    driver_error_text(what, e.0 as u32, name.as_deref(), text.as_deref())
}

fn driver_failure(e: &DriverError, what: &str) -> DeviceFailure {
    DeviceFailure(driver_error(e, what))
}

fn bind(ctx: &CudaContext) -> DeviceResult<()> {
    ctx.bind_to_thread()
        .map_err(|e| driver_failure(&e, "making the GPU's context current (cuCtxSetCurrent)"))
}

fn c_string(name: &str) -> DeviceResult<CString> {
    CString::new(name).map_err(|_| DeviceFailure(format!("{name:?} holds a NUL byte")))
}

/// A kernel of a loaded module.
struct GpuKernel {
    data: &'static KernelData,
    func: sys::CUfunction,
    config: LaunchConfig,
}

/// A module loaded on the GPU.
struct GpuModule {
    /// Keeps the context alive as long as the module.
    ctx: Arc<CudaContext>,
    handle: sys::CUmodule,
    kernels: Vec<GpuKernel>,
    /// The device address of `pmexpr_error`.
    error_record: DevPtr,
    module: &'static ModuleData,
}

// SAFETY: the driver's handles (`CUmodule`, `CUfunction`) are not tied to a thread: they may be
// used from any thread on which their context is current, which every method makes sure of first.
unsafe impl Send for GpuModule {}

/// Storage for one kernel parameter, aligned for any parameter type.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct ParamSlot([u8; 16]);

impl LoadedModule for GpuModule {
    unsafe fn launch(&mut self, kernel: usize, n: i64, params: &[&[u8]]) -> DeviceResult<()> {
        let ns = self.module.namespace;
        let Some(k) = self.kernels.get(kernel) else {
            return Err(DeviceFailure(format!(
                "`{ns}` has {} kernels, not kernel {kernel}",
                self.kernels.len()
            )));
        };
        let name = k.data.name;
        // The driver reads each parameter with the size the kernel declares: a slice of another
        // size would be read past its end.
        let declared: Vec<usize> = k.data.params.iter().map(|p| p.size).collect();
        let given: Vec<usize> = params.iter().map(|p| p.len()).collect();
        if declared != given {
            return Err(DeviceFailure(format!(
                "kernel `{name}` of `{ns}` takes parameters of {declared:?} bytes, given {given:?}"
            )));
        }
        bind(&self.ctx)?;
        // SAFETY: `error_record` is the module's `pmexpr_error`, `ERROR_RECORD_BYTES` long.
        unsafe { result::memset_d8_sync(self.error_record, 0, ERROR_RECORD_BYTES) }
            .map_err(|e| driver_failure(&e, &format!("clearing `{ERROR_SYMBOL}` of `{ns}`")))?;
        if n <= 0 {
            return Ok(());
        }
        let grid = k.config.grid(n);
        // Each parameter's bytes, copied to aligned storage that lives until the launch has
        // read them (the driver copies the values when the launch is queued).
        let mut offsets = Vec::with_capacity(params.len());
        let mut slots = 0;
        for p in params {
            offsets.push(slots);
            slots += p.len().div_ceil(std::mem::size_of::<ParamSlot>()).max(1);
        }
        let mut storage = vec![ParamSlot([0; 16]); slots];
        let base = storage.as_mut_ptr();
        let mut pointers: Vec<*mut c_void> = Vec::with_capacity(params.len());
        for (p, &offset) in params.iter().zip(&offsets) {
            // SAFETY: `offset + ceil(len / 16)` slots fit in `storage` (counted above), so the
            // `p.len()` bytes written stay inside it; `p` does not overlap the new vector.
            unsafe {
                let dst = base.add(offset).cast::<u8>();
                std::ptr::copy_nonoverlapping(p.as_ptr(), dst, p.len());
                pointers.push(dst.cast());
            }
        }
        // SAFETY: `func` is a kernel of this loaded module, the context is current, and
        // `pointers` holds one pointer per declared parameter, each to as many bytes as the
        // kernel declares (checked above). The caller guarantees the values are laid out as the
        // kernel declares them and that the device pointers in them are valid.
        unsafe {
            result::launch_kernel(
                k.func,
                (grid, 1, 1),
                (k.config.block, 1, 1),
                0,
                std::ptr::null_mut(),
                &mut pointers,
            )
        }
        .map_err(|e| {
            driver_failure(
                &e,
                &format!(
                    "launching kernel `{name}` of `{ns}` ({grid} blocks of {} threads, n = {n})",
                    k.config.block
                ),
            )
        })?;
        drop(storage);
        result::ctx::synchronize()
            .map_err(|e| driver_failure(&e, &format!("running kernel `{name}` of `{ns}`")))
    }

    fn error_record(&mut self) -> DeviceResult<[u64; 4]> {
        bind(&self.ctx)?;
        let mut record = [0u64; 4];
        // SAFETY: `error_record` is the module's `pmexpr_error`, 4 `u64`s.
        unsafe { result::memcpy_dtoh_sync(&mut record[..], self.error_record) }.map_err(|e| {
            driver_failure(
                &e,
                &format!("reading `{ERROR_SYMBOL}` of `{}`", self.module.namespace),
            )
        })?;
        Ok(record)
    }
}

impl Drop for GpuModule {
    fn drop(&mut self) {
        if bind(&self.ctx).is_ok() {
            // SAFETY: the module was loaded by `Gpu::load_ptx` and is unloaded once, here; its
            // functions are not used afterwards (they live in `self`).
            let _ = unsafe { result::module::unload(self.handle) };
        }
    }
}

#[cfg(test)]
mod tests;
