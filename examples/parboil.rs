//! The Parboil benchmarks in the form of the paper's Table 1 (`pmexpr_suite::parboil`): per
//! dataset, the wall time of the `accelerate!` site (marshaling included) on the `cpu` target, on
//! the `futhark` target when the build made the Futhark library, and of the same algorithm
//! hand-written with rayon, in one run, with the ratios; every result is checked against the
//! hand-written sequential version (which is timed too).
//!
//! ```text
//! cargo run --release --example parboil                  # every benchmark, smallest dataset
//! cargo run --release --example parboil -- histo         # one benchmark, smallest dataset
//! cargo run --release --example parboil -- sgemm medium  # one dataset
//! cargo run --release --example parboil -- all           # every dataset (minutes)
//! cargo run --release --example parboil -- all all 5     # … best of 5 runs (default 3)
//! cargo run --release --example parboil -- futhark-data DIR  # the inputs for `futhark bench`
//! ```

use std::time::Instant;

use pmexpr::{Target, with_target};
use pmexpr_suite::parboil::{
    DATASETS, Dataset, futhark_data, histo, max_rel_diff, mriq, sgemm, stencil, tpacf,
};

/// The best of `reps` wall times of `f`, and its last result.
fn time<R>(reps: usize, mut f: impl FnMut() -> R) -> (f64, R) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..reps {
        let start = Instant::now();
        let r = f();
        best = best.min(start.elapsed().as_secs_f64());
        out = Some(r);
    }
    (best, out.expect("at least one run"))
}

/// The times of one dataset: hand-written sequential, cpu, futhark (if built), rayon; and the
/// largest difference of the accelerated results from the sequential one.
struct Row {
    seq: f64,
    cpu: f64,
    futhark: Option<f64>,
    rayon: f64,
    diff: f64,
}

/// Runs one benchmark's three (or four) versions: the reference once, then `reps` rounds of the
/// others in turn (so that a change in the machine's load touches them alike), keeping the best
/// time of each. `check(result, reference)` gives the difference of a result from the reference
/// (0 for equal integers).
fn run<R>(
    reps: usize,
    futhark: bool,
    sequential: impl Fn() -> R,
    accelerated: impl Fn() -> R,
    rayon: impl Fn() -> R,
    check: impl Fn(&R, &R) -> f64,
) -> Row {
    let (seq, want) = time(1, &sequential);
    let mut row = Row {
        seq,
        cpu: f64::INFINITY,
        futhark: None,
        rayon: f64::INFINITY,
        diff: 0.0,
    };
    for _ in 0..reps {
        let (t, got) = time(1, || with_target(Target::Cpu, &accelerated));
        row.cpu = row.cpu.min(t);
        row.diff = row.diff.max(check(&got, &want));
        if futhark {
            let (t, got) = time(1, || with_target(Target::Futhark, &accelerated));
            row.futhark = Some(row.futhark.map_or(t, |f: f64| f.min(t)));
            row.diff = row.diff.max(check(&got, &want));
        }
        let (t, got) = time(1, &rayon);
        row.rayon = row.rayon.min(t);
        assert!(check(&got, &want) <= 1e-4, "the rayon version differs");
    }
    row
}

fn flat<T: Copy>(m: &[Vec<T>]) -> Vec<T> {
    m.iter().flatten().copied().collect()
}

fn exact<T: PartialEq>(a: &T, b: &T) -> f64 {
    if a == b { 0.0 } else { f64::INFINITY }
}

fn measure(d: &Dataset, reps: usize, futhark: bool) -> Row {
    match d.bench {
        "sgemm" => {
            let (n, m, p) = sgemm::dims(d.name).expect("a dataset");
            let input = sgemm::input(n, m, p);
            run(
                reps,
                futhark,
                || sgemm::sequential(&input),
                || sgemm::accelerated(&input),
                || sgemm::rayon(&input),
                |a, b| max_rel_diff(&flat(a), &flat(b)),
            )
        }
        "mri-q" => {
            let (k, x) = mriq::dims(d.name).expect("a dataset");
            let input = mriq::input(k, x);
            run(
                reps,
                futhark,
                || mriq::sequential(&input),
                || mriq::accelerated(&input),
                || mriq::rayon(&input),
                |a, b| max_rel_diff(&a.0, &b.0).max(max_rel_diff(&a.1, &b.1)),
            )
        }
        "stencil" => {
            let (nx, ny, nz, iters) = stencil::dims(d.name).expect("a dataset");
            let slice = stencil::input(ny, nz);
            run(
                reps,
                futhark,
                || stencil::sequential(iters, nx, &slice),
                || stencil::accelerated(iters as i64, nx as i64, &slice),
                || stencil::rayon(iters, nx, &slice),
                |a, b| max_rel_diff(&flat(a), &flat(b)),
            )
        }
        "histo" => {
            let (w, h, hw, hh) = histo::dims(d.name).expect("a dataset");
            let input = histo::input(w, h, hw, hh);
            run(
                reps,
                futhark,
                || histo::sequential(&input),
                || histo::accelerated(&input),
                || histo::rayon(&input),
                exact,
            )
        }
        "tpacf" => {
            let (n, r) = tpacf::dims(d.name).expect("a dataset");
            let input = tpacf::input(n, r);
            run(
                reps,
                futhark,
                || tpacf::sequential(&input),
                || tpacf::accelerated(&input),
                || tpacf::rayon(&input),
                exact,
            )
        }
        other => unreachable!("no benchmark {other}"),
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: parboil [sgemm|mri-q|stencil|histo|tpacf|all [DATASET|all [REPS]]]\n\
         (default: every benchmark on its smallest dataset, best of 3 runs)\n\
         \x20      parboil futhark-data DIR  (every dataset's inputs as DIR/<bench>/data/<dataset>.in,\n\
         \x20      in Futhark's binary data format, for `futhark bench`)"
    );
    for d in DATASETS {
        eprintln!("  {:8} {:8} {}", d.bench, d.name, d.size);
    }
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("futhark-data") {
        let Some(dir) = args.get(1) else { usage() };
        match futhark_data::write_all(std::path::Path::new(dir)) {
            Ok(files) => files.iter().for_each(|f| println!("{}", f.display())),
            Err(e) => {
                eprintln!("cannot write the datasets under {dir}: {e}");
                std::process::exit(1)
            }
        }
        return;
    }
    let bench = args.first().map_or("all", String::as_str);
    let dataset = args.get(1).map(String::as_str);
    let reps = match args.get(2).map(|r| r.parse::<usize>()) {
        None => 3,
        Some(Ok(r)) if r > 0 => r,
        Some(_) => usage(),
    };
    let mut chosen: Vec<&Dataset> = Vec::new();
    for d in DATASETS {
        let bench_ok = bench == "all" || bench == d.bench;
        let set_ok = match dataset {
            Some("all") => true,
            Some(name) => name == d.name,
            // The smallest: the first of its benchmark (all of them for `all` with no dataset
            // only when asked by name).
            None => !chosen.iter().any(|c| c.bench == d.bench),
        };
        if bench_ok && set_ok {
            chosen.push(d);
        }
    }
    if chosen.is_empty() {
        usage();
    }
    let futhark = match option_env!("PMEXPR_FUTHARK_LIBRARY") {
        Some("cuda") if pmexpr::gpu::probe().is_err() => {
            println!("futhark: not run (the build made a CUDA library and there is no usable GPU)");
            false
        }
        Some(flavour) => {
            println!("futhark: the build's `{flavour}` library");
            true
        }
        None => {
            println!(
                "futhark: not run (the build did not find the `futhark` compiler: put it on PATH or name it in PMEXPR_FUTHARK)"
            );
            false
        }
    };
    println!(
        "cpu: the accelerate! site on the cpu target ({} threads); rayon: the same algorithm hand-written with rayon; seq: hand-written sequential Rust (the reference, one run)",
        rayon::current_num_threads()
    );
    println!(
        "times: best of {reps} rounds (cpu, futhark, rayon in turn), seconds, marshaling included\n"
    );
    println!(
        "{:8} {:8} {:>9} {:>9} {:>9} {:>9} {:>10} {:>12} {:>9}",
        "bench",
        "dataset",
        "seq",
        "cpu",
        "futhark",
        "rayon",
        "cpu/rayon",
        "futhark/ray",
        "max rel Δ"
    );
    for d in chosen {
        let r = measure(d, reps, futhark);
        let (fut, fut_ratio) = match r.futhark {
            Some(t) => (format!("{t:9.4}"), format!("{:11.2}x", t / r.rayon)),
            None => (format!("{:>9}", "—"), format!("{:>12}", "—")),
        };
        println!(
            "{:8} {:8} {:9.4} {:9.4} {} {:9.4} {:9.2}x {} {:9.1e}",
            d.bench,
            d.name,
            r.seq,
            r.cpu,
            fut,
            r.rayon,
            r.cpu / r.rayon,
            fut_ratio,
            r.diff
        );
        let limit = if d.bench == "sgemm" || d.bench == "stencil" {
            1e-4
        } else {
            1e-9
        };
        assert!(
            r.diff <= limit,
            "{} {}: the accelerated result differs from the sequential one by {}",
            d.bench,
            d.name,
            r.diff
        );
    }
}
