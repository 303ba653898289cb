//! The ODE example's accelerated expression (`pmexpr_suite::ode::integrate`) on small N: every
//! target agrees with the sequential one exactly, and with the plain-Rust RK4 within rounding.

use pmexpr::{Target, Tensor, with_target};
use pmexpr_suite::ode::{integrate, integrate_reference, parameters};

#[test]
fn ode_agrees_with_seq_and_with_plain_rust() {
    let (n, steps, dt) = (64, 200, 0.01);
    let (gamma, amp) = parameters(n);
    let run = |t: Target| {
        let out = Tensor::<f64>::zeros(&[n, 2]);
        with_target(t, || integrate(&gamma, &amp, &out, steps, dt));
        out.to_vec()
    };
    let seq = run(Target::Seq);
    assert_eq!(run(Target::Cpu), seq);
    assert_eq!(run(Target::Debug), seq);
    let reference = integrate_reference(&gamma.to_vec(), &amp.to_vec(), steps, dt);
    for (i, (th, w)) in reference.iter().enumerate() {
        assert!(
            (th - seq[2 * i]).abs() < 1e-12,
            "θ of instance {i}: {th} vs {}",
            seq[2 * i]
        );
        assert!((w - seq[2 * i + 1]).abs() < 1e-12, "ω of instance {i}");
    }
    // The pendulums moved, and differently (the parameters matter).
    assert!(seq.iter().step_by(2).any(|th| (th - 0.2).abs() > 0.1));
    assert_ne!(seq[0], seq[2]);
}
