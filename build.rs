//! The pmexpr build hook for the examples, tests and benchmarks of this repository: it lets every
//! `accelerate!` see the `#[pmexpr]` functions of the package. (The compile-fail programs are in
//! the package `ui-tests`, which has no hook.)
fn main() {
    pmexpr_build::Build::new().compile();
}
