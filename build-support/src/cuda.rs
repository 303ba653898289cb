//! The CUDA step of the hook: the kernels of every CUDA-class site, written into
//! `OUT_DIR/pmexpr/cuda/<module>.cu`, and compiled to PTX (`<module>.ptx`, for `compute_80`, which
//! the driver compiles for newer GPUs too) when NVRTC is found. A module whose source did not
//! change since the last build is not compiled again, so an incremental build pays only for the
//! sites that changed. Without NVRTC nothing is compiled (the runtime will compile the source at
//! the first call); an NVRTC error is a warning that shows the generated line and names the site.

use std::path::Path;

use pmexpr_core::classify::Backend;
use pmexpr_core::codegen::cuda::{CudaOptions, generate, instantiations};
use pmexpr_core::codegen::rust::cuda_host::unsupported_host;
use pmexpr_core::program::CrateSite;

use crate::nvrtc;
use crate::write::write_output_file;

/// The PTX target: the oldest architecture the GPU machines have; the driver JIT-compiles it for
/// newer ones.
pub(crate) const ARCH: &str = "compute_80";

/// Writes the modules of the CUDA-class sites and compiles the changed ones; returns warnings.
pub(crate) fn build(out_dir: &Path, sites: &[CrateSite]) -> Vec<String> {
    let mut warnings = Vec::new();
    for site in sites {
        let Ok(compiled) = &site.result else { continue };
        let Some(program) = &compiled.program else {
            continue;
        };
        if program.backend != Backend::Cuda {
            continue;
        }
        for (i, inst) in instantiations(&compiled.mono.numeric)
            .into_iter()
            .enumerate()
        {
            let module = match generate(program, &inst, &CudaOptions::for_site(&site.name)) {
                Ok(m) => {
                    if let Some(why) = (i == 0)
                        .then(|| unsupported_host(&compiled.mono, program, &m))
                        .flatten()
                    {
                        warnings.push(format!(
                            "pmexpr: accelerate! at {} will run on the CPU targets: {why}",
                            site.name
                        ));
                    }
                    m
                }
                Err(e) => {
                    warnings.push(format!(
                        "pmexpr: accelerate! at {} cannot run on the CUDA backend and will run on the CPU targets: {e}",
                        site.name
                    ));
                    break;
                }
            };
            let base = format!("pmexpr/cuda/{}", module.namespace);
            let cu = format!("{base}.cu");
            let ptx_path = out_dir.join(format!("{base}.ptx"));
            let changed = match write_output_file(out_dir, &cu, &module.source) {
                Ok(changed) => changed,
                Err(message) => {
                    warnings.push(message);
                    continue;
                }
            };
            if !changed && ptx_path.exists() {
                continue;
            }
            let Ok(nvrtc) = nvrtc::nvrtc() else {
                // Compiled at the first call instead; a stale PTX must not outlive its source.
                let _ = std::fs::remove_file(&ptx_path);
                continue;
            };
            match nvrtc.compile_ptx(&module.source, &format!("{}.cu", module.namespace), ARCH) {
                Ok(ptx) => {
                    if let Err(message) = write_output_file(out_dir, &format!("{base}.ptx"), &ptx) {
                        warnings.push(message);
                    }
                }
                Err(e) => {
                    let _ = std::fs::remove_file(&ptx_path);
                    warnings.push(compile_error(&site.name, &module.source, &e.to_string()));
                }
            }
        }
    }
    warnings
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
