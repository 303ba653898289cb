//! Compile-time errors as a user sees them: each `tests/ui/*.rs` must fail to compile with exactly
//! the diagnostics in its reviewed `.stderr` file (message and span on the user's tokens).
//! Regenerate with `TRYBUILD=overwrite cargo test -p pmexpr-ui-tests --test compile_fail`, then review the diff.

#[test]
fn compile_fail() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
