//! Writing into `OUT_DIR` without touching files whose contents did not change, so that their
//! modification times stay put and nothing that depends on them rebuilds for nothing.

use std::fs;
use std::io;
use std::path::{Component, Path};

/// Writes `contents` to `path` (creating its directory) unless the file already holds exactly
/// that; returns whether it wrote.
pub(crate) fn write_if_changed(path: &Path, contents: &str) -> io::Result<bool> {
    if fs::read(path).is_ok_and(|old| old == contents.as_bytes()) {
        return Ok(false);
    }
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    fs::write(path, contents)?;
    Ok(true)
}

/// Writes one file of the compiler's output under `out_dir`; `relative` must stay inside it
/// (plain `/`-separated names, no `..`, not absolute). The error is a message for the user.
pub(crate) fn write_output_file(
    out_dir: &Path,
    relative: &str,
    contents: &str,
) -> Result<bool, String> {
    let path = Path::new(relative);
    let inside = path.components().count() > 0
        && path.components().all(|c| matches!(c, Component::Normal(_)));
    if !inside {
        return Err(format!(
            "pmexpr: internal error: refusing to write `{relative}` outside OUT_DIR"
        ));
    }
    let target = out_dir.join(path);
    write_if_changed(&target, contents)
        .map_err(|e| format!("pmexpr: cannot write {}: {e}", target.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{TempDir, age};

    #[test]
    fn rewrites_only_changed_files() {
        let dir = TempDir::new();
        let path = dir.path.join("a/b.txt");
        assert!(write_if_changed(&path, "one").unwrap());
        let old = age(&path);
        assert!(!write_if_changed(&path, "one").unwrap());
        assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), old);
        assert!(write_if_changed(&path, "two").unwrap());
        assert_eq!(fs::read_to_string(&path).unwrap(), "two");
    }

    #[test]
    fn output_files_stay_inside_out_dir() {
        let dir = TempDir::new();
        assert_eq!(write_output_file(&dir.path, "x/y.rs", "1"), Ok(true));
        for bad in ["", "../x", "/etc/x", "a/../../x", "./x"] {
            assert!(write_output_file(&dir.path, bad, "1").is_err(), "{bad}");
        }
    }
}
