//! The parser's tests: Rust syntax in, the PMExpr it means (or the errors) out.

use quote::quote;

use super::*;
use crate::ast::{Lit, PatKind};
use crate::intrinsics::Intrinsic;
use crate::pipeline::parse_tokens;
use crate::types::{Number, TypeAnn};

fn parse(tokens: proc_macro2::TokenStream) -> Expr {
    parse_tokens(tokens).unwrap_or_else(|e| panic!("{}", e[0].text()))
}

fn errors(tokens: proc_macro2::TokenStream) -> Vec<String> {
    parse_tokens(tokens)
        .expect_err("should fail")
        .iter()
        .map(|e| e.message.clone())
        .collect()
}

#[test]
fn blocks_become_lets() {
    let e = parse(quote!({
        let x = 1;
        let y: i64 = x;
        y
    }));
    let ExprKind::Let { binder, body, .. } = &e.kind else {
        panic!("{e:?}")
    };
    assert_eq!(binder.ident.name, "x");
    let ExprKind::Let { binder, .. } = &body.kind else {
        panic!()
    };
    assert!(matches!(
        binder.ann.as_ref().unwrap().ann,
        TypeAnn::Num(Number::I64)
    ));
}

#[test]
fn fn_items_form_a_recursive_group() {
    let e = parse(quote!({
        fn f(x: i64) -> i64 {
            g(x)
        }
        fn g(x: _) -> i64 {
            x
        }
        f(1)
    }));
    let ExprKind::RecLet { fns, .. } = &e.kind else {
        panic!()
    };
    assert_eq!(
        fns.iter()
            .map(|f| f.ident.name.as_str())
            .collect::<Vec<_>>(),
        ["f", "g"]
    );
}

#[test]
fn negative_literals() {
    assert!(matches!(
        parse(quote!(-9223372036854775808)).kind,
        ExprKind::Lit(Lit::Int(v)) if v == i128::from(i64::MIN)
    ));
    // Above `i64::MAX` (a `u64`'s values): inference gives the literal its type and checks it.
    assert!(matches!(
        parse(quote!(18446744073709551615)).kind,
        ExprKind::Lit(Lit::Int(v)) if v == i128::from(u64::MAX)
    ));
    assert!(
        matches!(parse(quote!(-1.5)).kind, ExprKind::Lit(Lit::Float(f, g)) if f == -1.5 && g == -1.5)
    );
}

#[test]
fn match_arms_nest() {
    let e = parse(quote!(match x {
        0 => 1,
        _ => 2,
    }));
    let ExprKind::Match { otherwise, .. } = &e.kind else {
        panic!()
    };
    assert!(matches!(otherwise.kind, ExprKind::Match { .. }));
}

#[test]
fn rust_spellings_are_the_pmexpr_functions() {
    let call = |e: &Expr| match &e.kind {
        ExprKind::App { func, args } => match func.kind {
            ExprKind::Intrinsic(i) => (i, args.len()),
            _ => panic!("not an intrinsic"),
        },
        _ => panic!("not a call"),
    };
    // Rust's length, not PMExpr's `length` (an `i64`): an integer of its context's type.
    assert_eq!(call(&parse(quote!(s.len()))), (Intrinsic::Len, 1));
    assert_eq!(call(&parse(quote!(s.is_empty()))), (Intrinsic::Null, 1));
    assert_eq!(call(&parse(quote!(x.ln()))), (Intrinsic::Log, 1));
    assert_eq!(call(&parse(quote!(x.powf(2.0)))), (Intrinsic::Pow, 2));
    assert_eq!(call(&parse(quote!(x.abs()))), (Intrinsic::NumAbs, 1));
    // `min` and `max`: the operands bound in order, then the comparison with its NaN test.
    let ExprKind::Let { value, body, .. } = parse(quote!(a.max(b))).kind else {
        panic!("not a let")
    };
    assert!(matches!(value.kind, ExprKind::Var { ref ident, .. } if ident.name == "a"));
    assert!(matches!(body.kind, ExprKind::Let { .. }));
    assert!(matches!(parse(quote!(&s)).kind, ExprKind::Var { .. }));
    // `as i64`, `as f64`: Rust's casts, of any number or `bool`.
    assert_eq!(
        call(&parse(quote!(k as f64))),
        (Intrinsic::As(Number::F64), 1)
    );
    assert_eq!(
        call(&parse(quote!(x as i64))),
        (Intrinsic::As(Number::I64), 1)
    );
    // The numeric methods: the receiver first.
    assert_eq!(
        call(&parse(quote!(x.count_ones()))),
        (Intrinsic::MCountOnes, 1)
    );
    assert_eq!(
        call(&parse(quote!(x.rotate_left(3)))),
        (Intrinsic::MRotateLeft, 2)
    );
    assert_eq!(
        call(&parse(quote!(x.mul_add(a, b)))),
        (Intrinsic::MMulAdd, 3)
    );
    assert_eq!(call(&parse(quote!(x.signum()))), (Intrinsic::MSignum, 1));
    for (m, i, n) in [
        (quote!(x.pow(n)), Intrinsic::MPow, 2),
        (quote!(x.isqrt()), Intrinsic::MIsqrt, 1),
        (quote!(x.abs_diff(y)), Intrinsic::MAbsDiff, 2),
        (quote!(x.div_ceil(y)), Intrinsic::MDivCeil, 2),
        (quote!(x.rem_euclid(y)), Intrinsic::MRemEuclid, 2),
        (quote!(x.div_euclid(y)), Intrinsic::MDivEuclid, 2),
        (quote!(x.is_power_of_two()), Intrinsic::MIsPowerOfTwo, 1),
        (quote!(x.next_power_of_two()), Intrinsic::MNextPowerOfTwo, 1),
        (quote!(x.powi(n)), Intrinsic::MPowi, 2),
        // An intrinsic, so that `min > max` fails with Rust's message on every target.
        (quote!(x.clamp(a, b)), Intrinsic::MClamp, 3),
        (quote!(x.count_zeros()), Intrinsic::MCountZeros, 1),
        (quote!(x.ilog10()), Intrinsic::MIlog10, 1),
        (quote!(x.wrapping_shr(n)), Intrinsic::MWrappingShr, 2),
        (quote!(x.saturating_pow(n)), Intrinsic::MSaturatingPow, 2),
        (quote!(x.wrapping_rem(y)), Intrinsic::MWrappingRem, 2),
        (quote!(x.unsigned_abs()), Intrinsic::MUnsignedAbs, 1),
        (quote!(x.copysign(y)), Intrinsic::MCopysign, 2),
        // Rust's logarithm to a base (PMExpr's `log(x)` is `x.ln()`).
        (quote!(x.log(b)), Intrinsic::MLogBase, 2),
        (quote!(x.round_ties_even()), Intrinsic::MRoundTiesEven, 1),
        (quote!(x.is_sign_negative()), Intrinsic::MIsSignNegative, 1),
    ] {
        assert_eq!(call(&parse(m.clone())), (i, n), "{m}");
    }
    // The bit operators: their generic intrinsics, resolved by type in `mono`.
    assert_eq!(call(&parse(quote!(a & b))), (Intrinsic::NumAnd, 2));
    assert_eq!(call(&parse(quote!(a | b))), (Intrinsic::NumOr, 2));
    assert_eq!(call(&parse(quote!(a ^ b))), (Intrinsic::NumXor, 2));
    assert_eq!(call(&parse(quote!(a << b))), (Intrinsic::NumShl, 2));
    assert_eq!(call(&parse(quote!(a >> b))), (Intrinsic::NumShr, 2));
    assert_eq!(call(&parse(quote!(!a))), (Intrinsic::NumNot, 1));
}

#[test]
fn path_constants_are_captured_and_path_calls_explained() {
    let ExprKind::Var { ident, .. } = parse(quote!(std::f64::consts::PI)).kind else {
        panic!("not a variable")
    };
    assert_eq!(ident.name, "std::f64::consts::PI");
    assert_eq!(
        errors(quote!(f64::max(x, 1.0))),
        ["Rust functions cannot be called inside `accelerate!`"]
    );
}

#[test]
fn number_patterns_are_comparisons() {
    // `match x { 1 | 2 => 10, 3..=5 => 20, _ => 30 }`: ifs on comparisons, then the `_` arm.
    let e = parse(quote!(match x {
        1 | 2 => 10,
        3..=5 => 20,
        _ => 30,
    }));
    let mut lits = 0;
    let mut e = &e;
    while let ExprKind::Match { pat, otherwise, .. } = &e.kind {
        if let PatKind::Lit(Lit::Int(_)) = pat.kind {
            lits += 1;
        }
        e = otherwise;
    }
    assert_eq!(lits, 0, "no number pattern is left");
    // One inside a tuple stays a pattern (the Futhark and CUDA checks reject it).
    let e = parse(quote!(match p {
        (1, _) => 10,
        _ => 30,
    }));
    let ExprKind::Match { pat, .. } = &e.kind else {
        panic!("not a match")
    };
    assert!(matches!(pat.kind, PatKind::Record(_)));
}

#[test]
fn rust_only_syntax_is_explained() {
    assert_eq!(
        errors(quote!(s.chunks())),
        ["method calls are not PMExpr: `.chunks(…)`"]
    );
    // A numeric method with the wrong number of arguments.
    assert_eq!(
        errors(quote!(x.rotate_left())),
        ["`.rotate_left()` takes 1 argument besides its receiver, but 0 were supplied"]
    );
    // A method PMExpr has, called with the wrong number of arguments.
    assert_eq!(
        errors(quote!(s.len(1))),
        ["method calls are not PMExpr: `.len(…)`"]
    );
    assert_eq!(
        errors(quote!(x as bool)),
        ["`as bool` is not supported inside `accelerate!`"]
    );
    assert_eq!(
        errors(quote!(x as i128)),
        ["`as i128` is not supported inside `accelerate!`"]
    );
    assert_eq!(
        errors(quote!(&mut x)),
        ["PMExpr values are immutable: `&mut` cannot be taken"]
    );
    assert_eq!(
        errors(quote!({
            f(s)[i] = 1;
            s
        })),
        ["this cannot be assigned inside `accelerate!`"]
    );
    assert_eq!(
        errors(quote!({ for i in 0.. {} })),
        ["a `for` loop inside `accelerate!` runs over a range with both bounds"]
    );
    assert_eq!(
        errors(quote!(1u128)),
        ["`u128` literals are not supported inside `accelerate!`"]
    );
    assert_eq!(
        errors(quote!(256u8)),
        ["the literal `256u8` does not fit in u8"]
    );
    // No integer type holds it (inference checks the others against their types).
    assert_eq!(
        errors(quote!(x + 18446744073709551616)),
        ["the literal `18446744073709551616` does not fit in any integer type"]
    );
    assert_eq!(
        errors(quote!(match x {
            -9223372036854775809 => 1,
            _ => 0,
        })),
        ["the literal `-9223372036854775809` does not fit in any integer type"]
    );
    assert_eq!(
        errors(quote!(-129i8)),
        ["the literal `-129i8` does not fit in i8"]
    );
    assert_eq!(
        errors(quote!(1.5f16)),
        ["`f16` literals are not supported inside `accelerate!`"]
    );
    assert_eq!(
        errors(quote!((s.iter(), x as u128))).len(),
        2,
        "errors are collected"
    );
    // Early exits with nowhere to go say what to write instead.
    for tokens in [quote!(return 1), quote!(|x| break), quote!(|x| continue)] {
        let e = parse_tokens(tokens).expect_err("should fail");
        assert!(
            e[0].help.as_deref().is_some_and(|h| !h.is_empty()),
            "{}",
            e[0].message
        );
    }
}

#[test]
fn types() {
    let e = parse(quote!(|a: Vec<Vec<f64>>,
                          t: &pmexpr::Tensor<i64>,
                          f: impl Fn(i64) -> bool,
                          u: ()| 0));
    let ExprKind::Lam { params, .. } = &e.kind else {
        panic!()
    };
    let anns: Vec<String> = params
        .iter()
        .map(|p| format!("{:?}", p.ann.as_ref().unwrap().ann))
        .collect();
    assert_eq!(
        anns,
        [
            "Seq(Seq(Num(F64)))",
            "Tensor(Num(I64))",
            "Arrow([Num(I64)], Num(Bool))",
            "Tuple([])"
        ]
    );
}
