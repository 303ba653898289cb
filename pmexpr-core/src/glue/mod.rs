//! What the build hook and `accelerate!` exchange, in files under `OUT_DIR`: the CUDA manifest
//! ([`manifest`]) and what each side makes of it ([`cuda`]: the hook's record of a site's modules,
//! the macro's embedding of their files and its launches), and the Futhark glue a Futhark-class
//! site includes ([`futhark`]). The printers ([`crate::codegen`]) read neither files nor
//! manifests: they get what these modules made of them.

pub mod cuda;
pub mod futhark;
pub mod manifest;
