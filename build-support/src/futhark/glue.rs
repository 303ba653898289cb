//! The Rust glue of one site's entry points, generated from the [`Manifest`] of the compiled
//! library and the generator's [`EntrySignature`]s: a `LIBRARY` static of the runtime's
//! `FutharkLibrary` type and one `call_<k>` function per entry point, which marshals the leaves
//! into the C API's arrays, calls the entry and copies the outputs back. The macro `include!`s
//! the file of its site (`OUT_DIR/pmexpr/futhark/glue/<site>.rs`).
//!
//! Only primitives and arrays of primitives cross (records are split into their leaves by the
//! generator), so the C functions used are `futhark_new_<t>_<r>d`, `free`, `shape`, `values` and
//! the entry itself; their names come from the manifest.

use std::fmt::Write;

use pmexpr_abi::Number;
use pmexpr_core::codegen::futhark::{EntrySignature, FutType};

use super::manifest::{EntryPoint, Manifest, TypeInfo};

/// How the glue reaches the library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linkage<'a> {
    /// A static library of this name, linked into every crate whose sites use it: the glue
    /// declares the symbols, with the `#[link]` (a test or example that does not use the
    /// package's library crate would not link the library through it).
    Static(&'a str),
    /// A shared library at this path, opened at run time.
    Shared(&'a str),
}

/// An entry point checked against its manifest entry.
struct Checked<'m> {
    sig: &'m EntrySignature,
    entry: &'m EntryPoint,
    /// The site's number types in the order generated code lists them.
    numbers: Vec<Number>,
}

/// Why an entry point cannot be called (the site then runs on the CPU for those number types).
pub fn check(m: &Manifest, sig: &EntrySignature) -> Result<(), String> {
    let entry = m
        .entry_points
        .get(&sig.name)
        .ok_or_else(|| format!("the library has no entry point `{}`", sig.name))?;
    let wanted: Vec<&FutType> = sig
        .params
        .iter()
        .flat_map(|p| p.leaves.iter().map(|l| &l.ty))
        .collect();
    let got: Vec<&str> = entry.inputs.iter().map(|i| i.ty.as_str()).collect();
    if !same_leaves(m, &wanted, &got) {
        return Err(format!(
            "entry point `{}` takes {got:?}, not {:?}",
            sig.name,
            shown(&wanted)
        ));
    }
    let wanted: Vec<&FutType> = sig.result.leaves.iter().map(|l| &l.ty).collect();
    let got: Vec<&str> = entry.outputs.iter().map(|o| o.ty.as_str()).collect();
    if !same_leaves(m, &wanted, &got) {
        return Err(format!(
            "entry point `{}` returns {got:?}, not {:?}",
            sig.name,
            shown(&wanted)
        ));
    }
    for ty in entry
        .inputs
        .iter()
        .map(|i| &i.ty)
        .chain(entry.outputs.iter().map(|o| &o.ty))
    {
        kind(m, ty)?;
    }
    Ok(())
}

/// A value type of an entry: a primitive, or an array with its rank and functions.
enum Kind<'m> {
    Prim(Number),
    Array {
        elem: Number,
        rank: usize,
        info: &'m TypeInfo,
    },
}

impl Kind<'_> {
    /// The element type and the rank (0 for a primitive).
    fn shape(&self) -> (Number, usize) {
        match self {
            Kind::Prim(n) => (*n, 0),
            Kind::Array { elem, rank, .. } => (*elem, *rank),
        }
    }
}

/// The kind of the manifest's type `ty`: where its type names are read into [`Number`]s.
fn kind<'m>(m: &'m Manifest, ty: &str) -> Result<Kind<'m>, String> {
    if let Some(n) = Number::from_futhark_name(ty) {
        return Ok(Kind::Prim(n));
    }
    match m.types.get(ty) {
        Some(info @ TypeInfo::Array { rank, elemtype, .. }) => Ok(Kind::Array {
            elem: Number::from_futhark_name(elemtype)
                .ok_or_else(|| format!("arrays of `{elemtype}` do not cross into Rust"))?,
            rank: *rank,
            info,
        }),
        Some(TypeInfo::Opaque { .. }) => Err(format!("the opaque type `{ty}` does not cross")),
        None => Err(format!("the manifest does not describe the type `{ty}`")),
    }
}

/// The element type and rank of a leaf the generator made (a primitive or an array of them).
fn leaf_shape(t: &FutType) -> Option<(Number, usize)> {
    match t {
        FutType::Prim(n) => Some((*n, 0)),
        FutType::Array(e) => leaf_shape(e).map(|(n, r)| (n, r + 1)),
        _ => None,
    }
}

/// Whether the manifest's types `got` are the leaves `wanted`, one by one.
/// Compared as Futhark represents them: `isize` and `usize` are Futhark's `i64` and `u64`, which
/// the manifest names.
fn same_leaves(m: &Manifest, wanted: &[&FutType], got: &[&str]) -> bool {
    let futhark = |(n, rank): (Number, usize)| (n.futhark_name(), rank);
    wanted.len() == got.len()
        && wanted.iter().zip(got).all(|(w, g)| {
            let have = kind(m, g).ok().map(|k| futhark(k.shape()));
            have.is_some() && leaf_shape(w).map(futhark) == have
        })
}

/// Types as Futhark writes them, for messages.
fn shown(types: &[&FutType]) -> Vec<String> {
    types.iter().map(ToString::to_string).collect()
}

/// `n` as a value of the glue: the runtime's number of the Rust type.
fn number_value(n: Number, rt: &str) -> String {
    format!("<{} as {rt}::Scalar>::NUMBER", n.rust_name())
}

/// The glue of one site: `entries` are its entry points that passed [`check`], each with the
/// site's number types in generated code's order.
pub fn site_glue(
    m: &Manifest,
    library_id: &str,
    linkage: Linkage<'_>,
    site: &str,
    entries: &[(&EntrySignature, Vec<Number>)],
) -> Result<String, String> {
    let rt = "::pmexpr::__private";
    let checked: Vec<Checked<'_>> = entries
        .iter()
        .map(|(sig, numbers)| {
            Ok(Checked {
                sig,
                entry: m
                    .entry_points
                    .get(&sig.name)
                    .ok_or_else(|| format!("no entry point `{}`", sig.name))?,
                numbers: numbers.clone(),
            })
        })
        .collect::<Result<_, String>>()?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// The calls of the Futhark entry points of the accelerate! site at {site}, generated by\n// pmexpr-build from the manifest of the Futhark library (backend `{}`). Do not edit.\n",
        m.backend
    );
    // Every C function the calls use.
    let mut symbols: Vec<String> = [
        "futhark_context_config_new",
        "futhark_context_config_free",
        "futhark_context_new",
        "futhark_context_free",
        "futhark_context_sync",
        "futhark_context_get_error",
    ]
    .map(String::from)
    .to_vec();
    let mut calls = String::new();
    let mut statics = String::new();
    for (k, c) in checked.iter().enumerate() {
        // Over host memory the library can read the captured data in place: no copy in.
        let raw = matches!(linkage, Linkage::Static(_));
        let (text, used) = call_fn(m, k, c.entry, rt, raw)?;
        calls.push_str(&text);
        symbols.extend(used);
        let kinds = |tys: &mut dyn Iterator<Item = &String>| -> Result<String, String> {
            let parts: Vec<String> = tys
                .map(|t| {
                    let (n, rank) = kind(m, t)?.shape();
                    Ok(format!("({}, {rank})", number_value(n, rt)))
                })
                .collect::<Result<_, String>>()?;
            Ok(parts.join(", "))
        };
        let inputs = kinds(&mut c.entry.inputs.iter().map(|i| &i.ty))?;
        let outputs = kinds(&mut c.entry.outputs.iter().map(|o| &o.ty))?;
        let params: Vec<String> = c
            .sig
            .params
            .iter()
            .map(|p| format!("({:?}, {})", p.name, p.leaves.len()))
            .collect();
        let numbers: Vec<String> = c.numbers.iter().map(|n| number_value(*n, rt)).collect();
        let _ = writeln!(
            statics,
            "        {rt}::FutharkEntry {{\n            name: {:?},\n            instantiation: &[{}],\n            params: &[{}],\n            inputs: &[{inputs}],\n            outputs: &[{outputs}],\n            call: call_{k},\n        }},",
            c.sig.name,
            numbers.join(", "),
            params.join(", "),
        );
    }
    symbols.sort();
    symbols.dedup();
    let lookup = match linkage {
        Linkage::Static(lib) => {
            let _ = writeln!(out, "#[link(name = {lib:?}, kind = \"static\")]");
            out.push_str("unsafe extern \"C\" {\n");
            for s in &symbols {
                // Only the addresses are taken; each call gives the C signature.
                let _ = writeln!(out, "    fn {s}();");
            }
            out.push_str("}\n\nfn lookup(name: &str) -> ::core::option::Option<*const ()> {\n    ::core::option::Option::Some(match name {\n");
            for s in &symbols {
                let _ = writeln!(out, "        {s:?} => {s} as *const (),");
            }
            out.push_str("        _ => return ::core::option::Option::None,\n    })\n}\n\n");
            format!("{rt}::FutharkLookup::Static(lookup)")
        }
        Linkage::Shared(path) => format!("{rt}::FutharkLookup::Shared({path:?})"),
    };
    let _ = writeln!(
        out,
        "pub static LIBRARY: {rt}::FutharkLibrary = {rt}::FutharkLibrary {{\n    id: {library_id:?},\n    backend: {:?},\n    lookup: {lookup},\n    entries: &[\n{statics}    ],\n}};\n",
        m.backend
    );
    out.push_str(&calls);
    Ok(out)
}

/// `unsafe fn call_<k>`, and the C functions it uses.
fn call_fn(
    m: &Manifest,
    k: usize,
    entry: &EntryPoint,
    rt: &str,
    raw: bool,
) -> Result<(String, Vec<String>), String> {
    let void = "*mut ::core::ffi::c_void";
    let mut used = vec![entry.cfun.clone()];
    let mut body = String::new();
    let mut in_types = Vec::new();
    let mut in_args = Vec::new();
    for (i, input) in entry.inputs.iter().enumerate() {
        match kind(m, &input.ty)? {
            Kind::Prim(p) => {
                let _ = writeln!(body, "    let in{i} = c.scalar_in::<{p}>({i})?;");
                in_types.push(p.to_string());
            }
            Kind::Array { elem, rank, info } => {
                let TypeInfo::Array { ops, .. } = info else {
                    unreachable!("an array kind")
                };
                let dims: String = (0..rank).map(|_| ", i64").collect();
                let args: String = (0..rank).map(|d| format!(", s{i}[{d}]")).collect();
                // `new_raw` wraps the leaf's memory, which the call keeps alive and the entry
                // does not consume (no parameter is unique); `new` copies it.
                let (new, data) = match (&ops.new_raw, raw) {
                    (Some(r), true) => (r, "*mut u8".to_string()),
                    _ => (&ops.new, format!("*const {elem}")),
                };
                let cast = if new == &ops.new { "" } else { " as *mut u8" };
                let _ = writeln!(
                    body,
                    "    let (p{i}, s{i}) = c.array_in::<{elem}>({i}, {rank})?;\n    let new{i}: unsafe extern \"C\" fn({void}, {data}{dims}) -> {void} = c.sym({new:?})?;\n    let in{i} = c.own(new{i}(c.ctx(), p{i}{cast}{args}), {:?}, {new:?})?;",
                    ops.free
                );
                used.extend([new.clone(), ops.free.clone()]);
                in_types.push("*const ::core::ffi::c_void".into());
            }
        }
        in_args.push(format!("in{i}"));
    }
    let mut out_types = Vec::new();
    let mut out_args = Vec::new();
    let mut after = String::new();
    // Arrays the entry returned are ours to free, whatever happens next.
    let mut owned = String::new();
    for (o, output) in entry.outputs.iter().enumerate() {
        match kind(m, &output.ty)? {
            Kind::Prim(p) => {
                let _ = writeln!(
                    body,
                    "    let mut out{o}: {p} = ::core::default::Default::default();"
                );
                out_types.push(format!("*mut {p}"));
                let _ = writeln!(after, "    c.scalar_out::<{p}>(out{o});");
            }
            Kind::Array { elem, rank, info } => {
                let TypeInfo::Array { ops, .. } = info else {
                    unreachable!("an array kind")
                };
                let _ = writeln!(
                    body,
                    "    let mut out{o}: {void} = ::core::ptr::null_mut();"
                );
                out_types.push(format!("*mut {void}"));
                // Host memory (`c`, `multicore`): copied straight out of the array, in parallel.
                let values = match (&ops.values_raw, raw) {
                    (Some(r), true) => {
                        let _ = writeln!(
                            after,
                            "    c.array_out_raw::<{elem}>(out{o}, {rank}, {:?}, {r:?})?;",
                            ops.shape
                        );
                        r
                    }
                    _ => {
                        let _ = writeln!(
                            after,
                            "    c.array_out::<{elem}>(out{o}, {rank}, {:?}, {:?})?;",
                            ops.shape, ops.values
                        );
                        &ops.values
                    }
                };
                let _ = writeln!(
                    owned,
                    "    if !out{o}.is_null() {{\n        c.own(out{o}, {:?}, {:?})?;\n    }}",
                    ops.free, entry.cfun
                );
                used.extend([ops.free.clone(), ops.shape.clone(), values.clone()]);
            }
        }
        out_args.push(format!("&mut out{o}"));
    }
    let types: Vec<String> = std::iter::once(void.to_string())
        .chain(out_types)
        .chain(in_types)
        .collect();
    let _ = writeln!(
        body,
        "    let entry: unsafe extern \"C\" fn({}) -> ::core::ffi::c_int = c.sym({:?})?;\n    let rc = entry(c.ctx(){}{});",
        types.join(", "),
        entry.cfun,
        out_args
            .iter()
            .map(|a| format!(", {a}"))
            .collect::<String>(),
        in_args.iter().map(|a| format!(", {a}")).collect::<String>(),
    );
    body.push_str(&owned);
    let _ = writeln!(
        body,
        "    c.check(rc, {:?})?;\n    c.sync()?;\n{after}    ::core::result::Result::Ok(())",
        entry.cfun
    );
    let text = format!(
        "#[allow(unused_unsafe, clippy::all)]\nunsafe fn call_{k}(c: &mut {rt}::FutharkEntryCall<'_>) -> ::core::result::Result<(), ::std::string::String> {{\n  unsafe {{\n{body}  }}\n}}\n\n"
    );
    Ok((text, used))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::futhark::manifest::SAMPLE;
    use pmexpr_core::codegen::futhark::{EntryParam, EntryResult, Instantiation, Leaf};

    fn leaf(name: &str, ty: FutType) -> Leaf {
        Leaf {
            name: name.into(),
            path: vec![],
            ty,
        }
    }

    fn site_a() -> EntrySignature {
        let f64s = FutType::Array(Box::new(FutType::Prim(Number::F64)));
        EntrySignature {
            site: "src/a.rs:1:1".into(),
            name: "site_a".into(),
            instantiation: Instantiation::new(),
            params: vec![
                EntryParam {
                    name: "s".into(),
                    ty: f64s.clone(),
                    leaves: vec![leaf("s", f64s)],
                },
                EntryParam {
                    name: "c".into(),
                    ty: FutType::Prim(Number::I64),
                    leaves: vec![leaf("c", FutType::Prim(Number::I64))],
                },
            ],
            result: EntryResult {
                ty: FutType::Prim(Number::F64),
                leaves: vec![leaf("out0", FutType::Prim(Number::F64))],
            },
        }
    }

    #[test]
    fn glue_of_an_entry_with_an_array_and_a_scalar() {
        let m = Manifest::parse(SAMPLE).unwrap();
        let sig = site_a();
        check(&m, &sig).unwrap();
        let g = site_glue(
            &m,
            "abc",
            Linkage::Static("pmexpr_futhark_x"),
            "src/a.rs:1:1",
            &[(&sig, vec![])],
        )
        .unwrap();
        for expected in [
            "#[link(name = \"pmexpr_futhark_x\", kind = \"static\")]\nunsafe extern \"C\" {",
            "    fn futhark_new_raw_f64_1d();",
            "        \"futhark_entry_site_a\" => futhark_entry_site_a as *const (),",
            "params: &[(\"s\", 1), (\"c\", 1)],",
            "inputs: &[(<f64 as ::pmexpr::__private::Scalar>::NUMBER, 1), (<i64 as ::pmexpr::__private::Scalar>::NUMBER, 0)],",
            "let (p0, s0) = c.array_in::<f64>(0, 1)?;",
            "let new0: unsafe extern \"C\" fn(*mut ::core::ffi::c_void, *mut u8, i64) -> *mut ::core::ffi::c_void = c.sym(\"futhark_new_raw_f64_1d\")?;",
            "let in0 = c.own(new0(c.ctx(), p0 as *mut u8, s0[0]), \"futhark_free_f64_1d\", \"futhark_new_raw_f64_1d\")?;",
            "let entry: unsafe extern \"C\" fn(*mut ::core::ffi::c_void, *mut f64, *const ::core::ffi::c_void, i64) -> ::core::ffi::c_int = c.sym(\"futhark_entry_site_a\")?;",
            "let rc = entry(c.ctx(), &mut out0, in0, in1);",
            "c.scalar_out::<f64>(out0);",
        ] {
            assert!(g.contains(expected), "missing {expected}\n{g}");
        }
        syn::parse_file(&g).unwrap();
        let shared = site_glue(
            &m,
            "abc",
            Linkage::Shared("/x/libp.so"),
            "src/a.rs:1:1",
            &[(&sig, vec![])],
        )
        .unwrap();
        assert!(!shared.contains("extern \"C\" {"));
        // A CUDA library's raw arrays are device memory: the shared (CUDA) glue copies.
        assert!(shared.contains(
            "c.own(new0(c.ctx(), p0, s0[0]), \"futhark_free_f64_1d\", \"futhark_new_f64_1d\")?;"
        ));
        assert!(shared.contains("FutharkLookup::Shared(\"/x/libp.so\")"));
        syn::parse_file(&shared).unwrap();
    }

    /// `isize` and `usize` cross as Futhark's `i64` and `u64`, which the manifest names.
    #[test]
    fn pointer_sized_integers_are_futhark_s_64_bit_ones() {
        let m = Manifest::parse(SAMPLE).unwrap();
        let mut sig = site_a();
        sig.params[1].ty = FutType::Prim(Number::Isize);
        sig.params[1].leaves = vec![leaf("c", FutType::Prim(Number::Isize))];
        check(&m, &sig).unwrap();
        sig.params[1].leaves = vec![leaf("c", FutType::Prim(Number::Usize))];
        assert!(check(&m, &sig).unwrap_err().contains("takes"));
    }

    #[test]
    fn mismatched_entries_are_refused() {
        let m = Manifest::parse(SAMPLE).unwrap();
        let mut sig = site_a();
        sig.params.swap(0, 1);
        assert!(check(&m, &sig).unwrap_err().contains("takes"));
        let mut sig = site_a();
        sig.name = "site_b".into();
        // site_b takes a [][]i64 and returns an opaque tuple.
        assert!(check(&m, &sig).is_err());
        sig.name = "nothing".into();
        assert!(check(&m, &sig).unwrap_err().contains("no entry point"));
    }

    #[test]
    fn array_results_are_copied_from_host_memory_and_from_device_memory_with_values() {
        let mut m = Manifest::parse(SAMPLE).unwrap();
        let entry: crate::futhark::manifest::EntryPoint = serde_json::from_str(
            r#"{"cfun": "futhark_entry_site_c", "tuning_params": [],
                "inputs": [{"name": "s", "type": "[]f64", "unique": false}],
                "outputs": [{"type": "[]f64", "unique": false}]}"#,
        )
        .unwrap();
        m.entry_points.insert("site_c".into(), entry);
        let f64s = FutType::Array(Box::new(FutType::Prim(Number::F64)));
        let mut sig = site_a();
        sig.name = "site_c".into();
        sig.params.truncate(1);
        sig.result = EntryResult {
            ty: f64s.clone(),
            leaves: vec![leaf("out0", f64s)],
        };
        check(&m, &sig).unwrap();
        let glue = |linkage| site_glue(&m, "abc", linkage, "src/c.rs:1:1", &[(&sig, vec![])]);
        let host = glue(Linkage::Static("pmexpr_futhark_x")).unwrap();
        assert!(host.contains(
            "c.array_out_raw::<f64>(out0, 1, \"futhark_shape_f64_1d\", \"futhark_values_raw_f64_1d\")?;"
        ), "{host}");
        assert!(host.contains("fn futhark_values_raw_f64_1d();"), "{host}");
        syn::parse_file(&host).unwrap();
        let device = glue(Linkage::Shared("/x/libp.so")).unwrap();
        assert!(
            device.contains(
                "c.array_out::<f64>(out0, 1, \"futhark_shape_f64_1d\", \"futhark_values_f64_1d\")?;"
            ),
            "{device}"
        );
    }
}
