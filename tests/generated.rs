//! Generated differential programs (`pmexpr_suite::progen`): each expression written inside
//! `accelerate!` and twice as plain Rust (a release build's wrapping arithmetic, a debug build's
//! checks), built by rustc as a user's crate with the build hook, and run on `seq`, `cpu`, debug
//! mode and, for the `par_loop` programs, `cuda-emulator`: every result must be Rust's, bit for
//! bit, and debug mode must fail exactly where a Rust debug build panics.
//!
//! `PMEXPR_GEN_PROGRAMS` sets the number of programs (300 by default; thousands locally) and
//! `PMEXPR_GEN_SEED` the seed (1 by default). The crate is written to
//! `target/pmexpr-generated/` and built there, with its own target directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use pmexpr_suite::progen;

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v} is not a number")),
        Err(_) => default,
    }
}

/// Writes the generated crate under `dir`.
fn write_crate(root: &Path, dir: &Path, seed: u64, programs: &[progen::Program]) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let manifest = format!(
        r#"[package]
name = "pmexpr-generated"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
pmexpr = {{ path = {pmexpr:?}, features = ["cuda-emulator"] }}

[build-dependencies]
pmexpr-build = {{ path = {build:?} }}

# As this repository's own dev profile: the macros' front end optimized.
[profile.dev.package.pmexpr-core]
opt-level = 3
[profile.dev.package.syn]
opt-level = 3
[profile.dev.package.proc-macro2]
opt-level = 3

[workspace]
"#,
        pmexpr = root.join("pmexpr").display().to_string(),
        build = root.join("build-support").display().to_string(),
    );
    write_if_changed(&dir.join("Cargo.toml"), &manifest);
    // The versions this repository was tested with.
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap();
    write_if_changed(&dir.join("Cargo.lock"), &lock);
    write_if_changed(
        &dir.join("build.rs"),
        "fn main() {\n    pmexpr_build::Build::new().compile();\n}\n",
    );
    write_if_changed(
        &dir.join("src/main.rs"),
        &progen::crate_main(seed, programs),
    );
}

fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).unwrap();
    }
}

/// The program whose `mod pN` holds line `line` (1-based) of `main`.
fn program_at(main: &str, line: usize) -> Option<usize> {
    main.lines()
        .take(line)
        .filter_map(|l| l.strip_prefix("mod p")?.strip_suffix(" {")?.parse().ok())
        .last()
}

/// A `cargo` command in the generated crate, without the variables the outer cargo set for this
/// package (its name, manifest, binaries); its configuration (`CARGO_HOME`, `CARGO_INCREMENTAL`,
/// `CARGO_PROFILE_*` …) is kept.
fn cargo(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(dir)
        .args(args)
        .env("CARGO_TARGET_DIR", dir.join("target"));
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        let package = [
            "CARGO_PKG_",
            "CARGO_MANIFEST_",
            "CARGO_CRATE_",
            "CARGO_BIN_",
        ]
        .iter()
        .any(|p| k.starts_with(p));
        if package
            || [
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
                "CARGO_RUSTC_CURRENT_DIR",
            ]
            .contains(&k.as_str())
        {
            cmd.env_remove(&k);
        }
    }
    cmd
}

#[test]
fn generated_programs_agree_with_rust_on_every_target() {
    let count = env_number("PMEXPR_GEN_PROGRAMS", 300) as usize;
    let seed = env_number("PMEXPR_GEN_SEED", 1);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("target/pmexpr-generated");
    let mut programs = progen::programs(seed, count);
    // A program that does not compile is reported and left out, so that one run shows every
    // disagreement.
    let mut refused: Vec<String> = Vec::new();
    loop {
        write_crate(&root, &dir, seed, &programs);
        let out = cargo(&dir, &["build", "--quiet", "--message-format=short"])
            .output()
            .expect("cannot run cargo");
        if out.status.success() {
            break;
        }
        let main = std::fs::read_to_string(dir.join("src/main.rs")).unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let mut bad = std::collections::BTreeMap::new();
        for l in stderr.lines() {
            let Some(rest) = l.strip_prefix("src/main.rs:") else {
                continue;
            };
            let line: usize = rest
                .split(':')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            if let Some(id) = program_at(&main, line) {
                bad.entry(id).or_insert_with(|| l.to_string());
            }
        }
        assert!(
            !bad.is_empty(),
            "the generated crate does not build, and no program is to blame:\n{stderr}"
        );
        for (id, why) in &bad {
            let p = programs.iter().find(|p| p.id == *id).unwrap();
            refused.push(format!(
                "program {id} does not compile: {why}\n    accelerate!({})",
                p.accel
            ));
        }
        programs.retain(|p| !bad.contains_key(&p.id));
    }
    let out = cargo(&dir, &["run", "--quiet"])
        .output()
        .expect("cannot run cargo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    for r in &refused {
        println!("{r}");
    }
    assert!(
        out.status.success() && refused.is_empty(),
        "the generated programs (seed {seed}, {count} programs, {}): {} do not compile, and of the others:\n{stdout}\n{}",
        dir.join("src/main.rs").display(),
        refused.len(),
        stderr.lines().take(100).collect::<Vec<_>>().join("\n")
    );
    assert!(
        stdout.contains(&format!("generated programs: {},", programs.len())),
        "the generated crate did not report its programs:\n{stdout}"
    );
}
