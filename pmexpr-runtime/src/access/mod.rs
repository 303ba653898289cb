//! Who may touch a tensor's memory, and how: the per-storage lock that lets a `par_loop` write
//! with plain (vectorizable) stores while staying sound against every other user of the tensor.
//!
//! Tensor elements are relaxed atomics (see [`crate::tensor`]), so any number of threads may read
//! and write them at once. Plain loads and stores are faster — LLVM vectorizes no loop with an
//! atomic access — but a plain store racing with any other access is undefined behaviour. So each
//! storage (a tensor and all its views) has a [`Lock`]:
//!
//! - **Shared** holders access elements atomically: every [`crate::Tensor`] method that reads or
//!   writes elements holds the lock shared for that access, and an `accelerate!` call holds it
//!   shared for every tensor it captures, from its start to its end (its [`CallScope`]).
//! - **Exclusive**: a [`Plain`] guard upgrades the calling call's own shared hold when that hold
//!   is the only one (never waiting: when another holder exists, the loop takes the atomic path
//!   instead). While it is exclusive, other users wait; the guard hands out `&mut [T]` / `&[T]`
//!   slices of disjoint element ranges, and [`plain_loop`] splits them among threads.
//!
//! Why this cannot deadlock: an exclusive hold is taken only by the thread that runs a call's top
//! level, only when that thread is not a rayon worker (so nothing else of the call runs at the same
//! time: every parallel construct blocks it until done), and the loop runs on that thread and on
//! a pool of its own whose workers run nothing but such loops (see `caller_runs`), which touch
//! nothing but their slices. So the holder never waits for anyone who could be waiting for it.
//!
//! The parts: `lock` (the [`Lock`] and its shared holds), `scope` (the storages each running
//! call holds, per thread: [`CallScope`]), `plain` (the [`Plain`] guard and [`plain_loop`]) and
//! `pool` (the plain loops' own thread pool).

mod lock;
mod plain;
mod pool;
mod scope;

#[doc(hidden)]
pub use lock::Lock;
pub(crate) use lock::{Locked, Shared};
#[doc(hidden)]
pub use plain::{Plain, plain_loop, plain_loops};
#[doc(hidden)]
pub use scope::CallScope;
pub(crate) use scope::register;

pub use crate::raw::caller_runs::Split;
