//! Building the Futhark library of a crate: `futhark <flavour> --library` over the generated
//! program, the C compiled with the `cc` crate (a static library for `c` and `multicore`, a shared
//! one for `cuda`), and the glue of every site whose entry points the manifest confirms.
//!
//! Layout under `OUT_DIR/pmexpr/futhark/`: `program.fut` (written by the hook before), `lib/`
//! (`pmexpr_futhark.{c,h,json}`, the compiled library, a stamp), `glue/<site>.rs`. An unchanged
//! program is not compiled again. Without a library, `glue/` is removed, so that no site includes
//! stale glue.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use pmexpr_core::codegen::futhark::{CrateFuthark, EntrySignature};
use pmexpr_core::types::TyVar;

use super::Flavour;
use super::glue::{Linkage, check, site_glue, tag};
use super::manifest::Manifest;
use crate::write::write_if_changed;

/// The base name of the generated C files.
const BASE: &str = "pmexpr_futhark";

/// What the hook tells Cargo and the user after building the library.
#[derive(Debug, Default)]
pub struct Built {
    /// `cargo:` directives (link search path and library, the environment of the crate).
    pub directives: Vec<String>,
    /// Warnings (entry points left out).
    pub warnings: Vec<String>,
    /// The sites that got glue.
    pub sites: Vec<String>,
}

/// The directory of the library's files.
pub fn futhark_dir(out_dir: &Path) -> PathBuf {
    out_dir.join("pmexpr").join("futhark")
}

/// The glue file of a site (named like its entry points, without the number types).
pub fn glue_file(out_dir: &Path, site: &str) -> PathBuf {
    let name = pmexpr_core::codegen::futhark::entry_name(site, &Default::default());
    futhark_dir(out_dir).join("glue").join(format!("{name}.rs"))
}

/// Removes every site's glue (when there is no library to call).
pub fn remove_glue(out_dir: &Path) {
    let _ = fs::remove_dir_all(futhark_dir(out_dir).join("glue"));
}

/// FNV-1a, 64 bits: a stable hash (not `DefaultHasher`, which may change between releases).
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
    })
}

/// Builds the library and the glue; an error says why the Futhark-class sites run on the CPU.
pub fn build(
    out_dir: &Path,
    compiler: &Path,
    flavour: Flavour,
    program: &CrateFuthark,
    numeric_order: &HashMap<String, Vec<TyVar>>,
) -> Result<Built, String> {
    let dir = futhark_dir(out_dir);
    let lib_dir = dir.join("lib");
    fs::create_dir_all(&lib_dir)
        .map_err(|e| format!("cannot create {}: {e}", lib_dir.display()))?;
    let source = &program.program.source;
    let id = format!(
        "{:016x}",
        fnv(format!("{source}\n{}\n{}", flavour.command(), compiler.display()).as_bytes())
    );
    let lib_name = format!("{BASE}_{}", &id[..12]);
    let artifact = match flavour {
        Flavour::Cuda => lib_dir.join(format!("lib{lib_name}.so")),
        _ => lib_dir.join(format!("lib{lib_name}.a")),
    };
    let stamp = lib_dir.join("stamp");
    let manifest_path = lib_dir.join(format!("{BASE}.json"));
    let fresh = fs::read_to_string(&stamp).is_ok_and(|s| s == id)
        && artifact.is_file()
        && manifest_path.is_file();
    if !fresh {
        let _ = fs::remove_file(&stamp);
        run_futhark(compiler, flavour, &dir.join("program.fut"), &lib_dir)?;
        compile_c(flavour, &lib_dir, &lib_name)?;
        fs::write(&stamp, &id).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
    }
    let manifest_text = fs::read_to_string(&manifest_path)
        .map_err(|e| format!("cannot read {}: {e}", manifest_path.display()))?;
    let manifest = Manifest::parse(&manifest_text)?;

    let mut built = Built::default();
    // The entries by site, each checked against the manifest.
    let mut by_site: BTreeMap<&str, Vec<(&EntrySignature, Vec<&'static str>)>> = BTreeMap::new();
    for sig in &program.program.entries {
        if let Err(why) = check(&manifest, sig) {
            built.warnings.push(format!(
                "pmexpr: the Futhark library cannot be called for accelerate! at {} ({why}); it runs on the CPU targets for those number types",
                sig.site
            ));
            continue;
        }
        let order = numeric_order.get(&sig.site).cloned().unwrap_or_default();
        let tags: Option<Vec<&'static str>> = order
            .iter()
            .map(|v| sig.instantiation.get(v).map(|p| tag(*p)))
            .collect();
        let Some(tags) = tags else {
            continue;
        };
        by_site.entry(&sig.site).or_default().push((sig, tags));
    }
    let shared = artifact.display().to_string();
    let linkage = match flavour {
        Flavour::Cuda => Linkage::Shared(&shared),
        _ => Linkage::Static,
    };
    let glue_dir = dir.join("glue");
    let mut keep = Vec::new();
    for (site, entries) in &by_site {
        let text = site_glue(&manifest, &id, linkage, site, entries)?;
        let file = glue_file(out_dir, site);
        write_if_changed(&file, &text)
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        keep.push(file);
        built.sites.push(site.to_string());
    }
    // Glue of sites that no longer exist would be harmless, but stale: remove it.
    if let Ok(listing) = fs::read_dir(&glue_dir) {
        for f in listing.filter_map(|e| e.ok().map(|e| e.path())) {
            if !keep.contains(&f) {
                let _ = fs::remove_file(f);
            }
        }
    }
    if flavour != Flavour::Cuda {
        built.directives.extend([
            format!("cargo:rustc-link-search=native={}", lib_dir.display()),
            format!("cargo:rustc-link-lib=static={lib_name}"),
            "cargo:rustc-link-lib=m".to_string(),
        ]);
    }
    built.directives.push(format!(
        "cargo:rustc-env=PMEXPR_FUTHARK_LIBRARY={}",
        flavour.command()
    ));
    Ok(built)
}

/// `futhark <flavour> --library -o lib/pmexpr_futhark program.fut`.
fn run_futhark(
    compiler: &Path,
    flavour: Flavour,
    program: &Path,
    lib_dir: &Path,
) -> Result<(), String> {
    let out = Command::new(compiler)
        .arg(flavour.command())
        .arg("--library")
        .arg("-o")
        .arg(lib_dir.join(BASE))
        .arg(program)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", compiler.display()))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let shown: Vec<&str> = stderr.lines().take(30).collect();
    Err(format!(
        "`futhark {} --library` failed on {} (a bug in pmexpr's Futhark generator: please report it):\n{}",
        flavour.command(),
        program.display(),
        shown.join("\n")
    ))
}

/// Compiles `lib/pmexpr_futhark.c`: a static library for `c` and `multicore`, a shared library
/// for `cuda` (linked against the CUDA driver and NVRTC, loaded only on a machine with a GPU).
fn compile_c(flavour: Flavour, lib_dir: &Path, lib_name: &str) -> Result<(), String> {
    let c_file = lib_dir.join(format!("{BASE}.c"));
    let mut build = cc::Build::new();
    build
        .file(&c_file)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .warnings(false)
        .debug(false)
        // The generated C is the hot loop: optimize it even in debug builds.
        .opt_level(3)
        .std("c99")
        .out_dir(lib_dir.join("obj"));
    if flavour == Flavour::Multicore {
        build.flag("-pthread");
    }
    match flavour {
        Flavour::C | Flavour::Multicore => build
            .try_compile(lib_name)
            .map_err(|e| format!("the C compiler failed on {}: {e}", c_file.display())),
        Flavour::Cuda => {
            let cuda_home = ["CUDA_HOME", "CUDA_PATH"]
                .iter()
                .find_map(std::env::var_os)
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/usr/local/cuda"));
            build.include(cuda_home.join("include")).pic(true);
            let compiler = build
                .try_get_compiler()
                .map_err(|e| format!("no C compiler: {e}"))?;
            let so = lib_dir.join(format!("lib{lib_name}.so"));
            let mut cmd = compiler.to_command();
            cmd.arg("-shared").arg("-o").arg(&so).arg(&c_file);
            for sub in ["lib64", "lib64/stubs", "lib"] {
                cmd.arg(format!("-L{}", cuda_home.join(sub).display()));
            }
            cmd.args(["-lcuda", "-lnvrtc", "-lm", "-pthread"]);
            let out = cmd
                .output()
                .map_err(|e| format!("cannot run the C compiler: {e}"))?;
            if out.status.success() {
                Ok(())
            } else {
                let stderr = String::from_utf8_lossy(&out.stderr);
                let shown: Vec<&str> = stderr.lines().take(20).collect();
                Err(format!(
                    "the C compiler failed on {} for the cuda flavour (are the CUDA headers and libraries under CUDA_HOME?):\n{}",
                    c_file.display(),
                    shown.join("\n")
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glue_files_are_named_after_the_site() {
        let f = glue_file(Path::new("/out"), "src/lib.rs:3:5");
        assert_eq!(
            f,
            Path::new("/out/pmexpr/futhark/glue/site_src_lib_rs_3_5.rs")
        );
        assert_ne!(fnv(b"a"), fnv(b"b"));
    }
}
