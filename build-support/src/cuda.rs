//! The CUDA step of the hook: the kernels of every CUDA-class site, written into
//! `OUT_DIR/pmexpr/cuda/<module>.cu`, compiled to PTX (`<module>.ptx`, for `compute_80`, which the
//! driver compiles for newer GPUs too) when NVRTC is found, and the manifest that `accelerate!`
//! reads (`pmexpr/cuda/manifest.txt`, see `pmexpr_core::glue::manifest`): which files each site has,
//! and what the macro needs to launch their kernels, so that the CUDA code is generated here only.
//! A module whose source did not change since the last build is not compiled again, so an
//! incremental build pays only for the sites that changed. Without NVRTC nothing is compiled (the
//! runtime will compile the source at the first call); an NVRTC error is a warning that shows the
//! generated line and names the site.

use std::collections::HashSet;
use std::path::Path;

use pmexpr_core::glue::manifest::{CudaManifest, ManifestSite};
use pmexpr_core::pipeline::cuda_modules;
use pmexpr_core::program::CrateSite;

use crate::nvrtc;
use crate::write::write_output_file;

/// The PTX target: the oldest architecture the GPU machines have; the driver JIT-compiles it for
/// newer ones.
pub(crate) const ARCH: &str = "compute_80";

/// Writes the modules of the CUDA-class sites, compiles the changed ones (on every core; with
/// `ptx` only) and writes the manifest; returns warnings.
pub(crate) fn build(out_dir: &Path, sites: &[CrateSite], ptx: bool) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut manifest = CudaManifest::default();
    let mut generated = Vec::new();
    for site in sites {
        let Ok(compiled) = &site.result else { continue };
        let Some(program) = &compiled.program else {
            continue;
        };
        if program.backend != pmexpr_core::classify::Backend::Cuda {
            continue;
        }
        let cuda = cuda_modules(compiled, program, &site.name)
            .map_err(|why| format!("pmexpr: accelerate! at {} {why}", site.name));
        generated.push((site, cuda));
    }
    // Every module of every site, compiled in parallel: a site has a module per instantiation.
    let jobs: Vec<(&str, &str, Source<'_>)> = generated
        .iter()
        .filter_map(|(site, c)| Some((site, c.as_ref().ok()?)))
        .flat_map(|(site, (record, modules))| {
            record.modules.iter().zip(modules).map(|(files, m)| {
                let source = Source {
                    namespace: &m.namespace,
                    source: &m.source,
                };
                (site.name.as_str(), files.source.as_str(), source)
            })
        })
        .collect();
    // The files of this build: a module that no site has any more (an edited or removed site, an
    // instantiation no longer needed) is deleted, so that OUT_DIR does not grow with every edit.
    let keep: HashSet<String> = jobs
        .iter()
        .flat_map(|(_, relative, m)| [relative.to_string(), ptx_file(m.namespace)])
        .collect();
    remove_stale(out_dir, &keep);
    let mut results = crate::cores::on_every_core(&jobs, |(site, relative, module)| {
        let mut w = Vec::new();
        let r = write_module(out_dir, site, relative, module, ptx, &mut w);
        (r, w)
    })
    .into_iter();
    for (site, cuda) in generated {
        let cuda = cuda.and_then(|(mut record, _)| {
            // Each module's result is taken, so that the next site reads its own.
            let mut failed = None;
            for files in record.modules.iter_mut() {
                let (r, w) = results.next().unwrap_or_else(|| (Ok(None), Vec::new()));
                warnings.extend(w);
                match r {
                    Ok(ptx) => files.ptx = ptx,
                    Err(why) => failed = failed.or(Some(why)),
                }
            }
            failed.map_or(Ok(record), Err)
        });
        if let Err(why) = &cuda {
            warnings.push(why.clone());
        }
        manifest.sites.push(ManifestSite {
            name: site.name.clone(),
            key: site.key,
            cuda,
        });
    }
    if let Err(message) = write_output_file(out_dir, CudaManifest::FILE, &manifest.to_text()) {
        warnings.push(message);
    }
    warnings
}

/// A module's PTX file, relative to `OUT_DIR`.
fn ptx_file(namespace: &str) -> String {
    format!("{}/{namespace}.ptx", CudaManifest::DIR)
}

/// Deletes the `.cu` and `.ptx` files under `OUT_DIR/pmexpr/cuda` that `keep` (paths relative to
/// `out_dir`) does not name.
fn remove_stale(out_dir: &Path, keep: &HashSet<String>) {
    let Ok(entries) = std::fs::read_dir(out_dir.join(CudaManifest::DIR)) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let relative = format!("{}/{name}", CudaManifest::DIR);
        if (name.ends_with(".cu") || name.ends_with(".ptx")) && !keep.contains(&relative) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// A module as the compile step needs it (the generator's `CudaModule` holds spans, which stay
/// on this thread).
struct Source<'a> {
    namespace: &'a str,
    source: &'a str,
}

/// Writes one module's source (`relative` to `out_dir`) and compiles it to PTX when it changed or
/// has none; returns the PTX file, relative to `out_dir`, when there is one. `Err`: the source
/// could not be written (the site runs on the CPU targets; the text is the warning).
fn write_module(
    out_dir: &Path,
    site: &str,
    relative: &str,
    module: &Source<'_>,
    compile: bool,
    warnings: &mut Vec<String>,
) -> Result<Option<String>, String> {
    let ptx = ptx_file(module.namespace);
    let ptx_path = out_dir.join(&ptx);
    let changed = write_output_file(out_dir, relative, module.source)?;
    if !changed && ptx_path.exists() {
        return Ok(Some(ptx));
    }
    // With the PTX step off, NVRTC is not even opened.
    let nvrtc = if compile { nvrtc::nvrtc().ok() } else { None };
    let Some(nvrtc) = nvrtc else {
        // Compiled at the first call instead; a stale PTX must not outlive its source.
        let _ = std::fs::remove_file(&ptx_path);
        return Ok(None);
    };
    match nvrtc.compile_ptx(module.source, &format!("{}.cu", module.namespace), ARCH) {
        Ok(code) => match write_output_file(out_dir, &ptx, &code) {
            Ok(_) => Ok(Some(ptx)),
            Err(message) => {
                let _ = std::fs::remove_file(&ptx_path);
                warnings.push(message);
                Ok(None)
            }
        },
        Err(e) => {
            let _ = std::fs::remove_file(&ptx_path);
            warnings.push(compile_error(site, module.source, &e.to_string()));
            Ok(None)
        }
    }
}

/// An NVRTC failure as the user sees it: the site, NVRTC's first error and the generated line it
/// points at (`module.cu(LINE): error: …`).
fn compile_error(site: &str, source: &str, log: &str) -> String {
    let first = log
        .lines()
        .find(|l| l.contains("error"))
        .unwrap_or(log)
        .trim();
    let line = first
        .split_once("): ")
        .and_then(|(head, _)| head.rsplit_once('('))
        .and_then(|(_, n)| n.parse::<usize>().ok())
        .and_then(|n| {
            source
                .lines()
                .nth(n.saturating_sub(1))
                .map(|l| (n, l.trim()))
        });
    let shown = line.map_or(String::new(), |(n, l)| {
        format!("\n  generated line {n}: {l}")
    });
    format!(
        "pmexpr: internal error: the CUDA code generated for accelerate! at {site} does not compile ({first}){shown}\n  the site will run on the CPU targets; please report this"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_of_no_site_are_removed() {
        let out = std::env::temp_dir().join(format!("pmexpr-stale-{}", std::process::id()));
        let dir = out.join(CudaManifest::DIR);
        std::fs::create_dir_all(&dir).unwrap();
        for f in [
            "pm_a.cu",
            "pm_a.ptx",
            "pm_old.cu",
            "pm_old.ptx",
            "manifest.txt",
        ] {
            std::fs::write(dir.join(f), "x").unwrap();
        }
        let keep: HashSet<String> = ["pm_a.cu", "pm_a.ptx"]
            .iter()
            .map(|f| format!("{}/{f}", CudaManifest::DIR))
            .collect();
        remove_stale(&out, &keep);
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["manifest.txt", "pm_a.cu", "pm_a.ptx"]);
        let _ = std::fs::remove_dir_all(&out);
    }

    #[test]
    fn nvrtc_errors_show_the_generated_line() {
        let source = "int a;\nint b = c;\n";
        let log = "pm_x.cu(2): error: identifier \"c\" is undefined\n1 error detected";
        let w = compile_error("src/a.rs:3:5", source, log);
        assert!(w.contains("accelerate! at src/a.rs:3:5"), "{w}");
        assert!(w.contains("identifier \"c\" is undefined"), "{w}");
        assert!(w.contains("generated line 2: int b = c;"), "{w}");
        let w = compile_error("s", source, "something odd");
        assert!(
            w.contains("(something odd)") && !w.contains("generated line"),
            "{w}"
        );
    }
}
