//! NVRTC, CUDA's runtime compiler, opened at run time: CUDA C++ source in, PTX out.
//!
//! Nothing links against CUDA: the library is looked up when first needed, and when it is not
//! installed every entry point returns [`NvrtcError::NotFound`] (never a panic), so that a machine
//! without CUDA builds everything and simply has no GPU code.
//!
//! The library is looked up, in order:
//!
//! 1. `PMEXPR_NVRTC`, when set: the path of the library to use, and nothing else (an explicit
//!    choice that does not load is an error, not a reason to pick another one);
//! 2. `libnvrtc.so`, `libnvrtc.so.12`, `libnvrtc.so.13` through the dynamic loader's own search
//!    (`LD_LIBRARY_PATH`, the loader cache, the system directories);
//! 3. the same names under `$CUDA_PATH/lib64/` and `$CUDA_HOME/lib64/`.
//!
//! (On Windows, `nvrtc64_120_0.dll` and `nvrtc64_130_0.dll`, then under the two variables'
//! `bin\`.) The PyPI wheel `nvidia-cuda-nvrtc-cu12` ships `libnvrtc.so.12` in
//! `site-packages/nvidia/cuda_nvrtc/lib/`: add that directory to `LD_LIBRARY_PATH`.
//!
//! PTX from NVRTC 12.x loads on drivers of CUDA 12.x and later (the driver JIT-compiles it for
//! the GPU at hand); the `arch` given to [`compile_ptx`] is the oldest virtual architecture the
//! PTX may use (`compute_80` for A100 and newer).

#![warn(missing_docs)]

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libloading::Library;

/// Why NVRTC could not compile a source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NvrtcError {
    /// No NVRTC library could be loaded; each try with the loader's reason.
    NotFound {
        /// What was tried, in order, and why each failed.
        tried: Vec<(String, String)>,
    },
    /// The library lacks a function pmexpr calls (not NVRTC, or too old).
    MissingSymbol {
        /// The library.
        library: String,
        /// The function.
        symbol: String,
    },
    /// The source or an option holds a NUL byte (NVRTC takes C strings).
    InvalidInput(String),
    /// The source did not compile: NVRTC's log.
    Compile {
        /// The name given to the source.
        name: String,
        /// The architecture compiled for.
        arch: String,
        /// NVRTC's compile log (the errors, with their lines).
        log: String,
    },
    /// Another NVRTC call failed.
    Api {
        /// The NVRTC function.
        call: &'static str,
        /// Its `nvrtcResult`.
        code: i32,
        /// NVRTC's name for the result.
        message: String,
    },
}

impl fmt::Display for NvrtcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NvrtcError::NotFound { tried } => {
                write!(f, "NVRTC (libnvrtc) not found")?;
                for (what, why) in tried {
                    write!(f, "\n  tried {what}: {why}")?;
                }
                write!(
                    f,
                    "\n  set PMEXPR_NVRTC to the library's path, or add its directory to LD_LIBRARY_PATH"
                )
            }
            NvrtcError::MissingSymbol { library, symbol } => {
                write!(f, "{library} has no function `{symbol}`: is it NVRTC?")
            }
            NvrtcError::InvalidInput(what) => write!(f, "NVRTC input: {what}"),
            NvrtcError::Compile { name, arch, log } => {
                write!(f, "NVRTC could not compile {name} for {arch}:\n{log}")
            }
            NvrtcError::Api {
                call,
                code,
                message,
            } => write!(f, "{call} failed: {message} ({code})"),
        }
    }
}

impl std::error::Error for NvrtcError {}

type Program = *mut c_void;
type VersionFn = unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int;
type CreateFn = unsafe extern "C" fn(
    *mut Program,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> c_int;
type CompileFn = unsafe extern "C" fn(Program, c_int, *const *const c_char) -> c_int;
type SizeFn = unsafe extern "C" fn(Program, *mut usize) -> c_int;
type GetFn = unsafe extern "C" fn(Program, *mut c_char) -> c_int;
type DestroyFn = unsafe extern "C" fn(*mut Program) -> c_int;
type ErrorStringFn = unsafe extern "C" fn(c_int) -> *const c_char;

/// The NVRTC functions pmexpr calls (NVRTC's C API, stable since CUDA 7).
struct Api {
    version: VersionFn,
    create: CreateFn,
    compile: CompileFn,
    log_size: SizeFn,
    log: GetFn,
    ptx_size: SizeFn,
    ptx: GetFn,
    destroy: DestroyFn,
    error_string: ErrorStringFn,
}

/// A loaded NVRTC library.
pub struct Nvrtc {
    api: Api,
    path: String,
    version: (i32, i32),
    // Last: the function pointers above point into it, so it must outlive them.
    _library: Library,
}

impl fmt::Debug for Nvrtc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Nvrtc")
            .field("path", &self.path)
            .field("version", &self.version)
            .finish()
    }
}

/// The libraries to try, in order (see the module docs), from the environment.
pub fn candidates() -> Vec<String> {
    if let Some(p) = std::env::var_os("PMEXPR_NVRTC").filter(|p| !p.is_empty()) {
        return vec![p.to_string_lossy().into_owned()];
    }
    let (names, sub): (&[&str], &str) = if cfg!(windows) {
        (&["nvrtc64_120_0.dll", "nvrtc64_130_0.dll"], "bin")
    } else {
        (
            &["libnvrtc.so", "libnvrtc.so.12", "libnvrtc.so.13"],
            "lib64",
        )
    };
    let mut out: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(root) = std::env::var_os(var).filter(|r| !r.is_empty()) {
            let dir = PathBuf::from(root).join(sub);
            for n in names {
                let p = dir.join(n).to_string_lossy().into_owned();
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }
    out
}

impl Nvrtc {
    /// Loads the first NVRTC library of [`candidates`].
    pub fn load() -> Result<Nvrtc, NvrtcError> {
        let mut tried = Vec::new();
        for c in candidates() {
            match Nvrtc::open(Path::new(&c)) {
                Ok(n) => return Ok(n),
                Err(NvrtcError::NotFound { tried: t }) => tried.extend(t),
                Err(e) => return Err(e),
            }
        }
        Err(NvrtcError::NotFound { tried })
    }

    /// Loads the NVRTC library at `path` (a bare file name goes through the loader's search).
    pub fn open(path: &Path) -> Result<Nvrtc, NvrtcError> {
        let shown = path.display().to_string();
        // SAFETY: loading a shared library runs its initializers; NVRTC's only set up the
        // library itself. Whether the file is NVRTC at all is checked by its symbols below.
        let library = unsafe { Library::new(path) }.map_err(|e| NvrtcError::NotFound {
            tried: vec![(shown.clone(), e.to_string())],
        })?;
        fn get<T: Copy>(lib: &Library, path: &str, name: &str) -> Result<T, NvrtcError> {
            let symbol = format!("{name}\0");
            // SAFETY: `T` is the type of the C function `name` in NVRTC's API (`nvrtc.h`), and
            // the pointer is only called while the library is loaded (`Nvrtc` keeps it).
            unsafe { lib.get::<T>(symbol.as_bytes()) }
                .map(|s| *s)
                .map_err(|_| NvrtcError::MissingSymbol {
                    library: path.to_string(),
                    symbol: name.to_string(),
                })
        }
        let api = Api {
            version: get(&library, &shown, "nvrtcVersion")?,
            create: get(&library, &shown, "nvrtcCreateProgram")?,
            compile: get(&library, &shown, "nvrtcCompileProgram")?,
            log_size: get(&library, &shown, "nvrtcGetProgramLogSize")?,
            log: get(&library, &shown, "nvrtcGetProgramLog")?,
            ptx_size: get(&library, &shown, "nvrtcGetPTXSize")?,
            ptx: get(&library, &shown, "nvrtcGetPTX")?,
            destroy: get(&library, &shown, "nvrtcDestroyProgram")?,
            error_string: get(&library, &shown, "nvrtcGetErrorString")?,
        };
        let (mut major, mut minor) = (0, 0);
        // SAFETY: `nvrtcVersion(int*, int*)` writes two ints.
        let code = unsafe { (api.version)(&mut major, &mut minor) };
        let mut n = Nvrtc {
            api,
            path: shown,
            version: (0, 0),
            _library: library,
        };
        n.check("nvrtcVersion", code)?;
        n.version = (major, minor);
        Ok(n)
    }

    /// NVRTC's version (major, minor), e.g. (12, 9).
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    /// The library as it was opened.
    pub fn path(&self) -> &str {
        &self.path
    }

    fn check(&self, call: &'static str, code: c_int) -> Result<(), NvrtcError> {
        if code == 0 {
            return Ok(());
        }
        // SAFETY: `nvrtcGetErrorString` returns a static C string for any result code.
        let message = unsafe {
            let p = (self.api.error_string)(code);
            if p.is_null() {
                String::from("unknown error")
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        Err(NvrtcError::Api {
            call,
            code,
            message,
        })
    }

    /// Compiles CUDA C++ `source` (called `name` in messages) to PTX for the virtual
    /// architecture `arch` (`"compute_80"`), with pmexpr's options: C++17, and no fused
    /// multiply-add, so that `a * b + c` rounds twice as it does on the CPU targets.
    pub fn compile_ptx(&self, source: &str, name: &str, arch: &str) -> Result<String, NvrtcError> {
        let options = [
            format!("--gpu-architecture={arch}"),
            "--std=c++17".to_string(),
            "--fmad=false".to_string(),
        ];
        let options: Vec<&str> = options.iter().map(String::as_str).collect();
        self.compile_ptx_with(source, name, &options)
            .map_err(|e| match e {
                NvrtcError::Compile { name, log, .. } => NvrtcError::Compile {
                    name,
                    arch: arch.to_string(),
                    log,
                },
                e => e,
            })
    }

    /// Compiles `source` to PTX with exactly these NVRTC options.
    pub fn compile_ptx_with(
        &self,
        source: &str,
        name: &str,
        options: &[&str],
    ) -> Result<String, NvrtcError> {
        let c = |s: &str, what: &str| {
            CString::new(s)
                .map_err(|_| NvrtcError::InvalidInput(format!("{what} holds a NUL byte")))
        };
        let src = c(source, "the source")?;
        let cname = c(name, "the name")?;
        let opts: Vec<CString> = options
            .iter()
            .map(|o| c(o, "an option"))
            .collect::<Result<_, _>>()?;
        let opt_ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        let mut prog: Program = std::ptr::null_mut();
        // SAFETY: the C strings live until the end of this function; no headers are passed.
        let code = unsafe {
            (self.api.create)(
                &mut prog,
                src.as_ptr(),
                cname.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        self.check("nvrtcCreateProgram", code)?;
        let guard = ProgramGuard { nvrtc: self, prog };
        // SAFETY: `prog` is a live program; the options are `opt_ptrs.len()` C strings.
        let code = unsafe { (self.api.compile)(prog, opt_ptrs.len() as c_int, opt_ptrs.as_ptr()) };
        if code != 0 {
            let log = guard.log().unwrap_or_default();
            // NVRTC_ERROR_COMPILATION (6): the source is wrong; anything else is NVRTC's failure.
            if code == 6 {
                return Err(NvrtcError::Compile {
                    name: name.to_string(),
                    arch: options.join(" "),
                    log,
                });
            }
            self.check("nvrtcCompileProgram", code)?;
        }
        guard.ptx()
    }
}

/// Destroys an NVRTC program when dropped, and reads what it produced.
struct ProgramGuard<'a> {
    nvrtc: &'a Nvrtc,
    prog: Program,
}

impl ProgramGuard<'_> {
    /// Reads a NUL-terminated buffer whose size (NUL included) `size` gives.
    fn read(
        &self,
        what: (&'static str, &'static str),
        size: SizeFn,
        get: GetFn,
    ) -> Result<String, NvrtcError> {
        let mut n = 0usize;
        // SAFETY: `prog` is live; the call writes one `size_t`.
        let code = unsafe { size(self.prog, &mut n) };
        self.nvrtc.check(what.0, code)?;
        let mut buf = vec![0u8; n.max(1)];
        // SAFETY: `buf` holds the `n` bytes the call writes.
        let code = unsafe { get(self.prog, buf.as_mut_ptr().cast()) };
        self.nvrtc.check(what.1, code)?;
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
    }

    fn log(&self) -> Result<String, NvrtcError> {
        let api = &self.nvrtc.api;
        self.read(
            ("nvrtcGetProgramLogSize", "nvrtcGetProgramLog"),
            api.log_size,
            api.log,
        )
    }

    fn ptx(&self) -> Result<String, NvrtcError> {
        let api = &self.nvrtc.api;
        self.read(("nvrtcGetPTXSize", "nvrtcGetPTX"), api.ptx_size, api.ptx)
    }
}

impl Drop for ProgramGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: `prog` was created by `nvrtcCreateProgram` and is destroyed once, here.
        unsafe {
            (self.nvrtc.api.destroy)(&mut self.prog);
        }
    }
}

/// The NVRTC library of this process, loaded on first use ([`Nvrtc::load`]); the error when
/// there is none.
pub fn nvrtc() -> Result<&'static Nvrtc, NvrtcError> {
    static NVRTC: OnceLock<Result<Nvrtc, NvrtcError>> = OnceLock::new();
    NVRTC
        .get_or_init(Nvrtc::load)
        .as_ref()
        .map_err(Clone::clone)
}

/// Compiles CUDA C++ `source` (called `name` in messages) to PTX for `arch` (`"compute_80"`)
/// with the process's NVRTC ([`nvrtc`], [`Nvrtc::compile_ptx`]); [`NvrtcError::NotFound`] when
/// NVRTC is not installed.
pub fn compile_ptx(source: &str, name: &str, arch: &str) -> Result<String, NvrtcError> {
    nvrtc()?.compile_ptx(source, name, arch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_an_error_not_a_panic() {
        let e = Nvrtc::open(Path::new("/nonexistent/libnvrtc.so.99")).unwrap_err();
        let NvrtcError::NotFound { tried } = &e else {
            panic!("{e}")
        };
        assert_eq!(tried[0].0, "/nonexistent/libnvrtc.so.99");
        assert!(e.to_string().contains("PMEXPR_NVRTC"), "{e}");
    }

    #[test]
    fn a_library_that_is_not_nvrtc_lacks_its_functions() {
        // The C library is loaded in every process and has no NVRTC function.
        let libc = if cfg!(target_os = "linux") {
            "libc.so.6"
        } else {
            return;
        };
        match Nvrtc::open(Path::new(libc)) {
            Err(NvrtcError::MissingSymbol { symbol, .. }) => assert_eq!(symbol, "nvrtcVersion"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn candidates_follow_the_documented_order() {
        // The environment is the process's, so only its shape is checked.
        let c = candidates();
        assert!(!c.is_empty());
        if std::env::var_os("PMEXPR_NVRTC").is_none() && cfg!(target_os = "linux") {
            assert_eq!(&c[..3], ["libnvrtc.so", "libnvrtc.so.12", "libnvrtc.so.13"]);
        }
    }
}
