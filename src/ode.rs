//! The ODE benchmark: `N` independent damped, driven pendulums, each with its own damping and
//! drive amplitude, integrated by classic fourth-order Runge–Kutta for a fixed number of steps.
//!
//! Each pendulum obeys `θ'' = A·cos(Ω·t) − γ·θ' − sin θ`, written as the first-order system
//! `θ' = ω`, `ω' = A·cos(Ω·t) − γ·ω − sin θ`. One `accelerate!(par_loop …)` integrates every
//! instance (a CUDA-class site: the paper's imperative keyword over tensors) and writes the final
//! `(θ, ω)` of instance `i` into row `i` of a tensor. [`integrate_reference`] is the same
//! computation written as plain sequential Rust, which the tests compare against.

use pmexpr::{Tensor, accelerate};

/// The angular frequency of the drive, `Ω`.
pub const DRIVE: f64 = 2.0 / 3.0;
/// The initial angle of every pendulum, `θ(0)`.
pub const THETA0: f64 = 0.2;
/// The initial angular velocity of every pendulum, `ω(0)`.
pub const OMEGA0: f64 = 0.0;

/// The parameters of `n` instances, deterministic and spread over the interesting range:
/// damping `γ ∈ [0.1, 0.6)` and drive amplitude `A ∈ [0.9, 1.6)` (periodic to chaotic motion).
pub fn parameters(n: usize) -> (Tensor<f64>, Tensor<f64>) {
    let mut rng = crate::Rng::new(0x0de);
    let gamma: Vec<f64> = (0..n).map(|_| 0.1 + 0.5 * rng.float()).collect();
    let amp: Vec<f64> = (0..n).map(|_| 0.9 + 0.7 * rng.float()).collect();
    (Tensor::from_vec(gamma, &[n]), Tensor::from_vec(amp, &[n]))
}

/// Integrates every instance for `steps` steps of length `dt` from `(THETA0, OMEGA0)` and writes
/// the final state of instance `i` into `out[i, 0]` (θ) and `out[i, 1]` (ω); `out` has shape
/// `[n, 2]` and `gamma`, `amp` shape `[n]`.
pub fn integrate(gamma: &Tensor<f64>, amp: &Tensor<f64>, out: &Tensor<f64>, steps: i64, dt: f64) {
    let n = gamma.len() as i64;
    let (drive, theta0, omega0) = (DRIVE, THETA0, OMEGA0);
    accelerate!({
        // The right-hand side: (θ', ω') at time t.
        fn deriv(g: f64, a: f64, drive: f64, t: f64, th: f64, w: f64) -> (f64, f64) {
            (w, a * cos(drive * t) - g * w - sin(th))
        }
        // One classic RK4 step from state s at step k.
        fn rk4(g: f64, a: f64, drive: f64, dt: f64, s: (f64, f64), k: i64) -> (f64, f64) {
            let t = int2float(k) * dt;
            let h = dt / 2.0;
            let k1 = deriv(g, a, drive, t, s.0, s.1);
            let k2 = deriv(g, a, drive, t + h, s.0 + h * k1.0, s.1 + h * k1.1);
            let k3 = deriv(g, a, drive, t + h, s.0 + h * k2.0, s.1 + h * k2.1);
            let k4 = deriv(g, a, drive, t + dt, s.0 + dt * k3.0, s.1 + dt * k3.1);
            (
                s.0 + dt / 6.0 * (k1.0 + 2.0 * k2.0 + 2.0 * k3.0 + k4.0),
                s.1 + dt / 6.0 * (k1.1 + 2.0 * k2.1 + 2.0 * k3.1 + k4.1),
            )
        }
        fn instance(
            gamma: Tensor<f64>,
            amp: Tensor<f64>,
            out: Tensor<f64>,
            drive: f64,
            dt: f64,
            steps: i64,
            s0: (f64, f64),
            i: i64,
        ) -> () {
            let g = tensor_get(gamma, [i]);
            let a = tensor_get(amp, [i]);
            let s = seq_loop_acc(s0, steps, |s, k| rk4(g, a, drive, dt, s, k));
            tensor_set(out, [i, 0], s.0);
            tensor_set(out, [i, 1], s.1)
        }
        par_loop(n, |i| {
            instance(gamma, amp, out, drive, dt, steps, (theta0, omega0), i)
        })
    })
}

/// [`integrate`] as plain sequential Rust: the reference the tests and the example compare with.
pub fn integrate_reference(gamma: &[f64], amp: &[f64], steps: i64, dt: f64) -> Vec<(f64, f64)> {
    let deriv =
        |g: f64, a: f64, t: f64, th: f64, w: f64| (w, a * (DRIVE * t).cos() - g * w - th.sin());
    gamma
        .iter()
        .zip(amp)
        .map(|(&g, &a)| {
            let mut s = (THETA0, OMEGA0);
            for k in 0..steps {
                let t = k as f64 * dt;
                let h = dt / 2.0;
                let k1 = deriv(g, a, t, s.0, s.1);
                let k2 = deriv(g, a, t + h, s.0 + h * k1.0, s.1 + h * k1.1);
                let k3 = deriv(g, a, t + h, s.0 + h * k2.0, s.1 + h * k2.1);
                let k4 = deriv(g, a, t + dt, s.0 + dt * k3.0, s.1 + dt * k3.1);
                s = (
                    s.0 + dt / 6.0 * (k1.0 + 2.0 * k2.0 + 2.0 * k3.0 + k4.0),
                    s.1 + dt / 6.0 * (k1.1 + 2.0 * k2.1 + 2.0 * k3.1 + k4.1),
                );
            }
            s
        })
        .collect()
}
