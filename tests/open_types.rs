//! Captured values whose element type the expression leaves open: rustc knows it, so `accelerate!`
//! asks for no annotation. Each case runs on every target this machine has and is checked against
//! plain Rust. On the GPU targets a site runs with the code generated for the number or `bool` the
//! open type is at run time; CUDA-class sites below also count their kernel launches, so a site
//! that should run on the device cannot fall back to the CPU unnoticed — and one whose open type
//! is a tuple or a nested `Vec` (no code generated for it) must fall back, with the same result.

mod common;

use common::on_every_target;
use pmexpr::cuda::launches_on_this_thread;
use pmexpr::{Target, Tensor, accelerate, with_target};

/// Runs `f` on `seq` and on every CUDA target this machine has; checks that the results agree
/// and that each CUDA run launched `kernels` kernels (0: it ran on the CPU).
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
fn flatten_of_a_captured_nested_vec() {
    let m: Vec<Vec<i64>> = vec![vec![1, 2], vec![3, 4], vec![5, 6]];
    let r = on_every_target(|| {
        let r: Vec<i64> = accelerate!(flatten(m));
        r
    });
    assert_eq!(r, m.concat());
    let f: Vec<Vec<f32>> = vec![vec![1.5], vec![2.5]];
    let r = on_every_target(|| {
        let r: Vec<f32> = accelerate!(flatten(f));
        r
    });
    assert_eq!(r, vec![1.5f32, 2.5]);
}

#[test]
fn get_from_a_captured_vec_in_a_map() {
    let s: Vec<i64> = vec![10, 20, 30, 40, 50, 60];
    let r = on_every_target(|| accelerate!(map(|i| get(s, i), create(5, |i| i))));
    assert_eq!(r, vec![10, 20, 30, 40, 50]);
    let words: Vec<bool> = vec![true, false, true, true, false];
    let r = on_every_target(|| accelerate!(map(|i| get(words, i), create(5, |i| 4 - i))));
    assert_eq!(r, vec![false, true, true, false, true]);
}

#[test]
fn length_of_a_vec_never_read() {
    let s: Vec<(bool, f64)> = vec![(true, 1.0); 7];
    let r = on_every_target(|| accelerate!(map(|i| i * 2, create(length(s), |i| i))));
    assert_eq!(r, vec![0, 2, 4, 6, 8, 10, 12]);
    let names: Vec<Vec<i64>> = vec![vec![1, 4], vec![5, 6], vec![2, 3]];
    let n: i64 = on_every_target(|| accelerate!(backend = cpu, length(names)));
    assert_eq!(n, 3);
}

#[test]
fn reverse_head_concat_and_identity_map_over_tuples() {
    let s: Vec<(i64, f64)> = vec![(1, 0.5), (2, 1.5), (3, 2.5)];
    let t: Vec<(i64, f64)> = vec![(9, 9.5)];
    let r = on_every_target(|| accelerate!(map(|p| p, s)));
    assert_eq!(r, s);
    let r = on_every_target(|| accelerate!(map(|p| p, reverse(s))));
    assert_eq!(r, s.iter().rev().copied().collect::<Vec<_>>());
    let r: (i64, f64) = on_every_target(|| accelerate!(backend = cpu, head(s)));
    assert_eq!(r, (1, 0.5));
    let r = on_every_target(|| accelerate!(map(|p| p, concat(s, t))));
    assert_eq!(r, [s.clone(), t.clone()].concat());
    let r = on_every_target(|| accelerate!(backend = cpu, reverse(s)));
    assert_eq!(r, vec![(3, 2.5), (2, 1.5), (1, 0.5)]);
}

#[test]
fn nested_sequences_and_tuples_of_open_types() {
    // Whole rows moved: the element type is a `Vec<i64>`.
    let m: Vec<Vec<i64>> = vec![vec![1, 2], vec![3, 4]];
    let r = on_every_target(|| accelerate!(map(|row| row, reverse(m))));
    assert_eq!(r, vec![vec![3, 4], vec![1, 2]]);
    // A pair whose halves are both open; fields moved into a new tuple.
    let ps: Vec<(Vec<bool>, (i32, f32))> = vec![(vec![true], (1, 2.0)), (vec![false], (3, 4.0))];
    let r = on_every_target(|| accelerate!(map(|p| (p.1, p.0), ps)));
    assert_eq!(r, vec![((1, 2.0), vec![true]), ((3, 4.0), vec![false])]);
    // Zipping two captured sequences of different open types.
    let a: Vec<Vec<i64>> = vec![vec![1, 1], vec![2, 2]];
    let b: Vec<(bool, bool)> = vec![(true, false), (false, true)];
    let r = on_every_target(|| accelerate!(map2(|x, y| (y, x), a, b)));
    assert_eq!(
        r,
        vec![((true, false), vec![1, 1]), ((false, true), vec![2, 2])]
    );
}

#[test]
fn open_types_mixed_with_number_types() {
    // `xs` is summed (a number type variable); `tags` is only moved (an open type).
    let xs: Vec<f32> = vec![1.0, 2.0, 3.0];
    let tags: Vec<(i64, bool)> = vec![(7, true), (8, false), (9, true)];
    let r = on_every_target(|| accelerate!(map2(|x, t| (t, x + x), xs, tags)));
    assert_eq!(
        r,
        vec![((7, true), 2.0f32), ((8, false), 4.0), ((9, true), 6.0)]
    );
    let total: f32 =
        on_every_target(|| accelerate!(reduce(|a, b| a + b, 0.0, map(|x| x * 2.0, xs))));
    assert_eq!(total, 12.0);
    // A reduction that picks elements of an open type (the leftmost longest row).
    let rows: Vec<Vec<i64>> = vec![vec![1, 0], vec![2, 3], vec![4, 5]];
    let first = on_every_target(|| {
        accelerate!(reduce(
            |a, b| if length(a) >= length(b) { a } else { b },
            [],
            rows
        ))
    });
    assert_eq!(first, vec![1, 0]);
}

#[test]
fn open_types_on_a_cuda_class_site() {
    // `par_loop` site: the element type of `ids` is open; its length is read.
    let ids: Vec<(i64, i64)> = vec![(0, 0); 4];
    let out = Tensor::<i64>::zeros(&[4]);
    // Only its length reaches the device: the kernel is launched whatever its elements are.
    on_cuda(1, || {
        let t = Tensor::<i64>::zeros(&[4]);
        accelerate!(par_loop(length(ids), |i| tensor_set(t, [i], i * 3)));
        t.to_vec()
    });
    on_every_target(|| {
        let t = out.clone();
        accelerate!(par_loop(length(ids), |i| tensor_set(t, [i], i * 3)));
        t.to_vec()
    });
    let t = out.clone();
    accelerate!(par_loop(length(ids), |i| tensor_set(t, [i], i * 3)));
    assert_eq!(t.to_vec(), vec![0, 3, 6, 9]);
}

#[test]
fn tensors_whose_elements_are_not_used() {
    let t = Tensor::<f32>::zeros(&[2, 3]);
    let r: Vec<i64> = on_every_target(|| accelerate!(backend = cpu, tensor_shape(t)));
    assert_eq!(r, vec![2, 3]);
}

#[test]
fn open_values_through_functions_branches_and_sequence_intrinsics() {
    let s: Vec<(i64, f64)> = vec![(1, 0.5), (2, 1.5), (3, 2.5), (4, 3.5)];
    let m: Vec<Vec<bool>> = vec![vec![true, false], vec![false, false], vec![true, true]];
    // A polymorphic `let` lambda and a local `fn` item over open values.
    let r = on_every_target(|| {
        accelerate!({
            let id = |x| x;
            fn pick(first: bool, a: (i64, f64), b: (i64, f64)) -> (i64, f64) {
                if first { a } else { b }
            }
            map(
                |i| pick(i % 2 == 0, id(get(s, i)), get(s, 0)),
                create(length(s), |i| i),
            )
        })
    });
    assert_eq!(r, vec![(1, 0.5), (1, 0.5), (3, 2.5), (1, 0.5)]);
    // `foldl`, `set`, `tail`, `subsequence`, `null` and `match` on open values.
    let r = on_every_target(|| {
        accelerate!(backend = cpu, {
            let last = foldl(|_acc, x| x, head(m), m);
            let swapped = set(m, 0, get(m, 2));
            let rest = tail(subsequence(m, 1, 2));
            let empty = null(rest);
            match (last, empty) {
                (l, false) => (l, swapped),
                (_, true) => (head(m), swapped),
            }
        })
    });
    assert_eq!(
        r,
        (
            vec![true, true],
            vec![vec![true, true], vec![false, false], vec![true, true]]
        )
    );
    // Open values in a record built inside and returned.
    let r = on_every_target(|| accelerate!(map2(|a, b| (b, a, length(a)), m, tail(s))));
    assert_eq!(r[2], ((4, 3.5), vec![true, true], 2));
}

/// A derived struct moved without naming its fields: the element type is open, and the result
/// comes back as the struct it was captured as.
#[derive(pmexpr::Record, Debug, Clone, PartialEq)]
struct Mover {
    x: f64,
    id: i64,
}

#[test]
fn open_results_come_back_as_the_captured_rust_types() {
    let bodies = vec![Mover { x: 1.0, id: 1 }, Mover { x: 2.0, id: 2 }];
    let r = on_every_target(|| accelerate!(map(|b| b, reverse(bodies))));
    assert_eq!(r, vec![Mover { x: 2.0, id: 2 }, Mover { x: 1.0, id: 1 }]);
    // Inside tuples and beside other values; from a tuple field of a captured value.
    let tagged: Vec<(i64, Mover)> = vec![(7, Mover { x: 0.5, id: 3 })];
    let r = on_every_target(|| accelerate!(map(|p| (p.1, p.0 + 1), tagged)));
    assert_eq!(r, vec![(Mover { x: 0.5, id: 3 }, 8)]);
    // Arrays and slices come back as `Vec`s.
    let rows: [[i64; 2]; 2] = [[1, 2], [3, 4]];
    let r: Vec<Vec<i64>> = on_every_target(|| accelerate!(map(|r| r, reverse(rows))));
    assert_eq!(r, vec![vec![3, 4], vec![1, 2]]);
}

// ----- CUDA-class sites: the open type is a number or `bool` at run time -----

#[test]
fn kernels_read_sequences_of_open_elements() {
    // `get(m, i)` inside the kernel: `m` crosses as a sequence of sequences of the open type.
    let m: Vec<Vec<i64>> = vec![vec![1, 2], vec![], vec![3, 4, 5]];
    let r = on_cuda(1, || {
        let t = Tensor::<i64>::zeros(&[3]);
        accelerate!(par_loop(length(m), |i| tensor_set(
            t,
            [i],
            length(get(m, i))
        )));
        t.to_vec()
    });
    assert_eq!(r, vec![2, 0, 3]);
    let b: Vec<Vec<bool>> = vec![vec![true], vec![false, true]];
    let r = on_cuda(1, || {
        let t = Tensor::<i64>::zeros(&[2]);
        accelerate!(par_loop(length(b), |i| tensor_set(
            t,
            [i],
            length(get(b, i))
        )));
        t.to_vec()
    });
    assert_eq!(r, vec![1, 2]);
    let f: Vec<Vec<f32>> = vec![vec![0.5; 4]];
    let r = on_cuda(1, || {
        let t = Tensor::<i64>::zeros(&[1]);
        accelerate!(par_loop(length(f), |i| tensor_set(
            t,
            [i],
            length(get(f, i))
        )));
        t.to_vec()
    });
    assert_eq!(r, vec![4]);
    // Rows of tuples: no CUDA code for them, so the CPU runs the site, said once.
    let p: Vec<Vec<(i64, f64)>> = vec![vec![(1, 1.0)], vec![]];
    let r = on_cuda(0, || {
        let t = Tensor::<i64>::zeros(&[2]);
        accelerate!(par_loop(length(p), |i| tensor_set(
            t,
            [i],
            length(get(p, i))
        )));
        t.to_vec()
    });
    assert_eq!(r, vec![1, 0]);
}

#[test]
fn lengths_of_sequences_never_read() {
    // `create(length(s), …)` of the open types, as a CUDA-class site: `par_loop(length(s), …)`.
    let s: Vec<f64> = vec![0.5; 5];
    let r = on_cuda(1, || {
        let t = Tensor::<i64>::zeros(&[5]);
        accelerate!(par_loop(length(s), |i| tensor_set(t, [i], i * 2)));
        t.to_vec()
    });
    assert_eq!(r, vec![0, 2, 4, 6, 8]);
    // Counted on the host only, the elements reach no kernel: any Rust type runs on the device,
    // tuples too.
    let pairs: Vec<(bool, f64)> = vec![(true, 1.0); 3];
    let r = on_cuda(1, || {
        let t = Tensor::<i64>::zeros(&[3]);
        accelerate!(par_loop(length(pairs), |i| tensor_set(t, [i], i * 2)));
        t.to_vec()
    });
    assert_eq!(r, vec![0, 2, 4]);
    let tensors: Vec<Tensor<f32>> = vec![Tensor::zeros(&[2]), Tensor::zeros(&[1])];
    let r = on_cuda(1, || {
        let t = Tensor::<i64>::zeros(&[2]);
        accelerate!(par_loop(length(tensors), |i| tensor_set(t, [i], i + 1)));
        t.to_vec()
    });
    assert_eq!(r, vec![1, 2]);
}

#[test]
fn tuples_reaching_a_kernel_fall_back_until_named() {
    // In the kernel (`get(pairs, i)`), a tuple has no module: the CPU runs the site, said once.
    let pairs: Vec<(bool, f64)> = vec![(true, 1.0); 3];
    let r = on_cuda(0, || {
        let t = Tensor::<i64>::zeros(&[3]);
        accelerate!(par_loop(length(pairs), |i| {
            let p = if i > 0 { get(pairs, i) } else { get(pairs, 0) };
            tensor_set(t, [i], i * 2)
        }));
        t.to_vec()
    });
    assert_eq!(r, vec![0, 2, 4]);
    // The annotation the fallback message suggests makes the type concrete: the device runs it.
    let r = on_cuda(1, || {
        let t = Tensor::<i64>::zeros(&[3]);
        accelerate!({
            let pairs: Vec<(bool, f64)> = pairs;
            par_loop(length(pairs), |i| {
                let p = if i > 0 { get(pairs, i) } else { get(pairs, 0) };
                tensor_set(t, [i], i * 2)
            })
        });
        t.to_vec()
    });
    assert_eq!(r, vec![0, 2, 4]);
}

#[test]
fn open_values_moved_inside_kernels() {
    // CUDA code reads sequences only (`get`, `length`: `reverse`, `head`, `concat` and `flatten`
    // make a site Futhark-class, above); a row of the open type is moved through a branch and a
    // closure on the device.
    let m: Vec<Vec<i32>> = vec![vec![1, 2], vec![3], vec![4, 5, 6]];
    let r = on_cuda(1, || {
        let t = Tensor::<i64>::zeros(&[3]);
        accelerate!(par_loop(length(m), |i| {
            let pick = |a, b| if i % 2 == 0 { a } else { b };
            let row = pick(get(m, i), get(m, 0));
            tensor_set(t, [i], length(row))
        }));
        t.to_vec()
    });
    assert_eq!(r, vec![2, 2, 3]);
}

#[test]
fn open_and_number_types_together() {
    // `x`'s elements are computed with (a number type); `m`'s only counted (an open type).
    let m: Vec<Vec<i64>> = vec![vec![7], vec![8, 9]];
    let r = on_cuda(1, || {
        let x = Tensor::<f64>::from_vec(vec![1.5, 2.5], &[2]);
        accelerate!(par_loop(length(m), |i| tensor_set(
            x,
            [i],
            tensor_get(x, [i]) * 2.0 + int2float(length(get(m, i)))
        )));
        x.to_vec()
    });
    assert_eq!(r, vec![4.0, 7.0]);
}
