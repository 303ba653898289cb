//! The pmexpr build hook for the examples, tests and benchmarks of this repository: it lets every
//! `accelerate!` see the `#[pmexpr]` functions of the package. The compile-fail fixtures under
//! `tests/ui` are separate programs, deliberately broken, so they are left out.
fn main() {
    pmexpr_build::Build::new().exclude("tests/ui").compile();
}
