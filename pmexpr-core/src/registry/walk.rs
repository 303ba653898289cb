//! The directory walk: the `.rs` files of a package's source directories, in a stable order, and
//! their package-relative names.

use std::fs;
use std::path::{Path, PathBuf};

/// The directories of a package that the scan reads by default, relative to its root.
pub const DEFAULT_DIRS: &[&str] = &["src", "examples", "tests", "benches"];

/// The `.rs` files under `dirs` (relative to `root`), recursively and sorted, leaving out every
/// path under one of `exclude` (relative to `root`, a file or a directory). Directories that do
/// not exist or cannot be read are passed over; symbolic links to directories are not followed,
/// so a link cycle cannot loop.
pub fn source_files(root: &Path, dirs: &[&str], exclude: &[PathBuf]) -> Vec<PathBuf> {
    let exclude: Vec<PathBuf> = exclude.iter().map(|e| root.join(e)).collect();
    let mut files = Vec::new();
    for dir in dirs {
        walk(&root.join(dir), &exclude, &mut files);
    }
    files
}

fn walk(dir: &Path, exclude: &[PathBuf], files: &mut Vec<PathBuf>) {
    if exclude.iter().any(|e| dir.starts_with(e)) {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        if file_type.is_dir() {
            walk(&path, exclude, files);
        } else if path.extension().is_some_and(|ext| ext == "rs")
            && path.is_file()
            && !exclude.iter().any(|e| path.starts_with(e))
        {
            files.push(path);
        }
    }
}

/// `path` relative to `root`, `/`-separated (the whole path when it is not under `root`).
pub fn relative_path(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<_> = relative.iter().map(|p| p.to_string_lossy()).collect();
    parts.join("/")
}
