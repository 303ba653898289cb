//! The intrinsics of one definition: operators, methods, bit operations, sequences.

use super::code::{Code, apply_text, binop, indent, let_line, nan_safe, with_lets};
use super::expr::{Gen, R, is_fresh, is_rows};
use super::{GenError, Helper};
use crate::ast::{Expr, ExprKind};
use crate::codegen::numbers::Number;
use crate::intrinsics::Intrinsic;
use crate::types::Type;

impl<'a, 'b> Gen<'a, 'b> {
    /// An intrinsic used as a function value of type `ty`.
    pub(super) fn intrinsic_value(&mut self, i: Intrinsic, ty: &Type) -> R<Code> {
        use Intrinsic::*;
        let (params, ret) = ty.split_arrows(i.arity());
        let ret = ret.clone();
        if params.len() != i.arity() {
            return Err(GenError::Unsupported(format!(
                "`{i}` used with a type that is not its own"
            )));
        }
        let params: Vec<Type> = params.into_iter().cloned().collect();
        if let Some(op) = self.operator(i, params.first())? {
            if let Some(nan) = self.nan_test(op, params.first())? {
                let (x, y) = (Code::atom("pm_x"), Code::atom("pm_y"));
                let body = nan_safe(&nan, &x, op, &y).closed_text();
                return Ok(Code::atom(format!("(\\pm_x pm_y -> {body})")));
            }
            return Ok(Code::atom(format!("({op})")));
        }
        let named = match i {
            NegI => Some("i64.neg".to_string()),
            NegF => Some("f64.neg".to_string()),
            NumNeg => Some(format!("{}.neg", self.prim(&params[0])?.futhark_name())),
            AbsI => Some("i64.abs".to_string()),
            AbsF => Some("f64.abs".to_string()),
            NumAbs => Some(format!("{}.abs", self.prim(&params[0])?.futhark_name())),
            Not => Some("not".to_string()),
            Int2Float => Some(format!(
                "{}.{}",
                self.prim(&ret)?.futhark_name(),
                self.prim(&params[0])?.futhark_name()
            )),
            Sqrt | Exp | Log | Sin | Cos => Some(format!(
                "{}.{}",
                self.prim(&params[0])?.futhark_name(),
                i.name()
            )),
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
        let body = self.intrinsic_code(i, args, &params, &ret)?;
        Ok(Code::atom(format!(
            "(\\{} -> {})",
            ps.join(" "),
            indent(&body.text, 2)
        )))
    }

    /// The infix operator of a binary intrinsic whose first operand has type `t`.
    pub(super) fn operator(&self, i: Intrinsic, t: Option<&Type>) -> R<Option<&'static str>> {
        use Intrinsic::*;
        // Futhark spells the table's operators as Rust does, except integer division and
        // remainder, which are Futhark's truncating `//` and `%%` (as Rust's `/` `%` on integers).
        Ok(Some(match i {
            // Shifts are masked (`intrinsic_code`); `&` `|` `^` on `bool` evaluate both operands.
            NumShl | NumShr => return Ok(None),
            // (`bool` written, or a number variable that is `bool` in this instantiation.)
            NumAnd | NumOr | NumXor
                if t.is_some_and(|t| self.prim(t).is_ok_and(|p| p == Number::Bool)) =>
            {
                return Ok(None);
            }
            DivI => "//",
            // Futhark's `%` of floats is C's `fmod`, as Rust's.
            NumRem if t.is_some_and(|t| self.prim(t).is_ok_and(|p| p.is_float())) => "%",
            ModI | NumRem => "%%",
            NumDiv => match t {
                Some(t) if self.prim(t)?.is_float() => "/",
                _ => "//",
            },
            Pow => "**",
            _ => match i.operator() {
                Some(o) => o.symbol,
                None => return Ok(None),
            },
        }))
    }

    /// `f64.isnan` (`f32.isnan`) for a comparison `op` of floats that holds for equal operands
    /// (`==`, `!=`, `<=`, `>=`). Futhark's simplifier folds `x == x`, `x <= x` and `x >= x` to
    /// `true` and `x != x` to `false`, which is wrong when `x` is a NaN (Futhark 0.24.3): such a
    /// comparison is generated with its own NaN test, which nothing folds away.
    fn nan_test(&self, op: &str, t: Option<&Type>) -> R<Option<String>> {
        match t {
            Some(t) if matches!(op, "==" | "!=" | "<=" | ">=") => {
                let p = self.prim(t)?;
                Ok(p.is_float().then(|| format!("{}.isnan", p.futhark_name())))
            }
            _ => Ok(None),
        }
    }

    // ----- intrinsics -----

    /// A fully applied intrinsic, with the special forms that look at the arguments: `set` (in
    /// place or not), `create` (`iota`, `replicate`, `tabulate`), `foldl` (the function applied
    /// in the loop body).
    pub(super) fn intrinsic(&mut self, i: Intrinsic, args: &[Expr], ty: &Type) -> R<Code> {
        match (i, args) {
            (Intrinsic::Set, [s, ix, v]) => {
                let in_place = self.no_inplace == 0
                    && (is_fresh(s)
                        || matches!(&s.kind, ExprKind::Var { ident, .. } if self.once.contains(&ident.id)));
                let sc = self.expr(s)?;
                let ic = self.expr(ix)?;
                let ic = self.index(ic, &ix.ty)?;
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
                self.intrinsic_code(i, codes, &tys, ty)
            }
        }
    }

    /// `s with [i] = v`, on a copy unless `in_place`; rows go through `pm_set_row`, which coerces
    /// the row to the array's row size.
    pub(super) fn set(&mut self, s: Code, i: Code, v: Code, sty: &Type, in_place: bool) -> Code {
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

    /// An intrinsic applied to generated arguments of types `tys` (as many as its arity).
    /// `ret` is the type of the result (`int2float` makes the float type its context wants).
    pub(super) fn intrinsic_code(
        &mut self,
        i: Intrinsic,
        a: Vec<Code>,
        tys: &[Type],
        ret: &Type,
    ) -> R<Code> {
        use Intrinsic::*;
        if matches!(i, DivI | ModI | NumDiv | NumRem) && self.prim(&tys[0])?.is_signed_int() {
            return self.signed_division(i, a, &tys[0]);
        }
        if let Some(op) = self.operator(i, tys.first())? {
            return Ok(match self.nan_test(op, tys.first())? {
                Some(nan) => nan_safe(&nan, &a[0], op, &a[1]),
                None => binop(&a[0], op, &a[1]),
            });
        }
        let call = |f: &str, a: &[Code]| Ok(apply_text(f, a));
        match i {
            NegI => call("i64.neg", &a),
            NegF => call("f64.neg", &a),
            NumNeg => call(&format!("{}.neg", self.prim(&tys[0])?.futhark_name()), &a),
            AbsI => call("i64.abs", &a),
            AbsF => call("f64.abs", &a),
            NumAbs => call(&format!("{}.abs", self.prim(&tys[0])?.futhark_name()), &a),
            Not => Ok(Code::closed(format!("!{}", a[0].arg()))),
            Int2Float => call(
                &format!(
                    "{}.{}",
                    self.prim(ret)?.futhark_name(),
                    self.prim(&tys[0])?.futhark_name()
                ),
                &a,
            ),
            FloorFI => {
                let p = self.prim(&tys[0])?.futhark_name();
                Ok(apply_text(
                    &format!("i64.{p}"),
                    &[apply_text(&format!("{p}.floor"), &a)],
                ))
            }
            Sqrt | Exp | Log | Sin | Cos => call(
                &format!("{}.{}", self.prim(&tys[0])?.futhark_name(), i.name()),
                &a,
            ),
            Length | Null | Head | Tail | Reverse => call(i.name(), &a),
            NumAnd | NumOr | NumXor | NumShl | NumShr | NumNot | As(_) => {
                self.bits_code(i, a, tys, ret)
            }
            _ if i.method().is_some() => self.method_code(i, a, tys),
            Get => {
                let mut a = a.into_iter();
                let (s, ix) = (a.next(), a.next());
                let (Some(s), Some(ix)) = (s, ix) else {
                    return Err(GenError::Unsupported("`get` with missing arguments".into()));
                };
                let ix = self.index(ix, &tys[1])?;
                Ok(Code::closed(format!("{}[{}]", s.arg(), ix.closed_text())))
            }
            // `s.len()`: the length as the integer type inference gave it.
            Len => {
                let p = self.prim(ret)?;
                let len = apply_text("length", &a);
                Ok(match p {
                    Number::I64 => len,
                    _ => apply_text(&format!("{}.i64", p.futhark_name()), &[len]),
                })
            }
            Concat => self.concat(a, &tys[0]),
            Subsequence => {
                let mut a = a.into_iter();
                let s = a.next().unwrap_or_else(|| Code::atom("()"));
                let mut rest = vec![s];
                for (c, t) in a.zip(&tys[1..]) {
                    rest.push(self.index(c, t)?);
                }
                Ok(self.subsequence(rest))
            }
            Set => {
                let mut a = a.into_iter();
                let (s, ix, v) = (a.next(), a.next(), a.next());
                match (s, ix, v) {
                    (Some(s), Some(ix), Some(v)) => {
                        let ix = self.index(ix, &tys[1])?;
                        Ok(self.set(s, ix, v, &tys[0], false))
                    }
                    _ => Err(GenError::Unsupported("`set` with missing arguments".into())),
                }
            }
            // A count is Rust's `0..n`: a negative one makes no elements (Futhark's `tabulate`
            // fails on it).
            Create => match self.prim(&tys[0])? {
                Number::I64 => {
                    let n = apply_text("i64.max", &[Code::atom("0i64"), a[0].clone()]);
                    Ok(apply_text("tabulate", &[n, a[1].clone()]))
                }
                p => {
                    let pn = p.futhark_name();
                    let k = self.fresh("k");
                    let n = apply_text(&format!("i64.{pn}"), &a[..1]);
                    let n = if p.is_unsigned() && p.size() < 8 {
                        n
                    } else {
                        apply_text("i64.max", &[Code::atom("0i64"), n])
                    };
                    let f = apply_text(&a[1].arg(), &[Code::atom(format!("({pn}.i64 {k})"))]);
                    Ok(Code::open(format!(
                        "tabulate {} (\\{k} -> {})",
                        n.arg(),
                        f.text
                    )))
                }
            },
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
            | TensorShape | TensorSub | TensorSlice | TensorGemm => Err(GenError::Tensor),
            _ => Err(GenError::Unsupported(format!("`{i}`"))),
        }
    }

    /// Rust's bit operators and `as` casts: shifts masked to the width as a release build does
    /// (Futhark's shift by the width or more is C's, undefined), `>>` arithmetic on signed
    /// integers (Futhark's `>>`); `&` `|` `^` on `bool` with both operands evaluated; a float
    /// to an integer saturating with NaN giving 0 (`i64.f64` is C's conversion, undefined out of
    /// range).
    fn bits_code(&mut self, i: Intrinsic, a: Vec<Code>, tys: &[Type], ret: &Type) -> R<Code> {
        use Intrinsic::*;
        let p = self.prim(&tys[0])?;
        let pn = p.futhark_name();
        let mut lines = Vec::new();
        let mut it = a.into_iter();
        let x = it.next().unwrap_or_else(|| Code::atom("0"));
        let y = it.next();
        let code = match i {
            NumAnd | NumOr | NumXor => {
                let y = y.unwrap_or_else(|| Code::atom("0"));
                let x = self.share(x, "a", &mut lines);
                let y = self.share(y, "b", &mut lines);
                let op = match (i, p == Number::Bool) {
                    (NumAnd, true) => "&&",
                    (NumOr, true) => "||",
                    (NumXor, true) => "!=",
                    (NumAnd, false) => "&",
                    (NumOr, false) => "|",
                    _ => "^",
                };
                binop(&x, op, &y)
            }
            NumNot if p == Number::Bool => Code::closed(format!("!{}", x.arg())),
            NumNot => binop(&x, "^", &Code::atom(format!("(-1{pn})"))),
            NumShl | NumShr => {
                let y = y.unwrap_or_else(|| Code::atom("0"));
                let q = self.prim(&tys[1])?.futhark_name();
                let bits = p.bits() - 1;
                let amount = binop(
                    &apply_text(&format!("{pn}.{q}"), &[y]),
                    "&",
                    &Code::atom(format!("{bits}{pn}")),
                );
                let op = if i == NumShl { "<<" } else { ">>" };
                Code::closed(format!("{} {op} ({})", x.arg(), amount.closed_text()))
            }
            As(_) => {
                let target = self.prim(ret)?;
                let to = target.futhark_name();
                if target.is_int() && p.is_float() {
                    // The bounds are powers of two (or 0), so exactly floats of either width.
                    let v = self.share(x, "v", &mut lines);
                    let v = v.arg();
                    let bits = target.bits() - u32::from(!target.is_unsigned());
                    let above = 2_f64.powi(bits as i32);
                    let min = if target.is_unsigned() { 0.0 } else { -above };
                    Code::open(format!(
                        "if {pn}.isnan {v} then 0{to} else if {v} >= {above:?}{pn} then {to}.highest else if {v} <= ({min:?}{pn}) then {to}.lowest else {to}.{pn} {v}"
                    ))
                } else if pn == to {
                    x
                } else if p.is_int()
                    && !p.is_unsigned()
                    && target.is_unsigned()
                    && target.bits() > p.bits()
                {
                    // Rust sign-extends a signed integer before it reinterprets it as unsigned
                    // (`-128i8 as u32` is 4294967168); Futhark's `u32.i8` zero-extends. Through the
                    // signed type of the target's width, which sign-extends.
                    let wide = format!("i{}", target.bits());
                    apply_text(
                        &format!("{to}.{wide}"),
                        &[apply_text(&format!("{wide}.{pn}"), &[x])],
                    )
                } else {
                    apply_text(&format!("{to}.{pn}"), &[x])
                }
            }
            _ => return Err(GenError::Unsupported(format!("`{i}`"))),
        };
        Ok(with_lets(lines, code))
    }

    /// `x / y` or `x % y` (`i`) of a signed integer type `t`: Futhark's truncating `//` and `%%`,
    /// with an assertion where Rust panics in every build and Futhark's would wrap, `MIN / -1`
    /// and `MIN % -1` (Futhark fails on division by zero itself).
    fn signed_division(&mut self, i: Intrinsic, a: Vec<Code>, t: &Type) -> R<Code> {
        let pn = self.prim(t)?.futhark_name();
        let op = if matches!(i, Intrinsic::DivI | Intrinsic::NumDiv) {
            "//"
        } else {
            "%%"
        };
        let [x, y] = &a[..] else {
            return Err(GenError::Unsupported(format!(
                "`{i}` of {} operands",
                a.len()
            )));
        };
        // A literal divisor other than -1 cannot overflow.
        let literal = (y.text.trim_start_matches('(').trim_end_matches(')'))
            .strip_suffix(pn)
            .and_then(|v| v.parse::<i64>().ok());
        if literal.is_some_and(|v| v != -1) {
            return Ok(binop(x, op, y));
        }
        let mut lines = Vec::new();
        let x = self.share(x.clone(), "x", &mut lines).arg();
        let y = self.share(y.clone(), "y", &mut lines).arg();
        Ok(with_lets(
            lines,
            Code::closed(format!(
                "assert (!({y} == -1{pn} && {x} == {pn}.lowest)) ({x} {op} {y})"
            )),
        ))
    }

    /// Rust's numeric methods (`x.count_ones()`, `x.round()` …) with Rust's results: Futhark's
    /// function where it means the same, Rust's definition where Futhark's differs (`round` is
    /// half away from zero, Futhark's half to even; `signum` of a float is ±1.0 for ±0.0) or is
    /// missing (`reverse_bits`, `swap_bytes`, the saturating operations). The counts are of the
    /// receiver's type.
    fn method_code(&mut self, i: Intrinsic, a: Vec<Code>, tys: &[Type]) -> R<Code> {
        let Some((name, _)) = i.method() else {
            return Err(GenError::Unsupported(format!("`{i}`")));
        };
        let p = self.prim(&tys[0])?;
        let pn = p.futhark_name();
        let bits = p.bits();
        let mut lines = Vec::new();
        let mut shared = Vec::new();
        for (k, c) in a.into_iter().enumerate() {
            shared.push(self.share(c, ["x", "y", "z"][k.min(2)], &mut lines).arg());
        }
        let x = shared.first().cloned().unwrap_or_default();
        let y = shared.get(1).cloned().unwrap_or_default();
        let z = shared.get(2).cloned().unwrap_or_default();
        let (lo, hi) = (format!("{pn}.lowest"), format!("{pn}.highest"));
        let integral = if p == Number::F32 {
            "8388608f32"
        } else {
            "4503599627370496f64"
        };
        let text = match name {
            // Of floats: Rust's definitions on `%` (Futhark's, C's `fmod`) and an exact `trunc`.
            "rem_euclid" if p.is_float() => {
                let r = self.fresh("r");
                format!("let {r} = {x} % {y} in if {r} < 0{pn} then {r} + {pn}.abs {y} else {r}")
            }
            "div_euclid" if p.is_float() => {
                let (t, q) = (self.fresh("t"), self.fresh("q"));
                format!(
                    "let {t} = {x} / {y} in let {q} = {} in if {x} % {y} < 0{pn} then (if {y} > 0{pn} then {q} - 1{pn} else {q} + 1{pn}) else {q}",
                    exact_trunc(pn, &t)
                )
            }
            // Rust has these on signed integers only; an open type that the captured values make
            // unsigned gets the runtime's meaning (no sign: the value itself, or 0).
            "unsigned_abs" | "wrapping_abs" | "saturating_abs" if p.is_unsigned() => x.clone(),
            "saturating_neg" if p.is_unsigned() => format!("0{pn}"),
            "is_negative" if p.is_unsigned() => "false".to_string(),
            "wrapping_div" if p.is_unsigned() => format!("{x} // {y}"),
            "wrapping_rem" if p.is_unsigned() => format!("{x} %% {y}"),
            // On an unsigned type: no sign to test, no `-1` divisor.
            "saturating_add" if p.is_unsigned() => {
                format!("let r = {x} + {y} in if r < {x} then {hi} else r")
            }
            "saturating_sub" if p.is_unsigned() => {
                format!("if {x} < {y} then 0{pn} else {x} - {y}")
            }
            "saturating_mul" if p.is_unsigned() => format!(
                "if {x} == 0{pn} || {y} == 0{pn} then 0{pn} else let r = {x} * {y} in if r // {y} != {x} then {hi} else r"
            ),
            "div_ceil" if p.is_unsigned() => {
                let d = self.fresh("d");
                format!("let {d} = {x} // {y} in if {x} %% {y} != 0{pn} then {d} + 1{pn} else {d}")
            }
            "rem_euclid" if p.is_unsigned() => format!("{x} %% {y}"),
            "div_euclid" if p.is_unsigned() => format!("{x} // {y}"),
            "count_ones" => format!("u32.i32 ({pn}.popc {x})"),
            "count_zeros" => format!("u32.i32 ({pn}.popc ({x} ^ (-1{pn})))"),
            "leading_ones" => format!("u32.i32 ({pn}.clz ({x} ^ (-1{pn})))"),
            "trailing_ones" => format!("u32.i32 ({pn}.ctz ({x} ^ (-1{pn})))"),
            // Rust's is the unsigned type of the width: the wrapping negation's bits as it.
            "unsigned_abs" => format!(
                "{}.{pn} (if {x} < 0{pn} then 0{pn} - {x} else {x})",
                p.unsigned().unwrap_or(p).futhark_name()
            ),
            "is_positive" => format!("{x} > 0{pn}"),
            "is_negative" => format!("{x} < 0{pn}"),
            "wrapping_abs" => format!("if {x} < 0{pn} then 0{pn} - {x} else {x}"),
            "saturating_abs" => {
                format!("if {x} == {lo} then {hi} else if {x} < 0{pn} then 0{pn} - {x} else {x}")
            }
            "saturating_neg" => format!("if {x} == {lo} then {hi} else 0{pn} - {x}"),
            // The amount `n as u32` masked to the width, as the shift operators in a release
            // build (Futhark's shift by the width or more is C's, undefined).
            "wrapping_shl" | "wrapping_shr" => {
                let q = self.prim(&tys[1])?.futhark_name();
                let op = if name == "wrapping_shl" { "<<" } else { ">>" };
                format!("{x} {op} ({pn}.{q} {y} & {m}{pn})", m = bits - 1)
            }
            // `MIN / -1` wraps, as Rust's `wrapping_div`; division by zero is Futhark's error.
            "wrapping_div" => {
                format!("if {y} == (-1{pn}) then 0{pn} - {x} else {x} // {y}")
            }
            "wrapping_rem" => format!("if {y} == (-1{pn}) then 0{pn} else {x} %% {y}"),
            // Rust panics on a number that is not positive.
            "ilog2" => format!(
                "assert ({x} > 0{pn}) (u32.i32 ({m}i32 - {pn}.clz {x}))",
                m = bits - 1
            ),
            "ilog10" => {
                let (c, v) = (self.fresh("c"), self.fresh("v"));
                format!(
                    "assert ({x} > 0{pn}) ((loop ({c}, {v}) = (0u32, {x}) while {v} >= 10{pn} do ({c} + 1u32, {v} // 10{pn})).0)"
                )
            }
            // Rust's `checked_pow` (square and multiply, stopping before the last squaring), and
            // on overflow `MIN` for a negative base and odd exponent, else `MAX`.
            "saturating_pow" => {
                let q = self.prim(&tys[1])?.futhark_name();
                let (r, b, e, o) = (
                    self.fresh("r"),
                    self.fresh("b"),
                    self.fresh("e"),
                    self.fresh("o"),
                );
                let ovf = |a: &str, c: &str| {
                    if p.is_unsigned() {
                        format!("({a} != 0{pn} && ({a} * {c}) // {a} != {c})")
                    } else {
                        format!(
                            "({a} != 0{pn} && {c} != 0{pn} && (({a} == -1{pn} && {c} == {lo}) || ({c} == -1{pn} && {a} == {lo}) || ({a} * {c}) // {c} != {a}))"
                        )
                    }
                };
                let sat = if p.is_unsigned() {
                    hi.clone()
                } else {
                    format!("(if {x} < 0{pn} && (u32.{q} {y} & 1u32) == 1u32 then {lo} else {hi})")
                };
                format!(
                    "if u32.{q} {y} == 0u32 then 1{pn} else let ({r}, {b}, _, {o}) = loop ({r}, {b}, {e}, {o}) = (1{pn}, {x}, u32.{q} {y}, false) while {e} > 1u32 do (let ({r}, {o}) = if ({e} & 1u32) == 1u32 then ({r} * {b}, {o} || {}) else ({r}, {o}) in ({r}, {b} * {b}, {e} >> 1u32, {o} || {})) in if {o} || {} then {sat} else {r} * {b}",
                    ovf(&r, &b),
                    ovf(&b, &b),
                    ovf(&r, &b)
                )
            }
            "recip" => format!("1{pn} / {x}"),
            "is_infinite" => format!("{pn}.isinf {x}"),
            // The sign bit, of a NaN too, as Rust's.
            "is_sign_negative" | "is_sign_positive" => format!(
                "({pn}.to_bits {x} >> {m}u{bits}) == {v}u{bits}",
                m = bits - 1,
                v = u8::from(name == "is_sign_negative")
            ),
            "is_normal" => {
                let a = self.fresh("a");
                let min = if p == Number::F32 {
                    format!("{:?}", f32::MIN_POSITIVE)
                } else {
                    format!("{:?}", f64::MIN_POSITIVE)
                };
                format!("let {a} = {pn}.abs {x} in {a} >= {min}{pn} && !({pn}.isinf {a})")
            }
            "copysign" => format!("{pn}.copysign {x} {y}"),
            // Rust's definition.
            "log" => format!("{pn}.log {x} / {pn}.log {y}"),
            // Rust's definitions (not the C library's: Rust's `asinh` and `acosh` overflow at
            // MAX).
            "asinh" => {
                let (a, k) = (self.fresh("a"), self.fresh("k"));
                let arg = format!("{a} + {a} / ({pn}.hypot 1{pn} {k} + {k})");
                let l = self.ln_1p_code(pn, &arg);
                format!(
                    "let {a} = {pn}.abs {x} in let {k} = 1{pn} / {a} in {pn}.copysign ({l}) {x}"
                )
            }
            "acosh" => format!(
                "if {x} < 1{pn} then {pn}.nan else {pn}.log ({x} + {pn}.sqrt ({x} - 1{pn}) * {pn}.sqrt ({x} + 1{pn}))"
            ),
            "atanh" => {
                let l = self.ln_1p_code(pn, &format!("(2{pn} * {x}) / (1{pn} - {x})"));
                format!("0.5{pn} * ({l})")
            }
            // Kahan's accurate forms on `exp` and `log` (within a few units in the last place,
            // as C's `expm1` and `log1p` on the CUDA targets), exact at 0, ±∞ and NaN.
            "exp_m1" => {
                let (u, m) = (self.fresh("u"), self.fresh("m"));
                format!(
                    "if {pn}.isinf {x} then (if {x} < 0{pn} then -1{pn} else {x}) else let {u} = {pn}.exp {x} in if {u} == 1{pn} then {x} else let {m} = {u} - 1{pn} in if {m} == -1{pn} || {pn}.isinf {u} then {m} else {m} * {x} / {pn}.log {u}"
                )
            }
            "ln_1p" => self.ln_1p_code(pn, &x),
            // Futhark's `round` is half to even; an integer already beyond 2^52 (2^23), and
            // the sign of a zero, kept as `exact_trunc` keeps them.
            "round_ties_even" => format!(
                "if !({pn}.abs {x} < {integral}) then {x} else {pn}.copysign ({pn}.round {x}) {x}"
            ),
            "leading_zeros" => format!("u32.i32 ({pn}.clz {x})"),
            "trailing_zeros" => format!("u32.i32 ({pn}.ctz {x})"),
            "reverse_bits" => format!(
                "(loop (r, v) = (0{pn}, {x}) for _k < {bits} do ((r << 1{pn}) | (v & 1{pn}), {})).0",
                logical_shr(p, "v", &format!("1{pn}"))
            ),
            "swap_bytes" => format!(
                "(loop (r, v) = (0{pn}, {x}) for _k < {} do ((r << 8{pn}) | (v & 255{pn}), {})).0",
                bits / 8,
                logical_shr(p, "v", &format!("8{pn}"))
            ),
            "rotate_left" | "rotate_right" => {
                let q = self.prim(&tys[1])?.futhark_name();
                let back = format!("({bits}{pn} - k)");
                let (a, b) = if name == "rotate_left" {
                    (format!("({x} << k)"), logical_shr(p, &x, &back))
                } else {
                    (logical_shr(p, &x, "k"), format!("({x} << {back})"))
                };
                format!(
                    "let k = {pn}.{q} {y} & {m}{pn} in if k == 0 then {x} else {a} | {b}",
                    m = bits - 1
                )
            }
            "wrapping_add" => format!("{x} + {y}"),
            "wrapping_sub" => format!("{x} - {y}"),
            "wrapping_mul" => format!("{x} * {y}"),
            "wrapping_neg" => format!("0{pn} - {x}"),
            "saturating_add" => format!(
                "let r = {x} + {y} in if (({x} ^ r) & ({y} ^ r)) < 0 then (if {x} < 0 then {lo} else {hi}) else r"
            ),
            "saturating_sub" => format!(
                "let r = {x} - {y} in if (({x} ^ {y}) & ({x} ^ r)) < 0 then (if {x} < 0 then {lo} else {hi}) else r"
            ),
            "saturating_mul" => format!(
                "if {x} == 0 || {y} == 0 then 0 else let sat = if ({x} < 0) != ({y} < 0) then {lo} else {hi} in if ({x} == -1 && {y} == {lo}) || ({y} == -1 && {x} == {lo}) then sat else let r = {x} * {y} in if r // {y} != {x} then sat else r"
            ),
            "signum" if p.is_float() => {
                format!("if {pn}.isnan {x} then {x} else {pn}.copysign 1 {x}")
            }
            "signum" => format!("{pn}.sgn {x}"),
            "trunc" => exact_trunc(pn, &x),
            "floor" | "ceil" | "cbrt" | "log2" | "log10" | "tan" | "asin" | "acos" | "atan"
            | "sinh" | "cosh" | "tanh" => format!("{pn}.{name} {x}"),
            "atan2" | "hypot" => format!("{pn}.{name} {x} {y}"),
            "mul_add" => format!("{pn}.fma {x} {y} {z}"),
            "round" => format!(
                "let t = {} in if {pn}.abs ({x} - t) >= 0.5 then t + {pn}.copysign 1 {x} else t",
                exact_trunc(pn, &x)
            ),
            "fract" => format!("{x} - ({})", exact_trunc(pn, &x)),
            "exp2" => format!("2{pn} ** {x}"),
            "is_nan" => format!("{pn}.isnan {x}"),
            "is_finite" => format!("!({pn}.isnan {x} || {pn}.isinf {x})"),
            // Square and multiply in `u32` steps (`wrapping_pow(n as u32)`): Futhark's `**`
            // loops forever on a negative exponent.
            "pow" | "wrapping_pow" => {
                let q = self.prim(&tys[1])?.futhark_name();
                let (r, b, e) = (self.fresh("r"), self.fresh("b"), self.fresh("e"));
                format!(
                    "(loop ({r}, {b}, {e}) = (1{pn}, {x}, u32.{q} {y}) while {e} != 0u32 do ((if ({e} & 1u32) == 1u32 then {r} * {b} else {r}), {b} * {b}, {e} >> 1u32)).0"
                )
            }
            // Digit by digit from the highest power of four: exact, without floats or overflow.
            "isqrt" => {
                let (v, c, d) = (self.fresh("v"), self.fresh("c"), self.fresh("d"));
                format!(
                    "assert ({x} >= 0{pn}) ((loop ({v}, {c}, {d}) = ({x}, 0{pn}, 1{pn} << {s}{pn}) while {d} != 0{pn} do if {v} >= {c} + {d} then ({v} - {c} - {d}, ({c} >> 1{pn}) + {d}, {d} >> 2{pn}) else ({v}, {c} >> 1{pn}, {d} >> 2{pn})).1)",
                    s = bits - 2
                )
            }
            // Rust's is the unsigned type of the width: the wrapping difference's bits as it.
            "abs_diff" => format!(
                "{}.{pn} (if {x} > {y} then {x} - {y} else {y} - {x})",
                p.unsigned().unwrap_or(p).futhark_name()
            ),
            // Division by zero is Futhark's error; `MIN / -1` an assertion, where Rust panics.
            "div_ceil" => {
                let (d, r) = (self.fresh("d"), self.fresh("r"));
                format!(
                    "if {y} == (-1{pn}) then assert ({x} != {pn}.lowest) (0{pn} - {x}) else let {d} = {x} // {y} in let {r} = {x} %% {y} in if {r} != 0{pn} && (({x} < 0{pn}) == ({y} < 0{pn})) then {d} + 1{pn} else {d}"
                )
            }
            "rem_euclid" => {
                let r = self.fresh("r");
                format!(
                    "if {y} == (-1{pn}) then assert ({x} != {pn}.lowest) 0{pn} else let {r} = {x} %% {y} in if {r} < 0{pn} then {r} + (if {y} < 0{pn} then 0{pn} - {y} else {y}) else {r}"
                )
            }
            "div_euclid" => {
                let q = self.fresh("q");
                format!(
                    "if {y} == (-1{pn}) then assert ({x} != {pn}.lowest) (0{pn} - {x}) else let {q} = {x} // {y} in if ({x} %% {y}) < 0{pn} then (if {y} > 0{pn} then {q} - 1{pn} else {q} + 1{pn}) else {q}"
                )
            }
            "is_power_of_two" => format!("{x} > 0{pn} && ({x} & ({x} - 1{pn})) == 0{pn}"),
            // 0 where the power is not representable, as Rust's release build on overflow.
            "next_power_of_two" => {
                let e = self.fresh("e");
                format!(
                    "if {x} <= 1{pn} then 1{pn} else let {e} = {bits}i32 - {pn}.clz ({x} - 1{pn}) in if {e} >= {s}i32 then 0{pn} else 1{pn} << {pn}.i32 {e}",
                    s = if p.is_unsigned() { bits } else { bits - 1 }
                )
            }
            // Rust's (compiler-builtins' `__powidf2`): square and multiply, then the reciprocal
            // for a negative exponent, so that the results agree bit for bit.
            "powi" => {
                let q = self.prim(&tys[1])?.futhark_name();
                let (e, m, a, k) = (
                    self.fresh("e"),
                    self.fresh("m"),
                    self.fresh("a"),
                    self.fresh("k"),
                );
                format!(
                    "let {e} = i32.{q} {y} in let ({m}, _, _) = loop ({m}, {a}, {k}) = (1{pn}, {x}, u32.i32 (if {e} < 0i32 then 0i32 - {e} else {e})) while {k} != 0u32 do ((if ({k} & 1u32) == 1u32 then {m} * {a} else {m}), {a} * {a}, {k} >> 1u32) in if {e} < 0i32 then 1{pn} / {m} else {m}"
                )
            }
            // Rust's `assert!(min <= max)`, which a NaN bound fails too (tested apart: Futhark
            // folds `y <= y` to true).
            "clamp" => {
                let ok = if p.is_float() {
                    format!("!({pn}.isnan {y} || {pn}.isnan {z}) && {y} <= {z}")
                } else {
                    format!("{y} <= {z}")
                };
                format!("assert ({ok}) (if {x} < {y} then {y} else if {x} > {z} then {z} else {x})")
            }
            "to_radians" | "to_degrees" => {
                let k = match (name, p) {
                    ("to_radians", Number::F32) => format!("{:?}", std::f32::consts::PI / 180.0),
                    ("to_radians", _) => format!("{:?}", std::f64::consts::PI / 180.0),
                    (_, Number::F32) => format!("{:?}", 57.295_78_f32),
                    _ => format!("{:?}", 180.0 / std::f64::consts::PI),
                };
                format!("{x} * {k}{pn}")
            }
            _ => return Err(GenError::Unsupported(format!("`.{name}()`"))),
        };
        Ok(with_lets(lines, Code::open(text)))
    }

    /// `ln_1p` of the Futhark expression `arg` of float type `pn`: Kahan's form on `log`,
    /// exact at 0, -0, +∞ and NaN.
    fn ln_1p_code(&mut self, pn: &str, arg: &str) -> String {
        let (v, u) = (self.fresh("v"), self.fresh("u"));
        format!(
            "let {v} = {arg} in if {pn}.isinf {v} && {v} > 0{pn} then {v} else let {u} = 1{pn} + {v} in if {u} == 1{pn} then {v} else {pn}.log {u} * {v} / ({u} - 1{pn})"
        )
    }

    /// `a ++ b`; for rows, `b`'s rows take the size of `a`'s.
    pub(super) fn concat(&mut self, a: Vec<Code>, t: &Type) -> R<Code> {
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

    /// An index or a count `c` of integer type `t` as Futhark's `i64`.
    pub(super) fn index(&self, c: Code, t: &Type) -> R<Code> {
        Ok(match self.prim(t)? {
            Number::I64 => c,
            p => apply_text(&format!("i64.{}", p.futhark_name()), &[c]),
        })
    }

    /// `subsequence s o n`: at most `n` elements from `o`, clamped to the end of `s` as in PMExpr
    /// (a negative `o` or `n` is an invalid slice, an error, as in PMExpr).
    pub(super) fn subsequence(&mut self, a: Vec<Code>) -> Code {
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

/// Rust's `trunc` of the float `x` of Futhark type `pn`: Futhark's own goes through an `i64`
/// (wrong beyond 2^63, for infinities and NaN, and it loses the sign of -0.0). A float of
/// magnitude 2^52 (2^23 for `f32`) or more is an integer already, and so are the infinities and
/// NaN; below, the `i64` is exact and the sign is put back.
fn exact_trunc(pn: &str, x: &str) -> String {
    let integral = if pn == "f32" {
        "8388608f32"
    } else {
        "4503599627370496f64"
    };
    format!("if !({pn}.abs {x} < {integral}) then {x} else {pn}.copysign ({pn}.trunc {x}) {x}")
}

/// `x` shifted right by `k` with zeros coming in, for a number of type `p`: Futhark's `>>` of a
/// signed number copies its sign bit, and 0.25 has no `>>>`, so a signed one goes through the
/// unsigned type of its width.
fn logical_shr(p: Number, x: &str, k: &str) -> String {
    let pn = p.futhark_name();
    if p.is_signed_int() {
        let u = format!("u{}", p.bits());
        format!("({pn}.{u} ({u}.{pn} ({x}) >> {u}.{pn} ({k})))")
    } else {
        format!("({x} >> {k})")
    }
}
