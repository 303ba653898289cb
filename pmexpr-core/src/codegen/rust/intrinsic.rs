//! The intrinsics: arithmetic, comparisons, sequences and tensors, through the runtime's checked
//! helpers where PMExpr defines a failure.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::Gen;
use crate::ast::{Expr, ExprKind};
use crate::intrinsics::Intrinsic;
use crate::types::Type;

impl Gen<'_> {
    pub(super) fn intrinsic(&mut self, i: Intrinsic, args: &[&Expr], ty: &Type) -> TokenStream {
        use Intrinsic::*;
        let rt = self.rt.clone();
        let site = self.site();
        let v = |g: &mut Self, k: usize| g.value(args[k]);
        let p = |g: &mut Self, k: usize| g.arg(args[k]);
        match i {
            // Wrapping as a release build; debug mode fails where a debug build panics.
            AddI | SubI | MulI | NumAdd | NumSub | NumMul => {
                let m = format_ident!(
                    "{}",
                    match i {
                        AddI | NumAdd => "add_at",
                        SubI | NumSub => "sub_at",
                        _ => "mul_at",
                    }
                );
                let (a, b) = (v(self, 0), v(self, 1));
                quote!(#rt::Num::#m(B::CHECKS, #site, #a, #b))
            }
            // `%` of another integer type than `i64` (or of a float) is the runtime's `Num::rem`.
            NumRem if *ty != Type::INT => {
                let (a, b) = (v(self, 0), v(self, 1));
                quote!(#rt::Num::rem(#site, #a, #b))
            }
            DivI | ModI | NumRem => {
                let f = format_ident!("{}", if i == DivI { "divi" } else { "modi" });
                let (a, b) = (v(self, 0), v(self, 1));
                quote!(#rt::rt::#f(#site, #a, #b))
            }
            NegI | NumNeg => {
                let a = v(self, 0);
                quote!(#rt::Num::neg_at(B::CHECKS, #site, #a))
            }
            AddF | SubF | MulF | DivF | RemF | EqI | NeqI | LtI | GtI | LeqI | GeqI | EqF
            | NeqF | LtF | GtF | LeqF | GeqF | EqB | NeqB => {
                let op = operator_tokens(i);
                let (a, b) = (v(self, 0), v(self, 1));
                quote!((#a #op #b))
            }
            NegF => {
                let a = v(self, 0);
                quote!((-(#a)))
            }
            Not => {
                let a = v(self, 0);
                quote!((!(#a)))
            }
            Int2Float => {
                let a = v(self, 0);
                // `int2float(i)` is `i as F`: Rust's `as`, which rounds every integer to the
                // nearest float (through an `i64` a `u64` above `i64::MAX` would change).
                if *ty != Type::FLOAT || args[0].ty != Type::INT {
                    let t = self.rty(ty);
                    quote!(#rt::Scalar::cast::<#t>(#a))
                } else {
                    quote!(((#a) as f64))
                }
            }
            // Of either float type; the runtime's `floorfi` is the `f64` one.
            FloorFI => {
                let a = v(self, 0);
                if args[0].ty == Type::FLOAT {
                    quote!(#rt::rt::floorfi(#a))
                } else {
                    quote!(#rt::Float::floorfi(#a))
                }
            }
            Sqrt | Exp | Log | Sin | Cos => {
                let m = format_ident!(
                    "{}",
                    match i {
                        Sqrt => "sqrt",
                        Exp => "exp",
                        Log => "ln",
                        Sin => "sin",
                        _ => "cos",
                    }
                );
                let a = v(self, 0);
                let f = self.float_fn(&args[0].ty, m);
                quote!(#f(#a))
            }
            Pow => {
                let (a, b) = (v(self, 0), v(self, 1));
                let f = self.float_fn(&args[0].ty, format_ident!("powf"));
                quote!(#f(#a, #b))
            }
            // The length of a `filter` counts its elements without building it (`count`).
            Length => {
                let n = self.length_of(args[0]);
                quote!((#n as i64))
            }
            // `s.len()`: the length as the integer type inference gave it.
            Len => {
                let n = self.length_of(args[0]);
                if *ty == Type::Num(crate::types::Number::Usize) {
                    n
                } else if *ty == Type::INT {
                    quote!((#n as i64))
                } else {
                    let t = self.rty(ty);
                    quote!(<#t as #rt::Int>::from_index(#n as i64))
                }
            }
            Null => {
                let s = p(self, 0);
                quote!((#s).is_empty())
            }
            Get if let Some((part, j)) = self.slices.get(&args[1].id).cloned() => {
                // A plain loop's slice of the chunk, in range by the check before the loop.
                if self.is_copy(ty) {
                    quote!(#part[#j])
                } else {
                    quote!(#part[#j].clone())
                }
            }
            Get | Head => {
                let s = p(self, 0);
                let r = if i == Get {
                    let ix = self.index_value(args[1]);
                    quote!(#rt::rt::get(#site, (#s).as_slice(), #ix))
                } else {
                    quote!(#rt::rt::head(#site, (#s).as_slice()))
                };
                if self.is_copy(ty) {
                    quote!((*#r))
                } else {
                    quote!(#r.clone())
                }
            }
            Set => {
                // The index and the value first, which may read the sequence's old version: its
                // last use then moves it into the write ([`crate::opt::moves`]).
                let ix = self.index_value(args[1]);
                let x = v(self, 2);
                let s = v(self, 0);
                let (i, y) = (self.fresh("index"), self.fresh("value"));
                self.checked(
                    quote!({ let #i = #ix; let #y = #x; #rt::rt::set(#site, #s, #i, #y) }),
                    ty,
                    "the result of `set`",
                )
            }
            Tail => {
                let s = p(self, 0);
                quote!(#rt::rt::tail(#site, #s))
            }
            Concat => {
                let (a, b) = (p(self, 0), p(self, 1));
                self.checked(
                    quote!(#rt::rt::concat((#a).as_slice(), (#b).as_slice())),
                    ty,
                    "the result of `concat`",
                )
            }
            Reverse => {
                let s = p(self, 0);
                quote!(#rt::rt::reverse((#s).as_slice()))
            }
            Subsequence => {
                let s = p(self, 0);
                let (o, l) = (self.index_value(args[1]), self.index_value(args[2]));
                quote!(#rt::rt::subsequence(#site, #s, #o, #l))
            }
            Create => {
                // Arguments are evaluated in the order they are written.
                let n = self.index_value(args[0]);
                let nv = self.fresh("n");
                let (pre, f) = self.index_adaptor(args[1], &[], &args[0].ty);
                let out = quote!({ let #nv = #n; #pre #rt::create::<B, _, _>(#site, #nv, #f) });
                self.checked(out, ty, "the result of `create`")
            }
            // The optimizer makes every `foldl` a `Soac`; one that reaches here is printed as
            // one all the same.
            Foldl => {
                let e = crate::ast::Expr::typed(
                    ExprKind::App {
                        func: Box::new(crate::ast::Expr::typed(
                            ExprKind::Intrinsic(Foldl),
                            crate::error::SpanRange::call_site(),
                            Type::unit(),
                        )),
                        args: args.iter().map(|a| (*a).clone()).collect(),
                    },
                    crate::error::SpanRange::call_site(),
                    ty.clone(),
                );
                match crate::opt::fuse::consumer(e) {
                    crate::ast::Expr {
                        kind: ExprKind::Soac(s),
                        id,
                        ..
                    } => self.soac(id, &s, ty),
                    _ => quote!(::core::compile_error!(
                        "internal error: a `foldl` not made a fold"
                    )),
                }
            }
            TensorGet | TensorSet | TensorSlice => {
                if i != TensorSlice
                    && let Some(w) = self
                        .window_access(args[1], args.get(2).copied(), |g| g.intrinsic(i, args, ty))
                {
                    return w;
                }
                let t = v(self, 0);
                // A literal index needs no sequence: it becomes an array on the stack.
                let idx = match &args[1].kind {
                    ExprKind::Seq(es) => {
                        let vs: Vec<TokenStream> = es.iter().map(|e| self.index_value(e)).collect();
                        quote!(&[#(#vs),*])
                    }
                    _ if args[1].ty == Type::seq(Type::INT) => {
                        let s = p(self, 1);
                        quote!((#s).as_slice())
                    }
                    // Indices of another integer type, as the runtime's `i64`s.
                    _ => {
                        let s = p(self, 1);
                        quote!(&(#s).as_slice().iter().map(|x| #rt::Int::to_index(*x)).collect::<::std::vec::Vec<i64>>())
                    }
                };
                let tensor = self.tensor_name(args[0]);
                match i {
                    TensorGet => quote!(#rt::tensor_get(B::CHECKS, #site, #tensor, #t, #idx)),
                    TensorSlice => quote!((#t).slice(#site, #idx)),
                    _ => {
                        let x = v(self, 2);
                        quote!(#rt::tensor_set(B::CHECKS, #site, #tensor, #t, #idx, #x))
                    }
                }
            }
            NumDiv => {
                let (a, b) = (v(self, 0), v(self, 1));
                quote!(#rt::Num::div(#site, #a, #b))
            }
            // Wrapping at an integer's MIN, as `wrapping_abs`; debug mode fails there, as a
            // Rust debug build panics.
            AbsI | AbsF | NumAbs => {
                let a = v(self, 0);
                quote!(#rt::Num::abs_at(B::CHECKS, #site, #a))
            }
            // Wrapping (`pow`) or 0 (`next_power_of_two`) where the result overflows; debug mode
            // fails there, as a Rust debug build panics.
            MPow => {
                let (a, n) = (v(self, 0), v(self, 1));
                quote!(#rt::Int::pow_at(B::CHECKS, #site, #a, #n))
            }
            MNextPowerOfTwo => {
                let a = v(self, 0);
                quote!(#rt::Int::next_power_of_two_at(B::CHECKS, #site, #a))
            }
            NumEq | NumNe | NumLt | NumLe | NumGt | NumGe => {
                let op: TokenStream = match i {
                    NumEq => quote!(==),
                    NumNe => quote!(!=),
                    NumLt => quote!(<),
                    NumLe => quote!(<=),
                    NumGt => quote!(>),
                    _ => quote!(>=),
                };
                let (a, b) = (v(self, 0), v(self, 1));
                quote!((#a #op #b))
            }
            // `&` `|` `^` `!` on integers (bitwise) and `bool` (logical, both operands evaluated),
            // the Rust operators: an open integer type is `rt::Int`, which has them.
            NumAnd | NumOr | NumXor => {
                let op: TokenStream = match i {
                    NumAnd => quote!(&),
                    NumOr => quote!(|),
                    _ => quote!(^),
                };
                let (a, b) = (v(self, 0), v(self, 1));
                quote!((#a #op #b))
            }
            NumNot => {
                let a = v(self, 0);
                quote!((!(#a)))
            }
            // Masked as a release build does; debug mode fails where a debug build panics.
            NumShl | NumShr => {
                let m = format_ident!("{}", if i == NumShl { "shl" } else { "shr" });
                let (a, b) = (v(self, 0), v(self, 1));
                quote!(#rt::Int::#m(B::CHECKS, #site, #a, #b))
            }
            // Rust's own `as` between the two primitive types.
            As(n) => {
                let t = format_ident!("{}", n.rust_name());
                let a = v(self, 0);
                quote!(#rt::Scalar::cast::<#t>(#a))
            }
            MCountOnes | MLeadingZeros | MTrailingZeros | MReverseBits | MSwapBytes
            | MRotateLeft | MRotateRight | MWrappingAdd | MWrappingSub | MWrappingMul
            | MWrappingNeg | MSaturatingAdd | MSaturatingSub | MSaturatingMul | MSignum
            | MFloor | MCeil | MRound | MTrunc | MFract | MCbrt | MExp2 | MLog2 | MLog10 | MTan
            | MAsin | MAcos | MAtan | MAtan2 | MSinh | MCosh | MTanh | MHypot | MIsNan
            | MIsFinite | MToRadians | MToDegrees | MMulAdd | MIsqrt | MAbsDiff | MDivCeil
            | MRemEuclid | MDivEuclid | MIsPowerOfTwo | MPowi | MClamp | MCountZeros
            | MLeadingOnes | MTrailingOnes | MUnsignedAbs | MIsPositive | MIsNegative
            | MWrappingShl | MWrappingShr | MWrappingPow | MSaturatingPow | MWrappingAbs
            | MSaturatingAbs | MSaturatingNeg | MWrappingDiv | MWrappingRem | MIlog2 | MIlog10
            | MRecip | MIsInfinite | MIsSignNegative | MIsSignPositive | MIsNormal | MCopysign
            | MExpM1 | MLn1p | MLogBase | MAsinh | MAcosh | MAtanh | MRoundTiesEven => {
                use crate::intrinsics::MethodType as M;
                let Some((name, t)) = i.method() else {
                    unreachable!("matched above")
                };
                let m = format_ident!("{name}");
                let vals: Vec<TokenStream> = (0..args.len()).map(|k| v(self, k)).collect();
                let tr = match t {
                    M::Int { .. } | M::IntAmount | M::IntTest | M::IntCount => quote!(Int),
                    M::Num | M::NumWith { .. } => quote!(Num),
                    M::Float { .. } | M::FloatTest | M::FloatAmount => quote!(Float),
                };
                // Where Rust panics (`isqrt` of a negative, `rem_euclid` by zero …), the
                // runtime fails at the site.
                if i.method_may_fail() {
                    quote!(#rt::#tr::#m(#site, #(#vals),*))
                } else {
                    quote!(#rt::#tr::#m(#(#vals),*))
                }
            }
            TensorLinearGet => {
                let (t, ix) = (v(self, 0), v(self, 1));
                let tensor = self.tensor_name(args[0]);
                quote!(#rt::tensor_linear_get(B::CHECKS, #site, #tensor, #t, #ix))
            }
            TensorLinearSet => {
                let (t, ix, x) = (v(self, 0), v(self, 1), v(self, 2));
                let tensor = self.tensor_name(args[0]);
                quote!(#rt::tensor_linear_set(B::CHECKS, #site, #tensor, #t, #ix, #x))
            }
            TensorRank => {
                let t = v(self, 0);
                quote!((#t).rank())
            }
            TensorShape => {
                let t = v(self, 0);
                quote!((#t).shape_seq())
            }
            TensorSub => {
                let (t, o, l) = (v(self, 0), v(self, 1), v(self, 2));
                quote!((#t).sub(#site, #o, #l))
            }
            // Written as a record literal by `mono`.
            SetField => quote!(::core::compile_error!(
                "internal error: a field assignment that was not expanded"
            )),
            TensorGemm => {
                // Arguments are evaluated in the order they are written.
                let vals: Vec<TokenStream> = (0..7).map(|k| v(self, k)).collect();
                let [c, a, ta, b, tb, alpha, beta] = &vals[..] else {
                    unreachable!("seven arguments, checked by inference")
                };
                let names = [0, 1, 3].map(|k| self.tensor_name(args[k]));
                let [cn, an, bn] = &names;
                // (Host code of the CUDA targets launches a kernel instead: `launch_gemm`.)
                quote!({
                    #rt::tensor_gemm::<B, _>(
                        #site,
                        [#cn, #an, #bn],
                        #c, #a, #ta, #b, #tb, #alpha, #beta,
                    )
                })
            }
        }
    }

    /// The math function `m` of the float type `t` as Rust has it (`f32::sqrt` of an `f32`, not
    /// `f64`'s rounded): the primitive's own where `t` is written, the runtime's `Float` where the
    /// captured values fix it.
    fn float_fn(&self, t: &Type, m: proc_macro2::Ident) -> TokenStream {
        let rt = &self.rt;
        match t {
            Type::Num(n) => {
                let n = format_ident!("{}", n.rust_name());
                quote!(#n::#m)
            }
            _ => quote!(#rt::Float::#m),
        }
    }

    /// How debug mode's failures name a tensor: its variable, or what made it.
    pub(super) fn tensor_name(&self, t: &Expr) -> String {
        match &t.kind {
            ExprKind::Var { ident, .. } => ident.name.clone(),
            ExprKind::App { func, .. } => match &func.kind {
                ExprKind::Intrinsic(i) => format!("{i}(…)"),
                ExprKind::Var { ident, .. } => format!("{}(…)", ident.name),
                _ => "(a computed tensor)".into(),
            },
            _ => "(a computed tensor)".into(),
        }
    }
}

/// The Rust infix operator of a binary intrinsic, spelt as in the operator table.
fn operator_tokens(i: Intrinsic) -> TokenStream {
    let symbol = i.operator().map_or("", |o| o.symbol);
    // The table's symbols are Rust operators, which always lex.
    symbol.parse().unwrap_or_default()
}
