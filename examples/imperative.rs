//! Imperative loops inside `accelerate!` against their functional spelling
//! (`pmexpr_suite::imperative`): a table of median times on one target (`cpu` by default) of each
//! workload written with `let mut`, `+=` and `for`/`while`, beside the same workload written with
//! `foldl` or a tail-recursive `fn`, and of a search that stops at its first hit (`break`) beside
//! the same loop without the `break`; then each imperative site beside the same algorithm written
//! by hand with rayon and as a sequential loop (`pmexpr_suite::imperative::hand`). Every version
//! is checked to agree first; the versions of a row run in turn, one run of each per round, so
//! that the machine's load falls on all alike.
//!
//! ```text
//! cargo run --release --example imperative [-- --runs 21] [-- --target seq]
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use pmexpr::{Target, with_target};
use pmexpr_suite::Rng;
use pmexpr_suite::imperative::*;

/// The system allocator, counting the allocations of every thread: the table's allocation
/// columns.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call to the system allocator unchanged; counting touches no memory the
// allocator hands out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// How many allocations one run of `f` on `target` makes, on every thread.
fn allocations(target: Target, f: &dyn Fn()) -> u64 {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    with_target(target, f);
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

/// A workload's name, its imperative spelling and its functional one.
type Row<'a> = (&'a str, &'a dyn Fn(), &'a dyn Fn());

/// The median milliseconds of each of `fs`, run in turn.
fn timed(target: Target, rounds: usize, fs: &[&dyn Fn()]) -> Vec<f64> {
    let time = |f: &dyn Fn()| {
        let start = Instant::now();
        with_target(target, f);
        start.elapsed().as_secs_f64() * 1e3
    };
    fs.iter().for_each(|f| {
        time(f);
    });
    let mut ts = vec![Vec::new(); fs.len()];
    for _ in 0..rounds {
        for (f, t) in fs.iter().zip(&mut ts) {
            t.push(time(f));
        }
    }
    ts.into_iter()
        .map(|mut t| {
            t.sort_by(f64::total_cmp);
            t[t.len() / 2]
        })
        .collect()
}

/// The median milliseconds of `a` and of `b`, run in turn.
fn pair(target: Target, rounds: usize, a: &dyn Fn(), b: &dyn Fn()) -> (f64, f64) {
    let t = timed(target, rounds, &[a, b]);
    (t[0], t[1])
}

fn main() {
    let mut rounds = 15;
    let mut target = Target::Cpu;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => rounds = args.next().and_then(|n| n.parse().ok()).unwrap_or(rounds),
            "--target" => {
                target = match args.next().as_deref() {
                    Some("seq") => Target::Seq,
                    _ => Target::Cpu,
                }
            }
            _ => {}
        }
    }
    let mut rng = Rng::new(30);
    let n = 3000;
    let (xs, ys) = (rng.floats(n), rng.floats(n));
    let cs = rng.floats(64);
    let points: Vec<f64> = rng.floats(200_000).iter().map(|x| x * 2.0 - 1.0).collect();
    let starts: Vec<i64> = (1..200_000).collect();
    let sorted: Vec<i64> = (0..20_000).map(|i| i * 5).collect();
    let queries = rng.ints(20_000, 0, 100_000);
    let keys = rng.ints(1 << 20, 0, 256);
    let block = 4096;
    let steps = 10_000_000;
    let (bx, by) = (rng.floats(5), rng.floats(5));
    let body_steps = 1_000_000;
    let (lw, lh) = (1000, 1000);
    let cells: Vec<bool> = rng.ints(lw * lh, 0, 3).iter().map(|&c| c == 0).collect();
    let (fk, fk_parts) = (10, 64);
    let heat = rng.floats(1 << 17);
    let heat_steps = 100;
    let (pf_rows, pf_cols) = (100, 100_000);
    let wall = rng.ints(pf_rows * pf_cols, 0, 10);

    let agree = with_target(target, || {
        nbody_imperative(&xs, &ys) == nbody_functional(&xs, &ys)
            && horner_imperative(&cs, &points) == horner_functional(&cs, &points)
            && collatz_imperative(&starts) == collatz_functional(&starts)
            && search_with_break(&sorted, &queries) == search_without_break(&sorted, &queries)
    });
    assert!(agree, "the two spellings of a workload differ");
    let by_hand = with_target(target, || {
        nbody_imperative(&xs, &ys) == hand::nbody_seq(&xs, &ys)
            && hand::nbody_rayon(&xs, &ys) == hand::nbody_seq(&xs, &ys)
            && horner_imperative(&cs, &points) == hand::horner_rayon(&cs, &points)
            && hand::horner_seq(&cs, &points) == hand::horner_rayon(&cs, &points)
            && collatz_imperative(&starts) == hand::collatz_rayon(&starts)
            && hand::collatz_seq(&starts) == hand::collatz_rayon(&starts)
            && search_with_break(&sorted, &queries) == hand::search_rayon(&sorted, &queries)
            && hand::search_seq(&sorted, &queries) == hand::search_rayon(&sorted, &queries)
            && block_sort(&keys, block as i64) == hand::block_sort_rayon(&keys, block)
            && hand::block_sort_seq(&keys, block) == hand::block_sort_rayon(&keys, block)
            && count_into(steps) == hand::count_into_seq(steps)
            && nbody_steps(&bx, &by, 1000) == hand::nbody_steps_seq(&bx, &by, 1000)
            && life_step(&cells, lw as i64, lh as i64) == hand::life_step_rayon(&cells, lw, lh)
            && hand::life_step_seq(&cells, lw, lh) == hand::life_step_rayon(&cells, lw, lh)
            && hand::nbody_steps_rayon(&bx, &by, 1000) == hand::nbody_steps_seq(&bx, &by, 1000)
            && fannkuch(fk as i64, fk_parts as i64) == hand::fannkuch_rayon(fk, fk_parts)
            && hand::fannkuch_seq(fk, fk_parts) == hand::fannkuch_rayon(fk, fk_parts)
            && stencil(&heat, heat_steps as i64) == hand::stencil_rayon(&heat, heat_steps)
            && hand::stencil_seq(&heat, heat_steps) == hand::stencil_rayon(&heat, heat_steps)
            && pathfinder(&wall, pf_rows as i64, pf_cols as i64)
                == hand::pathfinder_rayon(&wall, pf_rows, pf_cols)
            && hand::pathfinder_seq(&wall, pf_rows, pf_cols)
                == hand::pathfinder_rayon(&wall, pf_rows, pf_cols)
    });
    assert!(by_hand, "a site differs from its hand-written version");

    println!(
        "{target}, median of {rounds} rounds, ms; {} threads",
        rayon::current_num_threads()
    );
    println!("| workload | imperative | functional | imperative / functional |");
    println!("|---|---:|---:|---:|");
    let rows: [Row; 3] = [
        (
            "n-body accelerations, 3000 bodies: `for` + `+=` vs `foldl` over `create`",
            &|| {
                nbody_imperative(&xs, &ys);
            },
            &|| {
                nbody_functional(&xs, &ys);
            },
        ),
        (
            "Horner, 64 coefficients at 2*10^5 points: `for &c in cs.iter()` vs `foldl`",
            &|| {
                horner_imperative(&cs, &points);
            },
            &|| {
                horner_functional(&cs, &points);
            },
        ),
        (
            "Collatz steps of 1..2*10^5: `while` vs a tail-recursive `fn`",
            &|| {
                collatz_imperative(&starts);
            },
            &|| {
                collatz_functional(&starts);
            },
        ),
    ];
    for (name, a, b) in rows {
        let (ta, tb) = pair(target, rounds, a, b);
        println!("| {name} | {ta:.2} | {tb:.2} | **{:.2}** |", ta / tb);
    }
    let (ta, tb) = pair(
        target,
        rounds,
        &|| {
            search_with_break(&sorted, &queries);
        },
        &|| {
            search_without_break(&sorted, &queries);
        },
    );
    println!();
    println!("| early exit | stops at the first hit | scans everything | ratio |");
    println!("|---|---:|---:|---:|");
    println!(
        "| first of 2*10^4 sorted values >= each of 2*10^4 queries | {ta:.2} | {tb:.2} | **{:.2}** |",
        ta / tb
    );

    println!();
    println!(
        "| imperative site against Rust by hand | site | rayon | sequential | site / rayon | site / sequential | allocations: site / rayon / sequential |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    type Hand<'a> = (&'a str, &'a dyn Fn(), &'a dyn Fn(), &'a dyn Fn());
    let rows: [Hand; 11] = [
        (
            "n-body",
            &|| drop(nbody_imperative(&xs, &ys)),
            &|| drop(hand::nbody_rayon(&xs, &ys)),
            &|| drop(hand::nbody_seq(&xs, &ys)),
        ),
        (
            "Horner",
            &|| drop(horner_imperative(&cs, &points)),
            &|| drop(hand::horner_rayon(&cs, &points)),
            &|| drop(hand::horner_seq(&cs, &points)),
        ),
        (
            "Collatz",
            &|| drop(collatz_imperative(&starts)),
            &|| drop(hand::collatz_rayon(&starts)),
            &|| drop(hand::collatz_seq(&starts)),
        ),
        (
            "search with `break`",
            &|| drop(search_with_break(&sorted, &queries)),
            &|| drop(hand::search_rayon(&sorted, &queries)),
            &|| drop(hand::search_seq(&sorted, &queries)),
        ),
        (
            "counting sort of 2^20 keys in blocks of 4096: `counts[k] += 1`, `out[start[k]] = k`",
            &|| drop(block_sort(&keys, block as i64)),
            &|| drop(hand::block_sort_rayon(&keys, block)),
            &|| drop(hand::block_sort_seq(&keys, block)),
        ),
        (
            "10^7 steps of `a[i % 4] += 1` on a 4-element array (one loop: rayon = sequential)",
            &|| drop(count_into(steps)),
            &|| drop(hand::count_into_seq(steps)),
            &|| drop(hand::count_into_seq(steps)),
        ),
        (
            "10^6 steps of 5 bodies: a `create` and four `map2`s of 5 elements per step",
            &|| drop(nbody_steps(&bx, &by, body_steps)),
            &|| drop(hand::nbody_steps_rayon(&bx, &by, body_steps)),
            &|| drop(hand::nbody_steps_seq(&bx, &by, body_steps)),
        ),
        (
            "game of life, 1000 x 1000: 8 neighbours per cell in an array, `filter(…).len()`",
            &|| drop(life_step(&cells, lw as i64, lh as i64)),
            &|| drop(hand::life_step_rayon(&cells, lw, lh)),
            &|| drop(hand::life_step_seq(&cells, lw, lh)),
        ),
        (
            "fannkuch-redux, 10! permutations in 64 parts: flips by `swap`, rotations by element copies",
            &|| {
                std::hint::black_box(fannkuch(fk as i64, fk_parts as i64));
            },
            &|| {
                std::hint::black_box(hand::fannkuch_rayon(fk, fk_parts));
            },
            &|| {
                std::hint::black_box(hand::fannkuch_seq(fk, fk_parts));
            },
        ),
        (
            "3-point stencil over 2^17 elements, 100 steps: `cur = create(n, …cur…)` (two buffers by hand)",
            &|| drop(stencil(&heat, heat_steps as i64)),
            &|| drop(hand::stencil_rayon(&heat, heat_steps)),
            &|| drop(hand::stencil_seq(&heat, heat_steps)),
        ),
        (
            "pathfinder, 100 rows of 10^5: `row = create(cols, …row…)` per row (two rows by hand)",
            &|| drop(pathfinder(&wall, pf_rows as i64, pf_cols as i64)),
            &|| drop(hand::pathfinder_rayon(&wall, pf_rows, pf_cols)),
            &|| drop(hand::pathfinder_seq(&wall, pf_rows, pf_cols)),
        ),
    ];
    for (name, site, par, seq) in rows {
        let t = timed(target, rounds, &[site, par, seq]);
        let a: Vec<u64> = [site, par, seq]
            .iter()
            .map(|f| allocations(target, *f))
            .collect();
        println!(
            "| {name} | {:.2} | {:.2} | {:.2} | **{:.2}** | {:.2} | {} / {} / {} |",
            t[0],
            t[1],
            t[2],
            t[0] / t[1],
            t[0] / t[2],
            a[0],
            a[1],
            a[2]
        );
    }

    // Granularity: the keywords of a small step run on the calling thread on `cpu`, so the site
    // takes about its `seq` time there.
    let on = |t: Target| with_target(t, || drop(nbody_steps(&bx, &by, body_steps)));
    let t = timed(target, rounds, &[&|| on(Target::Cpu), &|| on(Target::Seq)]);
    println!();
    println!("| granularity | cpu | seq | cpu / seq |");
    println!("|---|---:|---:|---:|");
    println!(
        "| 10^6 steps of 5 bodies | {:.2} | {:.2} | **{:.2}** |",
        t[0],
        t[1],
        t[0] / t[1]
    );
}
