//! The ODE benchmark in the form of the paper's Table 2: `N` independent damped, driven pendulums
//! (per-instance damping and drive), integrated by classic RK4 inside one `accelerate!(par_loop …)`
//! (see `pmexpr_suite::ode`). For each `N` it times the accelerated expression, marshaling
//! included, on every target this machine has, and checks each against the sequential result.
//!
//! ```text
//! cargo run --release --example ode                 # N = 10^3, 10^4, 10^5; 1000 steps
//! cargo run --release --example ode -- 2000 100 1000   # steps, then the N to run
//! ```

use std::time::Instant;

use pmexpr::{Target, Tensor, with_target};
use pmexpr_suite::ode::{integrate, integrate_reference, parameters};

const DT: f64 = 0.01;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed: Result<Vec<usize>, _> = args.iter().map(|a| a.parse::<usize>()).collect();
    let Ok(numbers) = parsed else {
        eprintln!("usage: ode [steps [n ...]]   (default: 1000 steps, n = 1000 10000 100000)");
        std::process::exit(2);
    };
    let steps = numbers.first().copied().unwrap_or(1000) as i64;
    let sizes: Vec<usize> = if numbers.len() > 1 {
        numbers[1..].to_vec()
    } else {
        vec![1_000, 10_000, 100_000]
    };
    let gpu = pmexpr::gpu::probe();
    let mut targets = vec![Target::Seq, Target::Cpu];
    if gpu.is_ok() {
        targets.push(Target::Cuda);
    }
    println!(
        "ODE: damped driven pendulums, RK4, {steps} steps of {DT}; wall time of the accelerate! call (marshaling included)"
    );
    let cuda = match &gpu {
        Ok(gpu) => format!("cuda on {gpu}"),
        Err(why) => format!("cuda: not run (no GPU: {why})"),
    };
    println!(
        "targets: seq, cpu ({} threads); {cuda}",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!(
        "Rust: the same RK4 hand-written as a sequential loop (pmexpr_suite::ode::integrate_reference)"
    );
    println!();
    print!(
        "{:>8} {:>10} {:>10} {:>10} {:>9} {:>9} {:>12}",
        "N", "Rust (s)", "seq (s)", "cpu (s)", "seq/Rust", "seq/cpu", "max |Δ|"
    );
    if gpu.is_ok() {
        print!(" {:>10} {:>9} {:>12}", "cuda (s)", "seq/cuda", "cuda |Δ|");
    }
    println!();
    for &n in &sizes {
        let (gamma, amp) = parameters(n);
        let mut times = Vec::new();
        let mut results = Vec::new();
        for &t in &targets {
            let out = Tensor::<f64>::zeros(&[n, 2]);
            let start = Instant::now();
            with_target(t, || integrate(&gamma, &amp, &out, steps, DT));
            times.push(start.elapsed().as_secs_f64());
            results.push(out.to_vec());
        }
        // Every target computes the same floating-point operations in the same order.
        assert_eq!(results[0], results[1], "cpu differs from seq at N = {n}");
        let (g, a) = (gamma.to_vec(), amp.to_vec());
        let start = Instant::now();
        let reference = integrate_reference(&g, &a, steps, DT);
        let rust = start.elapsed().as_secs_f64();
        let diff = reference
            .iter()
            .enumerate()
            .map(|(i, (th, w))| {
                (th - results[0][2 * i])
                    .abs()
                    .max((w - results[0][2 * i + 1]).abs())
            })
            .fold(0.0_f64, f64::max);
        print!(
            "{:>8} {:>10.4} {:>10.4} {:>10.4} {:>9.2} {:>9.2} {:>12.1e}",
            n,
            rust,
            times[0],
            times[1],
            times[0] / rust,
            times[0] / times[1],
            diff
        );
        if let (Some(t), Some(r)) = (times.get(2), results.get(2)) {
            // The GPU's sin/cos may round differently from the CPU's libm in the last bits.
            let d = r
                .iter()
                .zip(&results[0])
                .map(|(a, b)| (a - b).abs())
                .fold(0.0_f64, f64::max);
            print!(" {:>10.4} {:>9.2} {:>12.1e}", t, times[0] / t, d);
        }
        println!();
    }
}
