//! The C++ compiler the emulator runs, and the cache of the libraries it makes.

use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(doc)]
use crate::cuda::device::ParamData;

/// The flags every module is compiled with (besides `-o` and the file names).
pub(super) const CXX_FLAGS: [&str; 4] = ["-std=c++17", "-O2", "-shared", "-fPIC"];
/// How much of the compiler's output a failure quotes.
pub(super) const MAX_LOG_LINES: usize = 60;
pub(super) const MAX_LOG_BYTES: usize = 8000;

/// A C++ compiler that ran with `--version`.
#[derive(Debug, Clone)]
pub(super) struct Compiler {
    pub(super) program: OsString,
    pub(super) args: Vec<OsString>,
    /// The command as the user wrote it (for messages).
    pub(super) shown: String,
    /// Its `--version` output (part of the cache key).
    pub(super) version: String,
}

/// `$PMEXPR_CXX` (only that) if set, else `$CXX` (only that), else the first of `c++`, `g++`,
/// `clang++` that runs with `--version`.
pub(super) fn find_compiler(
    pmexpr_cxx: Option<OsString>,
    cxx: Option<OsString>,
) -> Result<Compiler, String> {
    for (var, value) in [("PMEXPR_CXX", pmexpr_cxx), ("CXX", cxx)] {
        if let Some(value) = value.filter(|v| !v.is_empty()) {
            return probe(&value).map_err(|why| {
                format!(
                    "no C++ compiler for the CUDA emulator: {var}={} does not run with --version ({why})",
                    value.to_string_lossy()
                )
            });
        }
    }
    let mut tried = Vec::new();
    for name in ["c++", "g++", "clang++"] {
        match probe(OsStr::new(name)) {
            Ok(c) => return Ok(c),
            Err(why) => tried.push(format!("{name}: {why}")),
        }
    }
    Err(format!(
        "no C++ compiler for the CUDA emulator: PMEXPR_CXX and CXX are not set and none of c++, \
         g++, clang++ runs with --version ({})",
        tried.join("; ")
    ))
}

/// Runs `command --version`. A command that is not a file's path is split at whitespace
/// (`ccache g++`).
pub(super) fn probe(command: &OsStr) -> Result<Compiler, String> {
    let mut words: Vec<OsString> = match command.to_str() {
        Some(s) if !Path::new(s).is_file() => s.split_whitespace().map(OsString::from).collect(),
        _ => vec![command.to_os_string()],
    };
    if words.is_empty() {
        return Err("empty command".into());
    }
    let program = words.remove(0);
    let out = Command::new(&program)
        .args(&words)
        .arg("--version")
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err.lines().next().unwrap_or("").trim();
        return Err(format!("{}: {first}", out.status));
    }
    Ok(Compiler {
        program,
        args: words,
        shown: command.to_string_lossy().into_owned(),
        version: String::from_utf8_lossy(&out.stdout).into_owned(),
    })
}

/// Creates `temp_dir()/pmexpr-emulator` (private to the user) or checks that the existing one
/// is a directory that only its owner, this user, can write to.
pub(super) fn prepare_cache_dir() -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join("pmexpr-emulator");
    let fail = |why: String| format!("CUDA emulator: cache directory {}: {why}", dir.display());
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(&dir)
        .map_err(|e| fail(format!("cannot create it: {e}")))?;
    let meta = fs::symlink_metadata(&dir).map_err(|e| fail(e.to_string()))?;
    if !meta.is_dir() {
        return Err(fail("not a directory (a symbolic link?); remove it".into()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        if meta.permissions().mode() & 0o022 != 0 {
            return Err(fail(
                "other users can write to it, and the emulator runs the libraries it finds there; \
                 remove it"
                    .into(),
            ));
        }
        // Whose it is: the owner of a file this process creates in it.
        let probe = temp_name(&dir.join("owner-probe"));
        fs::File::create_new(&probe).map_err(|e| fail(format!("cannot write to it: {e}")))?;
        let mine = fs::metadata(&probe).map(|m| m.uid());
        let _ = fs::remove_file(&probe);
        let mine = mine.map_err(|e| fail(e.to_string()))?;
        if meta.uid() != mine {
            return Err(fail(format!(
                "it belongs to user {}, not to this one ({mine}); remove it",
                meta.uid()
            )));
        }
    }
    Ok(dir)
}

/// A name next to `path` that no other thread or process uses.
pub(super) fn temp_name(path: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let k = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}-{k}.tmp", std::process::id()));
    path.with_file_name(name)
}

/// Writes `path` through a temporary file and a rename.
pub(super) fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = temp_name(path);
    let written = fs::write(&tmp, text).and_then(|()| fs::rename(&tmp, path));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// The first lines of a compiler's output.
pub(super) fn truncate_log(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    let mut out = String::new();
    for (k, line) in lines.iter().enumerate() {
        if k == MAX_LOG_LINES || out.len() + line.len() > MAX_LOG_BYTES {
            let _ = write!(out, "… ({} more lines)", lines.len() - k);
            return out;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.truncate(out.trim_end().len());
    out
}

/// 64-bit FNV-1a: a hash that stays the same across runs and Rust versions.
pub(super) struct Fnv(u64);

impl Fnv {
    pub(super) fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    pub(super) fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    pub(super) fn finish(&self) -> u64 {
        self.0
    }
}
