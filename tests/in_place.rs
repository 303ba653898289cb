//! Writes to elements of sequences happen in place where the old version is not read again
//! (the optimizer's last uses, `pmexpr_core::opt::moves`), and copy where it is: observed through
//! the allocations a site makes, counted by this test binary's allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use pmexpr::{Target, accelerate, with_target};

/// Counts the allocations of the thread that makes them (the tests of this binary run in
/// parallel, each on its own thread).
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator unchanged; counting touches no memory the
// allocator hands out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
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

/// The value of `f` on `target`, and how many allocations this thread made for it.
fn allocations<T>(target: Target, f: impl Fn() -> T) -> (T, u64) {
    let before = ALLOCATIONS.with(Cell::get);
    let v = with_target(target, f);
    (v, ALLOCATIONS.with(Cell::get) - before)
}

fn fill(n: i64, steps: i64) -> Vec<i64> {
    accelerate!({
        let mut a = vec![0i64; n as usize];
        for i in 0..steps {
            a[(i * 7) % n] += i;
        }
        a
    })
}

fn fill_keeping_the_first(n: i64, steps: i64) -> (Vec<i64>, Vec<i64>) {
    accelerate!({
        let mut a = vec![0i64; n as usize];
        let first = a;
        for i in 0..steps {
            a[(i * 7) % n] += i;
        }
        (first, a)
    })
}

#[test]
fn a_loop_of_element_writes_allocates_no_copy_per_write() {
    let (n, steps) = (1000, 20_000);
    let mut want = vec![0i64; n as usize];
    for i in 0..steps {
        want[((i * 7) % n) as usize] += i;
    }
    // The sequential target runs on this thread, so all its allocations are counted here: the
    // sequence, its copy into the result, and a few of the site's own, not one per write.
    let (got, made) = allocations(Target::Seq, || fill(n, steps));
    assert_eq!(got, want);
    assert!(made < 50, "{made} allocations for {steps} writes");
    for target in [Target::Cpu, Target::Debug] {
        assert_eq!(with_target(target, || fill(n, steps)), want, "{target:?}");
    }
}

#[test]
fn a_version_still_read_is_copied_once() {
    let (n, steps) = (1000, 20_000);
    let (got, made) = allocations(Target::Seq, || fill_keeping_the_first(n, steps));
    assert_eq!(
        got.0,
        vec![0; n as usize],
        "the old version keeps its elements"
    );
    assert_eq!(got.1, fill(n, steps));
    assert!(made < 50, "{made} allocations for {steps} writes");
}

/// Per element, a small array of its neighbours, counted by `filter(…).len()`: the array is a
/// Rust array on the stack and the count builds nothing, so the site allocates only its result
/// (and a few of its own), not two sequences per element.
fn neighbours(s: &[i64]) -> Vec<usize> {
    let n = s.len() as i64;
    accelerate!(create(n, |i: i64| {
        let at = |d: i64| s[(i + d + n) % n];
        let around = [at(-2), at(-1), at(1), at(2)];
        filter(|x: i64| x > 0, around).len()
    }))
}

#[test]
fn small_arrays_and_their_counts_allocate_nothing_per_element() {
    let s: Vec<i64> = (0..5000).map(|i| (i * 37 % 11) - 5).collect();
    let n = s.len() as i64;
    let want: Vec<usize> = (0..n)
        .map(|i| {
            let at = |d: i64| s[((i + d + n) % n) as usize];
            [at(-2), at(-1), at(1), at(2)]
                .iter()
                .filter(|&&x| x > 0)
                .count()
        })
        .collect();
    let (got, made) = allocations(Target::Seq, || neighbours(&s));
    assert_eq!(got, want);
    assert!(made < 50, "{made} allocations for {n} elements");
    for target in [Target::Cpu, Target::Debug] {
        assert_eq!(with_target(target, || neighbours(&s)), want, "{target:?}");
    }
    // Empty and one element.
    assert_eq!(neighbours(&[]), Vec::<usize>::new());
    assert_eq!(neighbours(&[3]), vec![4]);
}

/// A loop that replaces its sequence by a map of it: written over the old elements, which
/// nothing reads afterwards; a map whose function reads the sequence itself, or a version kept
/// for later, makes a new one.
fn relax(s: &[f64], steps: i64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    accelerate!({
        let mut x = map(|v: f64| v * 2.0, s);
        let mut y = map2(|a: f64, b: f64| a + b, s, s);
        let mut z = map(|v: f64| v, s);
        let mut kept = map(|v: f64| v, s);
        for i in 0..steps {
            x = map(|v: f64| v * 0.5 + 1.0, x);
            y = map2(|a: f64, b: f64| a * 0.25 + b, y, x);
            // Reads `z` while it is replaced: a new sequence, `z[0]` the old one.
            z = map(|v: f64| v + z[0], z);
            if i == 1 {
                kept = x;
            }
        }
        (x, y, kept)
    })
}

#[test]
fn a_loop_that_maps_its_sequence_writes_over_it() {
    let s: Vec<f64> = (0..1000).map(|i| i as f64 / 7.0).collect();
    let steps = 2000;
    let mut x: Vec<f64> = s.iter().map(|v| v * 2.0).collect();
    let mut y: Vec<f64> = s.iter().map(|v| v + v).collect();
    let mut kept = s.clone();
    for i in 0..steps {
        x = x.iter().map(|v| v * 0.5 + 1.0).collect();
        y = y.iter().zip(&x).map(|(a, b)| a * 0.25 + b).collect();
        if i == 1 {
            kept = x.clone();
        }
    }
    let (got, made) = allocations(Target::Seq, || relax(&s, steps));
    assert_eq!(got, (x.clone(), y.clone(), kept.clone()));
    // `z`'s maps make a sequence each step (its function reads it); `x`'s and `y`'s none.
    assert!(
        made < steps as u64 + 100,
        "{made} allocations for {steps} steps of three maps"
    );
    for target in [Target::Cpu, Target::Debug] {
        assert_eq!(
            with_target(target, || relax(&s, steps)),
            (x.clone(), y.clone(), kept.clone()),
            "{target:?}"
        );
    }
}

/// A loop inside a loop, each writing the same sequence: the outer loop hands its sequence to
/// the inner one (its last use there), so neither copies it; per block, a count and a prefix
/// sum written in place, as a radix sort's block loop does.
fn block_counts(keys: &[i64], blocks: i64, buckets: i64) -> Vec<i64> {
    accelerate!({
        let n = keys.len() as i64;
        let per = n / blocks;
        let mut counts = vec![0i64; (blocks * buckets) as usize];
        for b in 0..blocks {
            for k in 0..per {
                let key = keys[b * per + k] % buckets;
                counts[b * buckets + key] += 1;
            }
            let mut sum = 0i64;
            for j in 0..buckets {
                let c = counts[b * buckets + j];
                counts[b * buckets + j] = sum;
                sum += c;
            }
        }
        counts
    })
}

#[test]
fn a_loop_inside_a_loop_writes_the_outer_sequence_in_place() {
    let (blocks, buckets, per) = (200i64, 64i64, 50i64);
    let keys: Vec<i64> = (0..blocks * per).map(|i| (i * 7919) % 1009).collect();
    let mut want = vec![0i64; (blocks * buckets) as usize];
    for b in 0..blocks {
        for k in 0..per {
            want[(b * buckets + keys[(b * per + k) as usize] % buckets) as usize] += 1;
        }
        let mut sum = 0;
        for j in 0..buckets {
            let at = (b * buckets + j) as usize;
            let c = want[at];
            want[at] = sum;
            sum += c;
        }
    }
    let (got, made) = allocations(Target::Seq, || block_counts(&keys, blocks, buckets));
    assert_eq!(got, want);
    // One copy per inner loop would be 2 × 200 of 12,800 elements.
    assert!(made < 50, "{made} allocations for {blocks} blocks");
    for target in [Target::Cpu, Target::Debug] {
        assert_eq!(
            with_target(target, || block_counts(&keys, blocks, buckets)),
            want,
            "{target:?}"
        );
    }
}

/// A loop that replaces its sequence by a `create` reading it, as a stencil or a row-by-row
/// dynamic program does: the version it replaced is kept aside and the next `create` writes
/// into it, so the loop alternates between two buffers; a version the program keeps is never
/// written over.
fn smooth(s: &[f64], steps: i64) -> (Vec<f64>, Vec<f64>) {
    let n = s.len() as i64;
    accelerate!({
        let mut cur = map(|x: f64| x, s);
        let mut kept = map(|x: f64| x, s);
        for t in 0..steps {
            cur = create(n, |i: i64| {
                if i == 0 || i == n - 1 {
                    cur[i]
                } else {
                    (cur[i - 1] + cur[i] + cur[i + 1]) / 3.0
                }
            });
            if t == 2 {
                kept = cur;
            }
        }
        (cur, kept)
    })
}

#[test]
fn a_loop_that_replaces_its_sequence_reuses_the_replaced_one() {
    let s: Vec<f64> = (0..500).map(|i| ((i * 37) % 11) as f64).collect();
    let steps = 2000;
    let (mut cur, mut kept) = (s.clone(), s.clone());
    for t in 0..steps {
        let next: Vec<f64> = (0..cur.len())
            .map(|i| {
                if i == 0 || i == cur.len() - 1 {
                    cur[i]
                } else {
                    (cur[i - 1] + cur[i] + cur[i + 1]) / 3.0
                }
            })
            .collect();
        cur = next;
        if t == 2 {
            kept = cur.clone();
        }
    }
    let (got, made) = allocations(Target::Seq, || smooth(&s, steps));
    assert_eq!(got, (cur.clone(), kept.clone()));
    assert!(made < 50, "{made} allocations for {steps} steps");
    for target in [Target::Cpu, Target::Debug] {
        assert_eq!(
            with_target(target, || smooth(&s, steps)),
            (cur.clone(), kept.clone()),
            "{target:?}"
        );
    }
    assert_eq!(smooth(&[], 3), (vec![], vec![]));
    assert_eq!(smooth(&[2.5], 3), (vec![2.5], vec![2.5]));
}
