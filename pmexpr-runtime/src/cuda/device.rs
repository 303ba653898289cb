//! What the CUDA target needs from a device: memory, module loading, launches.
//!
//! Two implementations: [`super::driver`] (an NVIDIA GPU through cudarc) and `super::emulator`
//! (the same generated CUDA C++ compiled for the CPU by the system C++ compiler, for testing the
//! CUDA path where there is no GPU; only with the `cuda-emulator` feature). [`super::call::Call`] drives either: it marshals the captured
//! values, launches the kernels and copies written tensors back.

use std::fmt;

use pmexpr_abi::Number;

/// An address in device memory (a `CUdeviceptr` on a GPU, a host address in the emulator).
pub type DevPtr = u64;

/// A device-side failure: what failed, in words (the caller adds the site).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceFailure(pub String);

impl fmt::Display for DeviceFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DeviceFailure {}

impl From<String> for DeviceFailure {
    fn from(s: String) -> Self {
        DeviceFailure(s)
    }
}

/// The result of a device operation.
pub type DeviceResult<T> = Result<T, DeviceFailure>;

/// One parameter of a kernel, as the generated code declares it.
#[derive(Debug, Clone, Copy)]
pub struct ParamData {
    /// Its C name.
    pub name: &'static str,
    /// Its C++ type as the source spells it (inside the module's namespace).
    pub c_type: &'static str,
    /// Its size in bytes (the C layout).
    pub size: usize,
    /// Its alignment in bytes.
    pub align: usize,
}

/// One kernel of a module: an `extern "C" __global__` function with a grid-stride loop over
/// `0..n`, whose last parameter is `n` (a `long long`).
#[derive(Debug, Clone, Copy)]
pub struct KernelData {
    /// The `extern "C"` name.
    pub name: &'static str,
    /// Its parameters, in order (the last is `n`).
    pub params: &'static [ParamData],
}

/// The CUDA code of one site for one instantiation of its number types, as `accelerate!`
/// embeds it in the binary.
#[derive(Debug, Clone, Copy)]
pub struct ModuleData {
    /// The numbers of the site's number type variables this module was generated for, in
    /// variable order.
    pub instantiation: &'static [Number],
    /// The C++ namespace of the module (unique per site and instantiation).
    pub namespace: &'static str,
    /// The CUDA C++ source (NVRTC compiles it without any header).
    pub source: &'static str,
    /// The PTX the build hook compiled it to, when NVRTC was found at build time.
    pub ptx: Option<&'static str>,
    /// The kernels, in the order the host launches them by index.
    pub kernels: &'static [KernelData],
    /// What each runtime check is (`checks[k - 1]` for check number `k`): the construct and
    /// where it is, in words.
    pub checks: &'static [&'static str],
    /// The maximum tensor rank it was generated for (`pm_tensor::dims` has this length).
    pub max_rank: usize,
}

/// A device: a GPU, or the emulator. Shared by all threads.
pub trait Device: Send + Sync + 'static {
    /// What it is, for messages (`NVIDIA H100 (sm_90)`, `CPU emulator (c++)`).
    fn name(&self) -> String;

    /// Compiles (if needed) and loads a module. Called once per module and process; the caller
    /// keeps the result and serializes its use.
    fn load(&self, module: &'static ModuleData) -> DeviceResult<Box<dyn LoadedModule>>;

    /// Allocates `bytes` (> 0) bytes of device memory.
    fn alloc(&self, bytes: usize) -> DeviceResult<DevPtr>;

    /// Frees memory from [`Device::alloc`].
    ///
    /// # Safety
    /// `ptr` came from `alloc` on this device and is not used afterwards.
    unsafe fn free(&self, ptr: DevPtr);

    /// Copies `src` to device memory at `dst`.
    ///
    /// # Safety
    /// `dst` is valid for `src.len()` bytes.
    unsafe fn upload(&self, dst: DevPtr, src: &[u8]) -> DeviceResult<()>;

    /// Copies device memory at `src` into `dst`.
    ///
    /// # Safety
    /// `src` is valid for `dst.len()` bytes.
    unsafe fn download(&self, src: DevPtr, dst: &mut [u8]) -> DeviceResult<()>;
}

/// A loaded module. Its methods are called with the module's lock held (one launch at a time per
/// module), so that its error record belongs to one launch.
pub trait LoadedModule: Send {
    /// Clears the error record (`pmexpr_error`), launches kernel `kernel` (an index into
    /// [`ModuleData::kernels`]) over `0..n` with the given parameter values (each laid out as
    /// its [`ParamData`] says; the last one is `n`), and waits for it to finish.
    ///
    /// # Safety
    /// The parameters are laid out as the kernel declares them and every device pointer in them
    /// is valid for what the kernel may access.
    unsafe fn launch(&mut self, kernel: usize, n: i64, params: &[&[u8]]) -> DeviceResult<()>;

    /// Reads the error record (`pmexpr_error[0..4]`) after a launch.
    fn error_record(&mut self) -> DeviceResult<[u64; 4]>;
}
