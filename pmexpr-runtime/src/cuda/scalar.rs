//! Numbers as the device stores them: the bytes of kernel parameters and of tensor elements.
//! Implemented here for every [`Element`] at once, from [`Which`] number it is.

use crate::prim::Which;
use crate::tensor::Element;

/// A number as the device stores it.
pub trait DeviceScalar: Copy {
    /// Its size in bytes (also its alignment).
    const SIZE: usize;
    /// Appends its bytes (native byte order: the device's and the host's are both little-endian).
    fn put(self, out: &mut Vec<u8>);
    /// Reads it back from `SIZE` bytes.
    fn get(bytes: &[u8]) -> Self;
}

/// Appends the bytes of `v` (native byte order: the device's and the host's are both
/// little-endian; `bool` is one byte, as in C++).
pub(crate) fn put_prim<T>(which: Which<T>, v: T, out: &mut Vec<u8>) {
    match which {
        Which::I64(w) => out.extend_from_slice(&w.to(v).to_ne_bytes()),
        Which::F64(w) => out.extend_from_slice(&w.to(v).to_ne_bytes()),
        Which::I32(w) => out.extend_from_slice(&w.to(v).to_ne_bytes()),
        Which::F32(w) => out.extend_from_slice(&w.to(v).to_ne_bytes()),
        Which::Bool(w) => out.push(u8::from(w.to(v))),
        Which::I8(w) => out.extend_from_slice(&w.to(v).to_ne_bytes()),
        Which::I16(w) => out.extend_from_slice(&w.to(v).to_ne_bytes()),
        Which::Isize(w) => out.extend_from_slice(&w.to(v).to_ne_bytes()),
        Which::U8(w) => out.extend_from_slice(&w.to(v).to_ne_bytes()),
        Which::U16(w) => out.extend_from_slice(&w.to(v).to_ne_bytes()),
        Which::U32(w) => out.extend_from_slice(&w.to(v).to_ne_bytes()),
        Which::U64(w) => out.extend_from_slice(&w.to(v).to_ne_bytes()),
        Which::Usize(w) => out.extend_from_slice(&w.to(v).to_ne_bytes()),
    }
}

/// Reads a value that [`put_prim`] wrote from the start of `bytes`.
fn get_prim<T>(which: Which<T>, bytes: &[u8]) -> T {
    fn first<const N: usize>(bytes: &[u8]) -> [u8; N] {
        let mut b = [0u8; N];
        b.copy_from_slice(&bytes[..N]);
        b
    }
    match which {
        Which::I64(w) => w.from(i64::from_ne_bytes(first(bytes))),
        Which::F64(w) => w.from(f64::from_ne_bytes(first(bytes))),
        Which::I32(w) => w.from(i32::from_ne_bytes(first(bytes))),
        Which::F32(w) => w.from(f32::from_ne_bytes(first(bytes))),
        Which::Bool(w) => w.from(bytes[0] != 0),
        Which::I8(w) => w.from(i8::from_ne_bytes(first(bytes))),
        Which::I16(w) => w.from(i16::from_ne_bytes(first(bytes))),
        Which::Isize(w) => w.from(isize::from_ne_bytes(first(bytes))),
        Which::U8(w) => w.from(u8::from_ne_bytes(first(bytes))),
        Which::U16(w) => w.from(u16::from_ne_bytes(first(bytes))),
        Which::U32(w) => w.from(u32::from_ne_bytes(first(bytes))),
        Which::U64(w) => w.from(u64::from_ne_bytes(first(bytes))),
        Which::Usize(w) => w.from(usize::from_ne_bytes(first(bytes))),
    }
}

impl<T: Element> DeviceScalar for T {
    const SIZE: usize = std::mem::size_of::<T>();
    #[inline]
    fn put(self, out: &mut Vec<u8>) {
        put_prim(T::WHICH, self, out)
    }
    #[inline]
    fn get(bytes: &[u8]) -> Self {
        get_prim(T::WHICH, bytes)
    }
}

// Device pointers are `u64`s, an `Element`: the impl above lays them out.
