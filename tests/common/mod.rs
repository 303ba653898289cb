//! What several integration tests share.

use pmexpr::{Target, with_target};

/// Runs `f` on the sequential, multicore and debug targets, checks that they agree, and returns
/// the sequential (reference) result.
pub fn on_every_target<T: PartialEq + std::fmt::Debug>(f: impl Fn() -> T) -> T {
    let seq = with_target(Target::Seq, &f);
    assert_eq!(with_target(Target::Cpu, &f), seq);
    assert_eq!(with_target(Target::Debug, &f), seq);
    seq
}
