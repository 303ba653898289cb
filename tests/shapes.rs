//! The program shapes of the CPU benchmarks (`pmexpr_suite::shapes`) at a small size: every
//! `accelerate!` site on `seq`, `cpu` and debug mode, and the hand-written rayon version, agree
//! with the hand-written sequential loop (integers exactly, floats within a relative 1e-9).

use pmexpr::Target;
use pmexpr::futhark::calls_on_this_thread;
use pmexpr_suite::shapes::{SHAPES, Size, Variant, check};

const TARGETS: [Target; 3] = [Target::Seq, Target::Cpu, Target::Debug];

fn shape(name: &str) {
    let entry = SHAPES.iter().find(|e| e.name == name).expect("a shape");
    if let Err(e) = check(entry, Size::Small, &TARGETS) {
        panic!("{e}");
    }
}

#[test]
fn argmin_foldl_create() {
    shape("argmin_foldl_create");
}

#[test]
fn stencil2d() {
    shape("stencil2d");
}

#[test]
fn stencil3d() {
    shape("stencil3d");
}

#[test]
fn mandelbrot_foldl_tuple() {
    shape("mandelbrot_foldl_tuple");
}

#[test]
fn float_math_tuples() {
    shape("float_math_tuples");
}

#[test]
fn matvec_dense() {
    shape("matvec_dense");
}

#[test]
fn matmul_par_loop() {
    shape("matmul_par_loop");
}

#[test]
fn reduce_map() {
    shape("reduce_map");
}

#[test]
fn map2_addf() {
    shape("map2_addf");
}

#[test]
fn smooth_create() {
    shape("smooth_create");
}

#[test]
fn dot_create() {
    shape("dot_create");
}

#[test]
fn smooth_par_loop() {
    shape("smooth_par_loop");
}

#[test]
fn axpy_par_loop() {
    shape("axpy_par_loop");
}

#[test]
fn poly_par_loop_f32() {
    shape("poly_par_loop_f32");
}

#[test]
fn poly_vec_par_loop_f32() {
    shape("poly_vec_par_loop_f32");
}

/// The Futhark-class shapes call their entry points on the `futhark` target when the build made
/// a library for the CPU, and agree with the hand-written loop there. Mandelbrot's closure leaves
/// its element unused: the compiler's warning about it once cost the site its entry points,
/// because another site of this package is rejected in the same build.
#[test]
fn futhark_class_shapes_call_the_library() {
    if !matches!(
        option_env!("PMEXPR_FUTHARK_LIBRARY"),
        Some("c" | "multicore")
    ) {
        println!(
            "skipped: the Futhark-class shapes on the futhark target (no Futhark library for the CPU was built)"
        );
        return;
    }
    for name in [
        "argmin_foldl_create",
        "mandelbrot_foldl_tuple",
        "float_math_tuples",
        "reduce_map",
        "map2_addf",
    ] {
        let entry = SHAPES.iter().find(|e| e.name == name).expect("a shape");
        let mut shape = (entry.make)(Size::Small);
        let before = calls_on_this_thread();
        shape.run(Variant::Accelerated(Target::Futhark));
        assert_eq!(
            calls_on_this_thread() - before,
            1,
            "{name} did not call its Futhark entry point"
        );
        if let Err(e) = check(entry, Size::Small, &[Target::Futhark]) {
            panic!("{e}");
        }
    }
}

#[test]
fn life_neighbours() {
    shape("life_neighbours");
}

#[test]
fn nbody_steps() {
    shape("nbody_steps");
}

#[test]
fn block_counting_sort() {
    shape("block_counting_sort");
}

#[test]
fn fannkuch() {
    shape("fannkuch");
}

#[test]
fn stencil_steps() {
    shape("stencil_steps");
}

#[test]
fn pathfinder() {
    shape("pathfinder");
}

/// Every shape has a test above, and the check can fail: a wrong result is caught.
#[test]
fn every_shape_is_tested_and_the_check_catches_a_difference() {
    assert_eq!(SHAPES.len(), 26);
    assert!(pmexpr_suite::shapes::rel_diff(&[1.0, 2.0], &[1.0, 2.1]) > 1e-9);
    assert!(pmexpr_suite::shapes::rel_diff(&[1.0], &[1.0, 2.0]).is_infinite());
    assert_eq!(
        pmexpr_suite::shapes::rel_diff(&[3.0, -4.0], &[3.0, -4.0]),
        0.0
    );
}

#[test]
fn scan_addi() {
    shape("scan_addi");
}

#[test]
fn scan_map_heavy() {
    shape("scan_map_heavy");
}

#[test]
fn filter() {
    shape("filter");
}

#[test]
fn radix_pass() {
    shape("radix_pass");
}
