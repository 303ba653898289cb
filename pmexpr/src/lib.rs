//! # pmexpr: expression acceleration for Rust
//!
//! Mark an expression with [`accelerate!`] and it runs in parallel. The macro checks the
//! expression at compile time (types are inferred, errors point at your tokens), captures the Rust
//! variables it uses by borrowing them, and runs it on the backend chosen at run time: all CPU
//! cores by default, sequential Rust, debug mode with runtime checks, an NVIDIA GPU through CUDA,
//! or a library that the Futhark compiler built. It follows the paper *Expression Acceleration:
//! Seamless Parallelization of Typed High-Level Languages* (Hummelgren et al.), whose language,
//! PMExpr, is written here with Rust tokens.
//!
//! ```
//! use pmexpr::{Tensor, accelerate};
//!
//! let s: Vec<i64> = (1..=100).collect();
//! let c: i64 = 3;
//! let sum: i64 = accelerate!({
//!     let f = |x| muli(c, addi(x, 1));
//!     reduce(addi, 0, map(f, s))
//! });
//! assert_eq!(sum, 3 * (5050 + 100));
//!
//! // Tensors are mutable; writes inside the expression are visible afterwards.
//! let t1 = Tensor::<f64>::from_vec(vec![1.0, 2.0, 3.0], &[3]);
//! let t2 = Tensor::<f64>::from_vec(vec![4.0, 5.0, 6.0], &[3]);
//! accelerate!(par_loop(3, |i| tensor_set(t1, [i], tensor_get(t1, [i]) + 2.0 * tensor_get(t2, [i]))));
//! assert_eq!(t1.to_vec(), vec![9.0, 12.0, 15.0]);
//! ```
//!
//! ## The language
//!
//! The language reference is the [`language`] module: one section per construct, each with its
//! rules and an example. At a glance:
//!
//! | PMExpr (paper) | inside `accelerate!` |
//! |---|---|
//! | `lam x. e`, `e1 e2 e3` | `\|x\| e`, `\|x: i64, y\| e`; `e1(e2, e3)`, partial application allowed |
//! | `let x = e1 in e2`, `recursive let` | `{ let x = e1; e2 }`, `let (a, b) = e;`; `fn` items inside a block |
//! | `match`, `never` | `match`, `if`/`else`, `if let`; `never!()` |
//! | records, `[e1, e2]` | tuples, `#[derive(Record)]` structs; `[e1, e2]`, `vec![…]`, `[e; n]`, `s[i]` |
//! | intrinsics | `addi subi muli divi modi negi addf subf mulf divf negf absi absf eqi neqi lti gti leqi geqi eqf neqf ltf gtf leqf geqf eqb neqb not int2float floorfi sqrt exp log pow sin cos create length get set foldl head tail null concat reverse subsequence tensor_get tensor_set tensor_linear_get tensor_linear_set tensor_rank tensor_shape tensor_sub tensor_slice tensor_gemm` |
//! | functional parallel keywords | `map(f, s)`, `map2(f, a, b)`, `reduce(f, ne, s)`, `flatten(s)`; beyond the paper Futhark's `scan(f, ne, s)`, `filter(p, s)`, `scatter(dest, is, vs)`, `hist(f, ne, k, is, vs)`; `create(n, f)` counts as one |
//! | imperative parallel keywords | `par_loop(n, f)` (the paper's `loop`), `seq_loop(n, f)`, `seq_loop_acc(acc, n, f)` |
//! | beyond the paper | every Rust number type; Rust's operators, `as` casts and numeric methods; `let mut`, assignment (of elements too: `a[i] = e`), `for`, `while`, `loop`, `break`, `continue`, `return` |
//!
//! Names inside `accelerate!` are matched by their text: procedural macros cannot see Rust's
//! `macro_rules!` hygiene on stable, so a `macro_rules!` macro that expands to `accelerate!` and
//! mixes its own names with its caller's can confuse two variables of the same name.
//!
//! ## Targets
//!
//! At compile time every site is classified as in the paper: Futhark-class (it uses `map`,
//! `map2`, `reduce`, `flatten`, `scan`, `filter`, `scatter`, `hist` or `create`), CUDA-class (it
//! uses `par_loop`), or named by `backend = futhark`, `backend = cuda` or `backend = cpu`
//! ([`language`](language#backends)). Every site runs on the CPU targets; the target is chosen at
//! run time:
//!
//! | target | what runs | chosen by |
//! |---|---|---|
//! | `auto` | CUDA-class sites on the GPU when one is usable, else (said once) on the CPU; Futhark-class sites on their Futhark library when the build made a `cuda` one and there is a GPU; other sites on all cores (the default) | unset, `PMEXPR_BACKEND=auto` |
//! | `cpu` | all cores, through rayon; a keyword nested inside a parallel level that already gives every core several tasks runs sequentially, as a hand-written program parallelizes the outer loop, and so does one whose measured work is under 20 µs, too little for threads to pay | `PMEXPR_BACKEND=cpu` |
//! | `seq` | sequential Rust: the reference semantics | `PMEXPR_BACKEND=seq` |
//! | debug mode | sequential, with runtime checks | `PMEXPR_DEBUG=1` (takes precedence) |
//! | `cuda` | CUDA-class sites on the GPU (an error at the site without one) | `PMEXPR_BACKEND=cuda` |
//! | `cuda-emulator` | CUDA-class sites' generated kernels on the CPU, for tests; only in a build with the `cuda-emulator` feature (off by default: put it in the `[dev-dependencies]`), else an error at the site saying so | `PMEXPR_BACKEND=cuda-emulator` |
//! | `futhark` | Futhark-class sites on the library the `futhark` compiler built for them at build time (a site without one runs on the CPU, said once; so does a call with an empty sequence of sequences, whose inner length Futhark cannot know) | `PMEXPR_BACKEND=futhark` |
//!
//! [`with_target`] overrides the environment for the `accelerate!` calls a closure makes on the
//! current thread (tests use it to run one expression on every target). The environment is read
//! once per process; a value that names no target stops the first `accelerate!` with an error that
//! lists the valid ones.
//!
//! ## `#[pmexpr]` functions and the build hook
//!
//! A function marked [`#[pmexpr]`](macro@pmexpr) is written in PMExpr and usable from every
//! `accelerate!` of the crate, in any module or file. A macro only sees its own tokens, so the
//! crate needs the build hook, which finds the `#[pmexpr]` functions, the derived structs and the
//! sites, and writes what the macros need into `OUT_DIR`:
//!
//! ```toml
//! [build-dependencies]
//! pmexpr-build = "0.1"
//! ```
//!
//! ```text
//! // build.rs
//! fn main() {
//!     pmexpr_build::Build::new().compile();
//! }
//! ```
//!
//! Without the hook, an `accelerate!` that names a `#[pmexpr]` function is a compile error saying
//! so, a captured derived struct cannot be read, and a CUDA-class site has no kernels: the hook
//! generates them (`OUT_DIR/pmexpr/cuda`, listed in its manifest, which `accelerate!` reads to
//! embed them), never the macro. Such a site runs on the CPU targets (`auto` says so once on
//! stderr), and the `cuda` and `cuda-emulator` targets fail at it saying that the build hook is
//! needed — as they do for a site the hook did not see, one that another macro writes.
//! `PMEXPR_DUMP=1 cargo build` makes the hook write, for every site, the program after lambda
//! lifting, what extraction keeps and the classification, into `OUT_DIR/pmexpr-dump/`, and print
//! where.
//!
//! ## Errors
//!
//! Compile-time errors are `compile_error!`s at the span of the offending tokens, with a `help:`
//! line where there is a fix to suggest. At run time, every failure is a panic whose message
//! names the `accelerate!` site (file:line:column) and the rule broken, with the reference
//! implementation's wording: `Out of bounds access in sequence`, `Division by zero`,
//! `Invalid indices used to access tensor`, … Debug mode adds the checks of the assumptions that
//! accelerated backends make (regular nested sequences, independent `par_loop` iterations, the
//! laws of `reduce`, `scan` and `hist`): see [`language`](language#runtime-failures-and-debug-mode).

#![warn(missing_docs)]

/// Accelerates an expression: checks it at compile time and runs it on the target selected at run
/// time (see the [`language`] reference for the language and its types, and the
/// [crate documentation](crate) for the targets).
///
/// ```
/// use pmexpr::accelerate;
///
/// let a = vec![1.0, 2.0, 3.0];
/// let b = vec![0.5, 0.5, 0.5];
/// let c: Vec<f64> = accelerate!(map2(addf, a, b));
/// assert_eq!(c, vec![1.5, 2.5, 3.5]);
///
/// // No parallel keyword: the backend is named (recursion is for the CUDA backend).
/// let n: i64 = 10;
/// let fib: i64 = accelerate!(backend = cuda, {
///     fn fib(k: i64) -> i64 {
///         if k < 2 { k } else { fib(k - 1) + fib(k - 2) }
///     }
///     fib(n)
/// });
/// assert_eq!(fib, 55);
/// ```
pub use pmexpr_macros::accelerate;

/// Marks a function whose body is PMExpr. Every `accelerate!` of the crate can use it (the build
/// hook shows it to them; see the [crate documentation](crate#pmexpr-functions-and-the-build-hook)),
/// and Rust code calls it as an ordinary function, which runs sequentially (with the runtime
/// checks in debug mode).
///
/// ```
/// use pmexpr::pmexpr;
///
/// #[pmexpr]
/// fn sum_of_squares(s: Vec<i64>) -> i64 {
///     reduce(addi, 0, map(|x| x * x, s))
/// }
///
/// assert_eq!(sum_of_squares(vec![1, 2, 3]), 14);
/// ```
pub use pmexpr_macros::pmexpr;

/// Makes a struct with named fields a PMExpr record: an `accelerate!` can build it with a struct
/// literal, return it, capture it (and sequences of it), and take it apart with a struct pattern.
/// Inside `accelerate!` the struct is the record of its fields. A site sees the definitions of the
/// crate's derived structs through the build hook, which capturing a struct, annotating `|p:
/// Particle|` and `..` in patterns need; a struct literal names every field, so it works without
/// (see [the language reference](language#tuples-and-records)).
///
/// ```
/// use pmexpr::{Record, accelerate};
///
/// #[derive(Record, Debug, PartialEq)]
/// struct Stats {
///     sum: f64,
///     max: f64,
/// }
///
/// let s = vec![1.5, 4.0, 2.5];
/// // The result's Rust type is named where it is bound: PMExpr records carry no struct name.
/// let stats: Stats = accelerate!(Stats {
///     sum: reduce(addf, 0.0, s),
///     max: reduce(|a, b| if a > b { a } else { b }, 0.0, s),
/// });
/// assert_eq!(stats, Stats { sum: 8.0, max: 4.0 });
/// ```
pub use pmexpr_macros::Record;
/// The CUDA target's runtime: the devices (the GPU, and with the `cuda-emulator` feature the
/// emulator that runs the generated kernels on the CPU for tests), marshaling and launches.
pub use pmexpr_runtime::cuda;
/// The Futhark target's runtime: marshaling to the C library that the `futhark` compiler built for
/// the crate's Futhark-class sites, and its context.
pub use pmexpr_runtime::futhark;
/// The GPU probe: whether this process can use an NVIDIA GPU, and which ([`gpu::probe`]). It loads
/// the driver itself and never panics.
pub use pmexpr_runtime::gpu;
pub use pmexpr_runtime::{
    Element, MAX_RANK, MAX_TUPLE, Number, Target, Tensor, TensorError, current_target, with_target,
};

pub mod language {
    #![doc = include_str!("../docs/language.md")]
}

#[doc(hidden)]
pub mod __private {
    pub use pmexpr_runtime::__private::*;
}
