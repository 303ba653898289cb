//! The Futhark toolchain as the hook uses it: finding the `futhark` compiler, the flavour of C it
//! generates, what to tell the user when it is absent, building the library ([`library`]) and the
//! glue of each site generated from the manifest of what it compiled ([`manifest`], [`glue`]).
//!
//! The compiler is looked for where `PMEXPR_FUTHARK` names it, else on `PATH`. The flavour is
//! `PMEXPR_FUTHARK_BACKEND=c|multicore|cuda` (`multicore` when unset). Without the compiler the
//! build goes on and the Futhark-class sites run on the CPU targets; one warning names them when
//! the user asked for Futhark (`PMEXPR_FUTHARK`, `PMEXPR_FUTHARK_BACKEND`,
//! `pmexpr_build::Build::futhark`) or for the site dumps (`PMEXPR_DUMP`).

pub mod glue;
pub mod library;
pub mod manifest;

use std::env;
use std::path::{Path, PathBuf};

/// The C that `futhark <flavour> --library` generates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// Sequential C.
    C,
    /// Multithreaded C (the default).
    Multicore,
    /// CUDA: a separate shared library, loaded only after the GPU probe succeeds.
    Cuda,
}

impl Flavour {
    /// The `futhark` subcommand.
    pub fn command(self) -> &'static str {
        match self {
            Flavour::C => "c",
            Flavour::Multicore => "multicore",
            Flavour::Cuda => "cuda",
        }
    }

    /// The flavour `PMEXPR_FUTHARK_BACKEND` names (`multicore` when unset or empty).
    pub fn from_env_value(value: Option<&str>) -> Result<Flavour, String> {
        match value.map(str::trim) {
            None | Some("") | Some("multicore") => Ok(Flavour::Multicore),
            Some("c") => Ok(Flavour::C),
            Some("cuda") => Ok(Flavour::Cuda),
            Some(other) => Err(format!(
                "PMEXPR_FUTHARK_BACKEND={other:?} is not a Futhark backend (expected c, multicore or cuda); using multicore"
            )),
        }
    }
}

/// The oldest Futhark release whose compiler accepts everything the generator writes (0.24 rejects
/// higher-order functions returning arrays of sizes it cannot name statically, such as a `map`
/// of `flatten`s; the hook then leaves those entry points out).
pub const TARGET_VERSION: (u32, u32, u32) = (0, 25, 0);

/// The compiler's version, from `futhark --version` ("Futhark 0.25.16"); `None` when it cannot
/// be run or says something else.
pub fn compiler_version(compiler: &Path) -> Option<(u32, u32, u32)> {
    let out = std::process::Command::new(compiler)
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let word = text.lines().next()?.split_whitespace().nth(1)?;
    let mut parts = word.split('.').map(|p| p.parse::<u32>().ok());
    Some((
        parts.next()??,
        parts.next()??,
        parts.next().flatten().unwrap_or(0),
    ))
}

/// The `futhark` compiler: `PMEXPR_FUTHARK` if set (a path), else the first `futhark` on `PATH`.
pub fn find_compiler() -> Option<PathBuf> {
    if let Some(p) = env::var_os("PMEXPR_FUTHARK").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    find_on_path(env::var_os("PATH")?.as_os_str(), "futhark")
}

fn find_on_path(path: &std::ffi::OsStr, name: &str) -> Option<PathBuf> {
    env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

/// The warning when there is no `futhark`: which sites run on the CPU instead (`None` when the
/// crate has no Futhark-class site).
pub fn missing_compiler_warning(sites: &[String]) -> Option<String> {
    if sites.is_empty() {
        return None;
    }
    let shown: Vec<&str> = sites.iter().take(5).map(String::as_str).collect();
    let more = if sites.len() > shown.len() {
        format!(" and {} more", sites.len() - shown.len())
    } else {
        String::new()
    };
    Some(format!(
        "pmexpr: the `futhark` compiler was not found (on PATH or in PMEXPR_FUTHARK), so {} Futhark-class accelerate! site{} will run on the CPU targets: {}{more}",
        sites.len(),
        if sites.len() == 1 { "" } else { "s" },
        shown.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::TempDir;

    #[test]
    fn flavours() {
        assert_eq!(Flavour::from_env_value(None), Ok(Flavour::Multicore));
        assert_eq!(Flavour::from_env_value(Some("c")), Ok(Flavour::C));
        assert_eq!(
            Flavour::from_env_value(Some(" cuda ")).map(Flavour::command),
            Ok("cuda")
        );
        assert!(Flavour::from_env_value(Some("opencl")).is_err());
    }

    #[test]
    fn the_compiler_is_found_on_a_path() {
        let dir = TempDir::new();
        dir.write("bin/futhark", "#!/bin/sh\n");
        let exe = dir.path.join("bin/futhark");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let path = env::join_paths([dir.path.join("nothing"), dir.path.join("bin")]).unwrap();
        assert_eq!(find_on_path(&path, "futhark"), Some(exe));
        assert_eq!(find_on_path(&path, "futhark-not-there"), None);
    }

    #[test]
    fn the_warning_names_the_sites() {
        assert_eq!(missing_compiler_warning(&[]), None);
        let one = missing_compiler_warning(&["src/a.rs:3:5".into()]).unwrap();
        assert!(
            one.ends_with(
                "1 Futhark-class accelerate! site will run on the CPU targets: src/a.rs:3:5"
            ),
            "{one}"
        );
        let many: Vec<String> = (1..=7).map(|i| format!("src/a.rs:{i}:1")).collect();
        let w = missing_compiler_warning(&many).unwrap();
        assert!(
            w.contains("7 Futhark-class accelerate! sites")
                && w.ends_with("src/a.rs:5:1 and 2 more"),
            "{w}"
        );
    }
}
