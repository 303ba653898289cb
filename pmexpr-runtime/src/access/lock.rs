//! The per-storage lock: any number of shared holders, or one exclusive holder that a plain loop
//! takes by upgrading its call's own shared hold (see the parent module for why this cannot
//! deadlock).

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::policy;

/// The state of one storage: the number of shared holders, or [`EXCLUSIVE`].
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct Lock(AtomicUsize);

const EXCLUSIVE: usize = usize::MAX;

thread_local! {
    /// Whether this thread holds a plain loop's guard (0 or 1): such a thread must never wait for
    /// a shared hold, since the exclusive hold it waits behind may be its own.
    pub(super) static PLAIN_HERE: Cell<usize> = const { Cell::new(0) };
}

impl Lock {
    /// Holds the lock shared, waiting while it is exclusive.
    pub(crate) fn share(&self) {
        let mut waited = 0_u32;
        loop {
            let s = self.0.load(Ordering::Relaxed);
            if s < EXCLUSIVE - 1 {
                if self
                    .0
                    .compare_exchange_weak(s, s + 1, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return;
                }
                continue;
            }
            if PLAIN_HERE.with(Cell::get) > 0 {
                // Only code written by hand against the hidden API gets here: generated code
                // touches no tensor from the thread that holds a plain loop's guard.
                panic!(
                    "pmexpr: a tensor was accessed from the thread that holds it for a plain \
                     loop; this would wait forever"
                );
            }
            backoff(&mut waited);
        }
    }

    /// Gives a shared hold back.
    pub(crate) fn unshare(&self) {
        self.0.fetch_sub(1, Ordering::Release);
    }

    /// Turns the caller's shared hold into the exclusive one, when it is the only holder.
    pub(super) fn upgrade(&self) -> bool {
        self.0
            .compare_exchange(1, EXCLUSIVE, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Turns the exclusive hold back into the caller's shared one.
    pub(super) fn downgrade(&self) {
        self.0.store(1, Ordering::Release)
    }
}

/// Spins briefly, then yields, then sleeps: an exclusive hold lasts one loop.
fn backoff(waited: &mut u32) {
    *waited += 1;
    if *waited < policy::LOCK_SPINS {
        std::hint::spin_loop();
    } else if *waited < policy::LOCK_SLEEP_AFTER {
        std::thread::yield_now();
    } else {
        std::thread::sleep(std::time::Duration::from_micros(policy::LOCK_SLEEP_MICROS));
    }
}

/// A shared hold for the duration of one `Tensor` method.
pub(crate) struct Shared<'a>(&'a Lock);

impl<'a> Shared<'a> {
    pub(crate) fn new(lock: &'a Lock) -> Self {
        lock.share();
        Shared(lock)
    }
}

impl Drop for Shared<'_> {
    fn drop(&mut self) {
        self.0.unshare()
    }
}

/// Something that owns a [`Lock`]: a tensor's storage, whatever its element type.
pub(crate) trait Locked: Send + Sync {
    fn lock(&self) -> &Lock;
}
