//! The CUDA target emulated on the CPU.
