//! The emulator's tests: it compiles and runs modules with the system's C++ compiler.

use super::compiler::{MAX_LOG_LINES, find_compiler};
use super::source::cpp_text;
use super::*;
use crate::cuda::device::{KernelData, ParamData};

const PRELUDE: &str = include_str!("../../../../pmexpr-core/src/codegen/cuda_prelude.cu");
const MARKER: &str = "// ---- the pmexpr CUDA prelude (codegen/cuda_prelude.cu) ----";
const AXPY: &str = include_str!("../../../../pmexpr-core/tests/golden/cuda/axpy.cu");
const CHECKS: &str = include_str!("../../../../pmexpr-core/tests/golden/cuda/checks.cu");
const RECORDS: &str = include_str!("../../../../pmexpr-core/tests/golden/cuda/records.cu");
const WRAPPING: &str = include_str!("../../../../pmexpr-core/tests/golden/cuda/wrapping.cu");

/// Error codes (`DeviceError` in pmexpr-core's `codegen/cuda/abi.rs`).
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
        "long long" | "unsigned long long" | "double" => (8, 8),
        "int" | "unsigned int" | "float" => (4, 4),
        "short" | "unsigned short" => (2, 2),
        "bool" | "signed char" | "unsigned char" => (1, 1),
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
            "pm_axpy_i64",
            with_prelude(AXPY),
            vec![kernel(
                "pm_axpy_i64_k0",
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
        "pm_checks_i64_i64_i64",
        with_prelude(CHECKS),
        vec![kernel(
            "pm_checks_i64_i64_i64_k0",
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
    let e = find_compiler(Some("/nonexistent/pmexpr-c++".into()), Some("c++".into())).unwrap_err();
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
        "pm_wrapping_i64",
        with_prelude(WRAPPING),
        vec![kernel(
            "pm_wrapping_i64_k0",
            vec![
                param("t_8", "pm_tensor<long long>"),
                param("n", "long long"),
            ],
        )],
    );
    let mut m = emu.load(module).unwrap();
    let mut mem = Mem::new(emu);
    // `MIN` away from i = 2, where `MIN / -1` would fail first.
    let t = [i64::MIN, -7, 5, 42, i64::MAX, 1 << 40];
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
        "pm_records_i64",
        with_prelude(RECORDS),
        vec![kernel(
            "pm_records_i64_k0",
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
    let wrong = module(
        "pm_axpy_i64",
        base.source,
        vec![kernel("pm_axpy_i64_k0", params)],
    );
    let e = emu.load(wrong).err().expect("a wrong size loads").0;
    assert!(e.contains("module `pm_axpy_i64`"), "{e}");
    assert!(
        e.contains("parameter `t1_12` of kernel `pm_axpy_i64_k0`: its ParamData says size 40"),
        "{e}"
    );
    let mut params = base.kernels[0].params.to_vec();
    params[1].align = 16;
    let wrong = module(
        "pm_axpy_i64",
        base.source,
        vec![kernel("pm_axpy_i64_k0", params)],
    );
    let e = emu.load(wrong).err().expect("a wrong alignment loads").0;
    assert!(
        e.contains("parameter `t2_13` of kernel `pm_axpy_i64_k0`: its ParamData says align 16"),
        "{e}"
    );
    // A wrong type with the right layout: the kernel's signature does not match.
    let mut params = base.kernels[0].params.to_vec();
    params[1].c_type = "pm_tensor<double>";
    let wrong = module(
        "pm_axpy_i64",
        base.source,
        vec![kernel("pm_axpy_i64_k0", params)],
    );
    let e = emu.load(wrong).err().expect("a wrong type loads").0;
    assert!(
        e.contains("kernel `pm_axpy_i64_k0` does not take the parameter types"),
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
        "pm_axpy_i64",
        axpy_module().source,
        vec![kernel(
            "pm_axpy_i64_k0",
            vec![param("t1_12", "pm_tensor<long long>")],
        )],
    );
    let e = emu.load(no_n).err().unwrap().0;
    assert!(e.contains("not `long long n`"), "{e}");
    let quote = module(
        "pm_axpy_i64",
        axpy_module().source,
        vec![kernel(
            "pm_axpy_i64_k0",
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
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pmexpr-core/tests/golden/cuda");
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
        let y =
            (x * x + 1.0).sqrt() + (-x).exp() + (x + 2.0).ln() + x.powf(0.5) + x.sin() * x.cos();
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
