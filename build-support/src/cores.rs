//! Work spread over every core: the hook and the NVRTC check compile thousands of CUDA modules
//! (one per site and instantiation), and NVRTC compiles one program per call, thread-safely.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// `f` of each of `items`, in their order, computed on every core (each thread takes the next
/// item not taken). A panic in `f` is the caller's, once every thread has stopped.
pub fn on_every_core<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let slots: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..threads.min(items.len()) {
            scope.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(k) else { return };
                    let r = f(item);
                    *slots[k].lock().unwrap_or_else(PoisonError::into_inner) = Some(r);
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|s| s.into_inner().unwrap_or_else(PoisonError::into_inner))
        // Every slot is filled: the threads take every index, and a panic in `f` ended the
        // scope above with that panic.
        .map(|r| r.expect("every item is computed"))
        .collect()
}
