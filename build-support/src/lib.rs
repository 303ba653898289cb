//! The build-script hook of pmexpr, in the spirit of `cxx_build`:
//!
//! ```no_run
//! // in build.rs, inside `fn main`:
//! pmexpr_build::Build::new()
//!     // Compile-fail tests are not part of the crate.
//!     .exclude("tests/ui")
//!     .compile();
//! ```
//!
//! [`Build::compile`] scans the package's sources for `#[pmexpr]` functions, `Record` structs
//! and `accelerate!` sites ([`scan()`]), writes the registry of what it found to
//! `OUT_DIR/pmexpr-registry.txt` (see `pmexpr_core::registry`) and runs the whole-crate
//! compiler over it, writing its output into `OUT_DIR` too: the extracted program
//! (`pmexpr/accelerated.pmexpr`), the Futhark program of the Futhark-class sites
//! (`pmexpr/futhark/program.fut`; where the `futhark` compiler is found, also its C library and
//! each site's glue, see [`futhark`]) and the CUDA kernels of the CUDA-class sites
//! (`pmexpr/cuda/<module>.cu`, and `<module>.ptx` when NVRTC is found; an unchanged module is not
//! compiled again) with their manifest (`pmexpr/cuda/manifest.txt`, see
//! `pmexpr_core::glue::manifest`), from which `accelerate!` embeds them: the CUDA code is generated
//! here only, so a crate without the hook has no CUDA kernels (its CUDA-class sites run on the
//! CPU targets, and the `cuda` target fails at them saying so). It never fails the build: a
//! missing tool or an internal error is a warning, and the sites run on the CPU targets.
//!
//! [`nvrtc`] opens NVRTC, CUDA's runtime compiler, when it is installed, and compiles CUDA C++ to
//! PTX (`PMEXPR_NVRTC` names the library to use). [`futhark`] finds the Futhark compiler
//! (`PMEXPR_FUTHARK`, else `PATH`), runs `futhark <flavour> --library`
//! (`PMEXPR_FUTHARK_BACKEND=multicore|c|cuda`), compiles the C with the `cc` crate and generates
//! each site's glue from the manifest.
//!
//! Without `futhark`, the normal case, the build is quiet: a warning that the Futhark-class sites
//! run on the CPU targets comes only when the user asked for Futhark ([`Build::futhark`],
//! `PMEXPR_FUTHARK` or `PMEXPR_FUTHARK_BACKEND` set) or for the site dumps.
//!
//! Environment variables: `PMEXPR_DUMP` (set, and not `0`) asks the compiler for a dump of every
//! site under `OUT_DIR/pmexpr-dump`; `PMEXPR_VERBOSE` (likewise) shows the files that the scan
//! skipped because they do not parse.

#![warn(missing_docs)]

pub mod cores;
mod cuda;
pub mod futhark;
pub use pmexpr_nvrtc as nvrtc;
mod report;
mod scan;
#[cfg(test)]
mod test_support;
mod write;

use std::env;
use std::path::{Path, PathBuf};

use pmexpr_core::glue::manifest::CudaManifest;
use pmexpr_core::program::{compile_sites, crate_output};
use pmexpr_core::registry::{DEFAULT_DIRS, Registry};

pub use scan::{Scan, scan};

/// The configuration of the build hook.
#[derive(Debug, Clone)]
pub struct Build {
    dirs: Vec<String>,
    exclude: Vec<PathBuf>,
    futhark: bool,
}

impl Default for Build {
    fn default() -> Self {
        Build {
            dirs: DEFAULT_DIRS.iter().map(|d| d.to_string()).collect(),
            exclude: Vec::new(),
            futhark: false,
        }
    }
}

/// The switches read from the environment, passed explicitly so that tests need not set it.
#[derive(Debug, Clone, Copy, Default)]
struct Flags {
    dump: bool,
    verbose: bool,
    /// `PMEXPR_FUTHARK` or `PMEXPR_FUTHARK_BACKEND` is set: the user asked for the Futhark
    /// backend, so its absence is worth a warning.
    futhark_asked: bool,
    /// `PMEXPR_PTX=0`: the CUDA modules are not compiled to PTX here even where NVRTC is found
    /// (the runtime compiles a module's source at its first call), as a build that never runs
    /// them on a GPU (a check, a CI run whose NVRTC test compiles every module anyway) wants.
    no_ptx: bool,
}

impl Build {
    /// The default configuration: scan `src`, `examples`, `tests` and `benches`, excluding
    /// nothing.
    pub fn new() -> Self {
        Build::default()
    }

    /// Replaces the directories to scan (relative to the package root).
    pub fn dirs(&mut self, dirs: &[&str]) -> &mut Self {
        self.dirs = dirs.iter().map(|d| d.to_string()).collect();
        self
    }

    /// Leaves a file or a directory (relative to the package root) out of the scan; may be
    /// called several times.
    pub fn exclude(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.exclude.push(path.as_ref().to_path_buf());
        self
    }

    /// Says that this package wants the Futhark backend: without the `futhark` compiler, the build
    /// then warns that its Futhark-class sites run on the CPU targets. Without this (nor
    /// `PMEXPR_FUTHARK`, `PMEXPR_FUTHARK_BACKEND` or `PMEXPR_DUMP` set) a missing `futhark`, the
    /// normal case, is not worth a warning: those sites simply run on the CPU targets.
    pub fn futhark(&mut self, wanted: bool) -> &mut Self {
        self.futhark = wanted;
        self
    }

    /// Runs the hook from a build script. It never panics and never fails the build: problems
    /// are reported as Cargo warnings (outside a build script, one line on stderr).
    pub fn compile(&self) {
        let (Some(root), Some(out_dir)) =
            (env::var_os("CARGO_MANIFEST_DIR"), env::var_os("OUT_DIR"))
        else {
            eprintln!(
                "pmexpr-build: Build::compile must run from a build script (build.rs): CARGO_MANIFEST_DIR or OUT_DIR is not set"
            );
            return;
        };
        let flags = Flags {
            dump: env_flag("PMEXPR_DUMP"),
            verbose: env_flag("PMEXPR_VERBOSE"),
            futhark_asked: ["PMEXPR_FUTHARK", "PMEXPR_FUTHARK_BACKEND"]
                .iter()
                .any(|v| env::var_os(v).is_some_and(|v| !v.is_empty())),
            no_ptx: env::var_os("PMEXPR_PTX").is_some_and(|v| v == "0"),
        };
        for line in self.run(Path::new(&root), Path::new(&out_dir), flags) {
            println!("{line}");
        }
    }

    /// The whole hook for the package at `root`; returns the lines for Cargo.
    fn run(&self, root: &Path, out_dir: &Path, flags: Flags) -> Vec<String> {
        let mut lines = self.rerun_directives(root);
        let dirs: Vec<&str> = self.dirs.iter().map(String::as_str).collect();
        let scan = scan(root, &dirs, &self.exclude);
        lines.extend(report::duplicate_fns(&scan.registry));
        if flags.verbose {
            lines.extend(report::skipped_files(root, &scan.skipped));
        }
        // The package the registry belongs to: OUT_DIR can leak into other builds through the
        // environment (a test that runs cargo, like trybuild), whose macros must not use it.
        let owner_path = out_dir.join(Registry::OWNER_FILE_NAME);
        if let Err(e) = write::write_if_changed(&owner_path, &root.display().to_string()) {
            let message = format!("pmexpr: cannot write {}: {e}", owner_path.display());
            lines.extend(report::warning(&message));
        }
        let registry_path = out_dir.join(Registry::FILE_NAME);
        if let Err(e) = write::write_if_changed(&registry_path, &scan.registry.to_text()) {
            let message = format!("pmexpr: cannot write {}: {e}", registry_path.display());
            lines.extend(report::warning(&message));
        }
        // A bug in a code generator must not fail the user's build: the sites still run on the CPU
        // targets, whose code the macros generate themselves.
        // On a stack sized for the sources, as the macros do (a long `let` chain is deep): the
        // deepest site, with every `#[pmexpr]` function it may include.
        let size = scan
            .registry
            .sites
            .iter()
            .map(|s| pmexpr_core::stack_levels_of_text(&s.tokens))
            .max()
            .unwrap_or(0)
            .saturating_add(
                scan.registry
                    .items
                    .iter()
                    .map(|i| pmexpr_core::stack_levels_of_text(&i.source))
                    .sum::<usize>(),
            );
        let compiled = std::panic::catch_unwind(|| {
            pmexpr_core::with_stack(size, || {
                let sites = compile_sites(&scan.registry);
                let cuda_warnings = cuda::build(out_dir, &sites, !flags.no_ptx);
                (crate_output(&sites, flags.dump), cuda_warnings)
            })
        })
        .map_err(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        });
        let (output, cuda_warnings) = match compiled {
            Ok(compiled) => compiled,
            Err(why) => {
                // A manifest of an earlier build must not outlive this one's sites.
                let _ = std::fs::remove_file(out_dir.join(CudaManifest::FILE));
                let message = format!(
                    "pmexpr: internal error while compiling the crate's accelerate! sites ({why}); they run on the CPU targets. Please report this."
                );
                lines.extend(report::warning(&message));
                return lines;
            }
        };
        for (relative, contents) in &output.files {
            if let Err(message) = write::write_output_file(out_dir, relative, contents) {
                lines.extend(report::warning(&message));
            }
        }
        for message in output.warnings.iter().chain(&cuda_warnings) {
            lines.extend(report::warning(message));
        }
        lines.extend(self.futhark_library(out_dir, &output, flags));
        if flags.dump {
            let dumps = out_dir.join("pmexpr-dump");
            let message = format!("pmexpr: site dumps written to {}", dumps.display());
            lines.extend(report::warning(&message));
        }
        lines
    }

    /// The Futhark-class sites: compiled by `futhark` where it is found (the library and each
    /// site's glue, see [`futhark::library`]), else they run on the CPU targets, which one warning
    /// says when the user asked for Futhark ([`Build::futhark`], `PMEXPR_FUTHARK`,
    /// `PMEXPR_FUTHARK_BACKEND`) or for the site dumps.
    fn futhark_library(
        &self,
        out_dir: &Path,
        output: &pmexpr_core::program::CrateOutput,
        flags: Flags,
    ) -> Vec<String> {
        let sites: Vec<String> = output
            .sites
            .iter()
            .filter(|(_, b)| *b == pmexpr_core::classify::Backend::Futhark)
            .map(|(n, _)| n.clone())
            .collect();
        let (Some(compiler), Some(program)) = (futhark::find_compiler(), &output.futhark) else {
            futhark::library::remove_glue(out_dir);
            if !(self.futhark || flags.futhark_asked || flags.dump) {
                return Vec::new();
            }
            return futhark::missing_compiler_warning(&sites)
                .map(|w| report::warning(&w).collect())
                .unwrap_or_default();
        };
        let mut lines = Vec::new();
        let flavour = match futhark::Flavour::from_env_value(
            env::var("PMEXPR_FUTHARK_BACKEND").ok().as_deref(),
        ) {
            Ok(f) => f,
            Err(why) => {
                lines.extend(report::warning(&format!("pmexpr: {why}")));
                futhark::Flavour::Multicore
            }
        };
        match futhark::library::build(out_dir, &compiler, flavour, program, &output.numeric_order) {
            Ok(built) => {
                lines.extend(built.directives);
                for w in &built.warnings {
                    lines.extend(report::warning(w));
                }
            }
            Err(why) => {
                futhark::library::remove_glue(out_dir);
                let message = format!(
                    "pmexpr: the Futhark library was not built, so {} Futhark-class accelerate! site{} will run on the CPU targets: {why}",
                    sites.len(),
                    if sites.len() == 1 { "" } else { "s" },
                );
                lines.extend(report::warning(&message));
            }
        }
        lines
    }

    /// What makes Cargo rerun the build script: the scanned directories (Cargo watches a
    /// directory's whole tree), the build script itself (once any `rerun-if-changed` is given,
    /// Cargo watches nothing else) and the environment switches.
    fn rerun_directives(&self, root: &Path) -> Vec<String> {
        let watched = self.dirs.iter().map(String::as_str).chain(["build.rs"]);
        let existing = watched.map(|p| root.join(p)).filter(|p| p.exists());
        existing
            .map(|p| format!("cargo:rerun-if-changed={}", p.display()))
            .chain(
                [
                    "PMEXPR_DUMP",
                    "PMEXPR_VERBOSE",
                    "PMEXPR_FUTHARK",
                    "PMEXPR_FUTHARK_BACKEND",
                    "PMEXPR_NVRTC",
                    "PMEXPR_PTX",
                    // Where NVRTC is looked up: installing it makes the next build compile PTX.
                    "LD_LIBRARY_PATH",
                    "CUDA_PATH",
                    "CUDA_HOME",
                ]
                .map(|v| format!("cargo:rerun-if-env-changed={v}")),
            )
            .collect()
    }
}

/// Whether an environment switch is on: set, non-empty and not `0`.
fn env_flag(name: &str) -> bool {
    env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{TempDir, age};
    use std::fs;

    /// A package with a build script, two sources, a compile-fail test and an unparsable file.
    fn package() -> TempDir {
        let dir = TempDir::new();
        dir.write("build.rs", "fn main() {}");
        dir.write("src/lib.rs", "#[pmexpr] fn g(x: i64) -> i64 { x }\nmod m;");
        dir.write("src/m.rs", "#[pmexpr] fn g() {}\nfn f() { accelerate!(1) }");
        dir.write("tests/ui/fail.rs", "fn f() { accelerate!(2) }");
        dir.write("examples/bad.rs", "fn (");
        dir
    }

    fn registry_in(out_dir: &Path) -> Registry {
        Registry::load(out_dir).unwrap().unwrap()
    }

    #[test]
    fn writes_the_registry_and_tells_cargo_what_to_watch() {
        let dir = package();
        let out = dir.path.join("out");
        let lines = Build::new()
            .exclude("tests/ui")
            .run(&dir.path, &out, Flags::default());
        let registry = registry_in(&out);
        assert_eq!(registry.find_fn("g").len(), 2);
        assert_eq!(registry.sites.len(), 1);
        let root = dir.path.display();
        let expected_head = [
            format!("cargo:rerun-if-changed={root}/src"),
            format!("cargo:rerun-if-changed={root}/examples"),
            format!("cargo:rerun-if-changed={root}/tests"),
            format!("cargo:rerun-if-changed={root}/build.rs"),
            "cargo:rerun-if-env-changed=PMEXPR_DUMP".into(),
            "cargo:rerun-if-env-changed=PMEXPR_VERBOSE".into(),
            "cargo:rerun-if-env-changed=PMEXPR_FUTHARK".into(),
            "cargo:rerun-if-env-changed=PMEXPR_FUTHARK_BACKEND".into(),
            "cargo:rerun-if-env-changed=PMEXPR_NVRTC".into(),
            "cargo:rerun-if-env-changed=PMEXPR_PTX".into(),
            "cargo:rerun-if-env-changed=LD_LIBRARY_PATH".into(),
            "cargo:rerun-if-env-changed=CUDA_PATH".into(),
            "cargo:rerun-if-env-changed=CUDA_HOME".into(),
            "cargo:warning=pmexpr: `#[pmexpr] fn g` is defined more than once, at src/lib.rs:1:14 and src/m.rs:1:14".into(),
        ];
        assert_eq!(lines, expected_head);
    }

    #[test]
    fn registry_file_is_not_rewritten_when_unchanged() {
        let dir = package();
        let out = dir.path.join("out");
        let build = Build::new();
        build.run(&dir.path, &out, Flags::default());
        let path = out.join(Registry::FILE_NAME);
        let old = age(&path);
        build.run(&dir.path, &out, Flags::default());
        assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), old);
        dir.write("src/m.rs", "fn f() { accelerate!(3) }");
        build.run(&dir.path, &out, Flags::default());
        assert_ne!(fs::metadata(&path).unwrap().modified().unwrap(), old);
        assert_eq!(registry_in(&out).sites[0].tokens, "3");
    }

    #[test]
    fn verbose_and_dump_flags() {
        let dir = package();
        let out = dir.path.join("out");
        let flags = Flags {
            dump: true,
            verbose: true,
            ..Flags::default()
        };
        let lines = Build::new().dirs(&["examples"]).run(&dir.path, &out, flags);
        let warnings: Vec<_> = lines
            .iter()
            .filter(|l| l.starts_with("cargo:warning="))
            .collect();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].starts_with("cargo:warning=pmexpr: skipped examples/bad.rs: 1:"));
        let dumps = out.join("pmexpr-dump");
        assert_eq!(
            warnings[1],
            &format!(
                "cargo:warning=pmexpr: site dumps written to {}",
                dumps.display()
            )
        );
        let quiet = Build::new()
            .dirs(&["examples"])
            .run(&dir.path, &out, Flags::default());
        assert!(!quiet.iter().any(|l| l.starts_with("cargo:warning=")));
    }

    #[test]
    fn futhark_class_sites_are_named_when_futhark_is_missing_and_was_asked_for() {
        let dir = TempDir::new();
        dir.write(
            "src/lib.rs",
            "fn f(s: Vec<i64>) -> i64 { accelerate!(reduce(addi, 0, s)) }",
        );
        let out = dir.path.join("out");
        let warned = |lines: &[String]| {
            lines.iter().any(|l| {
                l.contains("the `futhark` compiler was not found")
                    && l.ends_with(
                        "1 Futhark-class accelerate! site will run on the CPU targets: src/lib.rs:1:28",
                    )
            })
        };
        let missing = futhark::find_compiler().is_none();
        // Asked for by the build script, by the environment, or with the site dumps.
        let asked = Build::new()
            .futhark(true)
            .run(&dir.path, &out, Flags::default());
        // Where `futhark` is installed, the hook builds the library instead.
        assert_eq!(warned(&asked), missing, "{asked:?}");
        assert!(!out.join("pmexpr/futhark/glue").exists() || missing);
        for flags in [
            Flags {
                futhark_asked: true,
                ..Flags::default()
            },
            Flags {
                dump: true,
                ..Flags::default()
            },
        ] {
            let lines = Build::new().run(&dir.path, &out, flags);
            assert_eq!(warned(&lines), missing, "{flags:?} {lines:?}");
        }
        // The default path: nothing asked for Futhark, so its absence is no warning (where it
        // is installed, the hook builds the library, which needs a build script's environment).
        let quiet = Build::new().run(&dir.path, &out, Flags::default());
        if missing {
            assert!(!quiet.iter().any(|l| l.contains("futhark")), "{quiet:?}");
        } else {
            assert!(!warned(&quiet), "{quiet:?}");
        }
    }

    #[test]
    fn cuda_class_sites_get_their_kernels_written() {
        let dir = TempDir::new();
        dir.write(
            "src/lib.rs",
            "fn f(n: i64) { accelerate!(par_loop(n, |i| tensor_set(t, [i], i * 2))) }",
        );
        let out = dir.path.join("out");
        let lines = Build::new().run(&dir.path, &out, Flags::default());
        let listing: Vec<_> = fs::read_dir(out.join("pmexpr/cuda"))
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.file_name())).collect())
            .unwrap_or_default();
        // The count `n` is a captured integer, of whatever type rustc gives it: a module per
        // integer type, `i64` first.
        let cu = out.join("pmexpr/cuda/pm_src_lib_rs_1_16_i64.cu");
        assert!(cu.exists(), "{lines:?} {listing:?}");
        let source = fs::read_to_string(&cu).unwrap();
        assert!(
            source.contains("__global__ void pm_src_lib_rs_1_16_i64_k0("),
            "{source}"
        );
        // With NVRTC (CI installs it) the PTX is there too; an unchanged module is not recompiled.
        let ptx = out.join("pmexpr/cuda/pm_src_lib_rs_1_16_i64.ptx");
        assert_eq!(ptx.exists(), nvrtc::nvrtc().is_ok());
        // PMEXPR_PTX=0: the sources only, even with NVRTC; a changed source loses its old PTX.
        let no_ptx = dir.path.join("no-ptx");
        let flags = Flags {
            no_ptx: true,
            ..Flags::default()
        };
        Build::new().run(&dir.path, &no_ptx, flags);
        assert!(
            no_ptx
                .join("pmexpr/cuda/pm_src_lib_rs_1_16_i64.cu")
                .exists()
        );
        assert!(
            !no_ptx
                .join("pmexpr/cuda/pm_src_lib_rs_1_16_i64.ptx")
                .exists()
        );
        // The manifest names both files, for the macro to embed.
        let text = fs::read_to_string(out.join(CudaManifest::FILE)).unwrap();
        let manifest = CudaManifest::from_text(&text).unwrap();
        assert_eq!(manifest.sites.len(), 1);
        let site = &manifest.sites[0];
        assert_eq!(site.name, "src/lib.rs:1:16");
        let registry = registry_in(&out);
        assert_eq!(site.key, registry.sites[0].key);
        let modules = &site.cuda.as_ref().unwrap().modules;
        // One per integer type Rust has (`i64 i32 i8 i16 isize u8 u16 u32 u64 usize`).
        assert_eq!(modules.len(), 10);
        assert_eq!(modules[0].source, "pmexpr/cuda/pm_src_lib_rs_1_16_i64.cu");
        assert_eq!(modules[1].source, "pmexpr/cuda/pm_src_lib_rs_1_16_i32.cu");
        assert_eq!(modules[9].source, "pmexpr/cuda/pm_src_lib_rs_1_16_usize.cu");
        assert_eq!(
            modules[0].ptx.is_some(),
            ptx.exists(),
            "{:?}",
            modules[0].ptx
        );
        if ptx.exists() {
            let old = age(&ptx);
            Build::new().run(&dir.path, &out, Flags::default());
            assert_eq!(fs::metadata(&ptx).unwrap().modified().unwrap(), old);
        }
    }

    #[test]
    fn compile_outside_a_build_script_returns_quietly() {
        // `cargo test` sets CARGO_MANIFEST_DIR but not OUT_DIR (this crate has no build script).
        if env::var_os("OUT_DIR").is_none() {
            Build::new().compile();
        }
    }
}
