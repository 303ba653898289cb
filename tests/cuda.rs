//! The CUDA target against the sequential one: every CUDA-class site here runs on each CUDA
//! target this machine has (the GPU when there is one, the emulator that runs the generated
//! kernels on the CPU when a C++ compiler is found) and must give `seq`'s result, launching its
//! kernels on the device — not falling back to the CPU.

mod common;

use common::failure;
use pmexpr::cuda::{launches_on_this_thread, tensor_uploads_on_this_thread};
use pmexpr::{Target, Tensor, accelerate, pmexpr, with_target};

/// Runs `f` on `seq` and on every CUDA target; checks the results agree and that each CUDA run
/// launched `kernels` kernels.
fn on_cuda<T: PartialEq + std::fmt::Debug>(kernels: u64, f: impl Fn() -> T) -> T {
    let seq = with_target(Target::Seq, &f);
    for t in common::cuda_targets() {
        let before = launches_on_this_thread();
        let r = with_target(t, &f);
        assert_eq!(r, seq, "on {t}");
        assert_eq!(
            launches_on_this_thread() - before,
            kernels,
            "kernels launched on {t}"
        );
    }
    seq
}

#[test]
fn axpy_f64() {
    let n = 1000_usize;
    let x = Tensor::<f64>::from_fn(&[n], |ix| ix[0] as f64 * 0.5);
    let a = 1.5_f64;
    let r = on_cuda(1, || {
        let y = Tensor::<f64>::from_fn(&[n], |ix| 1.0 / (ix[0] as f64 + 1.0));
        let m = n as i64;
        accelerate!(par_loop(m, |i| tensor_set(
            y,
            [i],
            a * tensor_get(x, [i]) + tensor_get(y, [i])
        )));
        y.to_vec()
    });
    assert_eq!(r[10], 1.5 * 5.0 + 1.0 / 11.0);
}

/// One site, two instantiations of its number type: a module each.
#[test]
fn number_types_pick_their_module() {
    fn double<T: pmexpr::__private::Num>(v: Vec<T>) -> Vec<T> {
        let n = v.len();
        let x = Tensor::from_vec(v, &[n]);
        let out = Tensor::<T>::zeros(&[n]);
        let m = n as i64;
        accelerate!(par_loop(m, |i| tensor_set(
            out,
            [i],
            tensor_get(x, [i]) + tensor_get(x, [i])
        )));
        out.to_vec()
    }
    assert_eq!(on_cuda(1, || double(vec![1_i64, -2, 3])), vec![2, -4, 6]);
    assert_eq!(on_cuda(1, || double(vec![0.25_f64, 1.5])), vec![0.5, 3.0]);
    // i32 and f32 have their own modules: launched on the device too, not widened.
    assert_eq!(
        on_cuda(1, || double(vec![7_i32, i32::MAX])),
        vec![14, i32::MAX.wrapping_add(i32::MAX)]
    );
    assert_eq!(on_cuda(1, || double(vec![0.1_f32, 3.5])), vec![0.2, 7.0]);
}

/// A value only compared may be a `bool`: a `bool` instantiation has its own module, launched
/// on the device like the numbers' (`codegen::numbers`).
#[test]
fn compared_values_pick_their_module_bool_too() {
    let s = vec![true, false, true];
    let y = true;
    let r = on_cuda(1, || {
        let out = Tensor::<i64>::zeros(&[3]);
        accelerate!(par_loop(3, |i| tensor_set(
            out,
            [i],
            if get(s, i) == y { 1 } else { 0 }
        )));
        out.to_vec()
    });
    assert_eq!(r, vec![1, 0, 1]);
    let s = vec![3_i32, 4];
    let y = 4_i32;
    let r = on_cuda(1, || {
        let out = Tensor::<i64>::zeros(&[2]);
        accelerate!(par_loop(2, |i| tensor_set(
            out,
            [i],
            if get(s, i) == y { 1 } else { 0 }
        )));
        out.to_vec()
    });
    assert_eq!(r, vec![0, 1]);
}

/// `i32` arithmetic on the device wraps at 32 bits and divides like Rust's `i32`.
#[test]
fn i32_arithmetic_wraps() {
    let xs: Vec<i32> = vec![
        0,
        1,
        -1,
        7,
        -7,
        46341,
        i32::MAX,
        i32::MIN,
        i32::MIN + 1,
        123_456_789,
    ];
    let n = xs.len();
    let r = on_cuda(1, || {
        let t = Tensor::<i32>::from_vec(xs.clone(), &[n]);
        let q = Tensor::<i32>::zeros(&[n]);
        accelerate!(par_loop(length(xs), |i| {
            let x = tensor_get(t, [i]);
            let y = x * x * 3 + 2147483647 - -x;
            // The divisor is never 0 here, nor -1 at `MIN` (which fails, as Rust panics).
            tensor_set(q, [i], x / (if x == 0 || x == i32::MIN { 1 } else { -1 }));
            tensor_set(t, [i], y / 5 - get(xs, i))
        }));
        (t.to_vec(), q.to_vec())
    });
    let want: Vec<i32> = xs
        .iter()
        .map(|&x| {
            (x.wrapping_mul(x)
                .wrapping_mul(3)
                .wrapping_add(i32::MAX)
                .wrapping_sub(x.wrapping_neg())
                / 5)
            .wrapping_sub(x)
        })
        .collect();
    assert_eq!(r.0, want);
    assert_eq!(r.1[7], i32::MIN);
    assert_eq!(r.1[8], i32::MAX, "(MIN + 1) / -1");
}

/// `f32` arithmetic on the device is single precision (not computed in `f64` and rounded), its
/// literals `f32`s, with Rust's results bit for bit; an `i64` index and an `f64` computed with
/// the math functions sit beside it.
#[test]
fn f32_arithmetic_is_not_widened() {
    let xs: Vec<f32> = (0..512)
        .map(|k| (k as f32 - 200.0) * 0.37 + 0.011)
        .collect();
    let roots: Vec<f64> = (0..512).map(|k| k as f64 * 1.25).collect();
    let n = xs.len();
    let run = || {
        let y = Tensor::<f32>::from_fn(&[n], |ix| 1.0 / (ix[0] as f32 + 3.0));
        let d = Tensor::<f64>::zeros(&[n]);
        accelerate!(par_loop(length(xs), |i| {
            let x = get(xs, i);
            let a = x * 0.1 + tensor_get(y, [i]) * x;
            // `1e39` is infinity as an `f32`, `1e-39` a subnormal one.
            let b = if x < 0.0 { -a / 3.0 } else { a * a - 1e-39 };
            let c = if b > 1e39 { 0.0 } else { b * 1.0000001 + 0.3 };
            tensor_set(y, [i], c);
            tensor_set(
                d,
                [i],
                sqrt(get(roots, i)) + int2float(floorfi(get(roots, i) / 3.0)),
            )
        }));
        (y.to_vec(), d.to_vec())
    };
    let r = on_cuda(1, run);
    let widened: Vec<f32> = xs
        .iter()
        .enumerate()
        .map(|(k, &x)| {
            let (x, y) = (x as f64, 1.0 / (k as f32 + 3.0) as f64);
            let a = x * 0.1 + y * x;
            let b = if x < 0.0 { -a / 3.0 } else { a * a };
            (b * 1.0000001 + 0.3) as f32
        })
        .collect();
    assert!(
        r.0.iter().zip(&widened).any(|(a, b)| a != b),
        "the data tells f32 arithmetic from f64 arithmetic rounded to f32"
    );
    assert_eq!(r.1[4], 5.0_f64.sqrt() + 1.0);
}

/// Tensors, sequences and records of `i32`/`f32` beside `i64` indices, in device functions with
/// loops; a tensor of each number type in one site.
#[test]
fn narrow_tensors_records_and_loops() {
    let pairs: Vec<(i64, f32)> = (0..40).map(|k| (k % 8, 0.5 + k as f32 / 7.0)).collect();
    let counts: Vec<i32> = (0..8).map(|k| k * 100_000_000).collect();
    let r = on_cuda(2, || {
        let acc = Tensor::<f32>::zeros(&[8, 5]);
        let ints = Tensor::<i32>::zeros(&[8]);
        accelerate!({
            par_loop(8, |row| {
                seq_loop(5, |j| {
                    let (k, w) = get(pairs, row * 5 + j);
                    let p = seq_loop_acc(w, k, |p, _m| p * w + 0.25);
                    tensor_set(acc, [row, j], p / (w + 1.0))
                })
            });
            par_loop(8, |k| {
                let c = get(counts, k);
                tensor_set(ints, [k], seq_loop_acc(c, 3, |s, _m| s * 3 + c))
            })
        });
        (acc.to_vec(), ints.to_vec())
    });
    assert!(r.0.iter().all(|v| v.is_finite()));
    let c = 700_000_000_i32;
    let mut s = c;
    for _ in 0..3 {
        s = s.wrapping_mul(3).wrapping_add(c);
    }
    assert_eq!(r.1[7], s);
}

/// A failed check in an `i32` module — a division by zero, a literal that does not fit — is
/// reported at the site in the CPU targets' words.
#[test]
fn i32_device_errors_name_the_site() {
    let xs: Vec<i32> = vec![4, 2, 0, 1];
    let divide = || {
        let out = Tensor::<i32>::zeros(&[4]);
        accelerate!(par_loop(4, |i| tensor_set(out, [i], 100 / get(xs, i))));
        out.to_vec()
    };
    let literal = || {
        let out = Tensor::<i32>::zeros(&[4]);
        accelerate!(par_loop(4, |i| tensor_set(
            out,
            [i],
            get(xs, i) + 3000000000
        )));
        out.to_vec()
    };
    for (run, words) in [
        (&divide as &dyn Fn() -> Vec<i32>, "Division by zero"),
        (
            &literal,
            "the integer literal 3000000000 does not fit in i32",
        ),
    ] {
        let on_seq = failure(Target::Seq, run);
        assert!(on_seq.contains(words), "{on_seq}");
        for t in common::cuda_targets() {
            let before = launches_on_this_thread();
            let m = failure(t, run);
            assert_eq!(launches_on_this_thread() - before, 1, "on {t}");
            assert!(
                m.starts_with("pmexpr: accelerate! at tests/cuda.rs:"),
                "{m}"
            );
            assert!(m.contains(words), "{m}");
            assert!(m.contains("on the device"), "{m}");
        }
    }
}

#[test]
fn records_and_nested_sequences() {
    let ps: Vec<(i64, f64)> = (0..50).map(|i| (i, i as f64 * 0.25)).collect();
    let rows: Vec<Vec<i64>> = (0..50).map(|i| (0..(i % 7)).collect()).collect();
    let r = on_cuda(1, || {
        let out = Tensor::<f64>::zeros(&[50]);
        let sums = Tensor::<i64>::zeros(&[50]);
        accelerate!(par_loop(length(ps), |i| {
            let (k, w) = get(ps, i);
            let row = get(rows, i);
            tensor_set(out, [i], int2float(k) * w);
            tensor_set(
                sums,
                [i],
                seq_loop_acc(0, length(row), |acc, j| acc + get(row, j)),
            )
        }));
        (out.to_vec(), sums.to_vec())
    });
    assert_eq!(r.1[6], 15);
}

/// Two launches in a row: the second reads what the first wrote, on the device.
#[test]
fn kernels_share_data_on_the_device() {
    let r = on_cuda(2, || {
        let a = Tensor::<i64>::zeros(&[64]);
        let b = Tensor::<i64>::zeros(&[64]);
        accelerate!({
            par_loop(64, |i| tensor_set(a, [i], i * i));
            par_loop(64, |i| tensor_set(b, [i], tensor_get(a, [63 - i]) + 1))
        });
        (a.to_vec(), b.to_vec())
    });
    assert_eq!(r.1[0], 63 * 63 + 1);
}

/// Host code between the launches reads a tensor element: it sees the first kernel's writes.
#[test]
fn host_code_between_launches_sees_the_writes() {
    let r = on_cuda(2, || {
        let a = Tensor::<i64>::zeros(&[16]);
        let b = Tensor::<i64>::zeros(&[16]);
        let k = accelerate!({
            par_loop(16, |i| tensor_set(a, [i], 3 * i));
            let k = tensor_get(a, [5]);
            par_loop(16, |i| tensor_set(b, [i], tensor_get(a, [i]) + k));
            k
        });
        (k, b.to_vec())
    });
    assert_eq!(r.0, 15);
    assert_eq!(r.1[1], 18);
}

/// Runs `f` on every CUDA target and returns how many tensor storages each run copied to the
/// device (the same number on every target).
fn tensor_uploads(f: impl Fn()) -> Option<u64> {
    let mut seen = None;
    for t in common::cuda_targets() {
        let before = tensor_uploads_on_this_thread();
        with_target(t, &f);
        let n = tensor_uploads_on_this_thread() - before;
        assert!(seen.is_none_or(|s| s == n), "{n} uploads on {t}");
        seen = Some(n);
    }
    seen
}

/// An iterative algorithm: a sequential loop on the host launches two kernels per step, and the
/// tensors stay on the device across the steps (each is uploaded once).
#[test]
fn kernels_in_a_sequential_loop() {
    let steps = 5_i64;
    let run = || {
        let a = Tensor::<f64>::from_fn(&[100], |ix| ix[0] as f64);
        let b = Tensor::<f64>::zeros(&[100]);
        accelerate!(seq_loop(steps, |_k| {
            par_loop(100, |i| tensor_set(b, [i], tensor_get(a, [i]) * 2.0));
            par_loop(100, |i| tensor_set(a, [i], tensor_get(b, [i]) + 1.0))
        }));
        (a.to_vec(), b.to_vec())
    };
    let r = on_cuda(10, run);
    // a ← 2a + 1, five times: 32a + 31.
    assert_eq!(r.0[3], 32.0 * 3.0 + 31.0);
    assert_eq!(r.1[3], (r.0[3] - 1.0));
    if let Some(n) = tensor_uploads(|| {
        run();
    }) {
        assert_eq!(n, 2, "each tensor is uploaded once for the 10 launches");
    }
}

/// `seq_loop_acc` and `foldl` on the host: the accumulator stays on the host, the kernels run
/// once per iteration and see the loop's index or element.
#[test]
fn kernels_in_loops_with_accumulators() {
    let xs: Vec<i64> = vec![3, 1, 4, 1, 5];
    let r = on_cuda(4 + 5, || {
        let t = Tensor::<i64>::zeros(&[32]);
        let (acc, folded) = accelerate!({
            let acc = seq_loop_acc(0, 4, |acc, k| {
                par_loop(32, |i| tensor_set(t, [i], tensor_get(t, [i]) + k * i));
                acc + k
            });
            let folded = foldl(
                |s, x| {
                    par_loop(32, |i| tensor_set(t, [i], tensor_get(t, [i]) * x));
                    s + x
                },
                0,
                xs,
            );
            (acc, folded)
        });
        (acc, folded, t.to_vec())
    });
    assert_eq!((r.0, r.1), (6, 14));
    assert_eq!(r.2[2], 6 * 2 * 60);
}

/// A branch on the host picks the kernel that runs.
#[test]
fn kernels_in_branches() {
    for flag in [true, false] {
        let r = on_cuda(if flag { 2 } else { 1 }, || {
            let t = Tensor::<i64>::zeros(&[16]);
            accelerate!({
                if flag {
                    par_loop(16, |i| tensor_set(t, [i], i))
                } else {
                    par_loop(16, |i| tensor_set(t, [i], 100 - i))
                };
                if !flag {
                    ()
                } else {
                    par_loop(8, |i| tensor_set(t, [i], tensor_get(t, [i]) * 10))
                }
            });
            t.to_vec()
        });
        // Not taken: no launch of the second branch.
        let expected = if flag { [0, 10, 20] } else { [100, 99, 98] };
        assert_eq!(r[..3], expected, "flag {flag}");
    }
}

/// A closure and a recursive local `fn` of the site launch kernels where they are called.
#[test]
fn kernels_in_local_functions() {
    let r = on_cuda(2 + 3, || {
        let t = Tensor::<i64>::from_fn(&[10], |ix| ix[0] as i64);
        accelerate!({
            let scale = |c: i64| par_loop(10, |i| tensor_set(t, [i], tensor_get(t, [i]) * c));
            scale(2);
            scale(3);
            fn shift(k: i64) {
                if k > 0 {
                    par_loop(10, |i| tensor_set(t, [i], tensor_get(t, [i]) + 1));
                    shift(k - 1)
                } else {
                    ()
                }
            }
            shift(3)
        });
        t.to_vec()
    });
    assert_eq!(r[4], 4 * 6 + 3);
}

/// A `#[pmexpr]` function that launches a kernel, called from host code in a loop.
#[pmexpr]
fn add_index(t: &Tensor<i64>, c: i64) {
    par_loop(tensor_shape(t)[0], |i| {
        tensor_set(t, [i], tensor_get(t, [i]) + c * i)
    })
}

#[test]
fn kernels_in_pmexpr_functions() {
    let r = on_cuda(3, || {
        let t = Tensor::<i64>::zeros(&[12]);
        accelerate!(seq_loop(3, |k| add_index(t, k + 1)));
        t.to_vec()
    });
    assert_eq!(r[5], 5 * (1 + 2 + 3));
    // Called from Rust code, it is an ordinary (sequential) function.
    let t = Tensor::<i64>::zeros(&[4]);
    add_index(&t, 2);
    assert_eq!(t.to_vec(), [0, 2, 4, 6]);
}

/// Host code in the loop reads what the kernels wrote (then tensors go back to the host after
/// each launch), and each iteration's kernels see that iteration's values.
#[test]
fn host_code_in_loops_sees_the_device() {
    let ws: Vec<i64> = vec![5, 6, 7, 8];
    let r = on_cuda(2 * 4, || {
        let t = Tensor::<i64>::zeros(&[8]);
        let u = Tensor::<i64>::zeros(&[8]);
        let sum = accelerate!(seq_loop_acc(0, 4, |acc, k| {
            par_loop(8, |i| {
                tensor_set(t, [i], tensor_get(t, [i]) + i * get(ws, k))
            });
            let seen = tensor_get(t, [7]);
            par_loop(8, |i| tensor_set(u, [i], tensor_get(t, [i]) + seen));
            acc + seen
        }));
        (sum, t.to_vec(), u.to_vec())
    });
    // t[7] after step k: 7 * (5 + … + ws[k]).
    assert_eq!(r.0, 7 * (5 + 11 + 18 + 26));
    assert_eq!(r.1[7], 7 * 26);
    assert_eq!(r.2[1], 26 + 7 * 26);
}

/// Views made on the host and on the device share the tensor's memory.
#[test]
fn views_share_memory_on_the_device() {
    let r = on_cuda(1, || {
        let t = Tensor::<f64>::from_fn(&[4, 3], |ix| (ix[0] * 3 + ix[1]) as f64);
        accelerate!({
            let rows = tensor_sub(t, 1, 2);
            par_loop(2, |i| {
                let row = tensor_slice(rows, [i]);
                tensor_set(row, [0], tensor_get(row, [2]) * 10.0)
            })
        });
        t.to_vec()
    });
    assert_eq!(r[3], 50.0);
    assert_eq!(r[6], 80.0);
    assert_eq!(r[0], 0.0);
}

/// A failed runtime check on the device is reported at the site, worded as on the CPU.
#[test]
fn device_errors_name_the_site() {
    let s = vec![1_i64, 2, 3];
    let run = || {
        let out = Tensor::<i64>::zeros(&[3]);
        accelerate!(par_loop(3, |i| tensor_set(out, [i], get(s, i + 1))));
        out.to_vec()
    };
    let on_seq = failure(Target::Seq, run);
    assert!(
        on_seq.contains("Out of bounds access in sequence: index 3 for a sequence of length 3"),
        "{on_seq}"
    );
    for t in common::cuda_targets() {
        let m = failure(t, run);
        assert!(
            m.starts_with("pmexpr: accelerate! at tests/cuda.rs:"),
            "{m}"
        );
        assert!(
            m.contains("Out of bounds access in sequence: index 3 for a sequence of length 3"),
            "{m}"
        );
        assert!(m.contains("on the device"), "{m}");
    }
}

/// Many threads call the same site at once, each with its own data.
#[test]
fn threads_share_the_device() {
    for t in common::cuda_targets() {
        std::thread::scope(|scope| {
            for k in 0..8_i64 {
                scope.spawn(move || {
                    for round in 0..20_i64 {
                        let out = Tensor::<i64>::zeros(&[100]);
                        let c = k * 1000 + round;
                        with_target(t, || {
                            accelerate!(par_loop(100, |i| tensor_set(out, [i], i + c)))
                        });
                        assert_eq!(out.to_vec()[7], 7 + c, "thread {k} round {round} on {t}");
                    }
                });
            }
        });
    }
}

/// Device memory is freed after each call: 10^4 calls leave nothing allocated.
#[test]
fn calls_free_their_device_memory() {
    let targets = common::cuda_targets();
    if targets.is_empty() {
        return;
    }
    let s: Vec<f64> = (0..1000).map(f64::from).collect();
    let call = |t: Target| {
        let out = Tensor::<f64>::zeros(&[1000]);
        with_target(t, || {
            accelerate!(par_loop(1000, |i| tensor_set(out, [i], get(s, i) * 2.0)))
        });
        out.to_vec()[999]
    };
    for t in targets {
        let live = || match t {
            Target::CudaEmulator => pmexpr::cuda::emulator::emulator()
                .map(|e| e.live_bytes())
                .unwrap_or(0),
            _ => pmexpr::cuda::driver::gpu()
                .and_then(|g| g.used_bytes())
                .unwrap_or(0),
        };
        assert_eq!(call(t), 1998.0);
        let before = live();
        for _ in 0..10_000 {
            call(t);
        }
        let after = live();
        // The GPU's used memory may move by a page or so for other reasons; 10^4 leaked calls
        // would be 160 MB.
        assert!(
            after <= before + (1 << 20),
            "device memory grew from {before} to {after} bytes over 10^4 calls on {t}"
        );
    }
}

/// A site the build hook did not see has no kernels — the hook generates them, the macro never
/// does: it runs on the CPU targets (and on `auto`), and the CUDA targets fail at the site saying
/// why. Here a macro writes the site, so the hook records the macro's `$t`, not the tokens that
/// `accelerate!` receives.
#[test]
fn a_site_the_hook_did_not_see_fails_under_the_cuda_targets() {
    macro_rules! doubled {
        ($t:ident) => {
            accelerate!(par_loop(4, |i| tensor_set($t, [i], i * 2)))
        };
    }
    let run = || {
        let t = Tensor::<i64>::zeros(&[4]);
        doubled!(t);
        t.to_vec()
    };
    // The line of `doubled!(t)`, where the failure is reported.
    let at = line!() - 4;
    assert_eq!(with_target(Target::Seq, run), [0, 2, 4, 6]);
    let before = launches_on_this_thread();
    assert_eq!(with_target(Target::Auto, run), [0, 2, 4, 6]);
    assert_eq!(launches_on_this_thread(), before, "no kernel to launch");
    for t in common::cuda_targets() {
        let why = failure(t, run);
        assert!(
            why.starts_with(&format!("pmexpr: accelerate! at tests/cuda.rs:{at}:")),
            "{why}"
        );
        assert!(
            why.contains(&format!(
                "the {t} target cannot run this site: the build hook did not see this `accelerate!`"
            )),
            "{why}"
        );
    }
}
