//! The thread pool plain loops run on, apart from rayon's global one.

use std::sync::OnceLock;

/// The pool plain loops run on: its workers run nothing else, so none of them can be waiting for
/// a lock that a plain loop holds (see the parent module). `None` when it cannot be built.
pub(super) fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(rayon::current_num_threads())
            .thread_name(|i| format!("pmexpr-plain-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}
