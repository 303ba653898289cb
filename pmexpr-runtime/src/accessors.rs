//! `tensor_get`, `tensor_set`, `tensor_linear_get` and `tensor_linear_set` as generated code
//! calls them: the access itself (checked as [`TensorRef`]'s methods check it), and in debug
//! mode first the element recorded for the running `par_loop`s' write-conflict check
//! ([`crate::races`]). `checks` is the backend's constant, so the other backends carry no trace
//! of the record.

use crate::races::track;
use crate::site::Site;
use crate::tensor::{Element, TensorRef};

/// `tensor_get`; with `checks` (debug mode), recorded for the running `par_loop`s.
#[doc(hidden)]
#[inline(always)]
pub fn tensor_get<T: Element>(
    checks: bool,
    site: &Site,
    name: &str,
    t: TensorRef<'_, T>,
    index: &[i64],
) -> T {
    if checks {
        track(site, name, &t, index, false, false);
    }
    t.get(site, index)
}

/// `tensor_set`; with `checks` (debug mode), recorded for the running `par_loop`s.
#[doc(hidden)]
#[inline(always)]
pub fn tensor_set<T: Element>(
    checks: bool,
    site: &Site,
    name: &str,
    t: TensorRef<'_, T>,
    index: &[i64],
    value: T,
) {
    if checks {
        track(site, name, &t, index, false, true);
    }
    t.set(site, index, value)
}

/// `tensor_linear_get`; with `checks` (debug mode), recorded for the running `par_loop`s.
#[doc(hidden)]
#[inline(always)]
pub fn tensor_linear_get<T: Element>(
    checks: bool,
    site: &Site,
    name: &str,
    t: TensorRef<'_, T>,
    i: i64,
) -> T {
    if checks {
        track(site, name, &t, &[i], true, false);
    }
    t.linear_get(site, i)
}

/// `tensor_linear_set`; with `checks` (debug mode), recorded for the running `par_loop`s.
#[doc(hidden)]
#[inline(always)]
pub fn tensor_linear_set<T: Element>(
    checks: bool,
    site: &Site,
    name: &str,
    t: TensorRef<'_, T>,
    i: i64,
    value: T,
) {
    if checks {
        track(site, name, &t, &[i], true, true);
    }
    t.linear_set(site, i, value)
}
