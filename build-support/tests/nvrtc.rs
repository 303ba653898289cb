//! Every CUDA kernel pmexpr generates compiles with NVRTC: the golden corpus of the CUDA code
//! generator (`pmexpr-core/tests/golden/cuda`) and every CUDA-class `accelerate!` site of this
//! repository (scanned as the build hook scans it), for `compute_80` (and each site's first
//! module for `compute_90` too), each kernel present in the PTX by name.
//!
//! Without NVRTC the test says so and passes (machines without CUDA build everything). With the
//! PyPI wheel: `LD_LIBRARY_PATH=$(python3 -c 'import nvidia.cuda_nvrtc, os;
//! print(os.path.dirname(nvidia.cuda_nvrtc.__file__))')/lib cargo test -p pmexpr-build --test nvrtc
//! -- --nocapture` (`PMEXPR_CUDA_DUMP=<dir>` also writes every module there).

use std::path::{Path, PathBuf};

use pmexpr_build::nvrtc::{self, NvrtcError};
use pmexpr_build::scan;
use pmexpr_core::classify::Backend;
use pmexpr_core::codegen::cuda::{CudaModule, ERROR_SYMBOL};
use pmexpr_core::pipeline::cuda_modules;
use pmexpr_core::program::{SiteFailure, compile_sites};

const ARCHS: [&str; 2] = ["compute_80", "compute_90"];

/// The CUDA modules of every CUDA-class site found under `dirs` of `root` (one per
/// instantiation: `codegen::cuda::instantiations`, so i32 and f32 too, as the hook makes them), named
/// `file:line:column`, and how many sites were rejected.
fn modules(root: &Path, dirs: &[&str], exclude: &[PathBuf]) -> (Vec<(String, CudaModule)>, usize) {
    let scan = scan(root, dirs, exclude);
    let mut out = Vec::new();
    let mut rejected = 0;
    for site in compile_sites(&scan.registry) {
        let compiled = match site.result {
            Ok(c) => c,
            Err(SiteFailure::Rejected(_) | SiteFailure::Unparsable(_)) => {
                rejected += 1;
                continue;
            }
        };
        let Some(program) = &compiled.program else {
            continue;
        };
        if program.backend != Backend::Cuda {
            continue;
        }
        match cuda_modules(&compiled, program, &site.name) {
            Ok((_, modules)) => out.extend(modules.into_iter().map(|m| (site.name.clone(), m))),
            Err(e) => panic!("{}: {e}", site.name),
        }
    }
    (out, rejected)
}

fn all_modules() -> Vec<(String, CudaModule)> {
    let core = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pmexpr-core/tests/golden");
    let (golden, rejected) = modules(&core, &["cuda"], &[]);
    assert_eq!(rejected, 0, "every golden corpus site compiles");
    assert!(
        golden.len() >= 13,
        "the golden corpus: {} modules",
        golden.len()
    );
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // As the repository's build.rs scans it: the compile-fail fixtures are separate programs.
    let (sites, _) = modules(
        &repo,
        pmexpr_core::registry::DEFAULT_DIRS,
        &[PathBuf::from("tests/ui")],
    );
    assert!(
        sites
            .iter()
            .any(|(n, _)| n.starts_with("examples/listing1.rs")),
        "Listing 1's CUDA site is among them"
    );
    golden.into_iter().chain(sites).collect()
}

/// Whether `tool` must be found here: named in `PMEXPR_REQUIRE` (comma-separated; CI sets it, so
/// that the check fails where it would skip).
fn required(tool: &str) -> bool {
    std::env::var("PMEXPR_REQUIRE").is_ok_and(|v| v.split(',').any(|t| t.trim() == tool))
}

#[test]
fn every_generated_kernel_compiles_with_nvrtc() {
    // Generation itself needs no NVRTC: check it everywhere.
    let modules = all_modules();
    let nvrtc = match nvrtc::nvrtc() {
        Ok(n) => n,
        Err(e @ NvrtcError::NotFound { .. }) if required("nvrtc") => {
            panic!("NVRTC is required here (PMEXPR_REQUIRE): {e}")
        }
        Err(e @ NvrtcError::NotFound { .. }) => {
            println!(
                "skipped: NVRTC compile check ({} modules generated): {e}",
                modules.len()
            );
            return;
        }
        Err(e) => panic!("{e}"),
    };
    // For a look at the code: PMEXPR_CUDA_DUMP=<dir> writes every module there.
    if let Some(dir) = std::env::var_os("PMEXPR_CUDA_DUMP") {
        std::fs::create_dir_all(&dir).unwrap();
        for (_, m) in &modules {
            std::fs::write(
                Path::new(&dir).join(format!("{}.cu", m.namespace)),
                &m.source,
            )
            .unwrap();
        }
    }
    let (major, minor) = nvrtc.version();
    println!("NVRTC {major}.{minor} from {}", nvrtc.path());
    // Each module for `compute_80`; the first of each site (its `i64` instantiation) for
    // `compute_90` too: the instantiations differ in their types, not in what an architecture
    // sees. On every core: NVRTC compiles one program per call, and thread-safely.
    let first: Vec<bool> = (0..modules.len())
        .map(|k| k == 0 || modules[k - 1].0 != modules[k].0)
        .collect();
    // The generator's modules hold spans, which stay on this thread: the threads get the text.
    let texts: Vec<(&str, &str, &str, Vec<&str>, bool)> = modules
        .iter()
        .zip(&first)
        .map(|((site, m), &first)| {
            let kernels = m.kernels.iter().map(|k| k.name.as_str()).collect();
            (&**site, &*m.namespace, &*m.source, kernels, first)
        })
        .collect();
    pmexpr_build::cores::on_every_core(&texts, |(site, namespace, source, kernels, first)| {
        let archs = if *first { &ARCHS[..] } else { &ARCHS[..1] };
        for arch in archs {
            let ptx = nvrtc
                .compile_ptx(source, &format!("{namespace}.cu"), arch)
                .unwrap_or_else(|e| panic!("{site} ({namespace}): {e}"));
            for name in kernels {
                assert!(
                    ptx.contains(&format!(".entry {name}(")),
                    "{site}: kernel {name} not in the PTX for {arch}"
                );
            }
            assert!(
                ptx.contains(ERROR_SYMBOL),
                "{site}: no {ERROR_SYMBOL} in the PTX"
            );
        }
    });
    let mut kernels = 0;
    for (site, m) in &modules {
        kernels += m.kernels.len();
        let names: Vec<&str> = m.kernels.iter().map(|k| k.name.as_str()).collect();
        println!("  {site}: {}", names.join(", "));
    }
    // The first module of every site in one program, and a site's instantiations in another:
    // the shared prelude is guarded, the rest is namespaced.
    let together = |pick: &dyn Fn(usize) -> bool, what: &str| {
        let chosen: Vec<&CudaModule> = (0..modules.len())
            .filter(|&k| pick(k))
            .map(|k| &modules[k].1)
            .collect();
        let all: String = chosen.iter().map(|m| m.source.as_str()).collect();
        let ptx = nvrtc
            .compile_ptx(&all, "all.cu", ARCHS[0])
            .unwrap_or_else(|e| panic!("{what} in one program: {e}"));
        let want: usize = chosen.iter().map(|m| m.kernels.len()).sum();
        assert_eq!(
            ptx.matches(".entry ").count(),
            want,
            "{what}: one entry per kernel"
        );
    };
    together(&|k| first[k], "every site's first module");
    let widest = (0..modules.len())
        .max_by_key(|&k| modules.iter().filter(|(s, _)| *s == modules[k].0).count())
        .map(|k| modules[k].0.clone())
        .unwrap_or_default();
    together(&|k| modules[k].0 == widest, "a site's instantiations");
    println!(
        "compiled {} modules ({kernels} kernels) for {} (each site's first module for both), each site's first module as one program and {widest}'s instantiations as another",
        modules.len(),
        ARCHS.join(" and ")
    );
}

#[test]
fn compile_errors_carry_the_log() {
    let Ok(nvrtc) = nvrtc::nvrtc() else {
        assert!(
            !required("nvrtc"),
            "NVRTC is required here (PMEXPR_REQUIRE)"
        );
        println!("skipped: NVRTC not found");
        return;
    };
    let e = nvrtc
        .compile_ptx(
            "__global__ void k() { undeclared(); }",
            "broken.cu",
            "compute_80",
        )
        .unwrap_err();
    match &e {
        NvrtcError::Compile { name, arch, log } => {
            assert_eq!(name, "broken.cu");
            assert_eq!(arch, "compute_80");
            assert!(log.contains("undeclared"), "{log}");
        }
        other => panic!("{other}"),
    }
}
