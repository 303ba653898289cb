//! Call scopes: the storages each running `accelerate!` call holds shared, per thread, and which
//! of them a plain loop of the innermost call holds exclusive.

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::sync::Arc;

use super::lock::{Lock, Locked};

/// A storage an `accelerate!` call holds shared, and whether a plain loop's guard has it
/// exclusive.
struct Entry {
    store: Arc<dyn Locked>,
    exclusive: Cell<bool>,
}

thread_local! {
    /// The calls running on this thread, innermost last; each with the storages it holds.
    static FRAMES: RefCell<Vec<Vec<Entry>>> = const { RefCell::new(Vec::new()) };
}

/// The extent of one `accelerate!` call: every tensor it captures ([`crate::tensor::TensorRef::new`])
/// is held shared until the scope ends, so that no plain loop elsewhere writes it meanwhile.
#[doc(hidden)]
pub struct CallScope {
    depth: usize,
    _not_send: PhantomData<*const ()>,
}

impl CallScope {
    /// Begins a call on this thread.
    pub fn enter() -> CallScope {
        let depth = FRAMES.with(|f| {
            let mut f = f.borrow_mut();
            f.push(Vec::new());
            f.len()
        });
        CallScope {
            depth,
            _not_send: PhantomData,
        }
    }
}

impl Drop for CallScope {
    fn drop(&mut self) {
        let frames = FRAMES.with(|f| {
            let mut f = f.borrow_mut();
            let at = self.depth.min(f.len()).saturating_sub(1);
            f.split_off(at)
        });
        for entry in frames.into_iter().flatten() {
            if entry.exclusive.get() {
                // A `Plain` guard outlives its call: only hand-written use of the hidden API can
                // do this, and releasing the storage now would let others in while its slices
                // are live.
                std::process::abort();
            }
            entry.store.lock().unshare();
        }
    }
}

/// Holds `store` shared for the innermost call on this thread (once per call), or for ever when
/// no call is running (a view made by hand: its storage then never runs plain loops).
pub(crate) fn register(store: &Arc<impl Locked + 'static>) {
    let lock = store.lock();
    let held = FRAMES.with(|f| {
        let f = f.borrow();
        let top = f.last()?;
        Some(
            match top.iter().find(|e| std::ptr::eq(e.store.lock(), lock)) {
                Some(e) if e.exclusive.get() => {
                    panic!(
                        "pmexpr: a tensor was viewed while a plain loop of the same call holds it"
                    )
                }
                Some(_) => true,
                None => false,
            },
        )
    });
    match held {
        Some(true) => {}
        Some(false) => {
            lock.share();
            let store: Arc<dyn Locked> = store.clone();
            FRAMES.with(|f| {
                if let Some(top) = f.borrow_mut().last_mut() {
                    top.push(Entry {
                        store,
                        exclusive: Cell::new(false),
                    })
                }
            });
        }
        None => lock.share(),
    }
}

/// How many calls are running on this thread: the innermost call's depth.
pub(super) fn depth() -> usize {
    FRAMES.with(|f| f.borrow().len())
}

/// Makes `lock` exclusive for the call at `depth`: it must be the innermost call, hold `lock`,
/// and be its only holder.
pub(super) fn hold_exclusive(depth: usize, lock: &Lock) -> bool {
    FRAMES.with(|f| {
        let f = f.borrow();
        if f.len() != depth {
            return false;
        }
        let Some(e) = f[depth - 1]
            .iter()
            .find(|e| std::ptr::eq(e.store.lock(), lock))
        else {
            return false;
        };
        if e.exclusive.get() {
            return true;
        }
        let upgraded = lock.upgrade();
        e.exclusive.set(upgraded);
        upgraded
    })
}

/// Turns every exclusive hold of the call at `depth` back into its shared one.
pub(super) fn release_exclusive(depth: usize) {
    FRAMES.with(|f| {
        for e in f.borrow().get(depth - 1).into_iter().flatten() {
            if e.exclusive.replace(false) {
                e.store.lock().downgrade();
            }
        }
    });
}
