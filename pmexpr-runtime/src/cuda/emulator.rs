//! The CUDA target emulated on the CPU.
// TEMPORARY until the emu branch merges.
#[allow(missing_docs)]
pub fn emulator() -> Result<&'static dyn crate::cuda::device::Device, String> {
    Err("not yet".into())
}
