//! The CUDA target on an NVIDIA GPU, through cudarc.
