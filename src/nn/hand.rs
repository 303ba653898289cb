//! The training of [`super::train`] hand-written in Rust, twice: with rayon loops (the same
//! floating-point operations in the same order as `train` on the sequential backend, whose
//! `tensor_gemm` is the triple loop: the same weights bit for bit)
//! and over the `matrixmultiply` GEMM on all cores (the products a Rust user would hand to a
//! BLAS-like crate; it sums in another order, so it agrees within rounding).

use rayon::prelude::*;

use super::Hyper;
use super::data::CLASSES;

/// The weights and biases of the three layers: `(w, b, inputs)` with `w` row-major
/// `[outputs, inputs]` and `b` `[outputs]`.
pub type Weights = [(Vec<f64>, Vec<f64>, usize); 3];

/// One layer's weights and the buffers of a batch.
struct Layer {
    w: Vec<f64>,
    b: Vec<f64>,
    ins: usize,
    outs: usize,
    /// `[batch, outs]`: outputs of the forward pass.
    a: Vec<f64>,
    /// `[batch, outs]`: the loss gradient with respect to the pre-activation.
    delta: Vec<f64>,
}

fn layers(weights: &Weights, batch: usize) -> Vec<Layer> {
    weights
        .iter()
        .map(|(w, b, ins)| Layer {
            w: w.clone(),
            b: b.clone(),
            ins: *ins,
            outs: b.len(),
            a: vec![0.0; batch * b.len()],
            delta: vec![0.0; batch * b.len()],
        })
        .collect()
}

fn weights_of(layers: &[Layer]) -> Weights {
    [0, 1, 2].map(|k| (layers[k].w.clone(), layers[k].b.clone(), layers[k].ins))
}

/// How a version computes the three kinds of products; the rest of the algorithm is shared.
trait Products {
    /// `l.a[s] = f(l.w · x[s] + l.b)` for the `n` rows of `x`.
    fn forward(l: &mut Layer, x: &[f64], n: usize, relu: bool);
    /// `l.delta[s] = (next.wᵀ · next.delta[s]) ⊙ (l.a[s] > 0)`.
    fn backward(next: &Layer, l: &mut Layer, n: usize);
    /// `l.w -= rate · Σ_s l.delta[s] ⊗ x[s]`, `l.b -= rate · Σ_s l.delta[s]`.
    fn update(l: &mut Layer, x: &[f64], n: usize, rate: f64);
}

/// Rayon loops over rows, sequential inner products: the accelerated expression's algorithm, as
/// the sequential backend runs it.
struct RayonLoops;

impl Products for RayonLoops {
    fn forward(l: &mut Layer, x: &[f64], n: usize, relu: bool) {
        let (w, b, ins, outs) = (&l.w, &l.b, l.ins, l.outs);
        l.a[..n * outs]
            .par_chunks_mut(outs)
            .zip(x.par_chunks(ins))
            .for_each(|(a, x)| {
                for (o, a) in a.iter_mut().enumerate() {
                    let row = &w[o * ins..(o + 1) * ins];
                    // The product, then the bias: `tensor_gemm`'s order.
                    let v = row.iter().zip(x).fold(0.0, |acc, (w, x)| acc + w * x) + b[o];
                    *a = if relu && v < 0.0 { 0.0 } else { v };
                }
            });
    }

    fn backward(next: &Layer, l: &mut Layer, n: usize) {
        let (w, ins, outs) = (&next.w, next.ins, next.outs);
        l.delta[..n * ins]
            .par_chunks_mut(ins)
            .zip(next.delta.par_chunks(outs))
            .zip(l.a.par_chunks(ins))
            .for_each(|((d, nd), a)| {
                for i in 0..ins {
                    let g = (0..outs).fold(0.0, |acc, o| acc + w[o * ins + i] * nd[o]);
                    d[i] = if a[i] > 0.0 { g } else { 0.0 };
                }
            });
    }

    fn update(l: &mut Layer, x: &[f64], n: usize, rate: f64) {
        let (ins, outs, delta) = (l.ins, l.outs, &l.delta);
        l.w.par_chunks_mut(ins).enumerate().for_each(|(o, w)| {
            for (i, w) in w.iter_mut().enumerate() {
                let g = (0..n).fold(0.0, |acc, s| acc + delta[s * outs + o] * x[s * ins + i]);
                *w -= rate * g;
            }
        });
        l.b.par_iter_mut().enumerate().for_each(|(o, b)| {
            let g = (0..n).fold(0.0, |acc, s| acc + delta[s * outs + o]);
            *b -= rate * g;
        });
    }
}

/// The products by `matrixmultiply::dgemm` (multithreaded), the element-wise parts by rayon.
struct Gemm;

impl Products for Gemm {
    fn forward(l: &mut Layer, x: &[f64], n: usize, relu: bool) {
        let (ins, outs) = (l.ins, l.outs);
        let a = &mut l.a[..n * outs];
        a.par_chunks_mut(outs)
            .for_each(|row| row.copy_from_slice(&l.b));
        // a[n × outs] += x[n × ins] · wᵀ[ins × outs]
        // SAFETY: the dimensions and strides describe memory inside the three slices.
        unsafe {
            matrixmultiply::dgemm(
                n,
                ins,
                outs,
                1.0,
                x.as_ptr(),
                ins as isize,
                1,
                l.w.as_ptr(),
                1,
                ins as isize,
                1.0,
                a.as_mut_ptr(),
                outs as isize,
                1,
            );
        }
        if relu {
            a.par_iter_mut().for_each(|v| *v = v.max(0.0));
        }
    }

    fn backward(next: &Layer, l: &mut Layer, n: usize) {
        let (ins, outs) = (next.ins, next.outs);
        let d = &mut l.delta[..n * ins];
        // d[n × ins] = next.delta[n × outs] · next.w[outs × ins]
        // SAFETY: as above.
        unsafe {
            matrixmultiply::dgemm(
                n,
                outs,
                ins,
                1.0,
                next.delta.as_ptr(),
                outs as isize,
                1,
                next.w.as_ptr(),
                ins as isize,
                1,
                0.0,
                d.as_mut_ptr(),
                ins as isize,
                1,
            );
        }
        d.par_iter_mut()
            .zip(l.a.par_iter())
            .for_each(|(d, &a)| *d = if a > 0.0 { *d } else { 0.0 });
    }

    fn update(l: &mut Layer, x: &[f64], n: usize, rate: f64) {
        let (ins, outs) = (l.ins, l.outs);
        // w[outs × ins] -= rate · deltaᵀ[outs × n] · x[n × ins]
        // SAFETY: as above.
        unsafe {
            matrixmultiply::dgemm(
                outs,
                n,
                ins,
                -rate,
                l.delta.as_ptr(),
                1,
                outs as isize,
                x.as_ptr(),
                ins as isize,
                1,
                1.0,
                l.w.as_mut_ptr(),
                ins as isize,
                1,
            );
        }
        let delta = &l.delta;
        l.b.iter_mut().enumerate().for_each(|(o, b)| {
            let g = (0..n).fold(0.0, |acc, s| acc + delta[s * outs + o]);
            *b -= rate * g;
        });
    }
}

/// `(softmax(a[s]) − onehot(y[s])) / n` into `l.delta`, as [`super::softmax_delta`].
fn softmax_delta(l: &mut Layer, y: &[i64], n: usize) {
    let outs = l.outs;
    l.delta[..n * outs]
        .par_chunks_mut(outs)
        .zip(l.a.par_chunks(outs))
        .zip(y.par_iter())
        .for_each(|((d, a), &label)| {
            let m = a.iter().fold(a[0], |m, &v| if v > m { v } else { m });
            let sum = a.iter().fold(0.0, |acc, &v| acc + (v - m).exp());
            for j in 0..outs {
                let p = (a[j] - m).exp() / sum;
                let target = if j as i64 == label { 1.0 } else { 0.0 };
                d[j] = (p - target) / n as f64;
            }
        });
}

fn forward<P: Products>(net: &mut [Layer], x: &[f64], n: usize) {
    let (l1, rest) = net.split_at_mut(1);
    let (l2, l3) = rest.split_at_mut(1);
    P::forward(&mut l1[0], x, n, true);
    P::forward(&mut l2[0], &l1[0].a, n, true);
    P::forward(&mut l3[0], &l2[0].a, n, false);
}

fn classify<P: Products>(net: &mut [Layer], x: &[f64], batch: usize) -> Vec<i64> {
    let ins = net[0].ins;
    let mut out = Vec::new();
    for xb in x.chunks(batch * ins) {
        let n = xb.len() / ins;
        forward::<P>(net, xb, n);
        let a = &net[2].a;
        let best: Vec<i64> = a[..n * CLASSES]
            .par_chunks(CLASSES)
            .map(|row| {
                (0..CLASSES).fold(0, |best, j| if row[j] > row[best] { j } else { best }) as i64
            })
            .collect();
        out.extend(best);
    }
    out
}

fn step<P: Products>(net: &mut [Layer], x: &[f64], y: &[i64], rate: f64) {
    let n = y.len();
    forward::<P>(net, x, n);
    let (l1, rest) = net.split_at_mut(1);
    let (l2, l3) = rest.split_at_mut(1);
    let (l1, l2, l3) = (&mut l1[0], &mut l2[0], &mut l3[0]);
    softmax_delta(l3, y, n);
    P::backward(l3, l2, n);
    P::update(l3, &l2.a, n, rate);
    P::backward(l2, l1, n);
    P::update(l2, &l1.a, n, rate);
    P::update(l1, x, n, rate);
}

fn run<P: Products>(
    weights: &Weights,
    batch: usize,
    train_x: &[f64],
    train_y: &[i64],
    valid_x: &[f64],
    hyper: Hyper,
) -> (Weights, Vec<Vec<i64>>) {
    let mut net = layers(weights, batch);
    let ins = net[0].ins;
    let mut predictions = vec![classify::<P>(&mut net, valid_x, batch)];
    for e in 0..hyper.epochs {
        let rate = hyper.rate / (1.0 + hyper.decay * e as f64);
        for (x, y) in train_x.chunks(batch * ins).zip(train_y.chunks(batch)) {
            step::<P>(&mut net, x, y, rate);
        }
        predictions.push(classify::<P>(&mut net, valid_x, batch));
    }
    (weights_of(&net), predictions)
}

/// [`super::train`] hand-written with rayon loops: trains a copy of `weights` on the batches of
/// `batch` samples of `train_x`/`train_y` and returns the trained weights and the predictions
/// for `valid_x` before the first epoch and after each epoch.
pub fn rayon_train(
    weights: &Weights,
    batch: usize,
    train_x: &[f64],
    train_y: &[i64],
    valid_x: &[f64],
    hyper: Hyper,
) -> (Weights, Vec<Vec<i64>>) {
    run::<RayonLoops>(weights, batch, train_x, train_y, valid_x, hyper)
}

/// [`rayon_train`] with its products done by `matrixmultiply::dgemm`.
pub fn matmul_train(
    weights: &Weights,
    batch: usize,
    train_x: &[f64],
    train_y: &[i64],
    valid_x: &[f64],
    hyper: Hyper,
) -> (Weights, Vec<Vec<i64>>) {
    run::<Gemm>(weights, batch, train_x, train_y, valid_x, hyper)
}
