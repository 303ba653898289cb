//! Intrinsics: the PMExpr intrinsics as C++ operators, prelude calls and device functions.

use super::Gen;
use super::expr::{Block, Dest};
use super::host::is_tensor_shape;
use super::{Result, unsupported};
use crate::ast::{Expr, ExprKind};
use crate::codegen::numbers::Number;
use crate::error::SpanRange;
use crate::intrinsics::Intrinsic;
use crate::types::Type;

impl<'a> Gen<'a> {
    pub(super) fn intrinsic(
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
            return unsupported(span, format!("`{i}` applied to {} arguments", args.len()));
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
            // The well-formedness check keeps `tensor_gemm` out of device code; host code is Rust.
            TensorGemm => unsupported(
                span,
                "`tensor_gemm` in CUDA device code (it runs where host code runs, outside \
                 `par_loop`s)",
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
    pub(super) fn simple(
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
            return unsupported(span, format!("`{i}` given {} arguments", a.len()));
        }
        // The generic operators on numbers take the instantiated type of their operands.
        let operands = tys.first().and_then(|t| self.num(t));
        let float = operands.is_some_and(Number::is_float);
        let i = i.concrete(float, operands == Some(Number::Bool));
        // `i64` and `i32` arithmetic have their own wrapping helpers (`pm_addi`, `pm_addi32` …),
        // the other integers the prelude's templates (`pm_wadd<unsigned char>` …); `f32`
        // arithmetic is the C++ operators on `float` operands, which C++ computes in `float`.
        let int = |stem: &str, wide: &str| match operands {
            None | Some(Number::I64) => format!("pm_{stem}i"),
            Some(Number::I32) if stem != "mod" => format!("pm_{stem}i32"),
            Some(n) => format!("pm_w{wide}<{}>", n.c_type()),
        };
        let pure = match i {
            AddI | SubI | MulI => {
                let f = match i {
                    AddI => int("add", "add"),
                    SubI => int("sub", "sub"),
                    _ => int("mul", "mul"),
                };
                format!("{f}({}, {})", a[0], a[1])
            }
            NegI => format!("{}({})", int("neg", "neg"), a[0]),
            AbsI => format!("{}({})", int("abs", "abs"), a[0]),
            DivI | ModI => {
                let chk = self.check(i.name(), span);
                let f = if i == DivI {
                    int("div", "div")
                } else {
                    int("mod", "mod")
                };
                return self.bind(b, ty, format!("{f}({chk}, {}, {})", a[0], a[1]), dest, span);
            }
            AddF | SubF | MulF | DivF | EqI | NeqI | LtI | GtI | LeqI | GeqI | EqF | NeqF | LtF
            | GtF | LeqF | GeqF | EqB | NeqB => {
                let op = i.operator().map_or("?", |o| o.symbol);
                format!("({} {op} {})", a[0], a[1])
            }
            NegF => format!("(-{})", a[0]),
            // Rust's `%` of floats is C's `fmod` (exact, the sign of the dividend).
            RemF if operands == Some(Number::F32) => format!("fmodf({}, {})", a[0], a[1]),
            RemF => format!("fmod({}, {})", a[0], a[1]),
            // `fabsf` on `float`, as Rust's `f32::abs`.
            AbsF if operands == Some(Number::F32) => format!("fabsf({})", a[0]),
            AbsF => format!("fabs({})", a[0]),
            Not => format!("(!{})", a[0]),
            Int2Float if self.num(ty) == Some(Number::F32) => format!("((float){})", a[0]),
            Int2Float => format!("((double){})", a[0]),
            // The prelude's `pm_as<T>`: Rust's `as` (a float to an integer saturates).
            As(n) => {
                let t = n.c_type();
                format!("pm_as<{t}>({})", a[0])
            }
            // A `float` is exactly a `double`: the same floor, the same saturation.
            FloorFI if operands == Some(Number::F32) => format!("pm_floorfi((double){})", a[0]),
            FloorFI => format!("pm_floorfi({})", a[0]),
            // `sqrtf` … on `float`: the single-precision functions, as Rust's `f32` methods.
            Sqrt | Exp | Log | Sin | Cos if operands == Some(Number::F32) => {
                format!("{}f({})", i.name(), a[0])
            }
            Sqrt | Exp | Log | Sin | Cos => format!("{}({})", i.name(), a[0]),
            Pow if operands == Some(Number::F32) => format!("powf({}, {})", a[0], a[1]),
            Pow => format!("pow({}, {})", a[0], a[1]),
            Length => format!("{}.len", a[0]),
            // `s.len()`: the length as the integer type inference gave it.
            Len => format!("(({}){}.len)", self.c_type(ty, span)?, a[0]),
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
            TensorGemm | TensorGet | TensorSet | TensorSlice | TensorShape | Foldl => {
                return unsupported(
                    span,
                    format!("`{}` as the function argument of a loop or fold", i.name()),
                );
            }
            // Both operands evaluated, on integers and `bool`s alike. C computes an 8- or
            // 16-bit integer's bits in `int`: the result is converted back to its type, as Rust's
            // is of it (`!10u16` is 65525, not -11).
            NumAnd | NumOr | NumXor => {
                let op = i.operator().map_or("?", |o| o.symbol);
                narrow(operands, format!("({} {op} {})", a[0], a[1]))
            }
            NumNot if operands == Some(Number::Bool) => format!("(!{})", a[0]),
            NumNot => narrow(operands, format!("(~{})", a[0])),
            // The prelude's: masked to the width as Rust's release build (C's shift by the width
            // or more is undefined).
            NumShl => format!("pm_shl({}, {})", a[0], a[1]),
            NumShr => format!("pm_shr({}, {})", a[0], a[1]),
            // The prelude's `pm_m_<method>`, overloaded on the C types, with Rust's results.
            MCountOnes | MLeadingZeros | MTrailingZeros | MReverseBits | MSwapBytes
            | MRotateLeft | MRotateRight | MWrappingAdd | MWrappingSub | MWrappingMul
            | MWrappingNeg | MSaturatingAdd | MSaturatingSub | MSaturatingMul | MSignum
            | MFloor | MCeil | MRound | MTrunc | MFract | MCbrt | MExp2 | MLog2 | MLog10 | MTan
            | MAsin | MAcos | MAtan | MAtan2 | MSinh | MCosh | MTanh | MHypot | MIsNan
            | MIsFinite | MToRadians | MToDegrees | MMulAdd | MPow | MAbsDiff | MIsPowerOfTwo
            | MNextPowerOfTwo | MPowi | MCountZeros | MLeadingOnes | MTrailingOnes
            | MUnsignedAbs | MIsPositive | MIsNegative | MWrappingShl | MWrappingShr
            | MWrappingPow | MSaturatingPow | MWrappingAbs | MSaturatingAbs | MSaturatingNeg
            | MRecip | MIsInfinite | MIsSignNegative | MIsSignPositive | MIsNormal | MCopysign
            | MExpM1 | MLn1p | MLogBase | MAsinh | MAcosh | MAtanh | MRoundTiesEven => {
                let name = i.method().map_or("?", |(n, _)| n);
                format!("pm_m_{name}({})", a.join(", "))
            }
            // Where Rust panics, a check of the site, as `divi`'s.
            MIsqrt | MDivCeil | MRemEuclid | MDivEuclid | MClamp | MWrappingDiv | MWrappingRem
            | MIlog2 | MIlog10 => {
                let name = i.method().map_or("?", |(n, _)| n);
                let chk = self.check(&format!(".{name}()"), span);
                return self.bind(
                    b,
                    ty,
                    format!("pm_m_{name}({chk}, {})", a.join(", ")),
                    dest,
                    span,
                );
            }
            NumAdd | NumSub | NumMul | NumDiv | NumRem | NumNeg | NumAbs | NumEq | NumNe
            | NumLt | NumLe | NumGt | NumGe => unreachable!("resolved above"),
            SetField => {
                return unsupported(span, "a field assignment that was not expanded");
            }
        };
        self.finish(b, ty, pure, dest, span)
    }
}

/// `c`, an integer operation that C computes in `int`, converted back to `n` where `n` is
/// narrower (8 or 16 bits; `bool`s are computed as they are).
fn narrow(n: Option<Number>, c: String) -> String {
    match n {
        Some(n) if n.is_int() && n.size() < 4 => format!("(({}){c})", n.c_type()),
        _ => c,
    }
}
