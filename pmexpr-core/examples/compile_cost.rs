//! The compile-time cost of `accelerate!` as the input grows: a long sequence literal, a long
//! chain of `let`s, deep nesting (up to the nesting limit) and many `fn` items. Prints one table
//! row per size, with the time per element, which stays flat when the cost grows linearly.
//!
//! `cargo run --release -p pmexpr-core --example compile_cost` (`-- let 64000` for one case at
//! one size, e.g. to profile it).

use std::fmt::Write;
use std::time::{Duration, Instant};

use pmexpr_core::{Context, expand_accelerate};
use proc_macro2::TokenStream;
use quote::quote;

fn literal(n: usize) -> String {
    format!("reduce(addi, 0, [{}])", vec!["1"; n].join(", "))
}

fn lets(n: usize) -> String {
    let mut s = String::from("{ let x0: i64 = s;");
    for i in 1..n {
        let _ = write!(s, " let x{i} = x{} + 1;", i - 1);
    }
    let _ = write!(s, " map(|y| y + x{}, [1, 2]) }}", n - 1);
    s
}

fn nesting(n: usize) -> String {
    let mut s = String::from("let s: Vec<i64> = s; ");
    s.push_str(&"map(|x| x + 1, ".repeat(n));
    s.push('s');
    s.push_str(&")".repeat(n));
    format!("{{ {s} }}")
}

fn fns(n: usize) -> String {
    let mut s = String::from("{");
    for i in 0..n {
        let _ = write!(s, " fn f{i}(x: i64) -> i64 {{ x + {i} }}");
    }
    let _ = write!(s, " map(|y| f{}(y), [1, 2]) }}", n - 1);
    s
}

/// The time of one expansion, the best of `reps`.
fn time(src: &str, reps: usize) -> Duration {
    let rt = quote!(::pmexpr::__private);
    (0..reps)
        .map(|_| {
            let tokens: TokenStream = src.parse().unwrap();
            let start = Instant::now();
            let out = expand_accelerate(tokens, &rt, Context::default(), None);
            let elapsed = start.elapsed();
            let text = out.to_string();
            assert!(
                !text.contains("compile_error"),
                "{}",
                &text[..text.len().min(600)]
            );
            elapsed
        })
        .min()
        .unwrap()
}

fn identities(n: usize) -> String {
    format!("map(|z| z, (|y| y)({}, [1]))", vec!["|y| y"; n].join(", "))
}

type Case = (&'static str, fn(usize) -> String, &'static [usize]);

fn main() {
    let cases: [Case; 5] = [
        ("sequence literal", literal, &[1_000, 10_000, 100_000]),
        ("let chain", lets, &[1_000, 4_000, 16_000, 64_000]),
        ("nesting (maps)", nesting, &[16, 32, 64, 120]),
        ("fn items", fns, &[250, 1_000, 4_000]),
        // Exponential in n by nature (the type doubles per argument): refused past 11.
        ("identities", identities, &[2, 4, 8]),
    ];
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [name, n] = args.as_slice() {
        let n: usize = n.parse().expect("a size");
        let (_, make, _) = cases
            .iter()
            .find(|(c, _, _)| c.starts_with(name.as_str()))
            .expect("a case: sequence, let, nesting or fn");
        println!("{:?}", time(&make(n), 1));
        return;
    }
    println!("| input | n | time | time / n |");
    println!("|---|---:|---:|---:|");
    for (name, make, sizes) in cases {
        for &n in sizes {
            let t = time(&make(n), 3);
            println!(
                "| {name} | {n} | {:.1} ms | {:.2} µs |",
                t.as_secs_f64() * 1e3,
                t.as_secs_f64() * 1e6 / n as f64
            );
        }
    }
}
