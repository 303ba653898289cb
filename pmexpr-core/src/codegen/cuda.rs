//! CUDA device code for a CUDA-class `accelerate!` site: CUDA C++ that NVRTC compiles without any
//! header, plus, as data, the kernels a host must launch (their names and parameters).
//!
//! The input is a site's extracted, lambda-lifted program ([`SiteProgram`]) and an
//! [`Instantiation`] of the numeric type variables that the captured Rust values fix (see
//! [`crate::infer::Numeric`]). The accelerated binding's body is *host* code: every `par_loop(n,
//! f)` in it becomes one `extern "C" __global__` kernel with a grid-stride loop that calls `f`'s
//! function with `f`'s bound arguments and the index; every function that such a loop reaches
//! (through calls and the sequential loops, recursion included) becomes a `__device__` function.
//! What else the host does — evaluating the kernels' arguments, the sequential code around the
//! launches, copying tensors — is not generated here; [`HostPlan`] describes it.
//!
//! # Values
//!
//! | PMExpr | CUDA C++ | kernel parameter ([`CLayout`]) |
//! |---|---|---|
//! | `Int` (`i64`) | `long long` | 8 bytes |
//! | `Float` (`f64`) | `double` | 8 bytes |
//! | a number the captured values make `i32` | `int` | 4 bytes |
//! | a number the captured values make `f32` | `float` | 4 bytes |
//! | `Bool` | `bool` | 1 byte |
//! | `()` | `pm_unit` (an empty struct); a function returning `()` is `void` | 1 byte |
//! | `[T]` | `pm_seq<T>`: `{ const T* data; long long len; }`, read-only | 16 bytes: a device buffer of `T`s and its length |
//! | `Tensor[T]` | `pm_tensor<T>`: `{ T* data; long long dims[MAX_RANK]; long long rank; long long size; }`, row-major | `8 * (MAX_RANK + 3)` bytes |
//! | tuple `(A, B)` | `struct tupleN { A _0; B _1; }` | C struct layout, fields in label order |
//! | derived struct `{x: A, y: B}` | `struct recordN { A x; B y; }` | C struct layout, fields in label order |
//! | numeric type variable | the type the [`Instantiation`] gives it | |
//!
//! Every value is passed by value (views are small); `MAX_RANK` is [`CudaOptions::max_rank`].
//!
//! `i32` and `f32` are computed with as the CPU targets compute them, not widened: `int`
//! arithmetic wraps at 32 bits, `float` arithmetic is done in `float` (every `f32` literal is a
//! `float` literal, `1.5f`; C++ does not promote `float` operands to `double`), and nothing is
//! contracted into fused multiply-adds (NVRTC gets `--fmad=false`), so `+ - * /` give Rust's
//! results bit for bit. Indices, lengths, loop counters and `n` stay `i64` whatever the numbers
//! are. The math functions, `int2float` and `floorfi` take and give PMExpr's `Int` and `Float`
//! (`i64`, `f64`) on every target, so they never see an `i32` or `f32`.
//!
//! # Constructs
//!
//! | PMExpr | CUDA C++ |
//! |---|---|
//! | `let x = e1; e2` | `const T x_7 = e1;` then `e2` |
//! | `match`/`if` | `if (cond) { … r = a; } else { … r = b; }` with a result variable, or `c ? a : b` when both branches are plain expressions |
//! | patterns | `bool` constants, records (fields compared/bound one by one), variables, `_` |
//! | `f(a, b)` | a call of the `__device__` function `f_3` (recursion allowed) |
//! | `par_loop(n, f)` in the accelerated binding | a kernel (grid-stride loop over `0..n`) |
//! | `par_loop(n, f)` in device code | a sequential `for` loop (a kernel cannot launch kernels here) |
//! | `seq_loop(n, f)`, `seq_loop_acc(acc, n, f)`, `foldl(f, acc, s)` | `for` loops, the accumulator in a local |
//! | `addi subi muli negi` | `pm_addi` …: wrapping, through unsigned arithmetic (signed overflow is undefined in C++); on `i32`, `pm_addi32` … |
//! | `divi modi` | `pm_divi`, `pm_modi`: truncate toward zero; `MIN / -1` wraps as in Rust; `/ 0` is an error; on `i32` (`/` only), `pm_divi32` |
//! | float arithmetic, comparisons, `not` | C++ operators |
//! | a literal | `2LL`, `1.5`; of an `i32`, `2`, of an `f32`, `1.5f`; an integer literal that does not fit an `i32` is an error when evaluated, as on the CPU |
//! | `sqrt exp log pow sin cos` | the CUDA device functions of the same names |
//! | `int2float`, `floorfi` | a cast, `pm_floorfi` (saturating like Rust's `as i64`; NaN gives 0) |
//! | `length(s)`, `get(s, i)` | `s.len`, `pm_get` (checked) |
//! | `tensor_get(t, [i, j])`, `tensor_set(t, [i, j], v)` | `pm_tensor_get(…, t, i, j)`, `pm_tensor_set(…, t, v, i, j)`; an index that is not a literal is a `pm_seq<long long>` |
//! | `tensor_linear_get/set`, `tensor_rank` | `pm_tensor_linear_get/set` (checked), `t.rank` |
//! | `tensor_sub(t, o, l)`, `tensor_slice(t, [i])` | views sharing the memory: a pointer offset and new dims |
//! | `get(tensor_shape(t), k)`, `length(tensor_shape(t))` | `pm_tensor_dim`, `t.rank` |
//! | `never!()`, a `match` with no arm left | an error (below) and a zero value |
//!
//! Not supported in device code (a [`CudaGenError`] names the construct; the well-formedness
//! check rejects most of them first): building sequences (`create`, `set`, `concat`, `head`,
//! `tail`, `reverse`, `subsequence`, a sequence literal anywhere but in a tensor index), any other
//! use of `tensor_shape` (it would build a sequence whose memory outlives nothing), functional
//! keywords, and function values other than the function argument of a loop or fold.
//!
//! # Runtime errors
//!
//! A device cannot stop the program, so a failed check — division by zero, an index out of
//! bounds, a wrong number of indices, a bad sub-tensor, `never!()`, an `i32` literal that does not
//! fit — never reads or writes out of bounds: it records itself in the `__device__` array
//! [`ERROR_SYMBOL`] (the first error of a launch wins, through `atomicCAS`) and the code goes on
//! with a harmless value (zero, or the unchanged tensor view). The host resets the array before a launch and reads it afterwards:
//! `[0]` is a [`DeviceError`] code, `[1]` the number of the [`Check`] that failed, `[2]` and
//! `[3]` the values involved; the runtime (`pmexpr_runtime::cuda::error`) words it as the CPU
//! targets do.
//!
//! # Names
//!
//! Everything a module defines beyond the shared prelude (guarded, so that modules can be
//! concatenated into one program) lives in a C++ namespace named after the site and the
//! instantiation ([`CudaModule::namespace`], e.g. `pm_src_main_rs_12_5_f32`; see
//! [`instantiations`] for which a site gets); kernels are `extern "C"` and named
//! `<namespace>_k<n>`. Locals and functions are `<name>_<identifier>`, so they never clash with
//! one another, with C++ keywords or with the generated temporaries (`tmp3`, `res4`, `i5`).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::{self, Write};

use crate::ast::{Expr, ExprKind, Lit, NeverKind, Param, Pat, PatKind, VarId};
use crate::classify::Backend;
use crate::error::SpanRange;
use crate::infer::Numeric;
use crate::intrinsics::{Intrinsic, Keyword};
use crate::lift::{Def, Origin};
use crate::site::SiteProgram;
use crate::types::{Label, TyVar, Type};

/// The default maximum tensor rank (as the runtime's `PMEXPR_TENSOR_MAX_RANK` default).
pub const DEFAULT_MAX_RANK: usize = 3;

/// The name of the `__device__ unsigned long long[4]` array where device code records the first
/// failed runtime check of a launch (see the module docs).
pub const ERROR_SYMBOL: &str = "pmexpr_error";

/// The shared prelude; `@MAX_RANK@` is replaced by the maximum rank.
const PRELUDE: &str = include_str!("cuda_prelude.cu");

/// The Rust type a numeric type variable stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NumType {
    /// `i64`.
    I64,
    /// `f64`.
    F64,
    /// `i32`: `int`, wrapping like Rust's `i32`.
    I32,
    /// `f32`: `float`, computed in single precision (never widened to `double`).
    F32,
    /// `bool` (only for a variable that is only compared, [`Numeric::Scalar`]).
    Bool,
}

impl NumType {
    /// The PMExpr type for the 64-bit numbers and `bool`. The 32-bit ones have none (PMExpr's
    /// `Int` and `Float` are `i64` and `f64`): their type variables stay variables in the
    /// generator's instantiated types, and [`Gen::num`] tells what they stand for.
    fn ty(self) -> Option<Type> {
        match self {
            NumType::I64 => Some(Type::Int),
            NumType::F64 => Some(Type::Float),
            NumType::Bool => Some(Type::Bool),
            NumType::I32 | NumType::F32 => None,
        }
    }

    /// The Rust name of the type (`"i64"`): how the runtime picks a module.
    pub fn tag(self) -> &'static str {
        match self {
            NumType::I64 => "i64",
            NumType::F64 => "f64",
            NumType::I32 => "i32",
            NumType::F32 => "f32",
            NumType::Bool => "bool",
        }
    }

    /// The C++ type.
    fn c_type(self) -> &'static str {
        match self {
            NumType::I64 => "long long",
            NumType::F64 => "double",
            NumType::I32 => "int",
            NumType::F32 => "float",
            NumType::Bool => "bool",
        }
    }

    fn is_float(self) -> bool {
        matches!(self, NumType::F64 | NumType::F32)
    }
}

/// What each numeric type variable left in a site's program stands for. The generated code is
/// monomorphic, so a host that cannot know the captured values' types at build time generates
/// one module per instantiation it may need (their names differ: [`instantiation_suffix`]).
pub type Instantiation = BTreeMap<TyVar, NumType>;

/// The types a variable of each kind may stand for, the default first. `bool` for a variable
/// that is only compared is not among them (such sites run on the CPU targets when it is one).
fn choices(kind: Numeric) -> &'static [NumType] {
    match kind {
        // An open type's site runs on the CPU under the CUDA targets (`rust::generate_site`); its
        // modules, as for numbers, keep the hook's per-site code uniform.
        Numeric::Num | Numeric::Scalar | Numeric::Open => {
            &[NumType::I64, NumType::F64, NumType::I32, NumType::F32]
        }
        Numeric::Int => &[NumType::I64, NumType::I32],
        Numeric::Float => &[NumType::F64, NumType::F32],
    }
}

/// Every variable as `like` where its kind allows, else as the number of its kind with the same
/// width (an integer variable under `f32` is `i32`, a float one under `i64` is `f64`).
fn uniform(numeric: &[(TyVar, Numeric)], like: NumType) -> Instantiation {
    numeric
        .iter()
        .map(|(v, k)| {
            let c = choices(*k);
            let t = if c.contains(&like) {
                like
            } else {
                let wide = matches!(like, NumType::I64 | NumType::F64);
                *c.iter()
                    .find(|t| matches!(t, NumType::I64 | NumType::F64) == wide)
                    .unwrap_or(&c[0])
            };
            (*v, t)
        })
        .collect()
}

/// The instantiation that makes every numeric type variable its default: `f64` for a float (a
/// float literal's type), `i64` for any other (the default of inference for a number nothing
/// fixes).
pub fn default_instantiation(numeric: &[(TyVar, Numeric)]) -> Instantiation {
    uniform(numeric, NumType::I64)
}

/// The same variables as `f64` where they may be (an integer, [`Numeric::Int`], stays `i64`).
pub fn float_instantiation(numeric: &[(TyVar, Numeric)]) -> Instantiation {
    uniform(numeric, NumType::F64)
}

/// The most instantiations [`instantiations`] lists for one site (each is a module that the
/// build compiles and the binary embeds).
pub const MAX_INSTANTIATIONS: usize = 16;

/// The distinct instantiations a host generates modules for, in a fixed order: first every
/// variable alike as far as its kind allows — `i64` ([`default_instantiation`]), `f64`
/// ([`float_instantiation`]), `i32`, `f32` — then every other combination of the types each
/// variable may be (`i64`, `f64`, `i32`, `f32` for a number, only the integers for an integer,
/// the floats for a float), the last variable varying fastest, at most [`MAX_INSTANTIATIONS`] in
/// all. Numbers of other types (beyond the cap, or a compared-only variable as `bool`) find no
/// module and run on the CPU targets.
pub fn instantiations(numeric: &[(TyVar, Numeric)]) -> Vec<Instantiation> {
    let mut out: Vec<Instantiation> = Vec::new();
    let add = |i: Instantiation, out: &mut Vec<Instantiation>| {
        if out.len() < MAX_INSTANTIATIONS && !out.contains(&i) {
            out.push(i);
        }
    };
    for like in [NumType::I64, NumType::F64, NumType::I32, NumType::F32] {
        add(uniform(numeric, like), &mut out);
    }
    // An odometer over the choices: stops once the cap is reached, however many variables.
    let mut digits = vec![0_usize; numeric.len()];
    while out.len() < MAX_INSTANTIATIONS {
        let inst = numeric
            .iter()
            .zip(&digits)
            .map(|((v, k), d)| (*v, choices(*k)[*d]))
            .collect();
        add(inst, &mut out);
        let mut k = digits.len();
        loop {
            if k == 0 {
                return out;
            }
            k -= 1;
            digits[k] += 1;
            if digits[k] < choices(numeric[k].1).len() {
                break;
            }
            digits[k] = 0;
        }
    }
    out
}

/// The part of a module's names that tells its instantiation: empty without type variables, else
/// `_` and the types in variable order (`_f64`, `_i64_f64`).
pub fn instantiation_suffix(inst: &Instantiation) -> String {
    inst.values().map(|t| format!("_{}", t.tag())).collect()
}

/// How to generate a module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaOptions {
    /// The start of every name the module defines (a C identifier): see [`crate::mangle::cuda_prefix`].
    pub prefix: String,
    /// The maximum tensor rank: the length of `pm_tensor::dims`. Every module of one program must
    /// use the same (the prelude is shared), and it must match the runtime's.
    pub max_rank: usize,
}

impl CudaOptions {
    /// Options for the site called `site_name` (`file:line:column`) with the default rank.
    pub fn for_site(site_name: &str) -> Self {
        CudaOptions {
            prefix: crate::mangle::cuda_prefix(site_name),
            max_rank: DEFAULT_MAX_RANK,
        }
    }
}

/// Why a site's CUDA code could not be generated: a construct the generator does not support.
#[derive(Debug, Clone)]
pub struct CudaGenError {
    /// What is not supported, naming the construct.
    pub message: String,
    /// The construct's tokens.
    pub span: SpanRange,
}

impl fmt::Display for CudaGenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CUDA code generation: {}", self.message)
    }
}

impl std::error::Error for CudaGenError {}

type Result<T> = std::result::Result<T, CudaGenError>;

fn unsupported<T>(span: SpanRange, message: impl Into<String>) -> Result<T> {
    Err(CudaGenError {
        message: message.into(),
        span,
    })
}

/// The memory layout of a kernel parameter, for the host that builds it (as a `#[repr(C)]`
/// mirror). Every parameter is passed by value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CLayout {
    /// `long long`.
    I64,
    /// `double`.
    F64,
    /// `int`, 4 bytes.
    I32,
    /// `float`, 4 bytes.
    F32,
    /// `bool`, one byte.
    Bool,
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
            CLayout::I64 | CLayout::F64 => (8, 8),
            CLayout::I32 | CLayout::F32 => (4, 4),
            CLayout::Bool | CLayout::Unit => (1, 1),
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

/// One kernel: a `par_loop` of host code.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// The `extern "C"` name (what the host looks up in the compiled module).
    pub name: String,
    /// The host binding whose body holds the `par_loop`: the accelerated binding, or a function
    /// that host code calls (see [`HostPlan::functions`]).
    pub binding: VarId,
    /// Its name.
    pub binding_name: String,
    /// Which `par_loop` of that binding's value it is, counting from 0 in [`Expr::walk`] order:
    /// how the host finds the node that this kernel replaces.
    pub ordinal: usize,
    /// The `par_loop`'s tokens.
    pub span: SpanRange,
    /// The `__device__` function called once per index.
    pub function: String,
    /// The parameters, in order: the bound arguments of the loop's function, then `n` (a
    /// `long long`). The launch covers `0..n` with any grid (a grid-stride loop); `n <= 0` does
    /// nothing.
    pub params: Vec<KernelParam>,
}

/// Host code that launches kernels in a way other than one after the other.
#[derive(Debug, Clone)]
pub struct HostNote {
    /// The host binding where it is.
    pub binding: VarId,
    /// What it is, in words.
    pub construct: String,
    /// Its tokens.
    pub span: SpanRange,
    /// The kernels launched inside it (indices into [`CudaModule::kernels`]).
    pub kernels: Vec<usize>,
}

/// What the host must do beyond launching the kernels: nothing here is generated, since host
/// code is sequential Rust.
#[derive(Debug, Clone)]
pub struct HostPlan {
    /// The bindings that run on the host and launch kernels, the accelerated binding first, then
    /// the functions that host code calls (or passes to a sequential loop) which launch kernels,
    /// directly or not. Every other function host code uses is plain sequential code.
    pub functions: Vec<(VarId, String)>,
    /// The host code around launches that is more than a sequence of `let`s: loops, branches
    /// and calls that contain launches.
    pub notes: Vec<HostNote>,
    /// Whether the accelerated binding launches its kernels one after the other, each once, with
    /// only sequential code (no kernels) around them: no notes, no host function but the
    /// accelerated binding. Host code that is not straight-line runs on the CUDA targets too
    /// (see `codegen::cuda_host`); this only tells which description fits.
    pub straight_line: bool,
    /// The result type of the accelerated expression (an `i32` or `f32` in it is still its type
    /// variable: PMExpr's types have no 32-bit numbers).
    pub result: Type,
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
}

impl DeviceError {
    /// Every error, by code.
    pub const ALL: [DeviceError; 13] = [
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

/// The CUDA code of one site.
#[derive(Debug, Clone)]
pub struct CudaModule {
    /// The CUDA C++ source, for NVRTC.
    pub source: String,
    /// The C++ namespace of the module's definitions (also the start of its kernels' names).
    pub namespace: String,
    /// The kernels: those of the accelerated binding, then those of each other host function
    /// ([`HostPlan::functions`], in order), each binding's in [`Expr::walk`] order.
    pub kernels: Vec<Kernel>,
    /// The runtime checks, by number (`checks[k].id == k + 1`).
    pub checks: Vec<Check>,
    /// What the host does around the launches.
    pub host: HostPlan,
    /// The maximum tensor rank the module was generated for.
    pub max_rank: usize,
}

/// Generates the CUDA code of a CUDA-class site for one instantiation of its numeric type
/// variables.
pub fn generate(
    program: &SiteProgram,
    inst: &Instantiation,
    options: &CudaOptions,
) -> Result<CudaModule> {
    let lifted = &program.lifted;
    if program.backend != Backend::Cuda {
        return unsupported(
            lifted.span,
            format!("a {} site has no CUDA code", program.backend),
        );
    }
    let defs: HashMap<VarId, &Def> = program
        .extracted
        .iter()
        .flat_map(|b| b.defs())
        .map(|d| (d.ident.id, d))
        .collect();
    let order: Vec<VarId> = program
        .extracted
        .iter()
        .flat_map(|b| b.defs())
        .map(|d| d.ident.id)
        .collect();
    let namespace = format!("{}{}", options.prefix, instantiation_suffix(inst));
    let mut g = Gen {
        inst,
        defs,
        order,
        records: Vec::new(),
        record_index: HashMap::new(),
        checks: Vec::new(),
        current: String::new(),
    };
    let Some(accelerated) = g.defs.get(&lifted.accelerated).copied() else {
        return unsupported(lifted.span, "the accelerated binding was not extracted");
    };
    let host = g.host_analysis(accelerated)?;
    // The device functions: what the kernels' functions reach.
    let roots: Vec<VarId> = host.loops.iter().map(|l| l.callee).collect();
    let device = g.reachable(&roots);
    let device_order: Vec<VarId> = g
        .order
        .iter()
        .copied()
        .filter(|id| device.contains(id))
        .collect();
    let mut prototypes = Vec::new();
    let mut functions = Vec::new();
    for id in &device_order {
        let def = g.defs[id];
        let (proto, text) = g.device_fn(def)?;
        prototypes.push(proto);
        functions.push(text);
    }
    let mut kernels = Vec::new();
    let mut kernel_texts = Vec::new();
    for (k, l) in host.loops.iter().enumerate() {
        let name = format!("{namespace}_k{k}");
        let (kernel, text) = g.kernel(name, l)?;
        kernels.push(kernel);
        kernel_texts.push(text);
    }
    let plan = HostPlan {
        functions: host
            .functions
            .iter()
            .map(|id| (*id, g.defs[id].ident.name.clone()))
            .collect(),
        straight_line: host.notes.is_empty() && host.functions.len() == 1,
        notes: host.notes,
        result: g.ity(&body_of(accelerated).ty, lifted.span)?,
    };

    // Assemble.
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// Generated by pmexpr: the CUDA code of one `accelerate!` site, for NVRTC (no header needed)."
    );
    if !inst.is_empty() {
        let vs: Vec<String> = inst
            .iter()
            .map(|(v, t)| format!("numeric type variable {} = {}", v.0, t.tag()))
            .collect();
        let _ = writeln!(out, "// Instantiation: {}.", vs.join(", "));
    }
    let _ = writeln!(out, "//");
    let _ = writeln!(out, "// Host side (not generated here):");
    for line in host_summary(&kernels, &plan, &g.shown(&plan.result)) {
        let _ = writeln!(out, "//   {line}");
    }
    out.push('\n');
    out.push_str(&PRELUDE.replace("@MAX_RANK@", &options.max_rank.to_string()));
    let _ = writeln!(out, "\nnamespace {namespace} {{");
    if !g.records.is_empty() {
        out.push_str("\n// ---- records (fields in label order) ----\n");
        for r in &g.records {
            let fields: Vec<String> = r.fields.iter().map(|(n, t)| format!("{t} {n};")).collect();
            let _ = writeln!(
                out,
                "struct {} {{ {} }};  // {}",
                r.name,
                fields.join(" "),
                r.rust
            );
        }
    }
    if !prototypes.is_empty() {
        out.push_str("\n// ---- device functions ----\n");
        for p in &prototypes {
            let _ = writeln!(out, "{p};");
        }
        for f in &functions {
            out.push('\n');
            out.push_str(f);
        }
    }
    out.push_str("\n// ---- kernels ----\n");
    for (k, text) in kernel_texts.iter().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        out.push_str(text);
    }
    let _ = writeln!(out, "\n}}  // namespace {namespace}");
    Ok(CudaModule {
        source: out,
        namespace,
        kernels,
        checks: g.checks,
        host: plan,
        max_rank: options.max_rank,
    })
}

/// The lines of the source's header comment that describe the host side.
fn host_summary(kernels: &[Kernel], plan: &HostPlan, result: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for k in kernels {
        let params: Vec<&str> = k.params.iter().map(|p| p.name.as_str()).collect();
        lines.push(format!(
            "{}({}): `par_loop` #{} of `{}`, calls `{}` for each index in 0..n",
            k.name,
            params.join(", "),
            k.ordinal,
            k.binding_name,
            k.function
        ));
    }
    if plan.straight_line {
        lines.push(format!(
            "the accelerated expression launches these in order, each once; the rest of it is \
             sequential code (result: {result})"
        ));
    } else {
        let fns: Vec<&str> = plan.functions.iter().map(|(_, n)| n.as_str()).collect();
        lines.push(format!(
            "host functions that launch kernels: {}",
            fns.join(", ")
        ));
        for n in &plan.notes {
            let ks: Vec<String> = n.kernels.iter().map(|k| format!("k{k}")).collect();
            lines.push(format!("{} (launches {})", n.construct, ks.join(", ")));
        }
    }
    lines
}

/// A `par_loop` of host code, before its kernel is generated.
struct HostLoop<'a> {
    binding: VarId,
    ordinal: usize,
    node: &'a Expr,
    callee: VarId,
}

struct HostAnalysis<'a> {
    functions: Vec<VarId>,
    loops: Vec<HostLoop<'a>>,
    notes: Vec<HostNote>,
}

/// A record type the module defines.
struct RecordStruct {
    name: String,
    /// The Rust spelling, for the comment.
    rust: String,
    fields: Vec<(String, String)>,
}

struct Gen<'a> {
    inst: &'a Instantiation,
    defs: HashMap<VarId, &'a Def>,
    /// The extracted definitions, in dependency order.
    order: Vec<VarId>,
    records: Vec<RecordStruct>,
    record_index: HashMap<Type, usize>,
    checks: Vec<Check>,
    /// The C name of the device function being generated.
    current: String,
}

/// The statements of one function body under construction.
struct Block {
    lines: Vec<(usize, String)>,
    depth: usize,
    /// Variables in scope → the C expression for their value.
    env: HashMap<VarId, String>,
    /// Variables bound to a record literal → its fields (each a name or a literal): such a
    /// record is never stored, its projections and patterns read the fields.
    records: HashMap<VarId, Scrut>,
    fresh: usize,
}

impl Block {
    fn emit(&mut self, line: impl Into<String>) {
        self.lines.push((self.depth, line.into()));
    }

    fn fresh(&mut self, stem: &str) -> String {
        self.fresh += 1;
        format!("{stem}{}", self.fresh)
    }
}

/// Where the value of an expression goes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Dest {
    /// A new `const` local of this name (a `let`).
    Decl(String),
    /// An existing variable (the result of a branch or the accumulator of a loop).
    Assign(String),
    /// `return` from the function.
    Return,
}

/// A function argument of a loop or fold: a function and its bound arguments, or an intrinsic.
enum Callee {
    Fn {
        name: String,
        args: Vec<String>,
        arity: usize,
    },
    Intrinsic(Intrinsic),
}

/// The parameters and body of a definition (`lam x. lam y. e`, nested or merged).
fn lambda_of(def: &Def) -> (Vec<&Param>, &Expr) {
    let mut params = Vec::new();
    let mut e = &def.value;
    while let ExprKind::Lam { params: ps, body } = &e.kind {
        params.extend(ps.iter());
        e = body;
    }
    (params, e)
}

fn body_of(def: &Def) -> &Expr {
    lambda_of(def).1
}

/// A C identifier for a PMExpr name with its unique identifier: `x_7`. Non-ASCII characters and
/// leading underscores go; the identifier suffix keeps names apart from C++ keywords, the
/// prelude's `pm_*` and the generated temporaries (which have no `_`).
fn c_ident(name: &str, id: VarId) -> String {
    if name == format!("lambda{}", id.0) {
        return name.to_string();
    }
    let clean: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let clean = clean.trim_start_matches('_');
    let clean = if clean.is_empty() || clean.starts_with(|c: char| c.is_ascii_digit()) {
        format!("v{clean}")
    } else {
        clean.to_string()
    };
    format!("{clean}_{}", id.0)
}

/// C++ keywords that are also legal Rust field names.
const CPP_KEYWORDS: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "case",
    "catch",
    "char",
    "class",
    "compl",
    "concept",
    "const_cast",
    "constexpr",
    "consteval",
    "constinit",
    "co_await",
    "co_return",
    "co_yield",
    "decltype",
    "default",
    "delete",
    "double",
    "dynamic_cast",
    "explicit",
    "export",
    "float",
    "friend",
    "goto",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "short",
    "signed",
    "sizeof",
    "static_assert",
    "static_cast",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "xor",
    "xor_eq",
];

/// The C name of a record field: `_0` for a tuple position, the name otherwise (with `_`
/// appended to a C++ keyword).
fn field_name(l: &Label) -> String {
    match l {
        Label::Index(i) => format!("_{i}"),
        Label::Name(n) => {
            let clean: String = n
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            if CPP_KEYWORDS.contains(&clean.as_str()) || clean.starts_with('_') {
                format!("{clean}_")
            } else {
                clean
            }
        }
    }
}

/// Whether a C expression is a name or a literal (cheap and safe to repeat).
fn is_atom(c: &str) -> bool {
    !c.is_empty()
        && c.chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '.')
}

fn int_lit(i: i64) -> String {
    if i == i64::MIN {
        "(-9223372036854775807LL - 1LL)".into()
    } else if i < 0 {
        format!("({i}LL)")
    } else {
        format!("{i}LL")
    }
}

fn float_lit(x: f64) -> String {
    if x.is_nan() {
        "__longlong_as_double(0x7ff8000000000000LL)".into()
    } else if x.is_infinite() {
        let bits = if x > 0.0 {
            "0x7ff0000000000000LL"
        } else {
            "(long long)0xfff0000000000000ULL"
        };
        format!("__longlong_as_double({bits})")
    } else {
        // `{:?}` prints the shortest text that reads back exactly, always with a `.` or an `e`,
        // which is also a C++ `double` literal.
        let s = format!("{x:?}");
        if x.is_sign_negative() {
            format!("({s})")
        } else {
            s
        }
    }
}

/// An `i32` literal (C++ `int`).
fn int32_lit(i: i32) -> String {
    if i == i32::MIN {
        "(-2147483647 - 1)".into()
    } else if i < 0 {
        format!("({i})")
    } else {
        i.to_string()
    }
}

/// An `f32` literal (C++ `float`): never a `double`, which would widen the arithmetic around it.
fn float32_lit(x: f32) -> String {
    if x.is_nan() {
        "__int_as_float(0x7fc00000)".into()
    } else if x.is_infinite() {
        // 0xff800000 as an `int`: a hexadecimal literal that large would be unsigned.
        let bits = if x > 0.0 { "0x7f800000" } else { "(-8388608)" };
        format!("__int_as_float({bits})")
    } else {
        // `{:?}` prints the shortest text that reads back as this `f32`, always with a `.` or an
        // `e`; with `f` it is a C++ `float` literal, which the compiler rounds the same way.
        let s = format!("{x:?}f");
        if x.is_sign_negative() {
            format!("({s})")
        } else {
            s
        }
    }
}

/// A literal as C++: a value, or a call that records that it does not fit and gives 0.
enum Literal {
    Value(String),
    Fails(String),
}

const UNIT: &str = "pm_unit{}";

impl<'a> Gen<'a> {
    // ----- types -----

    /// The type with the numeric type variables instantiated: those of the 64-bit numbers and
    /// `bool` become those types; those of `i32` and `f32` stay variables (PMExpr has no type
    /// for them), which [`Gen::num`] and the C types resolve.
    fn ity(&self, t: &Type, span: SpanRange) -> Result<Type> {
        Ok(match t {
            Type::Var(v) => match self.inst.get(v) {
                Some(n) => n.ty().unwrap_or(Type::Var(*v)),
                None => {
                    return unsupported(
                        span,
                        format!(
                            "the numeric type variable {} has no instantiation (i64, f64, i32 or f32)",
                            v.0
                        ),
                    );
                }
            },
            Type::Int | Type::Float | Type::Bool => t.clone(),
            Type::Seq(a) => Type::seq(self.ity(a, span)?),
            Type::Tensor(a) => Type::tensor(self.ity(a, span)?),
            Type::Arrow(a, b) => Type::arrow(self.ity(a, span)?, self.ity(b, span)?),
            Type::Record(fs) => Type::Record(
                fs.iter()
                    .map(|(l, t)| Ok((l.clone(), self.ity(t, span)?)))
                    .collect::<Result<_>>()?,
            ),
        })
    }

    /// The number (or `bool`) an instantiated type is, if it is one.
    fn num(&self, t: &Type) -> Option<NumType> {
        match t {
            Type::Int => Some(NumType::I64),
            Type::Float => Some(NumType::F64),
            Type::Bool => Some(NumType::Bool),
            Type::Var(v) => self.inst.get(v).copied(),
            _ => None,
        }
    }

    /// An instantiated type as Rust spells it, for comments (`Tensor<f32>`; [`Type`]'s own
    /// printout shows a variable as `_`).
    fn shown(&self, t: &Type) -> String {
        let list = |ts: &mut dyn Iterator<Item = &Type>| -> Vec<String> {
            ts.map(|t| self.shown(t)).collect()
        };
        match t {
            Type::Var(v) => self
                .inst
                .get(v)
                .map_or_else(|| t.to_string(), |n| n.tag().to_string()),
            Type::Seq(a) => format!("Vec<{}>", self.shown(a)),
            Type::Tensor(a) => format!("Tensor<{}>", self.shown(a)),
            Type::Arrow(..) => {
                let mut params = Vec::new();
                let mut r = t;
                while let Type::Arrow(a, b) = r {
                    params.push(self.shown(a));
                    r = b;
                }
                format!("fn({}) -> {}", params.join(", "), self.shown(r))
            }
            Type::Record(fs) if Type::is_tuple_record(fs) => {
                let parts = list(&mut fs.iter().map(|(_, t)| t));
                match parts.len() {
                    0 => "()".into(),
                    1 => format!("({},)", parts[0]),
                    _ => format!("({})", parts.join(", ")),
                }
            }
            Type::Record(fs) => {
                let parts: Vec<String> = fs
                    .iter()
                    .map(|(l, t)| format!("{l}: {}", self.shown(t)))
                    .collect();
                format!("{{ {} }}", parts.join(", "))
            }
            Type::Int | Type::Float | Type::Bool => t.to_string(),
        }
    }

    /// The C type of a (possibly not instantiated) PMExpr type; defines record structs on first
    /// use, fields first.
    fn c_type(&mut self, t: &Type, span: SpanRange) -> Result<String> {
        let t = self.ity(t, span)?;
        self.c_type_of(&t, span)
    }

    fn c_type_of(&mut self, t: &Type, span: SpanRange) -> Result<String> {
        Ok(match t {
            Type::Int => NumType::I64.c_type().into(),
            Type::Float => NumType::F64.c_type().into(),
            Type::Bool => NumType::Bool.c_type().into(),
            Type::Var(v) => match self.inst.get(v) {
                Some(n) if n.ty().is_none() => n.c_type().into(),
                _ => {
                    let t = self.ity(t, span)?;
                    return self.c_type_of(&t, span);
                }
            },
            Type::Record(fs) if fs.is_empty() => "pm_unit".into(),
            Type::Seq(a) => format!("pm_seq<{}>", self.c_type_of(a, span)?),
            Type::Tensor(a) => match self.num(a) {
                Some(n) if n != NumType::Bool => {
                    format!("pm_tensor<{}>", self.c_type_of(a, span)?)
                }
                _ => {
                    return unsupported(
                        span,
                        format!(
                            "a tensor of `{}` (tensors hold i64, f64, i32 or f32)",
                            self.shown(a)
                        ),
                    );
                }
            },
            Type::Record(fs) => {
                if let Some(&i) = self.record_index.get(t) {
                    return Ok(self.records[i].name.clone());
                }
                let mut fields = Vec::new();
                for (l, ft) in fs {
                    fields.push((field_name(l), self.c_type_of(ft, span)?));
                }
                let stem = if Type::is_tuple_record(fs) {
                    "tuple"
                } else {
                    "record"
                };
                let name = format!("{stem}{}", self.records.len());
                self.record_index.insert(t.clone(), self.records.len());
                self.records.push(RecordStruct {
                    name: name.clone(),
                    rust: self.shown(t),
                    fields,
                });
                name
            }
            Type::Arrow(..) => {
                return unsupported(
                    span,
                    format!("a value of function type `{}` in CUDA code", self.shown(t)),
                );
            }
        })
    }

    /// The C return type: `void` for unit.
    fn ret_type(&mut self, t: &Type, span: SpanRange) -> Result<String> {
        if self.ity(t, span)?.is_unit() {
            Ok("void".into())
        } else {
            self.c_type(t, span)
        }
    }

    fn layout(&mut self, t: &Type, span: SpanRange) -> Result<CLayout> {
        let t = self.ity(t, span)?;
        Ok(match &t {
            Type::Int | Type::Float | Type::Bool | Type::Var(_) => match self.num(&t) {
                Some(NumType::I64) => CLayout::I64,
                Some(NumType::F64) => CLayout::F64,
                Some(NumType::I32) => CLayout::I32,
                Some(NumType::F32) => CLayout::F32,
                Some(NumType::Bool) => CLayout::Bool,
                None => {
                    return unsupported(span, format!("a kernel parameter of type `{t}`"));
                }
            },
            Type::Record(fs) if fs.is_empty() => CLayout::Unit,
            Type::Seq(a) => CLayout::Seq(Box::new(self.layout(a, span)?)),
            Type::Tensor(a) => CLayout::Tensor(Box::new(self.layout(a, span)?)),
            Type::Record(fs) => {
                let name = self.c_type_of(&t, span)?;
                let mut fields = Vec::new();
                for (l, ft) in fs {
                    fields.push((field_name(l), self.layout(ft, span)?));
                }
                CLayout::Struct { name, fields }
            }
            Type::Arrow(..) => {
                return unsupported(
                    span,
                    format!("a kernel parameter of type `{}`", self.shown(&t)),
                );
            }
        })
    }

    fn is_unit(&self, t: &Type) -> bool {
        matches!(t, Type::Record(fs) if fs.is_empty())
    }

    // ----- host analysis -----

    /// The functions (extracted definitions) whose value refers to a definition.
    fn refs(&self, e: &Expr) -> Vec<VarId> {
        let mut out = Vec::new();
        e.walk(&mut |x| {
            if let ExprKind::Var { ident, .. } = &x.kind
                && self.defs.contains_key(&ident.id)
                && !out.contains(&ident.id)
            {
                out.push(ident.id);
            }
        });
        out
    }

    /// The definitions reachable from `roots` through references, roots included.
    fn reachable(&self, roots: &[VarId]) -> HashSet<VarId> {
        let mut seen: HashSet<VarId> = HashSet::new();
        let mut todo: Vec<VarId> = roots.to_vec();
        while let Some(id) = todo.pop() {
            if !seen.insert(id) {
                continue;
            }
            if let Some(d) = self.defs.get(&id) {
                todo.extend(self.refs(&d.value));
            }
        }
        seen
    }

    /// Finds the host code: the accelerated binding and the functions it calls (or passes to a
    /// sequential loop) that launch kernels; the `par_loop`s in them become kernels.
    fn host_analysis(&mut self, accelerated: &'a Def) -> Result<HostAnalysis<'a>> {
        // The definitions that contain a `par_loop`, directly or through what they reference.
        let mut launching: HashSet<VarId> = self
            .order
            .iter()
            .copied()
            .filter(|id| has_par_loop(&self.defs[id].value))
            .collect();
        loop {
            let more: Vec<VarId> = self
                .order
                .iter()
                .copied()
                .filter(|id| !launching.contains(id))
                .filter(|id| {
                    self.refs(&self.defs[id].value)
                        .iter()
                        .any(|r| launching.contains(r))
                })
                .collect();
            if more.is_empty() {
                break;
            }
            launching.extend(more);
        }
        let mut functions = vec![accelerated.ident.id];
        let mut loops = Vec::new();
        let mut host_refs: HashMap<VarId, Vec<VarId>> = HashMap::new();
        let mut k = 0;
        while k < functions.len() {
            let id = functions[k];
            k += 1;
            let def: &'a Def = self.defs[&id];
            let mut nodes: Vec<&'a Expr> = Vec::new();
            def.value.walk(&mut |x| {
                if matches!(
                    x.kind,
                    ExprKind::Keyword {
                        kw: Keyword::ParLoop,
                        ..
                    }
                ) {
                    nodes.push(x);
                }
            });
            // The function argument of each loop runs on the device; its head is not a host use.
            let mut heads: HashSet<*const Expr> = HashSet::new();
            for (ordinal, node) in nodes.iter().enumerate() {
                let ExprKind::Keyword { args, .. } = &node.kind else {
                    unreachable!("collected as par_loop")
                };
                let f = &args[1];
                let head = match &f.kind {
                    ExprKind::App { func, .. } => &**func,
                    _ => f,
                };
                let callee = match &head.kind {
                    ExprKind::Var { ident, .. } if self.defs.contains_key(&ident.id) => ident.id,
                    _ => {
                        return unsupported(
                            f.span,
                            "the function argument of `par_loop` must name a function (or \
                             partially apply one)",
                        );
                    }
                };
                heads.insert(head as *const Expr);
                loops.push(HostLoop {
                    binding: id,
                    ordinal,
                    node,
                    callee,
                });
            }
            let mut uses = Vec::new();
            def.value.walk(&mut |x| {
                if let ExprKind::Var { ident, .. } = &x.kind
                    && launching.contains(&ident.id)
                    && ident.id != id
                    && !heads.contains(&(x as *const Expr))
                    && !uses.contains(&ident.id)
                {
                    uses.push(ident.id);
                }
            });
            for u in &uses {
                if !functions.contains(u) {
                    functions.push(*u);
                }
            }
            host_refs.insert(id, uses);
        }
        // The kernels each host function launches, through the host functions it uses too.
        let mut launches: HashMap<VarId, BTreeSet<usize>> = HashMap::new();
        for (i, l) in loops.iter().enumerate() {
            launches.entry(l.binding).or_default().insert(i);
        }
        loop {
            let mut changed = false;
            for f in &functions {
                let extra: BTreeSet<usize> = host_refs[f]
                    .iter()
                    .flat_map(|u| launches.get(u).cloned().unwrap_or_default())
                    .collect();
                let entry = launches.entry(*f).or_default();
                let before = entry.len();
                entry.extend(extra);
                changed |= entry.len() != before;
            }
            if !changed {
                break;
            }
        }
        let kernel_of: HashMap<*const Expr, usize> = loops
            .iter()
            .enumerate()
            .map(|(i, l)| (l.node as *const Expr, i))
            .collect();
        let mut notes = Vec::new();
        for f in &functions {
            let def = self.defs[f];
            let cx = NoteCx {
                binding: *f,
                kernel_of: &kernel_of,
                launches: &launches,
                host_fns: &functions,
                names: &self.defs,
            };
            cx.walk(&def.value, &mut notes);
        }
        Ok(HostAnalysis {
            functions,
            loops,
            notes,
        })
    }

    // ----- kernels -----

    fn kernel(&mut self, name: String, l: &HostLoop<'_>) -> Result<(Kernel, String)> {
        let ExprKind::Keyword { args, .. } = &l.node.kind else {
            unreachable!("a par_loop node")
        };
        let (n, f) = (&args[0], &args[1]);
        let bound: &[Expr] = match &f.kind {
            ExprKind::App { args, .. } => args,
            _ => &[],
        };
        let def = self.defs[&l.callee];
        let (params, body) = lambda_of(def);
        if params.len() != bound.len() + 1 {
            return unsupported(
                f.span,
                format!(
                    "`par_loop` needs a function of one index; `{}` takes {} parameters and is given {}",
                    def.ident.name,
                    params.len(),
                    bound.len()
                ),
            );
        }
        let function = c_ident(&def.ident.name, def.ident.id);
        let mut kparams = Vec::new();
        for (p, value) in params.iter().zip(bound) {
            kparams.push(KernelParam {
                name: c_ident(&p.ident.name, p.ident.id),
                ty: self.ity(&p.ty, value.span)?,
                c_type: self.c_type(&p.ty, value.span)?,
                layout: self.layout(&p.ty, value.span)?,
                value: value.clone(),
            });
        }
        kparams.push(KernelParam {
            name: "n".into(),
            ty: Type::Int,
            c_type: "long long".into(),
            layout: CLayout::I64,
            value: n.clone(),
        });
        let index_ty = self.ity(&params[params.len() - 1].ty, f.span)?;
        if index_ty != Type::Int || !self.ity(&body.ty, f.span)?.is_unit() {
            return unsupported(
                f.span,
                format!(
                    "`par_loop` needs a function from the index (`i64`) to `()`; `{}` is `{}`",
                    def.ident.name, def.value.ty
                ),
            );
        }
        let decl: Vec<String> = kparams
            .iter()
            .map(|p| format!("{} {}", p.c_type, p.name))
            .collect();
        let mut call_args: Vec<&str> = kparams[..kparams.len() - 1]
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        call_args.push("i");
        let binding_name = self.defs[&l.binding].ident.name.clone();
        let mut text = String::new();
        let _ = writeln!(
            text,
            "// `par_loop` #{} of `{binding_name}`: `{}` for every index in 0..n.",
            l.ordinal, def.ident.name
        );
        let _ = writeln!(
            text,
            "extern \"C\" __global__ void {name}({}) {{",
            decl.join(", ")
        );
        let _ = writeln!(
            text,
            "    const long long stride = (long long)gridDim.x * blockDim.x;"
        );
        let _ = writeln!(
            text,
            "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {{"
        );
        let _ = writeln!(text, "        {function}({});", call_args.join(", "));
        let _ = writeln!(text, "    }}");
        let _ = writeln!(text, "}}");
        Ok((
            Kernel {
                name,
                binding: l.binding,
                binding_name,
                ordinal: l.ordinal,
                span: l.node.span,
                function,
                params: kparams,
            },
            text,
        ))
    }

    // ----- device functions -----

    /// A device function: its prototype and its definition.
    fn device_fn(&mut self, def: &Def) -> Result<(String, String)> {
        let (params, body) = lambda_of(def);
        if !matches!(def.value.kind, ExprKind::Lam { .. }) {
            return unsupported(
                def.ident.span,
                format!(
                    "`{}` is used on the device but is not a function",
                    def.ident.name
                ),
            );
        }
        let name = c_ident(&def.ident.name, def.ident.id);
        self.current = name.clone();
        let mut b = Block {
            lines: Vec::new(),
            depth: 1,
            env: HashMap::new(),
            records: HashMap::new(),
            fresh: 0,
        };
        let mut decl = Vec::new();
        for p in &params {
            let c = c_ident(&p.ident.name, p.ident.id);
            decl.push(format!("{} {c}", self.c_type(&p.ty, p.ident.span)?));
            b.env.insert(p.ident.id, c);
        }
        let ret = self.ret_type(&body.ty, body.span)?;
        let proto = format!("__device__ {ret} {name}({})", decl.join(", "));
        self.value(&mut b, body, Some(Dest::Return))?;
        let mut text = String::new();
        let ty = self.ity(&def.value.ty, def.ident.span)?;
        let origin = match &def.origin {
            Origin::Item(i) => format!(" (#[pmexpr] fn at {})", i.location),
            Origin::Local | Origin::Site => String::new(),
        };
        let _ = writeln!(text, "// `{}`: {}{origin}", def.ident.name, self.shown(&ty));
        let _ = writeln!(text, "{proto} {{");
        for (depth, line) in &b.lines {
            let _ = writeln!(text, "{}{line}", "    ".repeat(*depth));
        }
        let _ = writeln!(text, "}}");
        Ok((proto, text))
    }

    /// A literal of the instantiated type `ty`. An integer literal that does not fit an `i32`
    /// fails when it is evaluated, as on the CPU targets (where the Rust type is known only at
    /// run time, so the check is a run-time one there too).
    fn lit(&mut self, l: &Lit, ty: &Type, span: SpanRange) -> Literal {
        Literal::Value(match (l, self.num(ty)) {
            (Lit::Int(i), Some(NumType::I32)) => match i32::try_from(*i) {
                Ok(x) => int32_lit(x),
                Err(_) => {
                    let chk = self.check("integer literal", span);
                    return Literal::Fails(format!(
                        "pm_literal_too_big<int>({chk}, {})",
                        int_lit(*i)
                    ));
                }
            },
            // Rounded once, to the nearest `f32`, as Rust's `as f32` does; the shortest text
            // that reads back as that `f32` is a C++ `float` literal with `f` appended.
            (Lit::Float(x), Some(NumType::F32)) => float32_lit(*x as f32),
            (Lit::Int(i), _) => int_lit(*i),
            (Lit::Float(x), _) => float_lit(*x),
            (Lit::Bool(v), _) => v.to_string(),
            (Lit::Unit, _) => UNIT.into(),
        })
    }

    /// Registers a runtime check; its number.
    fn check(&mut self, construct: &str, span: SpanRange) -> u32 {
        let id = self.checks.len() as u32 + 1;
        self.checks.push(Check {
            id,
            construct: construct.to_string(),
            function: self.current.clone(),
            span,
        });
        id
    }

    /// Delivers a C expression without effects to `dest`: a `const` local (a `let`), an
    /// assignment to a result variable, or a `return`; without `dest`, the expression itself.
    fn finish(
        &mut self,
        b: &mut Block,
        ty: &Type,
        c: String,
        dest: Option<Dest>,
        span: SpanRange,
    ) -> Result<String> {
        if self.is_unit(ty) {
            return Ok(UNIT.into());
        }
        // A temporary declared by the line before, delivered now, is that line's expression
        // (temporaries are used once, so the declaration can go).
        let c = match (&dest, b.lines.last()) {
            (Some(_), Some((depth, line))) if *depth == b.depth && is_temp(&c) => {
                let init = line
                    .strip_prefix("const ")
                    .and_then(|l| l.split_once(&format!(" {c} = ")))
                    .and_then(|(_, e)| e.strip_suffix(';'))
                    .map(str::to_string);
                match init {
                    Some(e) => {
                        b.lines.pop();
                        e
                    }
                    None => c,
                }
            }
            _ => c,
        };
        match dest {
            None => Ok(c),
            Some(Dest::Decl(h)) => {
                let t = self.c_type_of(ty, span)?;
                b.emit(format!("const {t} {h} = {};", strip_parens(&c)));
                Ok(h)
            }
            Some(Dest::Assign(r)) => {
                if r != c {
                    b.emit(format!("{r} = {};", strip_parens(&c)));
                }
                Ok(r)
            }
            Some(Dest::Return) => {
                b.emit(format!("return {};", strip_parens(&c)));
                Ok(String::new())
            }
        }
    }

    /// A C expression with effects (a call, a checked access): evaluated now, as a statement, so
    /// that effects happen in PMExpr's order (C++ leaves the order of arguments unspecified).
    fn bind(
        &mut self,
        b: &mut Block,
        ty: &Type,
        c: String,
        dest: Option<Dest>,
        span: SpanRange,
    ) -> Result<String> {
        if self.is_unit(ty) {
            b.emit(format!("{c};"));
            return Ok(UNIT.into());
        }
        let dest = dest.unwrap_or_else(|| Dest::Decl(b.fresh("tmp")));
        self.finish(b, ty, c, Some(dest), span)
    }

    /// Translates `e`, emitting statements into `b`; returns a C expression for its value that
    /// has no effects and reads only locals that never change afterwards.
    fn value(&mut self, b: &mut Block, e: &Expr, dest: Option<Dest>) -> Result<String> {
        let ty = self.ity(&e.ty, e.span)?;
        match &e.kind {
            ExprKind::Var { ident, .. } => match b.env.get(&ident.id) {
                Some(c) => {
                    let c = c.clone();
                    self.finish(b, &ty, c, dest, e.span)
                }
                None if self.defs.contains_key(&ident.id) => unsupported(
                    e.span,
                    format!(
                        "the function `{}` used as a value (CUDA code calls functions, or passes \
                         them to loops and folds)",
                        ident.name
                    ),
                ),
                None => unsupported(e.span, format!("`{}` is not in scope", ident.name)),
            },
            ExprKind::Lit(l) => match self.lit(l, &ty, e.span) {
                // Failing is an effect: it happens in PMExpr's order.
                Literal::Fails(c) => self.bind(b, &ty, c, dest, e.span),
                Literal::Value(c) => self.finish(b, &ty, c, dest, e.span),
            },
            ExprKind::Intrinsic(i) => unsupported(
                e.span,
                format!("the intrinsic `{}` used as a value", i.name()),
            ),
            ExprKind::Lam { .. } => unsupported(e.span, "a lambda inside CUDA code (not lifted)"),
            ExprKind::RecLet { .. } => {
                unsupported(e.span, "`fn` items inside CUDA code (not lifted)")
            }
            ExprKind::BinOp { op, .. } => unsupported(
                e.span,
                format!(
                    "the operator `{}` (not resolved to an intrinsic)",
                    op.symbol()
                ),
            ),
            ExprKind::Neg(_) => unsupported(e.span, "unary `-` (not resolved to an intrinsic)"),
            ExprKind::App { func, args } => match &func.kind {
                ExprKind::Intrinsic(i) => self.intrinsic(b, *i, args, &ty, dest, e.span),
                ExprKind::Var { ident, .. } if self.defs.contains_key(&ident.id) => {
                    let def = self.defs[&ident.id];
                    let arity = lambda_of(def).0.len();
                    if args.len() != arity {
                        return unsupported(
                            e.span,
                            format!(
                                "`{}` applied to {} of its {arity} arguments outside the function \
                                 argument of a loop or fold",
                                ident.name,
                                args.len()
                            ),
                        );
                    }
                    let mut cargs = Vec::new();
                    for a in args {
                        cargs.push(self.value(b, a, None)?);
                    }
                    let call = format!(
                        "{}({})",
                        c_ident(&def.ident.name, def.ident.id),
                        cargs.join(", ")
                    );
                    self.bind(b, &ty, call, dest, e.span)
                }
                _ => unsupported(
                    func.span,
                    "a call of a function value (CUDA code calls named functions only)",
                ),
            },
            ExprKind::Let {
                binder,
                value,
                body,
                ..
            } => {
                let bty = self.ity(&binder.ty, binder.ident.span)?;
                let wildcard = binder.ident.name == "_";
                if !wildcard
                    && let ExprKind::Record(fs) = &value.kind
                    && !fs.is_empty()
                {
                    let scrut = self.record_fields(b, value, fs)?;
                    b.env.insert(binder.ident.id, scrut.c());
                    b.records.insert(binder.ident.id, scrut);
                    return self.value(b, body, dest);
                }
                let name = (!wildcard && !self.is_unit(&bty))
                    .then(|| c_ident(&binder.ident.name, binder.ident.id));
                let v = self.value(b, value, name.map(Dest::Decl))?;
                if !wildcard {
                    b.env.insert(binder.ident.id, v);
                }
                self.value(b, body, dest)
            }
            ExprKind::Match {
                scrutinee,
                pat,
                then,
                otherwise,
            } => self.match_(b, e, scrutinee, pat, then, otherwise, dest),
            ExprKind::Never(kind) => {
                let (code, construct) = match kind {
                    NeverKind::User => ("PM_NEVER", "never!()"),
                    NeverKind::NoArm => ("PM_NO_MATCH", "match"),
                };
                let chk = self.check(construct, e.span);
                if self.is_unit(&ty) {
                    b.emit(format!("pm_fail({code}, {chk}, 0, 0);"));
                    Ok(UNIT.into())
                } else {
                    let t = self.c_type_of(&ty, e.span)?;
                    self.bind(
                        b,
                        &ty,
                        format!("pm_fail_value<{t}>({code}, {chk})"),
                        dest,
                        e.span,
                    )
                }
            }
            ExprKind::Record(fs) => {
                if fs.is_empty() {
                    return Ok(UNIT.into());
                }
                // Fields are evaluated in the order written, and stored in label order.
                let mut vals: HashMap<&Label, String> = HashMap::new();
                for (l, x) in fs {
                    let v = self.value(b, x, None)?;
                    vals.insert(l, v);
                }
                let Type::Record(tfs) = &ty else {
                    return unsupported(e.span, format!("a record of type `{ty}`"));
                };
                let name = self.c_type_of(&ty, e.span)?;
                let mut items = Vec::new();
                for (l, _) in tfs {
                    match vals.get(l) {
                        Some(v) => items.push(v.clone()),
                        None => {
                            return unsupported(e.span, format!("a record without field `{l}`"));
                        }
                    }
                }
                self.finish(
                    b,
                    &ty,
                    format!("{name}{{{}}}", items.join(", ")),
                    dest,
                    e.span,
                )
            }
            ExprKind::Proj { expr, label } => {
                if let ExprKind::Var { ident, .. } = &expr.kind
                    && let Some(Scrut::Fields(..)) = b.records.get(&ident.id)
                {
                    let c = b.records[&ident.id].field(label).c();
                    return self.finish(b, &ty, c, dest, e.span);
                }
                let r = self.value(b, expr, None)?;
                if self.is_unit(&ty) {
                    return Ok(UNIT.into());
                }
                let c = format!("{r}.{}", field_name(label));
                self.finish(b, &ty, c, dest, e.span)
            }
            ExprKind::Seq(_) => unsupported(
                e.span,
                "a sequence literal outside a tensor index (CUDA code cannot build sequences)",
            ),
            ExprKind::Keyword { kw, args } => self.keyword(b, e, *kw, args, &ty, dest),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn match_(
        &mut self,
        b: &mut Block,
        e: &Expr,
        scrutinee: &Expr,
        pat: &Pat,
        then: &Expr,
        otherwise: &Expr,
        dest: Option<Dest>,
    ) -> Result<String> {
        let ty = self.ity(&e.ty, e.span)?;
        let sty = self.ity(&scrutinee.ty, scrutinee.span)?;
        let s = match (&scrutinee.kind, &pat.kind, &sty) {
            // `match (a, b) { (true, x) => … }`: the fields are matched one by one, and the
            // record is never built.
            (ExprKind::Record(fs), PatKind::Record(pfs), Type::Record(tfs)) if !fs.is_empty() => {
                let mut vals: HashMap<&Label, String> = HashMap::new();
                for (l, x) in fs {
                    let mut v = self.value(b, x, None)?;
                    let uses = pfs
                        .iter()
                        .find(|(pl, _)| pl == l)
                        .map_or(0, |(_, p)| pattern_uses(p));
                    if uses > 1 && !is_atom(&v) {
                        let xty = self.ity(&x.ty, x.span)?;
                        v = self.bind(b, &xty, v, None, x.span)?;
                    }
                    vals.insert(l, v);
                }
                let name = self.c_type_of(&sty, scrutinee.span)?;
                let fields = tfs
                    .iter()
                    .map(|(l, _)| (l.clone(), Scrut::Value(vals.remove(l).unwrap_or_default())))
                    .collect();
                Scrut::Fields(name, fields)
            }
            (ExprKind::Var { ident, .. }, PatKind::Record(_), _)
                if b.records.contains_key(&ident.id) =>
            {
                b.records[&ident.id].clone()
            }
            _ => {
                let mut s = self.value(b, scrutinee, None)?;
                if pattern_uses(pat) > 1 && !is_atom(&s) {
                    s = self.bind(b, &sty, s, None, scrutinee.span)?;
                }
                Scrut::Value(s)
            }
        };
        let Some(cond) = self.pattern_cond(pat, &s)? else {
            // Irrefutable (a `let` of a tuple): bind and go on; the other branch cannot run.
            self.bind_pattern(b, pat, &s)?;
            return self.value(b, then, dest);
        };
        let unit = self.is_unit(&ty);
        // Both branches deliver their value to one target: a result variable declared here
        // (`declare`), the caller's variable, or a `return`.
        let (target, declare) = match dest {
            _ if unit => (None, None),
            Some(Dest::Assign(r)) => (Some(Dest::Assign(r)), None),
            Some(Dest::Return) => (Some(Dest::Return), None),
            Some(Dest::Decl(h)) => (Some(Dest::Assign(h.clone())), Some(h)),
            None => {
                let r = b.fresh("res");
                (Some(Dest::Assign(r.clone())), Some(r))
            }
        };
        let mark = b.lines.len();
        b.depth += 1;
        self.bind_pattern(b, pat, &s)?;
        self.value(b, then, target.clone())?;
        let then_lines = b.lines.split_off(mark);
        self.value(b, otherwise, target.clone())?;
        let else_lines = b.lines.split_off(mark);
        b.depth -= 1;
        // `c ? x : y` when each branch is one delivery and the target is ours (a nested
        // conditional assigning its parent's variable stays an `if`, to chain as `else if`).
        let prefix = match &target {
            Some(Dest::Assign(r)) if declare.is_some() => Some(format!("{r} = ")),
            Some(Dest::Return) => Some("return ".to_string()),
            _ => None,
        };
        if let Some(prefix) = &prefix
            && let (Some(x), Some(y)) = (
                single_delivery(&then_lines, prefix),
                single_delivery(&else_lines, prefix),
            )
        {
            let c = format!("{cond} ? {} : {}", wrap(x), wrap(y));
            return match (declare, target) {
                (Some(h), _) => self.finish(b, &ty, c, Some(Dest::Decl(h)), e.span),
                (None, target) => self.finish(b, &ty, c, target, e.span),
            };
        }
        if let Some(h) = &declare {
            let t = self.c_type_of(&ty, e.span)?;
            b.emit(format!("{t} {h};"));
        }
        b.emit(format!("if ({}) {{", strip_parens(&cond)));
        b.lines.extend(then_lines);
        if let Some(chain) = else_if(&else_lines, b.depth + 1) {
            // `} else { if (c) { … } else { … } }` is `} else if (c) { … } else { … }`.
            b.emit(format!("}} else {}", chain[0].1));
            b.lines.extend(chain.into_iter().skip(1));
        } else if !else_lines.is_empty() {
            b.emit("} else {");
            b.lines.extend(else_lines);
            b.emit("}");
        } else {
            b.emit("}");
        }
        Ok(match (declare, target) {
            (Some(h), _) => h,
            (None, Some(Dest::Assign(r))) => r,
            (None, Some(Dest::Return)) => String::new(),
            _ => UNIT.into(),
        })
    }

    /// The C condition under which a pattern matches `s`; `None` when it always does.
    fn pattern_cond(&mut self, p: &Pat, s: &Scrut) -> Result<Option<String>> {
        Ok(match &p.kind {
            PatKind::Wild | PatKind::Bind(_) | PatKind::Lit(Lit::Unit) => None,
            PatKind::Lit(Lit::Bool(true)) => Some(s.c()),
            PatKind::Lit(Lit::Bool(false)) => Some(format!("!{}", s.c())),
            PatKind::Lit(l) => {
                let ty = self.ity(&p.ty, p.span)?;
                let (Literal::Value(c) | Literal::Fails(c)) = self.lit(l, &ty, p.span);
                Some(format!("({} == {c})", s.c()))
            }
            PatKind::Record(fs) => {
                let mut conds = Vec::new();
                for (l, sub) in fs {
                    conds.extend(self.pattern_cond(sub, &s.field(l))?);
                }
                match conds.len() {
                    0 => None,
                    1 => conds.into_iter().next(),
                    _ => Some(format!("({})", conds.join(" && "))),
                }
            }
        })
    }

    /// The fields of a record literal, evaluated in the order written, each a name or a literal.
    fn record_fields(&mut self, b: &mut Block, e: &Expr, fs: &[(Label, Expr)]) -> Result<Scrut> {
        let ty = self.ity(&e.ty, e.span)?;
        let Type::Record(tfs) = &ty else {
            return unsupported(e.span, format!("a record of type `{ty}`"));
        };
        let mut vals: HashMap<&Label, String> = HashMap::new();
        for (l, x) in fs {
            let mut v = self.value(b, x, None)?;
            if !is_atom(&v) {
                let xty = self.ity(&x.ty, x.span)?;
                if !self.is_unit(&xty) {
                    // Not a `tmp`: a field is read wherever the record is, so its declaration
                    // must stay (see `finish`).
                    let name = b.fresh("fld");
                    v = self.bind(b, &xty, v, Some(Dest::Decl(name)), x.span)?;
                }
            }
            vals.insert(l, v);
        }
        let name = self.c_type_of(&ty, e.span)?;
        let mut fields = Vec::new();
        for (l, _) in tfs {
            match vals.remove(l) {
                Some(v) => fields.push((l.clone(), Scrut::Value(v))),
                None => return unsupported(e.span, format!("a record without field `{l}`")),
            }
        }
        Ok(Scrut::Fields(name, fields))
    }

    /// Declares the variables a (matching) pattern binds.
    fn bind_pattern(&mut self, b: &mut Block, p: &Pat, s: &Scrut) -> Result<()> {
        match &p.kind {
            PatKind::Bind(ident) => {
                let ty = self.ity(&p.ty, p.span)?;
                if self.is_unit(&ty) {
                    b.env.insert(ident.id, UNIT.into());
                } else {
                    let name = c_ident(&ident.name, ident.id);
                    let t = self.c_type_of(&ty, p.span)?;
                    b.emit(format!("const {t} {name} = {};", s.c()));
                    b.env.insert(ident.id, name);
                }
            }
            PatKind::Record(fs) => {
                for (l, sub) in fs {
                    self.bind_pattern(b, sub, &s.field(l))?;
                }
            }
            PatKind::Wild | PatKind::Lit(_) => {}
        }
        Ok(())
    }

    fn keyword(
        &mut self,
        b: &mut Block,
        e: &Expr,
        kw: Keyword,
        args: &[Expr],
        ty: &Type,
        dest: Option<Dest>,
    ) -> Result<String> {
        match kw {
            // Inside device code a `par_loop` runs sequentially: its iterations are independent
            // by the language's contract, so any order is a correct one.
            Keyword::ParLoop | Keyword::SeqLoop => {
                let n = self.value(b, &args[0], None)?;
                let n = self.atom(b, &Type::Int, n, "n", args[0].span)?;
                let callee = self.callee(b, &args[1])?;
                let i = b.fresh("i");
                b.emit(format!("for (long long {i} = 0; {i} < {n}; ++{i}) {{"));
                b.depth += 1;
                let call = self.apply(b, &callee, vec![i], &[Type::Int], &Type::unit(), e.span)?;
                if call != UNIT {
                    b.emit(format!("{call};"));
                }
                b.depth -= 1;
                b.emit("}");
                Ok(UNIT.into())
            }
            Keyword::SeqLoopAcc => {
                let acc0 = self.value(b, &args[0], None)?;
                let n = self.value(b, &args[1], None)?;
                let n = self.atom(b, &Type::Int, n, "n", args[1].span)?;
                let callee = self.callee(b, &args[2])?;
                self.accumulate(
                    b,
                    e.span,
                    ty,
                    acc0,
                    dest,
                    |i| {
                        (
                            format!("for (long long {i} = 0; {i} < {n}; ++{i}) {{"),
                            i.to_string(),
                            Type::Int,
                        )
                    },
                    &callee,
                )
            }
            Keyword::Map | Keyword::Map2 | Keyword::Reduce | Keyword::Flatten | Keyword::Hist => {
                unsupported(
                    e.span,
                    format!(
                        "`{}` in CUDA code (a Futhark-class keyword: use a separate `accelerate!`)",
                        kw.name()
                    ),
                )
            }
        }
    }

    /// The loop of `seq_loop_acc` or `foldl`: `header(i)` gives the `for` line, the element
    /// passed to the function, and its type.
    #[allow(clippy::too_many_arguments)]
    fn accumulate(
        &mut self,
        b: &mut Block,
        span: SpanRange,
        ty: &Type,
        acc0: String,
        dest: Option<Dest>,
        header: impl FnOnce(&str) -> (String, String, Type),
        callee: &Callee,
    ) -> Result<String> {
        let i = b.fresh("i");
        let (for_line, elem, elem_ty) = header(&i);
        let tys = [ty.clone(), elem_ty];
        if self.is_unit(ty) {
            b.emit(for_line);
            b.depth += 1;
            let call = self.apply(b, callee, vec![UNIT.into(), elem], &tys, ty, span)?;
            if call != UNIT {
                b.emit(format!("{call};"));
            }
            b.depth -= 1;
            b.emit("}");
            return Ok(UNIT.into());
        }
        // The accumulator is the `let`'s variable or the caller's result variable when there is
        // one, else a local of its own.
        let acc = match &dest {
            Some(Dest::Assign(r)) => {
                if *r != acc0 {
                    b.emit(format!("{r} = {};", strip_parens(&acc0)));
                }
                r.clone()
            }
            Some(Dest::Decl(h)) => h.clone(),
            None | Some(Dest::Return) => b.fresh("acc"),
        };
        if !matches!(dest, Some(Dest::Assign(_))) {
            let t = self.c_type_of(ty, span)?;
            b.emit(format!("{t} {acc} = {};", strip_parens(&acc0)));
        }
        b.emit(for_line);
        b.depth += 1;
        let next = self.apply(b, callee, vec![acc.clone(), elem], &tys, ty, span)?;
        b.emit(format!("{acc} = {};", strip_parens(&next)));
        b.depth -= 1;
        b.emit("}");
        match dest {
            Some(Dest::Return) => self.finish(b, ty, acc, dest, span),
            _ => Ok(acc),
        }
    }

    /// A value used more than once: a local unless it is a name or a literal.
    fn atom(
        &mut self,
        b: &mut Block,
        ty: &Type,
        c: String,
        stem: &str,
        span: SpanRange,
    ) -> Result<String> {
        if is_atom(&c) {
            return Ok(c);
        }
        let name = b.fresh(stem);
        self.bind(b, ty, c, Some(Dest::Decl(name)), span)
    }

    /// The function argument of a loop or fold; its bound arguments are evaluated now, once.
    fn callee(&mut self, b: &mut Block, f: &Expr) -> Result<Callee> {
        let (head, bound): (&Expr, &[Expr]) = match &f.kind {
            ExprKind::App { func, args } => (func, args),
            _ => (f, &[]),
        };
        match &head.kind {
            ExprKind::Intrinsic(i) if bound.is_empty() => Ok(Callee::Intrinsic(*i)),
            ExprKind::Var { ident, .. } if self.defs.contains_key(&ident.id) => {
                let def = self.defs[&ident.id];
                let mut args = Vec::new();
                for a in bound {
                    args.push(self.value(b, a, None)?);
                }
                Ok(Callee::Fn {
                    name: c_ident(&def.ident.name, def.ident.id),
                    args,
                    arity: lambda_of(def).0.len(),
                })
            }
            _ => unsupported(
                f.span,
                "the function argument of a loop or fold must name a function or an intrinsic",
            ),
        }
    }

    /// The C expression of a call of `callee` with `extra` last arguments (a user function's
    /// call is returned as is, for the caller to place as a statement or an assignment).
    fn apply(
        &mut self,
        b: &mut Block,
        callee: &Callee,
        extra: Vec<String>,
        extra_tys: &[Type],
        ty: &Type,
        span: SpanRange,
    ) -> Result<String> {
        match callee {
            Callee::Fn { name, args, arity } => {
                if args.len() + extra.len() != *arity {
                    return unsupported(
                        span,
                        format!(
                            "`{name}` takes {arity} arguments but the loop gives it {}",
                            args.len() + extra.len()
                        ),
                    );
                }
                let all: Vec<String> = args.iter().cloned().chain(extra).collect();
                Ok(format!("{name}({})", all.join(", ")))
            }
            Callee::Intrinsic(i) => self.simple(b, *i, extra, extra_tys, ty, None, span),
        }
    }

    // ----- intrinsics -----

    fn intrinsic(
        &mut self,
        b: &mut Block,
        i: Intrinsic,
        args: &[Expr],
        ty: &Type,
        dest: Option<Dest>,
        span: SpanRange,
    ) -> Result<String> {
        use Intrinsic::*;
        if args.len() != i.arity() {
            return unsupported(
                span,
                format!("`{}` applied to {} arguments", i.name(), args.len()),
            );
        }
        match i {
            Foldl => {
                // Evaluated in the order written: f, acc, s.
                let callee = self.callee(b, &args[0])?;
                let acc0 = self.value(b, &args[1], None)?;
                let sty = self.ity(&args[2].ty, args[2].span)?;
                let s = self.value(b, &args[2], None)?;
                let s = self.atom(b, &sty, s, "seq", args[2].span)?;
                let elem_ty = match &sty {
                    Type::Seq(a) => (**a).clone(),
                    t => return unsupported(span, format!("`foldl` over a `{t}`")),
                };
                self.accumulate(
                    b,
                    span,
                    ty,
                    acc0,
                    dest,
                    |k| {
                        (
                            format!("for (long long {k} = 0; {k} < {s}.len; ++{k}) {{"),
                            format!("{s}.data[{k}]"),
                            elem_ty,
                        )
                    },
                    &callee,
                )
            }
            Length | Get if is_tensor_shape(&args[0]) => {
                let ExprKind::App { args: inner, .. } = &args[0].kind else {
                    unreachable!("checked by is_tensor_shape")
                };
                let t = self.value(b, &inner[0], None)?;
                if i == Length {
                    return self.finish(b, ty, format!("{t}.rank"), dest, span);
                }
                let k = self.value(b, &args[1], None)?;
                let chk = self.check("get(tensor_shape(..), ..)", span);
                self.bind(b, ty, format!("pm_tensor_dim({chk}, {t}, {k})"), dest, span)
            }
            TensorShape => unsupported(
                span,
                "`tensor_shape` in CUDA code, except as `get(tensor_shape(t), k)` or \
                 `length(tensor_shape(t))` (the shape would be a sequence, which CUDA code \
                 cannot build)",
            ),
            TensorGet | TensorSet | TensorSlice => {
                let t = self.value(b, &args[0], None)?;
                let index = match &args[1].kind {
                    ExprKind::Seq(es) => {
                        let mut ix = Vec::new();
                        for x in es {
                            ix.push(self.value(b, x, None)?);
                        }
                        Ok(ix)
                    }
                    _ => Err(self.value(b, &args[1], None)?),
                };
                let v = if i == TensorSet {
                    Some(self.value(b, &args[2], None)?)
                } else {
                    None
                };
                let chk = self.check(i.name(), span);
                let base = match i {
                    TensorGet => "pm_tensor_get",
                    TensorSet => "pm_tensor_set",
                    _ => "pm_tensor_slice",
                };
                let call = match (index, v) {
                    (Ok(ix), None) => {
                        let rest: String = ix.iter().map(|x| format!(", {x}")).collect();
                        format!("{base}({chk}, {t}{rest})")
                    }
                    (Ok(ix), Some(v)) => {
                        let rest: String = ix.iter().map(|x| format!(", {x}")).collect();
                        format!("{base}({chk}, {t}, {v}{rest})")
                    }
                    (Err(s), None) => format!("{base}_seq({chk}, {t}, {s})"),
                    (Err(s), Some(v)) => format!("{base}_seq({chk}, {t}, {s}, {v})"),
                };
                self.bind(b, ty, call, dest, span)
            }
            _ => {
                let mut cargs = Vec::new();
                let mut tys = Vec::new();
                for a in args {
                    cargs.push(self.value(b, a, None)?);
                    tys.push(self.ity(&a.ty, a.span)?);
                }
                self.simple(b, i, cargs, &tys, ty, dest, span)
            }
        }
    }

    /// An intrinsic applied to evaluated arguments.
    #[allow(clippy::too_many_arguments)]
    fn simple(
        &mut self,
        b: &mut Block,
        i: Intrinsic,
        a: Vec<String>,
        tys: &[Type],
        ty: &Type,
        dest: Option<Dest>,
        span: SpanRange,
    ) -> Result<String> {
        use Intrinsic::*;
        if a.len() != i.arity() {
            return unsupported(span, format!("`{}` given {} arguments", i.name(), a.len()));
        }
        // The generic operators on numbers take the instantiated type of their operands.
        let operands = tys.first().and_then(|t| self.num(t));
        let float = operands.is_some_and(NumType::is_float);
        let i = match (i, operands) {
            (NumAdd, _) if float => AddF,
            (NumSub, _) if float => SubF,
            (NumMul, _) if float => MulF,
            (NumDiv, _) if float => DivF,
            (NumNeg, _) if float => NegF,
            (NumEq, _) if float => EqF,
            (NumNe, _) if float => NeqF,
            (NumLt, _) if float => LtF,
            (NumLe, _) if float => LeqF,
            (NumGt, _) if float => GtF,
            (NumGe, _) if float => GeqF,
            (NumEq, Some(NumType::Bool)) => EqB,
            (NumNe, Some(NumType::Bool)) => NeqB,
            (NumAdd, _) => AddI,
            (NumSub, _) => SubI,
            (NumMul, _) => MulI,
            (NumDiv, _) => DivI,
            (NumNeg, _) => NegI,
            (NumEq, _) => EqI,
            (NumNe, _) => NeqI,
            (NumLt, _) => LtI,
            (NumLe, _) => LeqI,
            (NumGt, _) => GtI,
            (NumGe, _) => GeqI,
            (other, _) => other,
        };
        // `i32` arithmetic has its own wrapping helpers (`pm_addi32` …); `f32` arithmetic is the
        // C++ operators on `float` operands, which C++ computes in `float`.
        let width = if operands == Some(NumType::I32) {
            "32"
        } else {
            ""
        };
        let pure = match i {
            AddI | SubI | MulI => {
                let f = match i {
                    AddI => "pm_addi",
                    SubI => "pm_subi",
                    _ => "pm_muli",
                };
                format!("{f}{width}({}, {})", a[0], a[1])
            }
            NegI => format!("pm_negi{width}({})", a[0]),
            DivI | ModI => {
                let chk = self.check(i.name(), span);
                let f = if i == DivI { "pm_divi" } else { "pm_modi" };
                return self.bind(
                    b,
                    ty,
                    format!("{f}{width}({chk}, {}, {})", a[0], a[1]),
                    dest,
                    span,
                );
            }
            AddF | SubF | MulF | DivF | EqI | NeqI | LtI | GtI | LeqI | GeqI | EqF | NeqF | LtF
            | GtF | LeqF | GeqF | EqB | NeqB => {
                let op = match i {
                    AddF => "+",
                    SubF => "-",
                    MulF => "*",
                    DivF => "/",
                    EqI | EqF | EqB => "==",
                    NeqI | NeqF | NeqB => "!=",
                    LtI | LtF => "<",
                    GtI | GtF => ">",
                    LeqI | LeqF => "<=",
                    _ => ">=",
                };
                format!("({} {op} {})", a[0], a[1])
            }
            NegF => format!("(-{})", a[0]),
            Not => format!("(!{})", a[0]),
            Int2Float => format!("((double){})", a[0]),
            FloorFI => format!("pm_floorfi({})", a[0]),
            // `sqrtf` … on `float`: the single-precision functions, as Rust's `f32` methods.
            Sqrt | Exp | Log | Sin | Cos if operands == Some(NumType::F32) => {
                format!("{}f({})", i.name(), a[0])
            }
            Sqrt | Exp | Log | Sin | Cos => format!("{}({})", i.name(), a[0]),
            Pow if operands == Some(NumType::F32) => format!("powf({}, {})", a[0], a[1]),
            Pow => format!("pow({}, {})", a[0], a[1]),
            Length => format!("{}.len", a[0]),
            Null => format!("({}.len == 0)", a[0]),
            Get => {
                let chk = self.check("get", span);
                return self.bind(
                    b,
                    ty,
                    format!("pm_get({chk}, {}, {})", a[0], a[1]),
                    dest,
                    span,
                );
            }
            TensorLinearGet | TensorLinearSet => {
                let chk = self.check(i.name(), span);
                let f = if i == TensorLinearGet {
                    "pm_tensor_linear_get"
                } else {
                    "pm_tensor_linear_set"
                };
                return self.bind(b, ty, format!("{f}({chk}, {})", a.join(", ")), dest, span);
            }
            TensorRank => format!("{}.rank", a[0]),
            TensorSub => {
                let chk = self.check("tensor_sub", span);
                return self.bind(
                    b,
                    ty,
                    format!("pm_tensor_sub({chk}, {}, {}, {})", a[0], a[1], a[2]),
                    dest,
                    span,
                );
            }
            Create | Set | Head | Tail | Concat | Reverse | Subsequence => {
                return unsupported(
                    span,
                    format!(
                        "`{}` in CUDA code (sequences are read-only there: allocate a `Tensor` in \
                         Rust, capture it and write it with `tensor_set`)",
                        i.name()
                    ),
                );
            }
            TensorGet | TensorSet | TensorSlice | TensorShape | Foldl => {
                return unsupported(
                    span,
                    format!("`{}` as the function argument of a loop or fold", i.name()),
                );
            }
            NumAdd | NumSub | NumMul | NumDiv | NumNeg | NumEq | NumNe | NumLt | NumLe | NumGt
            | NumGe => unreachable!("resolved above"),
        };
        self.finish(b, ty, pure, dest, span)
    }
}

/// `(c)` → `c`, for an `if` condition that brings its own parentheses.
fn strip_parens(c: &str) -> &str {
    if c.starts_with('(') && c.ends_with(')') {
        // Only when the outer parentheses match each other.
        let inner = &c[1..c.len() - 1];
        let mut depth = 0i32;
        for ch in inner.chars() {
            match ch {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth < 0 {
                        return c;
                    }
                }
                _ => {}
            }
        }
        if depth == 0 {
            return inner;
        }
    }
    c
}

/// Whether a C name is a temporary of the generator (`tmp3`), used once.
fn is_temp(c: &str) -> bool {
    c.strip_prefix("tmp")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|ch| ch.is_ascii_digit()))
}

/// `x` when `lines` is the single line `<prefix>x;` (one branch delivering one expression).
fn single_delivery<'l>(lines: &'l [(usize, String)], prefix: &str) -> Option<&'l str> {
    match lines {
        [(_, line)] => line.strip_prefix(prefix)?.strip_suffix(';'),
        _ => None,
    }
}

/// The lines of an `else` branch that is a whole `if … else …` statement at `depth`, one level
/// less indented, when it is one (then the branch can be written `else if`).
fn else_if(lines: &[(usize, String)], depth: usize) -> Option<Vec<(usize, String)>> {
    let (first, last) = (lines.first()?, lines.last()?);
    let own = |(d, l): &(usize, String)| {
        *d != depth
            || l.starts_with("} else")
            || std::ptr::eq(l, &first.1)
            || std::ptr::eq(l, &last.1)
    };
    let whole = first.0 == depth
        && first.1.starts_with("if (")
        && *last == (depth, "}".to_string())
        && lines.iter().all(own);
    whole.then(|| lines.iter().map(|(d, l)| (d - 1, l.clone())).collect())
}

/// An operand of `?:`: parenthesized unless it is a name, a literal, a call or a braced
/// initializer.
fn wrap(x: &str) -> String {
    let closed = |open: char, close: char| -> bool {
        let Some(p) = x.find(open) else {
            return false;
        };
        let head_ok = x[..p]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_<> :".contains(c));
        let mut depth = 0i32;
        for (k, c) in x.char_indices().skip_while(|(k, _)| *k < p) {
            if c == open {
                depth += 1;
            } else if c == close {
                depth -= 1;
                if depth == 0 {
                    return head_ok && k == x.len() - 1;
                }
            }
        }
        false
    };
    if is_atom(x) || closed('(', ')') || closed('{', '}') {
        x.to_string()
    } else {
        format!("({x})")
    }
}

/// How many times a pattern reads the matched value.
fn pattern_uses(p: &Pat) -> usize {
    match &p.kind {
        PatKind::Wild | PatKind::Lit(Lit::Unit) => 0,
        PatKind::Bind(_) | PatKind::Lit(_) => 1,
        PatKind::Record(fs) => fs.iter().map(|(_, p)| pattern_uses(p)).sum(),
    }
}

/// The value a pattern matches: a C expression, or the fields of a record literal (matched one by
/// one, without building the record).
#[derive(Debug, Clone)]
enum Scrut {
    Value(String),
    /// The struct's C name and the fields' values in label order.
    Fields(String, Vec<(Label, Scrut)>),
}

impl Scrut {
    fn field(&self, l: &Label) -> Scrut {
        match self {
            Scrut::Value(s) => Scrut::Value(format!("{s}.{}", field_name(l))),
            Scrut::Fields(_, fs) => fs
                .iter()
                .find(|(k, _)| k == l)
                .map_or_else(|| Scrut::Value(String::new()), |(_, v)| v.clone()),
        }
    }

    /// The whole value as a C expression.
    fn c(&self) -> String {
        match self {
            Scrut::Value(s) => s.clone(),
            Scrut::Fields(name, fs) => {
                let items: Vec<String> = fs.iter().map(|(_, v)| v.c()).collect();
                format!("{name}{{{}}}", items.join(", "))
            }
        }
    }
}

fn is_tensor_shape(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::App { func, .. }
        if matches!(func.kind, ExprKind::Intrinsic(Intrinsic::TensorShape)))
}

fn has_par_loop(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| {
        found |= matches!(
            x.kind,
            ExprKind::Keyword {
                kw: Keyword::ParLoop,
                ..
            }
        );
    });
    found
}

/// The walk that finds host code around launches.
struct NoteCx<'a, 'b> {
    binding: VarId,
    kernel_of: &'b HashMap<*const Expr, usize>,
    launches: &'b HashMap<VarId, BTreeSet<usize>>,
    host_fns: &'b [VarId],
    names: &'b HashMap<VarId, &'a Def>,
}

impl NoteCx<'_, '_> {
    /// The kernels launched while `e` runs; records a note for each construct that launches some
    /// in a way other than once, in order.
    fn walk(&self, e: &Expr, notes: &mut Vec<HostNote>) -> BTreeSet<usize> {
        let mut out = BTreeSet::new();
        e.children(&mut |c| out.extend(self.walk(c, notes)));
        if let Some(k) = self.kernel_of.get(&(e as *const Expr)) {
            out.insert(*k);
        }
        if let ExprKind::Var { ident, .. } = &e.kind
            && self.host_fns.contains(&ident.id)
            && ident.id != self.binding
            && let Some(ks) = self.launches.get(&ident.id)
        {
            out.extend(ks.iter().copied());
        }
        if out.is_empty() {
            return out;
        }
        let construct = match &e.kind {
            ExprKind::Keyword {
                kw: kw @ (Keyword::SeqLoop | Keyword::SeqLoopAcc),
                ..
            } => Some(format!(
                "`{}` on the host (in `{}`): its function launches kernels in every iteration",
                kw.name(),
                self.name()
            )),
            ExprKind::Keyword {
                kw: Keyword::ParLoop,
                args,
            } if !self.walk_quiet(&args[0]).is_empty() || !self.walk_quiet(&args[1]).is_empty() => {
                Some(format!(
                    "a `par_loop` in `{}` whose arguments launch kernels",
                    self.name()
                ))
            }
            ExprKind::Match { .. } => Some(format!(
                "a `match`/`if` on the host (in `{}`) that launches kernels in a branch",
                self.name()
            )),
            ExprKind::App { func, args } => match &func.kind {
                ExprKind::Intrinsic(Intrinsic::Foldl) => Some(format!(
                    "`foldl` on the host (in `{}`): its function launches kernels for every element",
                    self.name()
                )),
                // A call; a partial application is the function argument of a loop, noted there.
                ExprKind::Var { ident, .. }
                    if self.host_fns.contains(&ident.id)
                        && self
                            .names
                            .get(&ident.id)
                            .is_some_and(|d| lambda_of(d).0.len() == args.len()) =>
                {
                    Some(format!(
                        "a call of `{}` on the host (in `{}`), which launches kernels",
                        ident.name,
                        self.name()
                    ))
                }
                _ => None,
            },
            _ => None,
        };
        if let Some(construct) = construct {
            notes.push(HostNote {
                binding: self.binding,
                construct,
                span: e.span,
                kernels: out.iter().copied().collect(),
            });
        }
        out
    }

    fn walk_quiet(&self, e: &Expr) -> BTreeSet<usize> {
        self.walk(e, &mut Vec::new())
    }

    fn name(&self) -> &str {
        self.names
            .get(&self.binding)
            .map_or("?", |d| d.ident.name.as_str())
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use proc_macro2::{TokenStream, TokenTree};
    use quote::quote;

    use super::*;
    use crate::program::{SiteFailure, compile_sites};
    use crate::registry::{Registry, SiteSource, collect_items, parse_source};

    /// The golden corpus: `tests/golden/cuda/*.rs`, one crate whose files each hold one site or
    /// more, and the reviewed `*.cu` output beside each.
    fn corpus_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/cuda")
    }

    /// The `accelerate!(…)` inputs among `tokens`, in order (the build hook's scan, in small).
    fn sites_in(tokens: TokenStream, out: &mut Vec<TokenStream>) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        for (k, t) in trees.iter().enumerate() {
            match (t, trees.get(k + 1), trees.get(k + 2)) {
                (TokenTree::Ident(i), Some(TokenTree::Punct(p)), Some(TokenTree::Group(g)))
                    if i == "accelerate" && p.as_char() == '!' =>
                {
                    out.push(g.stream());
                }
                (TokenTree::Group(g), _, _) => sites_in(g.stream(), out),
                _ => {}
            }
        }
    }

    /// Every corpus file's stem and the modules generated for its sites, in file order.
    fn corpus_modules() -> Vec<(String, Vec<std::result::Result<CudaModule, String>>)> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
            .expect("the corpus directory")
            .map(|e| e.expect("an entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .collect();
        files.sort();
        let mut items = Vec::new();
        let mut sites = Vec::new();
        for path in &files {
            let text = std::fs::read_to_string(path).unwrap();
            let (tokens, ast) = parse_source(&text).unwrap();
            let file = format!("cuda/{}", path.file_name().unwrap().to_string_lossy());
            items.extend(collect_items(&ast, &file, &|_| (0, 0)));
            let mut found = Vec::new();
            sites_in(tokens, &mut found);
            for (k, tokens) in found.into_iter().enumerate() {
                // Line and column stand for the position (the order in the file).
                sites.push(SiteSource::new(&file, k + 1, 1, &tokens));
            }
        }
        let registry = Registry::new(items, sites);
        let mut out: Vec<(String, Vec<_>)> = files
            .iter()
            .map(|p| {
                (
                    p.file_stem().unwrap().to_string_lossy().into_owned(),
                    Vec::new(),
                )
            })
            .collect();
        for site in compile_sites(&registry) {
            let stem = site.name["cuda/".len()..site.name.find(".rs").unwrap()].to_string();
            let position: usize = site.name.split(':').nth(1).unwrap().parse().unwrap();
            let prefix = if position == 1 {
                format!("pm_{stem}")
            } else {
                format!("pm_{stem}{position}")
            };
            let entry = &mut out.iter_mut().find(|(s, _)| *s == stem).unwrap().1;
            let compiled = match site.result {
                Ok(c) => c,
                Err(SiteFailure::Rejected(e)) => {
                    entry.push(Err(format!("{}: rejected: {}", site.name, e[0].message)));
                    continue;
                }
                Err(SiteFailure::Unparsable(e)) => {
                    entry.push(Err(format!("{}: {e}", site.name)));
                    continue;
                }
            };
            let Some(program) = &compiled.program else {
                entry.push(Err(format!("{}: backend = cpu", site.name)));
                continue;
            };
            let options = CudaOptions {
                prefix,
                max_rank: DEFAULT_MAX_RANK,
            };
            for inst in instantiations(&compiled.mono.numeric) {
                entry.push(generate(program, &inst, &options).map_err(|e| e.to_string()));
            }
        }
        out
    }

    /// What stands for the prelude (`cuda_prelude.cu`) in the golden files.
    const PRELUDE_MARK: &str = "// ---- the pmexpr CUDA prelude (codegen/cuda_prelude.cu) ----\n";

    /// The generated CUDA of every corpus program equals its reviewed `.cu` file;
    /// `PMEXPR_BLESS=1` rewrites the files instead (review the diff).
    #[test]
    fn golden_corpus() {
        let bless = std::env::var("PMEXPR_BLESS").is_ok_and(|v| v == "1");
        let mut failures = Vec::new();
        for (stem, modules) in corpus_modules() {
            assert!(!modules.is_empty(), "{stem}.rs has no site");
            // The prelude is reviewed in its own file: the golden files show where it goes.
            let prelude = PRELUDE.replace("@MAX_RANK@", &DEFAULT_MAX_RANK.to_string());
            let mut text = String::new();
            for m in modules {
                match m {
                    Ok(m) => {
                        assert_eq!(m.source.matches(&prelude).count(), 1, "{stem}: one prelude");
                        text.push_str(&m.source.replace(&prelude, PRELUDE_MARK));
                    }
                    Err(e) => panic!("{stem}.rs: {e}"),
                }
            }
            let path = corpus_dir().join(format!("{stem}.cu"));
            if bless {
                std::fs::write(&path, &text).unwrap();
                continue;
            }
            let want = std::fs::read_to_string(&path).unwrap_or_default();
            if want != text {
                let line = want
                    .lines()
                    .zip(text.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(want.lines().count().min(text.lines().count()));
                failures.push(format!(
                    "{stem}.cu differs from the generated code from line {} on:\n  golden:    {:?}\n  generated: {:?}",
                    line + 1,
                    want.lines().nth(line).unwrap_or("<end>"),
                    text.lines().nth(line).unwrap_or("<end>")
                ));
            }
        }
        assert!(
            failures.is_empty(),
            "{}\n(rerun with PMEXPR_BLESS=1 to rewrite the golden files, then review the diff)",
            failures.join("\n")
        );
    }

    /// The CUDA of one site written with `quote!`, default instantiation.
    fn cuda_of(tokens: TokenStream) -> std::result::Result<CudaModule, CudaGenError> {
        let site = crate::site::compile_for_test(tokens, &[]).expect("the site compiles");
        let program = site.program.expect("not backend = cpu");
        generate(
            &program,
            &default_instantiation(&site.mono.numeric),
            &CudaOptions::for_site("src/lib.rs:1:1"),
        )
    }

    #[test]
    fn kernels_are_described_as_data() {
        let m = cuda_of(quote!({
            let scale = |c, i| tensor_set(t, [i], muli(c, tensor_get(t, [i])));
            par_loop(n, |i| scale(3, i))
        }))
        .unwrap();
        assert_eq!(m.namespace, "pm_src_lib_rs_1_1");
        assert_eq!(m.kernels.len(), 1);
        let k = &m.kernels[0];
        assert_eq!(k.name, "pm_src_lib_rs_1_1_k0");
        assert_eq!(k.binding_name, "accelerate");
        assert_eq!(k.ordinal, 0);
        let params: Vec<(&str, &str)> = k
            .params
            .iter()
            .map(|p| (p.c_type.as_str(), p.name.as_str()))
            .collect();
        // The lambda's bound arguments (the captured tensor `t`), then `n`.
        assert_eq!(params.len(), 2, "{params:?}");
        assert_eq!(params[0].0, "pm_tensor<long long>");
        assert_eq!(params[1], ("long long", "n"));
        assert_eq!(k.params[0].layout, CLayout::Tensor(Box::new(CLayout::I64)));
        assert_eq!(k.params[0].ty, Type::tensor(Type::Int));
        assert!(
            matches!(&k.params[1].value.kind, ExprKind::Var { ident, .. } if ident.name == "n")
        );
        assert!(
            m.source
                .contains(&format!("extern \"C\" __global__ void {}(", k.name))
        );
        assert!(m.host.straight_line);
        assert_eq!(m.host.result, Type::unit());
        // One check: the `tensor_get` (the `tensor_set` is the second).
        assert_eq!(m.checks.len(), 2);
        assert_eq!(m.checks[0].construct, "tensor_get");
    }

    #[test]
    fn host_code_around_launches_is_reported() {
        let m = cuda_of(quote!({
            seq_loop(steps, |s| par_loop(n, |i| tensor_set(t, [i], s)));
            if flag {
                par_loop(n, |i| tensor_set(t, [i], 0))
            } else {
                ()
            }
        }))
        .unwrap();
        assert_eq!(m.kernels.len(), 2);
        assert!(!m.host.straight_line);
        let names: Vec<&str> = m.host.functions.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert_eq!(names[0], "accelerate");
        let notes: Vec<&str> = m.host.notes.iter().map(|n| n.construct.as_str()).collect();
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("`seq_loop` on the host")),
            "{notes:?}"
        );
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("a `match`/`if` on the host")),
            "{notes:?}"
        );
        // The kernel inside the loop's function belongs to that function.
        let inner = m
            .kernels
            .iter()
            .find(|k| k.binding_name != "accelerate")
            .unwrap();
        assert_eq!(inner.params.last().unwrap().name, "n");
    }

    #[test]
    fn unsupported_constructs_are_errors_not_panics() {
        let e = cuda_of(quote!(par_loop(n, |i| {
            let sh = tensor_shape(t);
            tensor_set(t, [i], get(sh, 0))
        })))
        .unwrap_err();
        assert!(e.message.contains("`tensor_shape`"), "{}", e.message);
        let e = cuda_of(quote!(par_loop(n, |i| {
            let ix = [i];
            tensor_set(t, ix, 1)
        })))
        .unwrap_err();
        assert!(e.message.contains("sequence literal"), "{}", e.message);
        // A numeric type variable without an instantiation.
        let site = crate::site::compile_for_test(
            quote!(par_loop(n, |i| tensor_set(y, [i], a * tensor_get(y, [i])))),
            &[],
        )
        .unwrap();
        assert_eq!(site.mono.numeric.len(), 1);
        let e = generate(
            site.program.as_ref().unwrap(),
            &Instantiation::new(),
            &CudaOptions::for_site("x"),
        )
        .unwrap_err();
        assert!(e.message.contains("no instantiation"), "{}", e.message);
        // With one, names tell the instantiation apart.
        let m = generate(
            site.program.as_ref().unwrap(),
            &float_instantiation(&site.mono.numeric),
            &CudaOptions::for_site("x"),
        )
        .unwrap();
        assert_eq!(m.kernels[0].name, "pm_x_f64_k0");
        let types: Vec<&str> = m.kernels[0]
            .params
            .iter()
            .map(|p| p.c_type.as_str())
            .collect();
        assert_eq!(types, ["pm_tensor<double>", "double", "long long"]);
    }

    /// Every type the runtime's number traits implement gets a module, uniform ones first.
    #[test]
    fn instantiations_cover_the_runtime_types() {
        use NumType::*;
        let (a, b, c) = (TyVar(0), TyVar(1), TyVar(2));
        let tags = |insts: Vec<Instantiation>| -> Vec<String> {
            insts.iter().map(instantiation_suffix).collect()
        };
        assert_eq!(instantiations(&[]), vec![Instantiation::new()]);
        assert_eq!(
            tags(instantiations(&[(a, Numeric::Num)])),
            ["_i64", "_f64", "_i32", "_f32"]
        );
        assert_eq!(
            tags(instantiations(&[(a, Numeric::Scalar)])),
            ["_i64", "_f64", "_i32", "_f32"]
        );
        assert_eq!(tags(instantiations(&[(a, Numeric::Int)])), ["_i64", "_i32"]);
        assert_eq!(
            tags(instantiations(&[(a, Numeric::Float)])),
            ["_f64", "_f32"]
        );
        // An integer and a float: the same width first, then the mixes.
        assert_eq!(
            tags(instantiations(&[(a, Numeric::Int), (b, Numeric::Float)])),
            ["_i64_f64", "_i32_f32", "_i64_f32", "_i32_f64"]
        );
        assert_eq!(
            default_instantiation(&[(a, Numeric::Num), (b, Numeric::Float)]),
            Instantiation::from([(a, I64), (b, F64)])
        );
        assert_eq!(
            float_instantiation(&[(a, Numeric::Num), (b, Numeric::Int)]),
            Instantiation::from([(a, F64), (b, I64)])
        );
        // Three numbers: 64 combinations, capped; the uniform ones are among those kept.
        let three = instantiations(&[(a, Numeric::Num), (b, Numeric::Num), (c, Numeric::Num)]);
        assert_eq!(three.len(), MAX_INSTANTIATIONS);
        assert_eq!(
            three[3],
            Instantiation::from([(a, F32), (b, F32), (c, F32)])
        );
        assert_eq!(
            three.iter().collect::<BTreeSet<_>>().len(),
            MAX_INSTANTIATIONS,
            "distinct"
        );
        // Many variables: the enumeration stops at the cap.
        let many: Vec<(TyVar, Numeric)> = (0..40).map(|i| (TyVar(i), Numeric::Num)).collect();
        assert_eq!(instantiations(&many).len(), MAX_INSTANTIATIONS);
    }

    /// `i32` and `f32` instantiations: `int` and `float` everywhere the number goes, 32-bit
    /// wrapping helpers, `float` literals, and a literal too big for an `i32` as a check.
    #[test]
    fn narrow_numbers_are_not_widened() {
        let site = crate::site::compile_for_test(
            quote!(par_loop(n, |i| {
                let x = tensor_get(t, [i]);
                tensor_set(t, [i], -(x * 3 + x / 2) + get(s, i))
            })),
            &[],
        )
        .unwrap();
        let program = site.program.as_ref().unwrap();
        let [(v, Numeric::Int)] = site.mono.numeric[..] else {
            panic!("{:?}", site.mono.numeric)
        };
        let i32_inst = Instantiation::from([(v, NumType::I32)]);
        let m = generate(program, &i32_inst, &CudaOptions::for_site("x")).unwrap();
        assert_eq!(m.namespace, "pm_x_i32");
        let params: Vec<(&str, &CLayout)> = m.kernels[0]
            .params
            .iter()
            .map(|p| (p.c_type.as_str(), &p.layout))
            .collect();
        assert_eq!(
            params,
            [
                ("pm_tensor<int>", &CLayout::Tensor(Box::new(CLayout::I32))),
                ("pm_seq<int>", &CLayout::Seq(Box::new(CLayout::I32))),
                ("long long", &CLayout::I64),
            ]
        );
        let own = &m.source[m.source.find("namespace pm_x_i32").unwrap()..];
        assert!(own.contains("pm_muli32(x_"), "{own}");
        assert!(own.contains("pm_divi32("), "{own}");
        assert!(own.contains("pm_negi32("), "{own}");
        assert!(!own.contains("pm_addi("), "no 64-bit arithmetic: {own}");
        // The index arithmetic stays 64-bit, the numbers' literals are `int`s.
        assert!(own.contains(", 3)") && !own.contains("3LL"), "{own}");

        let site = crate::site::compile_for_test(
            quote!(par_loop(n, |i| tensor_set(
                t,
                [i],
                tensor_get(t, [i]) * 0.1 + 3000000000
            ))),
            &[],
        );
        // An integer literal where a float is: rejected before code generation.
        assert!(site.is_err());
        let site = crate::site::compile_for_test(
            quote!(par_loop(n, |i| {
                let k = tensor_get(u, [i]) + 3000000000;
                tensor_set(t, [i], tensor_get(t, [i]) * 0.1 + 1e39)
            })),
            &[],
        )
        .unwrap();
        let program = site.program.as_ref().unwrap();
        let narrow: Vec<Instantiation> = instantiations(&site.mono.numeric)
            .into_iter()
            .filter(|i| i.values().all(|t| matches!(t, NumType::I32 | NumType::F32)))
            .collect();
        assert_eq!(narrow.len(), 1);
        let m = generate(program, &narrow[0], &CudaOptions::for_site("x")).unwrap();
        let own = &m.source[m.source.find("namespace pm_x_").unwrap()..];
        assert!(!own.contains("double"), "{own}");
        assert!(own.contains("* 0.1f)"), "{own}");
        assert!(
            own.contains("__int_as_float(0x7f800000)"),
            "1e39 is inf as f32: {own}"
        );
        assert!(
            own.contains("pm_literal_too_big<int>(") && own.contains("3000000000LL"),
            "{own}"
        );
        assert!(m.checks.iter().any(|c| c.construct == "integer literal"));
    }

    /// The error codes of the prelude are those of [`DeviceError`].
    #[test]
    fn error_codes_match_the_prelude() {
        let names = [
            "PM_DIVISION_BY_ZERO",
            "PM_SEQ_NEGATIVE_INDEX",
            "PM_SEQ_OUT_OF_BOUNDS",
            "PM_TENSOR_WRONG_RANK",
            "PM_TENSOR_BAD_INDEX",
            "PM_TENSOR_NEGATIVE_INDEX",
            "PM_TENSOR_OUT_OF_BOUNDS",
            "PM_SUB_NEGATIVE_OFFSET",
            "PM_SUB_NEGATIVE_LENGTH",
            "PM_SUB_OUT_OF_BOUNDS",
            "PM_NEVER",
            "PM_NO_MATCH",
            "PM_LITERAL_TOO_BIG",
        ];
        for (name, e) in names.iter().zip(DeviceError::ALL) {
            assert!(
                PRELUDE.contains(&format!("{name} = {}", e.code())),
                "{name} = {}",
                e.code()
            );
            assert_eq!(DeviceError::from_code(e.code()), Some(e));
        }
        assert_eq!(DeviceError::from_code(0), None);
        assert!(PRELUDE.contains(&format!("unsigned long long {ERROR_SYMBOL}[4];")));
    }

    #[test]
    fn layouts_follow_the_c_rules() {
        let rec = CLayout::Struct {
            name: "tuple0".into(),
            fields: vec![
                ("_0".into(), CLayout::Bool),
                ("_1".into(), CLayout::F64),
                ("_2".into(), CLayout::Bool),
            ],
        };
        assert_eq!(rec.size_align(3), (24, 8));
        assert_eq!(rec.field_offsets(3), [0, 8, 16]);
        assert_eq!(
            CLayout::Tensor(Box::new(CLayout::F64)).size_align(3),
            (48, 8)
        );
        assert_eq!(CLayout::Seq(Box::new(CLayout::Bool)).size_align(3), (16, 8));
        let narrow = CLayout::Struct {
            name: "tuple1".into(),
            fields: vec![
                ("_0".into(), CLayout::F32),
                ("_1".into(), CLayout::I64),
                ("_2".into(), CLayout::I32),
                ("_3".into(), CLayout::F32),
            ],
        };
        assert_eq!(narrow.size_align(3), (24, 8));
        assert_eq!(narrow.field_offsets(3), [0, 8, 16, 20]);
        let empty = CLayout::Struct {
            name: "e".into(),
            fields: vec![],
        };
        assert_eq!(empty.size_align(3), (1, 1));
    }

    #[test]
    fn names_and_literals() {
        assert_eq!(c_ident("x", VarId(7)), "x_7");
        assert_eq!(c_ident("_", VarId(2)), "v_2");
        assert_eq!(c_ident("lambda11", VarId(11)), "lambda11");
        assert_eq!(c_ident("größe", VarId(3)), "gr__e_3");
        assert_eq!(field_name(&Label::Name("class".into())), "class_");
        assert_eq!(field_name(&Label::Index(2)), "_2");
        assert_eq!(int_lit(i64::MIN), "(-9223372036854775807LL - 1LL)");
        assert_eq!(int_lit(-3), "(-3LL)");
        assert_eq!(float_lit(1.0), "1.0");
        assert_eq!(float_lit(1e-7), "1e-7");
        assert!(float_lit(f64::NAN).contains("0x7ff8"));
        assert_eq!(int32_lit(i32::MIN), "(-2147483647 - 1)");
        assert_eq!(int32_lit(-3), "(-3)");
        assert_eq!(int32_lit(7), "7");
        assert_eq!(float32_lit(1.1), "1.1f");
        assert_eq!(float32_lit(-0.5), "(-0.5f)");
        assert_eq!(float32_lit(1e-7), "1e-7f");
        assert_eq!(float32_lit(f32::MAX), "3.4028235e38f");
        assert_eq!(float32_lit(f32::NEG_INFINITY), "__int_as_float((-8388608))");
        assert_eq!(f32::NEG_INFINITY.to_bits() as i32, -8388608);
        assert!(float32_lit(f32::NAN).contains("0x7fc00000"));
        assert_eq!(strip_parens("(a < b)"), "a < b");
        assert_eq!(strip_parens("(a) && (b)"), "(a) && (b)");
    }
}
