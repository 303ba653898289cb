//! Plain loops: a `par_loop` whose every tensor access is a row at the loop variable (`y[i]`,
//! `t[c, i]`), at least one of them a write, runs on `cpu` with plain loads and stores when the
//! call holds its tensors alone (the runtime's `access` module). These tests check that such
//! loops agree with `seq`, that they are taken where they may be and not elsewhere (a tensor
//! held by another user, overlapping rows, a call nested in rayon work), and that another thread
//! touching the tensors meanwhile waits instead of racing, and cannot deadlock.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use pmexpr::__private::plain_loops;
use pmexpr::{Target, Tensor, accelerate, with_target};
use rayon::prelude::*;

/// `y = a·x + y` on `target`; returns `y` and whether the loop ran plain.
fn axpy(target: Target, a: f64, x: &Tensor<f64>, y: &Tensor<f64>) -> bool {
    let n = y.len() as i64;
    let before = plain_loops();
    with_target(target, || {
        accelerate!(par_loop(n, |i| tensor_set(
            y,
            [i],
            a * tensor_get(x, [i]) + tensor_get(y, [i])
        )))
    });
    plain_loops() > before
}

fn inputs(n: usize) -> (Tensor<f64>, Tensor<f64>) {
    let x = Tensor::from_fn(&[n], |ix| (ix[0] % 97) as f64 * 0.5 - 7.0);
    let y = Tensor::from_fn(&[n], |ix| (ix[0] % 13) as f64 * 0.25);
    (x, y)
}

#[test]
fn plain_loops_agree_with_seq_and_run_plain_on_cpu_only() {
    // Below and above the size that runs on the calling thread, and empty.
    for n in [0, 1, 100, 5_000, 100_003] {
        let (x, y0) = inputs(n);
        let want: Vec<f64> = (x.to_vec().iter().zip(y0.to_vec()))
            .map(|(x, y)| 1.5 * x + y)
            .collect();
        for target in [Target::Seq, Target::Cpu, Target::Debug] {
            let y = y0.clone();
            let plain = axpy(target, 1.5, &x, &y);
            assert_eq!(y.to_vec(), want, "{target}, n = {n}");
            assert_eq!(plain, target == Target::Cpu, "{target}, n = {n}");
        }
    }
}

#[test]
fn rows_of_one_tensor_run_plain_when_apart_and_checked_when_they_overlap() {
    let n = 10_000_usize;
    let t0 = Tensor::from_fn(&[3, n], |ix| (ix[0] * 1000 + ix[1] % 1000) as i64);
    let run = |target: Target, src: i64, dst: i64| {
        let t = t0.clone();
        let k = n as i64;
        let before = plain_loops();
        with_target(target, || {
            accelerate!(par_loop(k, |i| tensor_set(
                t,
                [dst, i],
                tensor_get(t, [src, i]) * 2 + tensor_get(t, [dst, i])
            )))
        });
        (t.to_vec(), plain_loops() > before)
    };
    // Different rows: plain. The same row under two names (`src` and `dst` are both 1): the
    // read's row overlaps the written one, so the loop takes the atomic path, with the same
    // result.
    for (src, dst, plain) in [(0, 2, true), (2, 0, true), (1, 1, false)] {
        let (want, _) = run(Target::Seq, src, dst);
        let (got, ran_plain) = run(Target::Cpu, src, dst);
        assert!(got == want, "{src} -> {dst}: cpu differs from seq");
        assert_eq!(ran_plain, plain, "{src} -> {dst}");
    }
    // The same row read and written at each element under one name: one line, plain.
    let t = t0.clone();
    let (k, r) = (n as i64, 1_i64);
    let before = plain_loops();
    with_target(Target::Cpu, || {
        accelerate!(par_loop(k, |i| tensor_set(
            t,
            [r, i],
            tensor_get(t, [r, i]) * 3
        )))
    });
    assert_eq!(plain_loops(), before + 1);
    let want: Vec<i64> = (t0.to_vec().iter().enumerate())
        .map(|(p, &x)| if p / n == 1 { x * 3 } else { x })
        .collect();
    assert!(t.to_vec() == want, "one row read and written");
    // A view of the same memory under another name overlaps the written row: the loop takes
    // the atomic path (its iterations read what others write, so only `seq` order is defined,
    // and the test checks no plain slices were handed out).
    let t = t0.clone();
    let v = t.clone();
    let same = t.sub(0, 3).expect("a view of all of t");
    let k = n as i64;
    let before = plain_loops();
    with_target(Target::Cpu, || {
        accelerate!(par_loop(k, |i| tensor_set(
            t,
            [0, i],
            tensor_get(same, [0, i]) + 1
        )))
    });
    assert_eq!(plain_loops(), before, "overlapping rows never run plain");
    let want: Vec<i64> = (v.to_vec().iter().enumerate())
        .map(|(p, &x)| if p < n { x + 1 } else { x })
        .collect();
    assert!(t.to_vec() == want, "overlapping rows");
}

#[test]
fn a_tensor_held_elsewhere_or_a_call_in_rayon_work_takes_the_atomic_path() {
    let (x, y0) = inputs(50_000);
    let want = {
        let y = y0.clone();
        axpy(Target::Seq, 2.0, &x, &y);
        y.to_vec()
    };
    // Called from a rayon worker: the call may be nested in other parallel work.
    let y = y0.clone();
    let plain = rayon::scope(|_| axpy(Target::Cpu, 2.0, &x, &y));
    assert!(!plain, "a call on a rayon worker never runs plain");
    assert_eq!(y.to_vec(), want);
    // `x` held shared by another user for good (a view made outside any call, as no program
    // does but the runtime must survive): this call cannot hold it alone.
    let y = y0.clone();
    let x2 = x.clone();
    let site = pmexpr::__private::Site::new("held.rs", 1, 1);
    let _view = pmexpr::__private::TensorRef::new(&x2, &site, "x");
    assert!(!axpy(Target::Cpu, 2.0, &x2, &y), "a tensor held elsewhere");
    assert_eq!(y.to_vec(), want);
    // Once nothing else holds it, the same call runs plain.
    let y = y0.clone();
    assert!(axpy(Target::Cpu, 2.0, &x, &y));
    assert_eq!(y.to_vec(), want);
}

/// Runs `f` on another thread and fails the test if it has not finished in a minute (a
/// deadlock would hang the test run instead).
fn within_a_minute(f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("finished in a minute: no deadlock");
}

#[test]
fn readers_on_rayon_workers_and_other_threads_wait_and_never_deadlock() {
    within_a_minute(|| {
        // One thread runs plain loops that write generation g into every element; rayon
        // workers read the tensor meanwhile. A reader holds it shared for a whole `to_vec`: a
        // plain loop cannot start while it reads, and it waits while one runs.
        let n = 1 << 16;
        let t = std::sync::Arc::new(Tensor::<f64>::zeros(&[n]));
        let done = std::sync::Arc::new(AtomicBool::new(false));
        let writer = {
            let (t, done) = (t.clone(), done.clone());
            std::thread::spawn(move || {
                // Until some loops ran plain (the readers leave gaps between their reads).
                let (mut plain, mut g) = (0, 0.0);
                while plain < 20 && g < 100_000.0 {
                    g += 1.0;
                    let k = n as i64;
                    let t: &Tensor<f64> = &t;
                    let before = plain_loops();
                    with_target(Target::Cpu, || {
                        accelerate!(par_loop(k, |i| tensor_set(t, [i], g)))
                    });
                    plain += usize::from(plain_loops() > before);
                }
                done.store(true, Ordering::Release);
                (plain, g)
            })
        };
        let mut reads = 0;
        loop {
            let finished = done.load(Ordering::Acquire);
            let seen: Vec<Vec<f64>> = (0..8).into_par_iter().map(|_| t.to_vec()).collect();
            for v in seen {
                reads += 1;
                // Every element is a generation the writer wrote, whole.
                assert!(v.iter().all(|&x| x.fract() == 0.0 && x >= 0.0));
            }
            if finished {
                break;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        let (plain, g) = writer.join().expect("the writer");
        assert!(reads > 0);
        assert!(plain > 0, "some loops ran plain");
        // A read during an atomic-path loop may see two generations; during a plain loop it
        // cannot. Whatever it saw, every element is a generation the writer wrote.
        let last = t.to_vec();
        assert!(last.iter().all(|&x| x == g), "{:?} after {g}", &last[..4]);
    });
}

#[test]
fn a_plain_loop_that_fails_releases_its_tensors() {
    // An iteration divides by zero: the call fails at its site, and the tensor is usable after
    // (its lock released by the unwinding), by this thread and by another plain loop.
    let n = 10_000_i64;
    let shared = std::sync::Arc::new(Tensor::<i64>::zeros(&[n as usize]));
    let y: &Tensor<i64> = &shared;
    let before = plain_loops();
    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        with_target(Target::Cpu, || {
            accelerate!(par_loop(n, |i| tensor_set(y, [i], 100 / (i - 5000))))
        })
    }));
    let message = failed.expect_err("the division by zero fails");
    let text = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(text.contains("tests/plain.rs"), "names the site: {text}");
    assert_eq!(plain_loops(), before + 1, "the failing loop ran plain");
    // Another thread reads it (a lock left held would make it wait for ever).
    let other = shared.clone();
    within_a_minute(move || assert_eq!(other.get(&[0]), Some(0)));
    assert_eq!(y.get(&[4999]).map(|v| v == -100 || v == 0), Some(true));
    with_target(Target::Cpu, || {
        accelerate!(par_loop(n, |i| tensor_set(y, [i], i * 2)))
    });
    assert_eq!(
        plain_loops(),
        before + 2,
        "and the next loop runs plain again"
    );
    assert_eq!(y.get(&[n as usize - 1]), Some(2 * (n - 1)));
}

#[test]
fn rows_of_tensors_in_tuples_and_of_every_element_type_run_plain() {
    // `f32` and `i32` tensors, a row at a fixed leading index, a tensor reached through a tuple.
    let n = 20_000_usize;
    let x = Tensor::<f32>::from_fn(&[n], |ix| (ix[0] % 17) as f32 * 0.5);
    let counts = Tensor::<i32>::from_fn(&[2, n], |ix| (ix[0] * 7 + ix[1] % 5) as i32);
    let pair = (x.clone(), counts.clone());
    let k = n as i64;
    let before = plain_loops();
    with_target(Target::Cpu, || {
        accelerate!(par_loop(k, |i| {
            let v = tensor_get(pair.0, [i]);
            tensor_set(pair.1, [1, i], tensor_get(pair.1, [0, i]) + 3);
            tensor_set(pair.0, [i], v * v + 1.0)
        }))
    });
    assert_eq!(plain_loops(), before + 1, "ran plain");
    let want_x: Vec<f32> = x.to_vec().iter().map(|v| v * v + 1.0).collect();
    let want_c: Vec<i32> = (0..2 * n)
        .map(|p| {
            if p < n {
                (p % 5) as i32
            } else {
                (p % n % 5) as i32 + 3
            }
        })
        .collect();
    assert!(pair.0.to_vec() == want_x, "f32 row");
    assert!(pair.1.to_vec() == want_c, "i32 rows");
}
