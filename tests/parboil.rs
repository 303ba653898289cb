//! The Parboil ports (`pmexpr_suite::parboil`) at their smallest datasets: `seq`, `cpu` and debug
//! mode agree with one another and with the hand-written sequential Rust — integers exactly,
//! floats within a relative 1e-4 for `f32` and 1e-9 for `f64` (a parallel `reduce` adds in another
//! order than the sequential loop; the relative error is against the largest magnitude). The
//! sites are Futhark-class: on the `futhark` target too when the build made the library.

mod common;

use pmexpr::{Target, with_target};
use pmexpr_suite::parboil::{histo, max_rel_diff, mriq, sgemm, stencil, tpacf};

/// The CPU targets, and `futhark` when this build has its library.
fn targets() -> Vec<Target> {
    let mut t = vec![Target::Seq, Target::Cpu, Target::Debug];
    t.extend(common::futhark_target());
    t
}

fn flat<T: Copy>(m: &[Vec<T>]) -> Vec<T> {
    m.iter().flatten().copied().collect()
}

#[test]
fn sgemm_tiny() {
    let (n, m, p) = sgemm::dims("tiny").unwrap();
    let input = sgemm::input(n, m, p);
    let want = flat(&sgemm::sequential(&input));
    assert_eq!(flat(&sgemm::rayon(&input)), want);
    for t in targets() {
        let got = flat(&with_target(t, || sgemm::accelerated(&input)));
        let d = max_rel_diff(&got, &want);
        assert!(d <= 1e-4, "sgemm on {t}: relative difference {d}");
    }
}

#[test]
fn mriq_small() {
    // The smallest Parboil dataset has 3072 samples and 32768 points; a tenth of the points
    // keeps the unoptimized test build quick and exercises the same code.
    let (k, x) = mriq::dims("small").unwrap();
    let input = mriq::input(k, x / 10);
    let want = mriq::sequential(&input);
    assert_eq!(mriq::rayon(&input), want);
    for t in targets() {
        let (qr, qi) = with_target(t, || mriq::accelerated(&input));
        let (dr, di) = (max_rel_diff(&qr, &want.0), max_rel_diff(&qi, &want.1));
        assert!(dr <= 1e-4 && di <= 1e-4, "mri-q on {t}: {dr} {di}");
    }
}

#[test]
fn stencil_small() {
    let (nx, ny, nz, iters) = stencil::dims("small").unwrap();
    // Fewer iterations than the dataset's 100: each is the same map.
    let iters = iters / 10;
    let slice = stencil::input(ny, nz);
    let want = flat(&stencil::sequential(iters, nx, &slice));
    assert_eq!(flat(&stencil::rayon(iters, nx, &slice)), want);
    for t in targets() {
        let got = flat(&with_target(t, || {
            stencil::accelerated(iters as i64, nx as i64, &slice)
        }));
        // Same operations in the same order: equal.
        assert_eq!(got, want, "stencil on {t}");
    }
}

#[test]
fn histo_default() {
    let (w, h, hw, hh) = histo::dims("default").unwrap();
    let input = histo::input(w, h, hw, hh);
    let want = histo::sequential(&input);
    assert!(want.contains(&255), "some bins saturate");
    assert_eq!(histo::rayon(&input), want);
    for t in targets() {
        assert_eq!(
            with_target(t, || histo::accelerated(&input)),
            want,
            "histo on {t}"
        );
    }
}

#[test]
fn tpacf_small() {
    let (d, r) = tpacf::dims("small").unwrap();
    // A tenth of the random sets: each is the same histogram.
    let input = tpacf::input(d, r / 10);
    let want = tpacf::sequential(&input);
    assert_eq!(want.len(), 60);
    assert!(want.iter().filter(|&&c| c > 0).count() > 20, "{want:?}");
    assert_eq!(tpacf::rayon(&input), want);
    for t in targets() {
        assert_eq!(
            with_target(t, || tpacf::accelerated(&input)),
            want,
            "tpacf on {t}"
        );
    }
}
