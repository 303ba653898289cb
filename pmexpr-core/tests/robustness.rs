//! Inputs that once made the macros panic, abort, hang or overflow the stack: each is
//! now expanded or refused with a clear error, quickly, on rustc's 8 MiB stack.

mod common;

use std::fmt::Write;
use std::time::{Duration, Instant};

use common::{Outcome, accelerate, derive, expansion_depth, hook, pmexpr_fn, run_limited};

/// Runs `f` on rustc's stack; fails on a panic or when it takes longer than `secs`.
fn within<R: Send + 'static>(secs: u64, what: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
    let start = Instant::now();
    match run_limited(Duration::from_secs(secs), f) {
        None => panic!("{what}: still running after {secs} s"),
        Some(Err(panic)) => panic!("{what}: panicked: {panic}"),
        Some(Ok(r)) => {
            eprintln!("{what}: {:?}", start.elapsed());
            r
        }
    }
}

fn refused(o: &Outcome) -> &str {
    match o {
        Outcome::Refused(m) => m,
        other => panic!("expected an error, got {other:?}"),
    }
}

fn repeat(n: usize, open: &str, middle: &str, close: &str) -> String {
    let mut s = String::new();
    for _ in 0..n {
        s.push_str(open);
    }
    s.push_str(middle);
    for _ in 0..n {
        s.push_str(close);
    }
    s
}

#[test]
fn a_float_literal_beyond_f64_is_an_error() {
    let o = within(10, "1e400", || accelerate("1e400 + x"));
    assert_eq!(refused(&o), "the literal `1e400` does not fit in an f64");
    let o = within(10, "-1e400", || accelerate("-1e400"));
    assert!(refused(&o).contains("does not fit in an f64"));
}

#[test]
fn raw_identifiers_are_names() {
    // Captured, bound, a parameter: `r#x` is `x`, as in Rust.
    assert_eq!(
        within(10, "r#x", || accelerate(
            "{ let r#x: i64 = r#x; map(|y| y + x, [1, 2]) }"
        )),
        Outcome::Expanded
    );
    assert_eq!(
        within(10, "let r#x", || accelerate(
            "{ let r#x = 1; map(|y| addi(x, r#x), [1]) }"
        )),
        Outcome::Expanded
    );
    assert_eq!(
        within(10, "r#match", || accelerate(
            "map(|r#match| r#match + 1, [1, 2])"
        )),
        Outcome::Expanded
    );
    assert_eq!(
        within(10, "#[pmexpr] r#x", || pmexpr_fn(
            "fn f(r#x: i64) -> i64 { r#x + 1 }"
        )),
        Outcome::Expanded
    );
    // The error expansion names a captured raw identifier too.
    let o = within(10, "error with r#x", || accelerate("addi(r#x, 1e400)"));
    assert!(refused(&o).contains("f64"));
    let o = within(10, "hook r#x", || {
        hook(
            "map(|y| f(y), [1, 2])",
            Some("fn f(r#x: i64) -> i64 { r#x }"),
        )
    });
    assert_eq!(o, Outcome::Expanded);
}

#[test]
fn raw_identifiers_in_path_constants_are_names() {
    // `i64::r#MAX` is `i64::MAX`: the generated path is written without `r#` (which an
    // identifier that is not a keyword cannot carry), in the expansion and in the error one.
    for src in [
        "backend = cpu, i64::r#MAX",
        "backend = cpu, std::f64::consts::r#PI",
        "backend = cpu, r#f32::MAX",
        "backend = cpu, ::r#std::f64::consts::PI + r#x",
    ] {
        let o = within(10, src, move || accelerate(src));
        assert_eq!(o, Outcome::Expanded, "{src}");
    }
    let o = within(10, "error with i64::r#MAX", || {
        accelerate("backend = cpu, addi(i64::r#MAX, 1e400)")
    });
    assert!(refused(&o).contains("does not fit in an f64"), "{o:?}");
    let o = within(10, "hook i64::r#MAX", || {
        hook(
            "backend = cpu, i64::r#MAX + f(1)",
            Some("fn f(x: i64) -> i64 { x }"),
        )
    });
    assert_eq!(o, Outcome::Expanded);
}

#[test]
fn a_pmexpr_fn_that_reads_a_field_of_a_non_parameter_is_an_error() {
    // `c` is not a parameter: the function cannot stand alone (reported at the site's use).
    let item = "fn h() -> i64 { c.n }";
    for site in ["backend = cpu, h()", "map(|x| x + h(), [1, 2])"] {
        let o = within(10, site, move || hook(site, Some(item)));
        assert!(
            refused(&o).contains("the `#[pmexpr]` function `h` uses `c.n`, which is neither"),
            "{o:?}"
        );
    }
}

#[test]
fn a_huge_tuple_index_is_an_error() {
    // A projection `x.n` closes the tuple's type with `n + 1` fields: the bound is checked first.
    for src in ["x.4294967295", "x.10000000", "x.12"] {
        let o = within(10, src, move || accelerate(src));
        assert!(
            refused(&o).contains("PMExpr tuples have at most 12 fields"),
            "{o:?}"
        );
    }
    let o = within(10, "x.11", || accelerate("addi(x.11, 1)"));
    assert!(!refused(&o).contains("at most 12 fields"), "{o:?}");
}

#[test]
fn tuples_have_at_most_the_limit_the_runtime_shares() {
    use pmexpr_core::types::MAX_TUPLE;
    // `map(|x| (x, 2, 3, …, n), [1])`.
    let tuple = |n: usize| {
        let fields: Vec<String> = (2..=n).map(|k| k.to_string()).collect();
        format!("map(|x| (x, {}), [1])", fields.join(", "))
    };
    let at = tuple(MAX_TUPLE);
    assert_eq!(
        within(10, "a tuple at the limit", move || accelerate(&at)),
        Outcome::Expanded
    );
    let past = tuple(MAX_TUPLE + 1);
    let o = within(10, "a tuple past the limit", move || accelerate(&past));
    let expected = format!(
        "tuples inside `accelerate!` have at most {MAX_TUPLE} fields, this one has {}",
        MAX_TUPLE + 1
    );
    assert!(refused(&o).contains(&expected), "{o:?}");
}

#[test]
fn applying_identities_to_identities_is_fast() {
    // Each argument doubled the inferred type's tree once.
    let args = vec!["|y| y"; 40].join(", ");
    let src = format!("(|y| y)({args})");
    let o = within(20, "(|y| y)(|y| y × 40)", move || accelerate(&src));
    assert!(
        refused(&o).starts_with(
            "the type of this expression is too large: written out, it has more than 10000 parts"
        ),
        "{o:?}"
    );
    let args = ["|y| y"; 8].join(", ");
    let src = format!("map(|z| z, (|y| y)({args}, [1]))");
    assert_eq!(
        within(20, "(|y| y)(|y| y × 8)", move || accelerate(&src)),
        Outcome::Expanded
    );
}

#[test]
fn types_that_double_are_refused_before_they_are_written_out() {
    // Each took from seconds to minutes (and gigabytes) where a type shared twice was copied or
    // walked twice per level; now inference shares it, and the size is measured first.
    const TOO_LARGE: &str = "is too large: written out, it has more than 10000 parts";
    let pairs = |k: usize| {
        let mut s = String::from("{ let p0 = 1;");
        for i in 1..=k {
            let _ = write!(s, " let p{i} = (p{}, p{});", i - 1, i - 1);
        }
        let _ = write!(s, " map(|x| (x, p{k}), [1]) }}");
        s
    };
    let calls = |k: usize| {
        format!(
            "backend = cpu, {{ fn d(y: _) -> _ {{ (y, y) }} map(|x| {}x{}, [1]) }}",
            "d(".repeat(k),
            ")".repeat(k)
        )
    };
    let closures = |k: usize| {
        let mut s = String::from("{ let g0 = |y| (y, y);");
        for i in 1..=k {
            let _ = write!(s, " let g{i} = |y| g{}(g{}(y));", i - 1, i - 1);
        }
        let _ = write!(s, " map(|x| g{k}(x), [1]) }}");
        s
    };
    for (what, src) in [
        ("pairs × 20", pairs(20)),
        ("pairs × 60", pairs(60)),
        ("calls × 26", calls(26)),
        ("calls × 200", calls(200)),
        ("closures × 5", closures(5)),
        ("closures × 12", closures(12)),
    ] {
        let o = within(5, what, move || accelerate(&src));
        assert!(refused(&o).contains(TOO_LARGE), "{what}: {o:?}");
    }
    // Records of 8 fields of the record below: 8^k parts, measured before expanding.
    for k in [6, 12] {
        let mut items = vec!["struct R0 { a: i64 }".to_string()];
        for i in 1..=k {
            let fields: Vec<String> = (0..8).map(|j| format!("f{j}: R{}", i - 1)).collect();
            items.push(format!("struct R{i} {{ {} }}", fields.join(", ")));
        }
        let site = format!("{{ let v: Vec<R{k}> = v; map(|r| r.f0, v) }}");
        let o = within(5, "nested records", move || {
            let items: Vec<&str> = items.iter().map(String::as_str).collect();
            common::hook_items(&site, &items)
        });
        assert!(
            refused(&o).contains(&format!("the type of the record `R{k}` {TOO_LARGE}")),
            "{o:?}"
        );
    }
    // Each closure returns the one before: its type is one level deeper each time, refused at
    // the first past 32, after which the chain costs nothing more.
    let mut curried = String::from("{ let s: Vec<i64> = s; let c0 = |u| u;");
    for i in 1..3000 {
        let _ = write!(curried, " let c{i} = |u| c{};", i - 1);
    }
    curried.push_str(" map(|x| c0(x), s) }");
    let o = within(10, "3,000 curried closures", move || accelerate(&curried));
    assert!(
        refused(&o).contains("nests more than 32 levels deep"),
        "{o:?}"
    );
}

#[test]
fn a_long_sequence_literal_is_fast() {
    let elems = vec!["1"; 100_000].join(", ");
    let src = format!("reduce(addi, 0, [{elems}])");
    assert_eq!(
        within(60, "[1; 100000 written out]", move || accelerate(&src)),
        Outcome::Expanded
    );
}

#[test]
fn deep_nesting_is_a_clear_error() {
    let cases = [
        ("parentheses", repeat(3000, "(", "x", ")")),
        ("maps", repeat(1500, "map(|x| x, ", "s", ")")),
        ("closures", format!("{}0", "|x| ".repeat(2000))),
        ("blocks", repeat(2500, "{ ", "1", " }")),
        ("arrays", repeat(3000, "[", "1", "]")),
        ("sums", format!("1{}", " + 1".repeat(4000))),
        ("negations", format!("{}x", "-".repeat(4000))),
        ("if-else", repeat(2000, "if b { 1 } else { ", "0", " }")),
        (
            "types",
            format!("|v: {}| 0", repeat(2000, "Vec<", "i64", ">")),
        ),
        (
            "tuple patterns",
            format!("|{}| 0", repeat(2000, "(", "a", ",)")),
        ),
    ];
    for (what, src) in cases {
        let o = within(30, what, move || accelerate(&src));
        assert!(
            refused(&o).contains("levels deep, more than `accelerate!` accepts"),
            "{what}: {o:?}"
        );
    }
    // As deep as allowed is fine.
    let ok = format!(
        "{{ let s: Vec<i64> = s; {} }}",
        repeat(120, "map(|x| x, ", "s", ")")
    );
    assert_eq!(
        within(30, "120 maps", move || accelerate(&ok)),
        Outcome::Expanded
    );
    let deep_fn = format!("fn f(x: i64) -> i64 {{ {} }}", repeat(3000, "(", "x", ")"));
    let o = within(30, "#[pmexpr] deep", move || pmexpr_fn(&deep_fn));
    assert!(refused(&o).contains("levels deep"), "{o:?}");
}

#[test]
fn nesting_past_the_limit_is_refused_before_syn_parses_it() {
    // Each is refused by the measure of the tokens, before `syn` recurses over them (20,000
    // levels overflowed rustc's stack at opt-level 0), and quickly.
    let n = 20_000;
    let cases = [
        ("parentheses", repeat(n, "(", "x", ")")),
        ("arrays", repeat(n, "[", "1", "]")),
        ("blocks", repeat(n, "{ ", "1", " }")),
        ("tuples", repeat(n, "(", "1", ",)")),
        ("references", format!("{}x", "&".repeat(n))),
        ("returns", format!("{}x", "return ".repeat(n))),
        (
            "Vec types",
            format!("|v: {}| 0", repeat(n, "Vec<", "i64", ">")),
        ),
        (
            "tuple types",
            format!("|v: {}| 0", repeat(n, "(", "i64", ",)")),
        ),
        ("fn types", format!("|v: {}i64| 0", "fn() -> ".repeat(n))),
        ("closures", format!("{}0", "|x| ".repeat(n))),
        (
            "else if",
            format!("{}{{ 0 }}", "if b { 1 } else ".repeat(n)),
        ),
        (
            "number pattern in parentheses",
            format!(
                "map(|x| match x {{ {} => 1, _ => 0 }}, s)",
                repeat(n, "(", "1", ")")
            ),
        ),
        (
            "nested fn items",
            format!("{{ {} 0 }}", repeat(n, "fn f() -> i64 { ", "1", " }")),
        ),
    ];
    for (what, src) in cases {
        let hook_src = src.clone();
        let o = within(10, what, move || accelerate(&src));
        assert!(
            refused(&o).contains("levels deep, more than `accelerate!` accepts"),
            "{what}: {o:?}"
        );
        let o = within(10, what, move || hook(&hook_src, None));
        assert!(
            refused(&o).contains("levels deep, more than `accelerate!` accepts"),
            "{what} (hook): {o:?}"
        );
    }
    let deep_fn = format!("fn f(x: i64) -> i64 {{ {} }}", repeat(n, "[", "x", "]"));
    let o = within(10, "#[pmexpr] deep", move || pmexpr_fn(&deep_fn));
    assert!(refused(&o).contains("levels deep"), "{o:?}");
    let deep_struct = format!("struct P {{ x: {} }}", repeat(n, "Vec<", "i64", ">"));
    let o = within(10, "derive deep", move || derive(&deep_struct));
    assert!(refused(&o).contains("levels deep"), "{o:?}");
    // A `#[pmexpr]` function of the crate that nests too deeply cannot be used (its own
    // expansion says why).
    let item = format!("fn g(x: i64) -> i64 {{ {} }}", repeat(n, "(", "x", ")"));
    let o = within(10, "hook: deep #[pmexpr] fn", move || {
        hook("backend = cpu, g(1)", Some(&item))
    });
    assert!(refused(&o).contains("levels deep"), "{o:?}");
}

#[test]
fn invisible_groups_count_as_nesting() {
    // A `macro_rules!` that forwards an `$e:expr` wraps it in an invisible group: 300 of them
    // took seconds in `syn`; they are nesting like any other group.
    use common::accelerate_tokens;
    use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
    let wrapped = |k: usize| {
        let mut e: TokenStream = "addi(x, 1e400)".parse().unwrap();
        for _ in 0..k {
            e = TokenTree::Group(Group::new(Delimiter::None, e)).into();
        }
        e
    };
    let o = within(10, "200 invisible groups", move || {
        accelerate_tokens(wrapped(200))
    });
    assert!(refused(&o).contains("does not fit in an f64"), "{o:?}");
    let o = within(10, "300 invisible groups", move || {
        accelerate_tokens(wrapped(300))
    });
    assert!(refused(&o).contains("levels deep"), "{o:?}");
}

#[test]
fn an_or_pattern_is_flat() {
    // 10,000 alternatives: a balanced tree of tests, not a chain 10,000 deep.
    let alts: Vec<String> = (0..10_000).map(|i| i.to_string()).collect();
    let src = format!(
        "{{ let s: Vec<i64> = s; map(|x| match x {{ {} => 1, _ => 0 }}, s) }}",
        alts.join(" | ")
    );
    let hook_src = src.clone();
    assert_eq!(
        within(60, "10,000 alternatives", move || accelerate(&src)),
        Outcome::Expanded
    );
    assert_eq!(
        within(60, "10,000 alternatives, hook", move || hook(
            &hook_src, None
        )),
        Outcome::Expanded
    );
}

#[test]
fn long_let_chains_and_many_fns_are_not_nesting() {
    let mut lets = String::from("{ let x0 = 1;");
    for i in 1..10_000 {
        let _ = write!(lets, " let x{i} = x{} + 1;", i - 1);
    }
    lets.push_str(" map(|y| y + x9999, [1, 2]) }");
    let l2 = lets.clone();
    assert_eq!(
        within(120, "10,000 lets", move || accelerate(&lets)),
        Outcome::Expanded
    );
    assert_eq!(
        within(120, "10,000 lets, hook", move || hook(&l2, None)),
        Outcome::Expanded
    );
    let mut fns = String::from("{");
    for i in 0..3000 {
        let _ = write!(fns, " fn f{i}(x: i64) -> i64 {{ x + {i} }}");
    }
    fns.push_str(" map(|y| f2999(y), [1, 2]) }");
    assert_eq!(
        within(120, "3,000 fns", move || accelerate(&fns)),
        Outcome::Expanded
    );
    let mut arms = String::from("backend = cpu, map(|x| match x {");
    for i in 0..5000 {
        let _ = write!(arms, " {i} => {i},");
    }
    arms.push_str(" _ => 0 }, [1, 2])");
    let a2 = arms.clone();
    assert_eq!(
        within(120, "5,000 arms", move || accelerate(&arms)),
        Outcome::Expanded
    );
    // The expansion is as flat as the `match` (nested, rustc's parser crashes at about 700).
    flat("5,000 arms", a2);
    // Ranges, alternatives and `if let`s of other variables are tests of the same chain.
    let mut tests = String::from("backend = cpu, map(|x| { let y = x; match x {");
    for i in 0..2000 {
        let _ = write!(
            tests,
            " {} ..= {} | {} => {i},",
            3 * i,
            3 * i + 1,
            3 * i + 2
        );
    }
    tests.push_str(
        " _ => if x > 1 { 1 } else if y > 2 { 2 } else if y > 3 { 3 } else { 4 } } }, [1, 2])",
    );
    flat("2,000 arms of tests", tests);
    let mut body = String::from("fn f(a: i64) -> i64 { let x0 = a;");
    for i in 1..5000 {
        let _ = write!(body, " let x{i} = x{} * 2;", i - 1);
    }
    body.push_str(" x4999 }");
    assert_eq!(
        within(120, "#[pmexpr] 5,000 lets", move || pmexpr_fn(&body)),
        Outcome::Expanded
    );
}

#[test]
fn nested_vec_types_are_fast_and_bounded() {
    // The Rust type is printed in one stream per use, not re-copied per level.
    let src = format!(
        "{{ let v = {}; map(|w| length(w), v) }}",
        repeat(31, "[", "1", "]")
    );
    assert_eq!(
        within(30, "31 nested arrays", move || accelerate(&src)),
        Outcome::Expanded
    );
    // Deeper, rustc's trait solver would give up on the generated code: our error comes first.
    let src = format!(
        "{{ let v = {}; map(|w| length(w), v) }}",
        repeat(120, "[", "1", "]")
    );
    let o = within(30, "120 nested arrays", move || accelerate(&src));
    assert!(
        refused(&o).contains("nests more than 32 levels deep"),
        "{o:?}"
    );
}

#[test]
fn the_derive_never_panics() {
    let o = within(10, "derive r#", || {
        derive("struct P { r#type: i64, x: f64 }")
    });
    assert_eq!(o, Outcome::Expanded);
    let o = within(10, "derive enum", || derive("enum E { A }"));
    refused(&o);
}

/// Imperative code is lowered in time and stack linear in its size: loops and `if`s
/// that assign nested as deep as the parser allows, long runs of assignments, and long runs of
/// `if`s whose arms both reach what follows while one may `continue` (what follows is written
/// once, not once per path).
#[test]
fn imperative_code_is_linear_and_bounded() {
    let n = 240;
    let mut loops = String::from("backend = cpu, { let mut s = 0;");
    for i in 0..n {
        let _ = write!(loops, " for i{i} in 0..1 {{");
    }
    loops.push_str(" s += 1;");
    loops.push_str(&" }".repeat(n));
    loops.push_str(" s }");
    assert_eq!(
        within(120, "240 nested for loops", move || accelerate(&loops)),
        Outcome::Expanded
    );
    let ifs = format!(
        "backend = cpu, {{ let mut x = 0; {} x }}",
        repeat(n, "if b { ", "x += 1;", " }")
    );
    assert_eq!(
        within(120, "240 nested ifs that assign", move || accelerate(&ifs)),
        Outcome::Expanded
    );
    let mut runs = String::from("backend = cpu, { let mut x = 0;");
    for i in 0..5000 {
        let _ = write!(runs, " x += {i};");
    }
    runs.push_str(" x }");
    let r2 = runs.clone();
    assert_eq!(
        within(120, "5,000 assignments", move || accelerate(&runs)),
        Outcome::Expanded
    );
    assert_eq!(
        within(120, "5,000 assignments, hook", move || hook(&r2, None)),
        Outcome::Expanded
    );
    let mut skips = String::from(
        "backend = cpu, map(|n: i64| { let mut x = 0; let mut i = 0; while i < n { i += 1;",
    );
    for k in 0..1000 {
        let _ = write!(
            skips,
            " if i % 7 == {} {{ if i > {k} {{ continue; }} x += 1; }}",
            k % 7
        );
    }
    skips.push_str(" x += 2; } x }, [1, 2])");
    assert_eq!(
        within(120, "1,000 ifs that may continue", move || accelerate(
            &skips
        )),
        Outcome::Expanded
    );
    let mut stops = String::from("backend = cpu, map(|n: i64| { let mut x = 0; for i in 0..n {");
    for k in 0..1000 {
        let _ = write!(
            stops,
            " match i % 5 {{ 0 => {{ if x > {k} {{ break; }} x += 1; }} 1 => {{ x += 2; }} _ => {{}} }}"
        );
    }
    stops.push_str(" } x }, [1, 2])");
    assert_eq!(
        within(120, "1,000 matches that may break", move || accelerate(
            &stops
        )),
        Outcome::Expanded
    );
}

/// Asserts that the expansion of `body` nests less than 64 groups deep.
fn flat(what: &'static str, body: String) {
    let depth = within(120, what, move || expansion_depth(&body));
    assert!(depth < 64, "{what}: the expansion nests {depth} deep");
}

#[test]
fn long_loop_bodies_are_flat() {
    let mut body =
        String::from("backend = cpu, { let mut s = 0i64; let mut t = 1i64; for i in 0..n {");
    for k in 0..3000 {
        let _ = match k % 3 {
            0 => write!(body, " s += i;"),
            1 => write!(body, " t = t ^ s;"),
            _ => write!(body, " if s > {k} {{ s -= 1; }}"),
        };
    }
    body.push_str(" } s + t }");
    flat("a loop body of 3,000 statements", body);
    for (jump, what) in [
        ("continue", "a loop body of 1,000 `continue`s"),
        ("break", "a loop body of 1,000 `break`s"),
    ] {
        let mut body = String::from("backend = cpu, { let mut s = 0i64; for i in 0..n {");
        for k in 0..1000 {
            let _ = write!(body, " s += i; if s > {k} {{ {jump}; }}");
        }
        body.push_str(" } s }");
        flat(what, body);
    }
}

#[test]
fn long_chains_are_refused_in_linear_time() {
    // Flat tokens that `syn` parses into a left-nested tree: no token nesting to measure, so each
    // is parsed down to the nesting limit. A node's span once printed its whole subtree (2 s for
    // 10,000 `.abs()` at opt-level 0, quadratic in the chain); 30,000 now take a fraction of the
    // limit here.
    let n = 30_000;
    let cases = [
        (
            "fields",
            format!("backend = cpu, {{ let x = (1, 2); x{} }}", ".0".repeat(n)),
        ),
        (
            "methods",
            format!("backend = cpu, 1i64{}", ".abs()".repeat(n)),
        ),
        (
            "methods with arguments",
            format!("backend = cpu, 1i64{}", ".min(2)".repeat(n)),
        ),
        (
            "casts",
            format!("backend = cpu, 1i64{}", " as i64".repeat(n)),
        ),
        (
            "indices",
            format!("backend = cpu, {{ let s = [1]; s{} }}", "[0]".repeat(n)),
        ),
        (
            "negations",
            format!("backend = cpu, {}1i64", "- ".repeat(n)),
        ),
        (
            "operators",
            format!("backend = cpu, 1i64{}", " + 1".repeat(n)),
        ),
    ];
    for (what, src) in cases {
        let hook_src = src.clone();
        let o = within(10, what, move || accelerate(&src));
        assert!(refused(&o).contains("levels deep"), "{what}: {o:?}");
        let o = within(10, what, move || hook(&hook_src, None));
        assert!(refused(&o).contains("levels deep"), "{what} (hook): {o:?}");
    }
}
