//! The hand-written baseline of the GPU bandwidth benchmark: `y[i] = a * x[i] + y[i]` over `n`
//! `f64`s, a CUDA kernel written by hand and launched through cudarc, timed and compared with the
//! GPU's peak memory bandwidth.
//!
//! ```text
//! cargo run --release --example gpu_axpy                  # n = 100_000_000, 20 timed runs
//! cargo run --release --example gpu_axpy -- 50000000 100  # n, then the number of timed runs
//! ```
//!
//! Without a GPU it says why and exits successfully. With one, it compiles the kernel with NVRTC
//! (`pmexpr_runtime::nvrtc`: the PyPI wheel `nvidia-cuda-nvrtc-cu12` on `LD_LIBRARY_PATH` will
//! do) for the GPU's architecture, with pmexpr's options (no fused multiply-add, so the result can
//! be checked bit for bit), and launches it as pmexpr's CUDA target launches its kernels: a
//! grid-stride loop, the block size of the occupancy calculator, at most one wave of blocks
//! (`pmexpr_runtime::cuda::driver::LaunchConfig`).
//!
//! Each run moves `3 × 8 × n` bytes (reads `x` and `y`, writes `y`). The achieved bandwidth is
//! that over the median time of a run; the peak is `2 × memory clock × bus width`, from the
//! driver's device attributes (which newer drivers may report as 0: then it is unknown).
//!
//! Every variant is a [`measure`] of a closure that does one run and returns when it has finished,
//! and a row of the table: another variant (the same computation through `accelerate!`, say) is
//! one more `measure` call whose closure runs it, and one more row.

use std::ffi::{CString, c_void};
use std::time::{Duration, Instant};

use cudarc::driver::{CudaContext, DevicePtr, DevicePtrMut, DriverError, result, sys};
use pmexpr_runtime::cuda::driver::{LaunchConfig, compile_for_device};

/// The kernel: one thread per index, striding by the grid when there are fewer threads.
const KERNEL: &str = r#"
extern "C" __global__ void axpy(double a, const double* __restrict__ x, double* __restrict__ y,
                                long long n) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = a * x[i] + y[i];
    }
}
"#;

/// The scalar `a`.
const A: f64 = 1.5;
/// Untimed runs before the timed ones of each variant.
const WARMUP: usize = 3;

/// The input: deterministic values that are not all alike.
fn x_at(i: usize) -> f64 {
    (i % 1024) as f64 * 0.5 + 0.25
}
fn y_at(i: usize) -> f64 {
    (i % 3) as f64 - 1.0
}

/// The time of the runs of one variant.
struct Stats {
    label: String,
    /// Seconds per run, sorted.
    times: Vec<f64>,
}

impl Stats {
    fn min(&self) -> f64 {
        self.times[0]
    }
    fn median(&self) -> f64 {
        let t = &self.times;
        if t.len() % 2 == 1 {
            t[t.len() / 2]
        } else {
            (t[t.len() / 2 - 1] + t[t.len() / 2]) / 2.0
        }
    }
    fn mean(&self) -> f64 {
        self.times.iter().sum::<f64>() / self.times.len() as f64
    }
}

/// Times `reps` runs of `run` by the host's clock, after `WARMUP` untimed ones; `run` returns
/// when its work on the GPU has finished.
fn measure(label: &str, reps: usize, mut run: impl FnMut()) -> Stats {
    measure_timed(label, reps, || {
        let start = Instant::now();
        run();
        start.elapsed()
    })
}

/// [`measure`] for a run that times itself (with CUDA events, say).
fn measure_timed(label: &str, reps: usize, mut run: impl FnMut() -> Duration) -> Stats {
    for _ in 0..WARMUP {
        run();
    }
    let mut times: Vec<f64> = (0..reps).map(|_| run().as_secs_f64()).collect();
    times.sort_by(f64::total_cmp);
    Stats {
        label: label.to_string(),
        times,
    }
}

/// One row per variant: times in milliseconds, and the bandwidth at the median time against the
/// peak (when known).
fn print_table(bytes_per_run: f64, peak: Option<f64>, rows: &[Stats]) {
    let width = rows.iter().map(|r| r.label.len()).max().unwrap_or(0).max(7);
    println!(
        "{:<width$}  {:>5}  {:>9}  {:>9}  {:>9}  {:>10}  {:>9}",
        "variant", "runs", "min ms", "median ms", "mean ms", "GB/s", "% of peak"
    );
    for r in rows {
        let gbs = bytes_per_run / r.median() / 1e9;
        let of_peak = peak.map_or_else(
            || "-".to_string(),
            |p| format!("{:.1}", 100.0 * bytes_per_run / r.median() / p),
        );
        println!(
            "{:<width$}  {:>5}  {:>9.3}  {:>9.3}  {:>9.3}  {:>10.1}  {:>9}",
            r.label,
            r.times.len(),
            r.min() * 1e3,
            r.median() * 1e3,
            r.mean() * 1e3,
            gbs,
            of_peak
        );
    }
}

/// The peak memory bandwidth in bytes per second, from the memory clock (kHz) and the bus width
/// (bits), both as the driver reports them; `None` when either is unknown (0).
fn peak_bandwidth(memory_clock_khz: i32, bus_width_bits: i32) -> Option<f64> {
    (memory_clock_khz > 0 && bus_width_bits > 0)
        .then(|| 2.0 * memory_clock_khz as f64 * 1e3 * bus_width_bits as f64 / 8.0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed: Result<Vec<usize>, _> = args.iter().map(|a| a.parse::<usize>()).collect();
    let (n, reps) = match parsed.as_deref() {
        Ok([]) => (100_000_000, 20),
        Ok([n]) if *n > 0 => (*n, 20),
        Ok([n, reps]) if *n > 0 && *reps > 0 => (*n, *reps),
        _ => {
            eprintln!("usage: gpu_axpy [n [runs]]   (default: n = 100000000, 20 runs)");
            std::process::exit(2);
        }
    };
    let info = match pmexpr::gpu::probe() {
        Ok(info) => info,
        Err(why) => {
            println!("no GPU: {why}; nothing to measure");
            return;
        }
    };
    if let Err(e) = run(&info, n, reps) {
        eprintln!("gpu_axpy: {e}");
        std::process::exit(1);
    }
}

fn driver(what: &str) -> impl FnOnce(DriverError) -> String + '_ {
    move |e| format!("{what}: {e}")
}

/// Launches the hand-written kernel: `y = A * x + y` over `n` doubles.
///
/// # Safety
/// `func` is the loaded `axpy` kernel of the current context, and `x` and `y` point to `n`
/// doubles each.
unsafe fn launch_axpy(
    func: sys::CUfunction,
    grid: u32,
    block: u32,
    stream: sys::CUstream,
    x: sys::CUdeviceptr,
    y: sys::CUdeviceptr,
    n: usize,
) -> Result<(), DriverError> {
    let (mut a, mut x, mut y, mut n) = (A, x, y, n as i64);
    let mut params: [*mut c_void; 4] = [
        (&raw mut a).cast(),
        (&raw mut x).cast(),
        (&raw mut y).cast(),
        (&raw mut n).cast(),
    ];
    // SAFETY: the parameters are the kernel's (double, double*, double*, long long); the caller
    // guarantees the rest.
    unsafe { result::launch_kernel(func, (grid, 1, 1), (block, 1, 1), 0, stream, &mut params) }
}

fn run(info: &pmexpr::gpu::GpuInfo, n: usize, reps: usize) -> Result<(), String> {
    let bytes_per_run = 3.0 * 8.0 * n as f64;
    println!(
        "axpy, hand-written CUDA: y = {A} * x + y over n = {n} f64 ({:.2} GB per run: read x, read y, write y)",
        bytes_per_run / 1e9
    );
    println!("GPU: {info}");

    // Only now, with a GPU found, may cudarc be called.
    let ctx = CudaContext::new(0).map_err(driver("opening GPU 0"))?;
    let stream = ctx.default_stream();
    let attribute = |a| ctx.attribute(a).unwrap_or(0);
    let clock = attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    let bus = attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    let peak = peak_bandwidth(clock, bus);
    match peak {
        Some(p) => println!(
            "peak memory bandwidth: {:.0} GB/s ({} MHz memory clock, {bus}-bit bus)",
            p / 1e9,
            clock / 1000
        ),
        None => println!(
            "peak memory bandwidth: unknown (the driver reports memory clock {clock} kHz, bus width {bus} bits)"
        ),
    }

    // The kernel: NVRTC for this GPU, then the driver.
    let ptx = compile_for_device(info, KERNEL, "gpu_axpy.cu")?;
    info.check_ptx(&ptx).map_err(|e| e.to_string())?;
    let target = ptx
        .lines()
        .find_map(|l| l.trim().strip_prefix(".target "))
        .unwrap_or("?")
        .to_string();
    let image = CString::new(ptx).map_err(|_| "the PTX holds a NUL byte".to_string())?;
    ctx.bind_to_thread()
        .map_err(driver("binding the context"))?;
    // SAFETY: a NUL-terminated PTX text; the context is current.
    let module = unsafe { result::module::load_data(image.as_ptr().cast()) }
        .map_err(driver("loading the PTX"))?;
    // SAFETY: `module` is loaded.
    let func = unsafe { result::module::get_function(module, c"axpy".into()) }
        .map_err(driver("finding the kernel"))?;
    // SAFETY: `func` belongs to the loaded module; the context is current.
    let config = unsafe { LaunchConfig::for_function(func, info.multiprocessors) }
        .map_err(driver("choosing the launch configuration"))?;
    let grid = config.grid(n as i64);
    println!(
        "kernel: PTX for {target}; {grid} blocks of {} threads ({} blocks resident per SM, {} SMs)",
        config.block, config.blocks_per_multiprocessor, config.multiprocessors
    );

    // The data.
    let x_host: Vec<f64> = (0..n).map(x_at).collect();
    let y_host: Vec<f64> = (0..n).map(y_at).collect();
    let x = stream.clone_htod(&x_host).map_err(driver("copying x"))?;
    let mut y = stream.clone_htod(&y_host).map_err(driver("copying y"))?;
    stream.synchronize().map_err(driver("copying"))?;
    drop((x_host, y_host));

    let mut launches = 0usize;
    let mut rows = {
        let (x_ptr, _x_sync) = x.device_ptr(&stream);
        let (y_ptr, _y_sync) = y.device_ptr_mut(&stream);
        let cu_stream = stream.cu_stream();
        let mut launch = || {
            // SAFETY: `x` and `y` hold `n` doubles each, on the current context.
            unsafe { launch_axpy(func, grid, config.block, cu_stream, x_ptr, y_ptr, n) }
                .unwrap_or_else(|e| panic!("launching the kernel: {e}"));
            launches += 1;
        };
        let start = ctx
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(driver("creating an event"))?;
        let end = ctx
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(driver("creating an event"))?;
        let events = measure_timed("hand-written, kernel (CUDA events)", reps, || {
            start.record(&stream).expect("recording an event");
            launch();
            end.record(&stream).expect("recording an event");
            let ms = start.elapsed_ms(&end).expect("timing the kernel");
            Duration::from_secs_f64(f64::from(ms) / 1e3)
        });
        let host = measure("hand-written, launch + sync (host clock)", reps, || {
            launch();
            stream.synchronize().expect("running the kernel");
        });
        vec![events, host]
    };
    // End to end, from host memory to host memory: what an `accelerate!` call does.
    let x_host: Vec<f64> = (0..n).map(x_at).collect();
    let mut y_host: Vec<f64> = (0..n).map(y_at).collect();
    rows.push(measure(
        "hand-written, copy in + kernel + copy out",
        reps,
        || {
            let x = stream.clone_htod(&x_host).expect("copying x");
            let mut y = stream.clone_htod(&y_host).expect("copying y");
            {
                let (x_ptr, _x_sync) = x.device_ptr(&stream);
                let (y_ptr, _y_sync) = y.device_ptr_mut(&stream);
                // SAFETY: `x` and `y` hold `n` doubles each, on the current context.
                unsafe {
                    launch_axpy(
                        func,
                        grid,
                        config.block,
                        stream.cu_stream(),
                        x_ptr,
                        y_ptr,
                        n,
                    )
                }
                .expect("launching the kernel");
            }
            stream.memcpy_dtoh(&y, &mut y_host).expect("copying y back");
            stream.synchronize().expect("running the kernel");
        },
    ));
    let xt = pmexpr::Tensor::<f64>::from_vec(x_host, &[n]);
    let yt = pmexpr::Tensor::<f64>::from_vec((0..n).map(y_at).collect(), &[n]);
    let (a, m) = (A, n as i64);
    rows.push(measure(
        "accelerate!(par_loop …), whole call",
        reps,
        || {
            pmexpr::with_target(pmexpr::Target::Cuda, || {
                pmexpr::accelerate!(par_loop(m, |i| tensor_set(
                    yt,
                    [i],
                    a * tensor_get(xt, [i]) + tensor_get(yt, [i])
                )))
            })
        },
    ));
    println!();
    print_table(bytes_per_run, peak, &rows);
    println!();

    // Every launch added a * x to y: replay that on the CPU at a few indices (the same roundings,
    // since neither side fuses the multiply-add).
    let y_back = stream.clone_dtoh(&y).map_err(driver("copying y back"))?;
    stream.synchronize().map_err(driver("copying y back"))?;
    let mut indices = vec![0, 1, 2, n / 3, n / 2, n - 1];
    indices.extend((1..=10).map(|k| (k * 7_919_993) % n));
    for &i in &indices {
        let mut expected = y_at(i);
        for _ in 0..launches {
            expected += A * x_at(i);
        }
        if y_back[i].to_bits() != expected.to_bits() {
            return Err(format!(
                "wrong result: y[{i}] = {} after {launches} runs, the CPU computes {expected}",
                y_back[i]
            ));
        }
    }
    println!(
        "verified: y agrees with the CPU bit for bit at {} indices after {launches} runs",
        indices.len()
    );
    drop(y);
    // SAFETY: the module was loaded above; its function is not used any more.
    unsafe { result::module::unload(module) }.map_err(driver("unloading the module"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_and_peak() {
        let s = measure_timed("t", 4, {
            let mut k = 0;
            move || {
                k += 1;
                Duration::from_millis(k)
            }
        });
        // Three warm-up runs (1, 2, 3 ms), then 4, 5, 6, 7 ms.
        assert_eq!(s.times, [0.004, 0.005, 0.006, 0.007]);
        assert_eq!(s.min(), 0.004);
        assert!((s.median() - 0.0055).abs() < 1e-12);
        assert!((s.mean() - 0.0055).abs() < 1e-12);
        // H100 SXM: 2619 MHz, 5120 bits: 3.35 TB/s.
        let peak = peak_bandwidth(2_619_000, 5120).unwrap();
        assert!((peak / 1e9 - 3352.32).abs() < 1e-6, "{peak}");
        assert_eq!(peak_bandwidth(0, 5120), None);
        assert_eq!(peak_bandwidth(2_619_000, 0), None);
    }
}
