//! Tests of the Futhark generator: golden files (one per program, under
//! `tests/golden/futhark/`; `PMEXPR_BLESS=1` rewrites them) and unit tests of the pieces.

use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::quote;

use super::code::{comment, lit, stem};
use super::*;
use crate::ast::Lit;
use crate::merge::{CrateProgram, merge};
use crate::pipeline::compile_for_test;
use crate::site::SiteProgram;

/// The merged program of `sites` (name, tokens), with `#[pmexpr]` functions `items`.
fn program(sites: &[(&str, TokenStream)], items: &[(&str, &str)]) -> CrateProgram {
    let compiled: Vec<(String, SiteProgram)> = sites
        .iter()
        .map(|(name, tokens)| {
            let site = compile_for_test(tokens.clone(), items)
                .unwrap_or_else(|e| panic!("{name} does not compile: {e:?}"));
            (name.to_string(), site.program.expect("not backend = cpu"))
        })
        .collect();
    let refs: Vec<(String, &SiteProgram)> = compiled.iter().map(|(n, p)| (n.clone(), p)).collect();
    merge(&refs)
}

/// Compares `source` with the golden file `name.fut`, or rewrites it under `PMEXPR_BLESS=1`.
fn golden(name: &str, source: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/futhark")
        .join(format!("{name}.fut"));
    if std::env::var("PMEXPR_BLESS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("create the folder");
        std::fs::write(&path, source).expect("write the golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {} ({e}): run `PMEXPR_BLESS=1 cargo test -p pmexpr-core` to create it",
            path.display()
        )
    });
    if source != expected {
        let line = source
            .lines()
            .zip(expected.lines())
            .position(|(a, b)| a != b)
            .map_or_else(
                || source.lines().count().min(expected.lines().count()) + 1,
                |i| i + 1,
            );
        panic!(
            "{} differs from the generated code at line {line} \
             (PMEXPR_BLESS=1 rewrites it):\n--- generated ---\n{source}",
            path.display()
        );
    }
}

/// The whole crate program as [`generate_crate`] writes it, checked against its golden file;
/// every request must be generated.
fn golden_crate(name: &str, p: &CrateProgram) -> CrateFuthark {
    let f = generate_crate(p).expect("Futhark-class sites");
    assert!(f.skipped.is_empty(), "{:?}", f.skipped);
    golden(name, &f.program.source);
    f
}

// ----- the paper's listings -----

/// Listing 1 of the paper (examples/listing1.rs): the first site is CUDA-class and is not part
/// of the Futhark program; the second (`compute_sum`) is.
#[test]
fn listing1() {
    let p = program(
        &[
            (
                "examples/listing1.rs:45:5",
                quote!({
                    let axpy = |c, i| {
                        let x = tensor_get(t1, [i]);
                        let y = tensor_get(t2, [i]);
                        tensor_set(t1, [i], addi(x, muli(c, y)))
                    };
                    par_loop(n, |i| axpy(2, i))
                }),
            ),
            (
                "examples/listing1.rs:58:20",
                quote!({
                    let compute_sum = |s, n| {
                        if geqi(n, 100) {
                            reduce(addi, 0, s)
                        } else {
                            foldl(addi, 0, s)
                        }
                    };
                    compute_sum(t3, n)
                }),
            ),
        ],
        &[],
    );
    let f = golden_crate("listing1", &p);
    assert_eq!(f.program.entries.len(), 1);
    let e = &f.program.entries[0];
    assert_eq!(e.name, "site_examples_listing1_rs_58_20");
    let params: Vec<(&str, String)> = e
        .params
        .iter()
        .map(|p| (p.name.as_str(), p.ty.to_string()))
        .collect();
    assert_eq!(params, [("t3", "[]i64".into()), ("n", "i64".into())]);
    assert_eq!(e.result.ty.to_string(), "i64");
}

/// Listing 2 of the paper: `f` lifted over `c`, `g` a `#[pmexpr]` function.
#[test]
fn listing2() {
    let p = program(
        &[(
            "src/main.rs:9:15",
            quote!({
                let f = |x| muli(c, g(x));
                let s2 = map(f, s);
                reduce(addi, 0, s2)
            }),
        )],
        &[("g", "fn g(x: i64) -> i64 { addi(x, 1) }")],
    );
    golden_crate("listing2", &p);
}

// ----- the corpus: every keyword and intrinsic of the Futhark class -----

#[test]
fn keywords() {
    let p = program(
        &[
            ("src/keywords.rs:1:1", quote!(map(|x| muli(x, k), s))),
            (
                "src/keywords.rs:2:1",
                quote!(map2(|a, b| addi(a, b), xs, ys)),
            ),
            ("src/keywords.rs:3:1", quote!(map2(addi, xs, xs))),
            ("src/keywords.rs:4:1", quote!(reduce(addf, 0.0, fs))),
            (
                "src/keywords.rs:5:1",
                quote!(reduce(|a, b| map2(addi, a, b), create(m, |_| 0), rows)),
            ),
            (
                "src/keywords.rs:6:1",
                quote!({
                    let rows: Vec<Vec<f64>> = rows;
                    flatten(map(|r| reverse(r), rows))
                }),
            ),
            (
                "src/keywords.rs:7:1",
                quote!({
                    let rows: Vec<Vec<bool>> = rows;
                    map(length, rows)
                }),
            ),
        ],
        &[],
    );
    golden_crate("keywords", &p);
}

#[test]
fn create_forms() {
    let p = program(
        &[
            ("src/create.rs:1:1", quote!(map(|x| x, create(n, |i| i)))),
            (
                "src/create.rs:2:1",
                quote!(map2(addi, s, create(length(s), |i| i))),
            ),
            (
                "src/create.rs:3:1",
                quote!(map(|x| x, create(n, |_| muli(k, 2)))),
            ),
            (
                "src/create.rs:4:1",
                quote!({
                    let s: Vec<f64> = s;
                    map(|x| x, create(n, |_| head(s)))
                }),
            ),
            (
                "src/create.rs:5:1",
                quote!(map(|x| x, create(n, |i| muli(i, i)))),
            ),
            ("src/create.rs:6:1", quote!(map(sqrt, create(n, int2float)))),
        ],
        &[],
    );
    golden_crate("create", &p);
}

#[test]
fn set_in_place_and_copy() {
    let p = program(
        &[
            (
                "src/set.rs:1:1",
                quote!({
                    let a = create(n, |i| i);
                    map(|x| x, set(a, 0, 42))
                }),
            ),
            (
                "src/set.rs:2:1",
                quote!({
                    let a = map(|x| muli(x, 2), s);
                    let b = set(a, 0, 1);
                    map(|x| x, set(b, 1, 2))
                }),
            ),
            ("src/set.rs:3:1", quote!(map(|x| x, set(s, 0, 1)))),
            (
                "src/set.rs:4:1",
                quote!({
                    let a = create(n, |i| i);
                    let b = set(a, 0, 5);
                    map2(addi, a, b)
                }),
            ),
            (
                "src/set.rs:5:1",
                quote!(map(|r| r, set(rows, 0, create(3, |j| j)))),
            ),
        ],
        &[],
    );
    golden_crate("set", &p);
}

#[test]
fn sequence_intrinsics() {
    let p = program(
        &[
            (
                "src/seq.rs:1:1",
                quote!(map(
                    |i| addi(get(s, i), addi(head(s), length(tail(s)))),
                    create(length(s), |i| i)
                )),
            ),
            (
                "src/seq.rs:2:1",
                quote!({
                    let s: Vec<bool> = s;
                    map(|x| x, concat(reverse(s), subsequence(s, 1, 3)))
                }),
            ),
            (
                "src/seq.rs:3:1",
                quote!(map(|r| foldl(|acc, x| addi(acc, x), 0, r), rows)),
            ),
            (
                "src/seq.rs:4:1",
                quote!(map(|r| if null(r) { 0 } else { foldl(muli, 1, r) }, rows)),
            ),
            ("src/seq.rs:5:1", quote!(map(|x| [x, 1, 2], s))),
            (
                "src/seq.rs:6:1",
                quote!({
                    let s: Vec<i64> = s;
                    map(|x| x, concat(rows, [s, map(negi, s)]))
                }),
            ),
            (
                "src/seq.rs:7:1",
                quote!(map(
                    |x| muli(x, 2),
                    foldl(|acc, r| concat(acc, r), [], rows)
                )),
            ),
        ],
        &[],
    );
    golden_crate("sequences", &p);
}

#[test]
fn records() {
    let p = program(
        &[
            (
                "src/records.rs:1:1",
                quote!(map(|(a, b)| addf(int2float(a), b), pairs)),
            ),
            ("src/records.rs:2:1", quote!(map(|x| (x, muli(x, 2)), s))),
            (
                "src/records.rs:3:1",
                quote!({
                    let (lo, hi) = bounds;
                    (reduce(addi, lo, s), map(|x| muli(x, hi), s))
                }),
            ),
            (
                "src/records.rs:4:1",
                quote!({
                    let data: Vec<(i64, Vec<i64>)> = data;
                    map(|(k, v)| addi(k, length(v)), data)
                }),
            ),
            (
                "src/records.rs:5:1",
                quote!({
                    let s: Vec<f64> = s;
                    map(|t| t.0, map(|x| (x,), s))
                }),
            ),
        ],
        &[],
    );
    let f = golden_crate("records", &p);
    // A sequence of tuples crosses as one array per field, rebuilt in the entry.
    let pairs = &f.program.entries[0].params[0];
    assert_eq!(pairs.ty.to_string(), "[](i64, f64)");
    let leaves: Vec<(String, Vec<Label>, String)> = pairs
        .leaves
        .iter()
        .map(|l| (l.name.clone(), l.path.clone(), l.ty.to_string()))
        .collect();
    assert_eq!(leaves[0].1, [Label::Index(0)]);
    assert_eq!(leaves[0].2, "[]i64");
    assert_eq!(leaves[1].1, [Label::Index(1)]);
    assert_eq!(leaves[1].2, "[]f64");
    assert!(leaves[0].0.ends_with("__0"), "{leaves:?}");
    // The first site's pairs may hold `i32`s too (`int2float` takes either): a second entry.
    assert_eq!(
        f.program.entries[1].params[0].ty.to_string(),
        "[](i32, f64)"
    );
    // A result of tuples is returned as one output per leaf (the second site's entry).
    let second = f
        .program
        .entries
        .iter()
        .position(|e| e.name == "site_src_records_rs_2_1")
        .expect("the second site's entry");
    let r = &f.program.entries[second].result;
    assert_eq!(r.ty.to_string(), "[](i64, i64)");
    let outs: Vec<&str> = r.leaves.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(outs, ["out0", "out1"]);
    // Nested: `Vec<(i64, Vec<i64>)>` is a `[]i64` and a `[][]i64`.
    let fourth = |e: &&EntrySignature| e.name == "site_src_records_rs_4_1";
    let data = &f
        .program
        .entries
        .iter()
        .find(fourth)
        .expect("the fourth site's entry")
        .params[0];
    let tys: Vec<String> = data.leaves.iter().map(|l| l.ty.to_string()).collect();
    assert_eq!(tys, ["[]i64", "[][]i64"]);
}

#[test]
fn math_and_conversions() {
    let p = program(
        &[
            (
                "src/math.rs:1:1",
                quote!(map(
                    |x| addf(sqrt(x), subf(exp(x), mulf(log(x), divf(sin(x), cos(x))))),
                    fs
                )),
            ),
            (
                "src/math.rs:2:1",
                quote!(map(|x| pow(x, 2.5) + -x + -1.5 + 1e-7 * 1.5e300, fs)),
            ),
            (
                "src/math.rs:3:1",
                quote!(map(
                    |i| floorfi(int2float(i) / 2.0) + divi(i, 3) + modi(i, -3) - -i,
                    s
                )),
            ),
            (
                "src/math.rs:4:1",
                quote!(map(
                    |i| !(i < 0) && i <= 10 || i > 100 && i >= 200 && i != 7,
                    s
                )),
            ),
            (
                "src/math.rs:5:1",
                quote!(map(|x| eqf(x, 0.0) == (x != 1.0), fs)),
            ),
            (
                "src/math.rs:6:1",
                quote!(map(negi, map(|x| x - 9223372036854775807 - 1, s))),
            ),
        ],
        &[],
    );
    golden_crate("math", &p);
}

#[test]
fn control_flow() {
    let p = program(
        &[
            (
                "src/control.rs:1:1",
                quote!(map(
                    |x| if x > 0 {
                        x
                    } else if x < -5 {
                        0
                    } else {
                        negi(x)
                    },
                    s
                )),
            ),
            (
                "src/control.rs:2:1",
                quote!(map(
                    |p| match p {
                        (a, true) => a,
                        (a, false) => negi(a),
                    },
                    pairs
                )),
            ),
            (
                "src/control.rs:3:1",
                quote!(map(
                    |b| match b {
                        true => 1,
                        false => 0,
                    },
                    flags
                )),
            ),
            (
                "src/control.rs:4:1",
                quote!(map(|x| if x >= 0 { x } else { never!() }, s)),
            ),
            (
                "src/control.rs:5:1",
                quote!({
                    let triples: Vec<(bool, (f64, f64))> = triples;
                    map(
                        |p| match p {
                            (true, (x, _)) => x,
                            (false, (_, y)) => y,
                        },
                        triples,
                    )
                }),
            ),
        ],
        &[],
    );
    golden_crate("control", &p);
}

/// A function that calls itself only in tail position becomes a `loop … while` over the
/// parameters its calls change (a binary search over captured bounds; Collatz steps through a
/// `match`-free `if` chain; a result that is an array, whose size the loop changes).
#[test]
fn tail_recursion() {
    let p = program(
        &[
            (
                "src/tail.rs:1:1",
                quote!({
                    fn search(x: i64, lo: i64, hi: i64) -> i64 {
                        if lo + 1 < hi {
                            let k = (lo + hi) / 2;
                            if x >= bounds[k] {
                                search(x, k, hi)
                            } else {
                                search(x, lo, k)
                            }
                        } else {
                            lo
                        }
                    }
                    map(|x| search(x, 0, length(bounds)), s)
                }),
            ),
            (
                "src/tail.rs:2:1",
                quote!({
                    fn steps(n: i64, count: i64) -> i64 {
                        if n <= 1 {
                            count
                        } else if n % 2 == 0 {
                            steps(n / 2, count + 1)
                        } else {
                            steps(3 * n + 1, count + 1)
                        }
                    }
                    map(|n| steps(n, 0), s)
                }),
            ),
            (
                "src/tail.rs:3:1",
                quote!({
                    fn upto(n: i64, acc: Vec<i64>) -> Vec<i64> {
                        if n == 0 {
                            acc
                        } else {
                            upto(n - 1, concat([n], acc))
                        }
                    }
                    map(|n| reduce(addi, 0, upto(n, [])), s)
                }),
            ),
        ],
        &[],
    );
    golden_crate("tail_recursion", &p);
}

/// `hist` becomes Futhark's `hist`: the values take the indices' size; `i32` indices are
/// converted to `i64`; the bin indices may be computed (`create`).
#[test]
fn hist() {
    let p = program(
        &[
            ("src/hist.rs:1:1", quote!(hist(addi, 0, k, is, vs))),
            (
                "src/hist.rs:2:1",
                quote!(hist(
                    |a, b| if a + b > 255 { 255 } else { a + b },
                    0,
                    k,
                    img,
                    map(|x| x - x + 1, img)
                )),
            ),
            (
                "src/hist.rs:3:1",
                quote!(hist(addf, 0.0, 4, create(n, |j| j % 4), fs)),
            ),
        ],
        &[],
    );
    let f = golden_crate("hist", &p);
    let names: Vec<&str> = f.program.entries.iter().map(|e| e.name.as_str()).collect();
    assert!(names.contains(&"site_src_hist_rs_2_1_i32"), "{names:?}");
}

/// `scan`, `filter` and `scatter` become Futhark's own (the neutral element of a scan of rows
/// takes the rows' size; `scatter` writes into a copy of its destination, the values taking the
/// indices' size, rows of values the destination's row size); `create` alone is `tabulate`.
#[test]
fn scan_filter_scatter_create() {
    let p = program(
        &[
            (
                "src/keywords.rs:1:1",
                quote!(scan(addi, 0, map(|x| x * x, s))),
            ),
            (
                "src/keywords.rs:2:1",
                quote!(reduce(addi, 0, filter(|y| y > 0, map(|x| x - 5, s)))),
            ),
            (
                "src/keywords.rs:3:1",
                quote!(scatter(d, create(length(vs), |i| i * 2), vs)),
            ),
            ("src/keywords.rs:4:1", quote!(create(n, |i| i * i))),
            (
                "src/keywords.rs:5:1",
                quote!({
                    let rows: Vec<Vec<f64>> = rows;
                    (
                        scan(|a, b| map2(addf, a, b), [0.0; length(rows[0])], rows),
                        scatter(rows, is, map(|r| map(|x| x * 2.0, r), rows)),
                    )
                }),
            ),
        ],
        &[],
    );
    golden_crate("scan_filter_scatter", &p);
}

/// Number types fixed by the captured values: one entry per instantiation.
#[test]
fn numeric_instantiations() {
    let p = program(
        &[
            ("src/num.rs:1:1", quote!(map(|x| x * x + x, s))),
            ("src/num.rs:2:1", quote!(map(|x| x == y, s))),
        ],
        &[],
    );
    let f = golden_crate("numeric", &p);
    let names: Vec<&str> = f.program.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "site_src_num_rs_1_1_i64",
            "site_src_num_rs_1_1_f64",
            "site_src_num_rs_1_1_i32",
            "site_src_num_rs_1_1_f32",
            "site_src_num_rs_1_1_i8",
            "site_src_num_rs_1_1_i16",
            "site_src_num_rs_1_1_isize",
            "site_src_num_rs_1_1_u8",
            "site_src_num_rs_1_1_u16",
            "site_src_num_rs_1_1_u32",
            "site_src_num_rs_1_1_u64",
            "site_src_num_rs_1_1_usize",
            "site_src_num_rs_2_1_i64",
            "site_src_num_rs_2_1_f64",
            "site_src_num_rs_2_1_i32",
            "site_src_num_rs_2_1_f32",
            "site_src_num_rs_2_1_bool",
            "site_src_num_rs_2_1_i8",
            "site_src_num_rs_2_1_i16",
            "site_src_num_rs_2_1_isize",
            "site_src_num_rs_2_1_u8",
            "site_src_num_rs_2_1_u16",
            "site_src_num_rs_2_1_u32",
            "site_src_num_rs_2_1_u64",
            "site_src_num_rs_2_1_usize",
        ]
    );
    // `i32` and `f32` on request, through `generate`.
    let vars = &p.numeric[&p.sites[0].1];
    assert_eq!(vars.len(), 1);
    let requests: Vec<EntryRequest> = [Number::I32, Number::F32]
        .into_iter()
        .map(|prim| EntryRequest {
            site: "src/num.rs:1:1".into(),
            instantiation: Instantiation::from([(vars[0].0, prim)]),
        })
        .collect();
    let g = generate(&p, &requests).unwrap();
    golden("numeric_32", &g.source);
    assert_eq!(g.entries[1].name, "site_src_num_rs_1_1_f32");
    assert_eq!(g.entries[1].params[0].ty.to_string(), "[]f32");
}

/// A `#[pmexpr]` function shared by two Futhark-class sites is one `def`; the CUDA-class site
/// that also uses it is not part of the program.
#[test]
fn shared_functions() {
    let items = [
        ("g", "fn g(x: i64) -> i64 { addi(x, 1) }"),
        ("h", "fn h(x: i64, y: i64) -> i64 { muli(g(x), y) }"),
    ];
    let p = program(
        &[
            ("src/a.rs:1:1", quote!(map(g, s))),
            ("src/b.rs:1:1", quote!(reduce(addi, 0, map(|x| h(x, k), s)))),
            (
                "src/c.rs:1:1",
                quote!(par_loop(n, |i| tensor_set(t, [i], g(i)))),
            ),
        ],
        &items,
    );
    let f = golden_crate("shared", &p);
    assert_eq!(f.program.source.matches("def g_").count(), 1);
    assert_eq!(f.program.entries.len(), 2);
}

// ----- unit tests -----

#[test]
fn entry_names_are_sanitized_sites() {
    let none = Instantiation::new();
    assert_eq!(
        entry_name("examples/listing1.rs:58:20", &none),
        "site_examples_listing1_rs_58_20"
    );
    assert_eq!(entry_name("src/ä-b.rs:1:2", &none), "site_src___b_rs_1_2");
    let two = Instantiation::from([(TyVar(3), Number::I32), (TyVar(1), Number::Bool)]);
    assert_eq!(entry_name("a.rs:1:1", &two), "site_a_rs_1_1_bool_i32");
}

#[test]
fn instantiations_cover_the_runtime_types() {
    assert_eq!(instantiations(&[]), vec![Instantiation::new()]);
    let two = instantiations(&[(TyVar(0), Numeric::Int), (TyVar(1), Numeric::Float)]);
    assert_eq!(two.len(), 20, "10 integers × 2 floats, all within the cap");
    assert_eq!(
        two[0],
        Instantiation::from([(TyVar(0), Number::I64), (TyVar(1), Number::F64)])
    );
    // The uniform ones first (as the CUDA modules: `codegen::numbers`).
    assert_eq!(
        two[1],
        Instantiation::from([(TyVar(0), Number::I32), (TyVar(1), Number::F32)])
    );
    let three: Vec<(TyVar, Numeric)> = (0..3).map(|i| (TyVar(i), Numeric::Num)).collect();
    let all_f64: Instantiation = (0..3).map(|i| (TyVar(i), Number::F64)).collect();
    assert!(instantiations(&three).contains(&all_f64));
    let mixed = instantiations(&[(TyVar(0), Numeric::Num), (TyVar(1), Numeric::Scalar)]);
    assert_eq!(
        mixed.len(),
        MAX_INSTANTIATIONS,
        "12 × 13 combinations, capped"
    );
    let many: Vec<(TyVar, Numeric)> = (0..6).map(|i| (TyVar(i), Numeric::Scalar)).collect();
    assert_eq!(instantiations(&many).len(), MAX_INSTANTIATIONS);
}

#[test]
fn futhark_types() {
    let none = Instantiation::new();
    let named = Type::Record(vec![
        (Label::Name("type".into()), Type::INT),
        (Label::Name("x_y".into()), Type::seq(Type::FLOAT)),
    ]);
    assert_eq!(
        FutType::of(&named, &none).unwrap().to_string(),
        "{type_: i64, x_y: []f64}"
    );
    let f = Type::arrows(
        [Type::arrow(Type::INT, Type::BOOL), Type::INT],
        Type::unit(),
    );
    assert_eq!(
        FutType::of(&f, &none).unwrap().to_string(),
        "(i64 -> bool) -> i64 -> ()"
    );
    let one = Type::tuple(vec![Type::seq(Type::INT)]);
    assert_eq!(FutType::of(&one, &none).unwrap().to_string(), "[]i64");
    assert_eq!(
        FutType::of(&Type::tensor(Type::FLOAT), &none),
        Err(GenError::Tensor)
    );
    assert_eq!(
        FutType::of(&Type::Var(TyVar(7)), &none),
        Err(GenError::UnboundNumeric(TyVar(7)))
    );
}

#[test]
fn names_are_valid_and_never_generated_ones() {
    assert_eq!(stem("x"), "x");
    assert_eq!(stem("__arg"), "arg");
    assert_eq!(stem("a__b_"), "a_b");
    assert_eq!(stem("1st"), "v1st");
    assert_eq!(stem("ü"), "v");
    assert_eq!(stem("pm_x"), "u_pm_x");
    assert_eq!(stem("site"), "u_site");
    assert_eq!(stem("match"), "match");
    let names = vec!["match".to_string()];
    assert_eq!(var_name(&names, VarId(0)), "match_0");
    // A line break in a file name cannot end a comment early.
    assert_eq!(comment("src/a\nb.rs:1:1"), "-- src/a b.rs:1:1\n");
}

#[test]
fn literals() {
    let t = |l: Lit| lit(&l, None).text;
    assert_eq!(t(Lit::Int(5)), "5i64");
    assert_eq!(t(Lit::Int(-5)), "(-5i64)");
    assert_eq!(t(Lit::Int(i64::MIN.into())), "i64.lowest");
    assert_eq!(t(Lit::Float(1.0, 1.0)), "1.0f64");
    assert_eq!(t(Lit::Float(-0.5, -0.5)), "(-0.5f64)");
    assert_eq!(t(Lit::Float(1e-7, 1e-7)), "1e-7f64");
    assert_eq!(t(Lit::Float(f64::INFINITY, f32::INFINITY)), "f64.inf");
    assert_eq!(
        t(Lit::Float(f64::NEG_INFINITY, f32::NEG_INFINITY)),
        "(f64.neg f64.inf)"
    );
    assert_eq!(t(Lit::Float(f64::NAN, f32::NAN)), "f64.nan");
    assert_eq!(t(Lit::Unit), "()");
}

/// A site whose backend is (wrongly) Futhark: the CUDA-class site of `tokens` with its backend
/// switched, to feed the generator what well-formedness would reject.
fn forced_futhark(tokens: TokenStream) -> CrateProgram {
    let mut p = program(&[("src/bad.rs:1:1", tokens)], &[]);
    for s in &mut p.sites {
        s.2 = Backend::Futhark;
    }
    p
}

#[test]
fn what_futhark_cannot_express_is_an_error_not_a_panic() {
    // (A literal count, an `i64`: no number type for the captured values to fix.)
    let tensor = forced_futhark(quote!(par_loop(8, |i| tensor_set(t, [i], i as i64))));
    let request = |site: &str| EntryRequest {
        site: site.into(),
        instantiation: Instantiation::new(),
    };
    assert_eq!(
        generate(&tensor, &[request("src/bad.rs:1:1")]),
        Err(GenError::Tensor)
    );
    let recursive = forced_futhark(quote!({
        fn f(n: i64) -> i64 {
            if n == 0 { 0 } else { 1 + f(n - 1) }
        }
        par_loop(n, |i| seq_loop(f(i), |j| ()))
    }));
    assert!(matches!(
        generate(&recursive, &[request("src/bad.rs:1:1")]),
        Err(GenError::RecursiveLet(_))
    ));
    let no_site = program(&[("src/ok.rs:1:1", quote!(map(negi, s)))], &[]);
    assert_eq!(
        generate(&no_site, &[request("src/nope.rs:1:1")]),
        Err(GenError::UnknownSite("src/nope.rs:1:1".into()))
    );
    assert!(matches!(
        generate(
            &no_site,
            &[request("src/ok.rs:1:1"), request("src/ok.rs:1:1")]
        ),
        Err(GenError::NameClash(_))
    ));
}

/// One site that cannot be generated does not cost the others their entries.
#[test]
fn the_crate_program_skips_what_it_cannot_generate() {
    let mut p = program(
        &[
            ("src/ok.rs:1:1", quote!(map(negi, s))),
            (
                "src/bad.rs:1:1",
                quote!(par_loop(8, |i| tensor_set(t, [i], i as i64))),
            ),
        ],
        &[],
    );
    p.sites[1].2 = Backend::Futhark;
    let f = generate_crate(&p).unwrap();
    assert_eq!(f.program.entries.len(), 1);
    assert_eq!(f.skipped.len(), 1);
    assert_eq!(f.skipped[0].error, GenError::Tensor);
    assert!(
        f.program
            .source
            .contains("-- not generated: src/bad.rs:1:1 (tensors cannot be used in Futhark code)"),
        "{}",
        f.program.source
    );
    // A crate without Futhark-class sites has no Futhark program.
    let cuda = program(
        &[(
            "src/c.rs:1:1",
            quote!(par_loop(n, |i| tensor_set(t, [i], i))),
        )],
        &[],
    );
    assert!(generate_crate(&cuda).is_none());
}

/// `compile_crate` writes the Futhark program when the crate has Futhark-class sites, and each
/// Futhark-class site's dump shows its code.
#[test]
fn compile_crate_writes_the_futhark_program() {
    use crate::program::{FUTHARK_FILE, compile_crate};
    use crate::registry::{Registry, SiteSource};
    let site = |line: usize, tokens: &str| {
        SiteSource::new("src/main.rs", line, 5, &tokens.parse().unwrap())
    };
    let registry = Registry::new(
        Vec::new(),
        vec![
            site(3, "reduce(addi, 0, s)"),
            site(4, "par_loop(n, |i| tensor_set(t, [i], i))"),
        ],
    );
    let out = compile_crate(&registry, true);
    let file = |name: &str| {
        out.files
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, text)| text.as_str())
    };
    let fut = file(FUTHARK_FILE).expect("the Futhark program");
    assert!(fut.contains("entry site_src_main_rs_3_5 (s_"), "{fut}");
    assert!(!fut.contains("site_src_main_rs_4_5"), "{fut}");
    let dump = file("pmexpr-dump/src_main.rs_3_5.txt").expect("the dump");
    assert!(dump.contains("entry site_src_main_rs_3_5"), "{dump}");
    let cuda_only = Registry::new(
        Vec::new(),
        vec![site(4, "par_loop(n, |i| tensor_set(t, [i], i))")],
    );
    assert!(
        !compile_crate(&cuda_only, false)
            .files
            .iter()
            .any(|(n, _)| n == FUTHARK_FILE)
    );
}

/// Functions as values: higher-order `#[pmexpr]` functions, partial applications bound by `let`,
/// a site without captured variables, nested sequences three deep.
#[test]
fn functions_as_values() {
    let p = program(
        &[
            (
                "src/fns.rs:1:1",
                quote!(map(|x| apply(|y| addi(y, k), x), s)),
            ),
            ("src/fns.rs:2:1", quote!(reduce(addi, 0, [1, 2, 3]))),
            (
                "src/fns.rs:3:1",
                quote!({
                    let g = mul(c);
                    map(g, s)
                }),
            ),
            (
                "src/fns.rs:4:1",
                quote!(map(|r| apply_rows(|v| reduce(addi, 0, v), r), rows)),
            ),
            (
                "src/fns.rs:5:1",
                quote!({
                    let s: Vec<Vec<Vec<f64>>> = s;
                    map(|m| flatten(m), s)
                }),
            ),
        ],
        &[
            (
                "apply",
                "fn apply(f: fn(i64) -> i64, x: i64) -> i64 { f(x) }",
            ),
            (
                "apply_rows",
                "fn apply_rows(f: fn(Vec<i64>) -> i64, x: Vec<i64>) -> i64 { f(x) }",
            ),
            ("mul", "fn mul(a: i64, b: i64) -> i64 { muli(a, b) }"),
        ],
    );
    let f = golden_crate("functions", &p);
    assert!(f.program.entries[1].params.is_empty());
}

/// A site whose value is `()` has no entry point (Futhark's entry points return values).
#[test]
fn a_unit_result_is_skipped() {
    let p = program(
        &[(
            "src/unit.rs:1:1",
            quote!({
                let _u = map(negi, s);
                ()
            }),
        )],
        &[],
    );
    let f = generate_crate(&p).unwrap();
    assert!(f.program.entries.is_empty());
    assert!(matches!(f.skipped[0].error, GenError::Unsupported(_)));
}

/// A `#[pmexpr]` function over a number type that two sites' captured values fix: each site
/// keeps its own copy, instantiated with its own types.
#[test]
fn generic_functions_per_site() {
    let p = program(
        &[
            ("src/g1.rs:1:1", quote!(map(dbl, s))),
            (
                "src/g2.rs:1:1",
                quote!({
                    let k = 2.0;
                    map(|x| dbl(x) == x, t)
                }),
            ),
        ],
        &[("dbl", "fn dbl(x: _) -> _ { x + x }")],
    );
    let f = golden_crate("generic", &p);
    // Two sites, each with values of the 12 numbers (not `bool`: `x + x`).
    assert_eq!(f.program.entries.len(), 24);
}

/// `int2float` makes the float type of its context and `floorfi` takes either: the `f32` entry
/// converts with `f32.i64` and floors with `f32.floor`.
#[test]
fn int2float_and_floorfi_follow_the_float_type() {
    let p = program(
        &[(
            "src/conv.rs:1:1",
            quote!(map(|x| x * int2float(floorfi(x)), s)),
        )],
        &[],
    );
    let vars = &p.numeric[&p.sites[0].1];
    let request = |prim| EntryRequest {
        site: "src/conv.rs:1:1".into(),
        instantiation: Instantiation::from([(vars[0].0, prim)]),
    };
    let g = generate(&p, &[request(Number::F32), request(Number::F64)]).unwrap();
    assert!(
        g.source.contains("f32.i64 (i64.f32 (f32.floor"),
        "{}",
        g.source
    );
    assert!(
        g.source.contains("f64.i64 (i64.f64 (f64.floor"),
        "{}",
        g.source
    );
}

/// Element types the expression leaves open (only moved or counted: `Numeric::Open`) get an entry
/// per number and `bool`, like a compared value's, typed by that instantiation: the runtime
/// picks the one the captured values' Rust types name (the examples of `tests/open_types.rs`).
#[test]
fn open_element_types_get_an_entry_per_number() {
    let sites = [
        ("src/open.rs:1:1", quote!(flatten(m))),
        (
            "src/open.rs:2:1",
            quote!(map(|i| get(s, i), create(5, |i| i))),
        ),
        (
            "src/open.rs:3:1",
            quote!(map(|i| i * 2, create(length(s), |i| i))),
        ),
        ("src/open.rs:4:1", quote!(map(|p| p, reverse(s)))),
        ("src/open.rs:5:1", quote!(reduce(|a, b| a, head(s), s))),
        ("src/open.rs:6:1", quote!(map(|p| p, concat(s, t)))),
        ("src/open.rs:7:1", quote!(map(|p| p, s))),
    ];
    let p = program(&sites, &[]);
    for (name, tokens) in &sites {
        let site = compile_for_test(tokens.clone(), &[]).unwrap();
        assert!(
            site.mono.numeric.iter().all(|(_, k)| *k == Numeric::Open)
                && !site.mono.numeric.is_empty(),
            "{name}: {:?}",
            site.mono.numeric
        );
    }
    let f = golden_crate("open_types", &p);
    let entries = &f.program.entries;
    assert_eq!(entries.len(), sites.len() * Number::ALL.len());
    let sig = |name: &str| {
        let e = entries
            .iter()
            .find(|e| e.name == name)
            .unwrap_or_else(|| panic!("{name} in {:?}", entries.iter().map(|e| &e.name)));
        let params: Vec<String> = e
            .params
            .iter()
            .map(|p| format!("{}: {}", p.name, p.ty))
            .collect();
        (params.join(", "), e.result.ty.to_string())
    };
    let s = |p: &str, r: &str| (p.to_string(), r.to_string());
    assert_eq!(sig("site_src_open_rs_1_1_i64"), s("m: [][]i64", "[]i64"));
    assert_eq!(sig("site_src_open_rs_1_1_bool"), s("m: [][]bool", "[]bool"));
    assert_eq!(sig("site_src_open_rs_2_1_f32"), s("s: []f32", "[]f32"));
    // `s` is only counted: it still crosses, as an array of the instantiation's type.
    assert_eq!(sig("site_src_open_rs_3_1_f64"), s("s: []f64", "[]i64"));
    assert_eq!(sig("site_src_open_rs_4_1_i32"), s("s: []i32", "[]i32"));
    assert_eq!(sig("site_src_open_rs_5_1_f64"), s("s: []f64", "f64"));
    assert_eq!(
        sig("site_src_open_rs_6_1_bool"),
        s("s: []bool, t: []bool", "[]bool")
    );
    assert_eq!(sig("site_src_open_rs_7_1_i64"), s("s: []i64", "[]i64"));
    // The element is an array or scalar leaf of the instantiation's type.
    let flat = entries
        .iter()
        .find(|e| e.name == "site_src_open_rs_1_1_f32")
        .unwrap();
    assert_eq!(flat.params[0].leaves.len(), 1);
    assert_eq!(flat.result.leaves.len(), 1);
}

/// Rust's bit operators, casts and numeric methods: shifts masked to the width, `&`
/// `|` `^` on `bool` with both operands bound first, casts from floats saturating, and Rust's
/// definitions where Futhark's function differs (`round`, `signum`), at `i64`, `i32`, `f64`
/// and `f32` (the open types' instantiations).
#[test]
fn bits_casts_and_methods() {
    let p = program(
        &[
            (
                "src/bits.rs:1:1",
                quote!(map2(
                    |x: i64, y: i64| (x & y) | (x ^ !y) | (x << y) | (x >> 3),
                    s,
                    t
                )),
            ),
            (
                "src/bits.rs:2:1",
                quote!(map2(|a: bool, b: bool| (a & b, a | b, a ^ b, !a), bs, cs)),
            ),
            (
                "src/bits.rs:3:1",
                quote!(map(
                    |x| (
                        x.count_ones() + x.leading_zeros() + x.trailing_zeros(),
                        x.reverse_bits()
                            + x.swap_bytes()
                            + x.rotate_left(5)
                            + x.rotate_right(70)
                            + x.saturating_add(x)
                            + x.saturating_sub(1)
                            + x.saturating_mul(x)
                            + x.wrapping_neg()
                            + x.signum()
                    ),
                    s
                )),
            ),
            (
                "src/bits.rs:4:1",
                quote!(map(
                    |x| (
                        x.round()
                            + x.signum()
                            + x.fract()
                            + x.mul_add(x, 1.0)
                            + x.to_radians()
                            + x.to_degrees()
                            + x.exp2()
                            + x.atan2(1.0)
                            + x.hypot(2.0),
                        x.is_nan() || !x.is_finite()
                    ),
                    fs
                )),
            ),
            (
                "src/bits.rs:5:1",
                quote!(map(
                    |x| (x as i64, x as f64, (x > 0.5) as i64, (x < 0.5) as f64),
                    fs
                )),
            ),
            ("src/bits.rs:6:1", quote!(map(|k| (k as f64, k as i64), s))),
        ],
        &[],
    );
    let f = golden_crate("bits", &p);
    let src = &f.program.source;
    // Every instantiation of an open number: the shifts masked at its width.
    assert!(src.contains("& 63i64"), "{src}");
    assert!(src.contains("& 31i32"), "{src}");
    assert!(src.contains("i64.highest"), "{src}");
    assert!(src.contains("copysign"), "{src}");
}

/// The numeric methods beyond the first set: `pow` and `powi` as square and
/// multiply (Futhark's `**` loops forever on a negative integer exponent), `isqrt` digit by
/// digit, the Euclidean and ceiling divisions with `MIN / -1` wrapping, and the failures where
/// Rust panics as `assert`s (`clamp`'s testing a float bound for NaN apart), at every
/// instantiation of an open number.
#[test]
fn more_methods() {
    let p = program(
        &[
            (
                "src/methods.rs:1:1",
                quote!(map2(
                    |x, n| x.pow(n)
                        + x.isqrt()
                        + x.div_ceil(n)
                        + x.rem_euclid(n)
                        + x.div_euclid(n)
                        + x.next_power_of_two()
                        + x.clamp(-3, n)
                        + if x.is_power_of_two() { 1 } else { 0 },
                    s,
                    t
                )),
            ),
            (
                "src/methods.rs:2:1",
                quote!(map2(|x, k| x.powi(k) + x.clamp(-1.0, x), fs, ks)),
            ),
            // Rust's unsigned integer of the receiver's width, whatever the receiver is.
            (
                "src/methods.rs:4:1",
                quote!(map2(|x, y| x.abs_diff(y), s, t)),
            ),
            // A method that can fail is not computed once for `replicate`: `n` may be 0.
            (
                "src/methods.rs:3:1",
                quote!(create(n, |_k| {
                    let x: i64 = x;
                    x.isqrt()
                })),
            ),
        ],
        &[],
    );
    let f = golden_crate("methods", &p);
    let src = &f.program.source;
    assert!(src.contains("tabulate"), "{src}");
    assert!(!src.contains("replicate"), "{src}");
    assert!(!src.contains("**"), "{src}");
    assert!(src.contains("u32.i32"), "{src}");
    assert!(src.contains("f64.isnan"), "{src}");
    assert!(src.contains("f32.isnan"), "{src}");
    assert!(src.contains("1i32 << 30i32"), "{src}");
    assert!(src.contains("1i64 << 62i64"), "{src}");
}

/// A `match` of many integer arms is an `if` chain whose `else if`s stay at the first `if`'s
/// indentation: nested, each arm indented the rest five more columns (k² text for k arms).
#[test]
fn long_if_chains_stay_flat() {
    let arms: Vec<TokenStream> = (0..60i64)
        .map(|i| {
            let (pat, v) = (
                proc_macro2::Literal::i64_unsuffixed(i),
                proc_macro2::Literal::i64_unsuffixed(i * 10 + 1),
            );
            quote!(#pat => x + #v,)
        })
        .collect();
    let p = program(
        &[(
            "s",
            quote!({ let s: Vec<i64> = s; map(|x| match x { #(#arms)* _ => 0 }, s) }),
        )],
        &[],
    );
    let f = generate_crate(&p).unwrap();
    let source = &f.program.source;
    assert_eq!(source.matches("else if").count(), 59, "{source}");
    let widest = source
        .lines()
        .map(|l| l.len() - l.trim_start().len())
        .max()
        .unwrap_or(0);
    assert!(widest <= 8, "indented {widest} columns:\n{source}");
}

/// `&`, `|` and `^` of a number variable that is `bool` in an instantiation are Futhark's logical
/// operators there (its `&` is of integers only): both operands evaluated, as Rust's `&` on `bool`.
#[test]
fn bit_operators_of_a_variable_that_is_bool() {
    let p = program(
        &[(
            "src/b.rs:1:1",
            quote!(map2(|x, y| (x & y, x | y, x ^ y), a, b)),
        )],
        &[],
    );
    let src = generate_crate(&p).unwrap().program.source;
    let def = |t: &str| {
        let start = src
            .find(&format!("_{t} (x"))
            .unwrap_or_else(|| panic!("{src}"));
        src[start..].split("\n\n").next().unwrap().to_string()
    };
    let b = def("bool");
    assert!(
        b.contains("x_") && b.contains(" && ") && b.contains(" || ") && b.contains(" != "),
        "{b}"
    );
    assert!(!b.contains(" & "), "{b}");
    assert!(def("i32").contains(" & "), "{src}");
}

/// An `f32` written in the site (here a closure's annotation) is computed in Futhark's `f32`
/// module through every float method and math intrinsic: no `f64` appears.
#[test]
fn written_f32_uses_the_f32_module() {
    let p = program(
        &[(
            "s",
            quote!(map(
                |x: f32| x.sqrt()
                    + x.exp()
                    + x.ln()
                    + x.sin()
                    + x.cos()
                    + x.powf(2.0)
                    + sqrt(x)
                    + exp(x)
                    + log(x)
                    + sin(x)
                    + cos(x)
                    + pow(x, 0.5)
                    + x.floor()
                    + x.ceil()
                    + x.round()
                    + x.trunc()
                    + x.fract()
                    + x.abs()
                    + x.signum()
                    + x.cbrt()
                    + x.exp2()
                    + x.log2()
                    + x.log10()
                    + x.tan()
                    + x.asin()
                    + x.acos()
                    + x.atan()
                    + x.atan2(x)
                    + x.sinh()
                    + x.cosh()
                    + x.tanh()
                    + x.hypot(x)
                    + x.to_radians()
                    + x.to_degrees()
                    + x.mul_add(x, x)
                    + x.clamp(0.0, 1.0)
                    + x.powi(2)
                    + x.min(x)
                    + x.max(x)
                    + int2float(floorfi(x))
                    - x * x / x
                    + (if x.is_nan() || x.is_finite() {
                        1.0
                    } else {
                        0.0
                    }),
                v
            )),
        )],
        &[],
    );
    let f = generate_crate(&p).unwrap();
    let source = &f.program.source;
    for m in [
        "f32.sqrt",
        "f32.exp",
        "f32.log",
        "f32.sin",
        "f32.cos",
        "f32.cbrt",
        "f32.atan2",
    ] {
        assert!(source.contains(m), "{m}: {source}");
    }
    assert!(!source.contains("f64"), "{source}");
    // A literal at `f32` is its digits rounded once, written as the shortest text of that `f32`.
    let p = program(
        &[("s", quote!(map(|x: f32| x * 1.0000001788139343, v)))],
        &[],
    );
    let source = generate_crate(&p).unwrap().program.source;
    assert!(source.contains("1.0000001f32"), "{source}");
}

/// Rust's `as` sign-extends a signed integer before it reinterprets it as a wider unsigned one
/// (`-128i8 as u32` is 4294967168), where Futhark's `u32.i8` zero-extends: the cast goes through
/// the signed integer of the target's width. Narrowing and same-width casts, and the unsigned
/// sources, keep Futhark's own conversion.
#[test]
fn signed_to_wider_unsigned_casts_sign_extend() {
    let p = program(
        &[(
            "s",
            quote!(map(
                |x: i8| (x as u32) as u64
                    + (x as u64)
                    + (x as u16) as u64
                    + (x as u8) as u64
                    + ((x as i32) as u32) as u64
                    + ((x as u8) as u32) as u64,
                v
            )),
        )],
        &[],
    );
    let f = generate_crate(&p).unwrap();
    let source = &f.program.source;
    for m in [
        "u32.i32 (i32.i8 ",
        "u64.i64 (i64.i8 ",
        "u16.i16 (i16.i8 ",
        "u8.i8 ",
    ] {
        assert!(source.contains(m), "{m}: {source}");
    }
    // From unsigned sources and to narrower types: Futhark's own.
    assert!(source.contains("u32.u8 "), "{source}");
    assert!(!source.contains("u64.i32 (i64.i32"), "{source}");
}

/// `trunc`, `round` and `fract` do not go through Futhark's `trunc`, which converts to an `i64`,
/// beyond 2^52 (2^23 for `f32`), for infinities and NaN; below it they keep the sign of -0.0.
#[test]
fn trunc_round_and_fract_are_exact_for_every_float() {
    let p = program(
        &[
            (
                "s",
                quote!(map(|x: f64| x.trunc() + x.round() + x.fract(), v)),
            ),
            (
                "t",
                quote!(map(|x: f32| x.trunc() + x.round() + x.fract(), w)),
            ),
        ],
        &[],
    );
    let f = generate_crate(&p).unwrap();
    let source = &f.program.source;
    assert_eq!(
        source.matches("< 4503599627370496f64) then").count(),
        3,
        "{source}"
    );
    assert_eq!(source.matches("< 8388608f32) then").count(), 3, "{source}");
    assert!(source.contains("f64.copysign (f64.trunc "), "{source}");
}

/// The rest of Rust's numeric methods, with Rust's results: the counts of ones, the signed-only
/// methods, shifts masked to the width, `wrapping_div` wrapping `MIN / -1`, `saturating_pow`
/// with Rust's overflow test, `ilog2`/`ilog10` asserting a positive number; on floats the sign
/// bit read from the bits (a NaN's too), `round_ties_even` exact beyond 2^52, `%`, `rem_euclid`
/// and `div_euclid` on Futhark's `%` (C's `fmod`), and `exp_m1`/`ln_1p` from `exp` and `log`.
#[test]
fn the_other_numeric_methods() {
    let p = program(
        &[
            (
                "a",
                quote!(map(
                    |x: i8| (
                        x.count_zeros()
                            + x.leading_ones()
                            + x.trailing_ones()
                            + x.ilog2()
                            + x.ilog10(),
                        x.unsigned_abs(),
                        x.is_negative() || x.is_positive(),
                        x.wrapping_shl(9)
                            + x.wrapping_shr(9u64)
                            + x.wrapping_pow(3)
                            + x.saturating_pow(3)
                            + x.wrapping_abs()
                            + x.saturating_abs()
                            + x.saturating_neg()
                            + x.wrapping_div(-1)
                            + x.wrapping_rem(-1)
                    ),
                    v
                )),
            ),
            (
                "b",
                quote!(map(
                    |x: f64| (
                        x.recip()
                            + x.copysign(-1.0)
                            + x.exp_m1()
                            + x.ln_1p()
                            + x.log(2.0)
                            + x.asinh()
                            + x.acosh()
                            + x.atanh()
                            + x.round_ties_even()
                            + x % 2.0
                            + x.rem_euclid(2.0)
                            + x.div_euclid(2.0),
                        x.is_infinite()
                            || x.is_normal()
                            || x.is_sign_negative()
                            || x.is_sign_positive()
                    ),
                    w
                )),
            ),
            ("c", quote!(map(|x: f32| x % 2.0 + x.round_ties_even(), u))),
        ],
        &[],
    );
    let f = generate_crate(&p).unwrap();
    let s = &f.program.source;
    for want in [
        "u32.i32 (i8.popc (x_",
        "^ (-1i8)))",
        "u32.i32 (i8.clz (",
        "u32.i32 (i8.ctz (",
        "> 0i8) (u32.i32 (7i32 - i8.clz",
        "// 10i8)).0)",
        "u8.i8 (if ",
        "< 0i8",
        "& 7i8)",
        "<< (i8.i64 ",
        ">> (i8.u64 ",
        "== (-1i8) then 0i8 - ",
        "== (-1i8) then 0i8 else",
        "== i8.lowest then i8.highest",
        "then i8.lowest else i8.highest",
        "1f64 / x_",
        "f64.copysign x_",
        "f64.log x_",
        "f64.hypot 1f64",
        "then f64.nan else f64.log (x_",
        "0.5f64 * (let ",
        "f64.isinf",
        "(f64.to_bits x_",
        ">> 63u64) == 1u64",
        ">> 63u64) == 0u64",
        ">= 2.2250738585072014e-308f64",
        "then x_",
        "f64.copysign (f64.round x_",
        "% 2.0f64",
        "f64.exp x_",
        "f32.copysign (f32.round x_",
        "% 2.0f32",
    ] {
        assert!(s.contains(want), "{want}: {s}");
    }
    assert!(!s.contains("%% 2.0"), "{s}");
    assert!(!s.contains("f64.trunc (x_"), "{s}");
}
