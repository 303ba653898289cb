//! A fixed-seed fuzz test of pmexpr-core's entry points: what `accelerate!`, `#[pmexpr]` and
//! `#[derive(pmexpr::Record)]` call, and the build hook's code generation (every site compiled,
//! its CUDA modules generated for each instantiation, the crate's Futhark program and dumps). Each
//! input runs on rustc's 8 MiB stack under a time limit; a panic, an overflow (which aborts the
//! test) or a timeout fails the test and prints the input.
//!
//! The corpus: mutations of valid programs (tokens deleted, duplicated, swapped, replaced by
//! extreme literals, raw identifiers, huge tuple indices; subtrees wrapped in deep nesting) and
//! programs generated from the PMExpr grammar. CI runs 10,000 inputs from the fixed seed; run it
//! longer, in the opt-level 0 build with overflow checks that proc macros get, with
//! `PMEXPR_FUZZ_COUNT=1000000 PMEXPR_FUZZ_SEED=7 cargo test --profile robust -p pmexpr-core
//! --test fuzz -- --nocapture` (each test runs the count; the seed picks the inputs).

mod common;

use std::time::{Duration, Instant};

use common::{accelerate, derive, hook, pmexpr_fn, run_limited};

/// The time one input may take (generous: a debug build on a busy 2-core machine).
const LIMIT: Duration = Duration::from_secs(20);

/// SplitMix64: small, fixed, and the same on every platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Valid (or nearly valid) sites covering the language: the mutations start from these.
const SEEDS: &[&str] = &[
    "reduce(addi, 0, s)",
    "map(|x| x * 2 + 1, s)",
    "{ let s: Vec<i64> = s; map2(|a, b| a + b, s, s) }",
    "flatten(map(|x| [x, x], s))",
    "par_loop(n, |i| tensor_set(t, [i], i * 2))",
    "{ let t: Vec<(i64, f64)> = t; map(|p| p.0, t) }",
    "{ fn fact(n: i64) -> i64 { if n <= 1 { 1 } else { n * fact(n - 1) } } map(|x| fact(x), s) }",
    "{ fn even(n: i64) -> bool { if n == 0 { true } else { odd(n - 1) } } fn odd(n: i64) -> bool { if n == 0 { false } else { even(n - 1) } } map(|x| even(x), s) }",
    "map(|x| match x { (a, b) => a + b }, zip(s, s))",
    "reduce(|a, b| a + b, 0.0, map(|x| int2float(x) * 1.5, s))",
    "{ let f = |x| x; map(|y| f(y), [f(1), 2, 3]) }",
    "create(length(s), |i| get(s, i))",
    "seq_loop_acc(10, 0, |i, acc| acc + i)",
    "backend = cpu, { let a = 1; let b = a + 2; (a, b, [a, b]) }",
    "backend = cuda, par_loop(length(s), |i| tensor_set(t, [i], get(s, i)))",
    "backend = futhark, map(|x| -x, s)",
    "map(|x| if x > 0 && x < 10 || !(x == 5) { x } else { 0 - x }, s)",
    "{ let (a, b) = (1, 2.5); map(|x| (x + a, b), s) }",
    "map(|r| r.x + r.y, ps)",
    "reduce(maxi, 0, map(|x| x % 7, reverse(s)))",
    "map(|x| sqrt(exp(log(x))), [1.0, 2.0])",
    "{ let v = vec![1, 2, 3]; reduce(addi, 0, concat(v, [4])) }",
    "map(|x| never!(), s)",
    "map(|x: i64| -> i64 { x }, s)",
    "[[1, 2], [3, 4]]",
    "head(tail(s))",
];

/// Tokens the mutations insert: literals at the edges, raw identifiers, keywords and delimiters.
const TOKENS: &[&str] = &[
    "1e400",
    "-1e400",
    "1e308",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "0.0",
    "1u8",
    "1.5f32",
    "true",
    "()",
    "r#x",
    "r#match",
    "r#type",
    "x.4294967295",
    "x.10000000",
    "x.0",
    ".0",
    ".1",
    "x",
    "s",
    "t",
    "n",
    "_",
    "|",
    "||",
    "|x|",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ";",
    "=",
    "==",
    "+",
    "-",
    "*",
    "/",
    "%",
    "!",
    "&&",
    "&",
    "..",
    "as",
    "let",
    "fn",
    "if",
    "else",
    "match",
    "=>",
    "map",
    "reduce",
    "par_loop",
    "tensor_set",
    "create",
    "get",
    "flatten",
    "length",
    "accelerate!",
    "never!()",
    "vec!",
    "i64",
    "f64",
    "Vec<i64>",
    "Tensor<f64>",
    "'a",
    "#",
    "?",
    "::",
    "->",
    "\"str\"",
    "'c'",
    "backend",
    "backend = cpu ,",
    "loop",
    "for",
    "while",
    "return",
    "self",
    "Self",
    "crate",
];

fn tokens_of(src: &str) -> Vec<String> {
    match src.parse::<proc_macro2::TokenStream>() {
        Ok(ts) => flat(ts),
        Err(_) => src.split_whitespace().map(str::to_string).collect(),
    }
}

/// Tokens as text, groups opened and closed, so that a mutation can unbalance them.
fn flat(ts: proc_macro2::TokenStream) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo: Vec<Result<proc_macro2::TokenTree, &str>> =
        ts.into_iter().map(Ok).collect::<Vec<_>>();
    todo.reverse();
    while let Some(t) = todo.pop() {
        match t {
            Err(close) => out.push(close.to_string()),
            Ok(proc_macro2::TokenTree::Group(g)) => {
                let (open, close) = match g.delimiter() {
                    proc_macro2::Delimiter::Parenthesis => ("(", ")"),
                    proc_macro2::Delimiter::Bracket => ("[", "]"),
                    proc_macro2::Delimiter::Brace => ("{", "}"),
                    proc_macro2::Delimiter::None => ("", ""),
                };
                out.push(open.to_string());
                todo.push(Err(close));
                let inner: Vec<_> = g.stream().into_iter().collect();
                todo.extend(inner.into_iter().rev().map(Ok));
            }
            Ok(t) => out.push(t.to_string()),
        }
    }
    out
}

fn mutate(rng: &mut Rng, src: &str) -> String {
    let mut toks = tokens_of(src);
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        let n = toks.len().max(1);
        let i = rng.below(n).min(toks.len());
        match rng.below(9) {
            0 if !toks.is_empty() => {
                toks.remove(i.min(toks.len() - 1));
            }
            1 if !toks.is_empty() => {
                let t = toks[i.min(toks.len() - 1)].clone();
                toks.insert(i, t);
            }
            2 if toks.len() > 1 => {
                let (j, k) = (rng.below(toks.len()), i.min(toks.len() - 1));
                toks.swap(k, j);
            }
            3 if !toks.is_empty() => {
                let k = i.min(toks.len() - 1);
                toks[k] = rng.pick(TOKENS).to_string();
            }
            4 => toks.insert(i, rng.pick(TOKENS).to_string()),
            5 => {
                // Deep nesting around the whole input (past the limit, sometimes).
                let depth = [10, 100, 300, 1000][rng.below(4)];
                let (open, close) = *rng.pick(&[
                    ("(", ")"),
                    ("[", "]"),
                    ("{", "}"),
                    ("map(|x| x, ", ")"),
                    ("|y| ", ""),
                    ("- ", ""),
                    ("if b { 1 } else { ", "}"),
                ]);
                let mut s = open.repeat(depth);
                s.push_str(&toks.join(" "));
                s.push_str(&close.repeat(depth));
                toks = vec![s];
            }
            6 => {
                // A long flat run: a sequence literal, a `let` chain, `+` chain.
                let n = [10, 200, 2000][rng.below(3)];
                let run = match rng.below(3) {
                    0 => format!("[{}]", vec!["1"; n].join(", ")),
                    1 => {
                        let lets: String = (0..n).map(|k| format!("let v{k} = {k}; ")).collect();
                        format!("{{ {lets} {} }}", toks.join(" "))
                    }
                    _ => vec!["x"; n].join(" + "),
                };
                let at = i.min(toks.len());
                toks.insert(at, run);
            }
            7 => {
                // Identity applied to identities: types that double.
                let k = 1 + rng.below(30);
                toks.insert(i, format!("(|y| y)({})", vec!["|y| y"; k].join(", ")));
            }
            _ => {
                let other = rng.pick(SEEDS);
                let cut = rng.below(toks.len() + 1);
                toks.truncate(cut);
                toks.extend(tokens_of(other).into_iter().skip(rng.below(8)));
            }
        }
    }
    toks.join(" ")
}

/// A random expression from the PMExpr grammar, `depth` levels at most.
fn generate(rng: &mut Rng, depth: usize) -> String {
    if depth == 0 || rng.below(4) == 0 {
        return rng
            .pick(&[
                "1", "2.5", "true", "x", "s", "t", "n", "()", "y", "0", "-3", "1e400", "r#x",
            ])
            .to_string();
    }
    let g = |r: &mut Rng| generate(r, depth - 1);
    match rng.below(16) {
        0 => format!(
            "{} {} {}",
            g(rng),
            rng.pick(&["+", "-", "*", "/", "%", "==", "<", "&&", "||"]),
            g(rng)
        ),
        1 => format!("map(|y| {}, {})", g(rng), g(rng)),
        2 => format!(
            "reduce({}, {}, {})",
            rng.pick(&["addi", "addf", "maxi", "|a, b| a + b"]),
            g(rng),
            g(rng)
        ),
        3 => format!("[{}, {}]", g(rng), g(rng)),
        4 => format!("({}, {})", g(rng), g(rng)),
        5 => format!("{}.{}", g(rng), rng.below(3)),
        6 => format!("{{ let y = {}; {} }}", g(rng), g(rng)),
        7 => format!("if {} {{ {} }} else {{ {} }}", g(rng), g(rng), g(rng)),
        8 => format!("(|y| {})({})", g(rng), g(rng)),
        9 => format!("par_loop({}, |i| tensor_set(t, [i], {}))", g(rng), g(rng)),
        10 => format!("{{ fn f(y: i64) -> i64 {{ {} }} f({}) }}", g(rng), g(rng)),
        11 => format!(
            "match {} {{ (a, b) => {}, _ => {} }}",
            g(rng),
            g(rng),
            g(rng)
        ),
        12 => format!(
            "{}({})",
            rng.pick(&[
                "length",
                "flatten",
                "reverse",
                "head",
                "sqrt",
                "int2float",
                "lenght",
                "frobnicate"
            ]),
            g(rng)
        ),
        13 => format!("map2(|a, b| {}, {}, {})", g(rng), g(rng), g(rng)),
        14 => format!("create({}, |i| {})", g(rng), g(rng)),
        _ => format!("-{}", g(rng)),
    }
}

/// Runs one input through the entry point `kind` picks; fails the test on a panic or a timeout.
fn check(kind: usize, input: String) {
    let shown = input.chars().take(400).collect::<String>();
    let start = Instant::now();
    let result = run_limited(LIMIT, move || match kind {
        0 | 1 => {
            let _ = accelerate(&input);
        }
        2 => {
            let _ = hook(&input, Some("fn g(x: i64) -> i64 { x + 1 }"));
        }
        3 => {
            let _ = pmexpr_fn(&format!("fn f(x: i64, s: Vec<i64>) -> i64 {{ {input} }}"));
        }
        _ => {
            let _ = derive(&format!("struct P {{ {input} }}"));
        }
    });
    match result {
        None => panic!("input still running after {LIMIT:?} (entry point {kind}): {shown}"),
        Some(Err(panic)) => panic!("input panicked (entry point {kind}): {panic}\ninput: {shown}"),
        Some(Ok(())) => {
            let t = start.elapsed();
            if t > Duration::from_secs(2) {
                eprintln!("slow input ({t:?}, entry point {kind}): {shown}");
            }
        }
    }
}

fn run(salt: u64, make: fn(&mut Rng) -> String) {
    let count = env_or("PMEXPR_FUZZ_COUNT", 5_000);
    let seed = env_or("PMEXPR_FUZZ_SEED", 16) ^ salt;
    let mut rng = Rng(seed);
    let start = Instant::now();
    for _ in 0..count {
        let input = make(&mut rng);
        let kind = rng.below(5);
        check(kind, input);
    }
    eprintln!("{count} inputs in {:?}", start.elapsed());
}

#[test]
fn mutated_inputs_never_panic_or_hang() {
    run(0x6d75_7461_7465, |rng| {
        let seed = rng.pick(SEEDS).to_string();
        mutate(rng, &seed)
    });
}

#[test]
fn generated_inputs_never_panic_or_hang() {
    run(0x6765_6e65_7261, |rng| {
        let depth = 1 + rng.below(6);
        generate(rng, depth)
    });
}
