//! The pmexpr compiler.
pub mod ast;
pub mod error;
pub mod infer;
pub mod intrinsics;
pub mod parse;
pub mod resolve;
pub mod types;
