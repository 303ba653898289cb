//! Futhark code generation: the Futhark-class accelerated program of a crate as one Futhark 0.25
//! source file, with one `entry` per site (and per choice of number types).
//!
//! The input is the merged program of the crate ([`CrateProgram`]) restricted to the Futhark class
//! (`extract_for(Backend::Futhark)`): lambda-lifted, monomorphic, well-formed for Futhark (no
//! recursion but tail recursion, no tensors, no `par_loop`, no functions in sequences, records or
//! conditionals).
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
//! | a function that calls itself only in tail position | `def f x y = let (_, …, r) = loop (go, y, r) = (true, y, d) while go do …`: a tail call `f x y'` is `(true, y', r)`, any other result `v` is `(false, y, v)`; parameters every call passes unchanged (`x`) stay out of the loop; `d` as for `never` |
//! | `match e with p then a else b` | `if` for `bool` literals, `let p = e in a` for irrefutable `p`, else `match e case p -> a case _ -> b` (arms on one variable merged) |
//! | `never` | `assert false d`: reaching it stops with Futhark's assertion error; `d` (zeros, `false`, empty arrays) only gives it its type |
//! | literals | suffixed: `1i64`, `2.5f64`, `(-3i64)`, `f64.inf`, `f64.nan` |
//! | `addi subi muli`, `addf subf mulf divf` | `+ - *`, `+ - * /` |
//! | `divi`, `modi` | `//`, `%%` (rounding toward zero, as Rust; Futhark's `/` and `%` floor) |
//! | `negi`, `negf`, `not` | `i64.neg x`, `f64.neg x`, `!x` |
//! | comparisons | `== != < > <= >=` |
//! | `int2float`, `floorfi` | `f64.i64 x`, `i64.f64 (f64.floor x)` (`f32.…` on `f32`) |
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
//! | `hist f ne k is vs` | `hist f ne k is vs` (`map i64.i32 is` for `i32` indices; `vs` takes the size of `is`) |
//! | an intrinsic passed as a function | an operator section (`(+)`), a prelude function, or a lambda |
//!
//! # Sizes
//!
//! Futhark checks array sizes statically where PMExpr does not. The generator inserts the run-time
//! checked coercions the common cases need, through small helper functions emitted at the top of
//! the program when used: the second array of `map2` (and the values of `hist`) takes the size of the first, the rows of the
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
//!
//! # Numbers
//!
//! A type variable left by monomorphization is a number whose Rust type the captured values fix.
//! Futhark has no such polymorphism at the boundary, so the caller picks an [`Instantiation`] per
//! entry ([`instantiations`] lists the default ones) and every function that mentions the
//! variable is emitted once per choice.
//!
//! # Where the semantics may differ
//!
//! Integer arithmetic wraps in both. `floorfi` of NaN or of a value out of `i64`'s range
//! saturates in Rust but is unspecified in Futhark's conversion; `subsequence` with a length
//! near `i64::MAX` clamps in Rust but overflows (an invalid slice, an error) here.
//!
//! # Layout of the module
//!
//! This file holds the public API and assembles the program; `code` the fragments of code and
//! their layout, `expr` the expressions, `entry` the `def`s and entry points.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;

use crate::ast::{Expr, ExprKind, Pat, PatKind, VarId};
use crate::classify::Backend;
use crate::codegen::numbers::{self, Number};
use crate::infer::Numeric;
use crate::lift::{Binding, Def, Origin};
use crate::merge::CrateProgram;
use crate::tailrec::def_loop;
use crate::types::{Label, TyVar, Type};

use self::code::{comment, field_name, is_one_tuple, var_name};
use self::expr::Gen;

// ---------------------------------------------------------------------------------------------
// Public data
// ---------------------------------------------------------------------------------------------

/// The concrete types chosen for the number type variables of a site (see
/// [`crate::mono::Mono::numeric`]): the generator emits one entry per instantiation.
pub type Instantiation = BTreeMap<TyVar, Number>;

/// A Futhark type, as the signature of an entry point shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FutType {
    /// A primitive: a number or `bool` ([`Number::futhark_name`]).
    Prim(Number),
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
            Type::Num(_) => match numbers::of_type(t) {
                Some(n) => FutType::Prim(n),
                None => return Err(GenError::Unsupported(format!("the type `{t}`"))),
            },
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
            FutType::Prim(p) => f.write_str(p.futhark_name()),
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
    /// `[][]f64` of second fields. Labels follow the Rust type (a 1-tuple keeps its `0`).
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
    /// A recursive binding that is not a loop (Futhark has no recursion; the well-formedness
    /// check rejects them).
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
                write!(
                    f,
                    "`{name}` is recursive but not a loop, and Futhark has no recursion"
                )
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

/// The name of a site's entry point for one instantiation ([`crate::mangle::futhark_entry`]),
/// by the numbers' Rust names: `isize` and `i64` are one Futhark type but two entries.
pub fn entry_name(site: &str, inst: &Instantiation) -> String {
    crate::mangle::futhark_entry(site, inst.values().map(|p| p.rust_name()))
}

pub use crate::codegen::numbers::MAX_INSTANTIATIONS;

/// The instantiations worth emitting for a site whose captured values fix `numeric`:
/// [`numbers::instantiations`], the combinations of the types the runtime's number traits
/// implement — `i64`, `f64`, `i32`, `f32` for a number used in arithmetic (`Numeric::Num`),
/// those and `bool` for one only compared (`Numeric::Scalar`), `i64`/`i32` for an integer and
/// `f64`/`f32` for a float (a literal's type) — the uniform ones first, at most
/// [`MAX_INSTANTIATIONS`]; the same as the CUDA modules'.
///
/// The program itself cannot tell which types the Rust values will have, so every one the Rust
/// side may pick gets an entry, up to the cap (the others run on the CPU targets).
pub fn instantiations(numeric: &[(TyVar, Numeric)]) -> Vec<Instantiation> {
    numbers::instantiations(numeric)
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
    let (_, bindings) = program.extract_for(Backend::Futhark);
    let prep = Prepared::new(program, &bindings);
    let mut ok = Vec::new();
    let mut skipped = Vec::new();
    let mut names = HashSet::new();
    for request in all {
        let name = entry_name(&request.site, &request.instantiation);
        // Each request alone first, so that one site's problem does not cost the others theirs.
        let result = if names.contains(&name) {
            Err(GenError::NameClash(name.clone()))
        } else {
            generate_in(&prep, std::slice::from_ref(&request), &[]).map(|_| ())
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
    match generate_in(&prep, &ok, &notes) {
        Ok(program) => Some(CrateFuthark { program, skipped }),
        // Each entry was generated alone: together they should be too; if not, none is.
        Err(error) => {
            skipped.extend(ok.into_iter().map(|request| Skipped {
                request,
                error: error.clone(),
            }));
            let notes = vec![format!("not generated: every site ({error})")];
            let program = generate_in(&prep, &[], &notes).ok()?;
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
    RowOp,
    RowsLike,
    SetRow,
}

impl Helper {
    fn name(self) -> &'static str {
        match self {
            Helper::SameSize => "pm_same_size",
            Helper::RowSize => "pm_row_size",
            Helper::RowOp => "pm_row_op",
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
            Helper::RowOp => {
                "-- `f` with results of the size of the rows of `xss` (a reduction's operator).\n\
                 def pm_row_op [n] [m] 't (_: [n][m]t) (f: []t -> []t -> []t) : [m]t -> [m]t -> [m]t = \\a b -> f a b :> [m]t"
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
            name.push_str(p.futhark_name());
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
    generate_in(&Prepared::new(program, &bindings), requests, notes)
}

/// The crate's Futhark-class bindings and what each definition uses, computed once for every
/// request: per request, the extraction of the whole crate and the walk over all its bindings made
/// a build quadratic in its sites (1,000 sites: 97 s in the hook).
struct Prepared<'a> {
    bindings: &'a [Binding],
    cx: Context<'a>,
    /// The binding (an index into `bindings`) of each definition.
    binding_of: HashMap<VarId, usize>,
    /// The definitions each definition's body uses.
    uses: HashMap<VarId, Vec<VarId>>,
    /// The accelerated binding of each Futhark-class site.
    sites: HashMap<&'a str, VarId>,
}

impl<'a> Prepared<'a> {
    fn new(program: &'a CrateProgram, bindings: &'a [Binding]) -> Self {
        let binding_of: HashMap<VarId, usize> = (bindings.iter().enumerate())
            .flat_map(|(i, b)| b.defs().iter().map(move |d| (d.ident.id, i)))
            .collect();
        let uses = (bindings.iter().flat_map(Binding::defs))
            .map(|d| {
                let free = d.value.free_vars().into_iter();
                (
                    d.ident.id,
                    free.filter(|v| binding_of.contains_key(v)).collect(),
                )
            })
            .collect();
        let sites = (program.sites.iter())
            .filter(|(_, _, b)| *b == Backend::Futhark)
            .map(|(name, a, _)| (name.as_str(), *a))
            .collect();
        Prepared {
            bindings,
            cx: Context::new(&program.names, bindings),
            binding_of,
            uses,
            sites,
        }
    }

    /// The definitions that `a` reaches, itself included (what [`crate::extract::extract`] keeps of them).
    fn reach(&self, a: VarId) -> BTreeSet<VarId> {
        let mut reach = BTreeSet::from([a]);
        let mut todo = vec![a];
        while let Some(x) = todo.pop() {
            for &y in self.uses.get(&x).map_or(&[][..], Vec::as_slice) {
                if reach.insert(y) {
                    todo.push(y);
                }
            }
        }
        reach
    }
}

/// The program of `requests`, over the prepared bindings.
fn generate_in(
    prep: &Prepared<'_>,
    requests: &[EntryRequest],
    notes: &[String],
) -> Result<FutharkProgram, GenError> {
    let cx = &prep.cx;
    // Each request: its accelerated binding and what that binding reaches; and for each binding
    // that some request reaches, those requests, in order.
    let mut resolved = Vec::new();
    let mut entry_names = HashSet::new();
    let mut reached_by: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (k, r) in requests.iter().enumerate() {
        let a = *(prep.sites.get(r.site.as_str()))
            .ok_or_else(|| GenError::UnknownSite(r.site.clone()))?;
        let name = entry_name(&r.site, &r.instantiation);
        if !entry_names.insert(name.clone()) {
            return Err(GenError::NameClash(name));
        }
        let reach = prep.reach(a);
        for d in &reach {
            if let Some(&i) = prep.binding_of.get(d) {
                let ks = reached_by.entry(i).or_default();
                if ks.last() != Some(&k) {
                    ks.push(k);
                }
            }
        }
        resolved.push((r, a, reach, name));
    }
    let mut helpers = BTreeSet::new();
    let mut chunks: Vec<(usize, String)> = Vec::new();
    let mut entries: Vec<(usize, EntrySignature)> = Vec::new();
    let mut emitted: HashSet<String> = HashSet::new();
    for (&i, ks) in &reached_by {
        let b = &prep.bindings[i];
        let reached = |d: &Def| ks.iter().any(|&k| resolved[k].2.contains(&d.ident.id));
        // A recursive function is generated only as a loop (one function, tail calls only).
        let (d, tail) = match b {
            Binding::Let(d) => (d, None),
            Binding::Rec(ds) => match &ds[..] {
                [d] if reached(d) => match def_loop(d) {
                    Ok(l) => (d, Some(l)),
                    Err(_) => return Err(GenError::RecursiveLet(d.ident.name.clone())),
                },
                _ => {
                    if let Some(d) = ds.iter().find(|d| reached(d)) {
                        return Err(GenError::RecursiveLet(d.ident.name.clone()));
                    }
                    continue;
                }
            },
        };
        for &k in ks {
            let (r, a, reach, name) = &resolved[k];
            if !reach.contains(&d.ident.id) {
                continue;
            }
            let mut g = Gen::new(cx, &r.instantiation, &mut helpers);
            if d.ident.id == *a {
                let (text, sig) = g.entry(d, &r.site, name)?;
                chunks.push((k, text));
                entries.push((k, sig));
            } else if d.origin != Origin::Site {
                let top = cx.top_name(d.ident.id, &r.instantiation)?;
                if emitted.insert(top.clone()) {
                    let text = match &tail {
                        Some(l) => g.loop_def(d, &top, l)?,
                        None => g.def(d, &top)?,
                    };
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
        source.push_str(&comment(note));
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
        let types: Vec<&str> = inst.values().map(|p| p.rust_name()).collect();
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
        Type::Num(_) => {}
        Type::Seq(a) | Type::Tensor(a) => type_vars(a, out),
        Type::Arrow(a, b) => {
            type_vars(a, out);
            type_vars(b, out);
        }
        Type::Record(fs) => fs.iter().for_each(|(_, t)| type_vars(t, out)),
    }
}

mod code;
mod entry;
mod expr;
mod intrinsic;
mod keyword;

#[cfg(test)]
mod tests;
