//! Futhark code generation: the Futhark-class accelerated program of a crate as one Futhark 0.25
//! source file, with one `entry` per site (and per choice of number types).
//!
//! The input is the merged program of the crate ([`CrateProgram`]) restricted to the Futhark class
//! (`extract_for(Backend::Futhark)`): lambda-lifted, monomorphic, well-formed for Futhark (no
//! recursion, no tensors, no `par_loop`, no functions in sequences, records or conditionals).
//! Each accelerated binding becomes an entry point named by [`entry_name`]; every other extracted
//! binding becomes a `def`, in the order of the program (Futhark needs definitions before uses).
//!
//! # The mapping
//!
//! | PMExpr | Futhark |
//! |---|---|
//! | `Int`, `Float`, `Bool`, `()` | `i64`, `f64`, `bool`, `()` |
//! | a number type the captured values fix | the instantiation's `i64`, `i32`, `f64`, `f32` or `bool` |
//! | `[T]` | `[]T` (regular arrays, as the paper assumes) |
//! | tuples `(a, b)`, `()` | tuples `(a, b)`, `()`; a 1-tuple is its element (Futhark has none) |
//! | named records | records `{x = e}`, types `{x: T}` |
//! | `A -> B` | `A -> B` (parameters of functions only) |
//! | `let x = e1 in e2` | `let x = e1 in e2` |
//! | `match e with p then a else b` | `if` for `bool` literals, `let p = e in a` for irrefutable `p`, else `match e case p -> a case _ -> b` (arms on one variable merged) |
//! | `never` | `assert false d`: reaching it stops with Futhark's assertion error; `d` (zeros, `false`, empty arrays) only gives it its type |
//! | literals | suffixed: `1i64`, `2.5f64`, `(-3i64)`, `f64.inf`, `f64.nan` |
//! | `addi subi muli`, `addf subf mulf divf` | `+ - *`, `+ - * /` |
//! | `divi`, `modi` | `//`, `%%` (rounding toward zero, as Rust; Futhark's `/` and `%` floor) |
//! | `negi`, `negf`, `not` | `i64.neg x`, `f64.neg x`, `!x` |
//! | comparisons | `== != < > <= >=` |
//! | `int2float`, `floorfi` | `f64.i64 x`, `i64.f64 (f64.floor x)` |
//! | `sqrt exp log sin cos`, `pow` | `f64.sqrt` …, `x ** y` |
//! | `length null head tail reverse` | the prelude functions of the same names |
//! | `get s i`, `concat a b` | `s[i]`, `a ++ b` |
//! | `subsequence s o n` | a slice `s[a:b]`, clamped to the end of `s` as in PMExpr |
//! | `set s i v` | `s with [i] = v` when `s` is a fresh array used only there, else `(copy s) with [i] = v` |
//! | `create n (lam i. i)` | `iota n` (`indices s` when `n` is `length s`) |
//! | `create n (lam i. c)`, `c` not using `i` and unable to fail | `replicate n c` |
//! | `create n f` | `tabulate n f` |
//! | `foldl f a s` | `loop acc = a for x in s do f acc x` |
//! | `map`, `map2`, `reduce`, `flatten` | `map`, `map2`, `reduce`, `flatten` |
//! | an intrinsic passed as a function | an operator section (`(+)`), a prelude function, or a lambda |
//!
//! # Sizes
//!
//! Futhark checks array sizes statically where PMExpr does not. The generator inserts the run-time
//! checked coercions the common cases need, through small helper functions emitted at the top of
//! the program when used: the second array of `map2` takes the size of the first, the rows of the
//! right operand of `++`, the neutral element of a `reduce` over rows and the row written by `set`
//! take the row size of the array, the array elements of a literal take the size of the first.
//! Functions' return types are left to inference, so that a size that depends on the parameters
//! stays known to the caller. What remains is the paper's assumption ("constraints on sizes are
//! annotated as required by Futhark"): a function passed to `map` whose result size Futhark cannot
//! express (a `subsequence`, a conditional whose branches differ in size) is rejected by the
//! Futhark compiler.
//!
//! # Entry points
//!
//! Only arrays of primitives and primitives cross the boundary (records would be opaque values in
//! Futhark's C API): a captured value whose type holds records becomes one parameter per primitive
//! *leaf* (tuple fields, also inside sequences: `Vec<(i64, f64)>` is a `[]i64` and a `[]f64`),
//! rebuilt at the top of the entry; a result that holds records is returned as a tuple of leaves,
//! which Futhark returns as separate outputs. [`EntrySignature`] describes the mapping.
//!
//! # Names
//!
//! A variable is its name made a valid Futhark identifier plus `_` and its unique identifier
//! (`s2_6`): never a keyword, never a prelude name. Generated names start with `pm_` (helpers,
//! temporaries) or `site_` (entries), which user names are kept away from, and leaf parameters
//! contain `__`, which user names never do. A function whose types mention a number type of the
//! instantiation gets the types as a suffix (`g_3_i32`).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;

use crate::ast::{Expr, ExprKind, Lit, Param, Pat, PatKind, VarId};
use crate::classify::Backend;
use crate::extract::extract;
use crate::infer::Numeric;
use crate::intrinsics::{Intrinsic, Keyword};
use crate::lift::{Binding, Def, Origin};
use crate::program::CrateProgram;
use crate::types::{Label, TyVar, Type};

// ---------------------------------------------------------------------------------------------
// Public data
// ---------------------------------------------------------------------------------------------

/// A primitive Futhark type: what a number type of the captured values can be, and the elements
/// of the arrays that cross the boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Prim {
    /// `i64`.
    I64,
    /// `i32`.
    I32,
    /// `f64`.
    F64,
    /// `f32`.
    F32,
    /// `bool`.
    Bool,
}

impl Prim {
    /// The Futhark name (also the module of its functions: `f64.sqrt`).
    pub fn name(self) -> &'static str {
        match self {
            Prim::I64 => "i64",
            Prim::I32 => "i32",
            Prim::F64 => "f64",
            Prim::F32 => "f32",
            Prim::Bool => "bool",
        }
    }

    /// Whether this is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, Prim::F64 | Prim::F32)
    }
}

impl fmt::Display for Prim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The concrete types chosen for the number type variables of a site (see
/// [`crate::mono::Mono::numeric`]): the generator emits one entry per instantiation.
pub type Instantiation = BTreeMap<TyVar, Prim>;

/// A Futhark type, as the signature of an entry point shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FutType {
    /// A primitive.
    Prim(Prim),
    /// `[]t` (sizes are not part of the signature).
    Array(Box<FutType>),
    /// A tuple; the empty tuple is `()`.
    Tuple(Vec<FutType>),
    /// A record with named fields.
    Record(Vec<(String, FutType)>),
    /// `a -> b`.
    Function(Box<FutType>, Box<FutType>),
}

impl FutType {
    /// The Futhark type of a PMExpr type; the number type variables are fixed by `inst`. A 1-tuple
    /// is its element (Futhark has no 1-tuples).
    pub fn of(t: &Type, inst: &Instantiation) -> Result<FutType, GenError> {
        Ok(match t {
            Type::Int => FutType::Prim(Prim::I64),
            Type::Float => FutType::Prim(Prim::F64),
            Type::Bool => FutType::Prim(Prim::Bool),
            Type::Var(v) => FutType::Prim(*inst.get(v).ok_or(GenError::UnboundNumeric(*v))?),
            Type::Seq(e) => FutType::Array(Box::new(FutType::of(e, inst)?)),
            Type::Tensor(_) => return Err(GenError::Tensor),
            Type::Arrow(a, b) => FutType::Function(
                Box::new(FutType::of(a, inst)?),
                Box::new(FutType::of(b, inst)?),
            ),
            Type::Record(fs) if is_one_tuple(fs) => FutType::of(&fs[0].1, inst)?,
            Type::Record(fs) if Type::is_tuple_record(fs) => FutType::Tuple(
                fs.iter()
                    .map(|(_, t)| FutType::of(t, inst))
                    .collect::<Result<_, _>>()?,
            ),
            Type::Record(fs) => FutType::Record(
                fs.iter()
                    .map(|(l, t)| Ok((field_name(l), FutType::of(t, inst)?)))
                    .collect::<Result<_, GenError>>()?,
            ),
        })
    }

    /// Whether an array occurs anywhere in the type.
    pub fn has_array(&self) -> bool {
        match self {
            FutType::Prim(_) => false,
            FutType::Array(_) => true,
            FutType::Tuple(ts) => ts.iter().any(FutType::has_array),
            FutType::Record(fs) => fs.iter().any(|(_, t)| t.has_array()),
            FutType::Function(a, b) => a.has_array() || b.has_array(),
        }
    }

    /// Whether a tuple or record occurs anywhere in the type (so that the value cannot cross the
    /// boundary as it is).
    pub fn has_struct(&self) -> bool {
        match self {
            FutType::Prim(_) => false,
            FutType::Array(e) => e.has_struct(),
            FutType::Tuple(_) | FutType::Record(_) => true,
            FutType::Function(a, b) => a.has_struct() || b.has_struct(),
        }
    }

    fn has_function(&self) -> bool {
        match self {
            FutType::Prim(_) => false,
            FutType::Array(e) => e.has_function(),
            FutType::Tuple(ts) => ts.iter().any(FutType::has_function),
            FutType::Record(fs) => fs.iter().any(|(_, t)| t.has_function()),
            FutType::Function(..) => true,
        }
    }

    /// Whether a function type in it mentions an array (whose anonymous sizes would mean
    /// something else in a parameter's annotation: such parameters are left to inference).
    fn has_function_over_arrays(&self) -> bool {
        match self {
            FutType::Prim(_) => false,
            FutType::Array(e) => e.has_function_over_arrays(),
            FutType::Tuple(ts) => ts.iter().any(FutType::has_function_over_arrays),
            FutType::Record(fs) => fs.iter().any(|(_, t)| t.has_function_over_arrays()),
            FutType::Function(a, b) => a.has_array() || b.has_array(),
        }
    }
}

impl fmt::Display for FutType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FutType::Prim(p) => f.write_str(p.name()),
            FutType::Array(e) => write!(f, "[]{e}"),
            FutType::Tuple(ts) => {
                let parts: Vec<String> = ts.iter().map(ToString::to_string).collect();
                write!(f, "({})", parts.join(", "))
            }
            FutType::Record(fs) => {
                let parts: Vec<String> = fs.iter().map(|(l, t)| format!("{l}: {t}")).collect();
                write!(f, "{{{}}}", parts.join(", "))
            }
            FutType::Function(a, b) => {
                if matches!(**a, FutType::Function(..)) {
                    write!(f, "({a}) -> {b}")
                } else {
                    write!(f, "{a} -> {b}")
                }
            }
        }
    }
}

/// One primitive or array-of-primitives value that crosses the boundary: a parameter or an output
/// of an entry point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leaf {
    /// The Futhark parameter name, or `out0`, `out1`, … for outputs (the order of the C API's
    /// out-parameters).
    pub name: String,
    /// The record labels from the whole value to this leaf, sequence levels skipped: in a
    /// `Vec<(i64, Vec<f64>)>` the leaf `[0]` is the `[]i64` of first fields and `[1]` the
    /// `[][]f64` of second fields.
    pub path: Vec<Label>,
    /// A primitive, or an array of primitives with one dimension per sequence level crossed.
    pub ty: FutType,
}

/// A captured variable: a parameter of the accelerated binding, passed as its leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryParam {
    /// The Rust variable's name.
    pub name: String,
    /// Its type in Futhark terms.
    pub ty: FutType,
    /// The entry point's parameters for it, in order; empty for `()`.
    pub leaves: Vec<Leaf>,
}

/// The value of the accelerated expression, returned as its leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryResult {
    /// Its type in Futhark terms.
    pub ty: FutType,
    /// The entry point's outputs, in order.
    pub leaves: Vec<Leaf>,
}

/// How a site's entry point is called: what the Rust side must pass and what it gets back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntrySignature {
    /// The site (`file:line:column`).
    pub site: String,
    /// The entry point's name ([`entry_name`]).
    pub name: String,
    /// The number types it was generated for.
    pub instantiation: Instantiation,
    /// The captured variables, in the order of the accelerated binding's parameters.
    pub params: Vec<EntryParam>,
    /// The result.
    pub result: EntryResult,
}

/// One entry point to generate: a site and the number types of its captured values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryRequest {
    /// The site (`file:line:column`, as in [`CrateProgram::sites`]).
    pub site: String,
    /// The number types.
    pub instantiation: Instantiation,
}

/// A generated Futhark program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FutharkProgram {
    /// The source text.
    pub source: String,
    /// Its entry points, in the order of the requests.
    pub entries: Vec<EntrySignature>,
}

/// An entry point that could not be generated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The request.
    pub request: EntryRequest,
    /// Why.
    pub error: GenError,
}

/// The Futhark program of a crate: every entry that could be generated, and the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrateFuthark {
    /// The program (the skipped entries are listed in its leading comment).
    pub program: FutharkProgram,
    /// The entries left out; their sites run on the CPU targets only.
    pub skipped: Vec<Skipped>,
}

/// Why the generator cannot produce an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GenError {
    /// A tensor reached the Futhark generator: tensors belong to the CUDA class.
    Tensor,
    /// A construct Futhark has no counterpart for (described).
    Unsupported(String),
    /// A recursive binding (Futhark has no recursion; the well-formedness check rejects them).
    RecursiveLet(String),
    /// A number type variable that the instantiation does not fix.
    UnboundNumeric(TyVar),
    /// The request names no site of the Futhark class.
    UnknownSite(String),
    /// Two requests whose entry points would have the same name.
    NameClash(String),
}

impl fmt::Display for GenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GenError::Tensor => f.write_str("tensors cannot be used in Futhark code"),
            GenError::Unsupported(what) => write!(f, "not supported in Futhark code: {what}"),
            GenError::RecursiveLet(name) => {
                write!(f, "`{name}` is recursive, and Futhark has no recursion")
            }
            GenError::UnboundNumeric(v) => {
                write!(f, "the number type variable {} has no type chosen", v.0)
            }
            GenError::UnknownSite(site) => write!(f, "no Futhark-class site `{site}`"),
            GenError::NameClash(name) => {
                write!(f, "two entry points would be named `{name}`")
            }
        }
    }
}

impl std::error::Error for GenError {}

// ---------------------------------------------------------------------------------------------
// Public functions
// ---------------------------------------------------------------------------------------------

/// The name of a site's entry point: `site_` and the site (`file:line:column`) with every
/// character other than an ASCII letter or digit replaced by `_`, then one suffix per number type
/// of the instantiation, in type-variable order (`site_src_main_rs_12_5_i32`). The runtime calls
/// the entry by this name.
pub fn entry_name(site: &str, inst: &Instantiation) -> String {
    let mut name = String::from("site_");
    name.extend(
        site.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }),
    );
    for p in inst.values() {
        name.push('_');
        name.push_str(p.name());
    }
    name
}

/// The most instantiations [`instantiations`] lists for one site.
pub const MAX_INSTANTIATIONS: usize = 16;

/// The instantiations worth emitting for a site whose captured values fix `numeric`: every
/// combination of `i64` and `f64` for a number used in arithmetic (`Numeric::Num`), and of `i64`,
/// `f64` and `bool` for one only compared (`Numeric::Scalar`), in a fixed order, at most
/// [`MAX_INSTANTIATIONS`].
///
/// The program itself cannot tell which types the Rust values will have (a number type variable
/// is never unified with a literal's type, or it would not be left), so these are the types the
/// runtime's `Num` and `Scalar` traits implement; `i32` and `f32` entries can be requested
/// explicitly through [`generate`].
pub fn instantiations(numeric: &[(TyVar, Numeric)]) -> Vec<Instantiation> {
    let mut out = vec![Instantiation::new()];
    for (v, kind) in numeric {
        let choices: &[Prim] = match kind {
            Numeric::Num => &[Prim::I64, Prim::F64],
            Numeric::Scalar => &[Prim::I64, Prim::F64, Prim::Bool],
        };
        out = out
            .iter()
            .flat_map(|inst| {
                choices.iter().map(move |p| {
                    let mut i = inst.clone();
                    i.insert(*v, *p);
                    i
                })
            })
            .take(MAX_INSTANTIATIONS)
            .collect();
    }
    out
}

/// Every entry worth emitting for the Futhark-class sites of a program: each site with each of
/// its [`instantiations`], in site order.
pub fn requests(program: &CrateProgram) -> Vec<EntryRequest> {
    program
        .sites
        .iter()
        .filter(|(_, _, b)| *b == Backend::Futhark)
        .flat_map(|(site, a, _)| {
            let numeric = program.numeric.get(a).map_or(&[][..], Vec::as_slice);
            instantiations(numeric)
                .into_iter()
                .map(|instantiation| EntryRequest {
                    site: site.clone(),
                    instantiation,
                })
        })
        .collect()
}

/// Generates the Futhark program with the requested entry points (and the functions they use).
/// Fails on the first request that cannot be generated.
pub fn generate(
    program: &CrateProgram,
    requests: &[EntryRequest],
) -> Result<FutharkProgram, GenError> {
    generate_with_notes(program, requests, &[])
}

/// The Futhark program of a crate: every [`requests`] entry that can be generated, the others
/// listed in [`CrateFuthark::skipped`] (their sites then run on the CPU targets only). `None`
/// when the crate has no Futhark-class site.
pub fn generate_crate(program: &CrateProgram) -> Option<CrateFuthark> {
    let all = requests(program);
    if all.is_empty() {
        return None;
    }
    let mut ok = Vec::new();
    let mut skipped = Vec::new();
    let mut names = HashSet::new();
    for request in all {
        let name = entry_name(&request.site, &request.instantiation);
        // Each request alone first, so that one site's problem does not cost the others theirs.
        let result = if names.contains(&name) {
            Err(GenError::NameClash(name.clone()))
        } else {
            generate(program, std::slice::from_ref(&request)).map(|_| ())
        };
        match result {
            Ok(()) => {
                names.insert(name);
                ok.push(request);
            }
            Err(error) => skipped.push(Skipped { request, error }),
        }
    }
    let notes: Vec<String> = skipped
        .iter()
        .map(|s| {
            format!(
                "not generated: {}{} ({}); it runs on the CPU",
                s.request.site,
                instantiation_note(&s.request.instantiation),
                s.error
            )
        })
        .collect();
    match generate_with_notes(program, &ok, &notes) {
        Ok(program) => Some(CrateFuthark { program, skipped }),
        // Each entry was generated alone: together they should be too; if not, none is.
        Err(error) => {
            skipped.extend(ok.into_iter().map(|request| Skipped {
                request,
                error: error.clone(),
            }));
            let notes = vec![format!("not generated: every site ({error})")];
            let program = generate_with_notes(program, &[], &notes).ok()?;
            Some(CrateFuthark { program, skipped })
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The program
// ---------------------------------------------------------------------------------------------

/// A helper function emitted at the top of the program when used: size coercions that Futhark's
/// size types need (checked at run time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Helper {
    SameSize,
    RowSize,
    RowsLike,
    SetRow,
}

impl Helper {
    fn name(self) -> &'static str {
        match self {
            Helper::SameSize => "pm_same_size",
            Helper::RowSize => "pm_row_size",
            Helper::RowsLike => "pm_rows_like",
            Helper::SetRow => "pm_set_row",
        }
    }

    fn source(self) -> &'static str {
        match self {
            Helper::SameSize => {
                "-- `ys` with the size of `xs` (map2 needs equal sizes).\n\
                 def pm_same_size [n] 'a 'b (_: [n]a) (ys: []b) : [n]b = ys :> [n]b"
            }
            Helper::RowSize => {
                "-- `x` with the size of the rows of `xss`.\n\
                 def pm_row_size [n] [m] 't (_: [n][m]t) (x: []t) : [m]t = x :> [m]t"
            }
            Helper::RowsLike => {
                "-- `yss` with rows of the size of the rows of `xss` (for `++`).\n\
                 def pm_rows_like [n] [m] [k] 't (_: [n][m]t) (yss: [k][]t) : [k][m]t = yss :> [k][m]t"
            }
            Helper::SetRow => {
                "-- `xss` with row `i` replaced by `v` (in place: `xss` is consumed).\n\
                 def pm_set_row [n] [m] 't (xss: *[n][m]t) (i: i64) (v: []t) : *[n][m]t =\n  \
                 xss with [i] = (v :> [m]t)"
            }
        }
    }
}

/// What every function of the generator can see.
struct Context<'a> {
    names: &'a [String],
    /// Every extracted definition.
    defs: HashMap<VarId, &'a Def>,
    /// The number type variables each definition's types mention.
    def_vars: HashMap<VarId, BTreeSet<TyVar>>,
}

impl<'a> Context<'a> {
    fn new(names: &'a [String], bindings: &'a [Binding]) -> Self {
        let mut defs = HashMap::new();
        let mut def_vars = HashMap::new();
        for d in bindings.iter().flat_map(Binding::defs) {
            defs.insert(d.ident.id, d);
            let mut vars = BTreeSet::new();
            expr_type_vars(&d.value, &mut vars);
            def_vars.insert(d.ident.id, vars);
        }
        Context {
            names,
            defs,
            def_vars,
        }
    }

    /// The name of top-level definition `id` under `inst`: its number types as a suffix.
    fn top_name(&self, id: VarId, inst: &Instantiation) -> Result<String, GenError> {
        let mut name = var_name(self.names, id);
        for v in &self.def_vars[&id] {
            let p = inst.get(v).ok_or(GenError::UnboundNumeric(*v))?;
            name.push('_');
            name.push_str(p.name());
        }
        Ok(name)
    }
}

fn generate_with_notes(
    program: &CrateProgram,
    requests: &[EntryRequest],
    notes: &[String],
) -> Result<FutharkProgram, GenError> {
    let (_, bindings) = program.extract_for(Backend::Futhark);
    let cx = Context::new(&program.names, &bindings);
    // Each request: its accelerated binding and what that binding reaches.
    let mut resolved = Vec::new();
    let mut entry_names = HashSet::new();
    for r in requests {
        let a = program
            .sites
            .iter()
            .find(|(name, _, b)| *name == r.site && *b == Backend::Futhark)
            .map(|(_, a, _)| *a)
            .ok_or_else(|| GenError::UnknownSite(r.site.clone()))?;
        let name = entry_name(&r.site, &r.instantiation);
        if !entry_names.insert(name.clone()) {
            return Err(GenError::NameClash(name));
        }
        let (reach, _) = extract(&BTreeSet::from([a]), &bindings);
        resolved.push((r, a, reach, name));
    }
    let mut helpers = BTreeSet::new();
    let mut chunks: Vec<(usize, String)> = Vec::new();
    let mut entries: Vec<(usize, EntrySignature)> = Vec::new();
    let mut emitted: HashSet<String> = HashSet::new();
    for b in &bindings {
        let d = match b {
            Binding::Let(d) => d,
            Binding::Rec(ds) => {
                if let Some(d) = ds.iter().find(|d| {
                    resolved
                        .iter()
                        .any(|(_, _, reach, _)| reach.contains(&d.ident.id))
                }) {
                    return Err(GenError::RecursiveLet(d.ident.name.clone()));
                }
                continue;
            }
        };
        for (k, (r, a, reach, name)) in resolved.iter().enumerate() {
            if !reach.contains(&d.ident.id) {
                continue;
            }
            let mut g = Gen::new(&cx, &r.instantiation, &mut helpers);
            if d.ident.id == *a {
                let (text, sig) = g.entry(d, &r.site, name)?;
                chunks.push((k, text));
                entries.push((k, sig));
            } else if d.origin != Origin::Site {
                let top = cx.top_name(d.ident.id, &r.instantiation)?;
                if emitted.insert(top.clone()) {
                    let text = g.def(d, &top)?;
                    chunks.push((k, text));
                }
            }
        }
    }
    let mut source = String::from(
        "-- Generated by pmexpr from the crate's Futhark-class `accelerate!` sites: one entry\n\
         -- point per site and choice of number types. Do not edit.\n",
    );
    for note in notes {
        source.push_str(&format!("-- {note}\n"));
    }
    for h in &helpers {
        source.push('\n');
        source.push_str(h.source());
        source.push('\n');
    }
    for (_, text) in &chunks {
        source.push('\n');
        source.push_str(text);
        source.push('\n');
    }
    // Entries in request order, whatever the order of the bindings.
    entries.sort_by_key(|(k, _)| *k);
    Ok(FutharkProgram {
        source,
        entries: entries.into_iter().map(|(_, s)| s).collect(),
    })
}

fn instantiation_note(inst: &Instantiation) -> String {
    if inst.is_empty() {
        String::new()
    } else {
        let types: Vec<&str> = inst.values().map(|p| p.name()).collect();
        format!(" with captured numbers of type {}", types.join(", "))
    }
}

/// Collects the type variables mentioned anywhere in an expression's types.
fn expr_type_vars(e: &Expr, out: &mut BTreeSet<TyVar>) {
    e.walk(&mut |x| {
        type_vars(&x.ty, out);
        match &x.kind {
            ExprKind::Lam { params, .. } => params.iter().for_each(|p| type_vars(&p.ty, out)),
            ExprKind::Let { binder, .. } => type_vars(&binder.ty, out),
            ExprKind::Match { pat, .. } => pat_type_vars(pat, out),
            _ => {}
        }
    });
}

fn pat_type_vars(p: &Pat, out: &mut BTreeSet<TyVar>) {
    type_vars(&p.ty, out);
    if let PatKind::Record(fs) = &p.kind {
        fs.iter().for_each(|(_, p)| pat_type_vars(p, out));
    }
}

fn type_vars(t: &Type, out: &mut BTreeSet<TyVar>) {
    match t {
        Type::Var(v) => {
            out.insert(*v);
        }
        Type::Int | Type::Float | Type::Bool => {}
        Type::Seq(a) | Type::Tensor(a) => type_vars(a, out),
        Type::Arrow(a, b) => {
            type_vars(a, out);
            type_vars(b, out);
        }
        Type::Record(fs) => fs.iter().for_each(|(_, t)| type_vars(t, out)),
    }
}

// ---------------------------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------------------------

/// Futhark's reserved words (language reference, "Reserved names and symbols").
const KEYWORDS: &[&str] = &[
    "true", "false", "if", "then", "else", "def", "let", "loop", "in", "val", "for", "do", "with",
    "local", "open", "include", "import", "type", "entry", "module", "while", "assert", "match",
    "case",
];

/// A user's name as the stem of a Futhark identifier: ASCII letters, digits and single `_`s,
/// starting with a letter, never starting with a generated prefix (`pm_`, `site_`).
fn stem(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() { c } else { '_' };
        if c == '_' && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        out.push(c);
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'v');
    }
    if out == "pm" || out.starts_with("pm_") || out == "site" || out.starts_with("site_") {
        out.insert_str(0, "u_");
    }
    out
}

/// The Futhark name of a variable: its stem, `_` and its identifier.
fn var_name(names: &[String], id: VarId) -> String {
    let name = names.get(id.0 as usize).map_or("v", String::as_str);
    format!("{}_{}", stem(name), id.0)
}

/// The Futhark name of a record field.
fn field_name(l: &Label) -> String {
    match l {
        Label::Index(i) => i.to_string(),
        Label::Name(n) => {
            let mut s = stem(n);
            if KEYWORDS.contains(&s.as_str()) {
                s.push('_');
            }
            s
        }
    }
}

fn is_one_tuple(fs: &[(Label, Type)]) -> bool {
    fs.len() == 1 && fs[0].0 == Label::Index(0)
}

// ---------------------------------------------------------------------------------------------
// Code fragments
// ---------------------------------------------------------------------------------------------

/// How a fragment of Futhark code combines with what surrounds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Never needs parentheses: names, literals, parenthesized or bracketed forms.
    Atom,
    /// An application or operator: parenthesized as an argument or operand.
    Closed,
    /// A form that extends as far right as possible (`if`, `match`, `loop`, `with`):
    /// parenthesized everywhere but in tail position.
    Open,
    /// A `let … in …` chain: open, and merged into an enclosing chain that ends with it.
    Lets,
}

/// A fragment of Futhark code. Lines after the first are indented relative to the first.
#[derive(Debug, Clone)]
struct Code {
    text: String,
    kind: Kind,
}

impl Code {
    fn atom(text: impl Into<String>) -> Code {
        Code {
            text: text.into(),
            kind: Kind::Atom,
        }
    }

    fn closed(text: impl Into<String>) -> Code {
        Code {
            text: text.into(),
            kind: Kind::Closed,
        }
    }

    fn open(text: impl Into<String>) -> Code {
        Code {
            text: text.into(),
            kind: Kind::Open,
        }
    }

    /// As an argument or operand.
    fn arg(&self) -> String {
        match self.kind {
            Kind::Atom => self.text.clone(),
            _ => paren(&self.text),
        }
    }

    /// Where an application is fine but an open form must be closed (then-branches, case bodies,
    /// tuple fields, indices).
    fn closed_text(&self) -> String {
        match self.kind {
            Kind::Open | Kind::Lets => paren(&self.text),
            Kind::Atom | Kind::Closed => self.text.clone(),
        }
    }

    fn is_multiline(&self) -> bool {
        self.text.contains('\n')
    }

    /// Whether the fragment can be written twice without computing anything twice.
    fn is_name(&self) -> bool {
        self.kind == Kind::Atom
            && !self.text.is_empty()
            && self
                .text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    }
}

fn paren(text: &str) -> String {
    format!("({})", indent(text, 1))
}

/// Indents every line but the first by `n` spaces.
fn indent(text: &str, n: usize) -> String {
    text.replace('\n', &format!("\n{}", " ".repeat(n)))
}

/// `let pat = value` as a line of a `let` chain.
fn let_line(pat: &str, value: &Code) -> String {
    if value.is_multiline() {
        format!("let {pat} =\n  {}", indent(&value.text, 2))
    } else {
        format!("let {pat} = {}", value.text)
    }
}

/// `let … in body`; a body that is itself a chain continues this one (`in` is optional before a
/// `let`).
fn with_lets(lines: Vec<String>, body: Code) -> Code {
    if lines.is_empty() {
        return body;
    }
    let mut text = lines.join("\n");
    if body.kind == Kind::Lets {
        text.push('\n');
        text.push_str(&body.text);
    } else {
        text.push_str("\nin ");
        text.push_str(&indent(&body.text, 3));
    }
    Code {
        text,
        kind: Kind::Lets,
    }
}

/// `f a b …` with every part as an argument.
fn apply_text(f: &str, args: &[Code]) -> Code {
    let mut text = f.to_string();
    for a in args {
        text.push(' ');
        text.push_str(&a.arg());
    }
    Code::closed(text)
}

/// `a op b`.
fn binop(a: &Code, op: &str, b: &Code) -> Code {
    Code::closed(format!("{} {op} {}", a.arg(), b.arg()))
}

// ---------------------------------------------------------------------------------------------
// The generator of one definition
// ---------------------------------------------------------------------------------------------

/// Generates one definition under one instantiation.
struct Gen<'a, 'b> {
    cx: &'a Context<'a>,
    inst: &'a Instantiation,
    helpers: &'b mut BTreeSet<Helper>,
    /// Counter for the `pm_` temporaries of this definition.
    tmp: u32,
    /// `let`-bound variables whose value is a fresh array used exactly once: a `set` on them
    /// updates in place.
    once: HashSet<VarId>,
    /// Inside a place where Futhark forbids consuming (a partial application's arguments, the value
    /// of a function-typed `let`): `set` copies.
    no_inplace: u32,
}

type R<T> = Result<T, GenError>;

impl<'a, 'b> Gen<'a, 'b> {
    fn new(
        cx: &'a Context<'a>,
        inst: &'a Instantiation,
        helpers: &'b mut BTreeSet<Helper>,
    ) -> Self {
        Gen {
            cx,
            inst,
            helpers,
            tmp: 0,
            once: HashSet::new(),
            no_inplace: 0,
        }
    }

    fn fresh(&mut self, hint: &str) -> String {
        self.tmp += 1;
        format!("pm_{hint}{}", self.tmp)
    }

    fn ty(&self, t: &Type) -> R<FutType> {
        FutType::of(t, self.inst)
    }

    /// The primitive type of a number.
    fn prim(&self, t: &Type) -> R<Prim> {
        match self.ty(t)? {
            FutType::Prim(p) => Ok(p),
            other => Err(GenError::Unsupported(format!(
                "a number operation on a value of type `{other}`"
            ))),
        }
    }

    fn var(&self, id: VarId) -> R<String> {
        if self.cx.defs.contains_key(&id) {
            self.cx.top_name(id, self.inst)
        } else {
            Ok(var_name(self.cx.names, id))
        }
    }

    /// A binder: `_` for the wildcard, else the variable's name.
    fn binder(&self, p: &Param) -> String {
        if p.ident.name == "_" {
            "_".to_string()
        } else {
            var_name(self.cx.names, p.ident.id)
        }
    }

    // ----- definitions -----

    /// `def name params = body`.
    fn def(&mut self, d: &Def, name: &str) -> R<String> {
        let mut text = String::new();
        if let Origin::Item(item) = &d.origin {
            text.push_str(&format!(
                "-- #[pmexpr] fn {} at {}\n",
                item.name, item.location
            ));
        }
        let (params, body) = match &d.value.kind {
            ExprKind::Lam { params, body } => (params.as_slice(), &**body),
            _ => (&[][..], &d.value),
        };
        text.push_str("def ");
        text.push_str(name);
        for p in params {
            text.push(' ');
            text.push_str(&self.def_param(p)?);
        }
        let body = self.expr(body)?;
        text.push_str(" =\n  ");
        text.push_str(&indent(&body.text, 2));
        Ok(text)
    }

    /// A parameter of a `def`, annotated with its type unless it is a function over arrays (whose
    /// anonymous sizes would become the `def`'s size parameters: inference does better).
    fn def_param(&self, p: &Param) -> R<String> {
        let name = self.binder(p);
        let t = self.ty(&p.ty)?;
        Ok(if t.has_function_over_arrays() {
            name
        } else {
            format!("({name}: {t})")
        })
    }

    /// A parameter of a lambda, annotated when its type holds no array and no function.
    fn lambda_param(&self, name: &str, t: &Type) -> R<String> {
        let ft = self.ty(t)?;
        Ok(if ft.has_array() || ft.has_function() {
            name.to_string()
        } else {
            format!("({name}: {ft})")
        })
    }

    /// The entry point of an accelerated binding, and its signature.
    fn entry(&mut self, d: &Def, site: &str, name: &str) -> R<(String, EntrySignature)> {
        let (params, body) = match &d.value.kind {
            ExprKind::Lam { params, body } => (params.as_slice(), &**body),
            _ => (&[][..], &d.value),
        };
        let mut header = vec![format!(
            "-- accelerate! at {site}{}",
            instantiation_note(self.inst)
        )];
        let mut sig_params = Vec::new();
        let mut param_text = Vec::new();
        let mut rebuild = Vec::new();
        for p in params {
            let (param, text, line) = self.entry_param(p)?;
            param_text.extend(text);
            rebuild.extend(line);
            sig_params.push(param);
        }
        let result_ty = self.ty(&body.ty)?;
        let paths = leaf_paths(&body.ty)?;
        if paths.is_empty() {
            return Err(GenError::Unsupported(
                "a site whose value is `()` (a Futhark entry point returns values)".into(),
            ));
        }
        let leaves: Vec<Leaf> = paths
            .into_iter()
            .enumerate()
            .map(|(k, (path, ty))| {
                Ok(Leaf {
                    name: format!("out{k}"),
                    path,
                    ty: self.ty(&ty)?,
                })
            })
            .collect::<R<_>>()?;
        let out_ty = match leaves.as_slice() {
            [one] => one.ty.to_string(),
            many => {
                let ts: Vec<String> = many.iter().map(|l| l.ty.to_string()).collect();
                format!("({})", ts.join(", "))
            }
        };
        let value = self.expr(body)?;
        let mut lines = rebuild;
        let result = if result_ty.has_struct() {
            lines.push(let_line("pm_result", &value));
            let outs = self.flatten_result(&body.ty, "pm_result", 0)?;
            Code::atom(if outs.len() == 1 {
                outs[0].clone()
            } else {
                format!("({})", outs.join(", "))
            })
        } else {
            value
        };
        let body = with_lets(lines, result);
        header.push(format!(
            "entry {name}{}{} : {out_ty} =",
            if param_text.is_empty() { "" } else { " " },
            param_text.join(" ")
        ));
        let text = format!("{}\n  {}", header.join("\n"), indent(&body.text, 2));
        let sig = EntrySignature {
            site: site.to_string(),
            name: name.to_string(),
            instantiation: self.inst.clone(),
            params: sig_params,
            result: EntryResult {
                ty: result_ty,
                leaves,
            },
        };
        Ok((text, sig))
    }

    /// A captured variable as entry parameters: its signature, the parameter declarations, and the
    /// `let` line that rebuilds it from its leaves (when it holds records).
    fn entry_param(&mut self, p: &Param) -> R<(EntryParam, Vec<String>, Option<String>)> {
        let var = var_name(self.cx.names, p.ident.id);
        let ty = self.ty(&p.ty)?;
        let paths = leaf_paths(&p.ty)?;
        let whole = !ty.has_struct();
        let leaves: Vec<Leaf> = paths
            .into_iter()
            .enumerate()
            .map(|(k, (path, t))| {
                Ok(Leaf {
                    name: if whole {
                        var.clone()
                    } else {
                        format!("{var}__{k}")
                    },
                    path,
                    ty: self.ty(&t)?,
                })
            })
            .collect::<R<_>>()?;
        let decls = leaves
            .iter()
            .map(|l| format!("({}: {})", l.name, l.ty))
            .collect();
        let line = if whole {
            None
        } else {
            let access: Vec<Access> = leaves
                .iter()
                .map(|l| Access {
                    name: l.name.clone(),
                    idx: Vec::new(),
                })
                .collect();
            let built = self.rebuild(&p.ty, &access, 0)?;
            Some(let_line(&var, &built))
        };
        let param = EntryParam {
            name: p.ident.name.clone(),
            ty,
            leaves,
        };
        Ok((param, decls, line))
    }

    /// A value of type `t` from its leaves (in [`leaf_paths`] order).
    fn rebuild(&mut self, t: &Type, leaves: &[Access], depth: usize) -> R<Code> {
        if !self.ty(t)?.has_struct() {
            return Ok(first_leaf(leaves)?.code());
        }
        match t {
            Type::Seq(e) => {
                let first = first_leaf(leaves)?;
                let i = format!("pm_i{depth}");
                let inner: Vec<Access> = leaves
                    .iter()
                    .map(|a| {
                        let mut a = a.clone();
                        a.idx.push(i.clone());
                        a
                    })
                    .collect();
                let body = self.rebuild(e, &inner, depth + 1)?;
                Ok(Code::closed(format!(
                    "map (\\{i} -> {}) (indices {})",
                    body.text,
                    first.code().arg()
                )))
            }
            Type::Record(fs) if is_one_tuple(fs) => self.rebuild(&fs[0].1, leaves, depth),
            Type::Record(fs) => {
                let mut rest = leaves;
                let mut parts = Vec::new();
                for (l, ft) in fs {
                    let n = leaf_paths(ft)?.len();
                    let (mine, after) = rest.split_at(n);
                    rest = after;
                    let code = self.rebuild(ft, mine, depth)?;
                    parts.push((field_name(l), code));
                }
                Ok(record_code(fs, parts))
            }
            _ => Ok(first_leaf(leaves)?.code()),
        }
    }

    /// The leaves of the value named `code` (an atom) of type `t`, as expressions.
    fn flatten_result(&self, t: &Type, code: &str, depth: usize) -> R<Vec<String>> {
        if !self.ty(t)?.has_struct() {
            return Ok(vec![code.to_string()]);
        }
        match t {
            Type::Seq(e) => {
                let r = format!("pm_r{depth}");
                let inner = self.flatten_result(e, &r, depth + 1)?;
                let array = if code.contains('.') {
                    format!("({code})")
                } else {
                    code.to_string()
                };
                Ok(inner
                    .into_iter()
                    .map(|x| format!("(map (\\{r} -> {x}) {array})"))
                    .collect())
            }
            Type::Record(fs) if is_one_tuple(fs) => self.flatten_result(&fs[0].1, code, depth),
            Type::Record(fs) => {
                let mut out = Vec::new();
                for (l, ft) in fs {
                    let field = format!("{code}.{}", field_name(l));
                    out.extend(self.flatten_result(ft, &field, depth)?);
                }
                Ok(out)
            }
            _ => Ok(vec![code.to_string()]),
        }
    }

    // ----- expressions -----

    fn expr(&mut self, e: &Expr) -> R<Code> {
        match &e.kind {
            ExprKind::Var { ident, .. } => Ok(Code::atom(self.var(ident.id)?)),
            ExprKind::Lit(l) => Ok(lit(l)),
            ExprKind::Intrinsic(i) => self.intrinsic_value(*i, &e.ty),
            ExprKind::Lam { params, body } => {
                let mut ps = Vec::new();
                for p in params {
                    ps.push(self.lambda_param(&self.binder(p), &p.ty)?);
                }
                let body = self.expr(body)?;
                Ok(Code::atom(format!(
                    "(\\{} -> {})",
                    ps.join(" "),
                    indent(&body.text, 2)
                )))
            }
            ExprKind::App { func, args } => self.app(func, args, &e.ty),
            ExprKind::Let { .. } => self.let_chain(e),
            ExprKind::RecLet { fns, .. } => Err(GenError::RecursiveLet(
                fns.first()
                    .map(|f| f.ident.name.clone())
                    .unwrap_or_default(),
            )),
            ExprKind::Match { pat, .. } if pat.irrefutable() => self.let_chain(e),
            ExprKind::Match { .. } => self.match_(e),
            ExprKind::Never(_) => self.never(&e.ty),
            ExprKind::Record(fs) => self.record(fs, &e.ty),
            ExprKind::Proj { expr, label } => {
                let inner = self.expr(expr)?;
                match &expr.ty {
                    Type::Record(fs) if is_one_tuple(fs) => Ok(inner),
                    _ => Ok(Code::closed(format!(
                        "{}.{}",
                        inner.arg(),
                        field_name(label)
                    ))),
                }
            }
            ExprKind::Seq(es) => self.seq(es, &e.ty),
            ExprKind::Keyword { kw, args } => self.keyword(*kw, args),
            ExprKind::BinOp { .. } | ExprKind::Neg(_) => Err(GenError::Unsupported(
                "an operator not resolved by monomorphization".into(),
            )),
        }
    }

    fn app(&mut self, func: &Expr, args: &[Expr], ty: &Type) -> R<Code> {
        if let ExprKind::Intrinsic(i) = func.kind
            && args.len() == i.arity()
        {
            return self.intrinsic(i, args);
        }
        // Futhark forbids consuming inside the arguments of a partial application.
        let partial = ty.is_arrow();
        if partial {
            self.no_inplace += 1;
        }
        let f = self.expr(func);
        let codes: R<Vec<Code>> = args.iter().map(|a| self.expr(a)).collect();
        if partial {
            self.no_inplace -= 1;
        }
        Ok(apply_text(&f?.arg(), &codes?))
    }

    /// A chain of `let`s (and irrefutable matches, which bind like `let`s).
    fn let_chain(&mut self, mut e: &Expr) -> R<Code> {
        let mut lines = Vec::new();
        loop {
            match &e.kind {
                ExprKind::Let {
                    binder,
                    value,
                    body,
                    ..
                } => {
                    // Futhark: a value computed with an in-place update may not be a function.
                    let guard = binder.ty.has_arrow();
                    if guard {
                        self.no_inplace += 1;
                    }
                    let v = self.expr(value);
                    if guard {
                        self.no_inplace -= 1;
                    }
                    let v = v?;
                    if !guard && is_fresh(value) && count_uses(body, binder.ident.id) == 1 {
                        self.once.insert(binder.ident.id);
                    }
                    lines.push(let_line(&self.binder(binder), &v));
                    e = body;
                }
                ExprKind::Match {
                    scrutinee,
                    pat,
                    then,
                    ..
                } if pat.irrefutable() => {
                    let s = self.expr(scrutinee)?;
                    lines.push(let_line(&self.pat(pat)?, &s));
                    e = then;
                }
                _ => break,
            }
        }
        let body = self.expr(e)?;
        Ok(with_lets(lines, body))
    }

    /// A refutable match: `if` on a `bool` literal, else a Futhark `match` whose cases are the
    /// arms of the chain on the same variable (the parser writes `match x { … }` as nested
    /// matches on `x`), ending with `case _` unless an arm matches everything.
    fn match_(&mut self, e: &Expr) -> R<Code> {
        let ExprKind::Match {
            scrutinee,
            pat,
            then,
            otherwise,
        } = &e.kind
        else {
            unreachable!("match_ is called on matches")
        };
        let s = self.expr(scrutinee)?;
        if let PatKind::Lit(Lit::Bool(b)) = pat.kind {
            // `match b { true => x, false => y }`: the second arm is the else-branch.
            let other = match &otherwise.kind {
                ExprKind::Match {
                    scrutinee: s2,
                    pat: p2,
                    then: t2,
                    ..
                } if same_var(scrutinee, s2)
                    && (matches!(p2.kind, PatKind::Wild)
                        || matches!(p2.kind, PatKind::Lit(Lit::Bool(c)) if c != b)) =>
                {
                    t2
                }
                _ => otherwise,
            };
            let (yes, no) = if b { (then, other) } else { (other, then) };
            let yes = self.expr(yes)?;
            let no = self.expr(no)?;
            return Ok(if_code(&s, &yes, &no));
        }
        let mut arms = Vec::new();
        let mut rest: &Expr = e;
        while let ExprKind::Match {
            scrutinee: s2,
            pat,
            then,
            otherwise,
        } = &rest.kind
        {
            if !arms.is_empty() && !same_var(scrutinee, s2) {
                break;
            }
            let body = self.expr(then)?;
            arms.push(format!(
                "case {} -> {}",
                self.pat(pat)?,
                indent(&body.closed_text(), 2)
            ));
            if pat.irrefutable() {
                return Ok(Code::open(format!(
                    "match {}\n{}",
                    s.closed_text(),
                    arms.join("\n")
                )));
            }
            rest = otherwise;
        }
        let last = self.expr(rest)?;
        arms.push(format!("case _ -> {}", indent(&last.closed_text(), 2)));
        Ok(Code::open(format!(
            "match {}\n{}",
            s.closed_text(),
            arms.join("\n")
        )))
    }

    fn pat(&self, p: &Pat) -> R<String> {
        Ok(match &p.kind {
            PatKind::Wild => "_".to_string(),
            PatKind::Bind(i) if i.name == "_" => "_".to_string(),
            PatKind::Bind(i) => var_name(self.cx.names, i.id),
            PatKind::Lit(l) => match l {
                Lit::Int(i) => format!("{i}i64"),
                Lit::Float(x) if x.is_finite() => format!("{x:?}f64"),
                Lit::Float(_) => {
                    return Err(GenError::Unsupported(
                        "a pattern that is an infinite or NaN float".into(),
                    ));
                }
                Lit::Bool(b) => b.to_string(),
                Lit::Unit => "()".to_string(),
            },
            PatKind::Record(fs) => {
                let Type::Record(tys) = &p.ty else {
                    return Err(GenError::Unsupported(
                        "a record pattern on a value that is not a record".into(),
                    ));
                };
                if is_one_tuple(tys) && fs.len() == 1 {
                    return self.pat(&fs[0].1);
                }
                let parts: Vec<String> = fs.iter().map(|(_, p)| self.pat(p)).collect::<R<_>>()?;
                if Type::is_tuple_record(tys) {
                    format!("({})", parts.join(", "))
                } else {
                    let named: Vec<String> = fs
                        .iter()
                        .zip(parts)
                        .map(|((l, _), p)| format!("{} = {p}", field_name(l)))
                        .collect();
                    format!("{{{}}}", named.join(", "))
                }
            }
        })
    }

    /// `never`: `assert false d`, where `d` is a value of the expected type. Reaching it stops
    /// the program with Futhark's "assertion failed" error, as reaching `never` is an error in
    /// PMExpr; the value only gives the expression its type. (Futhark has no bottom value, and
    /// its typed hole `???` fails only when evaluated but would leave the type ambiguous.)
    fn never(&self, t: &Type) -> R<Code> {
        Ok(Code::closed(format!(
            "assert false {}",
            self.default_value(t)?.arg()
        )))
    }

    /// A value of type `t` (for `never`): zeros, `false`, empty arrays.
    fn default_value(&self, t: &Type) -> R<Code> {
        Ok(match t {
            Type::Record(fs) if is_one_tuple(fs) => self.default_value(&fs[0].1)?,
            Type::Record(fs) => {
                let parts = fs
                    .iter()
                    .map(|(l, t)| Ok((field_name(l), self.default_value(t)?)))
                    .collect::<R<Vec<_>>>()?;
                record_code(fs, parts)
            }
            Type::Seq(_) => Code::atom(format!("([] : [0]{})", self.elem_type(t)?)),
            Type::Arrow(..) => {
                return Err(GenError::Unsupported("`never` of a function type".into()));
            }
            _ => Code::atom(match self.prim(t)? {
                Prim::Bool => "false".to_string(),
                p if p.is_float() => format!("0.0{p}"),
                p => format!("0{p}"),
            }),
        })
    }

    /// The element type of an array type, as written after `[n]`.
    fn elem_type(&self, t: &Type) -> R<FutType> {
        match self.ty(t)? {
            FutType::Array(e) => Ok(*e),
            other => Err(GenError::Unsupported(format!(
                "a sequence operation on a value of type `{other}`"
            ))),
        }
    }

    fn record(&mut self, fs: &[(Label, Expr)], ty: &Type) -> R<Code> {
        let Type::Record(tys) = ty else {
            return Err(GenError::Unsupported(
                "a record of a non-record type".into(),
            ));
        };
        if is_one_tuple(tys) && fs.len() == 1 {
            return self.expr(&fs[0].1);
        }
        let parts = fs
            .iter()
            .map(|(l, e)| Ok((field_name(l), self.expr(e)?)))
            .collect::<R<Vec<_>>>()?;
        Ok(record_code(tys, parts))
    }

    /// `[a, b, …]`; array elements take the size of the first (Futhark checks it statically).
    fn seq(&mut self, es: &[Expr], ty: &Type) -> R<Code> {
        if es.is_empty() {
            return Ok(Code::atom(format!("([] : [0]{})", self.elem_type(ty)?)));
        }
        let codes: Vec<Code> = es.iter().map(|e| self.expr(e)).collect::<R<_>>()?;
        let rows = matches!(ty, Type::Seq(e) if matches!(**e, Type::Seq(_)));
        if !rows || codes.len() == 1 {
            let parts: Vec<String> = codes.iter().map(Code::closed_text).collect();
            return Ok(Code::atom(format!("[{}]", parts.join(", "))));
        }
        let mut lines = Vec::new();
        let first = self.share(codes[0].clone(), "first", &mut lines);
        self.helpers.insert(Helper::SameSize);
        let mut parts = vec![first.text.clone()];
        for c in &codes[1..] {
            parts.push(apply_text(Helper::SameSize.name(), &[first.clone(), c.clone()]).text);
        }
        Ok(with_lets(
            lines,
            Code::atom(format!("[{}]", parts.join(", "))),
        ))
    }

    /// `c` itself when it is a name, else a fresh name bound to it by a line added to `lines`.
    fn share(&mut self, c: Code, hint: &str, lines: &mut Vec<String>) -> Code {
        if c.is_name() {
            c
        } else {
            let n = self.fresh(hint);
            lines.push(let_line(&n, &c));
            Code::atom(n)
        }
    }

    // ----- parallel keywords -----

    fn keyword(&mut self, kw: Keyword, args: &[Expr]) -> R<Code> {
        match (kw, args) {
            (Keyword::Map, [f, s]) => {
                let f = self.fn_value(f)?;
                let s = self.expr(s)?;
                Ok(apply_text("map", &[f, s]))
            }
            (Keyword::Map2, [f, a, b]) => {
                let fc = self.fn_value(f)?;
                let ac = self.expr(a)?;
                let bc = self.expr(b)?;
                if same_var(a, b) {
                    return Ok(apply_text("map2", &[fc, ac, bc]));
                }
                // Futhark's map2 needs equal sizes: the second takes the first's (checked).
                let mut lines = Vec::new();
                let ac = self.share(ac, "a", &mut lines);
                self.helpers.insert(Helper::SameSize);
                let bc = apply_text(Helper::SameSize.name(), &[ac.clone(), bc]);
                Ok(with_lets(lines, apply_text("map2", &[fc, ac, bc])))
            }
            (Keyword::Reduce, [f, ne, s]) => {
                let fc = self.fn_value(f)?;
                let nc = self.expr(ne)?;
                let sc = self.expr(s)?;
                if !is_rows(&s.ty) {
                    return Ok(apply_text("reduce", &[fc, nc, sc]));
                }
                // Rows: the neutral element takes the size of the rows.
                let mut lines = Vec::new();
                let sc = self.share(sc, "s", &mut lines);
                self.helpers.insert(Helper::RowSize);
                let nc = apply_text(Helper::RowSize.name(), &[sc.clone(), nc]);
                Ok(with_lets(lines, apply_text("reduce", &[fc, nc, sc])))
            }
            (Keyword::Flatten, [s]) => {
                let s = self.expr(s)?;
                Ok(apply_text("flatten", &[s]))
            }
            _ => Err(GenError::Unsupported(format!("`{}`", kw.usage()))),
        }
    }

    // ----- functions as values -----

    /// A function argument (of `map`, `reduce`, …): a bare intrinsic becomes a Futhark function.
    fn fn_value(&mut self, e: &Expr) -> R<Code> {
        match e.kind {
            ExprKind::Intrinsic(i) => self.intrinsic_value(i, &e.ty),
            _ => self.expr(e),
        }
    }

    /// `f a b` where `f` is a function argument: an intrinsic is applied directly.
    fn apply(&mut self, f: &Expr, args: Vec<Code>, arg_tys: &[Type]) -> R<Code> {
        match &f.kind {
            ExprKind::Intrinsic(i) if i.arity() == args.len() => {
                self.intrinsic_code(*i, args, arg_tys)
            }
            ExprKind::App { func, args: bound } => {
                let fc = self.expr(func)?;
                let mut all: Vec<Code> = bound.iter().map(|a| self.expr(a)).collect::<R<_>>()?;
                all.extend(args);
                Ok(apply_text(&fc.arg(), &all))
            }
            _ => {
                let fc = self.fn_value(f)?;
                Ok(apply_text(&fc.arg(), &args))
            }
        }
    }

    /// An intrinsic used as a function value of type `ty`.
    fn intrinsic_value(&mut self, i: Intrinsic, ty: &Type) -> R<Code> {
        use Intrinsic::*;
        let (params, _) = ty.split_arrows(i.arity());
        if params.len() != i.arity() {
            return Err(GenError::Unsupported(format!(
                "`{}` used with a type that is not its own",
                i.name()
            )));
        }
        let params: Vec<Type> = params.into_iter().cloned().collect();
        if let Some(op) = self.operator(i, params.first())? {
            return Ok(Code::atom(format!("({op})")));
        }
        let named = match i {
            NegI => Some("i64.neg".to_string()),
            NegF => Some("f64.neg".to_string()),
            NumNeg => Some(format!("{}.neg", self.prim(&params[0])?)),
            Not => Some("not".to_string()),
            Int2Float => Some("f64.i64".to_string()),
            Sqrt | Exp | Log | Sin | Cos => Some(format!("f64.{}", i.name())),
            Length | Null | Head | Tail | Reverse => Some(i.name().to_string()),
            _ => None,
        };
        if let Some(n) = named {
            return Ok(Code::atom(n));
        }
        // Any other: a lambda over fresh parameters.
        let mut ps = Vec::new();
        let mut args = Vec::new();
        for t in &params {
            let n = self.fresh("e");
            ps.push(self.lambda_param(&n, t)?);
            args.push(Code::atom(n));
        }
        let body = self.intrinsic_code(i, args, &params)?;
        Ok(Code::atom(format!(
            "(\\{} -> {})",
            ps.join(" "),
            indent(&body.text, 2)
        )))
    }

    /// The infix operator of a binary intrinsic whose first operand has type `t`.
    fn operator(&self, i: Intrinsic, t: Option<&Type>) -> R<Option<&'static str>> {
        use Intrinsic::*;
        Ok(Some(match i {
            AddI | AddF | NumAdd => "+",
            SubI | SubF | NumSub => "-",
            MulI | MulF | NumMul => "*",
            DivF => "/",
            DivI => "//",
            ModI => "%%",
            NumDiv => match t {
                Some(t) if self.prim(t)?.is_float() => "/",
                _ => "//",
            },
            Pow => "**",
            EqI | EqF | EqB | NumEq => "==",
            NeqI | NeqF | NeqB | NumNe => "!=",
            LtI | LtF | NumLt => "<",
            GtI | GtF | NumGt => ">",
            LeqI | LeqF | NumLe => "<=",
            GeqI | GeqF | NumGe => ">=",
            _ => return Ok(None),
        }))
    }

    // ----- intrinsics -----

    /// A fully applied intrinsic, with the special forms that look at the arguments: `set` (in
    /// place or not), `create` (`iota`, `replicate`, `tabulate`), `foldl` (the function applied
    /// in the loop body).
    fn intrinsic(&mut self, i: Intrinsic, args: &[Expr]) -> R<Code> {
        match (i, args) {
            (Intrinsic::Set, [s, ix, v]) => {
                let in_place = self.no_inplace == 0
                    && (is_fresh(s)
                        || matches!(&s.kind, ExprKind::Var { ident, .. } if self.once.contains(&ident.id)));
                let sc = self.expr(s)?;
                let ic = self.expr(ix)?;
                let vc = self.expr(v)?;
                Ok(self.set(sc, ic, vc, &s.ty, in_place))
            }
            (Intrinsic::Create, [n, f]) => self.create(n, f),
            (Intrinsic::Foldl, [f, ne, s]) => {
                let nc = self.expr(ne)?;
                let sc = self.expr(s)?;
                let acc = self.fresh("acc");
                let x = self.fresh("x");
                let elem = match &s.ty {
                    Type::Seq(e) => (**e).clone(),
                    other => other.clone(),
                };
                let body = self.apply(
                    f,
                    vec![Code::atom(acc.clone()), Code::atom(x.clone())],
                    &[ne.ty.clone(), elem],
                )?;
                Ok(Code::open(format!(
                    "loop {acc} = {} for {x} in {} do {}",
                    nc.arg(),
                    sc.arg(),
                    body.text
                )))
            }
            _ => {
                let codes: Vec<Code> = args.iter().map(|a| self.expr(a)).collect::<R<_>>()?;
                let tys: Vec<Type> = args.iter().map(|a| a.ty.clone()).collect();
                self.intrinsic_code(i, codes, &tys)
            }
        }
    }

    /// `s with [i] = v`, on a copy unless `in_place`; rows go through `pm_set_row`, which coerces
    /// the row to the array's row size.
    fn set(&mut self, s: Code, i: Code, v: Code, sty: &Type, in_place: bool) -> Code {
        let target = if in_place {
            s
        } else {
            apply_text("copy", &[s])
        };
        if is_rows(sty) {
            self.helpers.insert(Helper::SetRow);
            apply_text(Helper::SetRow.name(), &[target, i, v])
        } else {
            Code::open(format!(
                "{} with [{}] = {}",
                target.arg(),
                i.closed_text(),
                v.arg()
            ))
        }
    }

    /// `create n f`: `iota`/`indices` for the identity, `replicate` for a body that does not use
    /// the index and cannot fail (it is then evaluated once even when `n` is 0), else `tabulate`.
    fn create(&mut self, n: &Expr, f: &Expr) -> R<Code> {
        let nc = self.expr(n)?;
        if let Some((def_params, body, bound)) = self.lifted_fn(f)
            && def_params.len() == bound + 1
        {
            let index = def_params[bound].ident.id;
            if bound == 0 && matches!(&body.kind, ExprKind::Var { ident, .. } if ident.id == index)
            {
                // `indices s` keeps the size of `s` known to Futhark.
                if let ExprKind::App { func, args } = &n.kind
                    && matches!(func.kind, ExprKind::Intrinsic(Intrinsic::Length))
                    && let [s] = args.as_slice()
                {
                    let sc = self.expr(s)?;
                    return Ok(apply_text("indices", &[sc]));
                }
                return Ok(apply_text("iota", &[nc]));
            }
            if !body.free_vars().contains(&index) && cannot_fail(body) {
                let value = self.apply(f, vec![Code::atom("0i64")], &[Type::Int])?;
                return Ok(apply_text("replicate", &[nc, value]));
            }
        }
        let fc = self.fn_value(f)?;
        Ok(apply_text("tabulate", &[nc, fc]))
    }

    /// When `f` is a lifted function, possibly partially applied: its parameters, its body and
    /// how many arguments `f` already gives it.
    fn lifted_fn(&self, f: &Expr) -> Option<(&'a [Param], &'a Expr, usize)> {
        let (id, bound) = match &f.kind {
            ExprKind::Var { ident, .. } => (ident.id, 0),
            ExprKind::App { func, args } => match &func.kind {
                ExprKind::Var { ident, .. } => (ident.id, args.len()),
                _ => return None,
            },
            _ => return None,
        };
        let d: &'a Def = self.cx.defs.get(&id)?;
        match &d.value.kind {
            ExprKind::Lam { params, body } => Some((params.as_slice(), &**body, bound)),
            _ => None,
        }
    }

    /// An intrinsic applied to generated arguments of types `tys` (as many as its arity).
    fn intrinsic_code(&mut self, i: Intrinsic, a: Vec<Code>, tys: &[Type]) -> R<Code> {
        use Intrinsic::*;
        if let Some(op) = self.operator(i, tys.first())? {
            return Ok(binop(&a[0], op, &a[1]));
        }
        let call = |f: &str, a: &[Code]| Ok(apply_text(f, a));
        match i {
            NegI => call("i64.neg", &a),
            NegF => call("f64.neg", &a),
            NumNeg => call(&format!("{}.neg", self.prim(&tys[0])?), &a),
            Not => Ok(Code::closed(format!("!{}", a[0].arg()))),
            Int2Float => call("f64.i64", &a),
            FloorFI => Ok(apply_text("i64.f64", &[apply_text("f64.floor", &a)])),
            Sqrt | Exp | Log | Sin | Cos => call(&format!("f64.{}", i.name()), &a),
            Length | Null | Head | Tail | Reverse => call(i.name(), &a),
            Get => Ok(Code::closed(format!(
                "{}[{}]",
                a[0].arg(),
                a[1].closed_text()
            ))),
            Concat => self.concat(a, &tys[0]),
            Subsequence => Ok(self.subsequence(a)),
            Set => {
                let mut a = a.into_iter();
                let (s, ix, v) = (a.next(), a.next(), a.next());
                match (s, ix, v) {
                    (Some(s), Some(ix), Some(v)) => Ok(self.set(s, ix, v, &tys[0], false)),
                    _ => Err(GenError::Unsupported("`set` with missing arguments".into())),
                }
            }
            Create => call("tabulate", &a),
            Foldl => {
                let acc = self.fresh("acc");
                let x = self.fresh("x");
                let body = apply_text(
                    &a[0].arg(),
                    &[Code::atom(acc.clone()), Code::atom(x.clone())],
                );
                Ok(Code::open(format!(
                    "loop {acc} = {} for {x} in {} do {}",
                    a[1].arg(),
                    a[2].arg(),
                    body.text
                )))
            }
            TensorGet | TensorSet | TensorLinearGet | TensorLinearSet | TensorRank
            | TensorShape | TensorSub | TensorSlice => Err(GenError::Tensor),
            _ => Err(GenError::Unsupported(format!("`{}`", i.name()))),
        }
    }

    /// `a ++ b`; for rows, `b`'s rows take the size of `a`'s.
    fn concat(&mut self, a: Vec<Code>, t: &Type) -> R<Code> {
        let mut it = a.into_iter();
        let (Some(x), Some(y)) = (it.next(), it.next()) else {
            return Err(GenError::Unsupported(
                "`concat` with missing arguments".into(),
            ));
        };
        if !is_rows(t) {
            return Ok(binop(&x, "++", &y));
        }
        let mut lines = Vec::new();
        let x = self.share(x, "a", &mut lines);
        self.helpers.insert(Helper::RowsLike);
        let y = apply_text(Helper::RowsLike.name(), &[x.clone(), y]);
        Ok(with_lets(lines, binop(&x, "++", &y)))
    }

    /// `subsequence s o n`: at most `n` elements from `o`, clamped to the end of `s` as in PMExpr
    /// (a negative `o` or `n` is an invalid slice, an error, as in PMExpr).
    fn subsequence(&mut self, a: Vec<Code>) -> Code {
        let mut lines = Vec::new();
        let mut it = a.into_iter();
        let s = it.next().unwrap_or_else(|| Code::atom("()"));
        let o = it.next().unwrap_or_else(|| Code::atom("0i64"));
        let n = it.next().unwrap_or_else(|| Code::atom("0i64"));
        let s = self.share(s, "s", &mut lines);
        let start = self.fresh("start");
        let end = self.fresh("end");
        let len = apply_text("length", std::slice::from_ref(&s));
        lines.push(let_line(&start, &apply_text("i64.min", &[o, len.clone()])));
        lines.push(let_line(
            &end,
            &apply_text(
                "i64.min",
                &[binop(&Code::atom(start.clone()), "+", &n), len],
            ),
        ));
        with_lets(lines, Code::closed(format!("{}[{start}:{end}]", s.text)))
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers on the program
// ---------------------------------------------------------------------------------------------

/// A leaf of a value being rebuilt: a parameter, indexed by the enclosing `map`s' variables.
#[derive(Debug, Clone)]
struct Access {
    name: String,
    idx: Vec<String>,
}

impl Access {
    fn code(&self) -> Code {
        if self.idx.is_empty() {
            Code::atom(self.name.clone())
        } else {
            Code::closed(format!("{}[{}]", self.name, self.idx.join(", ")))
        }
    }
}

/// The first leaf: types without records have exactly one.
fn first_leaf(leaves: &[Access]) -> R<&Access> {
    leaves.first().ok_or_else(|| {
        GenError::Unsupported("a sequence of `()` crossing into Futhark code".into())
    })
}

/// The leaves of a type: the paths of record labels to its primitives, with the type of each
/// leaf (one sequence level per sequence crossed).
fn leaf_paths(t: &Type) -> R<Vec<(Vec<Label>, Type)>> {
    fn go(
        t: &Type,
        path: &mut Vec<Label>,
        rank: usize,
        out: &mut Vec<(Vec<Label>, Type)>,
    ) -> R<()> {
        match t {
            Type::Int | Type::Float | Type::Bool | Type::Var(_) => {
                let mut leaf = t.clone();
                for _ in 0..rank {
                    leaf = Type::seq(leaf);
                }
                out.push((path.clone(), leaf));
            }
            Type::Seq(e) => go(e, path, rank + 1, out)?,
            Type::Record(fs) => {
                for (l, ft) in fs {
                    path.push(l.clone());
                    go(ft, path, rank, out)?;
                    path.pop();
                }
            }
            Type::Tensor(_) => return Err(GenError::Tensor),
            Type::Arrow(..) => {
                return Err(GenError::Unsupported(
                    "a function crossing into Futhark code".into(),
                ));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    go(t, &mut Vec::new(), 0, &mut out)?;
    Ok(out)
}

/// A record value from its fields' code: a tuple, `()`, or a record with named fields.
fn record_code(tys: &[(Label, Type)], parts: Vec<(String, Code)>) -> Code {
    if Type::is_tuple_record(tys) {
        let fields: Vec<String> = parts.iter().map(|(_, c)| c.closed_text()).collect();
        Code::atom(format!("({})", fields.join(", ")))
    } else {
        let fields: Vec<String> = parts
            .iter()
            .map(|(l, c)| format!("{l} = {}", c.closed_text()))
            .collect();
        Code::atom(format!("{{{}}}", fields.join(", ")))
    }
}

/// `if c then a else b`, on one line when it is short.
fn if_code(c: &Code, a: &Code, b: &Code) -> Code {
    let (c, a, b2) = (c.closed_text(), a.closed_text(), b.text.clone());
    let one = format!("if {c} then {a} else {b2}");
    if !one.contains('\n') && one.len() <= 80 {
        return Code::open(one);
    }
    Code::open(format!(
        "if {}\nthen {}\nelse {}",
        indent(&c, 3),
        indent(&a, 5),
        indent(&b2, 5)
    ))
}

/// A literal, with its type as a suffix.
fn lit(l: &Lit) -> Code {
    match *l {
        Lit::Int(i64::MIN) => Code::atom("i64.lowest"),
        Lit::Int(i) if i < 0 => Code::atom(format!("(-{}i64)", i.unsigned_abs())),
        Lit::Int(i) => Code::atom(format!("{i}i64")),
        Lit::Float(x) if x.is_nan() => Code::atom("f64.nan"),
        Lit::Float(x) if x.is_infinite() && x > 0.0 => Code::atom("f64.inf"),
        Lit::Float(x) if x.is_infinite() => Code::atom("(f64.neg f64.inf)"),
        // `{:?}` writes `1.0`, `0.1`, `1e-7`, `1.5e300`: all Futhark float literals.
        Lit::Float(x) if x.is_sign_negative() => Code::atom(format!("(-{:?}f64)", -x)),
        Lit::Float(x) => Code::atom(format!("{x:?}f64")),
        Lit::Bool(b) => Code::atom(b.to_string()),
        Lit::Unit => Code::atom("()"),
    }
}

/// Whether two expressions are the same variable.
fn same_var(a: &Expr, b: &Expr) -> bool {
    matches!((&a.kind, &b.kind), (ExprKind::Var { ident: x, .. }, ExprKind::Var { ident: y, .. }) if x.id == y.id)
}

/// Whether `t` is a sequence of sequences (rows, whose sizes Futhark checks).
fn is_rows(t: &Type) -> bool {
    matches!(t, Type::Seq(e) if matches!(**e, Type::Seq(_)))
}

/// Whether the expression's value is an array nothing else refers to (Futhark gives these
/// constructs unique results), so that an in-place update on it is allowed.
fn is_fresh(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Seq(_) => true,
        ExprKind::Keyword { kw, .. } => matches!(kw, Keyword::Map | Keyword::Map2),
        ExprKind::App { func, .. } => matches!(
            func.kind,
            ExprKind::Intrinsic(Intrinsic::Create | Intrinsic::Set | Intrinsic::Concat)
        ),
        _ => false,
    }
}

/// How many times variable `id` occurs in `e`.
fn count_uses(e: &Expr, id: VarId) -> usize {
    let mut n = 0;
    e.walk(&mut |x| {
        if let ExprKind::Var { ident, .. } = &x.kind
            && ident.id == id
        {
            n += 1;
        }
    });
    n
}

/// Whether evaluating `e` cannot fail (no indexing, no integer division, no allocation of a
/// negative size): such a value may be computed once for `replicate`, even when `n` is 0.
fn cannot_fail(e: &Expr) -> bool {
    use Intrinsic::*;
    match &e.kind {
        ExprKind::Var { .. } | ExprKind::Lit(_) | ExprKind::Intrinsic(_) => true,
        ExprKind::Record(fs) => fs.iter().all(|(_, e)| cannot_fail(e)),
        ExprKind::Seq(es) => es.iter().all(cannot_fail),
        ExprKind::Proj { expr, .. } => cannot_fail(expr),
        ExprKind::Let { value, body, .. } => cannot_fail(value) && cannot_fail(body),
        ExprKind::App { func, args } => {
            let safe = match func.kind {
                ExprKind::Intrinsic(i) => !matches!(
                    i,
                    DivI | ModI
                        | NumDiv
                        | Get
                        | Head
                        | Tail
                        | Set
                        | Subsequence
                        | Create
                        | Foldl
                        | TensorGet
                        | TensorSet
                        | TensorLinearGet
                        | TensorLinearSet
                        | TensorRank
                        | TensorShape
                        | TensorSub
                        | TensorSlice
                ),
                _ => false,
            };
            safe && args.iter().all(cannot_fail)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests;
