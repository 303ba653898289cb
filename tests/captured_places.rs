//! Fields of Rust values used inside `accelerate!`: `self.data`, `cfg.n`, `pair.0`. Each is
//! captured on its own, like a variable, whatever its struct is — rustc knows the field's type, so
//! the struct needs no `#[derive(pmexpr::Record)]` and may hold fields PMExpr cannot (a `HashMap`,
//! a `String`). Every case runs on every target this machine has and is checked against plain Rust.

mod common;

use std::collections::HashMap;

use common::{cuda_targets, on_every_target, ran_on_futhark};
use pmexpr::cuda::launches_on_this_thread;
use pmexpr::{Target, Tensor, accelerate, with_target};

/// A struct PMExpr could not take whole: a `HashMap` and a `String` beside the numbers.
struct Model {
    name: String,
    index: HashMap<String, usize>,
    weights: Vec<f64>,
    cfg: Config,
}

struct Config {
    scale: f64,
    steps: (i64, i64),
}

impl Model {
    fn new() -> Self {
        Model {
            name: "m".to_string(),
            index: HashMap::from([("a".to_string(), 0)]),
            weights: vec![0.5, -1.0, 2.0, 4.0],
            cfg: Config {
                scale: 3.0,
                steps: (2, 5),
            },
        }
    }

    /// `self.weights` and `self.cfg.scale` inside a method.
    fn scaled_sum(&self) -> f64 {
        accelerate!(reduce(
            |a, b| a + b,
            0.0,
            map(|w| w * self.cfg.scale, self.weights)
        ))
    }

    /// A tuple field of a field, and a field indexed.
    fn steps(&self) -> Vec<i64> {
        accelerate!(map(
            |i| i * self.cfg.steps.0 + self.cfg.steps.1,
            create(length(self.weights), |i| i)
        ))
    }

    fn second(&self) -> Vec<f64> {
        accelerate!(map(|w| w + self.weights[1], self.weights))
    }
}

#[test]
fn fields_of_self_in_a_method() {
    let m = Model::new();
    let sum = on_every_target(|| m.scaled_sum());
    assert_eq!(sum, m.weights.iter().map(|w| w * 3.0).sum::<f64>());
    let steps = on_every_target(|| m.steps());
    assert_eq!(steps, vec![5, 7, 9, 11]);
    let second = on_every_target(|| m.second());
    assert_eq!(second, vec![-0.5, -2.0, 1.0, 3.0]);
    ran_on_futhark(1, || m.scaled_sum());
    ran_on_futhark(1, || m.second());
    // The fields PMExpr does not know stay untouched and usable.
    assert_eq!((m.name.as_str(), m.index["a"]), ("m", 0));
}

#[test]
fn fields_of_locals_and_tuples() {
    let cfg = Config {
        scale: 0.5,
        steps: (1, 10),
    };
    let pair: (Vec<i64>, i64) = (vec![1, 2, 3], 4);
    let r = on_every_target(|| accelerate!(map(|x| x * pair.1 + cfg.steps.1, pair.0)));
    assert_eq!(r, vec![14, 18, 22]);
    let r = on_every_target(|| {
        accelerate!(reduce(
            |a, b| a + b,
            0.0,
            map(|x| int2float(x) * cfg.scale, pair.0)
        ))
    });
    assert_eq!(r, 3.0);
    // A local of the expression with the same name is not a capture: `cfg` here is the tuple.
    let r = on_every_target(|| {
        accelerate!(map(
            |x| {
                let cfg = (x, 2);
                cfg.0 * cfg.1
            },
            pair.0
        ))
    });
    assert_eq!(r, vec![2, 4, 6]);
}

struct Grid {
    cells: Tensor<f64>,
    source: Tensor<f64>,
    rate: f64,
}

#[test]
fn tensor_fields_in_a_par_loop() {
    let g = Grid {
        cells: Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], &[4]),
        source: Tensor::from_vec(vec![10.0, 20.0, 30.0, 40.0], &[4]),
        rate: 0.5,
    };
    let run = |t: Target| {
        let c = Tensor::from_vec(g.cells.to_vec(), &[4]);
        let local = Grid {
            cells: c,
            source: Tensor::from_vec(g.source.to_vec(), &[4]),
            rate: g.rate,
        };
        let before = launches_on_this_thread();
        with_target(t, || {
            accelerate!(par_loop(4, |i| tensor_set(
                local.cells,
                [i],
                tensor_get(local.cells, [i]) + local.rate * tensor_get(local.source, [i])
            )))
        });
        (local.cells.to_vec(), launches_on_this_thread() - before)
    };
    let (want, _) = run(Target::Seq);
    assert_eq!(want, vec![6.0, 12.0, 18.0, 24.0]);
    for t in [Target::Cpu, Target::Debug] {
        assert_eq!(run(t).0, want, "on {t}");
    }
    for t in cuda_targets() {
        let (r, launches) = run(t);
        assert_eq!(r, want, "on {t}");
        assert_eq!(launches, 1, "kernels launched on {t}");
    }
}

/// What Rust programs hold their data in: `Arc`, `Rc`, `Box`, `Cow`, `&mut`, `&&`. Each is
/// captured through the pointer, on every target, and a `Tensor` behind an `Arc` is written in
/// place by a `par_loop`.
#[test]
fn values_behind_smart_pointers() {
    use std::borrow::Cow;
    use std::rc::Rc;
    use std::sync::Arc;

    // A cellular automaton's rule table, shared as an `Arc<Vec<_>>` between generations.
    let rules: Arc<Vec<i64>> = Arc::new(vec![0, 1, 1, 1, 0, 1, 1, 0]);
    let cells: Rc<Vec<i64>> = Rc::new(vec![0, 1, 0, 1, 1, 0, 0, 1]);
    let n = cells.len() as i64;
    let next = on_every_target(|| {
        accelerate!(map(
            |i| rules[cells[(i + n - 1) % n] * 4 + cells[i] * 2 + cells[(i + 1) % n]],
            create(n, |i| i)
        ))
    });
    let want: Vec<i64> = (0..cells.len())
        .map(|i| {
            let l = cells[(i + cells.len() - 1) % cells.len()];
            let r = cells[(i + 1) % cells.len()];
            rules[(l * 4 + cells[i] * 2 + r) as usize]
        })
        .collect();
    assert_eq!(next, want);

    let boxed: Box<f64> = Box::new(1.5);
    let owned: Cow<[f64]> = Cow::Owned(vec![1.0, 2.0, 3.0]);
    let backing = [4.0, 5.0];
    let borrowed: Cow<[f64]> = Cow::Borrowed(&backing);
    let mut scratch = vec![10.0, 20.0];
    let m: &mut Vec<f64> = &mut scratch;
    let rr: &&Vec<f64> = &&vec![0.5, 0.25];
    let r = on_every_target(|| {
        accelerate!((
            reduce(|a, b| a + b, 0.0, map(|x| x * boxed, owned)),
            map2(|a, b| a + b, borrowed, m),
            map(|x| x * 2.0, rr)
        ))
    });
    assert_eq!(r, (9.0, vec![14.0, 25.0], vec![1.0, 0.5]));
    // The `&mut` was only read and is still the caller's.
    m.push(30.0);
    assert_eq!(scratch, vec![10.0, 20.0, 30.0]);

    let rows: Vec<Arc<[i64]>> = vec![Arc::from(vec![1, 2]), Arc::from(vec![3, 4])];
    let sums = on_every_target(|| accelerate!(map(|r| reduce(|a, b| a + b, 0, r), rows)));
    assert_eq!(sums, vec![3, 7]);

    for t in [Target::Seq, Target::Cpu, Target::Debug]
        .into_iter()
        .chain(cuda_targets())
    {
        let grid = Arc::new(Tensor::from_vec(vec![1.0_f64, 2.0, 3.0], &[3]));
        let scale = Rc::new(2.0_f64);
        with_target(t, || {
            accelerate!(par_loop(3, |i| tensor_set(
                grid,
                [i],
                tensor_get(grid, [i]) * scale
            )))
        });
        assert_eq!(grid.to_vec(), vec![2.0, 4.0, 6.0], "on {t}");
    }
}
