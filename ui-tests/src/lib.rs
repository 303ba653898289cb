//! The compile-fail tests of pmexpr: each `tests/ui/*.rs` is a program that must fail to compile
//! with exactly the diagnostics in its reviewed `.stderr` file (`tests/compile_fail.rs`). The
//! library is empty; it exists so that the package has a target besides its tests.
