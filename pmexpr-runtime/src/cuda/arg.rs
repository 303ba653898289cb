//! Marshaling to the device: every value generated host code passes to a kernel, laid out as the
//! generated CUDA C++ declares it (see `pmexpr_core::codegen::cuda`, `CLayout`).
//!
//! | Rust (generated code) | C++ | bytes |
//! |---|---|---|
//! | `i64`, `f64`, `i32`, `f32`, `bool`, `()` | `long long`, `double`, `int`, `float`, `bool`, `pm_unit` | 8, 8, 4, 4, 1, 1 |
//! | `Seq<T>` | `pm_seq<T>` | a device pointer to the elements (laid out the same way), the length |
//! | `TensorRef<T>` | `pm_tensor<T>` | a device pointer to the view's first element, `dims[MAX_RANK]`, rank, size |
//! | tuples (records, fields in label order) | structs | C struct layout |
//!
//! Sequences are uploaded once per call (they are immutable). A tensor's whole storage is uploaded
//! once per call and every view of it points into that one buffer, so `tensor_sub`/`tensor_slice`
//! views keep sharing memory on the device; [`super::call::Call`] copies it back.
//!
//! [`DeviceArg`] is implemented here for every [`Scalar`] at once, from which primitive type it
//! is ([`crate::prim::Which`]), as [`DeviceScalar`] is for every [`Element`]: the number traits
//! know nothing of the CUDA target.

use crate::cuda::device::DeviceResult;
use crate::cuda::scalar::{DeviceScalar, put_prim};
use crate::cuda::upload::Uploads;
use crate::numeric::Scalar;
use crate::seq::Seq;
use crate::tensor::{Element, TensorRef};

/// Appends zero bytes until `out.len()` is a multiple of `align`.
pub(crate) fn pad(out: &mut Vec<u8>, align: usize) {
    let to = out.len().next_multiple_of(align);
    out.resize(to, 0);
}

/// A value that can be a kernel parameter (or part of one): its C layout, and how to write it.
///
/// `'a` is the lifetime of the call's captured data: a tensor keeps a reference to its storage
/// until the call copies it back.
pub trait DeviceArg<'a> {
    /// Size and alignment of the C layout, for tensors of at most `max_rank` dimensions.
    fn layout(max_rank: usize) -> (usize, usize)
    where
        Self: Sized;

    /// Appends the C layout of the value to `out` (the caller has aligned `out.len()`),
    /// uploading what it points to into the call's `uploads`.
    fn write(&self, uploads: &mut Uploads<'a>, out: &mut Vec<u8>) -> DeviceResult<()>;
}

impl<'a, T: Scalar> DeviceArg<'a> for T {
    fn layout(_: usize) -> (usize, usize) {
        // `bool` is one byte in C++ too; the numbers are aligned to their size.
        let size = std::mem::size_of::<T>();
        (size, size)
    }
    #[inline]
    fn write(&self, _: &mut Uploads<'a>, out: &mut Vec<u8>) -> DeviceResult<()> {
        put_prim(T::WHICH, *self, out);
        Ok(())
    }
}

impl<'a> DeviceArg<'a> for () {
    fn layout(_: usize) -> (usize, usize) {
        // `pm_unit` is an empty struct: one byte in C++.
        (1, 1)
    }
    fn write(&self, _: &mut Uploads<'a>, out: &mut Vec<u8>) -> DeviceResult<()> {
        out.push(0);
        Ok(())
    }
}

impl<'a, T: DeviceArg<'a>> DeviceArg<'a> for Seq<'_, T> {
    fn layout(_: usize) -> (usize, usize) {
        (16, 8)
    }
    fn write(&self, call: &mut Uploads<'a>, out: &mut Vec<u8>) -> DeviceResult<()> {
        let elems = self.as_slice();
        let ptr = if elems.is_empty() {
            0
        } else {
            let key = (
                elems.as_ptr() as usize,
                elems.len(),
                std::mem::size_of::<T>(),
            );
            match call.cached_seq(key) {
                Some(p) => p,
                None => {
                    let (size, align) = T::layout(call.max_rank());
                    let mut bytes = Vec::with_capacity(size * elems.len());
                    for e in elems {
                        pad(&mut bytes, align);
                        e.write(call, &mut bytes)?;
                        pad(&mut bytes, align);
                    }
                    let p = call.upload(&bytes)?;
                    call.cache_seq(key, p);
                    p
                }
            }
        };
        ptr.put(out);
        (elems.len() as i64).put(out);
        Ok(())
    }
}

impl<'a, 'p: 'a, T: Element> DeviceArg<'a> for TensorRef<'p, T> {
    fn layout(max_rank: usize) -> (usize, usize) {
        (8 * (max_rank + 3), 8)
    }
    fn write(&self, call: &mut Uploads<'a>, out: &mut Vec<u8>) -> DeviceResult<()> {
        let (root, offset) = self.storage();
        let base = call.tensor::<T>(root)?;
        (base + (offset * T::SIZE) as u64).put(out);
        let shape = self.shape();
        for k in 0..call.max_rank() {
            (shape.get(k).copied().unwrap_or(0) as i64).put(out);
        }
        (shape.len() as i64).put(out);
        (shape.iter().product::<usize>() as i64).put(out);
        Ok(())
    }
}

macro_rules! tuples {
    ($(($($t:ident $i:tt $_c:ident $_r:ident),+))*) => {$(
        impl<'a, $($t: DeviceArg<'a>),+> DeviceArg<'a> for ($($t,)+) {
            fn layout(max_rank: usize) -> (usize, usize) {
                let (mut size, mut align) = (0_usize, 1_usize);
                $(
                    let (s, a) = $t::layout(max_rank);
                    size = size.next_multiple_of(a) + s;
                    align = align.max(a);
                )+
                (size.next_multiple_of(align), align)
            }
            fn write(&self, call: &mut Uploads<'a>, out: &mut Vec<u8>) -> DeviceResult<()> {
                let start = out.len();
                let (_, align) = Self::layout(call.max_rank());
                $(
                    let (_, a) = $t::layout(call.max_rank());
                    pad(out, a);
                    self.$i.write(call, out)?;
                )+
                pad(out, align);
                debug_assert_eq!((out.len() - start), Self::layout(call.max_rank()).0);
                Ok(())
            }
        }
    )*};
}
for_tuples!(tuples);
