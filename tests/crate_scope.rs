//! The `#[pmexpr]` functions a site sees are those of its own crate: `tests/pmexpr_fns.rs` (another
//! test crate of this package) defines `#[pmexpr] fn scale`, which a captured `scale` here is not.

use pmexpr::{Target, accelerate, with_target};

#[test]
fn another_test_crates_functions_are_not_visible() {
    let scale = 3_i64;
    let s = vec![1_i64, 2, 3];
    let run = || accelerate!(map(|x| x * scale, s));
    for t in [Target::Seq, Target::Cpu, Target::Debug] {
        assert_eq!(with_target(t, run), vec![3, 6, 9], "{t:?}");
    }
}
