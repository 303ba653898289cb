//! Every combination of number types the runtime can ask for has a CUDA module and a Futhark
//! entry point, or is one the cap leaves out, which the runtime runs on the CPU.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::quote;

use super::*;
use crate::classify::Backend;
use crate::codegen::{cuda, futhark};
use crate::merge::merge;
use crate::pipeline::compile_for_test;
use crate::site::SiteProgram;

/// The Rust types the runtime's trait of each kind is implemented for (`pmexpr_runtime::numeric`:
/// `Num`, `Scalar`, `Int`, `Float`), as their `Scalar::NUMBER`: what rustc may pick for a
/// variable, and so what the generated code may ask for. Written out here, apart from
/// [`choices`], so that the two are checked against each other.
fn runtime_numbers(kind: Numeric) -> Vec<Number> {
    use Number::*;
    let list: &[Number] = match kind {
        Numeric::Num => &[I64, F64, I32, F32, I8, I16, Isize, U8, U16, U32, U64, Usize],
        Numeric::Scalar => &[
            I64, F64, I32, F32, Bool, I8, I16, Isize, U8, U16, U32, U64, Usize,
        ],
        Numeric::Int => &[I64, I32, I8, I16, Isize, U8, U16, U32, U64, Usize],
        Numeric::Bits => &[I64, I32, Bool, I8, I16, Isize, U8, U16, U32, U64, Usize],
        Numeric::Float => &[F64, F32],
        // Any Rust type; the ones past these have no code and the runtime says so
        // (`open_instantiation`) before it looks.
        Numeric::Open => &[
            I64, F64, I32, F32, Bool, I8, I16, Isize, U8, U16, U32, U64, Usize,
        ],
        // `Int::Unsigned` of the integers (naming itself: those it is implemented as).
        Numeric::Unsigned(_) => &[U8, U16, U32, U64, Usize],
        Numeric::OfUnsigned(U8) => &[I8, U8],
        Numeric::OfUnsigned(U16) => &[I16, U16],
        Numeric::OfUnsigned(U32) => &[I32, U32],
        Numeric::OfUnsigned(U64) => &[I64, U64],
        Numeric::OfUnsigned(Usize) => &[Isize, Usize],
        Numeric::OfUnsigned(_) => &[],
    };
    list.to_vec()
}

#[test]
fn the_choices_of_each_kind_are_the_runtime_s() {
    use Numeric::*;
    let a = TyVar(0);
    for kind in [
        Num,
        Scalar,
        Int,
        Float,
        Open,
        Unsigned(a),
        OfUnsigned(Number::U32),
        OfUnsigned(Number::Usize),
    ] {
        assert_eq!(choices(kind), runtime_numbers(kind), "{kind:?}");
    }
}

/// Every request the runtime can make for a site with these variables: one name per variable,
/// in the order of `Mono::numeric` (how the generated code lists `Scalar::NUMBER`s).
fn runtime_requests(numeric: &[(TyVar, Numeric)]) -> Vec<Vec<Number>> {
    numeric.iter().fold(vec![Vec::new()], |acc, (_, k)| {
        acc.into_iter()
            .flat_map(|r| {
                runtime_numbers(*k).into_iter().map(move |n| {
                    let mut r = r.clone();
                    r.push(n);
                    r
                })
            })
            .collect()
    })
}

/// How the runtime finds code for a request: the module or entry whose numbers equal the
/// request (`CudaCall::begin`, `FutharkCall::begin`); `false` means it runs the site on the CPU
/// targets.
fn finds(available: &BTreeSet<Vec<Number>>, request: &[Number]) -> bool {
    available.contains(request)
}

fn compile(tokens: TokenStream) -> (Vec<(TyVar, Numeric)>, SiteProgram) {
    let site = checked(tokens);
    (site.mono.numeric, site.program.expect("not backend = cpu"))
}

fn checked(tokens: TokenStream) -> crate::site::CompiledSite {
    compile_for_test(tokens.clone(), &[])
        .unwrap_or_else(|e| panic!("{tokens} does not compile: {e:?}"))
}

/// The names of the CUDA modules the hook generates for a site, as the runtime sees them
/// (`glue::cuda`: each instantiation's numbers in `Mono::numeric` order); every module is
/// generated.
fn cuda_modules(site: &crate::site::CompiledSite) -> BTreeSet<Vec<Number>> {
    let (numeric, program) = (
        &site.mono.numeric,
        site.program.as_ref().expect("a GPU site"),
    );
    assert_eq!(program.backend, Backend::Cuda);
    let split =
        crate::pipeline::kernels(program, &crate::pipeline::optimize(site)).expect("kernels");
    let options = cuda::CudaOptions::for_site("src/numbers.rs:1:1");
    cuda::instantiations(numeric)
        .iter()
        .map(|inst| {
            cuda::generate(program, &split, inst, &options)
                .unwrap_or_else(|e| panic!("{inst:?}: {e}"));
            numeric.iter().map(|(v, _)| inst[v]).collect()
        })
        .collect()
}

/// The names of the Futhark entry points of a site, as the runtime sees them (the build's
/// library glue: each entry's instantiation in the site's variable order).
fn futhark_entries(program: &SiteProgram) -> (Vec<(TyVar, Numeric)>, BTreeSet<Vec<Number>>) {
    assert_eq!(program.backend, Backend::Futhark);
    let p = merge(&[("src/numbers.rs:1:1".to_string(), program)]);
    let numeric = p.numeric[&p.sites[0].1].clone();
    let f = futhark::generate_crate(&p).expect("a Futhark-class site");
    assert!(f.skipped.is_empty(), "{:?}", f.skipped);
    let entries = f
        .program
        .entries
        .iter()
        .map(|e| numeric.iter().map(|(v, _)| e.instantiation[v]).collect())
        .collect();
    (numeric, entries)
}

/// For sites with one, two and three number type variables, of numbers (`Num`), of values only
/// compared (`Scalar`, which may be `bool`) and of values only moved or counted (`Open`, a number
/// or `bool` here), on both GPU generators: every request the
/// runtime can make finds a module (CUDA) and an entry point (Futhark), except those the cap of
/// [`MAX_INSTANTIATIONS`] leaves out — only when the site has more combinations than the cap,
/// never a uniform one (all `f64`, all `f32`, …). For those the runtime's lookup finds nothing
/// and it runs the site on the CPU targets (`CudaCall::begin` and `FutharkCall::begin` return
/// `None`, said once on stderr), which is the clean fallback this test states.
#[test]
fn every_runtime_request_has_a_module_and_an_entry_or_falls_back_past_the_cap() {
    // (Literal counts: a captured one would be a number type variable of its own.)
    let cuda_sites = [
        (
            1,
            Numeric::Num,
            quote!(par_loop(8, |i| tensor_set(
                t,
                [i],
                tensor_get(t, [i]) * tensor_get(t, [i])
            ))),
        ),
        (
            2,
            Numeric::Num,
            quote!(par_loop(8, |i| {
                tensor_set(t, [i], tensor_get(t, [i]) * tensor_get(t, [i]));
                tensor_set(u, [i], tensor_get(u, [i]) + tensor_get(u, [i]))
            })),
        ),
        (
            3,
            Numeric::Num,
            quote!(par_loop(8, |i| {
                tensor_set(t, [i], tensor_get(t, [i]) * tensor_get(t, [i]));
                tensor_set(u, [i], tensor_get(u, [i]) + tensor_get(u, [i]));
                tensor_set(w, [i], tensor_get(w, [i]) - tensor_get(w, [i]))
            })),
        ),
        (
            1,
            Numeric::Open,
            quote!(par_loop(length(s), |i| tensor_set(
                t,
                [i],
                length(get(s, i))
            ))),
        ),
    ];
    let futhark_sites = [
        (1, Numeric::Num, quote!(map(|x| x * x + x, s))),
        (
            2,
            Numeric::Num,
            quote!((map(|x| x * x, a), map(|y| y + y, b))),
        ),
        (
            3,
            Numeric::Num,
            quote!((map(|x| x * x, a), map(|y| y + y, b), map(|z| z - z, c))),
        ),
        (1, Numeric::Scalar, quote!(map(|x| x == y, s))),
        (
            2,
            Numeric::Scalar,
            quote!((map(|x| x == y, s), map(|x| x != z, r))),
        ),
        (
            3,
            Numeric::Scalar,
            quote!((map(|x| x == y, s), map(|x| x != z, r), map(|x| x == v, q))),
        ),
        (1, Numeric::Open, quote!(flatten(m))),
        (
            2,
            Numeric::Open,
            quote!((map(|p| p, reverse(s)), flatten(m))),
        ),
    ];
    let mut cases = Vec::new();
    for (vars, kind, tokens) in cuda_sites {
        let site = checked(tokens);
        let modules = cuda_modules(&site);
        let numeric = site.mono.numeric;
        cases.push(("CUDA", vars, kind, numeric, modules));
    }
    for (vars, kind, tokens) in futhark_sites {
        let (_, program) = compile(tokens);
        let (numeric, entries) = futhark_entries(&program);
        // The same enumeration as the CUDA modules: one list for both generators.
        assert_eq!(
            entries,
            instantiations(&numeric)
                .iter()
                .map(|c| numeric.iter().map(|(v, _)| c[v]).collect())
                .collect::<BTreeSet<_>>()
        );
        cases.push(("Futhark", vars, kind, numeric, entries));
    }
    let mut fallbacks = Vec::new();
    for (generator, vars, kind, numeric, available) in &cases {
        let what = format!("{generator}, {vars} variable(s) of kind {kind:?}");
        assert_eq!(numeric.len(), *vars, "{what}: {numeric:?}");
        assert!(
            numeric.iter().all(|(_, k)| k == kind),
            "{what}: {numeric:?}"
        );
        let requests = runtime_requests(numeric);
        assert_eq!(
            available.len(),
            requests.len().min(MAX_INSTANTIATIONS),
            "{what}"
        );
        let mut missing = 0;
        for request in &requests {
            if finds(available, request) {
                continue;
            }
            // Left out by the cap: only past it, and never a uniform request.
            assert!(
                requests.len() > MAX_INSTANTIATIONS,
                "{what}: no code for {request:?}"
            );
            assert!(
                request.iter().any(|n| *n != request[0]),
                "{what}: the uniform request {request:?} has no code"
            );
            missing += 1;
        }
        assert_eq!(missing, requests.len() - available.len(), "{what}");
        if missing > 0 {
            fallbacks.push(format!(
                "{what}: {missing} of {} requests run on the CPU",
                requests.len()
            ));
        }
    }
    // With one variable every number has its code (12 or 13); with two or more the cap (16)
    // leaves combinations out, the uniform ones kept: every site here but the one-variable ones.
    let one_variable = cases.iter().filter(|c| c.1 == 1).count();
    assert_eq!(
        fallbacks.len(),
        cases.len() - one_variable,
        "the sites past the cap: {fallbacks:#?}"
    );
}

#[test]
fn the_mixes_rust_programs_hold_have_code() {
    // A count (`Int`) and elements (`Num`), and three variables of a record and two tensors:
    // the mixes of `i64`, `f64`, `usize`, `i32` and `f32` that ported programs use are listed
    // within the cap.
    let two = [(TyVar(0), Numeric::Int), (TyVar(1), Numeric::Num)];
    let three = [
        (TyVar(0), Numeric::Int),
        (TyVar(1), Numeric::Float),
        (TyVar(2), Numeric::Int),
    ];
    let has = |numeric: &[(TyVar, Numeric)], want: &[Number]| {
        instantiations(numeric)
            .iter()
            .any(|c| c.values().copied().collect::<Vec<_>>() == want)
    };
    use Number::*;
    for want in [
        [Usize, F64],
        [Usize, I64],
        [I64, F64],
        [I32, I64],
        [Usize, F32],
        [I64, I32],
    ] {
        assert!(has(&two, &want), "{want:?}");
    }
    for want in [[I64, F32, I32], [Usize, F64, I64], [I32, F64, Usize]] {
        assert!(has(&three, &want), "{want:?}");
    }
    assert_eq!(instantiations(&two).len(), MAX_INSTANTIATIONS);
    // Every uniform one is there too.
    for n in Number::ALL {
        assert!(instantiations(&two).contains(&uniform(&two, n)), "{n:?}");
    }
}

/// An `abs_diff`'s result follows its receiver's type (`Numeric::Unsigned`): every instantiation
/// makes it the unsigned integer of the receiver's width, chains included, and every integer the
/// receiver may be has code.
#[test]
fn unsigned_results_follow_their_receivers() {
    let (a, u, w) = (TyVar(0), TyVar(1), TyVar(2));
    let numeric = [
        (a, Numeric::Int),
        (u, Numeric::Unsigned(a)),
        (w, Numeric::Unsigned(u)),
    ];
    let insts = instantiations(&numeric);
    for c in &insts {
        assert_eq!(c[&u], c[&a].unsigned().unwrap(), "{c:?}");
        assert_eq!(c[&w], c[&u], "{c:?}");
    }
    let receivers: BTreeSet<Number> = insts.iter().map(|c| c[&a]).collect();
    assert_eq!(receivers.len(), choices(Numeric::Int).len());
    // Known to be a `u32` where it is used: the receiver is `i32` or `u32`.
    let insts = instantiations(&[(a, Numeric::OfUnsigned(Number::U32))]);
    let receivers: BTreeSet<Number> = insts.iter().map(|c| c[&a]).collect();
    assert_eq!(receivers, BTreeSet::from([Number::I32, Number::U32]));
}
