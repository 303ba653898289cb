//! Type inference's tests: the types it finds, and the errors it reports.

use super::*;
use crate::pipeline::parse_tokens;
use crate::resolve::resolve;
use quote::quote;

fn typed(tokens: proc_macro2::TokenStream) -> Typed {
    infer(resolve(parse_tokens(tokens).unwrap()).unwrap())
        .unwrap_or_else(|e| panic!("{}", e[0].text()))
}

fn errors(tokens: proc_macro2::TokenStream) -> Vec<String> {
    infer(resolve(parse_tokens(tokens).unwrap()).unwrap())
        .expect_err("should fail")
        .iter()
        .map(|e| e.text())
        .collect()
}

fn captured(tokens: proc_macro2::TokenStream) -> Vec<String> {
    typed(tokens)
        .free_var_types
        .iter()
        .map(|t| t.to_string())
        .collect()
}

#[test]
fn captured_types_come_from_use() {
    assert_eq!(
        captured(quote!({
            let f = |x| muli(c, x);
            reduce(addi, 0, map(f, s))
        })),
        ["i64", "Vec<i64>"]
    );
    assert_eq!(captured(quote!(map2(addf, a, b))), ["Vec<f64>", "Vec<f64>"]);
    assert_eq!(
        captured(quote!(par_loop(n, |i| tensor_set(
            t,
            [i],
            tensor_get(t, [i]) * 2.0
        )))),
        // A count of any integer type, and a float tensor (`Tensor<f64>` or `Tensor<f32>`), as
        // the captured values say.
        ["_", "Tensor<_>"]
    );
    let typed =
        infer(resolve(parse_tokens(quote!(map(|x| x * 2.0, s))).unwrap()).unwrap()).unwrap();
    assert_eq!(typed.free_var_types[0].to_string(), "Vec<_>");
    assert!(matches!(typed.numeric.as_slice(), [(_, Numeric::Float)]));
    // Not captured: the literal's default.
    assert_eq!(
        infer(resolve(parse_tokens(quote!(2.5 * 2.0)).unwrap()).unwrap())
            .unwrap()
            .expr
            .ty,
        Type::FLOAT
    );
    assert_eq!(
        captured(quote!(reduce(addf, 0.0, flatten(m)))),
        ["Vec<Vec<f64>>"]
    );
}

#[test]
fn let_polymorphism() {
    let t = typed(quote!({
        let id = |x| x;
        (id(1), id(true), id([1.5]))
    }));
    assert_eq!(t.expr.ty.to_string(), "(i64, bool, Vec<f64>)");
}

#[test]
fn recursive_functions() {
    let t = typed(quote!({
        fn fact(n: i64) -> i64 {
            if n <= 1 { 1 } else { n * fact(n - 1) }
        }
        fact(5)
    }));
    assert_eq!(t.expr.ty, Type::INT);
    let t = typed(quote!({
        fn len(s: _) -> i64 {
            if null(s) { 0 } else { 1 + len(tail(s)) }
        }
        (len([1]), len([true]))
    }));
    assert_eq!(t.expr.ty.to_string(), "(i64, i64)");
}

#[test]
fn operators_default_to_i64_and_follow_use() {
    assert_eq!(
        typed(quote!({
            let add = |x, y| x + y;
            add(1.5, 2.0)
        }))
        .expr
        .ty,
        Type::FLOAT
    );
    assert_eq!(
        typed(quote!({
            let sq = |x| x * x;
            3
        }))
        .expr
        .ty,
        Type::INT
    );
    assert_eq!(typed(quote!(1.0 < 2.0)).expr.ty, Type::BOOL);
}

#[test]
fn bit_operators_methods_and_casts() {
    // `&` `|` `^` `!`: integers or `bool`, the operands' type; a shift the shifted value's.
    assert_eq!(typed(quote!(true ^ (false | true))).expr.ty, Type::BOOL);
    assert_eq!(typed(quote!(!(1 & 3))).expr.ty, Type::INT);
    assert_eq!(
        typed(quote!({
            let f = |b| !b;
            f(true)
        }))
        .expr
        .ty,
        Type::BOOL
    );
    assert_eq!(
        typed(quote!({
            let f = |b| b & 1;
            f(2)
        }))
        .expr
        .ty,
        Type::INT
    );
    assert_eq!(typed(quote!(1 << 70)).expr.ty, Type::INT);
    // The methods: the receiver's type, a test `bool`.
    assert_eq!(
        typed(quote!(7.count_ones())).expr.ty,
        Type::Num(crate::types::Number::U32)
    );
    assert_eq!(typed(quote!(1.5.floor())).expr.ty, Type::FLOAT);
    assert_eq!(typed(quote!(1.5.is_nan())).expr.ty, Type::BOOL);
    assert_eq!(typed(quote!(1.5.atan2(2.0))).expr.ty, Type::FLOAT);
    // The casts, of numbers and `bool`.
    assert_eq!(typed(quote!(true as i64)).expr.ty, Type::INT);
    assert_eq!(typed(quote!(1.5 as i64)).expr.ty, Type::INT);
    assert_eq!(typed(quote!(3 as f64)).expr.ty, Type::FLOAT);
    assert!(errors(quote!([1] as f64))[0].contains("`as f64`"));
}

#[test]
fn tuples_and_projection() {
    assert_eq!(
        typed(quote!({
            let p = (1, 2.5);
            p.1
        }))
        .expr
        .ty,
        Type::FLOAT
    );
    assert_eq!(
        typed(quote!({
            let (a, b) = (1, true);
            if b { a } else { 0 }
        }))
        .expr
        .ty,
        Type::INT
    );
    assert_eq!(
        captured(quote!({
            let q: (i64, f64) = p;
            q.0
        })),
        ["(i64, f64)"]
    );
}

#[test]
fn intrinsic_argument_mismatch() {
    let e = errors(quote!(addi(1, 2.0)));
    assert_eq!(
        e,
        [
            "mismatched types: expected `i64`, found `f64` as the 2nd argument of `addi`\nhelp: use `addf` for `f64` values"
        ]
    );
}

#[test]
fn not_a_function_and_arity() {
    assert_eq!(
        errors(quote!({
            let x = 1;
            x(2)
        })),
        ["`x` is not a function: its type is `i64`"]
    );
    assert_eq!(
        errors(quote!(addi(1, 2, 3))),
        ["`addi` takes 2 arguments but 3 were supplied"]
    );
}

#[test]
fn open_element_types_of_captures_are_kept() {
    // rustc knows the element type: it stays open, for the captured value to fix.
    let t = typed(quote!(length(s)));
    assert_eq!(t.free_var_types[0].to_string(), "Vec<_>");
    assert!(matches!(t.numeric[..], [(_, Numeric::Open)]));
    let t = typed(quote!(map(|p| (p.1, p.0), reverse(s))));
    assert_eq!(t.numeric.len(), 2, "{:?}", t.numeric);
    assert!(t.numeric.iter().all(|(_, k)| *k == Numeric::Open));
    // A number used in arithmetic stays a number beside an open type.
    let t = typed(quote!(map2(|x, y| (y, x + x), a, b)));
    let kinds: Vec<Numeric> = t.numeric.iter().map(|(_, k)| *k).collect();
    assert!(
        kinds.contains(&Numeric::Num) && kinds.contains(&Numeric::Open),
        "{kinds:?}"
    );
    assert_eq!(
        captured(quote!({
            let s: Vec<bool> = s;
            length(s)
        })),
        ["Vec<bool>"]
    );
}

#[test]
fn a_type_no_rust_value_fixes_asks_for_annotation() {
    // The result is made inside the expression: no Rust type exists for its elements.
    let e = errors(quote!(map(|x| x, [])));
    assert_eq!(e.len(), 1);
    assert!(
        e[0].starts_with("cannot infer the type of the result"),
        "{}",
        e[0]
    );
    assert!(e[0].contains("no captured value fixes"), "{}", e[0]);
    assert!(e[0].contains("let r: Vec<i64>"), "{}", e[0]);
    // Made and consumed inside: nothing depends on it, so nothing is asked.
    typed(quote!(length([])));
}

#[test]
fn functions_cannot_be_captured_or_returned() {
    assert!(errors(quote!(map(f, s)))[0].contains("cannot capture Rust functions"));
    assert!(errors(quote!(|x| x + 1))[0].contains("cannot return a function"));
}

#[test]
fn operator_mismatch() {
    let e = errors(quote!(1 + 2.0));
    assert_eq!(
        e,
        [
            "`+` needs operands of the same type, found `i64` and `f64`\nhelp: convert the i64 operand with `x as f64`"
        ]
    );
    // The bit operators: integers and `bool`; shifts by an integer of any type.
    assert!(
        errors(quote!(1.5 & 2.0))[0]
            .contains("`&` cannot be applied to `f64`: it needs integers or bool")
    );
    assert!(errors(quote!(1.5 << 2))[0].contains("the shifted value must be an integer"));
    assert!(errors(quote!(1 >> 2.0))[0].contains("the shift amount must be an integer"));
    assert!(
        errors(quote!(!1.5))[0]
            .contains("`!` cannot be applied to `f64`: it needs bool or an integer")
    );
    assert!(errors(quote!(1.5.count_ones()))[0].contains("`.count_ones()`"));
    assert!(errors(quote!(1.floor()))[0].contains("`.floor()`"));
    assert!(errors(quote!([1] + [2]))[0].contains("`+` cannot be applied to `Vec<i64>`"));
    assert!(
        errors(quote!(if 1 { 2 } else { 3 }))[0]
            .contains("this condition must be a `bool`, but it is `i64`")
    );
}

#[test]
fn a_reinterpreted_method_says_what_it_took_the_call_for() {
    // `.len()` is the length of a sequence; the receiver here is a tuple.
    let e = errors(quote!({
        let board = (s, 3);
        board.len()
    }));
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with(
            "`.len()` inside `accelerate!` is the length of a sequence, and `board` is `(_, i64)`"
        ),
        "{e:?}"
    );
    let e = errors(quote!(map(|x: f64| x.count_ones(), s)));
    assert!(
        e[0].starts_with(
            "`.count_ones()` inside `accelerate!` is Rust's method of integers, and `x` is `f64`"
        ),
        "{e:?}"
    );
}

#[test]
fn rust_s_numbers_are_types_of_their_own() {
    // Annotations, suffixes and casts name them; arithmetic stays in the type.
    let t = typed(quote!(map(|x: u16| x * 2 + 1, s)));
    assert_eq!(t.free_var_types[0].to_string(), "Vec<u16>");
    let t = typed(quote!(map(|x| (x as usize, 3u8, 2.5f32), s)));
    assert_eq!(
        t.expr.ty.to_string(),
        "Vec<(usize, u8, f32)>",
        "{:?}",
        t.expr.ty
    );
    // A literal that does not fit the type named around it is an error at the literal.
    assert_eq!(
        errors(quote!(map(|x: u8| x + 300, s))),
        ["the literal `300` does not fit in u8\nhelp: the u8 values are 0..=255"]
    );
    assert_eq!(
        errors(quote!(map(|x: i8| x - 129, s))),
        ["the literal `129` does not fit in i8\nhelp: the i8 values are -128..=127"]
    );
    // A literal takes every value of its type, `u64`'s above `i64::MAX` included, in an
    // expression and as a pattern (a literal, a range, an alternative), and only what does
    // not fit is an error, at the literal.
    for ok in [
        quote!(map(|x: u64| x + 18446744073709551615, s)),
        quote!({
            let y: u64 = 18446744073709551615;
            y
        }),
        quote!({
            let y: usize = 9223372036854775808;
            y
        }),
        quote!(map(
            |x: u64| match x {
                9223372036854775808 => 1,
                18446744073709551615 | 0 => 2,
                9223372036854775809..=18446744073709551614 => 3,
                _ => 0,
            },
            s
        )),
        quote!(map(
            |x: usize| match x {
                18446744073709551615 => 1,
                _ => 0,
            },
            s
        )),
        quote!(map(
            |x: i64| match x {
                -9223372036854775808 => 1,
                -3..=-1 | 9223372036854775807 => 2,
                _ => 0,
            },
            s
        )),
        quote!(map(
            |x: i8| match x {
                -128..=-1 => 1,
                127 => 2,
                _ => 0,
            },
            s
        )),
    ] {
        typed(ok);
    }
    assert_eq!(
        errors(quote!(map(
            |x: u64| match x {
                -1 => 1,
                _ => 0,
            },
            s
        ))),
        ["the literal `-1` does not fit in u64\nhelp: the u64 values are 0..=18446744073709551615"]
    );
    assert_eq!(
        errors(quote!(map(
            |x: u8| match x {
                0..=256 => 1,
                _ => 0,
            },
            s
        ))),
        ["the literal `256` does not fit in u8\nhelp: the u8 values are 0..=255"]
    );
    assert_eq!(
        errors(quote!(map(
            |x: i64| match x {
                9223372036854775808 => 1,
                _ => 0,
            },
            s
        ))),
        [
            "the literal `9223372036854775808` does not fit in i64\nhelp: the i64 values are -9223372036854775808..=9223372036854775807"
        ]
    );
    assert_eq!(
        errors(quote!({
            let y: u32 = 4294967296;
            y
        })),
        ["the literal `4294967296` does not fit in u32\nhelp: the u32 values are 0..=4294967295"]
    );
    // Nothing fixes its type: an `i64`, as in Rust.
    assert_eq!(
        errors(quote!(9223372036854775808)),
        [
            "the literal `9223372036854775808` does not fit in i64\nhelp: the i64 values are -9223372036854775808..=9223372036854775807"
        ]
    );
    // Two different number types do not mix, as in Rust.
    assert_eq!(
        errors(quote!(map(|x: u8| x + 1u16, s))),
        ["`+` needs operands of the same type, found `u8` and `u16`"]
    );
    // Floats and integers of the new types keep their kinds.
    assert!(!errors(quote!(map(|x: f32| x + 1, s))).is_empty());
    assert!(!errors(quote!(map(|x: u32| x & 1.5, s))).is_empty());
}

/// `abs_diff` gives Rust's unsigned integer of its receiver's width: known where the receiver's
/// type is (a default `i64` gives a `u64`), following the captured values' type otherwise, and an
/// error at the method where the result is used as another type.
#[test]
fn abs_diff_gives_the_unsigned_integer_of_the_width() {
    let ty = |t: proc_macro2::TokenStream| typed(t).expr.ty.to_string();
    assert_eq!(ty(quote!((-3i32).abs_diff(5))), "u32");
    assert_eq!(ty(quote!(3.abs_diff(5))), "u64");
    assert_eq!(ty(quote!(3isize.abs_diff(5).abs_diff(1))), "usize");
    let t = typed(quote!(map2(|x, y| x.abs_diff(y), a, b)));
    let [(a, Numeric::Int), (_, Numeric::Unsigned(b))] = t.numeric.as_slice() else {
        panic!("{:?}", t.numeric);
    };
    assert_eq!(a, b);
    // Used as a `u32`: the receivers are `i32`s or `u32`s.
    let t = typed(quote!(map2(|x, y| x.abs_diff(y) + 1u32, a, b)));
    assert!(
        matches!(
            t.numeric.as_slice(),
            [(_, Numeric::OfUnsigned(Number::U32))]
        ),
        "{:?}",
        t.numeric
    );
    let e = errors(quote!({
        let d: i32 = 3i32.abs_diff(5);
        d
    }));
    assert!(
        e[0].contains("`abs_diff` of i32 gives a u32, as in Rust, used here as i32"),
        "{e:?}"
    );
    let e = errors(quote!(map2(|x, y| x.abs_diff(y) + 1i32, a, b)));
    assert!(
        e[0].contains("`abs_diff` gives an unsigned integer, as in Rust, used here as i32"),
        "{e:?}"
    );
}

/// `unsigned_abs` gives the unsigned integer of the width, as `abs_diff`; the methods Rust has on
/// signed integers only are refused on a written unsigned type; `%`, `rem_euclid` and
/// `div_euclid` apply to floats, `ilog2` gives a `u32`.
#[test]
fn the_other_numeric_methods_are_typed_as_rust_types_them() {
    let ty = |t: proc_macro2::TokenStream| typed(t).expr.ty.to_string();
    assert_eq!(ty(quote!((-3i8).unsigned_abs())), "u8");
    assert_eq!(ty(quote!(3i16.ilog2())), "u32");
    assert_eq!(ty(quote!(3u8.count_zeros())), "u32");
    assert_eq!(ty(quote!((-3i64).is_negative())), "bool");
    assert_eq!(ty(quote!(3i32.wrapping_shl(40u8))), "i32");
    assert_eq!(ty(quote!(3u16.saturating_pow(9i64))), "u16");
    assert_eq!(ty(quote!(2.5f32 % 2.0)), "f32");
    assert_eq!(ty(quote!(2.5.rem_euclid(-2.0))), "f64");
    assert_eq!(ty(quote!(2.5f32.div_euclid(2.0))), "f32");
    assert_eq!(ty(quote!(2.5f32.log(2.0))), "f32");
    assert_eq!(ty(quote!((-0.0f64).is_sign_negative())), "bool");
    let t = typed(quote!(map(|x| x.unsigned_abs(), a)));
    assert!(
        matches!(
            t.numeric.as_slice(),
            [(_, Numeric::Int), (_, Numeric::Unsigned(_))]
        ),
        "{:?}",
        t.numeric
    );
    for m in [
        quote!(3u8.is_negative()),
        quote!(3u32.unsigned_abs()),
        quote!(3u64.wrapping_abs()),
        quote!(3usize.saturating_neg()),
    ] {
        let e = errors(m);
        assert!(
            e.len() == 1 && e[0].contains("Rust has it on signed integers only"),
            "{e:?}"
        );
    }
    let e = errors(quote!({
        let d: i8 = (-3i8).unsigned_abs();
        d
    }));
    assert!(
        e[0].contains("`unsigned_abs` of i8 gives a u8, as in Rust, used here as i8"),
        "{e:?}"
    );
    assert!(errors(quote!(2.5.ilog2()))[0].contains("`.ilog2()` is a method of integers"));
    assert!(errors(quote!(2.recip()))[0].contains("`.recip()` is a method of floats"));
    assert!(errors(quote!(true % false))[0].contains("`%` cannot be applied to `bool`"));
}
