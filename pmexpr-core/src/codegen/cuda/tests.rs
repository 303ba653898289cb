//! Tests of the CUDA generator: the golden corpus, and the ABI, names and literals in small.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use quote::quote;

use super::code::{c_ident, field_name, float_lit, float32_lit, int_lit, int32_lit};
use super::peephole::strip_parens;
use super::*;
use crate::ast::ExprKind;
use crate::codegen::numbers::Number;
use crate::infer::Numeric;
use crate::program::{SiteFailure, compile_sites};
use crate::registry::{Registry, SiteSource, collect_items, parse_source};
use crate::types::{Label, TyVar, Type};

/// The golden corpus: `tests/golden/cuda/*.rs`, one crate whose files each hold one site or
/// more, and the reviewed `*.cu` output beside each.
fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/cuda")
}

/// The `accelerate!(…)` inputs among `tokens`, in order (the build hook's scan, in small).
fn sites_in(tokens: TokenStream, out: &mut Vec<TokenStream>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (k, t) in trees.iter().enumerate() {
        match (t, trees.get(k + 1), trees.get(k + 2)) {
            (TokenTree::Ident(i), Some(TokenTree::Punct(p)), Some(TokenTree::Group(g)))
                if i == "accelerate" && p.as_char() == '!' =>
            {
                out.push(g.stream());
            }
            (TokenTree::Group(g), _, _) => sites_in(g.stream(), out),
            _ => {}
        }
    }
}

/// Every corpus file's stem and the modules generated for its sites, in file order.
fn corpus_modules() -> Vec<(String, Vec<std::result::Result<CudaModule, String>>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("the corpus directory")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    let mut items = Vec::new();
    let mut sites = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let file = format!("cuda/{}", path.file_name().unwrap().to_string_lossy());
        let (tokens, file_items) = parse_source(&text, |tokens, ast| {
            (tokens.clone(), collect_items(ast, &file, &|_| (0, 0)))
        })
        .unwrap();
        items.extend(file_items);
        let mut found = Vec::new();
        sites_in(tokens, &mut found);
        for (k, tokens) in found.into_iter().enumerate() {
            // Line and column stand for the position (the order in the file).
            sites.push(SiteSource::new(&file, k + 1, 1, &tokens));
        }
    }
    let registry = Registry::new(items, sites);
    let mut out: Vec<(String, Vec<_>)> = files
        .iter()
        .map(|p| {
            (
                p.file_stem().unwrap().to_string_lossy().into_owned(),
                Vec::new(),
            )
        })
        .collect();
    for site in compile_sites(&registry) {
        let stem = site.name["cuda/".len()..site.name.find(".rs").unwrap()].to_string();
        let position: usize = site.name.split(':').nth(1).unwrap().parse().unwrap();
        let prefix = if position == 1 {
            format!("pm_{stem}")
        } else {
            format!("pm_{stem}{position}")
        };
        let entry = &mut out.iter_mut().find(|(s, _)| *s == stem).unwrap().1;
        let compiled = match site.result {
            Ok(c) => c,
            Err(SiteFailure::Rejected(e)) => {
                entry.push(Err(format!("{}: rejected: {}", site.name, e[0].message)));
                continue;
            }
            Err(SiteFailure::Unparsable(e)) => {
                entry.push(Err(format!("{}: {e}", site.name)));
                continue;
            }
        };
        let Some(program) = &compiled.program else {
            entry.push(Err(format!("{}: backend = cpu", site.name)));
            continue;
        };
        let options = CudaOptions {
            prefix,
            max_rank: DEFAULT_MAX_RANK,
        };
        let split = match crate::pipeline::kernels(program, &crate::pipeline::optimize(&compiled)) {
            Ok(split) => split,
            Err(e) => {
                entry.push(Err(format!("{}: {e}", site.name)));
                continue;
            }
        };
        for inst in instantiations(&compiled.mono.numeric) {
            entry.push(generate(program, &split, &inst, &options).map_err(|e| e.to_string()));
        }
    }
    out
}

/// What stands for the prelude (`cuda_prelude.cu`) in the golden files.
const PRELUDE_MARK: &str = "// ---- the pmexpr CUDA prelude (codegen/cuda_prelude.cu) ----\n";

/// The generated CUDA of every corpus program equals its reviewed `.cu` file;
/// `PMEXPR_BLESS=1` rewrites the files instead (review the diff).
#[test]
fn golden_corpus() {
    let bless = std::env::var("PMEXPR_BLESS").is_ok_and(|v| v == "1");
    let mut failures = Vec::new();
    for (stem, modules) in corpus_modules() {
        assert!(!modules.is_empty(), "{stem}.rs has no site");
        // The prelude is reviewed in its own file: the golden files show where it goes.
        let prelude = PRELUDE.replace("@MAX_RANK@", &DEFAULT_MAX_RANK.to_string());
        let mut text = String::new();
        for m in modules {
            match m {
                Ok(m) => {
                    assert_eq!(m.source.matches(&prelude).count(), 1, "{stem}: one prelude");
                    text.push_str(&m.source.replace(&prelude, PRELUDE_MARK));
                }
                Err(e) => panic!("{stem}.rs: {e}"),
            }
        }
        let path = corpus_dir().join(format!("{stem}.cu"));
        if bless {
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        if want != text {
            let line = want
                .lines()
                .zip(text.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(want.lines().count().min(text.lines().count()));
            failures.push(format!(
                "{stem}.cu differs from the generated code from line {} on:\n  golden:    {:?}\n  generated: {:?}",
                line + 1,
                want.lines().nth(line).unwrap_or("<end>"),
                text.lines().nth(line).unwrap_or("<end>")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n(rerun with PMEXPR_BLESS=1 to rewrite the golden files, then review the diff)",
        failures.join("\n")
    );
}

/// The kernel split of a checked site.
fn split_of(site: &crate::site::CompiledSite) -> crate::kernels::Split {
    let program = site.program.as_ref().expect("not backend = cpu");
    crate::pipeline::kernels(program, &crate::pipeline::optimize(site)).expect("kernels")
}

/// The CUDA of one site written with `quote!`, default instantiation.
fn cuda_of(tokens: TokenStream) -> std::result::Result<CudaModule, CudaGenError> {
    let site = crate::pipeline::compile_for_test(tokens, &[]).expect("the site compiles");
    let program = site.program.clone().expect("not backend = cpu");
    generate(
        &program,
        &split_of(&site),
        &default_instantiation(&site.mono.numeric),
        &CudaOptions::for_site("src/lib.rs:1:1"),
    )
}

#[test]
fn kernels_are_described_as_data() {
    let m = cuda_of(quote!({
        let scale = |c, i| tensor_set(t, [i], muli(c, tensor_get(t, [i])));
        par_loop(n, |i| scale(3, i))
    }))
    .unwrap();
    // The captured count `n` is an integer the Rust value fixes: `i64` by default.
    assert_eq!(m.namespace, "pm_src_lib_rs_1_1_i64");
    assert_eq!(m.kernels.len(), 1);
    let k = &m.kernels[0];
    assert_eq!(k.name, "pm_src_lib_rs_1_1_i64_k0");
    assert_eq!(k.binding_name, "accelerate");
    assert_eq!(k.ordinal, 0);
    let params: Vec<(&str, &str)> = k
        .params
        .iter()
        .map(|p| (p.c_type.as_str(), p.name.as_str()))
        .collect();
    // The lambda's bound arguments (the captured tensor `t`), then `n`.
    assert_eq!(params.len(), 2, "{params:?}");
    assert_eq!(params[0].0, "pm_tensor<long long>");
    assert_eq!(params[1], ("long long", "n"));
    assert_eq!(
        k.params[0].layout,
        CLayout::Tensor(Box::new(CLayout::Number(Number::I64)))
    );
    assert_eq!(k.params[0].ty, Type::tensor(Type::INT));
    assert!(matches!(&k.params[1].value.kind, ExprKind::Var { ident, .. } if ident.name == "n"));
    assert!(
        m.source
            .contains(&format!("extern \"C\" __global__ void {}(", k.name))
    );
    assert!(m.host.straight_line);
    assert_eq!(m.host.result, Type::unit());
    // One check: the `tensor_get` (the `tensor_set` is the second).
    assert_eq!(m.checks.len(), 2);
    assert_eq!(m.checks[0].construct, "tensor_get");
}

#[test]
fn host_code_around_launches_is_reported() {
    let m = cuda_of(quote!({
        seq_loop(steps, |s| par_loop(n, |i| tensor_set(t, [i], s)));
        if flag {
            par_loop(n, |i| tensor_set(t, [i], 0))
        } else {
            ()
        }
    }))
    .unwrap();
    assert_eq!(m.kernels.len(), 2);
    assert!(!m.host.straight_line);
    let names: Vec<&str> = m.host.functions.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert_eq!(names[0], "accelerate");
    let notes: Vec<&str> = m.host.notes.iter().map(|n| n.construct.as_str()).collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("`seq_loop` on the host")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("a `match`/`if` on the host")),
        "{notes:?}"
    );
    // The kernel inside the loop's function belongs to that function.
    let inner = m
        .kernels
        .iter()
        .find(|k| k.binding_name != "accelerate")
        .unwrap();
    assert_eq!(inner.params.last().unwrap().name, "n");
}

#[test]
fn unsupported_constructs_are_errors_not_panics() {
    let e = cuda_of(quote!(par_loop(n, |i| {
        let sh = tensor_shape(t);
        tensor_set(t, [i], get(sh, 0))
    })))
    .unwrap_err();
    assert!(e.message.contains("`tensor_shape`"), "{}", e.message);
    let e = cuda_of(quote!(par_loop(n, |i| {
        let ix = [i];
        tensor_set(t, ix, 1)
    })))
    .unwrap_err();
    assert!(e.message.contains("sequence literal"), "{}", e.message);
    // A numeric type variable without an instantiation (the literal count is an `i64`).
    let site = crate::pipeline::compile_for_test(
        quote!(par_loop(8, |i| tensor_set(y, [i], a * tensor_get(y, [i])))),
        &[],
    )
    .unwrap();
    assert_eq!(site.mono.numeric.len(), 1);
    let e = generate(
        site.program.as_ref().unwrap(),
        &split_of(&site),
        &Instantiation::new(),
        &CudaOptions::for_site("x"),
    )
    .unwrap_err();
    assert!(e.message.contains("no instantiation"), "{}", e.message);
    // With one, names tell the instantiation apart.
    let m = generate(
        site.program.as_ref().unwrap(),
        &split_of(&site),
        &float_instantiation(&site.mono.numeric),
        &CudaOptions::for_site("x"),
    )
    .unwrap();
    assert_eq!(m.kernels[0].name, "pm_x_f64_k0");
    let types: Vec<&str> = m.kernels[0]
        .params
        .iter()
        .map(|p| p.c_type.as_str())
        .collect();
    assert_eq!(types, ["pm_tensor<double>", "double", "long long"]);
}

/// Every type the runtime's number traits implement gets a module, uniform ones first.
#[test]
fn instantiations_cover_the_runtime_types() {
    use Number::*;
    let (a, b, c) = (TyVar(0), TyVar(1), TyVar(2));
    let tags = |insts: Vec<Instantiation>| -> Vec<String> {
        insts.iter().map(instantiation_suffix).collect()
    };
    assert_eq!(instantiations(&[]), vec![Instantiation::new()]);
    let ints = [
        "_i8", "_i16", "_isize", "_u8", "_u16", "_u32", "_u64", "_usize",
    ];
    let with = |first: &[&str]| -> Vec<String> {
        first.iter().chain(&ints).map(|s| s.to_string()).collect()
    };
    assert_eq!(
        tags(instantiations(&[(a, Numeric::Num)])),
        with(&["_i64", "_f64", "_i32", "_f32"])
    );
    assert_eq!(
        tags(instantiations(&[(a, Numeric::Scalar)])),
        with(&["_i64", "_f64", "_i32", "_f32", "_bool"])
    );
    assert_eq!(
        tags(instantiations(&[(a, Numeric::Int)])),
        with(&["_i64", "_i32"])
    );
    assert_eq!(
        tags(instantiations(&[(a, Numeric::Float)])),
        ["_f64", "_f32"]
    );
    // An integer and a float: every integer with the float of its width (`f64` where there is
    // none), then the mixes by rank (`usize`, `i32`, `u32` … in their preference order).
    assert_eq!(
        tags(instantiations(&[(a, Numeric::Int), (b, Numeric::Float)])),
        [
            "_i64_f64",
            "_i32_f32",
            "_i8_f64",
            "_i16_f64",
            "_isize_f64",
            "_u8_f64",
            "_u16_f64",
            "_u32_f32",
            "_u64_f64",
            "_usize_f64",
            "_i64_f32",
            "_usize_f32",
            "_i32_f64",
            "_u32_f64",
            "_u64_f32",
            "_u8_f32",
            "_i8_f32",
            "_i16_f32",
            "_u16_f32",
            "_isize_f32"
        ]
    );
    assert_eq!(
        default_instantiation(&[(a, Numeric::Num), (b, Numeric::Float)]),
        Instantiation::from([(a, I64), (b, F64)])
    );
    assert_eq!(
        float_instantiation(&[(a, Numeric::Num), (b, Numeric::Int)]),
        Instantiation::from([(a, F64), (b, I64)])
    );
    // Three numbers: 64 combinations, capped; the uniform ones are among those kept.
    let three = instantiations(&[(a, Numeric::Num), (b, Numeric::Num), (c, Numeric::Num)]);
    assert_eq!(three.len(), MAX_INSTANTIATIONS);
    assert_eq!(
        three[3],
        Instantiation::from([(a, F32), (b, F32), (c, F32)])
    );
    assert_eq!(
        three.iter().collect::<BTreeSet<_>>().len(),
        MAX_INSTANTIATIONS,
        "distinct"
    );
    // Many variables: the enumeration stops at the cap.
    let many: Vec<(TyVar, Numeric)> = (0..40).map(|i| (TyVar(i), Numeric::Num)).collect();
    assert_eq!(instantiations(&many).len(), MAX_INSTANTIATIONS);
}

/// `i32` and `f32` instantiations: `int` and `float` everywhere the number goes, 32-bit
/// wrapping helpers, `float` literals, and a literal too big for an `i32` as a check.
#[test]
fn narrow_numbers_are_not_widened() {
    let site = crate::pipeline::compile_for_test(
        quote!(par_loop(n, |i| {
            let x = tensor_get(t, [i]);
            tensor_set(t, [i], -(x * 3 + x / 2) + get(s, i))
        })),
        &[],
    )
    .unwrap();
    let program = site.program.as_ref().unwrap();
    // The elements, and the count `n` (the index `i` has its type).
    let [(v, Numeric::Int), (w, Numeric::Int)] = site.mono.numeric[..] else {
        panic!("{:?}", site.mono.numeric)
    };
    let i32_inst = Instantiation::from([(v, Number::I32), (w, Number::I32)]);
    let m = generate(
        program,
        &split_of(&site),
        &i32_inst,
        &CudaOptions::for_site("x"),
    )
    .unwrap();
    assert_eq!(m.namespace, "pm_x_i32_i32");
    let params: Vec<(&str, &CLayout)> = m.kernels[0]
        .params
        .iter()
        .map(|p| (p.c_type.as_str(), &p.layout))
        .collect();
    assert_eq!(
        params,
        [
            (
                "pm_tensor<int>",
                &CLayout::Tensor(Box::new(CLayout::Number(Number::I32)))
            ),
            (
                "pm_seq<int>",
                &CLayout::Seq(Box::new(CLayout::Number(Number::I32)))
            ),
            ("long long", &CLayout::Number(Number::I64)),
        ]
    );
    let own = &m.source[m.source.find("namespace pm_x_i32").unwrap()..];
    assert!(own.contains("pm_muli32(x_"), "{own}");
    assert!(own.contains("pm_divi32("), "{own}");
    assert!(own.contains("pm_negi32("), "{own}");
    assert!(!own.contains("pm_addi("), "no 64-bit arithmetic: {own}");
    // The index arithmetic stays 64-bit, the numbers' literals are `int`s.
    assert!(own.contains(", 3)") && !own.contains("3LL"), "{own}");

    let site = crate::pipeline::compile_for_test(
        quote!(par_loop(n, |i| tensor_set(
            t,
            [i],
            tensor_get(t, [i]) * 0.1 + 3000000000
        ))),
        &[],
    );
    // An integer literal where a float is: rejected before code generation.
    assert!(site.is_err());
    let site = crate::pipeline::compile_for_test(
        quote!(par_loop(n, |i| {
            let k = tensor_get(u, [i]) + 3000000000;
            tensor_set(t, [i], tensor_get(t, [i]) * 0.1 + 1e39)
        })),
        &[],
    )
    .unwrap();
    let program = site.program.as_ref().unwrap();
    let narrow: Vec<Instantiation> = instantiations(&site.mono.numeric)
        .into_iter()
        .filter(|i| i.values().all(|t| matches!(t, Number::I32 | Number::F32)))
        .collect();
    assert_eq!(narrow.len(), 1);
    let m = generate(
        program,
        &split_of(&site),
        &narrow[0],
        &CudaOptions::for_site("x"),
    )
    .unwrap();
    let own = &m.source[m.source.find("namespace pm_x_").unwrap()..];
    assert!(!own.contains("double"), "{own}");
    assert!(own.contains("* 0.1f)"), "{own}");
    assert!(
        own.contains("__int_as_float(0x7f800000)"),
        "1e39 is inf as f32: {own}"
    );
    assert!(
        own.contains("pm_literal_too_big<int>(") && own.contains("3000000000LL"),
        "{own}"
    );
    assert!(m.checks.iter().any(|c| c.construct == "integer literal"));
}

/// The error codes of the prelude are those of [`DeviceError`].
#[test]
fn error_codes_match_the_prelude() {
    let names = [
        "PM_DIVISION_BY_ZERO",
        "PM_SEQ_NEGATIVE_INDEX",
        "PM_SEQ_OUT_OF_BOUNDS",
        "PM_TENSOR_WRONG_RANK",
        "PM_TENSOR_BAD_INDEX",
        "PM_TENSOR_NEGATIVE_INDEX",
        "PM_TENSOR_OUT_OF_BOUNDS",
        "PM_SUB_NEGATIVE_OFFSET",
        "PM_SUB_NEGATIVE_LENGTH",
        "PM_SUB_OUT_OF_BOUNDS",
        "PM_NEVER",
        "PM_NO_MATCH",
        "PM_LITERAL_TOO_BIG",
        "PM_ISQRT_NEGATIVE",
        "PM_CLAMP_BOUNDS",
        "PM_CLAMP_BOUNDS_F64",
        "PM_CLAMP_BOUNDS_F32",
    ];
    for (name, e) in names.iter().zip(DeviceError::ALL) {
        assert!(
            PRELUDE.contains(&format!("{name} = {}", e.code())),
            "{name} = {}",
            e.code()
        );
        assert_eq!(DeviceError::from_code(e.code()), Some(e));
    }
    assert_eq!(DeviceError::from_code(0), None);
    assert!(PRELUDE.contains(&format!("unsigned long long {ERROR_SYMBOL}[4];")));
}

#[test]
fn layouts_follow_the_c_rules() {
    let rec = CLayout::Struct {
        name: "tuple0".into(),
        fields: vec![
            ("_0".into(), CLayout::Number(Number::Bool)),
            ("_1".into(), CLayout::Number(Number::F64)),
            ("_2".into(), CLayout::Number(Number::Bool)),
        ],
    };
    assert_eq!(rec.size_align(3), (24, 8));
    assert_eq!(rec.field_offsets(3), [0, 8, 16]);
    assert_eq!(
        CLayout::Tensor(Box::new(CLayout::Number(Number::F64))).size_align(3),
        (48, 8)
    );
    assert_eq!(
        CLayout::Seq(Box::new(CLayout::Number(Number::Bool))).size_align(3),
        (16, 8)
    );
    let narrow = CLayout::Struct {
        name: "tuple1".into(),
        fields: vec![
            ("_0".into(), CLayout::Number(Number::F32)),
            ("_1".into(), CLayout::Number(Number::I64)),
            ("_2".into(), CLayout::Number(Number::I32)),
            ("_3".into(), CLayout::Number(Number::F32)),
        ],
    };
    assert_eq!(narrow.size_align(3), (24, 8));
    assert_eq!(narrow.field_offsets(3), [0, 8, 16, 20]);
    let empty = CLayout::Struct {
        name: "e".into(),
        fields: vec![],
    };
    assert_eq!(empty.size_align(3), (1, 1));
}

#[test]
fn names_and_literals() {
    assert_eq!(c_ident("x", VarId(7)), "x_7");
    assert_eq!(c_ident("_", VarId(2)), "v_2");
    assert_eq!(c_ident("lambda11", VarId(11)), "lambda11");
    assert_eq!(c_ident("größe", VarId(3)), "gr__e_3");
    assert_eq!(field_name(&Label::Name("class".into())), "class_");
    assert_eq!(field_name(&Label::Index(2)), "_2");
    assert_eq!(int_lit(i64::MIN), "(-9223372036854775807LL - 1LL)");
    assert_eq!(int_lit(-3), "(-3LL)");
    assert_eq!(float_lit(1.0), "1.0");
    assert_eq!(float_lit(1e-7), "1e-7");
    assert!(float_lit(f64::NAN).contains("0x7ff8"));
    assert_eq!(int32_lit(i32::MIN), "(-2147483647 - 1)");
    assert_eq!(int32_lit(-3), "(-3)");
    assert_eq!(int32_lit(7), "7");
    assert_eq!(float32_lit(1.1), "1.1f");
    assert_eq!(float32_lit(-0.5), "(-0.5f)");
    assert_eq!(float32_lit(1e-7), "1e-7f");
    assert_eq!(float32_lit(f32::MAX), "3.4028235e38f");
    assert_eq!(float32_lit(f32::NEG_INFINITY), "__int_as_float((-8388608))");
    assert_eq!(f32::NEG_INFINITY.to_bits() as i32, -8388608);
    assert!(float32_lit(f32::NAN).contains("0x7fc00000"));
    assert_eq!(strip_parens("(a < b)"), "a < b");
    assert_eq!(strip_parens("(a) && (b)"), "(a) && (b)");
}

/// An `f32` written in the site computes with C's `float` functions (`sqrtf`, not `sqrt` of a
/// `double`), as Rust's `f32` methods do.
#[test]
fn written_f32_uses_the_float_functions() {
    let m = cuda_of(quote!(par_loop(n, |i| {
        let x: f32 = tensor_get(t, [i]);
        tensor_set(
            t,
            [i],
            x.sqrt()
                + x.exp()
                + x.ln()
                + x.sin()
                + x.cos()
                + x.powf(2.0)
                + sqrt(x)
                + pow(x, 0.5)
                + x.abs()
                + x.floor()
                + x.cbrt()
                + x.powi(2)
                + int2float(floorfi(x))
                + x.mul_add(x, x),
        )
    })))
    .unwrap();
    let own = &m.source[m.source.find("namespace pm_").unwrap()..];
    for f in [
        "sqrtf(", "expf(", "logf(", "sinf(", "cosf(", "powf(", "fabsf(",
    ] {
        assert!(own.contains(f), "{f}: {own}");
    }
    for f in [
        " sqrt(", " exp(", " log(", " pow(", " fabs(", "(sqrt(", "(pow(",
    ] {
        assert!(!own.contains(f), "{f}: {own}");
    }
    assert!(own.contains("const float x_"), "{own}");
    // A literal at `f32` is its digits rounded once to a `float` (not twice, through the nearest
    // `double`, which is the middle of two `float`s here).
    let m = cuda_of(quote!(par_loop(n, |i| {
        let x: f32 = tensor_get(t, [i]);
        tensor_set(t, [i], x * 1.0000001788139343)
    })))
    .unwrap();
    assert!(m.source.contains("1.0000001f"), "{}", m.source);
    assert!(!m.source.contains("1.0000002f"), "{}", m.source);
}
