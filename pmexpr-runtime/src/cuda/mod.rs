//! The CUDA target: runs the kernels that the build hook generated for a CUDA-class site.
//!
//! At build time the hook (`pmexpr-build`) generates, for a site the classifier puts in the CUDA
//! class, the CUDA C++ of its kernels (one module per instantiation of its number types), and
//! compiles them to PTX with NVRTC when it finds it. At compile time `accelerate!` embeds those
//! modules — the PTX, or else the source, which NVRTC compiles at the first call, once — and
//! generates host code: the accelerated expression in Rust, where each `par_loop` of host code
//! (the expression and the functions it calls or runs in a sequential loop) is a launch. A site
//! without the hook's kernels runs on the CPU, and the CUDA targets fail at it ([`missing`]).
//!
//! At run time ([`call::Call`]): the target decides the device ([`driver`]: the GPU through
//! cudarc; `emulator`: the CPU, for tests, only with the `cuda-emulator` feature), the captured values go to the device once per call
//! ([`arg`]), kernels run in the order host code reaches them — in loops, branches and functions
//! too — with the data staying on the device (unless the host code reads or writes tensor
//! elements), a failed runtime check on the device is reported at the site as on the CPU targets
//! ([`error`]), written tensors come back, and device memory is freed when the call ends.

pub mod arg;
pub mod call;
pub mod device;
pub mod driver;
// A C++ test device, not something a user's build should compile: behind a feature.
#[cfg(feature = "cuda-emulator")]
pub mod emulator;
pub mod error;
pub mod scalar;
pub mod upload;

pub use call::{Call, SiteKernels, launches_on_this_thread, missing};
pub use device::{KernelData, ModuleData, ParamData};
pub use upload::tensor_uploads_on_this_thread;
