//! The CUDA target emulated on the CPU: the generated CUDA C++ compiled as host C++ by the
//! system's C++ compiler and run on the calling thread (or a few threads).
//!
//! It exists so that the whole CUDA host path — marshaling the captured values, launching the
//! kernels, reading the error record, copying tensors back — is exercised and tested where there
//! is no GPU (this repository's CI has none). It is slow (a compiler run per new module, then
//! the kernels on a handful of CPU threads) and it is not a performance target: use the CPU
//! backends for that.
//!
//! # How a module runs
//!
//! [`Emulator::load`](Device::load) writes one C++ file: a shim that makes CUDA C++ valid host
//! C++ (below), the module's source as generated (the prelude included), and one trampoline per
//! kernel. The trampoline `<kernel>__pm_emu(void** args)` copies each parameter out of the bytes
//! the host laid out ([`ParamData`]), sets `gridDim = blockDim = {1,1,1}` and
//! `blockIdx = threadIdx = {0,0,0}`, and calls the kernel, whose grid-stride loop then covers
//! `0..n` in order. Large launches (`n` of a few thousand and more) are split over up to
//! [`Emulator::threads`] CPU threads, each running the kernel as one block of a grid of that many
//! (`<kernel>__pm_emu_part`), so that each thread takes every `threads`-th index as a GPU's
//! grid-stride loop would. As on a GPU, when several indices fail a runtime check in a launch
//! that ran on several threads, which one the error record holds is unspecified; a launch on one
//! thread records the lowest failing index.
//!
//! The trampolines also check, when the file compiles, that each [`ParamData`]'s size and
//! alignment are what the C++ compiler gives its `c_type` and that the kernel takes exactly the
//! listed types: a layout computed wrongly on the Rust side fails [`Device::load`] with the
//! compiler's message naming the kernel and the parameter.
//!
//! The shim (the file's first lines) defines the CUDA keywords away (`__device__`, `__global__`
//! and `__host__` to nothing, `__noinline__` and `__forceinline__` to their GNU C++ meanings),
//! declares `blockIdx`, `threadIdx`, `blockDim` and `gridDim` as `thread_local` structs of
//! three `unsigned`s, and provides the device functions the generated code calls: `atomicCAS`
//! on `unsigned long long` (GNU `__atomic` builtins), `__longlong_as_double` and `__int_as_float`
//! (NaN and infinity literals of `f64` and `f32`), and the math functions (`sqrt exp log pow sin
//! cos floor`) from `<cmath>`. The host library's math functions may differ from CUDA's in the
//! last bits; integer results, `+ - * /` on `f64` and `f32` (IEEE, not contracted: C++17 mode
//! has GCC's `-ffp-contract=off`, as NVRTC gets `--fmad=false`) and the runtime checks are exact.
//!
//! # The compiler and the cache
//!
//! The C++ compiler is `$PMEXPR_CXX` when it is set (and nothing else), else `$CXX` (and nothing
//! else), else the first of `c++`, `g++` and `clang++` that runs with `--version`; it needs C++17
//! and the GNU extensions GCC and Clang share. A variable may hold a command with arguments
//! (`ccache g++`). Each module is compiled with `-std=c++17 -O2 -shared -fPIC` into
//! `pmexpr-emulator/` under [`std::env::temp_dir`], named after its namespace and a hash of the
//! compiler and the whole C++ text, so that an unchanged module is compiled once and then reused
//! by every run; files are written under temporary names and renamed, so that concurrent
//! threads and processes never see half a file. The directory is created private to the user,
//! and one that other users could write to is refused (the emulator runs the libraries it finds
//! there). A failed compilation leaves its `.cpp` there, for reading.
//!
//! A module that is loaded again while this process has it loaded is loaded from a private copy
//! of its library (deleted once loaded), so that each load has its own globals — its own error
//! record — as each load of a module on a GPU does.
//!
//! # Memory
//!
//! Device memory is host memory: [`Device::alloc`] allocates 16-byte aligned blocks, uploads
//! and downloads are copies, and a [`DevPtr`] is the address. Uploads and downloads are checked
//! against the live allocations; the kernels' own accesses are bounds-checked by the generated
//! code (its runtime checks) and not otherwise.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString, c_void};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use libloading::Library;

#[cfg(doc)]
use super::device::ParamData;
use super::device::{
    DevPtr, Device, DeviceFailure, DeviceResult, KernelData, LoadedModule, ModuleData,
};

/// The flags every module is compiled with (besides `-o` and the file names).
const CXX_FLAGS: [&str; 4] = ["-std=c++17", "-O2", "-shared", "-fPIC"];

/// The alignment of every allocation (as `cudaMalloc` gives at least).
const ALLOC_ALIGN: usize = 16;

/// The most threads [`Emulator::new`] uses for one launch.
const MAX_THREADS: usize = 16;

/// The number of indices per thread below which a launch is not split further.
const INDICES_PER_THREAD: i64 = 2048;

/// The stack of a launch's extra threads (recursive device functions may go deep).
const THREAD_STACK: usize = 8 << 20;

/// How much of the compiler's output a failure quotes.
const MAX_LOG_LINES: usize = 60;
const MAX_LOG_BYTES: usize = 8000;

/// Makes CUDA C++ valid host C++. The CUDA keywords are defined after the standard headers,
/// which use `__noinline__` as an attribute name.
const SHIM: &str = r#"// ---- pmexpr CPU emulator shim: CUDA C++ as host C++ (pmexpr-runtime/src/cuda/emulator.rs) ----
#include <cmath>
#include <cstring>
#include <cstdint>
#include <type_traits>

#define __device__
#define __global__
#define __host__
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline

// Only the trampolines at the end are exported.
#pragma GCC visibility push(hidden)

struct pm_emu_dim3 { unsigned x, y, z; };
thread_local pm_emu_dim3 blockIdx, threadIdx, blockDim, gridDim;

static inline unsigned long long atomicCAS(unsigned long long* address, unsigned long long compare, unsigned long long val) {
    __atomic_compare_exchange_n(address, &compare, val, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return compare;  // the old value: `compare` is overwritten with it when the exchange fails
}
static inline double __longlong_as_double(long long x) {
    double d;
    std::memcpy(&d, &x, sizeof d);
    return d;
}
static inline float __int_as_float(int x) {
    float f;
    std::memcpy(&f, &x, sizeof f);
    return f;
}
static inline long long __double_as_longlong(double x) {
    long long i;
    std::memcpy(&i, &x, sizeof i);
    return i;
}
using std::sqrt;
using std::exp;
using std::log;
using std::pow;
using std::sin;
using std::cos;
using std::floor;
// ---- end of the shim ----

"#;

/// A `Device` that runs the generated CUDA C++ on the CPU (see the module docs).
pub struct Emulator {
    compiler: Compiler,
    threads: usize,
    /// The cache directory, prepared at the first load.
    cache: OnceLock<Result<PathBuf, String>>,
    /// The live allocations: address → size.
    allocations: Mutex<BTreeMap<u64, usize>>,
    /// How many modules it compiled (for tests).
    compilations: AtomicU64,
}

/// A C++ compiler that ran with `--version`.
#[derive(Debug, Clone)]
struct Compiler {
    program: OsString,
    args: Vec<OsString>,
    /// The command as the user wrote it (for messages).
    shown: String,
    /// Its `--version` output (part of the cache key).
    version: String,
}

impl Emulator {
    /// Finds a C++ compiler (see the module docs). The error says what was tried.
    pub fn new() -> Result<Emulator, String> {
        let compiler = find_compiler(std::env::var_os("PMEXPR_CXX"), std::env::var_os("CXX"))?;
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(MAX_THREADS);
        Ok(Emulator {
            compiler,
            threads,
            cache: OnceLock::new(),
            allocations: Mutex::new(BTreeMap::new()),
            compilations: AtomicU64::new(0),
        })
    }

    /// The same emulator, running each launch on at most `threads` threads (at least 1).
    pub fn with_threads(mut self, threads: usize) -> Emulator {
        self.threads = threads.max(1);
        self
    }

    /// The most threads one launch runs on.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The compiler command, as found (`c++`, or what `PMEXPR_CXX` or `CXX` says).
    pub fn compiler(&self) -> &str {
        &self.compiler.shown
    }

    /// The bytes of "device" memory allocated and not freed: how tests check that calls free what
    /// they allocate.
    pub fn live_bytes(&self) -> usize {
        self.allocations().values().sum()
    }

    fn allocations(&self) -> MutexGuard<'_, BTreeMap<u64, usize>> {
        self.allocations.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `[ptr, ptr + len)` lies in one live allocation.
    fn check_range(&self, what: &str, ptr: DevPtr, len: usize) -> DeviceResult<()> {
        let allocations = self.allocations();
        let inside = allocations
            .range(..=ptr)
            .next_back()
            .is_some_and(|(&base, &size)| {
                (ptr - base)
                    .checked_add(len as u64)
                    .is_some_and(|end| end <= size as u64)
            });
        if inside {
            Ok(())
        } else {
            Err(DeviceFailure(format!(
                "CUDA emulator: {what} of {len} bytes at {ptr:#x} is not inside a live allocation"
            )))
        }
    }

    fn cache_dir(&self) -> DeviceResult<&Path> {
        self.cache
            .get_or_init(prepare_cache_dir)
            .as_deref()
            .map_err(|e| DeviceFailure(e.clone()))
    }

    /// The C++ file and the shared library of a module's text (in the cache directory).
    fn artifacts(&self, dir: &Path, namespace: &str, text: &str) -> (PathBuf, PathBuf) {
        let mut key = Fnv::new();
        key.write(self.compiler.shown.as_bytes());
        key.write(&[0]);
        key.write(self.compiler.version.as_bytes());
        key.write(&[0]);
        for flag in CXX_FLAGS {
            key.write(flag.as_bytes());
            key.write(&[0]);
        }
        key.write(text.as_bytes());
        let stem_ns: String = namespace.chars().take(100).collect();
        let stem = format!("{stem_ns}-{:016x}", key.finish());
        (
            dir.join(format!("{stem}.cpp")),
            dir.join(format!("{stem}.{}", std::env::consts::DLL_EXTENSION)),
        )
    }

    /// Compiles `cpp` into `so` (under a temporary name, then renamed).
    fn compile(&self, namespace: &str, cpp: &Path, so: &Path) -> DeviceResult<()> {
        self.compilations.fetch_add(1, Ordering::Relaxed);
        let tmp = temp_name(so);
        let output = Command::new(&self.compiler.program)
            .args(&self.compiler.args)
            .args(CXX_FLAGS)
            .arg("-o")
            .arg(&tmp)
            .arg(cpp)
            .output();
        let failure = match output {
            Err(e) => Some(format!("it did not run: {e}")),
            Ok(out) if !out.status.success() => {
                let mut log = String::from_utf8_lossy(&out.stderr).into_owned();
                if log.trim().is_empty() {
                    log = String::from_utf8_lossy(&out.stdout).into_owned();
                }
                Some(format!("{}:\n{}", out.status, truncate_log(&log)))
            }
            Ok(_) => None,
        };
        if let Some(why) = failure {
            let _ = fs::remove_file(&tmp);
            return Err(DeviceFailure(format!(
                "CUDA emulator: the C++ compiler `{}` failed on module `{namespace}` ({}): {why}",
                self.compiler.shown,
                cpp.display()
            )));
        }
        fs::rename(&tmp, so).map_err(|e| {
            let _ = fs::remove_file(&tmp);
            DeviceFailure(format!(
                "CUDA emulator: cannot move the compiled module `{namespace}` to {}: {e}",
                so.display()
            ))
        })
    }
}

impl std::fmt::Debug for Emulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emulator")
            .field("compiler", &self.compiler.shown)
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let allocations = std::mem::take(&mut *self.allocations());
        for (ptr, size) in allocations {
            // SAFETY: allocated by `alloc` with this layout and not freed (still in the map).
            unsafe {
                std::alloc::dealloc(
                    ptr as *mut u8,
                    std::alloc::Layout::from_size_align_unchecked(size, ALLOC_ALIGN),
                )
            };
        }
    }
}

/// The process's emulator, found at the first call (see [`Emulator::new`]); the error says why
/// there is none (no C++ compiler).
pub fn emulator() -> Result<&'static Emulator, String> {
    static EMULATOR: OnceLock<Result<Emulator, String>> = OnceLock::new();
    EMULATOR
        .get_or_init(Emulator::new)
        .as_ref()
        .map_err(Clone::clone)
}

/// `$PMEXPR_CXX` (only that) if set, else `$CXX` (only that), else the first of `c++`, `g++`,
/// `clang++` that runs with `--version`.
fn find_compiler(pmexpr_cxx: Option<OsString>, cxx: Option<OsString>) -> Result<Compiler, String> {
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
fn probe(command: &OsStr) -> Result<Compiler, String> {
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
fn prepare_cache_dir() -> Result<PathBuf, String> {
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
fn temp_name(path: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let k = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}-{k}.tmp", std::process::id()));
    path.with_file_name(name)
}

/// Writes `path` through a temporary file and a rename.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = temp_name(path);
    let written = fs::write(&tmp, text).and_then(|()| fs::rename(&tmp, path));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// The first lines of a compiler's output.
fn truncate_log(log: &str) -> String {
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
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

fn is_c_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_c_type(s: &str) -> bool {
    !s.trim().is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || " _<>:,*&".contains(c))
}

/// Checks what the trampolines paste into C++ and what `launch` relies on.
fn validate(module: &ModuleData) -> Result<(), String> {
    let ns = module.namespace;
    if !is_c_ident(ns) {
        return Err(format!("the namespace {ns:?} is not a C++ identifier"));
    }
    for k in module.kernels {
        if !is_c_ident(k.name) {
            return Err(format!(
                "the kernel name {:?} is not a C identifier",
                k.name
            ));
        }
        let Some(last) = k.params.last() else {
            return Err(format!(
                "kernel `{}` has no parameters (the last is `n`)",
                k.name
            ));
        };
        if last.c_type.trim() != "long long" || last.size != 8 {
            return Err(format!(
                "the last parameter of kernel `{}` is `{} {}` ({} bytes), not `long long n`",
                k.name, last.c_type, last.name, last.size
            ));
        }
        for p in k.params {
            if !is_c_ident(p.name) {
                return Err(format!(
                    "kernel `{}`: the parameter name {:?} is not a C identifier",
                    k.name, p.name
                ));
            }
            if !is_c_type(p.c_type) {
                return Err(format!(
                    "kernel `{}`: parameter `{}` has the type {:?}, which the emulator does not \
                     accept as a C++ type",
                    k.name, p.name, p.c_type
                ));
            }
            if p.size == 0 || !p.align.is_power_of_two() {
                return Err(format!(
                    "kernel `{}`: parameter `{}` has size {} and alignment {} (a C type has a \
                     size of at least 1 and a power-of-two alignment)",
                    k.name, p.name, p.size, p.align
                ));
            }
        }
    }
    Ok(())
}

/// The trampolines of one kernel (inside the module's namespace).
fn trampoline(out: &mut String, k: &KernelData) {
    let name = k.name;
    let types: Vec<&str> = k.params.iter().map(|p| p.c_type.trim()).collect();
    let list = types.join(", ");
    let _ = writeln!(
        out,
        "extern \"C\" void {name}__pm_emu_part(void** pm_args, unsigned pm_part, unsigned pm_parts) {{"
    );
    let _ = writeln!(
        out,
        "    static_assert(std::is_same<decltype(&{name}), void (*)({list})>::value,\n        \
         \"pmexpr emulator: kernel `{name}` does not take the parameter types its KernelData lists ({list})\");"
    );
    for (i, p) in k.params.iter().enumerate() {
        let (t, pn, size, align) = (types[i], p.name, p.size, p.align);
        let _ = writeln!(
            out,
            "    static_assert(sizeof({t}) == {size}, \"pmexpr emulator: parameter `{pn}` of kernel `{name}`: its ParamData says size {size}, but sizeof({t}) differs\");\n    \
             static_assert(alignof({t}) == {align}, \"pmexpr emulator: parameter `{pn}` of kernel `{name}`: its ParamData says align {align}, but alignof({t}) differs\");\n    \
             static_assert(std::is_trivially_copyable<{t}>::value, \"pmexpr emulator: parameter `{pn}` of kernel `{name}`: {t} is not trivially copyable\");\n    \
             {t} pm_a{i};\n    \
             std::memcpy(&pm_a{i}, pm_args[{i}], sizeof pm_a{i});"
        );
    }
    let args: Vec<String> = (0..k.params.len()).map(|i| format!("pm_a{i}")).collect();
    let _ = writeln!(
        out,
        "    gridDim = {{pm_parts, 1u, 1u}};\n    blockDim = {{1u, 1u, 1u}};\n    \
         blockIdx = {{pm_part, 0u, 0u}};\n    threadIdx = {{0u, 0u, 0u}};\n    \
         {name}({});\n}}",
        args.join(", ")
    );
    let _ = writeln!(
        out,
        "extern \"C\" void {name}__pm_emu(void** pm_args) {{\n    {name}__pm_emu_part(pm_args, 0u, 1u);\n}}\n"
    );
}

/// The whole C++ file of a module.
fn cpp_text(module: &ModuleData) -> String {
    let mut out = String::with_capacity(SHIM.len() + module.source.len() + 4096);
    out.push_str(SHIM);
    out.push_str(module.source);
    if !module.source.ends_with('\n') {
        out.push('\n');
    }
    let ns = module.namespace;
    let _ = write!(
        out,
        "\n#pragma GCC visibility pop\n\n// ---- pmexpr CPU emulator trampolines ----\nnamespace {ns} {{\n\n"
    );
    for k in module.kernels {
        trampoline(&mut out, k);
    }
    let _ = writeln!(
        out,
        "}}  // namespace {ns}\n\nextern \"C\" unsigned long long* pm_emu_error_record() {{\n    return pmexpr_error;\n}}"
    );
    out
}

/// Loads a module's library; from a private copy if `private`. A module this process already has
/// loaded is loaded again from a copy: the dynamic loader would hand back the same library, whose
/// globals (the error record) the two loads would then share, unlike two loads of a module on a
/// GPU.
fn open_library(so: &Path, private: bool) -> Result<Library, String> {
    let copy = private.then(|| temp_name(so));
    if let Some(copy) = &copy
        && let Err(e) = fs::copy(so, copy)
    {
        let _ = fs::remove_file(copy);
        return Err(format!("cannot copy it to {}: {e}", copy.display()));
    }
    // SAFETY: the library is a module compiled by `Emulator::load`; its initializers only zero
    // globals.
    let library = unsafe { Library::new(copy.as_deref().unwrap_or(so)) };
    if let Some(copy) = &copy {
        // Its code stays mapped (on Windows the removal fails and the copy stays).
        let _ = fs::remove_file(copy);
    }
    library.map_err(|e| format!("cannot load it: {e}"))
}

/// `void <kernel>__pm_emu(void** args)`.
type Whole = unsafe extern "C" fn(*const *const c_void);
/// `void <kernel>__pm_emu_part(void** args, unsigned part, unsigned parts)`.
type Part = unsafe extern "C" fn(*const *const c_void, u32, u32);
/// `unsigned long long* pm_emu_error_record()`.
type ErrorRecord = unsafe extern "C" fn() -> *mut u64;

/// The address of a module's `pmexpr_error`.
struct ErrorPtr(*mut u64);

// SAFETY: it points into the library that the module keeps loaded; the module is used by one
// thread at a time (`LoadedModule` methods take `&mut self`).
unsafe impl Send for ErrorPtr {}

/// A module compiled for and loaded into this process.
struct EmulatedModule {
    module: &'static ModuleData,
    kernels: Vec<(Whole, Part)>,
    error: ErrorPtr,
    threads: usize,
    /// Counts it as a user of the cached library.
    _in_use: InUse,
    /// Keeps the code above loaded (dropped last).
    _library: Library,
}

/// One loaded module's use of a cached library (see [`Device::load`] for [`Emulator`]).
struct InUse {
    path: PathBuf,
    /// How many modules use the library, this one included, when this one was loaded.
    count: usize,
}

impl InUse {
    /// The modules of this process that use each cached library.
    fn map() -> MutexGuard<'static, BTreeMap<PathBuf, usize>> {
        static IN_USE: Mutex<BTreeMap<PathBuf, usize>> = Mutex::new(BTreeMap::new());
        IN_USE.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn take(path: &Path) -> InUse {
        let mut map = InUse::map();
        let count = map.entry(path.to_path_buf()).or_insert(0);
        *count += 1;
        InUse {
            path: path.to_path_buf(),
            count: *count,
        }
    }
}

impl Drop for InUse {
    fn drop(&mut self) {
        let mut map = InUse::map();
        if let Some(count) = map.get_mut(&self.path) {
            *count -= 1;
            if *count == 0 {
                map.remove(&self.path);
            }
        }
    }
}

impl Device for Emulator {
    fn name(&self) -> String {
        format!("CPU emulator ({})", self.compiler.shown)
    }

    fn load(&self, module: &'static ModuleData) -> DeviceResult<Box<dyn LoadedModule>> {
        let ns = module.namespace;
        validate(module)
            .map_err(|e| DeviceFailure(format!("CUDA emulator, module {ns:?}: {e}")))?;
        let text = cpp_text(module);
        let dir = self.cache_dir()?;
        let (cpp, so) = self.artifacts(dir, ns, &text);
        let build = || {
            write_atomically(&cpp, &text).map_err(|e| {
                DeviceFailure(format!(
                    "CUDA emulator: cannot write module `{ns}` to {}: {e}",
                    cpp.display()
                ))
            })?;
            self.compile(ns, &cpp, &so)
        };
        let built = !so.is_file();
        if built {
            build()?;
        }
        let load_failed = |what: String| {
            DeviceFailure(format!(
                "CUDA emulator: module `{ns}` ({}): {what}",
                so.display()
            ))
        };
        let in_use = InUse::take(&so);
        let library = match open_library(&so, in_use.count > 1) {
            Ok(library) => library,
            // A cached library that does not load (damaged, or built elsewhere) is built again.
            Err(_) if !built => {
                build()?;
                open_library(&so, in_use.count > 1).map_err(load_failed)?
            }
            Err(e) => return Err(load_failed(e)),
        };
        let mut kernels = Vec::with_capacity(module.kernels.len());
        for k in module.kernels {
            // SAFETY: the trampolines have these signatures (generated above).
            let whole = unsafe { library.get::<Whole>(format!("{}__pm_emu\0", k.name).as_bytes()) }
                .map_err(|e| load_failed(format!("no trampoline for kernel `{}`: {e}", k.name)))?;
            // SAFETY: as above.
            let part =
                unsafe { library.get::<Part>(format!("{}__pm_emu_part\0", k.name).as_bytes()) }
                    .map_err(|e| {
                        load_failed(format!("no trampoline for kernel `{}`: {e}", k.name))
                    })?;
            kernels.push((*whole, *part));
        }
        // SAFETY: as above.
        let record = unsafe { library.get::<ErrorRecord>(b"pm_emu_error_record\0") }
            .map_err(|e| load_failed(format!("no error record: {e}")))?;
        // SAFETY: it returns the address of a global array.
        let error = ErrorPtr(unsafe { record() });
        if error.0.is_null() {
            return Err(load_failed("the error record's address is null".into()));
        }
        Ok(Box::new(EmulatedModule {
            module,
            kernels,
            error,
            threads: self.threads,
            _in_use: in_use,
            _library: library,
        }))
    }

    fn alloc(&self, bytes: usize) -> DeviceResult<DevPtr> {
        if bytes == 0 {
            return Err(DeviceFailure(
                "CUDA emulator: an allocation of 0 bytes".into(),
            ));
        }
        let layout = std::alloc::Layout::from_size_align(bytes, ALLOC_ALIGN).map_err(|_| {
            DeviceFailure(format!(
                "CUDA emulator: cannot allocate {bytes} bytes (too large)"
            ))
        })?;
        // SAFETY: the layout's size is not zero.
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            return Err(DeviceFailure(format!(
                "CUDA emulator: out of memory allocating {bytes} bytes"
            )));
        }
        self.allocations().insert(ptr as u64, bytes);
        Ok(ptr as u64)
    }

    unsafe fn free(&self, ptr: DevPtr) {
        let size = self.allocations().remove(&ptr);
        // A pointer that is not a live allocation is ignored (nothing to free, and no panic).
        if let Some(size) = size {
            // SAFETY: allocated by `alloc` with this layout, and no longer in the map.
            unsafe {
                std::alloc::dealloc(
                    ptr as *mut u8,
                    std::alloc::Layout::from_size_align_unchecked(size, ALLOC_ALIGN),
                )
            };
        }
    }

    unsafe fn upload(&self, dst: DevPtr, src: &[u8]) -> DeviceResult<()> {
        if src.is_empty() {
            return Ok(());
        }
        self.check_range("an upload", dst, src.len())?;
        // SAFETY: `dst..dst + len` lies in a live allocation (checked), which `src` cannot
        // overlap (it is a shared borrow, the allocation is only written through `DevPtr`s).
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst as *mut u8, src.len()) };
        Ok(())
    }

    unsafe fn download(&self, src: DevPtr, dst: &mut [u8]) -> DeviceResult<()> {
        if dst.is_empty() {
            return Ok(());
        }
        self.check_range("a download", src, dst.len())?;
        // SAFETY: `src..src + len` lies in a live allocation (checked); `dst` is borrowed
        // mutably, so it is not that memory.
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }
}

impl LoadedModule for EmulatedModule {
    unsafe fn launch(&mut self, kernel: usize, n: i64, params: &[&[u8]]) -> DeviceResult<()> {
        let ns = self.module.namespace;
        let fail = |what: String| DeviceFailure(format!("CUDA emulator, module `{ns}`: {what}"));
        let (Some(k), Some(&(whole, part))) =
            (self.module.kernels.get(kernel), self.kernels.get(kernel))
        else {
            return Err(fail(format!(
                "no kernel #{kernel} (the module has {})",
                self.kernels.len()
            )));
        };
        if params.len() != k.params.len() {
            return Err(fail(format!(
                "kernel `{}` takes {} parameters, the launch gave {}",
                k.name,
                k.params.len(),
                params.len()
            )));
        }
        for (p, bytes) in k.params.iter().zip(params) {
            if bytes.len() != p.size {
                return Err(fail(format!(
                    "kernel `{}`: parameter `{}` ({}) is {} bytes, the launch gave {}",
                    k.name,
                    p.name,
                    p.c_type,
                    p.size,
                    bytes.len()
                )));
            }
        }
        if params.last().is_some_and(|last| *last != n.to_ne_bytes()) {
            return Err(fail(format!(
                "kernel `{}`: the launch is over 0..{n} but its last parameter, `n`, says otherwise",
                k.name
            )));
        }
        // SAFETY: the record is the module's `unsigned long long pmexpr_error[4]`, and no launch
        // of this module runs (`&mut self`).
        unsafe { std::ptr::write_bytes(self.error.0, 0, 4) };
        let args: Vec<*const c_void> = params.iter().map(|p| p.as_ptr().cast()).collect();
        let parts = (n / INDICES_PER_THREAD).clamp(1, self.threads as i64) as u32;
        if parts == 1 {
            // SAFETY: each argument is laid out as the kernel's parameter (the caller's contract,
            // sizes checked above, types checked by the trampoline when it compiled).
            unsafe { whole(args.as_ptr()) };
            return Ok(());
        }
        // Raw pointers are not `Send`; the threads only read the arguments, which outlive them.
        let args_addr = args.as_ptr() as usize;
        std::thread::scope(|scope| {
            let mut inline = Vec::new();
            for p in 1..parts {
                let spawned = std::thread::Builder::new()
                    .stack_size(THREAD_STACK)
                    .spawn_scoped(scope, move || {
                        // SAFETY: as in the one-thread case; each part runs other indices.
                        unsafe { part(args_addr as *const *const c_void, p, parts) }
                    });
                if spawned.is_err() {
                    inline.push(p);
                }
            }
            // SAFETY: as above.
            unsafe { part(args.as_ptr(), 0, parts) };
            for p in inline {
                // SAFETY: as above (a part whose thread could not start runs here).
                unsafe { part(args.as_ptr(), p, parts) };
            }
        });
        Ok(())
    }

    fn error_record(&mut self) -> DeviceResult<[u64; 4]> {
        let mut record = [0u64; 4];
        // SAFETY: the module's `pmexpr_error[4]`; no launch runs (`&mut self`).
        unsafe { std::ptr::copy_nonoverlapping(self.error.0, record.as_mut_ptr(), 4) };
        Ok(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::device::ParamData;

    const PRELUDE: &str = include_str!("../../../pmexpr-core/src/codegen/cuda_prelude.cu");
    const MARKER: &str = "// ---- the pmexpr CUDA prelude (codegen/cuda_prelude.cu) ----";
    const AXPY: &str = include_str!("../../../pmexpr-core/tests/golden/cuda/axpy.cu");
    const CHECKS: &str = include_str!("../../../pmexpr-core/tests/golden/cuda/checks.cu");
    const RECORDS: &str = include_str!("../../../pmexpr-core/tests/golden/cuda/records.cu");
    const WRAPPING: &str = include_str!("../../../pmexpr-core/tests/golden/cuda/wrapping.cu");

    /// Error codes (`DeviceError` in pmexpr-core's `codegen/cuda.rs`).
    const DIVISION_BY_ZERO: u64 = 1;
    const SEQ_OUT_OF_BOUNDS: u64 = 3;
    const TENSOR_WRONG_RANK: u64 = 4;
    const TENSOR_BAD_INDEX: u64 = 5;
    const NEVER: u64 = 11;

    /// The process's emulator, or `None` after saying why the test is skipped.
    fn emu() -> Option<&'static Emulator> {
        match emulator() {
            Ok(e) => Some(e),
            Err(why) => {
                println!("skipped: {why}");
                None
            }
        }
    }

    fn leak<T>(v: Vec<T>) -> &'static [T] {
        Box::leak(v.into_boxed_slice())
    }

    /// A golden file with the prelude in place of its marker line (as the generator emits it).
    fn with_prelude(golden: &str) -> &'static str {
        assert!(
            golden.contains(MARKER),
            "the golden file has no prelude marker"
        );
        let prelude = PRELUDE.replace("@MAX_RANK@", "3");
        Box::leak(golden.replace(MARKER, prelude.trim_end()).into_boxed_str())
    }

    fn param(name: &'static str, c_type: &'static str) -> ParamData {
        let (size, align) = match c_type {
            "long long" | "double" => (8, 8),
            "int" | "float" => (4, 4),
            "bool" => (1, 1),
            t if t.starts_with("pm_seq<") => (16, 8),
            t if t.starts_with("pm_tensor<") => (8 * (3 + 3), 8),
            t => panic!("no layout for {t}"),
        };
        ParamData {
            name,
            c_type,
            size,
            align,
        }
    }

    fn module(
        namespace: &'static str,
        source: &'static str,
        kernels: Vec<KernelData>,
    ) -> &'static ModuleData {
        Box::leak(Box::new(ModuleData {
            instantiation: &[],
            namespace,
            source,
            ptx: None,
            kernels: leak(kernels),
            checks: &[],
            max_rank: 3,
        }))
    }

    fn kernel(name: &'static str, params: Vec<ParamData>) -> KernelData {
        KernelData {
            name,
            params: leak(params),
        }
    }

    fn axpy_module() -> &'static ModuleData {
        static M: OnceLock<&'static ModuleData> = OnceLock::new();
        M.get_or_init(|| {
            module(
                "pm_axpy",
                with_prelude(AXPY),
                vec![kernel(
                    "pm_axpy_k0",
                    vec![
                        param("t1_12", "pm_tensor<long long>"),
                        param("t2_13", "pm_tensor<long long>"),
                        param("n", "long long"),
                    ],
                )],
            )
        })
    }

    fn checks_module() -> &'static ModuleData {
        module(
            "pm_checks_i64",
            with_prelude(CHECKS),
            vec![kernel(
                "pm_checks_i64_k0",
                vec![
                    param("s_11", "pm_seq<long long>"),
                    param("indices_12", "pm_seq<pm_seq<long long>>"),
                    param("t_13", "pm_tensor<long long>"),
                    param("t2_14", "pm_tensor<long long>"),
                    param("n", "long long"),
                ],
            )],
        )
    }

    /// Device buffers that are freed at the end of a test.
    struct Mem {
        emu: &'static Emulator,
        ptrs: Vec<DevPtr>,
    }

    impl Mem {
        fn new(emu: &'static Emulator) -> Mem {
            Mem {
                emu,
                ptrs: Vec::new(),
            }
        }

        fn upload(&mut self, bytes: &[u8]) -> DevPtr {
            let p = self.emu.alloc(bytes.len().max(1)).unwrap();
            // SAFETY: `p` was just allocated with at least this size.
            unsafe { self.emu.upload(p, bytes) }.unwrap();
            self.ptrs.push(p);
            p
        }

        fn i64s(&mut self, xs: &[i64]) -> DevPtr {
            self.upload(&xs.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<_>>())
        }

        fn f64s(&mut self, xs: &[f64]) -> DevPtr {
            self.upload(&xs.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<_>>())
        }

        fn read_i64s(&self, p: DevPtr, len: usize) -> Vec<i64> {
            let mut bytes = vec![0u8; len * 8];
            // SAFETY: `p` is a buffer of this test with at least `len` elements.
            unsafe { self.emu.download(p, &mut bytes) }.unwrap();
            bytes
                .chunks(8)
                .map(|c| i64::from_ne_bytes(c.try_into().unwrap()))
                .collect()
        }

        fn read_f64s(&self, p: DevPtr, len: usize) -> Vec<f64> {
            self.read_i64s(p, len)
                .into_iter()
                .map(|x| f64::from_bits(x as u64))
                .collect()
        }
    }

    impl Drop for Mem {
        fn drop(&mut self) {
            for &p in &self.ptrs {
                // SAFETY: allocated by this test, no longer used.
                unsafe { self.emu.free(p) };
            }
        }
    }

    /// A `pm_tensor<T>` (rank ≤ 3) as a kernel parameter.
    fn tensor(data: DevPtr, dims: &[i64]) -> Vec<u8> {
        let mut v = data.to_ne_bytes().to_vec();
        for d in 0..3 {
            v.extend(dims.get(d).copied().unwrap_or(0).to_ne_bytes());
        }
        v.extend((dims.len() as i64).to_ne_bytes());
        v.extend(dims.iter().product::<i64>().to_ne_bytes());
        v
    }

    /// A `pm_seq<T>` as a kernel parameter (or an element of a sequence of sequences).
    fn seq(data: DevPtr, len: usize) -> Vec<u8> {
        let mut v = data.to_ne_bytes().to_vec();
        v.extend((len as i64).to_ne_bytes());
        v
    }

    fn launch(m: &mut dyn LoadedModule, n: i64, params: &[Vec<u8>]) -> DeviceResult<[u64; 4]> {
        let slices: Vec<&[u8]> = params.iter().map(Vec::as_slice).collect();
        // SAFETY: the tests lay the parameters out as the kernels declare them, with buffers
        // large enough for the indices the generated checks let through.
        unsafe { m.launch(0, n, &slices) }?;
        m.error_record()
    }

    #[test]
    fn the_installed_gxx_runs() {
        match Command::new("g++").arg("--version").output() {
            Ok(out) if out.status.success() => {
                let v = String::from_utf8_lossy(&out.stdout);
                println!("{}", v.lines().next().unwrap_or(""));
            }
            other => println!("skipped: g++ --version: {other:?}"),
        }
    }

    #[test]
    fn finds_a_compiler_and_names_itself() {
        let Some(emu) = emu() else { return };
        assert_eq!(emu.name(), format!("CPU emulator ({})", emu.compiler()));
        assert!(emu.threads() >= 1);
        // An explicit choice that does not run is an error naming it, not a reason to look on.
        let e =
            find_compiler(Some("/nonexistent/pmexpr-c++".into()), Some("c++".into())).unwrap_err();
        assert!(e.contains("PMEXPR_CXX=/nonexistent/pmexpr-c++"), "{e}");
        let e = find_compiler(None, Some("/nonexistent/cxx --flag".into())).unwrap_err();
        assert!(e.contains("CXX=/nonexistent/cxx --flag"), "{e}");
        let c = find_compiler(Some(emu.compiler().into()), None).unwrap();
        assert_eq!(c.shown, emu.compiler());
    }

    #[test]
    fn axpy_over_a_tensor() {
        let Some(emu) = emu() else { return };
        let mut m = emu.load(axpy_module()).unwrap();
        let mut mem = Mem::new(emu);
        for n in [0usize, 1, 7, 10_000] {
            let t1: Vec<i64> = (0..n as i64).collect();
            let t2: Vec<i64> = (0..n as i64).map(|i| 1000 - 3 * i).collect();
            let (p1, p2) = (mem.i64s(&t1), mem.i64s(&t2));
            let dims = [n as i64];
            let record = launch(
                &mut *m,
                n as i64,
                &[
                    tensor(p1, &dims),
                    tensor(p2, &dims),
                    (n as i64).to_ne_bytes().to_vec(),
                ],
            )
            .unwrap();
            assert_eq!(record, [0; 4]);
            let want: Vec<i64> = t1.iter().zip(&t2).map(|(a, b)| a + 2 * b).collect();
            assert_eq!(mem.read_i64s(p1, n), want, "n = {n}");
            assert_eq!(mem.read_i64s(p2, n), t2);
        }
        // A negative `n` is an empty launch (that still clears the record).
        let p = mem.i64s(&[1]);
        let record = launch(
            &mut *m,
            -5,
            &[
                tensor(p, &[1]),
                tensor(p, &[0]),
                (-5i64).to_ne_bytes().to_vec(),
            ],
        );
        assert_eq!(record.unwrap(), [0; 4]);
        assert_eq!(mem.read_i64s(p, 1), [1]);
    }

    #[test]
    fn several_threads_cover_every_index_once() {
        let Some(global) = emu() else { return };
        // A private emulator with 4 threads, whatever this machine has.
        let emu: &'static Emulator = Box::leak(Box::new(Emulator::new().unwrap().with_threads(4)));
        assert_eq!(emu.threads(), 4);
        assert_eq!(emu.compiler(), global.compiler());
        let mut m = emu.load(axpy_module()).unwrap();
        let mut mem = Mem::new(emu);
        let n = 100_003usize;
        let t1 = vec![5i64; n];
        let t2: Vec<i64> = (0..n as i64).collect();
        let (p1, p2) = (mem.i64s(&t1), mem.i64s(&t2));
        let nb = (n as i64).to_ne_bytes().to_vec();
        let record = launch(
            &mut *m,
            n as i64,
            &[tensor(p1, &[n as i64]), tensor(p2, &[n as i64]), nb.clone()],
        )
        .unwrap();
        assert_eq!(record, [0; 4]);
        let want: Vec<i64> = t2.iter().map(|i| 5 + 2 * i).collect();
        assert_eq!(mem.read_i64s(p1, n), want);
        // One failing index: the record is the same on any number of threads. `t2` is one
        // element short, so `tensor_get(t2, [n - 1])` (check 2) fails.
        let record = launch(
            &mut *m,
            n as i64,
            &[tensor(p1, &[n as i64]), tensor(p2, &[n as i64 - 1]), nb],
        )
        .unwrap();
        assert_eq!(record, [TENSOR_BAD_INDEX, 2, 0, n as u64 - 1]);
    }

    #[test]
    fn runtime_checks_fill_the_error_record() {
        let Some(emu) = emu() else { return };
        let mut m = emu.load(checks_module()).unwrap();
        let mut mem = Mem::new(emu);
        // `t` and `t2` are 2×2; `indices[i]` is a full index into them.
        let t = mem.i64s(&[10, 20, 30, 40]);
        let t2 = mem.i64s(&[0; 4]);
        let run = |mem: &mut Mem, m: &mut dyn LoadedModule, s: &[i64], idx: &[&[i64]]| {
            let s_ptr = mem.i64s(s);
            let rows: Vec<u8> = idx
                .iter()
                .flat_map(|row| {
                    let p = mem.i64s(row);
                    seq(p, row.len())
                })
                .collect();
            let rows_ptr = mem.upload(&rows);
            mem.upload(&[0; 32]); // t2 is reset below
            // SAFETY: `t2` holds 4 elements.
            unsafe { emu.upload(t2, &[0; 32]) }.unwrap();
            let n = idx.len() as i64;
            let record = launch(
                m,
                n,
                &[
                    seq(s_ptr, s.len()),
                    seq(rows_ptr, idx.len()),
                    tensor(t, &[2, 2]),
                    tensor(t2, &[2, 2]),
                    n.to_ne_bytes().to_vec(),
                ],
            )
            .unwrap();
            (record, mem.read_i64s(t2, 4))
        };
        let idx: &[&[i64]] = &[&[0, 0], &[0, 1], &[1, 1]];
        // No error: t2[idx[i]] = s[i + 1] + t[idx[i]].
        let (record, out) = run(&mut mem, &mut *m, &[0, 1, 2, 3], idx);
        assert_eq!(record, [0; 4]);
        assert_eq!(out, [11, 22, 0, 43]);
        // `get(s, i + 1)` (check 1) past the end at i = 2: index 3 for a sequence of length 3;
        // the code goes on with 0.
        let (record, out) = run(&mut mem, &mut *m, &[0, 1, 2], idx);
        assert_eq!(record, [SEQ_OUT_OF_BOUNDS, 1, 3, 3]);
        assert_eq!(out, [11, 22, 0, 40]);
        // The next launch starts with a clear record.
        let (record, _) = run(&mut mem, &mut *m, &[0, 1, 2, 3], idx);
        assert_eq!(record, [0; 4]);
        // One index for a tensor of rank 2 (check 3, `tensor_get(t, idx)`): 1 index, rank 2.
        let (record, _) = run(&mut mem, &mut *m, &[0, 1, 2, 3], &[&[0, 0], &[1]]);
        assert_eq!(record, [TENSOR_WRONG_RANK, 3, 1, 2]);
        // An index out of its dimension: index 5 in dimension 1.
        let (record, out) = run(&mut mem, &mut *m, &[0, 1, 2, 3], &[&[0, 0], &[0, 5]]);
        assert_eq!(record, [TENSOR_BAD_INDEX, 3, 1, 5]);
        assert_eq!(out, [11, 0, 0, 0]);
        // `never!()` (check 4) when `s[i + 1] < 0`.
        let (record, _) = run(&mut mem, &mut *m, &[0, 1, -2, 3], idx);
        assert_eq!(record, [NEVER, 4, 0, 0]);
    }

    #[test]
    fn division_by_zero_and_wrapping_arithmetic() {
        let Some(emu) = emu() else { return };
        let module = module(
            "pm_wrapping",
            with_prelude(WRAPPING),
            vec![kernel(
                "pm_wrapping_k0",
                vec![
                    param("t_8", "pm_tensor<long long>"),
                    param("n", "long long"),
                ],
            )],
        );
        let mut m = emu.load(module).unwrap();
        let mut mem = Mem::new(emu);
        let t = [5, -7, i64::MIN, 42, i64::MAX, 1 << 40];
        let p = mem.i64s(&t);
        let n = t.len() as i64;
        let record = launch(&mut *m, n, &[tensor(p, &[n]), n.to_ne_bytes().to_vec()]).unwrap();
        // `a / (i - 3)` (check 2) at i = 3 divides 42 by zero.
        assert_eq!(record, [DIVISION_BY_ZERO, 2, 42, 0]);
        // Rust's wrapping semantics, and 0 for the failed division.
        let want: Vec<i64> = t
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                let big = i64::MAX.wrapping_mul(a).wrapping_add(a).wrapping_sub(1);
                let d = i as i64 - 3;
                let q = if d == 0 { 0 } else { a.wrapping_div(d) };
                let r = a.wrapping_rem(7);
                big.wrapping_add(q).wrapping_add(r).wrapping_neg()
            })
            .collect();
        assert_eq!(mem.read_i64s(p, t.len()), want);
    }

    #[test]
    fn records_in_sequences_and_doubles() {
        let Some(emu) = emu() else { return };
        let module = module(
            "pm_records",
            with_prelude(RECORDS),
            vec![kernel(
                "pm_records_k0",
                vec![
                    param("ps_24", "pm_seq<record1>"),
                    param("dt_25", "double"),
                    param("xs_26", "pm_tensor<double>"),
                    param("a_27", "pm_seq<long long>"),
                    param("b_28", "pm_seq<long long>"),
                    param("spread_29", "pm_tensor<long long>"),
                    param("n", "long long"),
                ],
            )],
        );
        let mut m = emu.load(module).unwrap();
        let mut mem = Mem::new(emu);
        // `record1 { double v; double x; }`: fields in label order.
        let ps = [(0.5, 1.0), (-2.0, 3.0), (4.0, -0.25)];
        let flat: Vec<f64> = ps.iter().flat_map(|&(v, x)| [v, x]).collect();
        let (a, b) = ([3i64, -4, 10], [7i64, 9, -10]);
        let ps_ptr = mem.f64s(&flat);
        let (a_ptr, b_ptr) = (mem.i64s(&a), mem.i64s(&b));
        let xs = mem.f64s(&[0.0; 3]);
        let spread = mem.i64s(&[0; 3]);
        let dt = 0.25f64;
        let record = launch(
            &mut *m,
            3,
            &[
                seq(ps_ptr, 3),
                dt.to_ne_bytes().to_vec(),
                tensor(xs, &[3]),
                seq(a_ptr, 3),
                seq(b_ptr, 3),
                tensor(spread, &[3]),
                3i64.to_ne_bytes().to_vec(),
            ],
        )
        .unwrap();
        assert_eq!(record, [0; 4]);
        let want_xs: Vec<f64> = ps.iter().map(|&(v, x)| x + v * dt).collect();
        assert_eq!(mem.read_f64s(xs, 3), want_xs);
        // spread = 2 hi - (2 hi + lo) = -min(a, b)
        let want_spread: Vec<i64> = a.iter().zip(&b).map(|(x, y)| -x.min(y)).collect();
        assert_eq!(mem.read_i64s(spread, 3), want_spread);
    }

    #[test]
    fn a_wrong_param_layout_fails_to_load() {
        let Some(emu) = emu() else { return };
        let base = axpy_module();
        let mut params = base.kernels[0].params.to_vec();
        params[0].size = 40;
        let wrong = module("pm_axpy", base.source, vec![kernel("pm_axpy_k0", params)]);
        let e = emu.load(wrong).err().expect("a wrong size loads").0;
        assert!(e.contains("module `pm_axpy`"), "{e}");
        assert!(
            e.contains("parameter `t1_12` of kernel `pm_axpy_k0`: its ParamData says size 40"),
            "{e}"
        );
        let mut params = base.kernels[0].params.to_vec();
        params[1].align = 16;
        let wrong = module("pm_axpy", base.source, vec![kernel("pm_axpy_k0", params)]);
        let e = emu.load(wrong).err().expect("a wrong alignment loads").0;
        assert!(
            e.contains("parameter `t2_13` of kernel `pm_axpy_k0`: its ParamData says align 16"),
            "{e}"
        );
        // A wrong type with the right layout: the kernel's signature does not match.
        let mut params = base.kernels[0].params.to_vec();
        params[1].c_type = "pm_tensor<double>";
        let wrong = module("pm_axpy", base.source, vec![kernel("pm_axpy_k0", params)]);
        let e = emu.load(wrong).err().expect("a wrong type loads").0;
        assert!(
            e.contains("kernel `pm_axpy_k0` does not take the parameter types"),
            "{e}"
        );
    }

    #[test]
    fn compile_errors_quote_the_compiler() {
        let Some(emu) = emu() else { return };
        let bad = module("pm_broken", "this is not C++;\n", vec![]);
        let e = emu.load(bad).err().expect("nonsense compiles").0;
        assert!(e.contains("module `pm_broken`"), "{e}");
        assert!(e.contains("error"), "{e}");
        assert!(e.lines().count() <= MAX_LOG_LINES + 2, "{e}");
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let Some(emu) = emu() else { return };
        let bad_ns = module("pm axpy", axpy_module().source, vec![]);
        assert!(emu.load(bad_ns).is_err());
        let no_n = module(
            "pm_axpy",
            axpy_module().source,
            vec![kernel(
                "pm_axpy_k0",
                vec![param("t1_12", "pm_tensor<long long>")],
            )],
        );
        let e = emu.load(no_n).err().unwrap().0;
        assert!(e.contains("not `long long n`"), "{e}");
        let quote = module(
            "pm_axpy",
            axpy_module().source,
            vec![kernel(
                "pm_axpy_k0",
                vec![
                    ParamData {
                        c_type: "long long\"",
                        ..param("t1_12", "long long")
                    },
                    param("n", "long long"),
                ],
            )],
        );
        assert!(emu.load(quote).is_err());

        let mut m = emu.load(axpy_module()).unwrap();
        let n = 4i64.to_ne_bytes().to_vec();
        let t = tensor(0, &[4]);
        // SAFETY: none of these launches reaches the kernel.
        unsafe {
            assert!(m.launch(1, 4, &[&t, &t, &n]).is_err());
            assert!(m.launch(0, 4, &[&t, &n]).is_err());
            assert!(m.launch(0, 4, &[&t, &t[..40], &n]).is_err());
            assert!(m.launch(0, 5, &[&t, &t, &n]).is_err());
        }
        assert!(emu.alloc(0).is_err());
        assert!(emu.alloc(usize::MAX).is_err());
        let p = emu.alloc(8).unwrap();
        // SAFETY: the emulator checks these ranges.
        unsafe {
            assert!(emu.upload(p + 4, &[0; 8]).is_err());
            assert!(emu.upload(p + 8, &[0; 1]).is_err());
            assert!(emu.upload(p.wrapping_sub(1), &[0; 1]).is_err());
            assert!(emu.download(p + 1, &mut [0; 8]).is_err());
            assert!(emu.upload(p + 4, &[1; 4]).is_ok());
            emu.free(p);
            assert!(emu.upload(p, &[0; 1]).is_err());
            emu.free(p); // twice: ignored
            emu.free(12345);
        }
    }

    #[test]
    fn a_compiled_module_is_reused() {
        let Some(_) = emu() else { return };
        // A private emulator, whose compilations this test counts.
        let emu: &'static Emulator = Box::leak(Box::new(Emulator::new().unwrap()));
        let module = axpy_module();
        let _first = emu.load(module).unwrap();
        let text = cpp_text(module);
        let (cpp, so) = emu.artifacts(emu.cache_dir().unwrap(), module.namespace, &text);
        assert_eq!(fs::read_to_string(&cpp).unwrap(), text);
        assert!(so.is_file());
        let compiled = emu.compilations.load(Ordering::Relaxed);
        assert!(compiled <= 1);
        let threads: Vec<_> = (0..4)
            .map(|_| std::thread::spawn(move || emu.load(module).map(|_| ())))
            .collect();
        for t in threads {
            t.join().unwrap().unwrap();
        }
        assert_eq!(emu.compilations.load(Ordering::Relaxed), compiled);
    }

    #[test]
    fn each_load_has_its_own_error_record() {
        let Some(emu) = emu() else { return };
        let mut first = emu.load(axpy_module()).unwrap();
        let mut second = emu.load(axpy_module()).unwrap();
        let mut mem = Mem::new(emu);
        let (p1, p2) = (mem.i64s(&[1, 2]), mem.i64s(&[3]));
        let two = 2i64.to_ne_bytes().to_vec();
        // `t2` has one element: `tensor_get(t2, [1])` (check 2) fails in the first module only.
        let record = launch(
            &mut *first,
            2,
            &[tensor(p1, &[2]), tensor(p2, &[1]), two.clone()],
        );
        assert_eq!(record.unwrap(), [TENSOR_BAD_INDEX, 2, 0, 1]);
        let record = launch(&mut *second, 2, &[tensor(p1, &[2]), tensor(p1, &[2]), two]);
        assert_eq!(record.unwrap(), [0; 4]);
        assert_eq!(first.error_record().unwrap(), [TENSOR_BAD_INDEX, 2, 0, 1]);
        assert_eq!(mem.read_i64s(p1, 2), [21, 6]);
        drop(first);
        assert_eq!(second.error_record().unwrap(), [0; 4]);
    }

    /// The kernels of a golden file and their parameters, from their signatures (kernel
    /// parameters are numbers, sequences and tensors).
    fn golden_kernels(source: &str) -> Vec<KernelData> {
        let mut kernels = Vec::new();
        for line in source.lines() {
            let Some(rest) = line.strip_prefix("extern \"C\" __global__ void ") else {
                continue;
            };
            let (name, rest) = rest.split_once('(').unwrap();
            let (list, _) = rest.rsplit_once(')').unwrap();
            let params = list
                .split(", ")
                .map(|p| {
                    let (t, n) = p.rsplit_once(' ').unwrap();
                    param(
                        Box::leak(n.to_string().into_boxed_str()),
                        Box::leak(t.to_string().into_boxed_str()),
                    )
                })
                .collect();
            kernels.push(kernel(Box::leak(name.to_string().into_boxed_str()), params));
        }
        kernels
    }

    /// The first module of a golden file (the `i64`/`f64` one where the file holds one per
    /// instantiation), its parameters read from the kernels' signatures.
    fn golden_module(golden: &str) -> &'static ModuleData {
        let source = with_prelude(golden);
        let ns = source
            .lines()
            .find_map(|l| l.strip_prefix("namespace ")?.strip_suffix(" {"))
            .unwrap();
        let own = golden_kernels(source)
            .into_iter()
            .filter(|k| k.name.strip_prefix(ns).is_some_and(|r| r.starts_with("_k")))
            .collect();
        module(Box::leak(ns.to_string().into_boxed_str()), source, own)
    }

    #[test]
    fn tensor_views_sequences_recursion_and_math() {
        let Some(emu) = emu() else { return };
        let mut mem = Mem::new(emu);
        let golden = |name: &str| {
            let dir =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../pmexpr-core/tests/golden/cuda");
            golden_module(&fs::read_to_string(dir.join(name)).unwrap())
        };
        let n8 = |n: i64| n.to_ne_bytes().to_vec();

        // tensor_views: out[i, j] = row[j] + block[0, j] + rank(m) + m[i, j] = 3 m[i, j] + 2.
        let mut m = emu.load(golden("tensor_views.cu")).unwrap();
        let (rows, cols) = (3i64, 4i64);
        let mat: Vec<i64> = (0..rows * cols).map(|k| k * k - 5).collect();
        let (pm, out) = (mem.i64s(&mat), mem.i64s(&vec![0; mat.len()]));
        let dims = [rows, cols];
        let record = launch(
            &mut *m,
            rows,
            &[tensor(pm, &dims), tensor(out, &dims), n8(rows)],
        );
        assert_eq!(record.unwrap(), [0; 4]);
        let want: Vec<i64> = mat.iter().map(|x| 3 * x + 2).collect();
        assert_eq!(mem.read_i64s(out, mat.len()), want);
        // One row too many: `tensor_slice(m, [i])` (check 5) at i = 3.
        let record = launch(
            &mut *m,
            rows + 1,
            &[tensor(pm, &dims), tensor(out, &dims), n8(rows + 1)],
        );
        assert_eq!(record.unwrap(), [TENSOR_BAD_INDEX, 5, 0, 3]);

        // sequences: the sum of each row of a sequence of sequences.
        let mut m = emu.load(golden("sequences.cu")).unwrap();
        let rows_data: [&[i64]; 4] = [&[1, 2, 3], &[], &[-10], &[5, 5, 5, 5, 5]];
        let seqs: Vec<u8> = rows_data
            .iter()
            .flat_map(|r| {
                let p = mem.i64s(r);
                seq(p, r.len())
            })
            .collect();
        let (pr, sums) = (mem.upload(&seqs), mem.i64s(&[0; 4]));
        let record = launch(&mut *m, 4, &[seq(pr, 4), tensor(sums, &[4]), n8(4)]);
        assert_eq!(record.unwrap(), [0; 4]);
        assert_eq!(mem.read_i64s(sums, 4), [6, 0, -10, 25]);

        // recursion: fib(i) for even i, else 0.
        let mut m = emu.load(golden("recursion.cu")).unwrap();
        let t = mem.i64s(&[0; 21]);
        let record = launch(&mut *m, 21, &[tensor(t, &[21]), n8(21)]);
        assert_eq!(record.unwrap(), [0; 4]);
        let fib = |n: i64| (0..n).fold((0i64, 1i64), |(a, b), _| (b, a + b)).0;
        let want: Vec<i64> = (0..21)
            .map(|i| if i % 2 == 0 { fib(i) } else { 0 })
            .collect();
        assert_eq!(mem.read_i64s(t, 21), want);

        // float_math: the host's libm against Rust's (both the C library on most systems).
        let mut m = emu.load(golden("float_math.cu")).unwrap();
        let xs = [0.0, 0.5, 1.0, 2.5, 10.0, 100.0];
        let (px, ys, fl) = (mem.f64s(&xs), mem.f64s(&[0.0; 6]), mem.i64s(&[0; 6]));
        let record = launch(
            &mut *m,
            6,
            &[tensor(px, &[6]), tensor(ys, &[6]), tensor(fl, &[6]), n8(6)],
        );
        assert_eq!(record.unwrap(), [0; 4]);
        let (got_y, got_fl) = (mem.read_f64s(ys, 6), mem.read_i64s(fl, 6));
        for (i, &x) in xs.iter().enumerate() {
            let y = (x * x + 1.0).sqrt()
                + (-x).exp()
                + (x + 2.0).ln()
                + x.powf(0.5)
                + x.sin() * x.cos();
            let want = y / (i as f64 + 1.0);
            assert!(
                (got_y[i] - want).abs() <= 1e-12 * want.abs().max(1.0),
                "{x}: {} vs {want}",
                got_y[i]
            );
            assert_eq!(got_fl[i], y.floor() as i64, "{x}");
        }
    }

    #[test]
    fn every_golden_module_compiles_with_checked_layouts() {
        let Some(emu) = emu() else { return };
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pmexpr-core/tests/golden/cuda");
        let mut files: Vec<PathBuf> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "cu"))
            .collect();
        files.sort();
        assert!(files.len() >= 10, "{}", dir.display());
        // One module per namespace (`generic.cu` holds one per instantiation).
        let mut modules: Vec<(String, &'static ModuleData)> = Vec::new();
        for f in &files {
            let source = with_prelude(&fs::read_to_string(f).unwrap());
            let kernels = golden_kernels(source);
            let namespaces = source
                .lines()
                .filter_map(|l| l.strip_prefix("namespace ")?.strip_suffix(" {"));
            for ns in namespaces {
                let ns: &'static str = Box::leak(ns.to_string().into_boxed_str());
                let own: Vec<KernelData> = kernels
                    .iter()
                    .filter(|k| k.name.strip_prefix(ns).is_some_and(|r| r.starts_with("_k")))
                    .copied()
                    .collect();
                assert!(!own.is_empty(), "{}: {ns}", f.display());
                modules.push((f.display().to_string(), module(ns, source, own)));
            }
        }
        let threads: Vec<_> = modules
            .into_iter()
            .map(|(f, m)| std::thread::spawn(move || (f, emu.load(m).map(|_| ()))))
            .collect();
        for t in threads {
            let (f, r) = t.join().unwrap();
            if let Err(e) = r {
                panic!("{f}: {e}");
            }
        }
    }
}
