//! The lowering, tokens in and PMExpr out (before inference, so binders print without types),
//! and its errors, each at the user's tokens with a `help:`.

use proc_macro2::TokenStream;
use quote::quote;

use crate::pipeline::parse_tokens;
use crate::pretty;

/// The lowered expression, printed.
fn lowered(tokens: TokenStream) -> String {
    match parse_tokens(tokens) {
        Ok(e) => pretty::expr(&e, &[]).replace(": ()", ""),
        Err(errs) => panic!("{}", errs[0].text()),
    }
}

/// The first error's message and help.
fn error(tokens: TokenStream) -> (String, String) {
    let e = parse_tokens(tokens).expect_err("an error");
    (e[0].message.clone(), e[0].help.clone().unwrap_or_default())
}

#[test]
fn assignments_are_new_versions() {
    assert_eq!(
        lowered(quote!({
            let mut x = 1;
            x += 2;
            x * 3
        })),
        "{ let x'1 = 1; { let x'2 = (x'1 + 2); (x'2 * 3) } }"
    );
    // The right-hand side first: its assignment is overwritten by the compound one.
    assert_eq!(
        lowered(quote!({
            let mut x = 0;
            x += {
                x = 10;
                1
            };
            x
        })),
        "{ let x'1 = 0; { let x'2 = 10; { let x'3 = (x'2 + 1); x'3 } } }"
    );
    // `&=` and `|=` are the bit operators (on `bool`s too), which evaluate both sides.
    assert_eq!(
        lowered(quote!({
            let mut f = true;
            f &= g(1);
            f |= h;
            f
        })),
        "{ let f'1 = true; { let f'2 = (f'1 & g(1)); { let f'3 = (f'2 | h); f'3 } } }"
    );
    // A `mut` parameter is a mutable local of the body.
    assert_eq!(
        lowered(quote!(|mut acc: i64| {
            acc *= 2;
            acc
        })),
        "|acc| { let acc'1 = acc; { let acc'2 = (acc'1 * 2); acc'2 } }"
    );
}

#[test]
fn fields_are_set_by_record() {
    assert_eq!(
        lowered(quote!({
            let mut p = (1, 2);
            p.0 += 5;
            p
        })),
        "{ let p'1 = (1, 2); { let p'2 = __set_field(p'1, p'1.0, (p'1.0 + 5)); p'2 } }"
    );
    assert_eq!(
        lowered(quote!({
            let mut b = b0;
            b.pos.x *= 2.0;
            b
        })),
        "{ let b'1 = b0; { let b'2 = __set_field(b'1, b'1.pos, __set_field(b'1.pos, (b'1.pos).x, \
         ((b'1.pos).x * 2.0))); b'2 } }"
    );
}

/// Inner binders get unique names, so the code that follows a block is not captured by them.
#[test]
fn binders_inside_imperative_code_are_unique() {
    assert_eq!(
        lowered(quote!({
            let y = 10;
            let mut a = 1;
            let z = {
                let y = 5;
                a += y;
                a
            };
            y + z + a
        })),
        "{ let y'1 = 10; { let a'2 = 1; { let y'3 = 5; { let a'4 = (a'2 + y'3); \
         { let z'5 = a'4; ((y'1 + z'5) + a'4) } } } } }"
    );
    // Code without imperative syntax is left as it is.
    assert_eq!(
        lowered(quote!({
            let y = 1;
            y
        })),
        "{ let y = 1; y }"
    );
}

/// An `if` whose arm assigns returns the new version; what follows is written once.
#[test]
fn arms_that_assign_join() {
    assert_eq!(
        lowered(quote!({
            let mut c = 0;
            if x > 0 {
                c += 1;
            }
            c
        })),
        "{ let c'1 = 0; { let c'4 = match (x > 0) { true => { let c'2 = (c'1 + 1); c'2 }, \
         _ => c'1 }; c'4 } }"
    );
}

#[test]
fn for_over_a_range_is_a_tail_recursive_function() {
    assert_eq!(
        lowered(quote!({
            let mut s = 0;
            for i in 0..n {
                s += i;
            }
            s
        })),
        "{ let s'1 = 0; { fn for'2(i'3, s'4) = match (i'3 < n) { true => { let s'5 = (s'4 + i'3); \
         for'2((i'3 + 1), s'5) }, _ => s'4 }; { let s'7 = for'2(0, s'1); s'7 } } }"
    );
    // `..=` tests before the step (no overflow at the top of the type); `.rev()` counts down.
    assert_eq!(
        lowered(quote!({
            let mut a = 0;
            for i in (0..=n).rev() {
                a = a * 2 + i;
            }
            a
        })),
        "{ let a'1 = 0; { fn for'2(i'3, a'4) = { let a'5 = ((a'4 * 2) + i'3); match (0 < i'3) { \
         true => for'2((i'3 - 1), a'5), _ => a'5 } }; { let a'7 = match (0 <= n) { \
         true => for'2(n, a'1), _ => a'1 }; a'7 } } }"
    );
    // A step that is not a positive literal is checked (`step_by(0)` panics in Rust).
    assert_eq!(
        lowered(quote!({
            let mut x = 0;
            for i in (a..b).step_by(k) {
                x += i;
            }
            x
        })),
        "{ let x'1 = 0; match (k > 0) { true => { fn for'2(i'3, x'4) = match (i'3 < b) { \
         true => { let x'5 = (x'4 + i'3); for'2((i'3 + k), x'5) }, _ => x'4 }; \
         { let x'7 = for'2(a, x'1); x'7 } }, _ => never!() } }"
    );
}

#[test]
fn for_over_a_sequence_counts_its_positions() {
    assert_eq!(
        lowered(quote!({
            let mut a = 0;
            for (i, x) in s.iter().enumerate() {
                a += i * x;
            }
            a
        })),
        "{ let a'1 = 0; { let n'2 = length(s); { fn for'3(i'4, a'5) = match (i'4 < n'2) { \
         true => match (__as_usize(i'4), get(s, i'4)) { { 0: i'6, 1: x'7 } => { let a'8 = (a'5 + (i'6 * x'7)); \
         for'3((i'4 + 1), a'8) }, _ => never!() }, _ => a'5 }; { let a'10 = for'3(0, a'1); a'10 } } } }"
    );
}

#[test]
fn while_continue_and_break() {
    assert_eq!(
        lowered(quote!({
            let mut s = 0;
            let mut i = 0;
            while i < 10 {
                if i % 3 == 0 {
                    i += 1;
                    continue;
                }
                s += i;
                i += 1;
            }
            s
        })),
        "{ let s'1 = 0; { let i'2 = 0; { fn while'3(i'4, s'5) = match (i'4 < 10) { \
         true => match ((i'4 % 3) == 0) { true => { let i'6 = (i'4 + 1); while'3(i'6, s'5) }, \
         _ => { let s'7 = (s'5 + i'4); { let i'8 = (i'4 + 1); while'3(i'8, s'7) } } }, \
         _ => (i'4, s'5) }; match while'3(i'2, s'1) { { 0: i'10, 1: s'11 } => s'11, _ => never!() } } } }"
    );
    assert_eq!(
        lowered(quote!({
            let mut k = 0;
            loop {
                k += 1;
                if k > 5 {
                    break k * 2;
                }
            }
        })),
        "{ let k'1 = 0; { fn loop'2(k'3) = { let k'4 = (k'3 + 1); match (k'4 > 5) { \
         true => ((k'4 * 2), k'4), _ => loop'2(k'4) } }; match loop'2(k'1) { \
         { 0: v'5, 1: k'6 } => v'5, _ => never!() } } }"
    );
}

/// A `return` inside a loop makes the loop's exits run the rest of the function.
#[test]
fn return_inside_a_loop() {
    assert_eq!(
        lowered(quote!({
            fn find(x: i64) -> i64 {
                for i in 0..length(s) {
                    if s[i] == x {
                        return i;
                    }
                }
                -1
            }
            find(3)
        })),
        "{ fn find'1(x) = { let b'2 = length(s); { fn for'3(i'4) = match (i'4 < b'2) { \
         true => match (get(s, i'4) == x) { true => i'4, _ => for'3((i'4 + 1)) }, _ => -1 }; \
         for'3(0) } }; find'1(3) }"
    );
}

#[test]
fn what_cannot_be_assigned_is_an_error_with_a_way_out() {
    let cases = [
        (
            quote!({
                total += 1;
                total
            }),
            "cannot assign `total`: it is captured from outside `accelerate!`",
            "`let mut total = total;`",
        ),
        (
            quote!({
                let x = 1;
                x = 2;
                x
            }),
            "cannot assign twice to the immutable variable `x`",
            "`let mut x = …;`",
        ),
        (
            quote!({
                let mut t = 0;
                map(
                    |x| {
                        t += x;
                        x
                    },
                    s,
                )
            }),
            "`t` is declared outside the function of `map`, whose calls may run in parallel",
            "reduce",
        ),
        (
            quote!({
                let mut t = 0;
                let f = |x| {
                    t += x;
                    x
                };
                f(1)
            }),
            "a closure cannot assign `t`",
            "return the new value from the closure",
        ),
        (
            quote!({
                let mut t = 0;
                fn f(x: i64) -> i64 {
                    x + t
                }
                f(1)
            }),
            "a `fn` item cannot use the mutable local `t`",
            "pass `t` to the function",
        ),
        (
            quote!({
                let f = {
                    let mut t = 0;
                    t += 1;
                    move |x: i64| x + t
                };
                f(1)
            }),
            "this closure holds the mutable local `t` and outlives the block",
            "`let t = t;`",
        ),
        (
            quote!({
                s[i] = 1;
                s
            }),
            "cannot assign `s`: it is captured from outside `accelerate!`",
            "`let mut s = s;`",
        ),
    ];
    for (tokens, message, help) in cases {
        let (m, h) = error(tokens);
        assert!(m.contains(message), "{m}");
        assert!(h.contains(help), "{h}");
    }
}

#[test]
fn jumps_with_nowhere_to_go_are_errors() {
    let cases = [
        (
            quote!({
                break;
            }),
            "`break` outside of a loop",
        ),
        (
            quote!({
                for i in 0..n {
                    break 5;
                }
            }),
            "`break` with a value inside a `for` loop",
        ),
        (
            quote!({
                return 1;
            }),
            "`return` inside `accelerate!` has no function to return from",
        ),
        (
            quote!({
                'a: for i in 0..n {
                    break 'b;
                }
            }),
            "use of undeclared label `'b`",
        ),
        (
            quote!(map(
                |x| {
                    for i in 0..n {
                        let f = |y: i64| {
                            break;
                        };
                    }
                    x
                },
                s
            )),
            "`break` inside a closure cannot leave a loop outside it",
        ),
    ];
    for (tokens, message) in cases {
        let (m, h) = error(tokens);
        assert_eq!(m, message);
        assert!(!h.is_empty());
    }
}

/// An `if` both of whose arms may reach what follows, one of which may `continue`: each arm
/// ends with a tag and the versions it assigned, and what follows is written once.
#[test]
fn arms_that_may_jump_join_on_a_tag() {
    let out = lowered(quote!({
        let mut x = 0;
        let mut i = 0;
        while i < 10 {
            i += 1;
            if i > 2 {
                if i % 2 == 0 {
                    continue;
                }
                x += 1;
            }
            x += 10;
        }
        x
    }));
    assert_eq!(
        out,
        "{ let x'1 = 0; { let i'2 = 0; { fn while'3(i'4, x'5) = match (i'4 < 10) { true => { \
         let i'6 = (i'4 + 1); match match (i'6 > 2) { true => match ((i'6 % 2) == 0) { \
         true => (1, x'5), _ => { let x'7 = (x'5 + 1); (0, x'7) } }, _ => (0, x'5) } { \
         { 0: tag'8, 1: x'9 } => match (tag'8 == 0) { true => { let x'10 = (x'9 + 10); \
         while'3(i'6, x'10) }, _ => while'3(i'6, x'9) }, _ => never!() } }, _ => (i'4, x'5) }; \
         match while'3(i'2, x'1) { { 0: i'12, 1: x'13 } => x'13, _ => never!() } } } }"
    );
    assert_eq!(out.matches("+ 10)").count(), 1);
}

/// `PMEXPR_DUMP`'s file of a site shows the lowered form: the loop a local function of its state.
#[test]
fn the_site_dump_shows_the_lowered_loop() {
    use crate::program::compile_crate;
    use crate::registry::{Registry, SiteSource};
    let tokens = "map(|n: i64| { let mut x = n; let mut steps = 0; \
                  while x != 1 { x = if x % 2 == 0 { x / 2 } else { 3 * x + 1 }; steps += 1; } \
                  steps }, s)";
    let registry = Registry::new(
        Vec::new(),
        vec![SiteSource::new(
            "src/main.rs",
            3,
            5,
            &tokens.parse().unwrap(),
        )],
    );
    let out = compile_crate(&registry, true);
    let dump = out
        .files
        .iter()
        .find(|(n, _)| n == "pmexpr-dump/src_main.rs_3_5.txt")
        .map(|(_, text)| text.as_str())
        .expect("the dump");
    assert!(
        dump.contains("let rec while'3: fn(i64, i64) -> (i64, i64)"),
        "{dump}"
    );
    assert!(dump.contains("match while'3(x'1, steps'2)"), "{dump}");
    // Futhark's `loop … while`, which stops when the condition fails.
    assert!(dump.contains("while pm_go1 do"), "{dump}");
}

#[test]
fn a_jump_to_an_outer_loop_is_a_tag_the_outer_loop_takes() {
    let out = lowered(quote!({
        let mut s = 0;
        'o: for i in 0..n {
            for j in 0..n {
                if j > i {
                    continue 'o;
                }
                s += j;
            }
        }
        s
    }));
    // The inner loop's exits: tag 0 at its own end, tag 1 for `continue 'o`, then its state.
    assert!(out.contains("(1, s'"), "{out}");
    assert!(out.contains("(0, s'"), "{out}");
    // The outer loop takes the jump after the inner loop's call: a call of its own function.
    assert!(out.contains("match (tag'"), "{out}");
    // Each loop stays its own function, and neither calls the other's.
    assert_eq!(out.matches("fn for'").count(), 2, "{out}");
    let inner = &out[out.rfind("fn for'").expect("two loops")..];
    let inner = &inner[..inner.find("match for'").expect("the inner call")];
    assert_eq!(
        inner.matches("for'").count(),
        2,
        "only its own name and its own call: {inner}"
    );
}
