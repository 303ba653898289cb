//! # pmexpr: expression acceleration for Rust
//!
//! Mark an expression with [`accelerate!`] and it runs in parallel. The macro checks the
//! expression at compile time (types are inferred, errors point at your tokens), captures the Rust
//! variables it uses by borrowing them, and runs it on the backend chosen at run time: all CPU
//! cores by default, sequential Rust, or debug mode with runtime checks. It follows the paper
//! *Expression Acceleration: Seamless Parallelization of Typed High-Level Languages*
//! (Hummelgren et al.), whose language, PMExpr, is written here with Rust tokens.
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
//! | PMExpr (paper) | inside `accelerate!` |
//! |---|---|
//! | `lam x. e` | `\|x\| e`, `\|x: i64, y\| e` (curried: partial application is allowed) |
//! | `let x = e1 in e2` | `{ let x = e1; e2 }`, `let (a, b) = e;` |
//! | `recursive let f = … in e` | `fn` items inside a block (mutual recursion allowed; on Futhark-class sites only tail recursion, which runs as a loop) |
//! | `match e with p then a else b`, `never` | `match`, `if`/`else`, `if let`; `never!()` |
//! | `e1 e2 e3` | `e1(e2, e3)`; `f(a)(b)` is `f(a, b)` |
//! | records | tuples `(a, b)`, `t.0` |
//! | `[e1, e2]` | `[e1, e2]`, `vec![e1, e2]`, `[e; n]`, `s[i]` (`get`) |
//! | intrinsics | `addi subi muli divi modi negi addf subf mulf divf negf absi absf eqi neqi lti gti leqi geqi eqf neqf ltf gtf leqf geqf eqb neqb not int2float floorfi sqrt exp log pow sin cos create length get set foldl head tail null concat reverse subsequence` and `tensor_get tensor_set tensor_linear_get tensor_linear_set tensor_rank tensor_shape tensor_sub tensor_slice tensor_gemm` |
//! | operators | `+ - * /` on every number (`i8 i16 i32 i64 isize u8 u16 u32 u64 usize f32 f64`; integers wrap, as in a Rust release build, and debug mode fails at the site where a debug build panics: "attempt to add with overflow"), `%` on every integer type, `== !=` on numbers and `bool`, `< <= > >=` on numbers, `&& \|\|` on `bool`, `& \| ^` on integers (bitwise) and `bool` (logical, both sides evaluated), `!` on `bool` and integers, `<< >>` on integers by an integer of any type (`>>` arithmetic on signed integers, logical on unsigned ones; the amount masked to the width as a Rust release build does, and a failure at the site in debug mode where a debug build panics: "attempt to shift left with overflow"), unary `-`; resolved by type (`+` on `i64` is `addi`) |
//! | Rust spellings | `&x` is `x` (values are immutable); `s.is_empty()`, `x.sqrt()`, `x.exp()`, `x.ln()`, `x.sin()`, `x.cos()`, `x.powf(y)` are `null sqrt exp log sin cos pow`; `s.len()` is Rust's length, a `usize`, while `length(s)` is PMExpr's `i64`; a reinterpreted method called on a value it does not apply to (`.len()` on a tuple or struct, `.count_ones()` on a float) is an error that says what the call was taken for; `x.abs()` (`absi`/`absf`, wrapping at an integer's `MIN`), `x.min(y)` and `x.max(y)` are Rust's on integers and floats, NaN included; `x as T` from any number or `bool` to any number `T` is Rust's cast on every target (truncation, sign or zero extension; a float to an integer truncated toward zero and saturated, NaN giving 0; an integer to a float rounded to the nearest; `true` is 1; CUDA and Futhark test the bounds first, as their own conversions are undefined out of range); a literal's suffix (`3u8`, `7usize`, `2.5f32`) gives it its type, and one out of the type's range (`256u8`) is a compile error at the literal, as is an unsuffixed literal that does not fit the type named around it (`x + 300` with `x: u8`); Rust's numeric methods on integers — `count_ones leading_zeros trailing_zeros` (a `u32`, as in Rust), `reverse_bits swap_bytes rotate_left rotate_right` (the amount an integer of any type, its low bits counted as `n as u32`), `wrapping_add wrapping_sub wrapping_mul wrapping_neg saturating_add saturating_sub saturating_mul signum clamp`, `pow` (the exponent an integer of any type, counted as `n as u32`; wrapping, as a release build), `isqrt`, `abs_diff` (Rust's unsigned integer of the receiver's width: a `u32` for an `i32`, whether the receiver's type is written or the captured values fix it), `div_ceil` (toward +∞; on signed integers Rust's unstable `int_roundings` definition), `rem_euclid div_euclid`, `is_power_of_two` (`x > 0 && x & (x - 1) == 0`), `next_power_of_two` (1 for `x <= 1`, 0 where the power is not representable, as a release build's overflow; on signed integers too, where Rust has none) — and on floats — `floor ceil round trunc fract abs signum cbrt exp2 log2 log10 tan asin acos atan atan2 sinh cosh tanh hypot is_nan is_finite to_radians to_degrees mul_add clamp powi` (`powi`'s exponent an integer of any type, counted as `n as i32`, computed as Rust computes it, bit for bit on every target) — with Rust's results (`round` half away from zero, `signum` of ±0.0 is ±1.0 and of NaN NaN, `mul_add` fused, `min`/`max` of a NaN the other operand); where Rust panics, a failure at the site on every target: `clamp` with a minimum above the maximum or a NaN bound and `isqrt` of a negative number in Rust's words, `div_ceil rem_euclid div_euclid` by zero, and of `MIN` by -1, as `/` and `%` (debug mode reports, in Rust's words, the overflow of `+ - *`, unary `-`, `pow`, `next_power_of_two` and `abs` at `MIN`, where a Rust debug build panics); the math library functions (`cbrt tan asin …`) on the CUDA targets are C's, which may differ from Rust's in the last place; a `match` arm's number pattern (`3 =>`, `1 \| 2 =>`, `0..=9 =>`, `..0 =>`) is the comparison it means, on every backend; a path constant (`f64::INFINITY`, `std::f64::consts::PI`, `i64::MAX`) is captured like a variable |
//! | functional parallel keywords | `map(f, s)`, `map2(f, a, b)`, `reduce(f, ne, s)`, `flatten(s)`; beyond the paper Futhark's `scan(f, ne, s)`, `filter(p, s)`, `scatter(dest, is, vs)`, `hist(f, ne, k, is, vs)`, and `create(n, f)` (Futhark's `tabulate`) counts as one |
//! | imperative parallel keywords | `par_loop(n, f)` (the paper's `loop`), `seq_loop(n, f)`, `seq_loop_acc(acc, n, f)` |
//! | counts and indices | of any integer type: `s[i]`, `get(s, i)`, `set(s, i, v)`, `subsequence(s, i, n)`, `tensor_get(t, [i, j])`, `tensor_set(t, [i, j], v)` index with any integer, as Rust's indexing takes a `usize`; `create(n, f)`, `par_loop(n, f)`, `seq_loop(n, f)`, `seq_loop_acc(acc, n, f)` count with any integer, and the loop variable has the count's type (`create(n, \|k\| k)` of an `n: i32` is a `Vec<i32>`), as in Rust's `for i in 0..n`; an index nothing fixes is an `i64`; out of range (a negative index included) fails at the site on every target |
//! | imperative Rust (lowered to the forms above) | `let mut x = e;`, `x = e;`, `x += e;` (`-= *= /= %= &= \|= ^= <<= >>=`), `p.0 = e;`, `b.x += e;`, `mut` parameters; `if`/`match` arms that assign; `for` over `a..b`, `a..=b`, `(a..b).rev()`, `(a..b).step_by(k)`, a sequence, `s.iter()`, `s.iter().enumerate()`; `while`; `loop`; `break`, `break value`, `continue`; `return` from a `fn` or closure |
//!
//! Integer arithmetic wraps; `divi`, `modi` and `/`, `%` on integers round toward zero, and
//! fail at the site on a zero divisor and on `MIN / -1`, `MIN % -1`, where Rust panics.
//! `reduce(f, ne, s)` assumes `f` is associative with neutral element `ne`; the iterations of
//! `par_loop` run in any order and must not depend on each other. `match` is not checked for
//! exhaustiveness: a value no arm matches stops the expression with an error. Unlike Rust's,
//! `fn` items inside `accelerate!` may use the variables of enclosing blocks and the `let`s above
//! them (not their mutable locals); a run of consecutive `fn` items is one recursive group.
//! Mutable locals and loops mean what they mean in Rust: before any check, each assignment
//! becomes a new binding of the variable and each loop a local function that calls itself as its
//! last step (a loop on every target), so every backend runs them (see the README, "Imperative
//! code").
//!
//! `hist(f, ne, k, is, vs)` is Futhark's histogram (`hist`, a generalized reduce-by-index): `k`
//! bins (an `i64`), each starting as `ne`; for every position `j` in order, `vs[j]` is combined
//! into bin `is[j]` with `f` — `bins[is[j]] = f(bins[is[j]], vs[j])` — and an index outside
//! `0..k` is skipped (so a computed index of `-1` means "no bin"). The indices are `i64` or
//! `i32`; `is` and `vs` must have the same length and `k` must not be negative (checked on every
//! target, the failure naming the site). Like `reduce`, it assumes `f` is associative with
//! neutral element `ne`, and the Futhark backend also assumes it is commutative. On `cpu` each
//! worker fills a private histogram of a contiguous part of the input, and these are merged bin
//! by bin in input order (when the bins outnumber the values eight to one, it runs
//! sequentially); `is` and `vs` written as `map(g, s)` or `create(n, g)` are not built, `g` is
//! applied where the value is read. `hist` is a Futhark-class keyword: a CUDA-class site cannot
//! use it (a well-formedness error).
//!
//! `scan(f, ne, s)` is Futhark's inclusive scan: element `i` of the result is `f` over the
//! elements `0..=i`, starting from `ne` (`scan(addi, 0, [1, 2, 3])` is `[1, 3, 6]`); like `reduce`
//! it assumes `f` is associative with neutral element `ne`. `filter(p, s)` is the elements of `s`
//! for which `p` holds, in order. `scatter(dest, is, vs)` is Futhark's: a new sequence equal to
//! `dest` with `vs[j]` at `is[j]` for every `j`, an index outside `dest` skipped; the indices are
//! `i64`, `is` and `vs` must have the same length (checked on every target, the failure naming
//! the site), and no two indices inside `dest` may be equal (which value lands there is
//! unspecified, as in Futhark: `seq` keeps the later one; debug mode reports them). On `cpu` a
//! `scan` runs in two parallel passes over chunks of its input, a `filter` is a parallel
//! compaction, and a `scatter` of numbers writes in parallel; the maps that produce or consume
//! them are fused (`reduce(addi, 0, filter(p, map(f, s)))` builds no sequence). `create(n, f)`
//! counts as a Futhark keyword (Futhark's `tabulate`), so `accelerate!(create(n, |i| i * i))` is
//! a Futhark-class site. All four are Futhark-class: a CUDA-class site cannot use them.
//!
//! `tensor_gemm(c, a, trans_a, b, trans_b, alpha, beta)` is the dense matrix product
//! `c := alpha · op(a) · op(b) + beta · c` over rank-2 float tensors (`f64` or `f32`), where
//! `op(x)` is `x`, or its transpose when the flag is `true`. Its meaning is the triple loop: for
//! each `c[i, j]` in row-major order, `acc` starts at zero and adds `op(a)[i, l] · op(b)[l, j]` for
//! `l` in order, then `c[i, j] = alpha · acc + beta · c[i, j]` (`beta == 0.0` does not read `c`, as
//! in BLAS). The `seq` target and debug mode run exactly that; `cpu` runs the multithreaded
//! `matrixmultiply` GEMM, which sums in another order (equal within rounding). Every target checks
//! that the three tensors have rank 2, that the shapes agree (`op(a)` `[m, k]`, `op(b)` `[k, n]`,
//! `c` `[m, n]`) and that `c` shares no memory with `a` or `b`; a failure names the site and the
//! tensors. Use `tensor_sub(t, 0, n)` for the first `n` rows of a buffer. It is host code: it may
//! appear where a `par_loop` may (the expression, a `seq_loop`, a function called from there) and
//! is a well-formedness error inside the function of a `par_loop` (nested parallelism). It does
//! not count for classification: a site with no `par_loop` names its backend. Under the `cuda` and
//! `cuda-emulator` targets it is a kernel of the site's module (one element of `c` per GPU
//! thread, summed in the meaning's order: the results are the `seq` target's bit for bit), launched
//! after the host checks the operands; Futhark-class sites have no tensors.
//!
//! ```
//! use pmexpr::{Tensor, accelerate};
//!
//! let c = Tensor::<f64>::zeros(&[2, 2]);
//! let a = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], &[2, 2]);
//! // c = a · aᵀ
//! accelerate!(backend = cuda, tensor_gemm(c, a, false, a, true, 1.0, 0.0));
//! assert_eq!(c.to_vec(), vec![5.0, 11.0, 11.0, 25.0]);
//! ```
//!
//! Names inside `accelerate!` are matched by their text: procedural macros cannot see Rust's
//! `macro_rules!` hygiene on stable, so a `macro_rules!` macro that expands to `accelerate!` and
//! mixes its own names with its caller's can confuse two variables of the same name.
//!
//! ## Backends: classification and well-formedness
//!
//! At compile time every `accelerate!` is classified as in the paper: a site that uses `map`,
//! `map2`, `reduce`, `flatten`, `scan`, `filter`, `scatter`, `hist` or `create` belongs to the
//! Futhark backend, one that uses `par_loop` to the
//! CUDA backend, counting the keywords of the functions it uses. A site with keywords of both, or
//! with none, is a compile error. The site must then be *well-formed* for its backend (the paper's
//! rules, with the reference compiler's messages): Futhark code has no recursion but loops (a
//! function that calls only itself, as its last step, runs as a Futhark `loop`), no tensors and no
//! `seq_loop`; CUDA code builds no sequences (`create`, `concat`, … — tensors are allocated in Rust
//! and captured), defines functions with all their parameters and passes no function to them; in
//! both, functions never go in sequences, records or conditional results. Every site runs on the
//! CPU targets too, so these rules are what lets the same program use a GPU where there is one.
//!
//! A site with no parallel keyword names its backend with `backend = futhark` or `backend = cuda`
//! (the paper needed a dummy loop for that); `backend = cpu` marks a site meant for the CPU targets
//! only, which skips classification and the GPU rules:
//!
//! ```
//! use pmexpr::accelerate;
//!
//! let s = vec![3_i64, 1, 2];
//! let first: i64 = accelerate!(backend = futhark, head(s) * 10);
//! let by_cpu: i64 = accelerate!(backend = cpu, {
//!     fn fact(n: i64) -> i64 { if n == 0 { 1 } else { n * fact(n - 1) } }
//!     reduce(addi, 0, map(fact, s))
//! });
//! assert_eq!((first, by_cpu), (30, 6 + 1 + 2));
//! ```
//!
//! ## `#[pmexpr]` functions and the build hook
//!
//! A function marked [`#[pmexpr]`](macro@pmexpr) is written in PMExpr and usable from every
//! `accelerate!` of the crate, in any module or file. A macro only sees its own tokens, so the
//! crate needs the build hook, which finds the `#[pmexpr]` functions and the sites and writes what
//! the macros need into `OUT_DIR`:
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
//! so, and a CUDA-class site has no kernels: the hook generates them (`OUT_DIR/pmexpr/cuda`, listed
//! in its manifest, which `accelerate!` reads to embed them), never the macro. Such a site runs on
//! the CPU targets (`auto` says so once on stderr), and the `cuda` and `cuda-emulator` targets fail
//! at it saying that the build hook is needed — as they do for a site the hook did not see, one
//! that another macro writes. `#[pmexpr]` functions share one namespace per crate, and inside `accelerate!` such a name
//! means the function (a binding of the expression itself may shadow it, a Rust variable may
//! not). Only what a site reaches is compiled with it (the paper's extraction), and a function two
//! sites use is extracted once. `PMEXPR_DUMP=1 cargo build` makes the hook write, for every site,
//! the program after lambda lifting, what extraction keeps and the classification, into
//! `OUT_DIR/pmexpr-dump/`, and print where.
//!
//! ## Types and captured variables
//!
//! | PMExpr | Rust |
//! |---|---|
//! | `Int`, `Float`, `Bool`, `()` | `i64`, `f64`, `bool`, `()`; beyond the paper every Rust number: `i8 i16 i32 isize u8 u16 u32 u64 usize f32`, named in annotations, suffixes and `as`, or fixed by the captured values |
//! | `[T]` | `Vec<T>`, `[T]`, `[T; N]` (results come back as `Vec<T>`) |
//! | any of these | held through `&T`, `&mut T` (read), `Box<T>`, `Rc<T>`, `Arc<T>` or `Cow<T>` — `&[T]`, `Box<[T]>`, `Arc<Vec<T>>`, `Cow<[T]>` — and captured through the pointer, without a copy |
//! | records | tuples, and structs with `#[derive(pmexpr::Record)]` (up to [`MAX_TUPLE`] = 12 fields) |
//! | `Tensor[T]` | [`Tensor<T>`](Tensor) of any number or `bool` (one byte an element), rank at most [`MAX_RANK`] |
//!
//! Every name that the expression does not bind and that is not an intrinsic is a *captured
//! variable*: a Rust variable of the enclosing code, borrowed for the call (never moved or cloned
//! by you; flat sequences are not even copied). Its PMExpr type is inferred from how the
//! expression uses it, and rustc checks that the Rust value has that type, reporting a mismatch at
//! the variable. A field of such a variable — `self.data`, `cfg.n`, `pair.0`, `self.cfg.scale`
//! — is captured on its own, the same way: its struct needs no derive and may hold anything else
//! (a `HashMap`, a `String`), and a missing field is rustc's error at the field. (A field of a
//! value the expression binds, `|p| p.x` or `let q = p; q.x`, is a record's field: see below.)
//! Where nothing fixes whether a number is an `i64` or an `f64`
//! (`map2(|x, y| x + y, a, b)`), the captured values decide, and they may also be `i32` or `f32`:
//! a number literal has the type of the numbers it is used with (`x * 2.0` is an `f32`
//! multiplication when `x` is an `f32`), so a `Vec<f32>` is computed with as `f32`, not widened.
//! Integer literals must fit their type (checked when the expression runs). The math functions
//! `sqrt exp log pow sin cos` take the float type of their argument, like a float literal
//! (`sqrt(x)` on an `f32` is `f32::sqrt`), `int2float` takes either integer type and gives the float type its context wants, and
//! `floorfi` takes either; the other intrinsics keep the paper's types (`addf`, … are `f64`; `%`
//! is `i64`): use the operators for `i32` and `f32`. An element type that the expression only moves, stores or counts is left to
//! the captured value too, whatever it is: `let r: Vec<i64> = accelerate!(flatten(m))` with
//! `m: Vec<Vec<i64>>`, `map(|p| p, reverse(s))` over a `Vec<(i64, f64)>`, `create(length(s), …)`
//! need no annotation. The CPU code is generic over it; the `cuda`, `cuda-emulator` and `futhark`
//! targets, whose code the build generates before rustc types the captured values, run such a
//! site with the code generated for the number or `bool` the type is at run time, and on the CPU,
//! said once, where it is something else (a tuple, a nested `Vec`, a struct) that the Futhark
//! program or a CUDA kernel would read — not where only CUDA host code counts such values, as
//! in `par_loop(length(s), …)` (name the type in the expression, e.g.
//! `let s: Vec<(i64, f64)> = s;`, to run it there). Such values come back as the Rust
//! type they were captured as (a derived struct that is only moved is itself again; arrays and
//! slices come back as `Vec`s). A type that no
//! captured value fixes — a result made inside the expression, like `map(|x| x, [])` — is a
//! compile error that asks for an annotation. Functions cannot be captured: define them inside
//! the expression.
//!
//! The result converts back to its Rust type: a number, `bool`, `()`, `Vec<…>` (nested),
//! tuples, or a [`Tensor`] that shares memory with the captured one it is a view of.
//!
//! ## Records
//!
//! A struct with named fields and [`#[derive(Record)]`](derive@Record) is a PMExpr record: the
//! record of its fields, so a site reads `p.x`, builds `Particle { x, v }`, matches
//! `Particle { x, .. }` and annotates `|p: Particle|`. With the build hook every site of the crate
//! knows the crate's derived structs: a captured struct, or a sequence of them, is borrowed field
//! by field, and a value used only through its fields is the one derived struct that has them (or
//! an error asks which, when several do). A result that contains a struct converts to the Rust
//! type named where it is bound:
//!
//! ```text
//! #[derive(pmexpr::Record, Clone)]
//! struct Particle { x: f64, v: f64 }
//!
//! let ps: Vec<Particle> = …;
//! let moved: Vec<Particle> = accelerate!(map(|p| Particle { x: p.x + dt * p.v, v: p.v }, ps));
//! ```
//!
//! A struct's fields have PMExpr types (numbers, `bool`, tuples, `Vec<T>`, `Tensor<T>`, other
//! derived structs); it has no generic parameters, at least one and at most [`MAX_TUPLE`] (12) fields.
//!
//! **Type aliases.** With the build hook, a type alias of the crate without generic parameters
//! (`type Real = f64;`, `type Trail = Vec<(Real, Real)>;`) means its type wherever a site writes
//! a type and in a derived struct's fields. Like functions and structs, a test's or example's own
//! aliases and structs are seen only by its sites. An alias of a type PMExpr does not have
//! (`type Index = HashMap<String, usize>;`) is an error where a site names it, saying so.
//!
//! ## Targets
//!
//! | target | what runs | chosen by |
//! |---|---|---|
//! | `auto` | CUDA-class sites on the GPU when one is usable, else (said once) on the CPU; Futhark-class sites on their Futhark library when the build made a `cuda` one and there is a GPU; other sites on all cores (the default) | unset, `PMEXPR_BACKEND=auto` |
//! | `cpu` | all cores, through rayon; a keyword nested inside a parallel level that already gives every core several tasks runs sequentially, as a hand-written program parallelizes the outer loop | `PMEXPR_BACKEND=cpu` |
//! | `seq` | sequential Rust: the reference semantics | `PMEXPR_BACKEND=seq` |
//! | debug mode | sequential, with runtime checks | `PMEXPR_DEBUG=1` (takes precedence) |
//! | `cuda` | CUDA-class sites on the GPU (an error at the site without one) | `PMEXPR_BACKEND=cuda` |
//! | `cuda-emulator` | CUDA-class sites' generated kernels on the CPU, for tests | `PMEXPR_BACKEND=cuda-emulator` |
//! | `futhark` | Futhark-class sites on the library the `futhark` compiler built for them at build time (a site without one runs on the CPU, said once; so does a call with an empty sequence of sequences, whose inner length Futhark cannot know) | `PMEXPR_BACKEND=futhark` |
//!
//! [`with_target`] overrides the environment for the `accelerate!` calls a closure makes on the
//! current thread (tests use it to run one expression on every target). The environment is read
//! once per process; a value that names no target stops the first `accelerate!` with an error that
//! lists the valid ones.
//!
//! ## Errors
//!
//! Compile-time errors are `compile_error!`s at the span of the offending tokens, with a `help:`
//! line where there is a fix to suggest. At run time, every failure is a panic whose message
//! names the `accelerate!` site (file:line:column) and the rule broken, with the reference
//! implementation's wording: `Out of bounds access in sequence`, `Division by zero`,
//! `Invalid indices used to access tensor`, … Checks that memory safety needs (indices, division
//! by zero) run on every target; debug mode adds the checks of the assumptions that accelerated
//! backends make: every nested sequence is regular (all inner sequences of the same length); no
//! two iterations of a `par_loop` write the same tensor element, and none reads an element that
//! another writes (every element each iteration touches is recorded for the call, views
//! included); no two indices of a `scatter` inside its destination are equal; the neutral element
//! of `reduce`, `scan` and `hist` is neutral for every element (for `hist`, every value that lands
//! in a bin) on both sides, and the operator is associative on
//! every consecutive triple of elements and on `n` more triples drawn with a fixed seed (all n³
//! triples would change the complexity; this costs about 6n calls of the operator; floats compare
//! within a relative 1e-9, `f32` within 1e-5). A failure names the tensor and two
//! iterations, or the operator and the elements.
//! A tensor whose rank exceeds [`MAX_RANK`] (3 unless `PMEXPR_TENSOR_MAX_RANK` was set when
//! building) is refused when it is captured.
//!
//! ```
//! use pmexpr::{Target, accelerate, with_target};
//!
//! let m = vec![vec![1_i64, 2], vec![3]];
//! let sums = || accelerate!(map(|row| reduce(addi, 0, row), m));
//! assert_eq!(with_target(Target::Cpu, sums), vec![3, 3]);
//! let failure = std::panic::catch_unwind(|| with_target(Target::Debug, sums)).unwrap_err();
//! let message = failure.downcast_ref::<String>().unwrap();
//! assert!(message.contains("Irregular sequence found in captured variable `m`"));
//! ```

#![warn(missing_docs)]

/// Accelerates an expression: checks it at compile time and runs it on the target selected at run
/// time (see the [crate documentation](crate) for the language, the types and the targets).
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
/// (see the [crate documentation](crate#records)).
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
/// The CUDA target's runtime: the devices (the GPU, and the emulator that runs the generated
/// kernels on the CPU for tests), marshaling and launches.
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

#[doc(hidden)]
pub mod __private {
    pub use pmexpr_runtime::__private::*;
}
