//! Tests of the Rust generator: the shape of the generated code, and that expansions are Rust
//! expressions.

use proc_macro2::TokenStream;
use quote::quote;

use super::generate_site;
/// The generated code for `tokens`, checked to be a Rust expression.
pub(super) fn generated(tokens: TokenStream) -> String {
    let mono = crate::compile_site(tokens).unwrap_or_else(|(e, _)| panic!("{}", e[0].text()));
    let code = generate_site(
        &crate::opt::optimize(&mono),
        &quote!(::pmexpr::__private),
        false,
        None,
        None,
    );
    syn::parse2::<syn::Expr>(code.clone()).expect("the expansion is a Rust expression");
    code.to_string()
}

#[test]
fn reduce_of_map_is_fused() {
    let code = generated(quote!(reduce(addi, 0, map(|x| x * 2, s))));
    // Through the backend, whose debug instance checks the operator's laws.
    assert!(code.contains("B :: map_reduce ("), "{code}");
    assert!(!code.contains("B :: map ("), "{code}");
    let code = generated(quote!(reduce(addi, 0, map2(|x, y| x * y, s, s))));
    assert!(code.contains("B :: map2_reduce ("), "{code}");
    assert!(!code.contains("B :: map2 ("), "{code}");
}

#[test]
fn sequences_are_passed_by_reference_and_numbers_by_value() {
    let code = generated(quote!(reduce(addi, c, s)));
    assert!(code.contains("c_0 : i64"), "{code}");
    assert!(
        code.contains("s_1 : & :: pmexpr :: __private :: Seq < 'pm , i64 >"),
        "{code}"
    );
}

#[test]
fn numbers_fixed_by_captured_values_are_generic() {
    let code = generated(quote!(map2(|x, y| x + y, a, b)));
    assert!(code.contains(": :: pmexpr :: __private :: Num"), "{code}");
    assert!(
        code.contains(":: pmexpr :: __private :: Num :: add"),
        "{code}"
    );
}

#[test]
fn parallel_keyword_bodies_are_move_closures_over_references() {
    let code = generated(quote!({
        let s2 = map(|x| x + 1, s);
        par_loop(n, |i| tensor_set(t, [i], reduce(addi, i, s2)))
    }));
    // The owned local `s2` is lent to the loop body; the tensor view is copied into it.
    assert!(code.contains("let s2_2 = & s2_2 ; move | __a"), "{code}");
    assert!(code.contains("B :: par_loop"), "{code}");
}

#[test]
fn recursive_functions_become_lifted_items() {
    let code = generated(quote!({
        fn f(x: i64) -> i64 {
            if x == 0 { k } else { f(x - 1) }
        }
        f(3)
    }));
    // `k` is captured: the item takes it as an extra parameter, and calls pass it.
    assert!(
        code.contains(
            "fn f_0 < 'pm , B : :: pmexpr :: __private :: Backend > (x_1 : i64 , k_2 : i64)"
        ),
        "{code}"
    );
    assert!(code.contains("f_0 :: < B > ("), "{code}");
}

#[test]
fn expansions_of_a_corpus_are_rust_expressions() {
    let corpus = [
        quote!({
            let f = |x| muli(c, addi(x, 1));
            reduce(addi, 0, map(f, s))
        }),
        quote!(map(|row| create(length(row), |j| get(row, j) * 2.0), m)),
        quote!({
            let fs = [addi(1), negi];
            map(|f| f(3), fs)
        }),
        quote!(match (x, [1, 2]) {
            (0, s) => length(s),
            (n, _) => n,
        }),
        quote!(seq_loop_acc((0, 1.5), 3, |acc: (i64, f64), i| (
            acc.0 + i,
            acc.1 * 2.0
        ))),
        quote!(flatten([
            [tensor_rank(t)],
            tensor_shape(tensor_slice(t, [0]))
        ])),
    ];
    for tokens in corpus {
        generated(tokens);
    }
}

#[test]
fn foldl_over_create_is_a_counted_loop() {
    let code = generated(quote!(map(
        |k| foldl(|a, c| a + c, 0, create(k, |c| c * 2)),
        s
    )));
    assert!(code.contains("rt :: seq_loop_acc"), "{code}");
    assert!(!code.contains("rt :: create"), "{code}");
    assert!(!code.contains("rt :: foldl"), "{code}");
    // A sequence of sequences is built: debug mode checks that it is regular.
    let code = generated(quote!(map(
        |k| foldl(|a, r| a + length(r), 0, create(k, |c| create(c, |d| d))),
        s
    )));
    assert!(code.contains("rt :: foldl"), "{code}");
}

#[test]
fn a_fold_whose_accumulator_settles_stops_early() {
    // Mandelbrot's escape test: the accumulator, rebuilt from its fields, is returned unchanged.
    let code = generated(quote!(map(
        |p| foldl(
            |st, _i| {
                let (z, n) = st;
                if z > 4.0 { (z, n) } else { (z * z + p, n + 1) }
            },
            (0.0, 0),
            create(m, |i| i * 2)
        ),
        ps
    )));
    assert!(code.contains("rt :: seq_loop_acc_until"), "{code}");
    // The accumulator in the `else` branch; over a sequence; in `seq_loop_acc`.
    let code = generated(quote!(foldl(|a, x| if a < 100 { a + x } else { a }, 0, s)));
    assert!(code.contains("rt :: foldl_until"), "{code}");
    let code = generated(quote!(seq_loop_acc(1.0, n, |a, _i| if a > 8.0 {
        a
    } else {
        a * 1.5
    })));
    assert!(code.contains("rt :: seq_loop_acc_until"), "{code}");
    let plain = [
        // The test reads the element.
        quote!(foldl(|a, x| if a > x { a } else { a + 1 }, 0, s)),
        // A `let` before it reads the element.
        quote!(foldl(
            |a, x| {
                let y = x + 1;
                if a > 3 { a } else { a + y }
            },
            0,
            s
        )),
        // Neither branch is the accumulator.
        quote!(foldl(|a, x| if a > 3 { a + 0 } else { a + x }, 0, s)),
        // The fields in another order.
        quote!(foldl(
            |st, x| {
                let (a, b) = st;
                if a > 3 { (b, a) } else { (a + x, b) }
            },
            (0, 0),
            s
        )),
    ];
    for tokens in plain {
        let code = generated(tokens);
        assert!(!code.contains("_until"), "{code}");
    }
    // Skipped elements could fail (division by zero): every element is computed.
    let code = generated(quote!(foldl(
        |a, _x| if a > 3 { a } else { a + 1 },
        0,
        create(n, |i| 10 / (i - 7))
    )));
    assert!(code.contains("rt :: seq_loop_acc ("), "{code}");
    assert!(!code.contains("_until"), "{code}");
}

#[test]
fn map_over_create_tabulates() {
    let code = generated(quote!(map(|x| x + 1, create(n, |i| i * 2))));
    assert!(code.contains("B :: tabulate"), "{code}");
    assert!(!code.contains("rt :: create"), "{code}");
}

#[test]
fn map_over_map_is_one_map() {
    let code = generated(quote!(map(|x| x * 2, map(|y| y + 1, s))));
    assert_eq!(code.matches("B :: map (").count(), 1, "{code}");
}

#[test]
fn reduce_over_create_tabulates_and_reduces() {
    let code = generated(quote!(reduce(|a, b| a + b, 0, create(n, |i| i * i))));
    assert!(code.contains("tabulate_reduce"), "{code}");
    assert!(!code.contains("rt :: create"), "{code}");
}

#[test]
fn map2_over_maps_is_one_map2() {
    for tokens in [
        quote!(map2(|x, y| x * y, map(|a| a + 1, s), t)),
        quote!(map2(|x, y| x * y, s, map(|b| b - 1, t))),
        quote!(map2(|x, y| x * y, map(|a| a + 1, s), map(|b| b - 1, t))),
    ] {
        let code = generated(tokens);
        assert_eq!(code.matches("B :: map2 (").count(), 1, "{code}");
        assert!(!code.contains("B :: map ("), "{code}");
    }
}

/// A Futhark-class site whose element type is open, with the glue the hook would write: the
/// entry point is picked by the Rust type the open type is at run time (`open_instantiation`),
/// and the Futhark function's open type has the marshaling bounds.
#[test]
fn open_types_pick_the_futhark_entry_at_run_time() {
    let mono = crate::compile_site(quote!(map(|p| p, reverse(s))))
        .unwrap_or_else(|(e, _)| panic!("{}", e[0].text()));
    let host = super::FutharkHost::Glue("/out/glue.rs".into());
    let code = generate_site(
        &crate::opt::optimize(&mono),
        &quote!(::pmexpr::__private),
        false,
        None,
        Some(&host),
    );
    syn::parse2::<syn::Expr>(code.clone()).expect("the expansion is a Rust expression");
    if let Ok(path) = std::env::var("PMEXPR_DUMP_OPEN_FUTHARK") {
        std::fs::write(path, code.to_string()).unwrap();
    }
    let code = code.to_string();
    assert!(
        code.contains(":: pmexpr :: __private :: Value + 'pm + :: pmexpr :: __private :: FutharkArg + :: pmexpr :: __private :: FutharkResult"),
        "{code}"
    );
    assert!(code.contains("open_instantiation :: < N"), "{code}");
    assert!(
        code.contains("\"s\" , < :: pmexpr :: __private :: Seq < 'pm , N"),
        "the message names the captured type: {code}"
    );
    // The captured sequence is a reference already: passed as it is.
    assert!(code.contains("__pm_call . param (\"s\" , s_"), "{code}");
    assert!(!code.contains("open_types_on_cpu"), "{code}");
}

#[test]
fn generated_code_does_not_defeat_the_optimizer() {
    // Mandelbrot's element, read by a sequential loop, is read as it is: no `black_box`.
    let code = generated(quote!(map(
        |p| foldl(
            |z, _i| (z.0 * z.0 - z.1 * z.1 + p.0, 2.0 * z.0 * z.1 + p.1),
            (0.0, 0.0),
            create(m, |i| i)
        ),
        ps
    )));
    assert!(!code.contains("black_box"), "{code}");
}

/// `scan`, `filter` and `scatter` print one call of the runtime each, reading their fused inputs
/// by ranges.
#[test]
fn scan_filter_and_scatter_are_one_call_each() {
    let code = generated(quote!(map(|y| y + 1, scan(addi, 0, map(|x| x * 2, s)))));
    assert!(code.contains("B :: scan_map ("), "{code}");
    assert!(!code.contains("B :: map ("), "{code}");
    let code = generated(quote!(scan(addi, 0, s)));
    assert!(code.contains("B :: scan ("), "{code}");
    let code = generated(quote!(reduce(
        addi,
        0,
        filter(|y| y > 0, map(|x| x - 1, s))
    )));
    assert!(code.contains("B :: read_reduce ("), "{code}");
    assert!(code.contains(". filter (move | __pm_x |"), "{code}");
    let code = generated(quote!(filter(|y| y > 0, s)));
    assert!(code.contains("B :: filter ("), "{code}");
    let code = generated(quote!(scatter(d, create(length(d), |i| i), d)));
    assert!(code.contains("B :: scatter ("), "{code}");
    assert!(code.contains("(__pm_lo .. __pm_hi) . map"), "{code}");
}

#[test]
fn reads_of_positions_get_a_second_reader() {
    // Every consumer of positions whose element function reads a sequence at the position plus
    // a constant: the runtime's `Peeled` with the reader over chunk slices.
    for (tokens, call) in [
        (
            quote!(create(n, |i| s[i + 1] - s[i])),
            "B :: tabulate_peeled",
        ),
        (
            quote!(map(|x| x * 2, create(n, |i| s[i - 1]))),
            "B :: tabulate_peeled",
        ),
        (
            quote!(reduce(|a, b| a + b, 0, map(|k| s[k] * 2, create(n, |k| k)))),
            "B :: read_reduce (",
        ),
        (
            quote!(filter(|d| d > 0, create(n, |i| s[i + 1] - s[i]))),
            "B :: filter",
        ),
        (
            quote!(foldl(|a, d| a + d, 0, create(n, |i| s[i + 1] - s[i]))),
            ". fold (0",
        ),
    ] {
        let code = generated(tokens);
        assert!(code.contains(call), "{code}");
        assert!(code.contains("Peeled :: new"), "{code}");
    }
    // Reads at a computed index: the element function alone.
    let code = generated(quote!(create(n, |i| s[2 * i])));
    assert!(code.contains("B :: tabulate ("), "{code}");
    assert!(!code.contains("Peeled"), "{code}");
}

#[test]
fn counted_loops_peel_reads_one_check_does_not_cover() {
    for (tokens, call) in [
        (
            quote!(par_loop(n, |k| tensor_set(y, [k], s[k - 1]))),
            "B :: par_loop_peeled",
        ),
        (
            quote!(seq_loop(n, |k| tensor_set(y, [0], s[k + w]))),
            "seq_loop_peeled",
        ),
        (
            quote!(seq_loop_acc(0, n, |acc, k| acc + s[k - 1])),
            "seq_loop_acc_peeled",
        ),
        (
            quote!(foldl(|acc, k| acc + s[k] + length(s), 0, create(n, |k| k))),
            "seq_loop_acc_peeled",
        ),
    ] {
        let code = generated(tokens);
        assert!(code.contains(call), "{code}");
    }
    // A plain loop peels them in each chunk.
    let code = generated(quote!(par_loop(n, |k| tensor_set(y, [k], s[k - 1]))));
    assert!(code.contains("plain_loop"), "{code}");
    assert!(code.contains("peel_parts"), "{code}");
    // Reads one check proves in range keep that way.
    let code = generated(quote!(seq_loop_acc(0, n, |acc, k| acc + s[k + 1])));
    assert!(!code.contains("peeled"), "{code}");
}

#[test]
fn a_loop_reads_and_writes_its_own_sequence_through_a_view() {
    // Only read and written in place: checked unshared once, then a slice.
    let code = generated(quote!({
        let mut a = vec![0i64; 4];
        for i in 0..n {
            a[i % 4] += a[(i + 1) % 4] + 1;
        }
        a
    }));
    assert!(code.contains("rt :: View :: of (& mut"), "{code}");
    assert!(code.contains("rt :: set_view ("), "{code}");
    assert!(!code.contains("rt :: set_mut ("), "{code}");
    // Handed to a function as well: the plain sequence, checked per write.
    let code = generated(quote!({
        let mut a = vec![0i64; 4];
        for i in 0..n {
            a[i % 4] += 1;
            let t = reduce(|x: i64, y: i64| x + y, 0, a);
            a[0] = t;
        }
        a
    }));
    assert!(!code.contains("View"), "{code}");
    assert!(code.contains("rt :: set_mut ("), "{code}");
}

#[test]
fn a_loop_inside_a_loop_is_handed_the_outer_sequence() {
    let code = generated(quote!({
        let mut a = vec![0i64; 8];
        for b in 0..n {
            for k in 0..8 {
                a[k] += b;
            }
        }
        a
    }));
    // The inner loop's item owns its parameters, and the outer one passes `a` by value.
    assert!(
        !code.contains(": & :: pmexpr :: __private :: Seq"),
        "{code}"
    );
    assert!(!code.contains(". clone ()"), "{code}");
}

#[test]
fn a_conditional_write_in_a_loop_is_a_statement() {
    let code = generated(quote!({
        let mut a = vec![0i64; 4];
        for i in 0..n {
            if i % 3 == 0 {
                a[i % 4] += 1;
            } else {
                a.swap(0, 1);
            }
            if i % 5 == 0 {
                a[0] = a[1];
            }
        }
        a
    }));
    // Through the loop's view, the `if` a statement: the sequence is never moved into it.
    assert!(code.contains("rt :: View :: of (& mut"), "{code}");
    assert!(code.contains("let () = if"), "{code}");
    assert!(!code.contains("rt :: set ("), "{code}");
}

#[test]
fn open_types_outlive_the_captured_data() {
    // A literal of values only moved is a `Seq<'pm, N0>` of their type, which must outlive `'pm`
    // (the other bounds imply `'static`; an open type may be a borrowed sequence).
    let code = generated(quote!({
        let q = vec![c, c];
        q[0]
    }));
    assert!(code.contains("Seq < 'pm , N0 >"), "{code}");
    assert!(
        code.contains("N0 : :: pmexpr :: __private :: Value + 'pm >"),
        "{code}"
    );
}

/// A float type written in the site (an annotation, a suffix, a cast) is the one its math
/// functions compute in: Rust's `f32::sqrt` of an `f32`, not `f64`'s; `floorfi` of an `f32` is
/// the runtime's generic one.
#[test]
fn math_functions_of_a_written_f32_are_f32_s() {
    for site in [
        quote!(map(
            |x: f32| sqrt(x) + x.exp() + x.ln() + x.sin() + cos(x) + x.powf(2.0),
            v
        )),
        quote!(map(
            |x| (x * 1f32).sqrt() + exp(x) + log(x) + x.sin() + x.cos() + pow(x, 2.0),
            v
        )),
        quote!(map(
            |x| {
                let y = x as f32;
                y.sqrt() + y.exp() + y.ln() + sin(y) + cos(y) + y.powf(y)
            },
            v
        )),
    ] {
        let code = generated(site);
        for f in ["sqrt", "exp", "ln", "sin", "cos", "powf"] {
            assert!(code.contains(&format!("f32 :: {f} (")), "{f}: {code}");
        }
        assert!(!code.contains("f64 ::"), "{code}");
    }
    let code = generated(quote!(map(|x: f32| floorfi(x), v)));
    assert!(code.contains("Float :: floorfi ("), "{code}");
    let code = generated(quote!(map(|x: f64| floorfi(x) + floorfi(sqrt(x)), v)));
    assert!(code.contains("rt :: floorfi ("), "{code}");
    assert!(code.contains("f64 :: sqrt ("), "{code}");
}

/// An unsuffixed float literal at `f32` is its digits read as an `f32`, rounded once: this one
/// is just below the middle of two `f32`s, which its nearest `f64` is exactly (and would round
/// to the even one, 1.0000002).
#[test]
fn a_float_literal_at_f32_is_rounded_once() {
    let code = generated(quote!(map(|x: f32| x * 1.0000001788139343, v)));
    assert!(code.contains("1.0000001f32"), "{code}");
    let code = generated(quote!(map(|x: f64| x * 1.0000001788139343, v)));
    assert!(code.contains("1.0000001788139343f64"), "{code}");
    // Where the captured values fix the type, both readings, for the runtime to pick from.
    let code = generated(quote!(map(|x| x * 1.0000001788139343, v)));
    assert!(
        code.contains("from_lit (1.0000001788139343f64 , 1.0000001f32)"),
        "{code}"
    );
}
