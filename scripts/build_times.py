#!/usr/bin/env python3
"""Build time of a user's crate through rustc, as its sites, arms, statements and chains grow.

Each family is written twice, as a crate that uses `accelerate!` (with the build hook, as the
README's setup gives it) and as the same code in plain Rust, and each is built by `cargo build` in
the dev profile a user gets: no profile overrides, so the macros and the hook run unoptimized, as
cargo builds proc macros. The dependencies are built once, first; each measured build compiles only
the family's crate (its build script, the hook's run over its sites, the crate itself).

    python3 scripts/build_times.py                       # every family at k = 100, 1000, 10000
    python3 scripts/build_times.py --k 1000 --family sites --check 120

Prints a Markdown table: wall time and peak memory (of the largest process of the build: rustc,
the hook or the macro) for each variant, and their ratio. `--check S` fails (exit 1) when a pmexpr
build fails or takes longer than S seconds (CI's smoke step). The crates are written under
target/build-times/ (ignored by git) with their own target directory.
"""

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "target", "build-times")


def join(lines):
    return "\n".join(lines)


# Each family: name -> (pmexpr source, plain Rust source) at size k. Both variants compute the same
# thing and `main` prints it, so that neither build can drop the code.


def sites(k):
    acc = [f"fn f{i}(s: &Vec<i64>) -> i64 {{ accelerate!(reduce(|a, b| a + b, 0, map(|x| x * {i} + 1, s))) }}" for i in range(k)]
    plain = [f"fn f{i}(s: &Vec<i64>) -> i64 {{ s.iter().map(|x| x * {i} + 1).fold(0, |a, b| a + b) }}" for i in range(k)]
    calls = " + ".join(f"f{i}(&s)" for i in range(k))
    main = f"fn main() {{ let s: Vec<i64> = (0..100).collect(); println!(\"{{}}\", {calls}); }}"
    return (
        join(["use pmexpr::accelerate;"] + acc + [main]),
        join(plain + [main]),
    )


def match_arms(k):
    arms = " ".join(f"{i} => {(i * 7) % 13}," for i in range(k))
    body = f"match x {{ {arms} _ => 0 }}"
    return (
        join([
            "use pmexpr::accelerate;",
            "fn main() { let s: Vec<i64> = (0..20000).collect();",
            f"  let r: Vec<i64> = accelerate!(map(|x: i64| {body}, s));",
            "  println!(\"{}\", r.iter().sum::<i64>()); }",
        ]),
        join([
            "fn main() { let s: Vec<i64> = (0..20000).collect();",
            f"  let r: Vec<i64> = s.iter().map(|&x: &i64| {body}).collect();",
            "  println!(\"{}\", r.iter().sum::<i64>()); }",
        ]),
    )


def par_loop_statements(k):
    stmts = " ".join(f"tensor_set(t, [i], tensor_get(t, [i]) + {i % 7});" for i in range(k))
    plain = " ".join(f"t[i] += {i % 7};" for i in range(k))
    return (
        join([
            "use pmexpr::{accelerate, Tensor};",
            "fn main() { let n = 1000i64; let t = Tensor::<i64>::from_vec(vec![0; 1000], &[1000]);",
            f"  accelerate!(par_loop(n, |i| {{ {stmts} }}));",
            "  println!(\"{}\", t.to_vec().iter().sum::<i64>()); }",
        ]),
        join([
            "fn main() { let mut t = vec![0i64; 1000];",
            f"  for i in 0..1000 {{ {plain} }}",
            "  println!(\"{}\", t.iter().sum::<i64>()); }",
        ]),
    )


def loop_statements(k):
    stmts = " ".join(f"acc = acc * 3 + (j ^ {i % 11});" for i in range(k))
    loop = f"let mut acc = x; for j in 0..4i64 {{ {stmts} }} acc"
    return (
        join([
            "use pmexpr::accelerate;",
            "fn main() { let s: Vec<i64> = (0..100).collect();",
            f"  let r: Vec<i64> = accelerate!(map(|x: i64| {{ {loop} }}, s));",
            "  println!(\"{}\", r.iter().fold(0i64, |a, b| a.wrapping_add(*b))); }",
        ]),
        join([
            "fn main() { let s: Vec<i64> = (0..100).collect();",
            f"  let r: Vec<i64> = s.iter().map(|&x: &i64| {{ {loop} }}).collect();",
            "  println!(\"{}\", r.iter().fold(0i64, |a, b| a.wrapping_add(*b))); }",
        ]),
    )


def closure_chain(k):
    lets = " ".join(["let f0 = |y: i64| y + 1;"] + [f"let f{i} = |y: i64| f{i - 1}(y) + 1;" for i in range(1, k)])
    return (
        join([
            "use pmexpr::accelerate;",
            "fn main() { let s: Vec<i64> = (0..100).collect();",
            f"  let r: Vec<i64> = accelerate!({{ {lets} map(|x| f{k - 1}(x), s) }});",
            "  println!(\"{}\", r.iter().sum::<i64>()); }",
        ]),
        join([
            "fn main() { let s: Vec<i64> = (0..100).collect();",
            f"  let r: Vec<i64> = {{ {lets} s.iter().map(|&x| f{k - 1}(x)).collect() }};",
            "  println!(\"{}\", r.iter().sum::<i64>()); }",
        ]),
    )


FAMILIES = {
    "sites": (sites, "`fn`s, each with one `accelerate!` (map then reduce)"),
    "match arms": (match_arms, "one `map` whose closure is a `match` of k literal arms"),
    "par_loop statements": (par_loop_statements, "one `par_loop` body of k `tensor_set` statements"),
    "loop statements": (loop_statements, "one `for` loop body of k statements in a `map`"),
    "closure chain": (closure_chain, "k `let` closures, each calling the one before"),
}

MANIFEST = """[package]
name = "{name}"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
{deps}

[build-dependencies]
{build_deps}

[workspace]
"""


def write_crate(name, source, uses_pmexpr):
    path = os.path.join(WORK, name)
    os.makedirs(os.path.join(path, "src"), exist_ok=True)
    deps = f'pmexpr = {{ path = "{ROOT}/pmexpr" }}' if uses_pmexpr else ""
    build_deps = f'pmexpr-build = {{ path = "{ROOT}/build-support" }}' if uses_pmexpr else ""
    with open(os.path.join(path, "Cargo.toml"), "w") as f:
        f.write(MANIFEST.format(name=name, deps=deps, build_deps=build_deps))
    # The versions this repository was tested with.
    shutil.copy(os.path.join(ROOT, "Cargo.lock"), os.path.join(path, "Cargo.lock"))
    if uses_pmexpr:
        with open(os.path.join(path, "build.rs"), "w") as f:
            f.write("fn main() {\n    pmexpr_build::Build::new().compile();\n}\n")
    with open(os.path.join(path, "src", "main.rs"), "w") as f:
        f.write(source + "\n")
    return path


def build(path, limit):
    """(seconds, peak MiB of the largest process, error or None) of one `cargo build`."""
    env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(WORK, "target"), CARGO_INCREMENTAL="0")
    # A fresh Python for each build, so that the peak memory is this build's alone.
    probe = (
        "import resource, subprocess, sys, time; t = time.time();"
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True);"
        "print(time.time() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, r.returncode);"
        "sys.stderr.write(r.stderr[-4000:] if r.returncode else '')"
    )
    cmd = [sys.executable, "-c", probe, "cargo", "build", "--quiet", "--manifest-path", os.path.join(path, "Cargo.toml")]
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return (float("inf"), float("nan"), f"over {limit} s")
    secs, mib, code = r.stdout.split()
    if int(code) != 0:
        tail = [l for l in r.stderr.splitlines() if l.strip()][-6:]
        return (float(secs), float(mib), "failed: " + " | ".join(tail))
    return (float(secs), float(mib), None)


def fmt(secs, mib, err):
    if err and err.startswith("over"):
        return f"> {err[5:]}"
    if err:
        return "fails"
    return f"{secs:.1f} s, {mib:.0f} MiB"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--k", default="100,1000,10000", help="sizes, comma-separated")
    p.add_argument("--family", action="append", help="only these families (repeatable)")
    p.add_argument("--limit", type=float, default=1200, help="seconds before a build is stopped")
    p.add_argument("--check", type=float, help="fail when a pmexpr build fails or exceeds this")
    p.add_argument("--list", action="store_true", help="name the families")
    args = p.parse_args()
    if args.list:
        for name, (_, what) in FAMILIES.items():
            print(f"{name}: {what}")
        return 0
    families = args.family or list(FAMILIES)
    for f in families:
        if f not in FAMILIES:
            sys.exit(f"no family `{f}`; --list names them")
    ks = [int(k) for k in args.k.split(",")]
    os.makedirs(WORK, exist_ok=True)

    # The dependencies once, with a crate of each kind, so that no measured build compiles them.
    warm = write_crate("bt-warm-up", sites(1)[0], True)
    warm_plain = write_crate("bt-warm-up-plain", sites(1)[1], False)
    for w in (warm, warm_plain):
        secs, _, err = build(w, args.limit * 4)
        if err:
            sys.exit(f"the warm-up build failed: {err}")
    print(f"<!-- {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, PMEXPR_PTX={os.environ.get('PMEXPR_PTX', 'unset')} -->")
    print("| family | k | `accelerate!` | plain Rust | time ratio |")
    print("|---|---:|---:|---:|---:|")
    failed = []
    for f in families:
        gen, _ = FAMILIES[f]
        for k in ks:
            slug = f.replace(" ", "-").replace("_", "-")
            acc, plain = gen(k)
            a = build(write_crate(f"bt-{slug}-{k}", acc, True), args.limit)
            b = build(write_crate(f"bt-{slug}-{k}-plain", plain, False), args.limit)
            ratio = f"{a[0] / b[0]:.1f}" if not a[2] and not b[2] else ""
            print(f"| {f} | {k} | {fmt(*a)} | {fmt(*b)} | {ratio} |", flush=True)
            if a[2]:
                print(f"<!-- {f} at {k}: {a[2]} -->", flush=True)
            if args.check is not None and (a[2] or a[0] > args.check):
                failed.append(f"{f} at k = {k}: {a[2] or f'{a[0]:.1f} s > {args.check} s'}")
    for why in failed:
        print(f"build_times: {why}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
