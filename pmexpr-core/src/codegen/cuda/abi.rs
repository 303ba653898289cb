//! The ABI shared with the runtime: the prelude, the kernels' parameters and their C layouts,
//! and the runtime errors device code records.

use crate::ast::{Expr, NodeId, VarId};
use crate::codegen::numbers::Number;
use crate::error::SpanRange;
use crate::types::Type;

/// The default maximum tensor rank (as the runtime's `PMEXPR_TENSOR_MAX_RANK` default).
pub const DEFAULT_MAX_RANK: usize = 3;

/// The name of the `__device__ unsigned long long[4]` array where device code records the first
/// failed runtime check of a launch (see the module docs).
pub const ERROR_SYMBOL: &str = "pmexpr_error";

/// The shared prelude; `@MAX_RANK@` is replaced by the maximum rank. It stays beside this folder
/// (`codegen/cuda_prelude.cu`): the runtime's CUDA emulator reads the same file.
pub(super) const PRELUDE: &str = include_str!("../cuda_prelude.cu");

/// The memory layout of a kernel parameter, for the host that builds it (as a `#[repr(C)]`
/// mirror). Every parameter is passed by value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CLayout {
    /// A number or `bool`: its C type ([`Number::c_type`]), aligned to its size.
    Number(Number),
    /// `pm_unit`, an empty struct (one byte).
    Unit,
    /// `pm_seq<T>`: a pointer to device memory holding the elements (each laid out as the inner
    /// layout, nested sequences as `pm_seq` structs pointing to their own buffers), then the length
    /// as a `long long`.
    Seq(Box<CLayout>),
    /// `pm_tensor<T>`: a pointer to the first element (device memory), `dims` (`max_rank`
    /// `long long`s, unused ones 0), `rank` and `size` (the number of elements).
    Tensor(Box<CLayout>),
    /// A struct: its C name and its fields in order.
    Struct {
        /// The struct's name in the module.
        name: String,
        /// The fields: C name and layout.
        fields: Vec<(String, CLayout)>,
    },
}

impl CLayout {
    /// Size and alignment in bytes, as the CUDA compiler lays the type out (the C rules of
    /// x86-64 and AArch64 Linux, which CUDA follows for kernel parameters).
    pub fn size_align(&self, max_rank: usize) -> (usize, usize) {
        match self {
            CLayout::Number(n) => (n.size(), n.size()),
            CLayout::Unit => (1, 1),
            CLayout::Seq(_) => (16, 8),
            CLayout::Tensor(_) => (8 * (max_rank + 3), 8),
            CLayout::Struct { fields, .. } => {
                let mut size = 0_usize;
                let mut align = 1_usize;
                for (_, f) in fields {
                    let (s, a) = f.size_align(max_rank);
                    size = size.next_multiple_of(a) + s;
                    align = align.max(a);
                }
                // An empty struct has size 1 in C++.
                (size.max(1).next_multiple_of(align), align)
            }
        }
    }

    /// The byte offset of each field of a struct (empty for other layouts).
    pub fn field_offsets(&self, max_rank: usize) -> Vec<usize> {
        let CLayout::Struct { fields, .. } = self else {
            return Vec::new();
        };
        let mut offset = 0_usize;
        fields
            .iter()
            .map(|(_, f)| {
                let (s, a) = f.size_align(max_rank);
                let here = offset.next_multiple_of(a);
                offset = here + s;
                here
            })
            .collect()
    }
}

/// One parameter of a kernel.
#[derive(Debug, Clone)]
pub struct KernelParam {
    /// Its C name.
    pub name: String,
    /// Its PMExpr type, instantiated (an `i32` or `f32` stays its type variable; `c_type` and
    /// `layout` tell which it is).
    pub ty: Type,
    /// Its C type as the source spells it.
    pub c_type: String,
    /// How it is laid out (it is passed by value).
    pub layout: CLayout,
    /// The host expression that computes it, in the host binding's scope: one of the bound
    /// arguments of `par_loop`'s function, or (the last parameter) the loop's `n`.
    pub value: Expr,
}

/// What a kernel replaces in host code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelKind {
    /// A `par_loop`: the kernel calls its function once per index.
    ParLoop,
    /// A `tensor_gemm`: the prelude's `pm_gemm`, one element of the product per index.
    Gemm,
}

/// One kernel: a `par_loop` or a `tensor_gemm` of host code.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// What it replaces.
    pub kind: KernelKind,
    /// The `extern "C"` name (what the host looks up in the compiled module).
    pub name: String,
    /// The host binding whose body holds the `par_loop`: the accelerated binding, or a function
    /// that host code calls (see [`HostPlan::functions`](super::HostPlan::functions)).
    pub binding: VarId,
    /// Its name.
    pub binding_name: String,
    /// The `par_loop` (or `tensor_gemm` application) node this kernel replaces: the host code
    /// launches the kernel where it reaches that node of the monomorphic program.
    pub node: NodeId,
    /// Which launch of that binding's value it is (`par_loop`s and `tensor_gemm`s together),
    /// counting from 0 in [`Expr::walk`] order (named so in the kernel's comment).
    pub ordinal: usize,
    /// The `par_loop`'s tokens.
    pub span: SpanRange,
    /// The `__device__` function called once per index (`pm_gemm` for a product).
    pub function: String,
    /// The parameters, in order: the bound arguments of the loop's function (a product's seven
    /// arguments), then `n` (a `long long`; for a product, the number of elements of `c`). The launch covers `0..n` with any grid (a grid-stride loop); `n <= 0` does
    /// nothing.
    pub params: Vec<KernelParam>,
}

/// The runtime errors device code records (the codes of the prelude's `pm_error_code`), worded
/// as the CPU targets word them (reference implementation §3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceError {
    /// `divi`/`modi` by zero.
    DivisionByZero = 1,
    /// `get` with a negative index.
    SeqNegativeIndex = 2,
    /// `get` past the end.
    SeqOutOfBounds = 3,
    /// `tensor_get/set/slice` with a wrong number of indices.
    TensorWrongRank = 4,
    /// `tensor_get/set/slice` with an index outside the shape.
    TensorBadIndex = 5,
    /// `tensor_linear_get/set` with a negative index.
    TensorNegativeIndex = 6,
    /// `tensor_linear_get/set` past the end.
    TensorOutOfBounds = 7,
    /// `tensor_sub` with a negative offset.
    SubNegativeOffset = 8,
    /// `tensor_sub` with a negative length.
    SubNegativeLength = 9,
    /// `tensor_sub` past the first dimension (or of a rank-0 tensor).
    SubOutOfBounds = 10,
    /// `never!()` was reached.
    Never = 11,
    /// No arm of a `match` matched.
    NoMatch = 12,
    /// An integer literal does not fit the site's integer type (`i32`).
    LiteralTooBig = 13,
    /// `isqrt` of a negative number.
    IsqrtNegative = 14,
    /// An integer `clamp` with `min > max` (the bounds recorded).
    ClampBounds = 15,
    /// An `f64` `clamp` with `min > max` or a NaN bound (the bounds' bits recorded).
    ClampBoundsF64 = 16,
    /// An `f32` `clamp` with `min > max` or a NaN bound (the bounds' bits recorded).
    ClampBoundsF32 = 17,
}

impl DeviceError {
    /// Every error, by code.
    pub const ALL: [DeviceError; 17] = [
        DeviceError::DivisionByZero,
        DeviceError::SeqNegativeIndex,
        DeviceError::SeqOutOfBounds,
        DeviceError::TensorWrongRank,
        DeviceError::TensorBadIndex,
        DeviceError::TensorNegativeIndex,
        DeviceError::TensorOutOfBounds,
        DeviceError::SubNegativeOffset,
        DeviceError::SubNegativeLength,
        DeviceError::SubOutOfBounds,
        DeviceError::Never,
        DeviceError::NoMatch,
        DeviceError::LiteralTooBig,
        DeviceError::IsqrtNegative,
        DeviceError::ClampBounds,
        DeviceError::ClampBoundsF64,
        DeviceError::ClampBoundsF32,
    ];

    /// The code stored in `pmexpr_error[0]`.
    pub fn code(self) -> u64 {
        self as u64
    }

    /// The error of a code (`None` for 0, "no error", and unknown codes).
    pub fn from_code(code: u64) -> Option<DeviceError> {
        DeviceError::ALL.into_iter().find(|e| e.code() == code)
    }
}

/// One runtime check in the module: what `pmexpr_error[1]` refers to.
#[derive(Debug, Clone)]
pub struct Check {
    /// Its number (from 1).
    pub id: u32,
    /// The construct checked (`tensor_get`, `divi`, `never!()`, …).
    pub construct: String,
    /// The device function that contains it.
    pub function: String,
    /// Its tokens.
    pub span: SpanRange,
}
