//! The program shapes of the `cpu` target's contract (`pmexpr_suite::shapes`): one criterion group
//! per shape, each `accelerate!` site on the `cpu` and `seq` targets beside the same algorithm
//! hand-written with rayon and as a sequential loop, on the same inputs. Every version's result is
//! checked against the sequential loop once before timing.
//!
//! ```text
//! cargo bench --bench shapes
//! cargo run --release --example shapes     # the same sites, a table of medians and ratios
//! ```

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use pmexpr::Target;
use pmexpr_suite::shapes::{SHAPES, Size, Variant, check};
use std::time::Duration;

fn shapes(c: &mut Criterion) {
    for entry in SHAPES {
        if let Err(e) = check(entry, Size::Bench, &[Target::Cpu, Target::Seq]) {
            panic!("{e}");
        }
        let mut shape = (entry.make)(Size::Bench);
        let mut g = c.benchmark_group(entry.name);
        for (id, v) in [
            (
                BenchmarkId::new("accelerate", "cpu"),
                Variant::Accelerated(Target::Cpu),
            ),
            (
                BenchmarkId::new("accelerate", "seq"),
                Variant::Accelerated(Target::Seq),
            ),
            (BenchmarkId::new("rayon", "hand-written"), Variant::Rayon),
            (
                BenchmarkId::new("sequential", "hand-written"),
                Variant::Sequential,
            ),
        ] {
            g.bench_function(id, |b| b.iter(|| shape.run(v)));
        }
        g.finish();
    }
}

criterion_group! {
    name = benches;
    // Short settings: the whole file runs in a few minutes on a 2-core machine.
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    targets = shapes
}
criterion_main!(benches);
