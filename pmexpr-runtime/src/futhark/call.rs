//! Calling a compiled Futhark library (Futhark 0.25's C API, `docs/c-api.rst` of the Futhark
//! repository): one context per library and process, created at the first call and kept; calls
//! serialized by a `Mutex`; every return code and `futhark_context_sync` checked, a failure
//! reported with `futhark_context_get_error`'s text and the `accelerate!` site.
//!
//! The build hook generates, per site, a [`Library`] value and one `call` function per entry point
//! (they know the C signatures, which depend on the types); the rest is here.

use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::{Mutex, OnceLock};

use pmexpr_abi::Number;

use super::leaf::{Data, FutharkPrim, Leaf};
use crate::policy;
use crate::site::{Site, say_once};
use crate::target::Target;

/// Where the library's functions are.
#[derive(Debug, Clone, Copy)]
pub enum Lookup {
    /// Linked into the program (`c` and `multicore`): the generated glue maps names to addresses.
    Static(fn(&str) -> Option<*const ()>),
    /// A shared library (`cuda`), opened from this path only after the GPU probe succeeded.
    Shared(&'static str),
}

/// A compiled Futhark program as one site sees it.
#[derive(Debug)]
pub struct Library {
    /// Identifies the program (a hash of it and its flavour): the context is shared by all the
    /// sites that name the same one.
    pub id: &'static str,
    /// `c`, `multicore` or `cuda`.
    pub backend: &'static str,
    /// Its functions.
    pub lookup: Lookup,
    /// The site's entry points, one per instantiation of its number types.
    pub entries: &'static [Entry],
}

/// A generated entry-point caller.
pub type EntryFn = unsafe fn(&mut EntryCall<'_>) -> Result<(), String>;

/// One entry point of a site.
#[derive(Debug)]
pub struct Entry {
    /// Its Futhark name.
    pub name: &'static str,
    /// The numbers of the site's number type variables it was generated for (`Scalar::NUMBER`s,
    /// in the site's order).
    pub instantiation: &'static [Number],
    /// The captured variables in parameter order: name and number of leaves.
    pub params: &'static [(&'static str, usize)],
    /// Each input's element type and rank.
    pub inputs: &'static [(Number, usize)],
    /// Each output's element type and rank.
    pub outputs: &'static [(Number, usize)],
    /// Calls it (generated from the manifest).
    pub call: EntryFn,
}

/// The context functions of the C API.
#[derive(Clone, Copy)]
struct Api {
    config_new: unsafe extern "C" fn() -> *mut c_void,
    config_free: unsafe extern "C" fn(*mut c_void),
    context_new: unsafe extern "C" fn(*mut c_void) -> *mut c_void,
    context_free: unsafe extern "C" fn(*mut c_void),
    context_sync: unsafe extern "C" fn(*mut c_void) -> c_int,
    get_error: unsafe extern "C" fn(*mut c_void) -> *mut c_char,
}

/// A library's symbols, resolved.
struct Symbols {
    lookup: Lookup,
    /// Keeps a shared library loaded for the life of the process.
    shared: Option<&'static libloading::Library>,
}

impl Symbols {
    fn get(&self, name: &str) -> Option<*const ()> {
        match (self.lookup, self.shared) {
            (Lookup::Static(f), _) => f(name),
            (Lookup::Shared(_), Some(lib)) => {
                // SAFETY: only the address is read; callers give it the C API's signature.
                unsafe { lib.get::<*const ()>(name.as_bytes()) }
                    .ok()
                    .map(|s| *s)
            }
            (Lookup::Shared(_), None) => None,
        }
    }
}

/// A live context.
struct Context {
    api: Api,
    symbols: Symbols,
    cfg: *mut c_void,
    ctx: *mut c_void,
}

// SAFETY: a Futhark context may be used from any thread, one at a time; the Mutex around every
// `Context` ensures that.
unsafe impl Send for Context {}

impl Context {
    fn open(library: &Library) -> Result<Context, String> {
        let shared = match library.lookup {
            Lookup::Static(_) => None,
            Lookup::Shared(path) => {
                if library.backend == "cuda" {
                    load_cuda_globally()?;
                }
                // SAFETY: the library is the Futhark program the build compiled; loading it runs
                // no code of ours. It stays loaded (leaked) while the process runs.
                let lib = unsafe { libloading::Library::new(path) }
                    .map_err(|e| format!("cannot load the Futhark library {path}: {e}"))?;
                Some(&*Box::leak(Box::new(lib)))
            }
        };
        let symbols = Symbols {
            lookup: library.lookup,
            shared,
        };
        let api = Api {
            config_new: sym(&symbols, "futhark_context_config_new")?,
            config_free: sym(&symbols, "futhark_context_config_free")?,
            context_new: sym(&symbols, "futhark_context_new")?,
            context_free: sym(&symbols, "futhark_context_free")?,
            context_sync: sym(&symbols, "futhark_context_sync")?,
            get_error: sym(&symbols, "futhark_context_get_error")?,
        };
        // SAFETY: the C API's functions, called as documented: the configuration outlives the
        // context, and both are freed in `Drop` (or here on failure).
        unsafe {
            let cfg = (api.config_new)();
            if cfg.is_null() {
                return Err("futhark_context_config_new failed".into());
            }
            let ctx = (api.context_new)(cfg);
            if ctx.is_null() {
                (api.config_free)(cfg);
                return Err("futhark_context_new failed".into());
            }
            let context = Context {
                api,
                symbols,
                cfg,
                ctx,
            };
            if let Some(e) = context.error() {
                return Err(format!("the Futhark context cannot be created: {e}"));
            }
            Ok(context)
        }
    }

    /// The pending error, if any (`futhark_context_get_error` clears it).
    fn error(&self) -> Option<String> {
        // SAFETY: the string is malloc'ed by the library and ours to free.
        unsafe {
            let p = (self.api.get_error)(self.ctx);
            if p.is_null() {
                return None;
            }
            let text = CStr::from_ptr(p).to_string_lossy().trim_end().to_string();
            libc_free(p.cast());
            Some(text)
        }
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: created by `open`, freed once.
        unsafe {
            (self.api.context_free)(self.ctx);
            (self.api.config_free)(self.cfg);
        }
    }
}

/// Makes the CUDA driver and NVRTC visible to the `cuda` flavour's library, which the build did
/// not link against them (the build machine need not have a driver): both are opened with
/// `RTLD_GLOBAL`, once, before the library is.
fn load_cuda_globally() -> Result<(), String> {
    #[cfg(unix)]
    {
        use libloading::os::unix::{Library as Unix, RTLD_GLOBAL, RTLD_NOW};
        let nvrtc = crate::nvrtc::nvrtc().map_err(|e| e.to_string())?;
        for name in ["libcuda.so.1", nvrtc.path()] {
            // SAFETY: the driver and NVRTC, which the GPU probe and the CUDA target load too;
            // they stay loaded for the life of the process.
            let lib = unsafe { Unix::open(Some(name), RTLD_NOW | RTLD_GLOBAL) }
                .map_err(|e| format!("cannot load {name} for the Futhark CUDA library: {e}"))?;
            std::mem::forget(lib);
        }
        Ok(())
    }
    #[cfg(not(unix))]
    {
        Err("the Futhark cuda flavour is only supported on Unix".to_string())
    }
}

unsafe extern "C" {
    #[link_name = "free"]
    fn libc_free(p: *mut c_void);
}

/// A symbol as a function pointer of type `F`.
fn sym<F: Copy>(symbols: &Symbols, name: &str) -> Result<F, String> {
    assert_eq!(
        std::mem::size_of::<F>(),
        std::mem::size_of::<*const ()>(),
        "a function pointer"
    );
    let p = symbols
        .get(name)
        .ok_or_else(|| format!("the Futhark library has no function `{name}`"))?;
    // SAFETY: `F` is a function pointer type (same size as an address, checked above) with the
    // C API's signature for `name`, which the generated glue and the code above spell out.
    Ok(unsafe { std::mem::transmute_copy::<*const (), F>(&p) })
}

type Contexts = Mutex<HashMap<&'static str, Result<&'static Mutex<Context>, String>>>;

/// The context of `library`, opened at the first call (an error is remembered).
fn context(library: &Library) -> Result<&'static Mutex<Context>, String> {
    static CONTEXTS: OnceLock<Contexts> = OnceLock::new();
    let mut all = CONTEXTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    all.entry(library.id)
        .or_insert_with(|| Context::open(library).map(|c| &*Box::leak(Box::new(Mutex::new(c)))))
        .clone()
}

/// One call of an entry point: what the generated `call` function works with. Frees every array
/// it was given or returned when dropped.
pub struct EntryCall<'c> {
    context: &'c Context,
    /// The calling site's symbols: the context was opened by whichever site called first, whose
    /// glue declares only its own entry points.
    symbols: Symbols,
    inputs: Vec<Leaf<'c>>,
    outputs: Vec<Leaf<'static>>,
    /// Arrays to free: the object and the name of its `free` function.
    owned: Vec<(*mut c_void, &'static str)>,
}

impl<'c> EntryCall<'c> {
    /// The `struct futhark_context *`.
    pub fn ctx(&self) -> *mut c_void {
        self.context.ctx
    }

    /// The function `name` of the library as a function pointer of type `F` (which must be the C
    /// API's signature of `name`).
    pub fn sym<F: Copy>(&self, name: &str) -> Result<F, String> {
        sym(&self.symbols, name)
    }

    /// Input `i`, a scalar.
    pub fn scalar_in<T: FutharkPrim>(&self, i: usize) -> Result<T, String> {
        let leaf = self.input(i, T::NUMBER, 0)?;
        T::first(&leaf.data)
            .ok_or_else(|| format!("input {i} is not one {}", T::NUMBER.futhark_name()))
    }

    /// Input `i`, an array of rank `rank`: its elements and shape, for the `futhark_new_…`
    /// function the generated code calls.
    pub fn array_in<T: FutharkPrim>(
        &self,
        i: usize,
        rank: usize,
    ) -> Result<(*const T, Vec<i64>), String> {
        let leaf = self.input(i, T::NUMBER, rank)?;
        let ptr = match &leaf.data {
            Data::I64(d) => d.as_ptr().cast(),
            Data::F64(d) => d.as_ptr().cast(),
            Data::I32(d) => d.as_ptr().cast(),
            Data::F32(d) => d.as_ptr().cast(),
            Data::Bool(d) => d.as_ptr().cast(),
            Data::I8(d) => d.as_ptr().cast(),
            Data::I16(d) => d.as_ptr().cast(),
            Data::U8(d) => d.as_ptr().cast(),
            Data::U16(d) => d.as_ptr().cast(),
            Data::U32(d) => d.as_ptr().cast(),
            Data::U64(d) => d.as_ptr().cast(),
        };
        Ok((ptr, leaf.shape.clone()))
    }

    fn input(&self, i: usize, number: Number, rank: usize) -> Result<&Leaf<'c>, String> {
        let leaf = self
            .inputs
            .get(i)
            .ok_or_else(|| format!("input {i} is missing"))?;
        if leaf.data.number() != number || leaf.rank() != rank {
            return Err(format!(
                "input {i} is a {}-dimensional array of {}, not {rank}-dimensional of {}",
                leaf.rank(),
                leaf.data.number().futhark_name(),
                number.futhark_name()
            ));
        }
        Ok(leaf)
    }

    /// Takes ownership of an array the library allocated (freed with `free` when the call ends);
    /// a null pointer is the failure of the function `what`.
    pub fn own(
        &mut self,
        array: *mut c_void,
        free: &'static str,
        what: &str,
    ) -> Result<*mut c_void, String> {
        if array.is_null() {
            return Err(self.failure(what));
        }
        self.owned.push((array, free));
        Ok(array)
    }

    /// Checks the return code of the function `what` (0 is success).
    pub fn check(&self, rc: c_int, what: &str) -> Result<(), String> {
        if rc == 0 {
            Ok(())
        } else {
            Err(self.failure(what))
        }
    }

    /// Waits for the library's work and checks for an error.
    pub fn sync(&self) -> Result<(), String> {
        // SAFETY: the C API; the context is live.
        let rc = unsafe { (self.context.api.context_sync)(self.ctx()) };
        self.check(rc, "futhark_context_sync")
    }

    /// The next output: a scalar.
    pub fn scalar_out<T: FutharkPrim>(&mut self, value: T) {
        self.outputs.push(Leaf {
            shape: Vec::new(),
            data: T::data(std::borrow::Cow::Owned(vec![value])),
        });
    }

    /// The next output: an array of rank `rank` returned by the entry point (already owned),
    /// copied out with the type's `shape` and `values` functions.
    ///
    /// # Safety
    ///
    /// `array` must be a live array of this call's context whose element type is `T` and rank
    /// `rank`, and `shape` and `values` the manifest's functions of its type.
    pub unsafe fn array_out<T: FutharkPrim + Default>(
        &mut self,
        array: *mut c_void,
        rank: usize,
        shape: &str,
        values: &str,
    ) -> Result<(), String> {
        type ValuesFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_void) -> c_int;
        let values_fn: ValuesFn = self.sym(values)?;
        // SAFETY: as the caller promises; `values` writes the array's elements into the buffer,
        // complete after the sync.
        unsafe {
            let (dims, count) = self.shape_out(array, rank, shape)?;
            let mut buf = vec![T::default(); count];
            let rc = values_fn(self.ctx(), array, buf.as_mut_ptr().cast());
            self.check(rc, values)?;
            self.sync()?;
            self.outputs.push(Leaf {
                shape: dims,
                data: T::data(std::borrow::Cow::Owned(buf)),
            });
        }
        Ok(())
    }

    /// The next output, as [`EntryCall::array_out`], copied straight out of the array's memory
    /// (`values_raw`: host memory, the `c` and `multicore` libraries), in parallel when large:
    /// one pass over fresh memory instead of zeroing it and copying on one thread.
    ///
    /// # Safety
    ///
    /// As for [`EntryCall::array_out`], with `values_raw` the manifest's raw values function of
    /// the type, returning host memory.
    pub unsafe fn array_out_raw<T: FutharkPrim + Default + Send + Sync>(
        &mut self,
        array: *mut c_void,
        rank: usize,
        shape: &str,
        values_raw: &str,
    ) -> Result<(), String> {
        type RawFn = unsafe extern "C" fn(*mut c_void, *mut c_void) -> *const c_void;
        let raw_fn: RawFn = self.sym(values_raw)?;
        // The entry's work must be done before its memory is read.
        self.sync()?;
        // SAFETY: as the caller promises; `values_raw` gives the array's elements, in host
        // memory that lives as long as the array (freed when the call ends, after this copy).
        let (dims, src) = unsafe {
            let (dims, count) = self.shape_out(array, rank, shape)?;
            let data = raw_fn(self.ctx(), array);
            if data.is_null() && count > 0 {
                return Err(self.failure(values_raw));
            }
            let src: &[T] = if count == 0 {
                &[]
            } else {
                std::slice::from_raw_parts(data.cast::<T>(), count)
            };
            (dims, src)
        };
        self.outputs.push(Leaf {
            shape: dims,
            data: T::data(std::borrow::Cow::Owned(copy_out(src))),
        });
        Ok(())
    }

    /// The dimensions of an output array and their product, from the type's `shape` function.
    ///
    /// # Safety
    ///
    /// As for [`EntryCall::array_out`].
    unsafe fn shape_out(
        &self,
        array: *mut c_void,
        rank: usize,
        shape: &str,
    ) -> Result<(Vec<i64>, usize), String> {
        type ShapeFn = unsafe extern "C" fn(*mut c_void, *mut c_void) -> *const i64;
        let shape_fn: ShapeFn = self.sym(shape)?;
        // SAFETY: the C API: `shape` returns `rank` dimensions owned by the array.
        let dims = unsafe {
            let dims = shape_fn(self.ctx(), array);
            if dims.is_null() {
                return Err(self.failure(shape));
            }
            std::slice::from_raw_parts(dims, rank).to_vec()
        };
        let count = dims.iter().map(|&d| d.max(0) as usize).product();
        Ok((dims, count))
    }

    /// What failed, with the library's error text.
    fn failure(&self, what: &str) -> String {
        match self.context.error() {
            Some(e) => format!("{what} failed: {e}"),
            None => format!("{what} failed"),
        }
    }
}

impl Drop for EntryCall<'_> {
    fn drop(&mut self) {
        type FreeFn = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;
        for (array, free) in self.owned.drain(..).rev() {
            if let Ok(f) = sym::<FreeFn>(&self.symbols, free) {
                // SAFETY: an array of this context, freed once.
                unsafe { f(self.context.ctx, array) };
            }
        }
    }
}

/// One call of a site on its Futhark library: collects the captured variables' leaves, then runs
/// the entry point.
pub struct FutharkCall<'a> {
    site: &'static Site,
    library: &'static Library,
    context: &'static Mutex<Context>,
    entry: &'static Entry,
    params: Vec<(&'static str, Vec<Leaf<'a>>)>,
    explicit: bool,
}

thread_local! {
    static CALLS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many Futhark entry points this thread has called: how tests tell that a site really ran
/// on its Futhark library rather than on the CPU.
pub fn calls_on_this_thread() -> u64 {
    CALLS.with(std::cell::Cell::get)
}

/// Says once on stderr that the site at `site` has no Futhark library and runs on the CPU (under
/// the `futhark` target; used by generated code).
#[doc(hidden)]
pub fn futhark_missing(site: &'static Site) {
    say_once(
        format!("{site} missing"),
        &format!(
            "pmexpr: accelerate! at {site} runs on the CPU: it has no Futhark library (the build did not find the `futhark` compiler or could not build the library; see its warnings)"
        ),
    );
}

impl<'a> FutharkCall<'a> {
    /// Starts a call of the site's entry point for `instantiation` (the numbers its number type
    /// variables are, from the captured values' Rust types). `None`: run on the CPU — for [`Target::Auto`] unless the library is the
    /// `cuda` flavour and usable (else said once on stderr), and for any target when the
    /// library has no entry point for these number types (said once under the `futhark` target).
    /// An explicit `futhark` target whose library cannot be used (no GPU for the `cuda` flavour,
    /// a context that cannot be created) fails at the site.
    pub fn begin(
        site: &'static Site,
        library: &'static Library,
        instantiation: &[Number],
        target: Target,
    ) -> Option<FutharkCall<'a>> {
        let explicit = target == Target::Futhark;
        let refuse = |why: String| -> Option<FutharkCall<'a>> {
            if explicit {
                site.fail(format_args!(
                    "the futhark target cannot run this site: {why}"
                ));
            }
            say_once(
                why.clone(),
                &format!(
                    "pmexpr: Futhark-class accelerate! sites run on the CPU: {why} (set PMEXPR_BACKEND=cpu to choose the CPU and not see this line)"
                ),
            );
            None
        };
        if !explicit && library.backend != "cuda" {
            // On the CPU the `cpu` target is at least as fast (the library copies every array
            // result out of its context: see BENCHMARKS.md); the library is for `futhark`.
            return None;
        }
        if library.backend == "cuda"
            && let Err(why) = crate::gpu::probe()
        {
            return refuse(format!(
                "the Futhark library was compiled for CUDA and there is no usable GPU ({why})"
            ));
        }
        let Some(entry) = library
            .entries
            .iter()
            .find(|e| e.instantiation == instantiation)
        else {
            if explicit {
                let names: Vec<&str> = instantiation.iter().map(|n| n.rust_name()).collect();
                say_once(
                    format!("{site} {names:?}"),
                    &format!(
                        "pmexpr: accelerate! at {site} runs on the CPU: its Futhark library has no entry point for the number types {names:?}"
                    ),
                );
            }
            return None;
        };
        let context = match context(library) {
            Ok(c) => c,
            Err(why) => return refuse(why),
        };
        Some(FutharkCall {
            site,
            library,
            context,
            entry,
            params: Vec::new(),
            explicit,
        })
    }

    /// Whether every captured sequence's lengths are known. An empty sequence of sequences
    /// (`Vec::<Vec<f64>>::new()`) has no rows to give its inner length, which the entry point
    /// may check against another argument's (a product of no rows by a 2 × 2 matrix), so the
    /// site runs on the CPU: the same result (said once under the `futhark` target).
    pub fn shapes_known(&self) -> bool {
        let unknown = self.params.iter().find(|(_, leaves)| {
            leaves.iter().any(|l| {
                l.shape
                    .split_last()
                    .is_some_and(|(_, outer)| outer.contains(&0))
            })
        });
        if let Some((name, _)) = unknown
            && self.explicit
        {
            say_once(
                format!("{} empty {name}", self.site),
                &format!(
                    "pmexpr: accelerate! at {} runs on the CPU when `{name}` is an empty sequence of sequences (its inner length is unknown to Futhark)",
                    self.site
                ),
            );
        }
        unknown.is_none()
    }

    /// Adds a captured variable by name.
    pub fn param<T: super::leaf::FutharkArg + ?Sized>(&mut self, name: &'static str, value: &'a T) {
        match super::leaf::leaves_of(value) {
            Ok(leaves) => self.params.push((name, leaves)),
            Err(e) => self
                .site
                .fail(format_args!("captured variable `{name}`: {e}")),
        }
    }

    /// Runs the entry point and rebuilds the result; a failure fails at the site.
    pub fn run<R: super::leaf::FutharkResult>(self) -> R {
        let site = self.site;
        match self.run_leaves() {
            Ok(leaves) => super::leaf::from_leaves(leaves)
                .unwrap_or_else(|e| site.fail(format_args!("on the futhark target: {e}"))),
            Err(e) => site.fail(format_args!("on the futhark target: {e}")),
        }
    }

    fn run_leaves(self) -> Result<Vec<Leaf<'static>>, String> {
        let FutharkCall {
            library,
            context,
            entry,
            mut params,
            ..
        } = self;
        let mut inputs = Vec::new();
        for (name, count) in entry.params {
            let k = params.iter().position(|(n, _)| n == name).ok_or_else(|| {
                format!("entry point `{}` takes `{name}`, which the site does not capture (a bug in pmexpr: please report it)", entry.name)
            })?;
            let (_, leaves) = params.swap_remove(k);
            if leaves.len() != *count {
                return Err(format!(
                    "`{name}` crosses as {} values where entry point `{}` takes {count} (a bug in pmexpr: please report it)",
                    leaves.len(),
                    entry.name
                ));
            }
            inputs.extend(leaves);
        }
        let kinds: Vec<(Number, usize)> =
            inputs.iter().map(|l| (l.data.number(), l.rank())).collect();
        if kinds != entry.inputs {
            return Err(format!(
                "the captured values cross as {kinds:?} where entry point `{}` takes {:?} (a bug in pmexpr: please report it)",
                entry.name, entry.inputs
            ));
        }
        let guard = context.lock().unwrap_or_else(|e| e.into_inner());
        let mut call = EntryCall {
            context: &guard,
            symbols: Symbols {
                lookup: library.lookup,
                shared: guard.symbols.shared,
            },
            inputs,
            outputs: Vec::new(),
            owned: Vec::new(),
        };
        // SAFETY: `call` is the function generated for this entry point from the library's
        // manifest; its inputs were checked against the entry's signature above.
        unsafe { (entry.call)(&mut call) }
            .map_err(|e| format!("entry point `{}`: {e}", entry.name))?;
        CALLS.with(|c| c.set(c.get() + 1));
        Ok(std::mem::take(&mut call.outputs))
    }
}

/// A copy of `src`, made in parallel from a megabyte
/// ([`policy::FUTHARK_PARALLEL_COPY_FROM_BYTES`]).
fn copy_out<T: Copy + Send + Sync>(src: &[T]) -> Vec<T> {
    use policy::FUTHARK_COPY_CHUNK as CHUNK;
    use rayon::prelude::*;
    if std::mem::size_of_val(src) < policy::FUTHARK_PARALLEL_COPY_FROM_BYTES {
        return src.to_vec();
    }
    let mut out: Vec<T> = Vec::with_capacity(src.len());
    (out.spare_capacity_mut()[..src.len()])
        .par_chunks_mut(CHUNK)
        .zip(src.par_chunks(CHUNK))
        .for_each(|(dst, src)| {
            for (d, s) in dst.iter_mut().zip(src) {
                d.write(*s);
            }
        });
    // SAFETY: every element below `src.len()` was written above.
    unsafe { out.set_len(src.len()) };
    out
}

#[cfg(test)]
mod copy_tests {
    use super::copy_out;

    #[test]
    fn copies_small_and_large_arrays_whole() {
        for n in [0_usize, 3, (1 << 17) + 5, 3 << 18] {
            let src: Vec<f64> = (0..n).map(|i| i as f64 * 0.5 - 7.0).collect();
            assert_eq!(copy_out(&src), src, "{n} elements");
        }
        let flags: Vec<bool> = (0..(1 << 21)).map(|i| i % 3 == 0).collect();
        assert_eq!(copy_out(&flags), flags);
    }
}
