//! The calling side of the Futhark target against a small C library that implements Futhark
//! 0.25's C API for one entry point (`docs/c-api.rst`), compiled here with the system C compiler
//! (the one Rust links with) and opened as a `cuda`-flavour library would be: the context, the
//! marshaling of leaves both ways, the checks of return codes with the library's error text, and
//! that every array is freed. The entry call below is written as `pmexpr-build`'s glue generator
//! writes it (`futhark::glue`); the code generated from a real manifest is compiled wherever the
//! `futhark` compiler is found.

use std::ffi::c_void;
use std::process::Command;
use std::sync::OnceLock;

use pmexpr_abi::Number;

use super::call::{Entry, EntryCall, FutharkCall, Library, Lookup};
use crate::seq::Seq;
use crate::site::Site;
use crate::target::Target;

/// `(f64, []f64) entry scale (xs: []f64) (c: f64)`: the sum of `xs` and `xs` times `c`; a
/// negative element is an error, as a failed `assert` would be.
const LIBRARY_C: &str = r#"
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
struct futhark_context_config { int unused; };
struct futhark_context { char *error; };
struct futhark_f64_1d { double *data; int64_t shape[1]; };
static int live_arrays = 0;
int test_live_arrays(void) { return live_arrays; }
struct futhark_context_config *futhark_context_config_new(void) { return calloc(1, sizeof(struct futhark_context_config)); }
void futhark_context_config_free(struct futhark_context_config *c) { free(c); }
struct futhark_context *futhark_context_new(struct futhark_context_config *c) { (void)c; return calloc(1, sizeof(struct futhark_context)); }
void futhark_context_free(struct futhark_context *c) { free(c->error); free(c); }
int futhark_context_sync(struct futhark_context *c) { (void)c; return 0; }
char *futhark_context_get_error(struct futhark_context *c) { char *e = c->error; c->error = NULL; return e; }
struct futhark_f64_1d *futhark_new_f64_1d(struct futhark_context *c, const double *data, int64_t d0) {
  (void)c;
  struct futhark_f64_1d *a = malloc(sizeof *a);
  a->data = malloc(sizeof(double) * (d0 > 0 ? d0 : 1));
  memcpy(a->data, data, sizeof(double) * d0);
  a->shape[0] = d0;
  live_arrays++;
  return a;
}
int futhark_free_f64_1d(struct futhark_context *c, struct futhark_f64_1d *a) { (void)c; free(a->data); free(a); live_arrays--; return 0; }
const int64_t *futhark_shape_f64_1d(struct futhark_context *c, struct futhark_f64_1d *a) { (void)c; return a->shape; }
int futhark_values_f64_1d(struct futhark_context *c, struct futhark_f64_1d *a, double *data) { (void)c; memcpy(data, a->data, sizeof(double) * a->shape[0]); return 0; }
int futhark_entry_scale(struct futhark_context *c, double *out0, struct futhark_f64_1d **out1, const struct futhark_f64_1d *in0, double in1) {
  double s = 0;
  for (int64_t i = 0; i < in0->shape[0]; i++) {
    if (in0->data[i] < 0) { c->error = strdup("Error: Assertion is false: xs >= 0\n\nBacktrace:\n-> #0  program.fut:3:5-20\n"); return 1; }
    s += in0->data[i];
  }
  struct futhark_f64_1d *r = futhark_new_f64_1d(c, in0->data, in0->shape[0]);
  for (int64_t i = 0; i < r->shape[0]; i++) r->data[i] *= in1;
  *out0 = s;
  *out1 = r;
  return 0;
}
"#;

/// The glue generator's call of `scale`.
unsafe fn call_scale(c: &mut EntryCall<'_>) -> Result<(), String> {
    type New = unsafe extern "C" fn(*mut c_void, *const f64, i64) -> *mut c_void;
    type Scale =
        unsafe extern "C" fn(*mut c_void, *mut f64, *mut *mut c_void, *const c_void, f64) -> i32;
    // SAFETY: `New` and `Scale` are the signatures of those functions in `LIBRARY_C`; they get
    // this call's live context, input 0's elements and length as `array_in` gives them, and
    // pointers to locals that outlive the calls. Every array made is handed to `c.own`, which
    // frees it once; once the entry succeeded, `out1` is the live `f64` array of rank 1 that
    // it stored there, which `array_out` reads with that type's `shape` and `values` functions.
    unsafe {
        let (p0, s0) = c.array_in::<f64>(0, 1)?;
        let new0: New = c.sym("futhark_new_f64_1d")?;
        let in0 = c.own(
            new0(c.ctx(), p0, s0[0]),
            "futhark_free_f64_1d",
            "futhark_new_f64_1d",
        )?;
        let in1 = c.scalar_in::<f64>(1)?;
        let mut out0: f64 = 0.0;
        let mut out1: *mut c_void = std::ptr::null_mut();
        let entry: Scale = c.sym("futhark_entry_scale")?;
        let rc = entry(c.ctx(), &mut out0, &mut out1, in0, in1);
        if !out1.is_null() {
            c.own(out1, "futhark_free_f64_1d", "futhark_entry_scale")?;
        }
        c.check(rc, "futhark_entry_scale")?;
        c.sync()?;
        c.scalar_out::<f64>(out0);
        c.array_out::<f64>(out1, 1, "futhark_shape_f64_1d", "futhark_values_f64_1d")?;
        Ok(())
    }
}

static ENTRIES: [Entry; 1] = [Entry {
    name: "scale",
    instantiation: &[],
    params: &[("xs", 1), ("c", 1)],
    inputs: &[(Number::F64, 1), (Number::F64, 0)],
    outputs: &[(Number::F64, 0), (Number::F64, 1)],
    call: call_scale,
}];

/// The same entry point as the `f64` instantiation of a site whose element type is open.
static OPEN_ENTRIES: [Entry; 1] = [Entry {
    name: "scale",
    instantiation: &[Number::F64],
    params: &[("xs", 1), ("c", 1)],
    inputs: &[(Number::F64, 1), (Number::F64, 0)],
    outputs: &[(Number::F64, 0), (Number::F64, 1)],
    call: call_scale,
}];

/// The library, compiled once per test process (`None`, said, without a C compiler).
fn library() -> Option<&'static Library> {
    static LIB: OnceLock<Option<&'static Library>> = OnceLock::new();
    *LIB.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("pmexpr-futhark-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let c = dir.join("lib.c");
        let so = dir.join("libtest_futhark.so");
        std::fs::write(&c, LIBRARY_C).ok()?;
        match Command::new("cc")
            .args(["-std=c99", "-O1", "-shared", "-fPIC", "-o"])
            .arg(&so)
            .arg(&c)
            .output()
        {
            Ok(o) if o.status.success() => {}
            Ok(o) => panic!(
                "the test library does not compile:\n{}",
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => {
                println!("skipped: the Futhark C API tests (no C compiler `cc`: {e})");
                return None;
            }
        }
        let path: &'static str = Box::leak(so.display().to_string().into_boxed_str());
        Some(&*Box::leak(Box::new(Library {
            id: "pmexpr-runtime-test",
            backend: "multicore",
            lookup: Lookup::Shared(path),
            entries: &ENTRIES,
        })))
    })
}

fn live_arrays(library: &Library) -> i32 {
    let Lookup::Shared(path) = library.lookup else {
        unreachable!("a shared library")
    };
    // SAFETY: the library above, already loaded; `test_live_arrays` takes nothing.
    unsafe {
        let lib = libloading::Library::new(path).unwrap();
        let f: libloading::Symbol<unsafe extern "C" fn() -> i32> =
            lib.get(b"test_live_arrays").unwrap();
        f()
    }
}

/// The tests count the library's live arrays: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

static SITE: Site = Site::new("src/test.rs", 4, 2);

fn scale(library: &'static Library, xs: &[f64], c: f64) -> (f64, Seq<'static, f64>) {
    let xs = Seq::borrowed(xs);
    let mut call = FutharkCall::begin(&SITE, library, &[], Target::Futhark).expect("usable");
    call.param("c", &c);
    call.param("xs", &xs);
    call.run()
}

#[test]
fn an_entry_point_returns_a_scalar_and_an_array_and_frees_everything() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(library) = library() else { return };
    let before = super::calls_on_this_thread();
    let (sum, scaled) = scale(library, &[1.0, 2.0, 3.5], 2.0);
    assert_eq!(sum, 6.5);
    assert_eq!(scaled.as_slice(), [2.0, 4.0, 7.0]);
    let (sum, scaled) = scale(library, &[], 2.0);
    assert_eq!((sum, scaled.len()), (0.0, 0));
    assert_eq!(super::calls_on_this_thread() - before, 2);
    assert_eq!(live_arrays(library), 0, "every array is freed");
}

#[test]
fn a_failure_names_the_site_and_carries_the_library_s_message() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(library) = library() else { return };
    let message = std::panic::catch_unwind(|| scale(library, &[1.0, -1.0], 1.0))
        .unwrap_err()
        .downcast_ref::<String>()
        .cloned()
        .unwrap();
    assert!(
        message.starts_with("pmexpr: accelerate! at src/test.rs:4:2: on the futhark target: entry point `scale`: futhark_entry_scale failed: Error: Assertion is false: xs >= 0"),
        "{message}"
    );
    assert_eq!(
        live_arrays(library),
        0,
        "the input is freed after a failure too"
    );
    // The context is still usable.
    assert_eq!(scale(library, &[4.0], 0.5).0, 4.0);
}

#[test]
fn inputs_that_do_not_fit_the_entry_are_refused_before_the_call() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(library) = library() else { return };
    let message = std::panic::catch_unwind(|| {
        let mut call = FutharkCall::begin(&SITE, library, &[], Target::Futhark).expect("usable");
        call.param("xs", &7.0_f64);
        call.param("c", &1.0_f64);
        call.run::<(f64, Seq<'static, f64>)>()
    })
    .unwrap_err()
    .downcast_ref::<String>()
    .cloned()
    .unwrap();
    assert!(message.contains("a bug in pmexpr"), "{message}");
    // No entry point for other number types: the CPU runs the site.
    assert!(FutharkCall::begin(&SITE, library, &[Number::F32], Target::Futhark).is_none());
}

/// The call as generated code makes it for a site whose element type `N` is open (the captured
/// values fix it): the instantiation is asked of `N`'s Rust type at run time
/// (`crate::numeric::open_instantiation`), and the site runs on the CPU (`None`) where `N` is not a
/// number or `bool`.
fn scale_open<'pm, N>(
    library: &'static Library,
    xs: &'pm Seq<'pm, N>,
    c: &'pm N,
) -> Option<(N, Seq<'pm, N>)>
where
    N: crate::numeric::Value + super::FutharkArg + super::FutharkResult,
{
    let names = [crate::numeric::open_instantiation::<N>(
        &SITE,
        Target::Futhark,
        "xs",
        <Seq<'pm, N> as crate::numeric::OpenType>::rust_name,
    )?];
    let mut call = FutharkCall::begin(&SITE, library, &names, Target::Futhark)?;
    call.param("c", c);
    call.param("xs", xs);
    Some(call.run())
}

#[test]
fn an_open_element_type_picks_the_entry_of_its_rust_type() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(library) = library() else { return };
    let open: &'static Library = Box::leak(Box::new(Library {
        id: "pmexpr-runtime-test-open",
        entries: &OPEN_ENTRIES,
        ..*library
    }));
    let before = super::calls_on_this_thread();
    let xs = Seq::from_vec(vec![1.0_f64, 2.5]);
    let (sum, scaled) = scale_open(open, &xs, &2.0).expect("the f64 entry");
    assert_eq!((sum, scaled.as_slice()), (3.5, &[2.0, 5.0][..]));
    assert_eq!(super::calls_on_this_thread() - before, 1);
    // No entry for `i64` here; a pair has none anywhere: both run on the CPU, with no call.
    let ints = Seq::from_vec(vec![1_i64]);
    assert!(scale_open(open, &ints, &2).is_none());
    let pairs = Seq::from_vec(vec![(1.0_f64, 2.0_f64)]);
    assert!(scale_open(open, &pairs, &(0.0, 0.0)).is_none());
    assert_eq!(super::calls_on_this_thread() - before, 1);
    assert_eq!(live_arrays(library), 0);
}
