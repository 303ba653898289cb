//! The numbers and `bool` with the relaxed atomic of their width, and a slice of them viewed as
//! those atomics, so that parallel tasks may store into one buffer (`scatter` on `cpu`).

use std::sync::atomic::{
    AtomicBool, AtomicI8, AtomicI16, AtomicI32, AtomicI64, AtomicIsize, AtomicU8, AtomicU16,
    AtomicU32, AtomicU64, AtomicUsize, Ordering,
};

/// A number or `bool` and the atomic that holds its bits.
///
/// # Safety
/// `Atomic` has the size and the bit validity of `Self` (every `Self` is a valid `Atomic` and the
/// bits an `Atomic` is given are a `Self`'s), and an alignment no stricter than `Self`'s: then a
/// `&mut [Self]` may be viewed as a `&[Self::Atomic]`. Only this module implements it.
pub(crate) unsafe trait AtomicBits: Copy {
    /// The atomic type.
    type Atomic: Sync;
    /// Stores `v` into `a` (relaxed).
    fn store(a: &Self::Atomic, v: Self);
}

macro_rules! atomic_bits {
    ($($t:ty: $a:ty, |$v:ident| $bits:expr;)*) => {$(
        const _: () = assert!(
            size_of::<$t>() == size_of::<$a>() && align_of::<$a>() <= align_of::<$t>(),
            "the atomic of a number has its size and alignment"
        );
        // SAFETY: std documents each atomic integer (and `AtomicBool`) as having the size and bit
        // validity of its integer (`bool`); a float is stored as the integer of its bits, and
        // every bit pattern is a valid float; size and alignment are asserted above.
        unsafe impl AtomicBits for $t {
            type Atomic = $a;
            #[inline(always)]
            fn store(a: &$a, $v: $t) {
                a.store($bits, Ordering::Relaxed)
            }
        }
    )*};
}
atomic_bits! {
    i64: AtomicI64, |v| v;
    f64: AtomicU64, |v| v.to_bits();
    i32: AtomicI32, |v| v;
    f32: AtomicU32, |v| v.to_bits();
    bool: AtomicBool, |v| v;
    i8: AtomicI8, |v| v;
    i16: AtomicI16, |v| v;
    isize: AtomicIsize, |v| v;
    u8: AtomicU8, |v| v;
    u16: AtomicU16, |v| v;
    u32: AtomicU32, |v| v;
    u64: AtomicU64, |v| v;
    usize: AtomicUsize, |v| v;
}

/// The elements of `s` as atomics, for as long as `s` is borrowed.
#[inline(always)]
pub(crate) fn atomics<C: AtomicBits>(s: &mut [C]) -> &[C::Atomic] {
    // SAFETY: `AtomicBits`' contract (size, alignment and bit validity), and the exclusive borrow
    // of `s` lasts as long as the returned slice, so nothing reads or writes the elements but
    // through the atomics meanwhile.
    unsafe { &*(s as *mut [C] as *const [C::Atomic]) }
}

/// `v` as the type `same` proves `T` to be, without a call through `Same`'s function pointers
/// (which a loop over the pool's tasks would make per element: the compiler does not see
/// through them there).
#[inline(always)]
pub(crate) fn same_value<T, C>(same: &crate::prim::Same<T, C>, v: T) -> C {
    let _ = same;
    // SAFETY: a `Same<T, C>` exists only where `T` and `C` are one type (its only constructor is
    // `Same::REFL`), so this moves a `C` as itself (the original is not dropped).
    unsafe { std::mem::transmute_copy::<T, C>(&std::mem::ManuallyDrop::new(v)) }
}
