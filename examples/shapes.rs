//! The program shapes of the `cpu` target's contract (`pmexpr_suite::shapes`, the sites
//! `benches/shapes.rs` times): a table of median times of each `accelerate!` site on the `cpu` and
//! `seq` targets, of the same algorithm hand-written with rayon and as a sequential loop, and the
//! ratios cpu/rayon and cpu/sequential. Every result is checked against the sequential loop first;
//! the versions run in turn, one run of each per round. When the build made the Futhark library,
//! the `futhark` column times the Futhark-class shapes on the `futhark` target, in rounds of its
//! own (the others, which run on the CPU there, show `—`), with the ratio cpu/futhark. Freed memory
//! stays in the heap (see `steady_malloc`).
//!
//! ```text
//! cargo run --release --example shapes [-- --runs 15] [-- NAME…]
//! cargo run --release --example shapes -- --only cpu NAME   # one version alone, for `perf record`
//! ```

use pmexpr::Target;
use pmexpr::futhark::calls_on_this_thread;
use pmexpr_suite::shapes::{SHAPES, Size, Variant, check};
use std::time::Instant;

/// The median seconds of each version, the versions run in turn (one run of each per round), so
/// that a change of the machine's load during the run falls on all of them alike.
fn medians(run: &mut dyn FnMut(Variant), variants: &[Variant], rounds: usize) -> Vec<f64> {
    for &v in variants {
        run(v); // warm-up: page faults of fresh outputs, rayon's threads
    }
    let mut t = vec![Vec::with_capacity(rounds); variants.len()];
    for _ in 0..rounds {
        for (k, &v) in variants.iter().enumerate() {
            let start = Instant::now();
            run(v);
            t[k].push(start.elapsed().as_secs_f64());
        }
    }
    t.into_iter()
        .map(|mut t| {
            t.sort_by(f64::total_cmp);
            t[rounds / 2]
        })
        .collect()
}

/// Every version's output is allocated and freed once per round, and glibc's `malloc` serves a
/// large block from a fresh mapping (page faults on every first touch) or from memory freed
/// before, by thresholds that move with what was freed: page faults fell on some versions and
/// not others, by their order (`map2` over 4·10^6 numbers: rayon 2.9 or 6.8 ms, as it came before
/// or after another version). The table keeps freed memory in the heap, for every version alike.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn steady_malloc() {
    unsafe extern "C" {
        fn mallopt(param: i32, value: i32) -> i32;
    }
    // glibc's <malloc.h>.
    const M_TRIM_THRESHOLD: i32 = -1;
    const M_MMAP_MAX: i32 = -4;
    // SAFETY: `mallopt` only changes allocator parameters; called before any other thread runs.
    unsafe {
        mallopt(M_MMAP_MAX, 0);
        mallopt(M_TRIM_THRESHOLD, i32::MAX);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn steady_malloc() {}

fn main() {
    steady_malloc();
    let mut runs = 11;
    let mut names = Vec::new();
    let mut only = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--runs" {
            runs = args
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(runs)
                .max(1);
        } else if a == "--only" {
            only = args.next().map(|v| match v.as_str() {
                "cpu" => Variant::Accelerated(Target::Cpu),
                "seq" => Variant::Accelerated(Target::Seq),
                "futhark" => Variant::Accelerated(Target::Futhark),
                "rayon" => Variant::Rayon,
                _ => Variant::Sequential,
            });
        } else {
            names.push(a);
        }
    }
    println!(
        "median of {runs} rounds, ms; {} threads",
        rayon::current_num_threads()
    );
    // The `futhark` target where the build made a library for the CPU (`c` or `multicore`).
    let futhark = matches!(
        option_env!("PMEXPR_FUTHARK_LIBRARY"),
        Some("c" | "multicore")
    );
    if only.is_none() {
        println!(
            "| shape | cpu | seq | rayon | sequential | futhark | cpu / rayon | cpu / sequential | cpu / futhark |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|"
        );
    }
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
        let mut run = |v| shape.run(v);
        if let Some(v) = only {
            let t = medians(&mut run, &[v], runs)[0] * 1e3;
            println!("{} {v:?}: {t:.2} ms", entry.name);
            continue;
        }
        // Futhark-class: the site calls an entry point of the library on the `futhark` target.
        let on_futhark = futhark && {
            let before = calls_on_this_thread();
            run(Variant::Accelerated(Target::Futhark));
            calls_on_this_thread() > before
        };
        let variants = [
            Variant::Accelerated(Target::Cpu),
            Variant::Accelerated(Target::Seq),
            Variant::Rayon,
            Variant::Sequential,
        ];
        let t = medians(&mut run, &variants, runs);
        let [cpu, seq, ray, hand] = [t[0], t[1], t[2], t[3]].map(|x| x * 1e3);
        // The Futhark library in rounds of its own: run between the others, it slowed the two
        // versions after it (float math over tuples, one thread: cpu and seq 19-20 ms in its
        // rounds, 16.5 ms without it, rayon and sequential unchanged).
        let (fut, cpu_fut) = if on_futhark {
            let f = medians(&mut run, &[Variant::Accelerated(Target::Futhark)], runs)[0] * 1e3;
            (format!("{f:.2}"), format!("{:.2}", cpu / f))
        } else {
            ("—".to_string(), "—".to_string())
        };
        println!(
            "| {} | {cpu:.2} | {seq:.2} | {ray:.2} | {hand:.2} | {fut} | **{:.2}** | {:.2} | {cpu_fut} |",
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
