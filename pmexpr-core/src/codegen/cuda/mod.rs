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
//! | `i8 i16 isize u8 u16 u32 u64 usize` (named, or made so by the captured values) | `signed char short long long unsigned char unsigned short unsigned int unsigned long long unsigned long long` | their size |
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
//! | `tensor_gemm(c, a, ta, b, tb, alpha, beta)` in host code | a kernel calling the prelude's `pm_gemm`: one element of `c` per index, summed in the sequential order |
//! | `par_loop(n, f)` in device code | a sequential `for` loop (a kernel cannot launch kernels here) |
//! | `seq_loop(n, f)`, `seq_loop_acc(acc, n, f)`, `foldl(f, acc, s)` | `for` loops, the accumulator in a local |
//! | `addi subi muli negi` | `pm_addi` …: wrapping, through unsigned arithmetic (signed overflow is undefined in C++); on `i32`, `pm_addi32` …; on the other integers the prelude's templates `pm_wadd<T>` … (at least `unsigned` arithmetic, so no promotion to a signed `int` overflows) |
//! | `divi modi` | `pm_divi`, `pm_modi`: truncate toward zero; `/ 0`, `MIN / -1` and `MIN % -1` are errors, as Rust panics; on `i32` `pm_divi32`, on the others `pm_wdiv<T>`, `pm_wmod<T>` |
//! | `x as T` | the prelude's `pm_as<T>(x)`: C++'s conversion, except a float to an integer, which tests the bounds first (saturating, NaN giving 0) |
//! | float arithmetic, comparisons, `not` | C++ operators |
//! | a literal | `2LL`, `1.5`; of an `i32`, `2`, of an `f32`, `1.5f`; of another integer type, `((unsigned char)2)`; an integer literal that does not fit its type is an error when evaluated, as on the CPU |
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
//!
//! # Layout of the module
//!
//! This file holds the public API and assembles a module; `instantiation` the number types of a
//! module, `abi` what is shared with the runtime (prelude, parameter layouts, error codes), `host`
//! the host analysis and the kernels, `types` the C++ types, `expr` the expressions, `pattern`
//! the `match`es, `intrinsics` the intrinsics, `code` names and literals, `peephole` the text
//! peepholes over emitted lines.

use std::collections::HashMap;
use std::fmt::{self, Write};

use crate::ast::VarId;
use crate::classify::Backend;
use crate::error::SpanRange;
use crate::kernels::{LaunchKind, Split};
use crate::lift::Def;
use crate::site::SiteProgram;

mod abi;
mod code;
mod expr;
mod host;
mod instantiation;
mod intrinsics;
mod pattern;
mod peephole;
mod scrut;
mod types;

pub use self::abi::{
    CLayout, Check, DEFAULT_MAX_RANK, DeviceError, ERROR_SYMBOL, Kernel, KernelKind, KernelParam,
};
pub use self::host::HostPlan;
pub use self::instantiation::{
    Instantiation, MAX_INSTANTIATIONS, default_instantiation, float_instantiation,
    instantiation_suffix, instantiations,
};

use self::abi::PRELUDE;
use self::expr::body_of;
use self::host::host_summary;
use self::types::RecordStruct;
use crate::types::Type;

/// The generator's state for one module (one instantiation); its methods are in the child
/// modules, by concept.
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
    /// Inside a tail-recursive device function ([`crate::tailrec`]), which runs as a loop: the
    /// function, and its parameters' C names and types (a tail call assigns them and continues).
    tail: Option<(VarId, Vec<(String, Type)>)>,
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

/// The CUDA code of one site.
#[derive(Debug, Clone)]
pub struct CudaModule {
    /// The CUDA C++ source, for NVRTC.
    pub source: String,
    /// The C++ namespace of the module's definitions (also the start of its kernels' names).
    pub namespace: String,
    /// The kernels, one per launch of the site's kernel split ([`Split::launches`]), in its
    /// order.
    pub kernels: Vec<Kernel>,
    /// The runtime checks, by number (`checks[k].id == k + 1`).
    pub checks: Vec<Check>,
    /// What the host does around the launches.
    pub host: HostPlan,
    /// The maximum tensor rank the module was generated for.
    pub max_rank: usize,
    /// What the site's numeric type variables are in this module.
    pub instantiation: Instantiation,
}

#[cfg(test)]
thread_local! {
    /// How many modules this thread has generated: how a test tells that `accelerate!` generates
    /// none (`glue::cuda`).
    pub(crate) static GENERATED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Generates the CUDA code of a CUDA-class site for one instantiation of its numeric type
/// variables: a kernel for each launch of the site's kernel split ([`crate::kernels`]), in its
/// order.
pub fn generate(
    program: &SiteProgram,
    split: &Split,
    inst: &Instantiation,
    options: &CudaOptions,
) -> Result<CudaModule> {
    #[cfg(test)]
    GENERATED.with(|g| g.set(g.get() + 1));
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
        tail: None,
    };
    let Some(accelerated) = g.defs.get(&lifted.accelerated).copied() else {
        return unsupported(lifted.span, "the accelerated binding was not extracted");
    };
    // The device functions: what the kernels' functions reach.
    let roots: Vec<VarId> = (split.launches.iter())
        .filter_map(|l| match l.kind {
            LaunchKind::ParLoop { callee } => Some(callee),
            LaunchKind::Gemm => None,
        })
        .collect();
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
    for (k, l) in split.launches.iter().enumerate() {
        let name = format!("{namespace}_k{k}");
        let (kernel, text) = g.kernel(name, l)?;
        kernels.push(kernel);
        kernel_texts.push(text);
    }
    let plan = HostPlan {
        functions: (split.functions.iter())
            .map(|id| (*id, g.defs[id].ident.name.clone()))
            .collect(),
        straight_line: split.straight_line(),
        notes: split.notes.clone(),
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
            .map(|(v, t)| format!("numeric type variable {} = {t}", v.0))
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
        instantiation: inst.clone(),
    })
}

/// The modules of a CUDA-class site, one per instantiation of its number types (the default
/// first: [`instantiations`]); `Err`: the construct the generator does not support.
pub fn site_modules(
    program: &SiteProgram,
    split: &Split,
    site_name: &str,
) -> Result<Vec<CudaModule>> {
    let options = CudaOptions::for_site(site_name);
    (instantiations(&program.numeric).iter())
        .map(|inst| generate(program, split, inst, &options))
        .collect()
}

#[cfg(test)]
mod tests;
