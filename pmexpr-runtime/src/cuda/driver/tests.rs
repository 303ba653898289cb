//! The GPU device: what needs no GPU is tested everywhere (launch arithmetic, architecture
//! choice, messages, NVRTC where it is installed); what needs one is tested where there is one,
//! and says it skipped otherwise.

use super::*;
use crate::cuda::device::ParamData;

#[test]
fn the_grid_is_one_thread_per_index_up_to_one_wave() {
    // 132 SMs, 8 blocks of 256 threads each: a wave is 1056 blocks.
    let grid = |n| grid_for(n, 256, 132, 8);
    assert_eq!(grid(1), 1);
    assert_eq!(grid(256), 1);
    assert_eq!(grid(257), 2);
    assert_eq!(grid(256 * 1000), 1000);
    assert_eq!(grid(256 * 1056), 1056);
    assert_eq!(grid(256 * 1056 + 1), 1056);
    assert_eq!(grid(i64::MAX), 1056);
    // No launch is made for n <= 0, but the arithmetic still gives a valid grid.
    assert_eq!(grid(0), 1);
    assert_eq!(grid(-5), 1);
    // Degenerate occupancy answers still give at least one block.
    assert_eq!(grid_for(1000, 0, 132, 8), 1000);
    assert_eq!(grid_for(1000, 128, 132, 0), 1);
    assert_eq!(grid_for(1000, 128, 0, 8), 1);
    // Never past the grid's x limit.
    assert_eq!(grid_for(i64::MAX, 1, u32::MAX, u32::MAX), (1u32 << 31) - 1);
    let config = LaunchConfig {
        block: 1024,
        multiprocessors: 108,
        blocks_per_multiprocessor: 2,
    };
    assert_eq!(config.grid(100_000_000), 216);
    assert_eq!(config.grid(5000), 5);
}

#[test]
fn the_gpus_own_architecture_comes_first_then_older_ones() {
    assert_eq!(arch_candidates(9, 0), ["compute_90", "compute_80"]);
    assert_eq!(arch_candidates(8, 0), ["compute_80"]);
    assert_eq!(arch_candidates(8, 6), ["compute_86", "compute_80"]);
    assert_eq!(arch_candidates(8, 9), ["compute_89", "compute_80"]);
    assert_eq!(
        arch_candidates(10, 0),
        ["compute_100", "compute_90", "compute_80"]
    );
    assert_eq!(
        arch_candidates(12, 0),
        ["compute_120", "compute_90", "compute_80"]
    );
    // Older than sm_80: PTX for a newer architecture would not load, so only its own.
    assert_eq!(arch_candidates(7, 5), ["compute_75"]);
}

#[test]
fn only_an_unknown_architecture_makes_nvrtc_try_another() {
    let api = |code| NvrtcError::Api {
        call: "nvrtcCompileProgram",
        code,
        message: "NVRTC_ERROR_INVALID_OPTION".into(),
    };
    assert!(arch_rejected(&api(5)));
    assert!(!arch_rejected(&api(1)));
    let compile = |log: &str| NvrtcError::Compile {
        name: "m.cu".into(),
        arch: "compute_120".into(),
        log: log.into(),
    };
    assert!(arch_rejected(&compile(
        "nvrtc: error: invalid value for --gpu-architecture (-arch)"
    )));
    assert!(!arch_rejected(&compile(
        "m.cu(3): error: identifier \"x\" is undefined"
    )));
    assert!(!arch_rejected(&NvrtcError::NotFound { tried: vec![] }));
}

#[test]
fn driver_errors_name_what_failed_and_why() {
    assert_eq!(
        driver_error_text(
            "allocating 8 bytes of GPU memory (cuMemAlloc)",
            2,
            Some("CUDA_ERROR_OUT_OF_MEMORY"),
            Some("out of memory")
        ),
        "allocating 8 bytes of GPU memory (cuMemAlloc) failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"
    );
    assert_eq!(
        driver_error_text("x", 700, Some("CUDA_ERROR_ILLEGAL_ADDRESS"), None),
        "x failed: CUDA_ERROR_ILLEGAL_ADDRESS"
    );
    assert_eq!(
        driver_error_text(
            "x",
            700,
            None,
            Some("an illegal memory access was encountered")
        ),
        "x failed: an illegal memory access was encountered (CUDA error 700)"
    );
    assert_eq!(
        driver_error_text("x", 999, None, None),
        "x failed: CUDA error 999"
    );
}

#[test]
fn missing_nvrtc_says_how_to_install_it() {
    let e = NvrtcError::NotFound {
        tried: vec![("libnvrtc.so".into(), "not found".into())],
    };
    let text = no_nvrtc("pm_axpy.cu", &e);
    assert!(
        text.starts_with("cannot compile pm_axpy.cu for the GPU"),
        "{text}"
    );
    assert!(
        text.contains("pip install nvidia-cuda-nvrtc-cu12"),
        "{text}"
    );
    assert!(text.contains("LD_LIBRARY_PATH"), "{text}");
    assert!(text.contains("tried libnvrtc.so: not found"), "{text}");
}

#[test]
fn the_gpu_answers_without_panicking() {
    match (gpu(), crate::gpu::probe()) {
        (Ok(g), Ok(info)) => {
            assert_eq!(g.info(), &info);
            let name = g.name();
            assert!(name.contains("(sm_"), "{name}");
            println!("GPU: {name}");
        }
        (Err(why), Err(probe)) => {
            // The probe's reason, unchanged: no driver, no device, ...
            assert_eq!(why, probe.to_string());
            println!("no GPU: {why}");
        }
        (Ok(g), Err(probe)) => panic!("a GPU ({g:?}) although the probe says {probe}"),
        (Err(why), Ok(info)) => {
            // The probe found a GPU that cudarc could not open: that must be said, not panicked.
            assert!(!why.is_empty());
            println!("GPU {info} found but not opened: {why}");
        }
    }
    // Opened once: the same answer again.
    assert_eq!(
        gpu().map(|g| g as *const Gpu),
        gpu().map(|g| g as *const Gpu)
    );
}

/// A GPU of compute capability `major.minor`, for compiling without one.
fn pretend_gpu(major: i32, minor: i32) -> GpuInfo {
    GpuInfo {
        name: "pretend".into(),
        compute_capability: (major, minor),
        multiprocessors: 132,
        memory: 80 << 30,
        driver_version: 13000,
        devices: 1,
    }
}

/// The test module: the error record as generated code declares it, and two kernels.
const SOURCE: &str = r#"
__device__ unsigned long long pmexpr_error[4];

// out[i] = v + i; the first index equal to `bad` records check 1 with the index and v.
extern "C" __global__ void pm_test_fill(double* out, double v, long long bad, long long n) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (i == bad) {
            if (atomicCAS(&pmexpr_error[0], 0ULL, 7ULL) == 0ULL) {
                pmexpr_error[1] = 1ULL;
                pmexpr_error[2] = (unsigned long long)i;
                pmexpr_error[3] = (unsigned long long)(long long)v;
            }
        }
        out[i] = v + (double)i;
    }
}

// How many threads the launch had: one atomic increment each.
extern "C" __global__ void pm_test_threads(unsigned long long* count, long long n) {
    atomicAdd(count, 1ULL);
}
"#;

const fn param(name: &'static str, c_type: &'static str) -> ParamData {
    ParamData {
        name,
        c_type,
        size: 8,
        align: 8,
    }
}

static KERNELS: [KernelData; 2] = [
    KernelData {
        name: "pm_test_fill",
        params: &[
            param("out", "double*"),
            param("v", "double"),
            param("bad", "long long"),
            param("n", "long long"),
        ],
    },
    KernelData {
        name: "pm_test_threads",
        params: &[
            param("count", "unsigned long long*"),
            param("n", "long long"),
        ],
    },
];

static MODULE: ModuleData = ModuleData {
    instantiation: &[],
    namespace: "pm_test",
    source: SOURCE,
    ptx: None,
    kernels: &KERNELS,
    checks: &["the test's check"],
    max_rank: 3,
};

#[test]
fn nvrtc_compiles_for_the_gpu_or_an_older_architecture() {
    if let Err(e) = crate::nvrtc::nvrtc() {
        // Without NVRTC, the message says how to get it.
        let why = compile_for_device(&pretend_gpu(9, 0), SOURCE, "pm_test.cu").unwrap_err();
        assert!(why.contains("pip install nvidia-cuda-nvrtc-cu12"), "{why}");
        println!("skipped: no NVRTC ({e})");
        return;
    }
    let ptx = compile_for_device(&pretend_gpu(9, 0), SOURCE, "pm_test.cu").unwrap();
    assert!(ptx.contains(".target sm_90"), "{ptx}");
    assert!(ptx.contains("pm_test_fill") && ptx.contains("pm_test_threads"));
    // The error record keeps its C name and its 32 bytes (`cuModuleGetGlobal` finds it).
    assert!(
        ptx.contains(".global .align 8 .b8 pmexpr_error[32];"),
        "{ptx}"
    );
    // A GPU newer than any architecture NVRTC knows: NVRTC rejects `compute_990`, and the PTX is
    // for the newest fallback.
    let ptx = compile_for_device(&pretend_gpu(99, 0), SOURCE, "pm_test.cu").unwrap();
    assert!(ptx.contains(".target sm_90"), "{ptx}");
    // A GPU older than every fallback, that NVRTC does not know: nothing to fall back to.
    let why = compile_for_device(&pretend_gpu(1, 0), SOURCE, "pm_test.cu").unwrap_err();
    assert!(
        why.contains("accepts none of compute_10 for pm_test.cu"),
        "{why}"
    );
    println!("{why}");
    // An error in the source is reported at once, not retried for older architectures.
    let why = compile_for_device(&pretend_gpu(8, 6), "this is not C++", "bad.cu").unwrap_err();
    assert!(
        why.starts_with("NVRTC could not compile bad.cu for compute_86"),
        "{why}"
    );
}

/// The GPU, or `None` after saying why the test is skipped.
fn gpu_or_skip() -> Option<&'static Gpu> {
    match gpu() {
        Ok(g) => Some(g),
        Err(why) => {
            println!("skipped: no GPU ({why})");
            None
        }
    }
}

#[test]
fn memory_round_trips_through_the_gpu() {
    let Some(g) = gpu_or_skip() else { return };
    let data: Vec<u8> = (0..=255).cycle().take(10_000).collect();
    let ptr = g.alloc(data.len()).unwrap();
    let mut back = vec![0u8; data.len()];
    // SAFETY: `ptr` holds `data.len()` bytes and is freed once, after its last use.
    unsafe {
        g.upload(ptr, &data).unwrap();
        g.download(ptr, &mut back).unwrap();
        g.free(ptr);
    }
    assert_eq!(back, data);
}

#[test]
fn kernels_launch_and_report_failed_checks() {
    let Some(g) = gpu_or_skip() else { return };
    if let Err(e) = crate::nvrtc::nvrtc() {
        let why = g.load(&MODULE).err().expect("no NVRTC, no module");
        assert!(why.0.contains("pip install"), "{why}");
        println!("skipped: no NVRTC ({e})");
        return;
    }
    let mut module = g.load(&MODULE).unwrap();
    let n: i64 = 1_000_003;
    let out = g.alloc(n as usize * 8).unwrap();
    let b = |v: i64| v.to_ne_bytes();
    // SAFETY: `out` holds `n` doubles; every parameter is 8 bytes as declared.
    unsafe {
        module
            .launch(
                0,
                n,
                &[&out.to_ne_bytes(), &2.5f64.to_ne_bytes(), &b(-1), &b(n)],
            )
            .unwrap();
    }
    assert_eq!(module.error_record().unwrap(), [0; 4]);
    let mut bytes = vec![0u8; n as usize * 8];
    // SAFETY: `out` holds `n` doubles.
    unsafe { g.download(out, &mut bytes).unwrap() };
    let values: Vec<f64> = bytes
        .chunks_exact(8)
        .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert!(values.iter().enumerate().all(|(i, &v)| v == 2.5 + i as f64));

    // A failed check is recorded, and cleared by the next launch.
    // SAFETY: as above.
    unsafe {
        module
            .launch(
                0,
                n,
                &[&out.to_ne_bytes(), &9.0f64.to_ne_bytes(), &b(777), &b(n)],
            )
            .unwrap();
    }
    assert_eq!(module.error_record().unwrap(), [7, 1, 777, 9]);
    // SAFETY: as above; n = 0 launches nothing but clears the record.
    unsafe {
        module
            .launch(
                0,
                0,
                &[&out.to_ne_bytes(), &9.0f64.to_ne_bytes(), &b(0), &b(0)],
            )
            .unwrap();
    }
    assert_eq!(module.error_record().unwrap(), [0; 4]);

    // The launch configuration: at least one thread per index up to one wave, no more blocks
    // than needed for a small n.
    let count = g.alloc(8).unwrap();
    let threads = |module: &mut Box<dyn LoadedModule>, n: i64| -> u64 {
        let mut c = [0u8; 8];
        // SAFETY: `count` holds one u64.
        unsafe {
            g.upload(count, &0u64.to_ne_bytes()).unwrap();
            module.launch(1, n, &[&count.to_ne_bytes(), &b(n)]).unwrap();
            g.download(count, &mut c).unwrap();
        }
        u64::from_ne_bytes(c)
    };
    let one = threads(&mut module, 1);
    assert!(
        (32..=1024).contains(&one),
        "one block of the suggested size: {one}"
    );
    assert_eq!(threads(&mut module, one as i64 + 1), 2 * one);
    let wave = threads(&mut module, i64::MAX / 2);
    assert!(wave >= one * g.info().multiprocessors as u64, "{wave}");
    println!(
        "{}: block of {one} threads, a wave of {} blocks",
        g.name(),
        wave / one
    );

    // Wrong calls are failures, not undefined behaviour.
    // SAFETY: refused before anything reaches the GPU.
    unsafe {
        let e = module.launch(1, 1, &[&count.to_ne_bytes()]).unwrap_err();
        assert!(
            e.0.contains("takes parameters of [8, 8] bytes, given [8]"),
            "{e}"
        );
        let e = module.launch(2, 1, &[]).unwrap_err();
        assert!(e.0.contains("has 2 kernels, not kernel 2"), "{e}");
        g.free(count);
        g.free(out);
    }
}

#[test]
fn a_module_without_the_error_record_is_refused() {
    let Some(g) = gpu_or_skip() else { return };
    if crate::nvrtc::nvrtc().is_err() {
        println!("skipped: no NVRTC");
        return;
    }
    static BARE: ModuleData = ModuleData {
        instantiation: &[],
        namespace: "pm_bare",
        source: "extern \"C\" __global__ void pm_bare_k0(long long n) {}\n",
        ptx: None,
        kernels: &[],
        checks: &[],
        max_rank: 3,
    };
    let e = g.load(&BARE).err().expect("no pmexpr_error");
    assert!(e.0.contains("finding `pmexpr_error` in `pm_bare`"), "{e}");
}
