//! Type inference: Hindley–Milner with let-polymorphism, records (tuples), sequences, tensors and
//! arrows; the operators `+ - * / % == != < <= > >=` are resolved later by the type of their
//! operands (`+` on `i64` is `addi`).
//!
//! Operand types of the numeric operators carry a constraint (`Num`: `i64` or `f64`; `Eq`: also
//! `bool`); a constrained variable is never generalized, and one still unknown at the end defaults
//! to `i64`, as in Standard ML. Only `let`-bound lambdas and `fn` items are generalized (the
//! value restriction). A type variable in a captured variable's type is left open for the Rust
//! value to fix ([`Numeric`]); a type no captured value fixes (a value made and consumed inside
//! the expression, or a result that no captured value determines) gets an error that asks for an
//! annotation and shows where to put it.
//!
//! This module holds the entry points and the inference state; its passes over types and
//! expressions are one submodule each:
//!
//! - `unify`: the substitution, unification and the kinds that constrain a variable;
//! - `ann`: the types that annotations stand for;
//! - `scheme`: generalization and instantiation (let-polymorphism);
//! - `expr`: the type of each expression and pattern;
//! - `apply`: function application and the operators;
//! - `finish`: defaults, type sizes, and the final types written into the tree;
//!
//! Types share their parts through type variables (a `let`'s type is a variable bound to it, and
//! so is each part an instantiation copies), and every walk over a type visits a shared part
//! once: a type that doubles at each level (`let p = (q, q)`, `d(d(d(x)))` with `d(y) = (y, y)`)
//! costs inference time linear in the program, and its written-out size is measured, and refused
//! past [`MAX_TYPE_SIZE`], before anything writes it out.
//! - `boundary`: the checks on captured variables and on the result.

mod ann;
mod apply;
mod boundary;
mod expr;
mod finish;
mod scheme;
mod unify;

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::ast::{Expr, IdMap};
use crate::error::{Errors, SpanRange};
use crate::record::Records;
use crate::resolve::{FreeVar, Resolved};
use crate::types::{Label, Number, TyVar, Type};

/// What a numeric type variable of a site may become: its type comes from the Rust values the
/// site captures (generated code is generic over it, and rustc fixes it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numeric {
    /// Any number (Rust's integers and floats): used in arithmetic or as a tensor element.
    Num,
    /// A number or `bool`: only compared with `==` or `!=`.
    Scalar,
    /// An integer of any of Rust's types: an integer literal is one.
    Int,
    /// An integer or `bool`: only an operand of `&`, `|`, `^` or `!`.
    Bits,
    /// A floating-point number (`f64`, `f32`): a float literal is one.
    Float,
    /// Any value (an element type the expression only moves, stores or counts, as in
    /// `flatten(m)` or `reverse(s)`): the captured value's Rust type fixes it, whatever it is —
    /// a number, a tuple, a nested sequence. The CPU code is generic over it; the GPU paths have
    /// code for each number and `bool` it may be (`codegen::numbers`), picked at run time from
    /// the captured values' Rust types, and leave the site to the CPU for any other type.
    Open,
    /// The unsigned integer type of the width of the integer variable it names (the type of
    /// Rust's `abs_diff` of it: `u32` for an `i32` or a `u32`), fixed by that variable; naming
    /// itself, an unsigned integer of any width (`x.abs_diff(y) + x`).
    Unsigned(TyVar),
    /// An integer whose unsigned type of its width is this one (its `abs_diff` gives a `u32`
    /// used as one: it is `i32` or `u32`).
    OfUnsigned(Number),
}

impl Numeric {
    /// Whether a variable of this kind is an integer (of some type).
    pub fn is_int(self) -> bool {
        matches!(
            self,
            Numeric::Int | Numeric::Unsigned(_) | Numeric::OfUnsigned(_)
        )
    }
}

/// A typed expression: every node's type known, quantified variables left as variables in the
/// bodies of polymorphic bindings (monomorphization instantiates them), and the numeric variables
/// that the captured values fix left as variables too.
#[derive(Debug, Clone)]
pub struct Typed {
    /// The expression.
    pub expr: Expr,
    /// The captured variables, in order of first use.
    pub free_vars: Vec<FreeVar>,
    /// Their types (function-free; ground but for the variables in `numeric`), in the same order.
    pub free_var_types: Vec<Type>,
    /// The numeric type variables fixed by the Rust types of captured values.
    pub numeric: Vec<(TyVar, Numeric)>,
    /// The name of every identifier.
    pub names: Vec<String>,
}

/// Infers the types of a resolved expression that names no derived struct.
pub fn infer(resolved: Resolved) -> Result<Typed, Errors> {
    infer_in(resolved, None)
}

/// Infers the types of a resolved expression; `records` are the derived structs that a value used
/// only through named fields may be (`None` when the crate has no build hook).
pub fn infer_in(resolved: Resolved, records: Option<&Records>) -> Result<Typed, Errors> {
    let Resolved {
        mut expr,
        free_vars,
        names,
    } = resolved;
    let mut cx = Infer {
        vars: Vec::new(),
        level: 1,
        env: IdMap::default(),
        errors: Vec::new(),
        names: &names,
        record_spans: HashMap::new(),
        oversized_tuple: false,
        records,
        unify_memo: HashSet::new(),
        unifying: 0,
        size_reported: false,
        measures: Vec::new(),
        unsigned: Vec::new(),
        signed_only: Vec::new(),
    };
    let fv_types: Vec<Type> = free_vars
        .iter()
        .map(|fv| {
            let t = cx.fresh_at(0, Kind::Any);
            cx.env.insert(
                fv.id,
                Scheme {
                    vars: Vec::new(),
                    ty: t.clone(),
                },
            );
            t
        })
        .collect();
    cx.expr(&mut expr);
    let numeric = cx.finish(&mut expr, &fv_types);
    if !cx.errors.is_empty() {
        return Err(cx.errors);
    }
    let free_var_types: Vec<Type> = fv_types.iter().map(|t| cx.zonk(t)).collect();
    // Unknown types after another error are usually its consequence: report them only alone.
    if cx.errors.is_empty() {
        let kept: Vec<TyVar> = numeric.iter().map(|(v, _)| *v).collect();
        // A captured function makes the other captured types unknowable: report it alone.
        for (fv, t) in free_vars.iter().zip(&free_var_types) {
            if t.has_arrow() {
                cx.check_captured(fv, t, &kept);
            }
        }
        if cx.errors.is_empty() {
            for (fv, t) in free_vars.iter().zip(&free_var_types) {
                cx.check_captured(fv, t, &kept);
            }
        }
        if cx.errors.is_empty() {
            cx.check_result(&expr, &kept);
        }
    }
    if cx.errors.is_empty() {
        Ok(Typed {
            expr,
            free_vars,
            free_var_types,
            numeric,
            names,
        })
    } else {
        Err(cx.errors)
    }
}

#[derive(Debug, Clone)]
enum Kind {
    Any,
    /// A number: any of Rust's integers or floats.
    Num,
    /// An integer of any of Rust's types (an integer literal).
    IntNum,
    /// A floating-point number: `f64` or `f32` (a float literal).
    FloatNum,
    /// A number or `bool`.
    Eq,
    /// An integer or `bool` (an operand of `&`, `|`, `^`, `!`).
    Bits,
    /// A record with at least these fields.
    Record(BTreeMap<Label, Type>),
}

#[derive(Debug, Clone)]
struct VarInfo {
    binding: Option<Type>,
    level: u32,
    kind: Kind,
}

#[derive(Debug, Clone)]
struct Scheme {
    vars: Vec<TyVar>,
    ty: Type,
}

struct Infer<'n> {
    vars: Vec<VarInfo>,
    level: u32,
    env: IdMap<Scheme>,
    errors: Errors,
    names: &'n [String],
    record_spans: HashMap<TyVar, SpanRange>,
    oversized_tuple: bool,
    records: Option<&'n Records>,
    /// The pairs of shared types (variables bound to a type) that the current unification has
    /// unified: a type shared twice is unified once, so that unifying types that double at each
    /// level takes time linear in what inference built.
    unify_memo: HashSet<(TyVar, TyVar)>,
    /// How deep the current unification is (the memo lives as long as it).
    unifying: u32,
    /// Whether a type too large or too deep was reported (once is enough).
    size_reported: bool,
    /// The written-out size and depth of bound variables, as the checks after generalization
    /// measured them.
    measures: Vec<Option<(usize, usize)>>,
    /// Each `abs_diff` and `unsigned_abs`: its receiver's type, its result's (Rust's unsigned
    /// type of the receiver's width, settled at the end: `finish`), the method's span and name.
    unsigned: Vec<(Type, Type, SpanRange, &'static str)>,
    /// Each method Rust has on signed integers only (`is_negative` …): its receiver's type, the
    /// method's span and name, refused at the end where the receiver is unsigned.
    signed_only: Vec<(Type, SpanRange, &'static str)>,
}

pub use crate::types::{MAX_TYPE_DEPTH, MAX_TYPE_SIZE};

#[cfg(test)]
mod tests;
