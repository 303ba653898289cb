//! The program shapes of issue 15 (`pmexpr_suite::shapes`, the sites `benches/shapes.rs` times):
//! a table of median times of each `accelerate!` site on the `cpu` and `seq` targets, of the same
//! algorithm hand-written with rayon and as a sequential loop, and the ratios cpu/rayon and
//! cpu/sequential. Every result is checked against the sequential loop first.
//!
//! ```text
//! cargo run --release --example shapes [-- --runs 15] [-- NAME…]
//! ```

use pmexpr::Target;
use pmexpr_suite::shapes::{SHAPES, Size, Variant, check};
use std::time::Instant;

fn median(f: &mut dyn FnMut(), runs: usize) -> f64 {
    f(); // warm-up: page faults of fresh outputs, rayon's threads
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[runs / 2]
}

fn main() {
    let mut runs = 11;
    let mut names = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--runs" {
            runs = args.next().and_then(|n| n.parse().ok()).unwrap_or(runs).max(1);
        } else {
            names.push(a);
        }
    }
    println!(
        "median of {runs} runs, ms; {} threads",
        rayon::current_num_threads()
    );
    println!(
        "| shape | cpu | seq | rayon | sequential | cpu / rayon | cpu / sequential |\n|---|---:|---:|---:|---:|---:|---:|"
    );
    let (mut log_r, mut log_s, mut count) = (0.0, 0.0, 0);
    for entry in SHAPES {
        if !names.is_empty() && !names.iter().any(|n| entry.name.contains(n.as_str())) {
            continue;
        }
        if let Err(e) = check(entry, Size::Bench, &[Target::Cpu, Target::Seq]) {
            eprintln!("{e}");
            std::process::exit(1);
        }
        let mut shape = (entry.make)(Size::Bench);
        let mut time = |v| median(&mut || shape.run(v), runs) * 1e3;
        let cpu = time(Variant::Accelerated(Target::Cpu));
        let seq = time(Variant::Accelerated(Target::Seq));
        let ray = time(Variant::Rayon);
        let hand = time(Variant::Sequential);
        println!(
            "| {} | {cpu:.2} | {seq:.2} | {ray:.2} | {hand:.2} | **{:.2}** | {:.2} |",
            entry.name,
            cpu / ray,
            cpu / hand
        );
        log_r += (cpu / ray).ln();
        log_s += (cpu / hand).ln();
        count += 1;
    }
    if count > 0 {
        println!(
            "geometric mean: cpu / rayon {:.2}, cpu / sequential {:.2}",
            (log_r / count as f64).exp(),
            (log_s / count as f64).exp()
        );
    }
}
