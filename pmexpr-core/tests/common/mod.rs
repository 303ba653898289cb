//! Drives pmexpr-core's entry points as the macros and the build hook do, on a thread with
//! rustc's 8 MiB main-thread stack, under a time limit.

#![allow(dead_code)]

use std::sync::mpsc;
use std::time::Duration;

use pmexpr_core::classify::Backend;
use pmexpr_core::codegen::rust::CudaBuild;
use pmexpr_core::glue::manifest::{CudaManifest, ManifestSite};
use pmexpr_core::pipeline::cuda_modules;
use pmexpr_core::program::{compile_sites, crate_output};
use pmexpr_core::registry::{ItemKind, Registry, RegistryItem, SiteSource};
use pmexpr_core::{Context, PreludeItem};
use proc_macro2::TokenStream;
use quote::quote;

/// The stack rustc runs proc macros on.
pub const RUSTC_STACK: usize = 8 << 20;

/// What an entry point did with one input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The expansion has no `compile_error!`.
    Expanded,
    /// The expansion reports errors; the first message.
    Refused(String),
    /// The input is not tokens.
    NotTokens,
}

fn outcome(ts: &TokenStream) -> Outcome {
    let text = ts.to_string();
    match text.find("compile_error !") {
        None => Outcome::Expanded,
        Some(i) => {
            let rest = &text[i..];
            let start = rest.find('"').map_or(0, |j| j + 1);
            let end = rest[start..].find('"').map_or(rest.len(), |j| start + j);
            Outcome::Refused(rest[start..end].to_string())
        }
    }
}

fn rt() -> TokenStream {
    quote!(::pmexpr::__private)
}

/// `accelerate!(src)` without the build hook.
pub fn accelerate(src: &str) -> Outcome {
    let Ok(tokens) = src.parse::<TokenStream>() else {
        return Outcome::NotTokens;
    };
    outcome(&pmexpr_core::expand_accelerate(
        tokens,
        &rt(),
        Context::default(),
        None,
    ))
}

/// How deeply the groups (`{…}`, `(…)`, `[…]`) of `accelerate!(src)`'s expansion without the
/// build hook nest: what rustc's parser recurses on.
pub fn expansion_depth(src: &str) -> usize {
    fn depth(ts: TokenStream) -> usize {
        // A worklist, so that measuring a deep expansion does not overflow this stack.
        let mut todo = vec![(ts, 0)];
        let mut max = 0;
        while let Some((ts, d)) = todo.pop() {
            max = max.max(d);
            for t in ts {
                if let proc_macro2::TokenTree::Group(g) = t {
                    todo.push((g.stream(), d + 1));
                }
            }
        }
        max
    }
    let tokens: TokenStream = src.parse().expect("tokens");
    depth(pmexpr_core::expand_accelerate(
        tokens,
        &rt(),
        Context::default(),
        None,
    ))
}

/// `accelerate!(tokens)` without the build hook, from tokens (which a string cannot spell: the
/// invisible groups of a `macro_rules!` that forwards an `$e:expr`).
pub fn accelerate_tokens(tokens: TokenStream) -> Outcome {
    outcome(&pmexpr_core::expand_accelerate(
        tokens,
        &rt(),
        Context::default(),
        None,
    ))
}

/// `#[pmexpr] src` without the build hook.
pub fn pmexpr_fn(src: &str) -> Outcome {
    let Ok(item) = src.parse::<TokenStream>() else {
        return Outcome::NotTokens;
    };
    outcome(&pmexpr_core::expand_pmexpr_fn(
        TokenStream::new(),
        item,
        &rt(),
        Context::default(),
    ))
}

/// `#[derive(pmexpr::Record)] src`.
pub fn derive(src: &str) -> Outcome {
    let Ok(item) = src.parse::<TokenStream>() else {
        return Outcome::NotTokens;
    };
    outcome(&pmexpr_core::expand_derive_record(item, &rt()))
}

/// The build hook's compilation of a crate with one site `accelerate!(site)` and one
/// `#[pmexpr]` function `item` (when given): see [`hook_items`].
pub fn hook(site: &str, item: Option<&str>) -> Outcome {
    hook_items(site, item.as_slice())
}

/// The build hook's compilation of a crate with one site `accelerate!(site)` and the `#[pmexpr]`
/// functions and `#[derive(pmexpr::Record)]` structs `items` (Rust source, each a `fn` or a
/// `struct`): every site compiled, the CUDA modules of each instantiation generated and recorded
/// in the CUDA manifest (written to a fresh `OUT_DIR`), the crate output (Futhark program, dumps)
/// made, then the macro's expansion of the site with the hook's context and manifest.
pub fn hook_items(site: &str, items: &[&str]) -> Outcome {
    let items: Vec<RegistryItem> = items
        .iter()
        .filter_map(|src| {
            // The kind and the name from the first tokens (`syn` would recurse over the rest,
            // which may nest deeply, on this thread).
            let tokens: Vec<proc_macro2::TokenTree> = src
                .parse::<TokenStream>()
                .ok()?
                .into_iter()
                .take(2)
                .collect();
            let kind = match tokens.first()?.to_string().as_str() {
                "fn" => ItemKind::Fn,
                "struct" => ItemKind::Record,
                _ => return None,
            };
            let name = tokens.get(1)?.to_string();
            Some(RegistryItem {
                kind,
                name,
                file: "src/lib.rs".into(),
                line: 1,
                column: 1,
                source: src.to_string(),
            })
        })
        .collect();
    let item_levels: usize = items
        .iter()
        .map(|i| pmexpr_core::stack_levels_of_text(&i.source))
        .sum();
    let registry = Registry::new(
        items,
        vec![SiteSource {
            file: "src/lib.rs".into(),
            line: 2,
            column: 1,
            tokens: site.to_string(),
            // How the macro finds the site in the CUDA manifest.
            key: site
                .parse::<TokenStream>()
                .map_or(0, |t| pmexpr_core::mangle::site_key(&t)),
        }],
    );
    let levels = pmexpr_core::stack_levels_of_text(site).saturating_add(item_levels);
    let manifest = pmexpr_core::with_stack(levels, || {
        let sites = compile_sites(&registry);
        let mut manifest = CudaManifest::default();
        for s in &sites {
            let Ok(compiled) = &s.result else { continue };
            let Some(program) = &compiled.program else {
                continue;
            };
            if program.backend == Backend::Cuda {
                manifest.sites.push(ManifestSite {
                    name: s.name.clone(),
                    key: s.key,
                    cuda: cuda_modules(compiled, program, &s.name).map(|(r, _)| r),
                });
            }
        }
        let _ = crate_output(&sites, true);
        manifest
    });
    let Ok(tokens) = site.parse::<TokenStream>() else {
        return Outcome::NotTokens;
    };
    let out_dir = OutDir::new();
    let manifest_file = out_dir.0.join(CudaManifest::FILE);
    std::fs::create_dir_all(manifest_file.parent().unwrap()).unwrap();
    std::fs::write(&manifest_file, manifest.to_text()).unwrap();
    let prelude: Vec<PreludeItem> = registry.prelude();
    let records = registry.records();
    let cx = Context {
        prelude: Some(&prelude),
        find_item: None,
        records: Some(&records),
    };
    let build = CudaBuild {
        site_name: "src/lib.rs:2:1".into(),
        out_dir: Some(out_dir.0.clone()),
    };
    outcome(&pmexpr_core::expand_accelerate(
        tokens,
        &rt(),
        cx,
        Some(&build),
    ))
}

/// A fresh `OUT_DIR` for one call of [`hook`], removed when dropped.
struct OutDir(std::path::PathBuf);

impl OutDir {
    fn new() -> OutDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        // Tests have cargo's temporary folder, examples the system's.
        let tmp = option_env!("CARGO_TARGET_TMPDIR")
            .map_or_else(std::env::temp_dir, std::path::PathBuf::from);
        let dir = tmp.join(format!("hook-{}-{n}", std::process::id()));
        OutDir(dir)
    }
}

impl Drop for OutDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `f` on a thread with rustc's stack; `None` when it took longer than `limit` (the thread
/// is left behind) and a panic's message as `Err`.
pub fn run_limited<R: Send + 'static>(
    limit: Duration,
    f: impl FnOnce() -> R + Send + 'static,
) -> Option<Result<R, String>> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .stack_size(RUSTC_STACK)
        .spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|e| {
                e.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            });
            let _ = tx.send(r);
        })
        .expect("spawn");
    rx.recv_timeout(limit).ok()
}
