//! What the build hook makes of a crate: every site compiled, their programs merged
//! ([`crate::merge`]), the Futhark program of the Futhark-class sites generated, and the files to
//! write.

use std::collections::HashMap;
use std::fmt::Write;

use crate::classify::Backend;
use crate::codegen::futhark;
use crate::merge::merge;
use crate::pretty;
use crate::site::SiteProgram;
use crate::types::TyVar;

/// What the build hook writes for a crate.
#[derive(Debug, Default)]
pub struct CrateOutput {
    /// Files to write into `OUT_DIR`: (relative path, contents).
    pub files: Vec<(String, String)>,
    /// Lines to show the user as cargo warnings.
    pub warnings: Vec<String>,
    /// Every site that compiled and has a GPU backend (`file:line:column`, backend).
    pub sites: Vec<(String, Backend)>,
    /// The Futhark program of the Futhark-class sites, when there are some (its source is also
    /// in [`CrateOutput::files`] as [`FUTHARK_FILE`]).
    pub futhark: Option<futhark::CrateFuthark>,
    /// For each site, its number type variables in the order of the site's captured values (the
    /// order in which generated code lists their Rust types).
    pub numeric_order: HashMap<String, Vec<TyVar>>,
}

/// The file, under `OUT_DIR`, that holds the extracted accelerated program of the crate.
pub const PROGRAM_FILE: &str = "pmexpr/accelerated.pmexpr";

/// The file, under `OUT_DIR`, that holds the Futhark program of the crate's Futhark-class sites
/// (written only when there are some).
pub const FUTHARK_FILE: &str = "pmexpr/futhark/program.fut";

/// One `accelerate!` site of the crate after [`compile_sites`].
#[derive(Debug)]
pub struct CrateSite {
    /// `file:line:column` of the `accelerate` identifier.
    pub name: String,
    /// [`crate::mangle::site_key`] of the macro input, as the registry recorded it.
    pub key: u64,
    /// The macro input as text.
    pub tokens: String,
    /// The compiled site, or why it is not.
    pub result: Result<crate::site::CompiledSite, SiteFailure>,
}

/// Why a site of the crate did not compile.
#[derive(Debug)]
pub enum SiteFailure {
    /// The tokens recorded in the registry do not parse (the message says why).
    Unparsable(String),
    /// The compiler rejected the site (the macro reports these errors at its tokens).
    Rejected(crate::error::Errors),
}

/// Compiles every site of the registry with the crate's `#[pmexpr]` functions and `Record`
/// structs, in registry order: what [`compile_crate`] and the GPU code generators start from.
pub fn compile_sites(registry: &crate::registry::Registry) -> Vec<CrateSite> {
    use crate::pipeline::check;
    use crate::site::Context;
    // What a site sees depends only on whether its file is a crate of its own: computed once per
    // such crate.
    let mut records = std::collections::HashMap::new();
    registry
        .sites
        .iter()
        .map(|s| {
            let prelude = registry.prelude_for(Some(std::path::Path::new(&s.file)));
            let records = records
                .entry(crate::registry::own_crate_key(&s.file))
                .or_insert_with(|| registry.records_for(Some(std::path::Path::new(&s.file))));
            let cx = Context {
                prelude: Some(&prelude),
                find_item: None,
                records: Some(records),
            };
            CrateSite {
                name: s.name(),
                key: s.key,
                tokens: s.tokens.clone(),
                result: match s.tokens.parse::<proc_macro2::TokenStream>() {
                    Err(e) => Err(SiteFailure::Unparsable(e.to_string())),
                    Ok(tokens) => check(tokens, cx).map_err(|(e, _)| SiteFailure::Rejected(e)),
                },
            }
        })
        .collect()
}

/// The optimizer's output for the CPU targets, in a site's dump: the program (fused compositions
/// print as `fused …`) and what the passes found.
fn optimized_dump(text: &mut String, site: &crate::site::CompiledSite) {
    let o = crate::pipeline::optimize(site);
    let facts = &o.cpu.facts;
    let _ = writeln!(
        text,
        "\noptimized for the CPU targets:\n{}",
        crate::pretty::expr(&o.cpu.expr, &o.names)
    );
    let grids = facts.loops.values().filter(|l| l.grid.is_some()).count();
    let plain = facts.loops.values().filter(|l| l.plain).count();
    let windowed = (facts.loops.values())
        .filter(|l| !l.accesses.is_empty())
        .count();
    let peeled = facts.rows.values().filter(|r| !r.peel.is_empty()).count();
    let _ = writeln!(
        text,
        "facts: {} maps of rows ({peeled} peeled), {} folds that stop once settled, {windowed} loops with lines ({plain} plain), {grids} grids",
        facts.rows.len(),
        facts.settled.len(),
    );
    for w in crate::opt::moves::writes(&o.cpu.expr, facts, &o.names) {
        let _ = writeln!(text, "write: {w}");
    }
    let mut levels = 0;
    o.cpu.expr.walk(&mut |x| {
        use crate::ast::ExprKind;
        use crate::intrinsics::KeywordClass;
        levels += usize::from(match &x.kind {
            ExprKind::Keyword { kw, .. } => kw.row().class == KeywordClass::Functional,
            ExprKind::Soac(_) => true,
            _ => false,
        });
    });
    if levels > 0 {
        let _ = writeln!(
            text,
            "granularity: on `cpu`, each of the {levels} functional parallel keywords (fused or \
             not) runs on the calling thread while its measured cost is under 20 µs (its first \
             call is timed, then now and then again); larger ones go to the thread pool"
        );
    }
    if let Some(p) = site.program.as_ref().filter(|p| p.backend == Backend::Cuda) {
        kernels_dump(text, p, &o);
    }
}

/// The kernel split of a CUDA-class site, in its dump: each launch and what host code does
/// around them, or why the site has no kernels.
fn kernels_dump(text: &mut String, p: &SiteProgram, o: &crate::opt::Optimized) {
    let name = |id: &crate::ast::VarId| p.lifted.names[id.0 as usize].as_str();
    let split = match crate::pipeline::kernels(p, o) {
        Ok(split) => split,
        Err(why) => {
            let _ = writeln!(text, "\nkernels: none, the site {why}");
            return;
        }
    };
    let _ = writeln!(text, "\nkernels (launched by host code, in this order):");
    for (k, l) in split.launches.iter().enumerate() {
        let what = match l.kind {
            crate::kernels::LaunchKind::ParLoop { callee } => {
                format!("`par_loop` of `{}`", name(&callee))
            }
            crate::kernels::LaunchKind::Gemm => "`tensor_gemm`".to_string(),
        };
        let _ = writeln!(
            text,
            "  k{k}: {what}, launch #{} of `{}`, {} arguments and n",
            l.ordinal,
            name(&l.binding),
            l.host_args.len()
        );
    }
    let fns: Vec<&str> = split.functions.iter().map(name).collect();
    let _ = writeln!(text, "host functions that launch: {}", fns.join(", "));
    for n in &split.notes {
        let _ = writeln!(text, "  {}", n.construct);
    }
    let _ = writeln!(
        text,
        "tensors {} between launches",
        if split.resident {
            "stay on the device"
        } else {
            "are copied back (host code reads or writes their elements)"
        }
    );
}

/// Runs the compiler over the whole crate: every site with the `#[pmexpr]` functions, merged and
/// extracted per backend, and the Futhark program of the Futhark-class sites ([`FUTHARK_FILE`]);
/// with `dump`, one readable file per site under `pmexpr-dump/`. Sites with errors are left out
/// (the macro reports them at their tokens).
pub fn compile_crate(registry: &crate::registry::Registry, dump: bool) -> CrateOutput {
    crate_output(&compile_sites(registry), dump)
}

/// [`compile_crate`] from the sites [`compile_sites`] compiled (so that other steps of the build
/// hook can use them too).
pub fn crate_output(sites: &[CrateSite], dump: bool) -> CrateOutput {
    let mut out = CrateOutput::default();
    let mut programs = Vec::new();
    for site in sites {
        let name = site.name.clone();
        let mut text = format!("// accelerate! at {name}\n{}\n\n", site.tokens);
        match &site.result {
            Err(SiteFailure::Unparsable(e)) => {
                let _ = writeln!(text, "not compiled: the tokens do not parse ({e})");
            }
            Err(SiteFailure::Rejected(errors)) => {
                let _ = writeln!(text, "rejected (the compiler reports these at the site):");
                for e in errors {
                    let _ = writeln!(text, "  error: {}", e.text().replace('\n', "\n  "));
                }
            }
            Ok(site) => {
                match &site.program {
                    None => {
                        let _ = writeln!(text, "backend = cpu: runs on the CPU targets only");
                    }
                    Some(p) => {
                        site_dump(&mut text, &name, p);
                        programs.push((name.clone(), p.clone()));
                    }
                }
                if dump {
                    optimized_dump(&mut text, site);
                }
            }
        }
        if dump {
            let file = crate::mangle::dump_file(&name);
            out.files.push((format!("pmexpr-dump/{file}"), text));
        }
    }
    out.sites = programs
        .iter()
        .map(|(n, p)| (n.clone(), p.backend))
        .collect();
    let refs: Vec<(String, &SiteProgram)> = programs.iter().map(|(n, p)| (n.clone(), p)).collect();
    let merged = merge(&refs);
    out.files.push((PROGRAM_FILE.to_string(), merged.print()));
    for (site, a, _) in &merged.sites {
        let order = merged
            .numeric
            .get(a)
            .map_or_else(Vec::new, |n| n.iter().map(|(v, _)| *v).collect());
        out.numeric_order.insert(site.clone(), order);
    }
    if let Some(f) = futhark::generate_crate(&merged) {
        out.files
            .push((FUTHARK_FILE.to_string(), f.program.source.clone()));
        out.futhark = Some(f);
    }
    out
}

/// The readable account of one site: lifted, extracted, classified, and its Futhark code when it
/// is of the Futhark class.
fn site_dump(text: &mut String, name: &str, p: &SiteProgram) {
    let l = &p.lifted;
    let params: Vec<String> = l
        .params
        .iter()
        .map(|p| format!("{}: {}", p.ident.name, p.ty))
        .collect();
    let _ = writeln!(
        text,
        "captured (parameters of the accelerated binding): {}",
        params.join(", ")
    );
    let _ = writeln!(text, "\n// after accelerated bindings and lambda lifting");
    text.push_str(&pretty::bindings(&l.bindings, &l.names));
    let mut ids: Vec<&str> = p
        .extracted_ids
        .iter()
        .map(|i| l.names[i.0 as usize].as_str())
        .collect();
    ids.sort();
    let _ = writeln!(text, "\n// extracted: {{{}}}", ids.join(", "));
    text.push_str(&pretty::bindings(&p.extracted, &l.names));
    let c = &p.classification;
    let list = |ks: &[crate::classify::KeywordUse]| {
        ks.iter().map(|k| k.keyword).collect::<Vec<_>>().join(", ")
    };
    let _ = writeln!(
        text,
        "\n// classification: P_F = {} [{}], P_C = {} [{}] → {:?}; backend: {}\n// well-formed for {}",
        c.futhark.len(),
        list(&c.futhark),
        c.cuda.len(),
        list(&c.cuda),
        c.class,
        p.backend,
        p.backend
    );
    if p.backend == Backend::Futhark
        && let Some(f) = futhark::generate_crate(&merge(&[(name.to_string(), p)]))
    {
        let _ = writeln!(
            text,
            "\n// Futhark code of this site ({FUTHARK_FILE} has every site's)"
        );
        text.push_str(&f.program.source);
    }
}
