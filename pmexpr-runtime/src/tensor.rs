//! Tensors: mutable, shaped, row-major arrays of `i64` or `f64` (the paper's `Tensor[Int]` and
//! `Tensor[Float]`), and beyond the paper of every Rust number type and of `bool`.
//!
//! A [`Tensor`] is what a Rust program creates and captures. Inside an accelerated expression it is
//! seen through a [`TensorRef`], a `Copy` view that borrows the tensor's storage for the duration
//! of the call; `tensor_sub` and `tensor_slice` make further views of the same memory, so writes
//! through any of them are visible in the tensor afterwards.
//!
//! Elements are stored in relaxed atomics. On x86-64 and AArch64 a relaxed load or store is an
//! ordinary load or store, so this costs little, and it keeps `par_loop` iterations that write the
//! same element (which the paper forbids, but a Rust program must not turn into undefined
//! behaviour) memory-safe. It does stop LLVM from vectorizing, so a `par_loop` whose iterations
//! provably touch their own elements runs over plain slices instead, under the storage's lock
//! (see [`crate::access`]): every method here that reads or writes elements holds that lock
//! shared, and waits while such a loop runs.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{
    AtomicBool, AtomicI8, AtomicI16, AtomicI32, AtomicI64, AtomicIsize, AtomicU8, AtomicU16,
    AtomicU32, AtomicU64, AtomicUsize, Ordering,
};

use pmexpr_abi::Number;

use crate::access::{self, Lock, Locked, Plain, Shared};
use crate::prim::{Same, Which};
use crate::seq::Seq;
use crate::site::Site;

include!(concat!(env!("OUT_DIR"), "/max_rank.rs"));

mod sealed {
    pub trait Sealed {}
    macro_rules! sealed {
        ($($t:ty),*) => {$(impl Sealed for $t {})*};
    }
    sealed!(
        i64, f64, i32, f32, bool, i8, i16, isize, u8, u16, u32, u64, usize
    );
}

/// An element type of a tensor: a number (`i8` … `u64`, `isize`, `usize`, `f32`, `f64`) or
/// `bool` (one byte per element).
///
/// The trait is sealed: every `Cell` has the size, alignment and valid bit patterns of its
/// element (an atomic of the same width), and `new_cell`/`load` move the bits unchanged. So a
/// `Vec<T>` is a `Vec<T::Cell>` without a copy ([`Tensor::from_vec`], [`Tensor::into_vec`]).
pub trait Element:
    Copy + Send + Sync + PartialEq + Default + fmt::Debug + 'static + sealed::Sealed
{
    /// How one element is stored.
    #[doc(hidden)]
    type Cell: Send + Sync;
    /// Which number it is (its Rust name is `NUMBER.rust_name()`).
    const NUMBER: Number;
    /// Which primitive type it is: how each backend implements its own traits for every element
    /// type.
    #[doc(hidden)]
    const WHICH: Which<Self>;
    #[doc(hidden)]
    fn new_cell(v: Self) -> Self::Cell;
    #[doc(hidden)]
    fn load(cell: &Self::Cell) -> Self;
    #[doc(hidden)]
    fn store(cell: &Self::Cell, v: Self);
}

/// Integers and `bool` are stored in the atomic of their own type; a float as the bits of its
/// width (there are no atomic floats).
macro_rules! elements {
    ($($t:ident $variant:ident: $cell:ident, |$v:ident| $to:expr, |$b:ident| $from:expr;)*) => {$(
        impl Element for $t {
            type Cell = $cell;
            const NUMBER: Number = Number::$variant;
            const WHICH: Which<Self> = Which::$variant(Same::REFL);
            #[inline]
            fn new_cell($v: Self) -> $cell {
                $cell::new($to)
            }
            #[inline(always)]
            fn load(cell: &$cell) -> $t {
                let $b = cell.load(Ordering::Relaxed);
                $from
            }
            #[inline(always)]
            fn store(cell: &$cell, $v: $t) {
                cell.store($to, Ordering::Relaxed)
            }
        }
    )*};
}
elements! {
    i64 I64: AtomicI64, |v| v, |b| b;
    f64 F64: AtomicU64, |v| v.to_bits(), |b| f64::from_bits(b);
    i32 I32: AtomicI32, |v| v, |b| b;
    f32 F32: AtomicU32, |v| v.to_bits(), |b| f32::from_bits(b);
    bool Bool: AtomicBool, |v| v, |b| b;
    i8 I8: AtomicI8, |v| v, |b| b;
    i16 I16: AtomicI16, |v| v, |b| b;
    isize Isize: AtomicIsize, |v| v, |b| b;
    u8 U8: AtomicU8, |v| v, |b| b;
    u16 U16: AtomicU16, |v| v, |b| b;
    u32 U32: AtomicU32, |v| v, |b| b;
    u64 U64: AtomicU64, |v| v, |b| b;
    usize Usize: AtomicUsize, |v| v, |b| b;
}

/// A tensor's elements and the lock that says who may access them (see [`access`]); views share
/// it. Derefs to the cells.
pub(crate) struct Store<T: Element> {
    cells: Vec<T::Cell>,
    lock: Lock,
}

/// `data` as cells, in the same allocation.
// Not yet behind `raw`: a reinterpretation that this module's invariants make sound.
#[allow(unsafe_code)]
fn cells_of<T: Element>(data: Vec<T>) -> Vec<T::Cell> {
    const {
        assert!(size_of::<T>() == size_of::<T::Cell>());
        assert!(align_of::<T>() == align_of::<T::Cell>());
    }
    let mut data = std::mem::ManuallyDrop::new(data);
    let (ptr, len, cap) = (data.as_mut_ptr(), data.len(), data.capacity());
    // SAFETY: `Element` is sealed and each `Cell` has its element's size, alignment and valid
    // bit patterns (checked above for the first two), so the allocation's layout is the same
    // and every element is a valid cell; `data` is forgotten, so the allocation has one owner.
    unsafe { Vec::from_raw_parts(ptr.cast::<T::Cell>(), len, cap) }
}

/// `cells` as elements, in the same allocation: the inverse of [`cells_of`].
// Not yet behind `raw`: a reinterpretation that this module's invariants make sound.
#[allow(unsafe_code)]
fn elements_of<T: Element>(cells: Vec<T::Cell>) -> Vec<T> {
    const {
        assert!(size_of::<T>() == size_of::<T::Cell>());
        assert!(align_of::<T>() == align_of::<T::Cell>());
    }
    let mut cells = std::mem::ManuallyDrop::new(cells);
    let (ptr, len, cap) = (cells.as_mut_ptr(), cells.len(), cells.capacity());
    // SAFETY: as in `cells_of`; a cell only ever holds bits of a valid element (`new_cell` and
    // `store` write an element's bits), and the vector is owned, so no access is in flight.
    unsafe { Vec::from_raw_parts(ptr.cast::<T>(), len, cap) }
}

impl<T: Element> std::ops::Deref for Store<T> {
    type Target = Vec<T::Cell>;
    fn deref(&self) -> &Vec<T::Cell> {
        &self.cells
    }
}

impl<T: Element> Locked for Store<T> {
    fn lock(&self) -> &Lock {
        &self.lock
    }
}

/// Why a tensor could not be built or accessed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TensorError {
    /// The number of elements does not match the product of the shape.
    ShapeMismatch {
        /// The number of elements given.
        len: usize,
        /// The shape asked for.
        shape: Vec<usize>,
    },
    /// An index has the wrong number of dimensions or lies outside the shape.
    OutOfBounds {
        /// The index used.
        index: Vec<usize>,
        /// The shape of the tensor.
        shape: Vec<usize>,
    },
}

impl fmt::Display for TensorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TensorError::ShapeMismatch { len, shape } => write!(
                f,
                "{len} elements do not fill a tensor of shape {shape:?} ({} elements)",
                shape.iter().product::<usize>()
            ),
            TensorError::OutOfBounds { index, shape } => {
                write!(f, "index {index:?} is outside a tensor of shape {shape:?}")
            }
        }
    }
}

impl std::error::Error for TensorError {}

/// A mutable, shaped, row-major array of numbers (any of Rust's: `i8` … `u64`, `isize`,
/// `usize`, `f32`, `f64`) or of `bool`s (one byte each).
///
/// Capture it in `accelerate!` and write it with `tensor_set`; the writes are visible afterwards.
/// Like a PMExpr tensor it is a *handle*: `accelerate!` reads and writes it through a shared
/// borrow, and [`Tensor::sub`] and [`Tensor::slice`] return views that share its memory.
/// [`Clone`] makes an independent copy.
///
/// Another thread may read and write a tensor while an `accelerate!` call uses it: every
/// element it sees is whole. While the call runs a loop over the tensor with plain stores
/// ([`crate::access`]; ARCHITECTURE.md, "What the CPU code does"), the methods that touch
/// elements (`get`, `set`, `to_vec`, `clone`) wait for that loop to end.
///
/// ```
/// use pmexpr_runtime::Tensor;
/// let t = Tensor::<f64>::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
/// assert_eq!(t.shape(), &[2, 3]);
/// assert_eq!(t.get(&[1, 2]), Some(6.0));
/// t.set(&[0, 0], 9.0).unwrap();
/// assert_eq!(t.to_vec()[0], 9.0);
/// ```
pub struct Tensor<T: Element> {
    storage: Arc<Store<T>>,
    offset: usize,
    shape: Vec<usize>,
}

impl<T: Element> Tensor<T> {
    /// A tensor of the given shape holding `data` in row-major order, in `data`'s own memory
    /// (no copy).
    ///
    /// # Panics
    /// If `data.len()` is not the product of `shape`; see [`Tensor::try_from_vec`].
    #[track_caller]
    pub fn from_vec(data: Vec<T>, shape: &[usize]) -> Self {
        match Self::try_from_vec(data, shape) {
            Ok(t) => t,
            Err(e) => panic!("Tensor::from_vec: {e}"),
        }
    }

    /// A tensor of the given shape holding `data` in row-major order, or an error when the
    /// number of elements does not match the shape.
    pub fn try_from_vec(data: Vec<T>, shape: &[usize]) -> Result<Self, TensorError> {
        if shape.iter().try_fold(1_usize, |a, &d| a.checked_mul(d)) != Some(data.len()) {
            return Err(TensorError::ShapeMismatch {
                len: data.len(),
                shape: shape.to_vec(),
            });
        }
        let cells = cells_of(data);
        Ok(Tensor {
            storage: Arc::new(Store {
                cells,
                lock: Lock::default(),
            }),
            offset: 0,
            shape: shape.to_vec(),
        })
    }

    /// A tensor of the given shape with every element `T::default()` (zero).
    pub fn zeros(shape: &[usize]) -> Self {
        Self::from_vec(vec![T::default(); shape.iter().product()], shape)
    }

    /// A tensor of the given shape with elements computed from their index.
    pub fn from_fn(shape: &[usize], mut f: impl FnMut(&[usize]) -> T) -> Self {
        let size: usize = shape.iter().product();
        let mut index = vec![0; shape.len()];
        let mut data = Vec::with_capacity(size);
        for _ in 0..size {
            data.push(f(&index));
            for k in (0..shape.len()).rev() {
                index[k] += 1;
                if index[k] < shape[k] {
                    break;
                }
                index[k] = 0;
            }
        }
        Self::from_vec(data, shape)
    }

    /// The shape (one length per dimension).
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The number of dimensions.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn cells(&self) -> &[T::Cell] {
        &self.storage[self.offset..self.offset + self.len()]
    }

    fn linear(&self, index: &[usize]) -> Result<usize, TensorError> {
        let oob = || TensorError::OutOfBounds {
            index: index.to_vec(),
            shape: self.shape.clone(),
        };
        if index.len() != self.shape.len() {
            return Err(oob());
        }
        index.iter().zip(&self.shape).try_fold(
            0,
            |acc, (&i, &d)| {
                if i < d { Ok(acc * d + i) } else { Err(oob()) }
            },
        )
    }

    /// The element at `index`, or `None` when the index is outside the shape.
    pub fn get(&self, index: &[usize]) -> Option<T> {
        let i = self.linear(index).ok()?;
        let _held = Shared::new(&self.storage.lock);
        Some(T::load(&self.cells()[i]))
    }

    /// Writes the element at `index`. Tensors are shared handles, so this takes `&self`.
    pub fn set(&self, index: &[usize], value: T) -> Result<(), TensorError> {
        let i = self.linear(index)?;
        let _held = Shared::new(&self.storage.lock);
        T::store(&self.cells()[i], value);
        Ok(())
    }

    /// The elements in row-major order.
    pub fn to_vec(&self) -> Vec<T> {
        let _held = Shared::new(&self.storage.lock);
        self.cells().iter().map(T::load).collect()
    }

    /// The elements in row-major order, without a copy when this tensor owns its storage alone
    /// (no clone of the handle, no view made by [`Tensor::sub`] or [`Tensor::slice`] alive, and
    /// it is not itself such a view); otherwise a copy, as [`Tensor::to_vec`].
    ///
    /// ```
    /// use pmexpr_runtime::Tensor;
    /// let v = vec![1_i64, 2, 3, 4];
    /// let at = v.as_ptr();
    /// let t = Tensor::from_vec(v, &[2, 2]);
    /// let back = t.into_vec();
    /// assert_eq!(back, [1, 2, 3, 4]);
    /// assert_eq!(back.as_ptr(), at); // the same memory, never copied
    /// ```
    pub fn into_vec(self) -> Vec<T> {
        let whole = self.offset == 0 && self.len() == self.storage.cells.len();
        if whole {
            match Arc::try_unwrap(self.storage) {
                // No other handle: nobody can read or write the cells any more.
                Ok(store) => return elements_of(store.cells),
                Err(storage) => {
                    let _held = Shared::new(&storage.lock);
                    return storage.iter().map(T::load).collect();
                }
            }
        }
        self.to_vec()
    }

    /// The view of `len` rows starting at row `offset` of the first dimension; it shares memory
    /// with this tensor. `None` when the rows lie outside the tensor or the tensor has rank 0.
    pub fn sub(&self, offset: usize, len: usize) -> Option<Tensor<T>> {
        let rows = *self.shape.first()?;
        if offset.checked_add(len)? > rows {
            return None;
        }
        let stride: usize = self.shape[1..].iter().product();
        let mut shape = self.shape.clone();
        shape[0] = len;
        Some(Tensor {
            storage: Arc::clone(&self.storage),
            offset: self.offset + offset * stride,
            shape,
        })
    }

    /// The view with the leading indices fixed to `index` (rank decreases by `index.len()`); it
    /// shares memory with this tensor. `None` when the index lies outside the tensor.
    pub fn slice(&self, index: &[usize]) -> Option<Tensor<T>> {
        if index.len() > self.shape.len() {
            return None;
        }
        let mut offset = 0;
        for (&i, &d) in index.iter().zip(&self.shape) {
            if i >= d {
                return None;
            }
            offset = offset * d + i;
        }
        let rest = &self.shape[index.len()..];
        let stride: usize = rest.iter().product();
        Some(Tensor {
            storage: Arc::clone(&self.storage),
            offset: self.offset + offset * stride,
            shape: rest.to_vec(),
        })
    }
}

impl<T: Element> Clone for Tensor<T> {
    /// An independent copy of the elements (not a view).
    fn clone(&self) -> Self {
        Tensor::from_vec(self.to_vec(), &self.shape)
    }
}

impl<T: Element> PartialEq for Tensor<T> {
    fn eq(&self, other: &Self) -> bool {
        self.shape == other.shape && self.to_vec() == other.to_vec()
    }
}

impl<T: Element> fmt::Debug for Tensor<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tensor")
            .field("shape", &self.shape)
            .field("data", &self.to_vec())
            .finish()
    }
}

/// A tensor as generated code sees it: a `Copy` view of a captured [`Tensor`]'s memory, valid for
/// one `accelerate!` call. Every access is checked against the shape (each access, or once per
/// loop through [`TensorRef::window`] / [`TensorRef::strided`]), and a failure names the site.
pub struct TensorRef<'a, T: Element> {
    root: &'a Arc<Store<T>>,
    data: &'a [T::Cell],
    shape: [usize; MAX_RANK],
    rank: usize,
}

impl<T: Element> Clone for TensorRef<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Element> Copy for TensorRef<'_, T> {}

impl<T: Element> fmt::Debug for TensorRef<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let data: Vec<T> = self.data.iter().map(T::load).collect();
        f.debug_struct("TensorRef")
            .field("shape", &self.shape())
            .field("data", &data)
            .finish()
    }
}

impl<'a, T: Element> TensorRef<'a, T> {
    /// Views a tensor for one call; fails when its rank exceeds [`MAX_RANK`].
    pub fn new(t: &'a Tensor<T>, site: &Site, name: &str) -> Self {
        if t.rank() > MAX_RANK {
            site.fail(format_args!(
                "Found tensor with rank exceeding maximum: `{name}` has rank {}, the maximum is \
                 {MAX_RANK} (set PMEXPR_TENSOR_MAX_RANK when building to change it)",
                t.rank()
            ));
        }
        let mut shape = [0; MAX_RANK];
        shape[..t.rank()].copy_from_slice(&t.shape);
        // Held shared until the call ends, so that no plain loop elsewhere writes it meanwhile.
        access::register(&t.storage);
        TensorRef {
            root: &t.storage,
            data: t.cells(),
            shape,
            rank: t.rank(),
        }
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape[..self.rank]
    }

    /// The whole storage this view is part of, and where the view starts in it (in elements):
    /// how the CUDA target keeps views of one tensor sharing device memory.
    pub(crate) fn storage(&self) -> (&'a Arc<Store<T>>, usize) {
        let base = self.root.as_ptr() as usize;
        let here = self.data.as_ptr() as usize;
        let offset = (here - base) / std::mem::size_of::<T::Cell>().max(1);
        (self.root, offset)
    }

    /// The elements of the view, row-major: what whole-tensor operations (`tensor_gemm`) work on.
    pub(crate) fn cells(&self) -> &'a [T::Cell] {
        self.data
    }

    /// The rank, as PMExpr's `tensor_rank` returns it.
    pub fn rank(&self) -> i64 {
        self.rank as i64
    }

    /// `tensor_shape`: the shape as a sequence.
    pub fn shape_seq(&self) -> Seq<'static, i64> {
        Seq::from_vec(self.shape().iter().map(|&d| d as i64).collect())
    }

    /// The row-major position of a full index, checked against the shape.
    #[inline(always)]
    fn offset(&self, site: &Site, index: &[i64]) -> usize {
        if index.len() != self.rank {
            index_error(*self, site, copy_index(index), true);
        }
        let mut ofs = 0_usize;
        for (&i, &d) in index.iter().zip(&self.shape) {
            if i as u64 >= d as u64 {
                index_error(*self, site, copy_index(index), false);
            }
            ofs = ofs * d + i as usize;
        }
        ofs
    }

    /// The cell at a position that `offset` or `linear` checked.
    #[inline(always)]
    // Not yet behind `raw`: a reinterpretation that this module's invariants make sound.
    #[allow(unsafe_code)]
    fn cell(&self, ofs: usize) -> &T::Cell {
        debug_assert!(ofs < self.data.len());
        // SAFETY: `data.len()` is the product of `shape[..rank]` (every constructor keeps this),
        // and `ofs` is the row-major position of an index within that shape, so it is in bounds.
        unsafe { self.data.get_unchecked(ofs) }
    }

    /// `tensor_get`: the element at a full index.
    #[inline(always)]
    pub fn get(&self, site: &Site, index: &[i64]) -> T {
        T::load(self.cell(self.offset(site, index)))
    }

    /// `tensor_set`: writes the element at a full index.
    #[inline(always)]
    pub fn set(&self, site: &Site, index: &[i64], value: T) {
        T::store(self.cell(self.offset(site, index)), value)
    }

    #[inline(always)]
    fn linear(&self, site: &Site, i: i64) -> usize {
        if i < 0 {
            site.fail(format_args!("Negative index used to access tensor: {i}"));
        }
        if i as u64 >= self.data.len() as u64 {
            site.fail(format_args!(
                "Out of bounds access in tensor: linear index {i} for a tensor of {} elements",
                self.data.len()
            ));
        }
        i as usize
    }

    /// The address of the element at a full index (checked as `get` checks it): how debug mode
    /// tells the elements that `par_loop` iterations touch apart, views included.
    #[doc(hidden)]
    pub fn address(&self, site: &Site, index: &[i64]) -> usize {
        self.cell(self.offset(site, index)) as *const T::Cell as usize
    }

    /// The address of the element at a row-major position (checked as `linear_get` checks it).
    #[doc(hidden)]
    pub fn linear_address(&self, site: &Site, i: i64) -> usize {
        self.cell(self.linear(site, i)) as *const T::Cell as usize
    }

    /// `tensor_linear_get`: the element at a row-major position.
    #[inline(always)]
    pub fn linear_get(&self, site: &Site, i: i64) -> T {
        T::load(self.cell(self.linear(site, i)))
    }

    /// `tensor_linear_set`: writes the element at a row-major position.
    #[inline(always)]
    pub fn linear_set(&self, site: &Site, i: i64, value: T) {
        T::store(self.cell(self.linear(site, i)), value)
    }

    /// The cells `[lead…, 0..n]`: the last dimension at fixed leading indices, for a loop of `n`
    /// iterations that indexes it by its loop variable. `None` when an access in such a loop
    /// could fail (another rank, a leading index out of range, `n` beyond the last dimension):
    /// generated code then runs the loop with the checked accesses, so that it fails as before.
    /// A negative `n` (an empty loop) gives an empty window.
    #[doc(hidden)]
    #[inline]
    pub fn window(&self, lead: &[i64], n: i64) -> Option<Window<'a, T>> {
        if lead.len() + 1 != self.rank {
            return None;
        }
        let mut ofs = 0_usize;
        for (&i, &d) in lead.iter().zip(&self.shape) {
            if i as u64 >= d as u64 {
                return None;
            }
            ofs = ofs * d + i as usize;
        }
        let last = self.shape[self.rank - 1];
        let n = n.max(0) as u64;
        if n > last as u64 {
            return None;
        }
        let start = ofs * last;
        Some(Window {
            cells: &self.data[start..start + n as usize],
            lock: &self.root.lock,
        })
    }

    /// The cells `index` with dimension `pos` running over `0..n` (the entry of `index` at
    /// `pos` is ignored): a column or another strided line, for a loop that indexes dimension
    /// `pos` by its loop variable. `None` as for [`TensorRef::window`].
    #[doc(hidden)]
    #[inline]
    pub fn strided(&self, index: &[i64], pos: usize, n: i64) -> Option<Strided<'a, T>> {
        if index.len() != self.rank || pos >= self.rank {
            return None;
        }
        let mut ofs = 0_usize;
        for (j, (&i, &d)) in index.iter().zip(&self.shape).enumerate() {
            let i = if j == pos { 0 } else { i };
            if j != pos && i as u64 >= d as u64 {
                return None;
            }
            ofs = ofs * d + i as usize;
        }
        let n = n.max(0) as u64;
        if n > self.shape[pos] as u64 {
            return None;
        }
        let stride: usize = self.shape[pos + 1..self.rank].iter().product();
        // An empty line has no first cell: where dimension `pos` is 0 too, `ofs` (the other
        // indices' position) may lie past the tensor's end.
        let cells = match n {
            0 => &self.data[..0],
            n => &self.data[ofs..ofs + (n as usize - 1) * stride + 1],
        };
        Some(Strided { cells, stride })
    }

    /// `tensor_sub`: `len` rows from row `offset` of the first dimension, sharing memory.
    pub fn sub(self, site: &Site, offset: i64, len: i64) -> Self {
        if offset < 0 {
            site.fail(format_args!("Subtensor using negative offset: {offset}"));
        }
        if len < 0 {
            site.fail(format_args!("Subtensor using negative length: {len}"));
        }
        if self.rank == 0 || offset as u64 + len as u64 > self.shape[0] as u64 {
            site.fail(format_args!(
                "Subtensor out of bounds: rows {offset}..{} of a tensor of shape {:?}",
                offset + len,
                self.shape()
            ));
        }
        let stride: usize = self.shape[1..self.rank].iter().product();
        let (offset, len) = (offset as usize, len as usize);
        let mut shape = self.shape;
        shape[0] = len;
        TensorRef {
            root: self.root,
            data: &self.data[offset * stride..(offset + len) * stride],
            shape,
            rank: self.rank,
        }
    }

    /// `tensor_slice`: the view with the leading indices fixed, sharing memory.
    pub fn slice(self, site: &Site, index: &[i64]) -> Self {
        if index.len() > self.rank {
            index_error(self, site, copy_index(index), true);
        }
        let mut offset = 0_usize;
        for (k, &i) in index.iter().enumerate() {
            if i as u64 >= self.shape[k] as u64 {
                index_error(self, site, copy_index(index), false);
            }
            offset = offset * self.shape[k] + i as usize;
        }
        let rank = self.rank - index.len();
        let stride: usize = self.shape[index.len()..self.rank].iter().product();
        let mut shape = [0; MAX_RANK];
        shape[..rank].copy_from_slice(&self.shape[index.len()..self.rank]);
        TensorRef {
            root: self.root,
            data: &self.data[offset * stride..(offset + 1) * stride],
            shape,
            rank,
        }
    }

    /// The view as a [`Tensor`] handle sharing the same memory (a tensor returned from
    /// `accelerate!`).
    pub fn to_tensor(self) -> Tensor<T> {
        let base = self.root.as_ptr() as usize;
        let here = self.data.as_ptr() as usize;
        let offset = (here - base) / std::mem::size_of::<T::Cell>().max(1);
        Tensor {
            storage: Arc::clone(self.root),
            offset,
            shape: self.shape().to_vec(),
        }
    }
}

/// An index copied out of the caller's slice, so that the error path takes nothing by reference
/// (a reference would keep the hot loop's values in memory instead of registers).
#[derive(Clone, Copy)]
struct IndexCopy {
    values: [i64; 16],
    len: usize,
}

#[inline(always)]
fn copy_index(index: &[i64]) -> IndexCopy {
    let mut values = [0; 16];
    let len = index.len().min(16);
    values[..len].copy_from_slice(&index[..len]);
    IndexCopy {
        values,
        len: index.len(),
    }
}

#[cold]
#[inline(never)]
fn index_error<T: Element>(
    t: TensorRef<'_, T>,
    site: &Site,
    index: IndexCopy,
    wrong_rank: bool,
) -> ! {
    let shown = &index.values[..index.len.min(16)];
    if wrong_rank {
        site.fail(format_args!(
            "Wrong number of dimensions used to access tensor: index {shown:?} for a tensor of shape {:?}",
            t.shape()
        ))
    } else {
        site.fail(format_args!(
            "Invalid indices used to access tensor: index {shown:?} for a tensor of shape {:?}",
            t.shape()
        ))
    }
}

/// A checked row of a [`TensorRef`] for one loop (see [`TensorRef::window`]): the loop's accesses
/// index it by the loop variable, which the loop bounds keep in range, instead of checking the
/// rank and every index of each access.
#[doc(hidden)]
pub struct Window<'a, T: Element> {
    cells: &'a [T::Cell],
    /// The lock of the storage the row is part of: what a plain loop takes (see [`access`]).
    lock: &'a Lock,
}

impl<T: Element> Clone for Window<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Element> Copy for Window<'_, T> {}

impl<'a, T: Element> Window<'a, T> {
    /// The row's cells as a pointer to plain elements, once `plain` holds its storage and has
    /// recorded the row (to `write`, or to read); `None` when the storage is not the calling
    /// call's alone, or the row overlaps another slice of `plain`.
    fn plain_ptr(self, plain: &Plain, write: bool) -> Option<*mut T> {
        if !plain.hold(self.lock) {
            return None;
        }
        plain.claim(self.cells, write)?;
        const { assert!(size_of::<T>() == size_of::<T::Cell>()) };
        const { assert!(align_of::<T>() <= align_of::<T::Cell>()) };
        Some(self.cells.as_ptr() as *mut T)
    }

    /// The row as a plain slice to write while `plain` holds its storage; `None` as for
    /// `plain_ptr`.
    ///
    /// # Safety
    /// While the slice lives, the row's cells are accessed only through it: not through this
    /// window or a copy of it (`get`, `set`, `get_or`, the windows of `upto`), nor through any
    /// other window, `Strided` line or `TensorRef` of the same storage, on any thread. The guard
    /// keeps out everyone else (other calls, `Tensor` methods) and keeps its own slices apart,
    /// but it cannot see these `Copy` views of the calling call. Generated code upholds this:
    /// the body of its plain loop indexes the slices alone, and nothing else of the call runs
    /// while it does (`Plain::begin` is taken at the call's top level only).
    // The slice borrows the guard, whose `claim` keeps it the only one of its cells.
    #[allow(clippy::mut_from_ref)]
    // Not yet behind `raw`: a reinterpretation that this module's invariants make sound.
    #[allow(unsafe_code)]
    pub unsafe fn plain_mut<'p>(self, plain: &'p Plain) -> Option<&'p mut [T]>
    where
        'a: 'p,
    {
        let ptr = self.plain_ptr(plain, true)?;
        // SAFETY: a cell has the size and alignment of its element (asserted in `plain_ptr`) and
        // any bit pattern of it is one; cells are atomics, `UnsafeCell`s underneath, so writing
        // through a pointer from a shared reference to them is allowed. While the slice lives
        // nothing else touches these cells: `plain` holds the storage exclusive (every other user
        // waits in `Lock::share`, or panics there on this thread), `claim` keeps this range apart
        // from every other slice `plain` handed out, and the caller's contract rules out the
        // call's own views. The slice borrows `plain`, so it ends before the storage is given
        // back.
        Some(unsafe { std::slice::from_raw_parts_mut(ptr, self.cells.len()) })
    }

    /// The row as a plain slice to read while `plain` holds its storage; `None` as for
    /// `plain_ptr`.
    ///
    /// # Safety
    /// While the slice lives, nothing writes the row's cells: no `set` through this window or a
    /// copy of it, nor through any other window, `Strided` line or `TensorRef` of the same
    /// storage, on any thread (reads through them are fine). As for [`Window::plain_mut`], the
    /// guard keeps out everyone but the calling call's own views, and generated code upholds
    /// this for those.
    // Not yet behind `raw`: a reinterpretation that this module's invariants make sound.
    #[allow(unsafe_code)]
    pub unsafe fn plain<'p>(self, plain: &'p Plain) -> Option<&'p [T]>
    where
        'a: 'p,
    {
        let ptr = self.plain_ptr(plain, false)?;
        // SAFETY: as for `plain_mut`: the cells hold valid elements, and while the slice lives
        // nobody else writes them (the storage is exclusive to `plain`, `claim` refuses any
        // slice of `plain` that writes this range, and the caller's contract rules out the
        // call's own views); the slice borrows `plain`.
        Some(unsafe { std::slice::from_raw_parts(ptr as *const T, self.cells.len()) })
    }

    /// The element at position `k` of the row.
    #[inline(always)]
    pub fn get(self, k: i64) -> T {
        T::load(&self.cells[k as usize])
    }

    /// Writes the element at position `k` of the row.
    #[inline(always)]
    pub fn set(self, k: i64, value: T) {
        T::store(&self.cells[k as usize], value)
    }

    /// The first `end` cells of the row: for a loop over columns below `end`, which the
    /// compiler then sees inside the row. Generated code calls it with `end` at most the row's
    /// length (`Backend::par_rows`' segments lie within a row); it panics otherwise.
    #[inline(always)]
    pub fn upto(self, end: i64) -> Self {
        Window {
            cells: &self.cells[..end as usize],
            lock: self.lock,
        }
    }

    /// The element at position `k` of the row, or `outside()` when `k` is not in the row.
    #[inline(always)]
    pub fn get_or(self, k: i64, outside: impl FnOnce() -> T) -> T {
        // A negative `k` wraps to a position past any row.
        match self.cells.get(k as usize) {
            Some(cell) => T::load(cell),
            None => outside(),
        }
    }

    /// The number of elements.
    pub fn len(self) -> usize {
        self.cells.len()
    }

    /// Whether the row is empty.
    pub fn is_empty(self) -> bool {
        self.cells.is_empty()
    }
}

/// A checked strided line of a [`TensorRef`] for one loop (see [`TensorRef::strided`]).
#[doc(hidden)]
pub struct Strided<'a, T: Element> {
    cells: &'a [T::Cell],
    stride: usize,
}

impl<T: Element> Clone for Strided<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Element> Copy for Strided<'_, T> {}

impl<T: Element> Strided<'_, T> {
    /// The element at position `k` of the line.
    #[inline(always)]
    pub fn get(self, k: i64) -> T {
        T::load(&self.cells[k as usize * self.stride])
    }

    /// Writes the element at position `k` of the line.
    #[inline(always)]
    pub fn set(self, k: i64, value: T) {
        T::store(&self.cells[k as usize * self.stride], value)
    }

    /// The element at position `k` of the line, or `outside()` when `k` is not in the line.
    #[inline(always)]
    pub fn get_or(self, k: i64, outside: impl FnOnce() -> T) -> T {
        match usize::try_from(k)
            .ok()
            .and_then(|k| k.checked_mul(self.stride))
            .and_then(|at| self.cells.get(at))
        {
            Some(cell) => T::load(cell),
            None => outside(),
        }
    }
}

#[cfg(test)]
// The plain views' tests call their unsafe API, as generated code does.
#[allow(unsafe_code)]
mod tests {
    use super::*;

    const SITE: Site = Site::new("t.rs", 1, 1);

    #[test]
    fn from_vec_and_into_vec_keep_the_memory_of_an_unshared_tensor() {
        let v = vec![1.5_f64, -0.0, f64::NAN, 4.0];
        let at = v.as_ptr();
        let t = Tensor::from_vec(v, &[2, 2]);
        t.set(&[1, 1], 9.0).unwrap();
        let back = t.into_vec();
        assert_eq!(back.as_ptr(), at);
        assert_eq!(back[0], 1.5);
        assert!(back[1] == 0.0 && back[1].is_sign_negative() && back[2].is_nan());
        assert_eq!(back[3], 9.0);
        let w = vec![7_i32; 6];
        let at = w.as_ptr();
        let back = Tensor::from_vec(w, &[3, 2]).into_vec();
        assert_eq!(back.as_ptr(), at);
    }

    #[test]
    fn into_vec_copies_a_shared_tensor_or_a_view() {
        let t = Tensor::from_vec((0..6_i64).collect(), &[3, 2]);
        let view = t.sub(1, 2).unwrap();
        let other = t.clone();
        // `t` shares its storage with `view`: copied, and `view` still reads it.
        assert_eq!(t.into_vec(), [0, 1, 2, 3, 4, 5]);
        assert_eq!(view.get(&[0, 1]), Some(3));
        // A view alone is only part of its storage.
        assert_eq!(view.into_vec(), [2, 3, 4, 5]);
        assert_eq!(other.into_vec(), [0, 1, 2, 3, 4, 5]);
    }

    fn fails<R>(f: impl FnOnce() -> R) -> String {
        let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
            .err()
            .expect("fails");
        e.downcast_ref::<String>().cloned().unwrap_or_default()
    }

    #[test]
    fn shape_mismatch_is_an_error() {
        assert_eq!(
            Tensor::<i64>::try_from_vec(vec![1, 2, 3], &[2, 2]),
            Err(TensorError::ShapeMismatch {
                len: 3,
                shape: vec![2, 2]
            })
        );
    }

    #[test]
    fn row_major_access_and_views() {
        let t = Tensor::<i64>::from_fn(&[2, 3], |ix| (ix[0] * 10 + ix[1]) as i64);
        assert_eq!(t.to_vec(), vec![0, 1, 2, 10, 11, 12]);
        let row = t.slice(&[1]).unwrap();
        assert_eq!(row.to_vec(), vec![10, 11, 12]);
        row.set(&[0], 99).unwrap();
        assert_eq!(t.get(&[1, 0]), Some(99), "views share memory");
        assert_eq!(t.sub(1, 1).unwrap().shape(), &[1, 3]);
        assert!(t.sub(1, 2).is_none());
        assert!(t.get(&[2, 0]).is_none());
        let copy = t.clone();
        copy.set(&[0, 0], -1).unwrap();
        assert_eq!(t.get(&[0, 0]), Some(0), "clone is a deep copy");
    }

    #[test]
    fn tensor_ref_checks_every_access() {
        let t = Tensor::<f64>::from_vec(vec![1.0, 2.0, 3.0, 4.0], &[2, 2]);
        let r = TensorRef::new(&t, &SITE, "t");
        assert_eq!(r.get(&SITE, &[1, 0]), 3.0);
        r.set(&SITE, &[0, 1], 7.0);
        assert_eq!(t.get(&[0, 1]), Some(7.0));
        assert!(fails(|| r.get(&SITE, &[2])).contains("Wrong number of dimensions"));
        assert!(fails(|| r.get(&SITE, &[0, 2])).contains("Invalid indices used to access tensor"));
        assert!(fails(|| r.get(&SITE, &[-1, 0])).contains("Invalid indices"));
        assert!(fails(|| r.linear_get(&SITE, 4)).contains("Out of bounds access in tensor"));
        assert!(fails(|| r.linear_get(&SITE, -1)).contains("Negative index used to access tensor"));
        assert!(fails(|| r.sub(&SITE, 1, 2)).contains("Subtensor out of bounds"));
        assert!(fails(|| r.sub(&SITE, -1, 1)).contains("Subtensor using negative offset"));
        assert!(fails(|| r.sub(&SITE, 0, -1)).contains("Subtensor using negative length"));
    }

    #[test]
    fn tensor_ref_views_round_trip() {
        let t = Tensor::<i64>::from_fn(&[3, 2], |ix| (ix[0] * 2 + ix[1]) as i64);
        let r = TensorRef::new(&t, &SITE, "t");
        let s = r.sub(&SITE, 1, 2);
        assert_eq!(s.shape(), &[2, 2]);
        assert_eq!(s.get(&SITE, &[0, 0]), 2);
        let row = r.slice(&SITE, &[2]);
        assert_eq!(row.shape(), &[2]);
        assert_eq!(row.linear_get(&SITE, 1), 5);
        let back = row.to_tensor();
        assert_eq!(back.to_vec(), vec![4, 5]);
        back.set(&[0], 40).unwrap();
        assert_eq!(t.get(&[2, 0]), Some(40));
        assert_eq!(r.shape_seq().as_slice(), &[3, 2]);
        assert_eq!(r.rank(), 2);
    }

    #[test]
    fn rank_above_the_maximum_is_reported_at_the_site() {
        let shape = vec![1; MAX_RANK + 1];
        let t = Tensor::<i64>::from_vec(vec![0], &shape);
        let msg = fails(|| TensorRef::new(&t, &SITE, "big"));
        assert!(
            msg.contains("t.rs:1:1")
                && msg.contains("rank exceeding maximum")
                && msg.contains("`big`"),
            "{msg}"
        );
    }

    #[test]
    fn windows_exist_only_for_rows_in_range() {
        let site = crate::site::Site::new("test", 1, 1);
        let t = Tensor::<i64>::from_vec((0..12).collect(), &[3, 4]);
        let r = TensorRef::new(&t, &site, "t");
        let w = r.window(&[2], 4).expect("row 2");
        assert_eq!(
            (0..4).map(|k| w.get(k)).collect::<Vec<_>>(),
            vec![8, 9, 10, 11]
        );
        w.set(1, 99);
        assert_eq!(t.get(&[2, 1]), Some(99));
        assert_eq!(r.window(&[1], 2).map(|w| w.len()), Some(2));
        assert!(r.window(&[0], -3).is_some_and(|w| w.is_empty()));
        // n beyond the row, a leading index out of range or negative, another rank.
        assert!(r.window(&[0], 5).is_none());
        assert!(r.window(&[3], 1).is_none());
        assert!(r.window(&[-1], 1).is_none());
        assert!(r.window(&[], 4).is_none());
        assert!(r.window(&[0, 0], 1).is_none());
        // A `tensor_sub` view: its rows, not the tensor's.
        let v = r.sub(&site, 1, 2);
        assert_eq!(v.window(&[1], 4).map(|w| w.get(3)), Some(11));
        assert!(v.window(&[2], 1).is_none());
    }

    #[test]
    fn plain_slices_of_a_call_keep_their_contract() {
        let site = crate::site::Site::new("test", 1, 1);
        let call = access::CallScope::enter();
        let t = Tensor::<i64>::from_vec((0..12).collect(), &[3, 4]);
        let r = TensorRef::new(&t, &site, "t");
        let row = |i| r.window(&[i], 4).expect("a row");
        let Some(plain) = Plain::begin(true) else {
            // Plain loops turned off for this process: no slice is ever handed out.
            assert!(std::env::var_os("PMEXPR_PLAIN_LOOPS").is_some());
            return;
        };
        // SAFETY: until `plain` drops, rows 0 and 1 are touched through these slices only (none
        // of the windows' `get`/`set`, nor `r`, is used meanwhile), and nothing writes row 2.
        let (out, a, b) = unsafe {
            (
                row(0).plain_mut(&plain).expect("row 0, to write"),
                row(1).plain(&plain).expect("row 1, to read"),
                row(1)
                    .plain(&plain)
                    .expect("row 1 again: reads may overlap"),
            )
        };
        // What the guard refuses by itself: a range that overlaps one handed out when either
        // is written (a part of a row, cut by `upto`, too).
        // SAFETY: each call returns `None` (asserted), so no slice exists to break the contract.
        unsafe {
            assert!(row(0).plain(&plain).is_none());
            assert!(row(0).upto(2).plain_mut(&plain).is_none());
            assert!(row(1).plain_mut(&plain).is_none());
        }
        for k in 0..4 {
            out[k] += a[k] * b[k];
        }
        drop(plain);
        // Back to atomic accesses: the writes are there, the other rows untouched.
        assert_eq!(
            (0..4).map(|k| row(0).get(k)).collect::<Vec<_>>(),
            [16, 26, 38, 52]
        );
        assert_eq!(row(1).get(3), 7);
        drop(call);
        assert_eq!(t.get(&[0, 3]), Some(52));
        // A storage someone else holds too (here a view made outside any call, which holds it
        // for ever) gives no slice: the guard cannot make it exclusive.
        let shared = Tensor::<i64>::zeros(&[2, 2]);
        let _outside = TensorRef::new(&shared, &site, "shared");
        let call = access::CallScope::enter();
        let w = TensorRef::new(&shared, &site, "shared")
            .window(&[0], 2)
            .expect("a row");
        let plain = Plain::begin(true).expect("plain loops are on");
        // SAFETY: it returns `None` (asserted).
        assert!(unsafe { w.plain_mut(&plain) }.is_none());
        drop(plain);
        drop(call);
    }

    #[test]
    fn strided_lines_exist_only_in_range() {
        let site = crate::site::Site::new("test", 1, 1);
        let t = Tensor::<i64>::from_vec((0..24).collect(), &[2, 3, 4]);
        let r = TensorRef::new(&t, &site, "t");
        // t[1, k, 2] for k in 0..3.
        let c = r.strided(&[1, 0, 2], 1, 3).expect("a column");
        assert_eq!(
            (0..3).map(|k| c.get(k)).collect::<Vec<_>>(),
            vec![14, 18, 22]
        );
        c.set(2, -1);
        assert_eq!(t.get(&[1, 2, 2]), Some(-1));
        // t[k, 0, 3] for k in 0..2; the last dimension is a row.
        let c = r.strided(&[9, 0, 3], 0, 2).expect("first dimension");
        assert_eq!((c.get(0), c.get(1)), (3, 15));
        let c = r.strided(&[1, 2, 0], 2, 4).expect("a row");
        assert_eq!(c.get(1), 21);
        assert!(r.strided(&[0, 0, 0], 1, -2).is_some());
        assert!(r.strided(&[0, 0, 0], 1, 4).is_none());
        assert!(r.strided(&[0, 0, 4], 1, 1).is_none());
        assert!(r.strided(&[2, 0, 0], 1, 1).is_none());
        assert!(r.strided(&[0, 0], 1, 1).is_none());
        assert!(r.strided(&[0, 0, 0], 3, 1).is_none());
    }

    #[test]
    fn lines_of_an_empty_dimension_are_empty() {
        let site = crate::site::Site::new("test", 1, 1);
        for shape in [
            &[0][..],
            &[0, 2],
            &[2, 0],
            &[0, 0, 3],
            &[3, 0, 2],
            &[3, 2, 0],
        ] {
            let t = Tensor::<i64>::from_vec(vec![], shape);
            let r = TensorRef::new(&t, &site, "t");
            let rank = shape.len();
            // Along an empty dimension, at the last index of every other (all non-empty; else
            // an index is out of range, and the loop runs its checked accesses).
            let alone = |p: usize| (0..rank).all(|q| q == p || shape[q] > 0);
            for pos in (0..rank).filter(|&p| shape[p] == 0 && alone(p)) {
                let index: Vec<i64> = (shape.iter().map(|&d| d.saturating_sub(1) as i64)).collect();
                assert!(r.strided(&index, pos, 0).is_some(), "{shape:?} at {pos}");
                assert!(r.strided(&index, pos, 1).is_none(), "{shape:?} at {pos}");
                if pos == rank - 1 {
                    let w = r.window(&index[..pos], 0).expect("an empty row");
                    assert!(w.is_empty(), "{shape:?}");
                }
            }
        }
    }
}
