//! The compile-time cost of pmexpr-core's entry points as the input grows: one family of inputs
//! per row (a long sequence literal, many `let`s, parameters, `match` arms, functions calling
//! each other, deep nesting, types that double …), each at k = 100, 1,000 and 10,000 (or at the
//! sizes where it matters), through the macro alone (`expand_accelerate` without the build hook)
//! and through the hook (every site compiled, CUDA modules for each instantiation, the crate's
//! Futhark program and dumps, then the macro with the hook's context). Each measurement runs in
//! a child process on rustc's 8 MiB stack, under a time limit; the table shows its time, its
//! peak memory (the child's), and whether the input expanded or was refused, as the family
//! expects.
//!
//! `cargo run --release -p pmexpr-core --example compile_cost` prints the table (the build
//! cargo gives proc macros is opt-level 0: `--profile robust` measures that);
//! `-- <family> <k> [macro|hook]` runs one input, e.g. to profile it; `-- --list` names the
//! families; `PMEXPR_COST_LIMIT=<seconds>` sets the limit (60 by default), `PMEXPR_COST_ONLY=<text>`
//! keeps the families whose name contains it.

#[path = "../tests/common/mod.rs"]
mod common;

use std::fmt::Write;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Outcome;
use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};

/// What a family's inputs should do.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Expand without error.
    Expands,
    /// Be refused with an error whose message contains this.
    Refused(&'static str),
    /// Expand while small, be refused with this error past a size.
    RefusedPast(usize, &'static str),
    /// Expand or be refused while small, be refused with this error past a size.
    AnyThenRefused(usize, &'static str),
}

/// An input: the site's tokens (as text, or as tokens for what text cannot spell) and the
/// crate's `#[pmexpr]` functions and derived structs.
struct Input {
    site: String,
    tokens: Option<TokenStream>,
    items: Vec<String>,
}

impl From<String> for Input {
    fn from(site: String) -> Input {
        Input {
            site,
            tokens: None,
            items: Vec::new(),
        }
    }
}

struct Family {
    name: &'static str,
    make: fn(usize) -> Input,
    sizes: &'static [usize],
    expect: Expect,
    /// Whether the hook path applies (a site written by a macro is not in the sources the hook
    /// reads).
    hook: bool,
}

const K: &[usize] = &[100, 1_000, 10_000];

fn list(k: usize, f: impl Fn(usize) -> String, sep: &str) -> String {
    (0..k).map(f).collect::<Vec<_>>().join(sep)
}

fn literal(k: usize) -> Input {
    format!("reduce(addi, 0, [{}])", vec!["1"; k].join(", ")).into()
}

fn lets(k: usize) -> Input {
    let mut s = String::from("{ let x0: i64 = s;");
    for i in 1..k {
        let _ = write!(s, " let x{i} = x{} + 1;", i - 1);
    }
    let _ = write!(s, " map(|y| y + x{}, [1, 2]) }}", k - 1);
    s.into()
}

fn fn_items(k: usize) -> Input {
    let mut s = String::from("{");
    for i in 0..k {
        let _ = write!(s, " fn f{i}(x: i64) -> i64 {{ x + {i} }}");
    }
    let _ = write!(s, " map(|y| f{}(y), [1, 2]) }}", k - 1);
    s.into()
}

fn fn_params(k: usize) -> Input {
    let params = list(k, |i| format!("x{i}: i64"), ", ");
    let args = list(k, |_| "y".into(), ", ");
    format!("{{ let s: Vec<i64> = s; fn f({params}) -> i64 {{ x0 }} map(|y| f({args}), s) }}")
        .into()
}

fn closure_params(k: usize) -> Input {
    let params = list(k, |i| format!("x{i}"), ", ");
    let args = list(k, |_| "y".into(), ", ");
    format!("{{ let s: Vec<i64> = s; let f = |{params}| x0 + 1; map(|y| f({args}), s) }}").into()
}

fn match_arms(k: usize) -> Input {
    let arms = list(k, |i| format!("{i} => {},", i + 1), " ");
    format!("{{ let s: Vec<i64> = s; map(|x| match x {{ {arms} _ => 0 }}, s) }}").into()
}

fn or_pattern(k: usize) -> Input {
    let alts = list(k, |i| i.to_string(), " | ");
    format!("{{ let s: Vec<i64> = s; map(|x| match x {{ {alts} => 1, _ => 0 }}, s) }}").into()
}

fn closure_chain(k: usize) -> Input {
    let mut s = String::from("{ let s: Vec<i64> = s; let f0 = |y| y + 1;");
    for i in 1..k {
        let _ = write!(s, " let f{i} = |y| f{}(y);", i - 1);
    }
    let _ = write!(s, " map(|x| f{}(x), s) }}", k - 1);
    s.into()
}

fn curried_chain(k: usize) -> Input {
    let mut s = String::from("{ let s: Vec<i64> = s; let c0 = |u| u;");
    for i in 1..k {
        let _ = write!(s, " let c{i} = |u| c{};", i - 1);
    }
    s.push_str(" map(|x| c0(x), s) }");
    s.into()
}

fn recursive_cycle(k: usize) -> Input {
    let mut s = String::from("{ let t: Tensor<i64> = t;");
    for i in 0..k {
        let _ = write!(
            s,
            " fn f{i}(x: i64) -> i64 {{ if x <= 0 {{ {i} }} else {{ f{}(x - 1) }} }}",
            (i + 1) % k
        );
    }
    s.push_str(" par_loop(n, |i| tensor_set(t, [i], f0(i))) }");
    s.into()
}

fn par_loops(k: usize) -> Input {
    let mut s = String::from("{ let t: Tensor<i64> = t;");
    for i in 0..k {
        let _ = write!(s, " par_loop(n, |i| tensor_set(t, [i], i + {i}));");
    }
    s.push_str(" 0 }");
    s.into()
}

fn map_lets(k: usize) -> Input {
    let mut s = String::from("{ let s0: Vec<i64> = s;");
    for i in 1..k {
        let _ = write!(s, " let s{i} = map(|x| x + {i}, s{});", i - 1);
    }
    let _ = write!(s, " s{} }}", k - 1);
    s.into()
}

fn statements(k: usize) -> Input {
    format!(
        "{{ let s: Vec<i64> = s; {} map(|x| x, s) }}",
        "s; ".repeat(k)
    )
    .into()
}

fn nest(k: usize, open: &str, middle: &str, close: &str) -> String {
    format!("{}{middle}{}", open.repeat(k), close.repeat(k))
}

fn parens(k: usize) -> Input {
    nest(k, "(", "x", ")").into()
}

fn brackets(k: usize) -> Input {
    nest(k, "[", "1", "]").into()
}

fn braces(k: usize) -> Input {
    nest(k, "{ ", "1", " }").into()
}

fn vec_types(k: usize) -> Input {
    format!("|v: {}| 0", nest(k, "Vec<", "i64", ">")).into()
}

fn tuple_types(k: usize) -> Input {
    format!("|v: {}| 0", nest(k, "(", "i64", ",)")).into()
}

fn references(k: usize) -> Input {
    format!("{}x", "&".repeat(k)).into()
}

fn fn_types(k: usize) -> Input {
    format!("|v: {}i64| 0", "fn() -> ".repeat(k)).into()
}

fn pattern_parens(k: usize) -> Input {
    format!(
        "map(|x| match x {{ {} => 1, _ => 0 }}, s)",
        nest(k, "(", "1", ")")
    )
    .into()
}

fn tuple_patterns(k: usize) -> Input {
    format!("|{}| 0", nest(k, "(", "a", ",)")).into()
}

/// `accelerate!(e)` where `e` went through k `macro_rules!` that forward an `$e:expr`: each
/// wraps it in an invisible group.
fn invisible_groups(k: usize) -> Input {
    let mut e: TokenStream = "addi(x, 1e400)".parse().unwrap();
    for _ in 0..k {
        e = TokenTree::Group(Group::new(Delimiter::None, e)).into();
    }
    let site = format!("(invisible ×{k}) addi(x, 1e400)");
    Input {
        site,
        tokens: Some(e),
        items: Vec::new(),
    }
}

fn identities(k: usize) -> Input {
    format!("map(|z| z, (|y| y)({}, [1]))", vec!["|y| y"; k].join(", ")).into()
}

fn doubled_pairs(k: usize) -> Input {
    let mut s = String::from("{ let p0 = 1;");
    for i in 1..=k {
        let _ = write!(s, " let p{i} = (p{}, p{});", i - 1, i - 1);
    }
    let _ = write!(s, " map(|x| (x, p{k}), [1]) }}");
    s.into()
}

fn doubling_calls(k: usize) -> Input {
    format!(
        "backend = cpu, {{ fn d(y: _) -> _ {{ (y, y) }} map(|x| {}x{}, [1]) }}",
        "d(".repeat(k),
        ")".repeat(k)
    )
    .into()
}

fn doubling_closures(k: usize) -> Input {
    let mut s = String::from("{ let g0 = |y| (y, y);");
    for i in 1..=k {
        let _ = write!(s, " let g{i} = |y| g{}(g{}(y));", i - 1, i - 1);
    }
    let _ = write!(s, " map(|x| g{k}(x), [1]) }}");
    s.into()
}

fn nested_records(k: usize) -> Input {
    let mut items = vec!["struct R0 { a: i64 }".to_string()];
    for i in 1..=k {
        let fields = list(8, |j| format!("f{j}: R{}", i - 1), ", ");
        items.push(format!("struct R{i} {{ {fields} }}"));
    }
    Input {
        site: format!("{{ let v: Vec<R{k}> = v; map(|r| r.f0, v) }}"),
        tokens: None,
        items,
    }
}

const TOO_DEEP: &str = "levels deep, more than `accelerate!` accepts";
const TOO_LARGE: &str = "is too large";
const TOO_DEEP_TYPE: &str = "nests more than 32 levels deep";
/// Either type limit: a function of k parameters nests k deep and has more than k parts, so past
/// 10,000 parts the size is what is reported.
const TYPE_LIMIT: &str = "the type of this expression";

fn families() -> Vec<Family> {
    let f = |name, make, sizes, expect| Family {
        name,
        make,
        sizes,
        expect,
        hook: true,
    };
    let nesting = |name, make| Family {
        name,
        make,
        sizes: K,
        expect: Expect::AnyThenRefused(256, TOO_DEEP),
        hook: true,
    };
    vec![
        f(
            "sequence literal",
            literal,
            &[1_000, 10_000, 100_000],
            Expect::Expands,
        ),
        f("let chain", lets, &[1_000, 10_000, 64_000], Expect::Expands),
        f("fn items", fn_items, K, Expect::Expands),
        f(
            "expression statements",
            statements,
            &[1_000, 10_000, 100_000],
            Expect::Expands,
        ),
        // A function's type is curried: past 32 parameters, it nests too deeply for rustc.
        f(
            "fn parameters",
            fn_params,
            K,
            Expect::RefusedPast(31, TYPE_LIMIT),
        ),
        f(
            "closure parameters",
            closure_params,
            K,
            Expect::RefusedPast(31, TYPE_LIMIT),
        ),
        f("match arms", match_arms, K, Expect::Expands),
        f("or-pattern alternatives", or_pattern, K, Expect::Expands),
        f(
            "closure chain f_i = |y| f_(i-1)(y)",
            closure_chain,
            K,
            Expect::Expands,
        ),
        f(
            "curried chain c_i = |u| c_(i-1)",
            curried_chain,
            K,
            Expect::RefusedPast(31, TOO_DEEP_TYPE),
        ),
        f(
            "recursive cycle of fns",
            recursive_cycle,
            K,
            Expect::Expands,
        ),
        f("par_loop statements", par_loops, K, Expect::Expands),
        f("lets of maps", map_lets, K, Expect::Expands),
        nesting("nested parentheses", parens),
        nesting("nested arrays", brackets),
        nesting("nested blocks", braces),
        nesting("nested Vec types", vec_types),
        nesting("nested tuple types", tuple_types),
        nesting("nested references", references),
        nesting("nested fn types", fn_types),
        nesting("nested pattern parentheses", pattern_parens),
        nesting("nested tuple patterns", tuple_patterns),
        Family {
            name: "invisible groups (error inside)",
            make: invisible_groups,
            sizes: &[100, 250, 300, 1_000],
            expect: Expect::Refused(""),
            hook: false,
        },
        f(
            "identities applied to identities",
            identities,
            &[4, 8, 16, 40],
            Expect::RefusedPast(11, TOO_LARGE),
        ),
        f(
            "doubled pairs p_i = (p_(i-1), p_(i-1))",
            doubled_pairs,
            &[5, 10, 20, 40],
            Expect::RefusedPast(12, TOO_LARGE),
        ),
        f(
            "doubling calls d(d(…)), d(y) = (y, y)",
            doubling_calls,
            &[5, 10, 26, 100],
            Expect::RefusedPast(12, TOO_LARGE),
        ),
        f(
            "doubling closures g_i = |y| g_(i-1)(g_(i-1)(y))",
            doubling_closures,
            &[2, 3, 5, 10],
            Expect::RefusedPast(3, TOO_LARGE),
        ),
        f(
            "nested records (8 fields of the previous)",
            nested_records,
            &[2, 4, 6, 10],
            Expect::RefusedPast(4, TOO_LARGE),
        ),
    ]
}

/// Runs one input in this process; prints the time, the outcome and the peak memory.
fn one(family: &str, k: usize, path: &str) {
    let families = families();
    let fam = families
        .iter()
        .find(|f| f.name == family || f.name.starts_with(family))
        .unwrap_or_else(|| panic!("no family `{family}` (see --list)"));
    let make = fam.make;
    let hook = path == "hook";
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .stack_size(common::RUSTC_STACK)
        .spawn(move || {
            // Made here: tokens are not `Send`.
            let input = make(k);
            let items: Vec<&str> = input.items.iter().map(String::as_str).collect();
            let start = Instant::now();
            let outcome = match (&input.tokens, hook) {
                (Some(tokens), _) => common::accelerate_tokens(tokens.clone()),
                (None, true) => common::hook_items(&input.site, &items),
                (None, false) if items.is_empty() => common::accelerate(&input.site),
                // Derived structs are only seen through the hook.
                (None, false) => common::hook_items(&input.site, &items),
            };
            let _ = tx.send((start.elapsed(), outcome));
        })
        .unwrap();
    let (t, outcome) = rx
        .recv()
        .expect("the input panicked or overflowed the stack");
    let shown = match outcome {
        Outcome::Expanded => "expanded".to_string(),
        Outcome::Refused(m) => format!("refused: {m}"),
        Outcome::NotTokens => "not tokens".to_string(),
    };
    println!("{:.3}\t{}\t{shown}", t.as_secs_f64() * 1e3, peak_kib());
}

/// The peak resident memory of this process, in KiB (0 where unknown).
fn peak_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

/// One measurement in a child process, killed after `limit`: (ms, KiB, outcome) or why not.
fn measure(
    family: &str,
    k: usize,
    path: &str,
    limit: Duration,
) -> Result<(f64, u64, String), String> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--one", family, &k.to_string(), path])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            let mut out = String::new();
            let _ = child.stdout.take().unwrap().read_to_string(&mut out);
            if !status.success() {
                let mut err = String::new();
                let _ = child.stderr.take().unwrap().read_to_string(&mut err);
                let why = err
                    .lines()
                    .find(|l| l.contains("overflow") || l.contains("panicked"));
                return Err(format!("crashed ({})", why.unwrap_or(&status.to_string())));
            }
            let mut parts = out.trim().splitn(3, '\t');
            let ms = parts
                .next()
                .and_then(|p| p.parse().ok())
                .unwrap_or(f64::NAN);
            let kib = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
            return Ok((ms, kib, parts.next().unwrap_or("").to_string()));
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("> {} s", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn verdict(expect: Expect, k: usize, outcome: &str) -> &'static str {
    let refused = |m: &str| outcome.starts_with("refused") && outcome.contains(m);
    let ok = match expect {
        Expect::Expands => outcome == "expanded",
        Expect::Refused(m) => refused(m),
        Expect::RefusedPast(n, m) if k > n => refused(m),
        Expect::RefusedPast(..) => outcome == "expanded",
        Expect::AnyThenRefused(n, m) if k > n => refused(m),
        Expect::AnyThenRefused(..) => !outcome.is_empty(),
    };
    if ok { "" } else { " (unexpected)" }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["--one", family, k, path] => return one(family, k.parse().expect("a size"), path),
        ["--list"] => {
            for f in families() {
                println!("{}", f.name);
            }
            return;
        }
        [family, k, rest @ ..] => {
            let path = rest.first().copied().unwrap_or("macro");
            return one(family, k.parse().expect("a size"), path);
        }
        _ => {}
    }
    let limit = Duration::from_secs(
        std::env::var("PMEXPR_COST_LIMIT")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(60),
    );
    let only = std::env::var("PMEXPR_COST_ONLY").ok();
    println!("| input | k | macro | hook | peak memory (macro / hook) | outcome |");
    println!("|---|---:|---:|---:|---:|---|");
    for fam in families() {
        if only.as_deref().is_some_and(|o| !fam.name.contains(o)) {
            continue;
        }
        for &k in fam.sizes {
            let mac = measure(fam.name, k, "macro", limit);
            let hook = if fam.hook {
                Some(measure(fam.name, k, "hook", limit))
            } else {
                None
            };
            let time = |r: &Result<(f64, u64, String), String>| match r {
                Ok((ms, ..)) => format!("{ms:.1} ms"),
                Err(e) => e.clone(),
            };
            let mem = |r: &Result<(f64, u64, String), String>| match r {
                Ok((_, kib, _)) => format!("{} MB", kib / 1024),
                Err(_) => "–".into(),
            };
            let outcome = match (&mac, &hook) {
                (Ok((_, _, o)), _) | (_, Some(Ok((_, _, o)))) => {
                    let short: String = o.chars().take(70).collect();
                    format!("{short}{}", verdict(fam.expect, k, o))
                }
                _ => "–".into(),
            };
            println!(
                "| {} | {k} | {} | {} | {} / {} | {outcome} |",
                fam.name,
                time(&mac),
                hook.as_ref().map_or("–".into(), time),
                mem(&mac),
                hook.as_ref().map_or("–".into(), mem),
            );
        }
    }
}
