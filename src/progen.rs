//! A generator of differential test programs: random expressions over Rust's number types, each
//! printed three times — inside `accelerate!`, as plain Rust with a release build's wrapping
//! arithmetic (`wrapping_add`, `wrapping_shl` …), and as plain Rust with a debug build's checks
//! (`checked_add(…)?`, so `None` where a debug build panics) — in one of three shapes: the
//! expression itself, a `map` over a sequence (a Futhark-class site) and a `par_loop` over a
//! tensor (a CUDA-class site). [`crate_main`] writes a program that runs every accelerated
//! version on `seq`, `cpu`, debug mode and (for `par_loop`s) `cuda-emulator` against the plain
//! ones; `tests/generated.rs` builds and runs it.
//!
//! The expressions use what the README's language shares with Rust: literals with suffixes and
//! path constants (`i8::MIN`, `f32::NAN`), operators, casts, numeric methods, `if`, blocks with
//! `let`, `for` and `while` loops over `let mut` accumulators. Divisions are by nonzero constants
//! other than -1, so that no program panics in a release build.

use std::fmt::Write as _;

use crate::Rng;

use pmexpr::Number;
use pmexpr::Number::*;

/// Every number type but `bool`, in the generator's order (programs depend on it).
pub const TYPES: [Number; 12] = [I8, I16, I32, I64, Isize, U8, U16, U32, U64, Usize, F32, F64];

/// Where a program's expression stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `accelerate!(e)` over captured `x` and `y`.
    Scalar,
    /// `accelerate!(map(|x: T| e, xs))` with a captured `y`.
    Map,
    /// `accelerate!(par_loop(n, |i| tensor_set(out, [i], { let x = tensor_get(inp, [i]); e })))`.
    ParLoop,
    /// `accelerate!(reduce(op, neutral, map(|x: T| e, xs)))` of an integer `op` (wrapping `+`,
    /// `^`, `|`, `&`, `min`, `max`), against `fold`.
    Reduce(&'static str),
}

/// One generated program.
#[derive(Debug, Clone)]
pub struct Program {
    /// Its number, which names its functions.
    pub id: usize,
    /// The type of `x`.
    pub tx: Number,
    /// The type of `y`.
    pub ty: Number,
    /// The type of the expression.
    pub ret: Number,
    /// Its shape.
    pub shape: Shape,
    /// The expression as written inside `accelerate!`.
    pub accel: String,
    /// The expression in plain Rust, wrapping as a release build.
    pub wrap: String,
    /// The expression in plain Rust in a function returning `Option`, `None` where a debug build
    /// panics.
    pub check: String,
    /// The sign of a float zero may differ between targets (float `min`/`max`, whose result for
    /// `0.0` and `-0.0` Rust leaves open).
    pub loose_zero: bool,
    /// `#[pmexpr]` functions the expression calls: the accelerated and the two plain versions.
    pub items: Vec<(String, String, String)>,
}

/// How an expression is printed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Accel,
    Wrap,
    Check,
}

/// Three printings of one expression.
#[derive(Clone)]
struct E {
    accel: String,
    wrap: String,
    check: String,
}

impl E {
    fn same(s: String) -> E {
        E {
            accel: s.clone(),
            wrap: s.clone(),
            check: s,
        }
    }
    fn get(&self, m: Mode) -> &str {
        match m {
            Mode::Accel => &self.accel,
            Mode::Wrap => &self.wrap,
            Mode::Check => &self.check,
        }
    }
    /// Prints `f` once per mode.
    fn map(parts: &[&E], f: impl Fn(Mode, &[&str]) -> String) -> E {
        let print = |m| f(m, &parts.iter().map(|p| p.get(m)).collect::<Vec<_>>());
        E {
            accel: print(Mode::Accel),
            wrap: print(Mode::Wrap),
            check: print(Mode::Check),
        }
    }
}

struct Gen {
    rng: Rng,
    /// Variables in scope: name and type.
    scope: Vec<(String, Number)>,
    fresh: usize,
    loose_zero: bool,
    /// The expression runs in a CUDA kernel, which does not write sequences' elements yet.
    in_kernel: bool,
    /// The program's number, which names its `#[pmexpr]` functions.
    id: usize,
    items: Vec<(String, String, String)>,
}

impl Gen {
    fn below(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.rng.next_u64() % 100 < percent
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }

    /// A literal of type `t`: an edge value or a random one, as a suffixed literal or a path
    /// constant.
    fn literal(&mut self, t: Number) -> String {
        literal_text(t, &mut self.rng)
    }

    /// A small integer literal of type `t`, nonzero and not -1 (a safe divisor).
    fn divisor(&mut self, t: Number) -> String {
        let v = self.pick(&[2i64, 3, 5, 7, 10, 16]);
        if t.is_signed_int() && self.chance(30) {
            format!("(-{v}{})", t.rust_name())
        } else {
            format!("{v}{}", t.rust_name())
        }
    }

    fn expr(&mut self, t: Number, depth: u32) -> E {
        if depth == 0 || self.chance(15) {
            return self.leaf(t);
        }
        let d = depth - 1;
        match self.below(18) {
            17 => self.record(t, d),
            16 => self.tuple(t, d),
            13 => self.closure(t, d),
            14 => self.function(t, d),
            15 => self.loop_break(t, d),
            10 => self.match_(t, d),
            11 => self.array(t, d),
            12 => self.compound(t, d),
            0..=3 => self.arith(t, d),
            4 => self.method(t, d),
            5 => {
                let from = self.pick(&TYPES);
                let e = self.expr(from, d);
                E::map(&[&e], |_, p| format!("(({}) as {})", p[0], t.rust_name()))
            }
            6 => {
                let c = self.cond(d);
                let (a, b) = (self.expr(t, d), self.expr(t, d));
                E::map(&[&c, &a, &b], |_, p| {
                    format!("(if {} {{ {} }} else {{ {} }})", p[0], p[1], p[2])
                })
            }
            7 => {
                let vt = self.pick(&TYPES);
                let v = self.expr(vt, d);
                let name = self.name();
                self.scope.push((name.clone(), vt));
                let body = self.expr(t, d);
                self.scope.pop();
                E::map(&[&v, &body], |_, p| {
                    format!("{{ let {name}: {} = {}; {} }}", vt.rust_name(), p[0], p[1])
                })
            }
            8 => self.for_loop(t, d),
            _ => self.method(t, d),
        }
    }

    fn name(&mut self) -> String {
        self.fresh += 1;
        format!("v{}", self.fresh)
    }

    fn leaf(&mut self, t: Number) -> E {
        let vars: Vec<String> = self
            .scope
            .iter()
            .filter(|(_, vt)| *vt == t)
            .map(|(n, _)| n.clone())
            .collect();
        if !vars.is_empty() && self.chance(65) {
            let v = vars[self.below(vars.len())].clone();
            return E::same(v);
        }
        E::same(self.literal(t))
    }

    /// A binary operator (or unary `-` / `!`) on `t`.
    fn arith(&mut self, t: Number, d: u32) -> E {
        let a = self.expr(t, d);
        if t.is_float() {
            let op = self.pick(&["+", "-", "*", "/", "%", "neg"]);
            if op == "neg" {
                return E::map(&[&a], |_, p| format!("(-{})", p[0]));
            }
            let b = self.expr(t, d);
            return E::map(&[&a, &b], |_, p| format!("({} {op} {})", p[0], p[1]));
        }
        let ops: &[&str] = if t.is_signed_int() {
            &[
                "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "neg", "!",
            ]
        } else {
            &["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "!"]
        };
        let op = self.pick(ops);
        match op {
            "+" | "-" | "*" => {
                let b = self.expr(t, d);
                let name = match op {
                    "+" => "add",
                    "-" => "sub",
                    _ => "mul",
                };
                E::map(&[&a, &b], |m, p| match m {
                    Mode::Accel => format!("({} {op} {})", p[0], p[1]),
                    Mode::Wrap => format!("({}).wrapping_{name}({})", p[0], p[1]),
                    Mode::Check => format!("({}).checked_{name}({})?", p[0], p[1]),
                })
            }
            "/" | "%" => {
                let b = E::same(self.divisor(t));
                E::map(&[&a, &b], |_, p| format!("({} {op} {})", p[0], p[1]))
            }
            "<<" | ">>" => {
                let at = self.pick(&TYPES[..10]);
                let amount = if self.chance(70) {
                    E::same(format!(
                        "{}{}",
                        self.below(t.bits() as usize + 2),
                        at.rust_name()
                    ))
                } else {
                    self.expr(at, d)
                };
                let name = if op == "<<" { "shl" } else { "shr" };
                E::map(&[&a, &amount], |m, p| match m {
                    Mode::Accel => format!("({} {op} {})", p[0], p[1]),
                    Mode::Wrap => format!("({}).wrapping_{name}(({}) as u32)", p[0], p[1]),
                    // A debug build checks the whole amount, not its low 32 bits.
                    Mode::Check => {
                        format!("({}).checked_{name}(u32::try_from({}).ok()?)?", p[0], p[1])
                    }
                })
            }
            "neg" => E::map(&[&a], |m, p| match m {
                Mode::Accel => format!("(-{})", p[0]),
                Mode::Wrap => format!("({}).wrapping_neg()", p[0]),
                Mode::Check => format!("({}).checked_neg()?", p[0]),
            }),
            "!" => E::map(&[&a], |_, p| format!("(!{})", p[0])),
            _ => {
                let b = self.expr(t, d);
                E::map(&[&a, &b], |_, p| format!("({} {op} {})", p[0], p[1]))
            }
        }
    }

    /// A numeric method whose result is a `t`.
    fn method(&mut self, t: Number, d: u32) -> E {
        if t.is_float() {
            return self.float_method(t, d);
        }
        // Methods of another integer type whose result is `t`.
        if t == U32 && self.chance(25) {
            let from = self.pick(&TYPES[..10]);
            let a = self.expr(from, d);
            let m = self.pick(&[
                "count_ones",
                "leading_zeros",
                "trailing_zeros",
                "count_zeros",
                "leading_ones",
                "trailing_ones",
                "ilog2",
                "ilog10",
            ]);
            // The logarithms of a positive number only (Rust panics on the others).
            let positive = if m.starts_with("ilog") { ".max(1)" } else { "" };
            return E::map(&[&a], |_, p| format!("({}){positive}.{m}()", p[0]));
        }
        if !t.is_signed_int() && self.chance(20) {
            let from = self.pick(&TYPES[..5]);
            if from.unsigned() == Some(t) {
                if self.chance(50) {
                    let a = self.expr(from, d);
                    return E::map(&[&a], |_, p| format!("({}).unsigned_abs()", p[0]));
                }
                let (a, b) = (self.expr(from, d), self.expr(from, d));
                return E::map(&[&a, &b], |_, p| format!("({}).abs_diff({})", p[0], p[1]));
            }
        }
        let a = self.expr(t, d);
        let mut names = vec![
            "min",
            "max",
            "wrapping_add",
            "wrapping_sub",
            "wrapping_mul",
            "saturating_add",
            "saturating_sub",
            "saturating_mul",
            "rotate_left",
            "rotate_right",
            "pow",
            "swap_bytes",
            "reverse_bits",
            "rem_euclid",
            "div_euclid",
            "clamp",
            "wrapping_neg",
            "wrapping_shl",
            "wrapping_shr",
            "wrapping_pow",
            "saturating_pow",
            "wrapping_div",
            "wrapping_rem",
        ];
        if t.is_signed_int() {
            names.extend([
                "abs",
                "signum",
                "wrapping_abs",
                "saturating_abs",
                "saturating_neg",
            ]);
        } else {
            names.extend(["isqrt", "div_ceil", "next_power_of_two", "abs_diff"]);
        }
        let m = self.pick(&names);
        match m {
            "min" | "max" | "wrapping_add" | "wrapping_sub" | "wrapping_mul" | "saturating_add"
            | "saturating_sub" | "saturating_mul" => {
                let b = self.expr(t, d);
                E::map(&[&a, &b], |_, p| format!("({}).{m}({})", p[0], p[1]))
            }
            "abs_diff" if !t.is_signed_int() => {
                let b = self.expr(t, d);
                E::map(&[&a, &b], |_, p| format!("({}).abs_diff({})", p[0], p[1]))
            }
            // Never failing, as a release or a debug build: one printing for every mode.
            "rotate_left" | "rotate_right" | "wrapping_shl" | "wrapping_shr" | "wrapping_pow"
            | "saturating_pow" => {
                let n = E::same(format!("{}u32", self.below(2 * t.bits() as usize)));
                E::map(&[&a, &n], |_, p| format!("({}).{m}({})", p[0], p[1]))
            }
            "pow" => {
                let n = E::same(format!("{}u32", self.below(6)));
                E::map(&[&a, &n], |mode, p| match mode {
                    Mode::Accel => format!("({}).pow({})", p[0], p[1]),
                    Mode::Wrap => format!("({}).wrapping_pow({})", p[0], p[1]),
                    Mode::Check => format!("({}).checked_pow({})?", p[0], p[1]),
                })
            }
            // `MIN / -1` wraps, in every build.
            "wrapping_div" | "wrapping_rem" => {
                let b = if t.is_signed_int() && self.chance(30) {
                    E::same(format!("(-1{})", t.rust_name()))
                } else {
                    E::same(self.divisor(t))
                };
                E::map(&[&a, &b], |_, p| format!("({}).{m}({})", p[0], p[1]))
            }
            "rem_euclid" | "div_euclid" | "div_ceil" => {
                let b = E::same(self.divisor(t));
                E::map(&[&a, &b], |_, p| format!("({}).{m}({})", p[0], p[1]))
            }
            "clamp" => {
                let (mut lo, mut hi) = (self.small(t), self.small(t));
                if lo > hi {
                    std::mem::swap(&mut lo, &mut hi);
                }
                let n = t.rust_name();
                E::map(&[&a], |_, p| {
                    format!("({}).clamp({}, {})", p[0], lit(lo, n), lit(hi, n))
                })
            }
            "abs" => E::map(&[&a], |mode, p| match mode {
                Mode::Accel => format!("({}).abs()", p[0]),
                Mode::Wrap => format!("({}).wrapping_abs()", p[0]),
                Mode::Check => format!("({}).checked_abs()?", p[0]),
            }),
            "next_power_of_two" => E::map(&[&a], |mode, p| match mode {
                // A release build wraps an unrepresentable power to 0, a debug build panics.
                Mode::Accel => format!("({}).next_power_of_two()", p[0]),
                Mode::Wrap => format!("({}).checked_next_power_of_two().unwrap_or(0)", p[0]),
                Mode::Check => format!("({}).checked_next_power_of_two()?", p[0]),
            }),
            _ => E::map(&[&a], |_, p| format!("({}).{m}()", p[0])),
        }
    }

    /// A small integer value of `t` (for `clamp`'s bounds).
    fn small(&mut self, t: Number) -> i64 {
        let v = self.below(200) as i64;
        if t.is_signed_int() { v - 100 } else { v }
    }

    fn float_method(&mut self, t: Number, d: u32) -> E {
        let a = self.expr(t, d);
        let m = self.pick(&[
            "sqrt",
            "abs",
            "floor",
            "ceil",
            "round",
            "trunc",
            "fract",
            "signum",
            "min",
            "max",
            "mul_add",
            "powi",
            "clamp",
            "hypot",
            "atan2",
            "sin",
            "cos",
            "exp",
            "ln",
            "powf",
            "to_degrees",
            "to_radians",
            "copysign_like",
            "recip",
            "copysign",
            "exp_m1",
            "ln_1p",
            "log",
            "asinh",
            "acosh",
            "atanh",
            "round_ties_even",
            "rem_euclid",
            "div_euclid",
        ]);
        match m {
            "min" | "max" | "hypot" | "atan2" | "powf" | "copysign" | "log" | "rem_euclid"
            | "div_euclid" => {
                if matches!(m, "min" | "max") {
                    self.loose_zero = true;
                }
                let b = self.expr(t, d);
                E::map(&[&a, &b], |_, p| format!("({}).{m}({})", p[0], p[1]))
            }
            "mul_add" => {
                let (b, c) = (self.expr(t, d), self.expr(t, d));
                E::map(&[&a, &b, &c], |_, p| {
                    format!("({}).mul_add({}, {})", p[0], p[1], p[2])
                })
            }
            "powi" => {
                let n = self.below(9) as i64 - 4;
                E::map(&[&a], |_, p| format!("({}).powi({n}i32)", p[0]))
            }
            "clamp" => {
                self.loose_zero = true;
                let lo = self.below(100) as f64 / 8.0 - 6.0;
                let hi = lo + self.below(100) as f64 / 4.0;
                let n = t.rust_name();
                E::map(&[&a], |_, p| {
                    format!("({}).clamp({lo:?}{n}, {hi:?}{n})", p[0])
                })
            }
            "copysign_like" => {
                let c = self.cond(d);
                E::map(&[&c, &a], |_, p| {
                    format!("(if {} {{ {} }} else {{ -{} }})", p[0], p[1], p[1])
                })
            }
            _ => E::map(&[&a], |_, p| format!("({}).{m}()", p[0])),
        }
    }

    /// A `bool` condition.
    fn cond(&mut self, d: u32) -> E {
        match self.below(6) {
            0 if d > 0 => {
                let (a, b) = (self.cond(d - 1), self.cond(d - 1));
                let op = self.pick(&["&&", "||", "&", "|", "^"]);
                E::map(&[&a, &b], |_, p| format!("({} {op} {})", p[0], p[1]))
            }
            1 if d > 0 => {
                let a = self.cond(d - 1);
                E::map(&[&a], |_, p| format!("(!{})", p[0]))
            }
            2 => {
                let t = self.pick(&[F32, F64]);
                let a = self.expr(t, d.saturating_sub(1));
                let m = self.pick(&[
                    "is_nan",
                    "is_finite",
                    "is_infinite",
                    "is_normal",
                    "is_sign_negative",
                    "is_sign_positive",
                ]);
                E::map(&[&a], |_, p| format!("({}).{m}()", p[0]))
            }
            3 if self.chance(30) => {
                let t = self.pick(&TYPES[..5]);
                let a = self.expr(t, d.saturating_sub(1));
                let m = self.pick(&["is_negative", "is_positive"]);
                E::map(&[&a], |_, p| format!("({}).{m}()", p[0]))
            }
            _ => {
                let t = self.pick(&TYPES);
                let (a, b) = (
                    self.expr(t, d.saturating_sub(1)),
                    self.expr(t, d.saturating_sub(1)),
                );
                let op = self.pick(&["==", "!=", "<", "<=", ">", ">="]);
                E::map(&[&a, &b], |_, p| format!("({} {op} {})", p[0], p[1]))
            }
        }
    }

    /// A `#[derive(pmexpr::Record)]` struct of the crate, made and read by a field.
    fn record(&mut self, t: Number, d: u32) -> E {
        let at = self.pick(&TYPES);
        let (a, b) = (self.expr(at, d), self.expr(t, d));
        let name = format!("R{}_{}", self.id, self.fresh);
        self.fresh += 1;
        let (an, tn) = (at.rust_name(), t.rust_name());
        self.items.push((
            format!("#[derive(pmexpr::Record, Clone, Copy, Debug)]\npub struct {name} {{ pub first: {an}, pub second: {tn} }}"),
            String::new(),
            String::new(),
        ));
        let first = self.chance(30);
        E::map(&[&a, &b], |m, x| {
            let path = if m == Mode::Accel {
                name.clone()
            } else {
                format!("crate::{name}")
            };
            if first {
                format!(
                    "(({}{{ first: {}, second: {} }}).first as {tn})",
                    path, x[0], x[1]
                )
            } else {
                format!("({}{{ first: {}, second: {} }}).second", path, x[0], x[1])
            }
        })
    }

    /// A tuple made and taken apart: by a pattern, or by a field.
    fn tuple(&mut self, t: Number, d: u32) -> E {
        let at = self.pick(&TYPES);
        let (a, b) = (self.expr(at, d), self.expr(t, d));
        let (p, q) = (self.name(), self.name());
        let (an, tn) = (at.rust_name(), t.rust_name());
        self.scope.push((p.clone(), at));
        self.scope.push((q.clone(), t));
        let body = self.expr(t, d);
        self.scope.truncate(self.scope.len() - 2);
        if self.chance(50) {
            E::map(&[&a, &b, &body], |_, x| {
                format!(
                    "{{ let ({p}, {q}): ({an}, {tn}) = ({}, {}); {} }}",
                    x[0], x[1], x[2]
                )
            })
        } else {
            E::map(&[&a, &b], |_, x| {
                format!("{{ let {p}: ({an}, {tn}) = ({}, {}); {p}.1 }}", x[0], x[1])
            })
        }
    }

    /// A closure over the scope, called once or twice: `{ let f = |v: A| e; f(a) }`.
    fn closure(&mut self, t: Number, d: u32) -> E {
        let at = self.pick(&TYPES);
        let v = self.name();
        let f = self.name();
        self.scope.push((v.clone(), at));
        let body = self.expr(t, d);
        self.scope.pop();
        let (a, b) = (self.expr(at, d), self.expr(at, d));
        let (an, tn) = (at.rust_name(), t.rust_name());
        let twice = !t.is_float() && self.chance(50);
        E::map(&[&body, &a, &b], |m, p| {
            let def = match m {
                Mode::Check => format!(
                    "let {f} = |{v}: {an}| -> Option<{tn}> {{ Some({}) }};",
                    p[0]
                ),
                _ => format!("let {f} = |{v}: {an}| {};", p[0]),
            };
            let q = if m == Mode::Check { "?" } else { "" };
            if twice {
                format!("{{ {def} ({f}({}){q} ^ {f}({}){q}) }}", p[1], p[2])
            } else {
                format!("{{ {def} {f}({}){q} }}", p[1])
            }
        })
    }

    /// A function of its parameters only: a `fn` item of the block, or (outside kernels) a
    /// `#[pmexpr]` function of the crate.
    fn function(&mut self, t: Number, d: u32) -> E {
        let (at, bt) = (self.pick(&TYPES), self.pick(&TYPES));
        let (v, w) = (self.name(), self.name());
        let outer = std::mem::replace(&mut self.scope, vec![(v.clone(), at), (w.clone(), bt)]);
        let body = self.expr(t, d);
        self.scope = outer;
        let (a, b) = (self.expr(at, d), self.expr(bt, d));
        let (an, bn, tn) = (at.rust_name(), bt.rust_name(), t.rust_name());
        let signature = |ret: &str, name: &str| format!("fn {name}({v}: {an}, {w}: {bn}) -> {ret}");
        let f = if self.chance(50) {
            let name = format!("g{}_{}", self.id, self.fresh);
            self.fresh += 1;
            self.items.push((
                format!(
                    "#[pmexpr::pmexpr]\npub {} {{ {} }}",
                    signature(tn, &name),
                    body.accel
                ),
                format!(
                    "pub {} {{ {} }}",
                    signature(tn, &format!("{name}_wrap")),
                    body.wrap
                ),
                format!(
                    "pub {} {{ Some({}) }}",
                    signature(&format!("Option<{tn}>"), &format!("{name}_check")),
                    body.check
                ),
            ));
            return E::map(&[&a, &b], |m, p| match m {
                Mode::Accel => format!("{name}({}, {})", p[0], p[1]),
                Mode::Wrap => format!("crate::{name}_wrap({}, {})", p[0], p[1]),
                Mode::Check => format!("crate::{name}_check({}, {})?", p[0], p[1]),
            });
        } else {
            self.name()
        };
        E::map(&[&body, &a, &b], |m, p| match m {
            Mode::Check => format!(
                "{{ {} {{ Some({}) }} {f}({}, {})? }}",
                signature(&format!("Option<{tn}>"), &f),
                p[0],
                p[1],
                p[2]
            ),
            _ => format!(
                "{{ {} {{ {} }} {f}({}, {}) }}",
                signature(tn, &f),
                p[0],
                p[1],
                p[2]
            ),
        })
    }

    /// A `loop` that breaks with its value.
    fn loop_break(&mut self, t: Number, d: u32) -> E {
        let init = self.expr(t, d);
        let (acc, k) = (self.name(), self.name());
        self.scope.push((acc.clone(), t));
        let step = self.expr(t, d);
        let c = self.cond(d);
        self.scope.pop();
        let (tn, limit) = (t.rust_name(), 1 + self.below(5));
        E::map(&[&init, &step, &c], |_, p| {
            format!(
                "{{ let mut {acc}: {tn} = {}; let mut {k}: i64 = 0; loop {{ if {k} >= {limit} || {} {{ break {acc}; }} {acc} = {}; {k} += 1; }} }}",
                p[0], p[2], p[1]
            )
        })
    }

    /// A `match` of an integer with literal, alternative and range arms.
    fn match_(&mut self, t: Number, d: u32) -> E {
        let st = self.pick(&TYPES[..10]);
        let scrutinee = self.expr(st, d);
        let n = st.rust_name();
        let mut arms: Vec<E> = Vec::new();
        let mut texts: Vec<String> = Vec::new();
        for _ in 0..1 + self.below(4) {
            let (a, b) = (self.small(st), self.small(st));
            let pattern = match self.below(4) {
                // The extreme values (`u64::MAX` as a literal, `-128i8`).
                3 => {
                    let bits = st.bits();
                    if st.is_signed_int() {
                        format!("-{}{n}", 1u128 << (bits - 1))
                    } else {
                        format!("{}{n}", (1u128 << bits) - 1)
                    }
                }
                0 => lit_pattern(a, n),
                1 => format!("{} | {}", lit_pattern(a, n), lit_pattern(b, n)),
                _ => format!(
                    "{}..={}",
                    lit_pattern(a.min(b), n),
                    lit_pattern(a.max(b), n)
                ),
            };
            texts.push(pattern);
            arms.push(self.expr(t, d));
        }
        arms.push(self.expr(t, d));
        let mut parts: Vec<&E> = vec![&scrutinee];
        parts.extend(arms.iter());
        E::map(&parts, |_, p| {
            let mut s = format!("(match {} {{ ", p[0]);
            for (pat, e) in texts.iter().zip(&p[1..]) {
                s += &format!("{pat} => {e}, ");
            }
            s += &format!("_ => {} }})", p[p.len() - 1]);
            s
        })
    }

    /// An array local written in place and read back: `let mut a = [e0, e1, e2]; a[k] = e;`, then
    /// its elements combined, by index or by a `for` over it.
    fn array(&mut self, t: Number, d: u32) -> E {
        let es: Vec<E> = (0..3).map(|_| self.expr(t, d)).collect();
        let it = self.pick(&TYPES[..10]);
        let index = self.expr(it, d);
        let value = self.expr(t, d);
        let a = self.name();
        let v = self.name();
        let acc = self.name();
        let tn = t.rust_name();
        let combine = if t.is_float() { "+" } else { "^" };
        let by_loop = self.chance(50);
        let enumerate = self.chance(50);
        let j = self.name();
        let write = !self.in_kernel;
        let mut parts: Vec<&E> = es.iter().collect();
        parts.push(&index);
        parts.push(&value);
        E::map(&parts, |_, p| {
            let fill = if write {
                format!(
                    "let mut {a}: [{tn}; 3] = [{}, {}, {}]; {a}[(({}) as usize) % 3] = {};",
                    p[0], p[1], p[2], p[3], p[4]
                )
            } else {
                format!("let {a}: [{tn}; 3] = [{}, {}, {}];", p[0], p[1], p[2])
            };
            if by_loop && enumerate {
                format!(
                    "{{ {fill} let mut {acc}: {tn} = {a}[0]; for ({j}, &{v}) in {a}.iter().enumerate() {{ {acc} = ({acc} {combine} ({v} {combine} (({j} as i64) as {tn}))); }} {acc} }}"
                )
            } else if by_loop {
                format!(
                    "{{ {fill} let mut {acc}: {tn} = {a}[0]; for &{v} in {a}.iter() {{ {acc} = ({acc} {combine} {v}); }} {acc} }}"
                )
            } else {
                format!("{{ {fill} (({a}[0] {combine} {a}[1]) {combine} {a}[2]) }}")
            }
        })
    }

    /// A `let mut` local updated by compound assignments (`+=` wraps as a release build).
    fn compound(&mut self, t: Number, d: u32) -> E {
        let init = self.expr(t, d);
        let acc = self.name();
        self.scope.push((acc.clone(), t));
        let (e1, e2) = (self.expr(t, d), self.expr(t, d));
        self.scope.pop();
        let tn = t.rust_name();
        let ops: &[(&str, &str)] = if t.is_float() {
            &[("+=", "+"), ("-=", "-"), ("*=", "*")]
        } else {
            &[
                ("+=", "add"),
                ("-=", "sub"),
                ("*=", "mul"),
                ("^=", "^"),
                ("|=", "|"),
                ("&=", "&"),
            ]
        };
        let (o1, o2) = (self.pick(ops), self.pick(ops));
        let step = |m: Mode, op: (&str, &str), e: &str| -> String {
            match (m, op.1) {
                (Mode::Accel, _) | (_, "+" | "-" | "*" | "^" | "|" | "&") => {
                    format!("{acc} {} {e};", op.0)
                }
                (Mode::Wrap, name) => format!("{acc} = {acc}.wrapping_{name}({e});"),
                (_, name) => format!("{acc} = {acc}.checked_{name}({e})?;"),
            }
        };
        E::map(&[&init, &e1, &e2], |m, p| {
            format!(
                "{{ let mut {acc}: {tn} = {}; {} {} {acc} }}",
                p[0],
                step(m, o1, p[1]),
                step(m, o2, p[2])
            )
        })
    }

    /// A `for` or `while` loop over a `let mut` accumulator of type `t`.
    fn for_loop(&mut self, t: Number, d: u32) -> E {
        let init = self.expr(t, d);
        let acc = self.name();
        let counter = self.name();
        let k = self.below(6);
        self.scope.push((acc.clone(), t));
        // The counter is read through a cast, the same in Rust (an `i32`) and inside
        // `accelerate!` (an `i64`) for these small values.
        let step = self.expr(t, d);
        let bump = E::same(format!("(({counter} as i64 * 3 - 4) as {})", t.rust_name()));
        let step = if t.is_float() {
            E::map(&[&step, &bump], |_, p| format!("({} + {})", p[0], p[1]))
        } else {
            E::map(&[&step, &bump], |m, p| match m {
                Mode::Accel => format!("({} ^ {})", p[0], p[1]),
                _ => format!("(({}) ^ {})", p[0], p[1]),
            })
        };
        self.scope.pop();
        let tn = t.rust_name();
        if self.chance(50) {
            E::map(&[&init, &step], |_, p| {
                format!(
                    "{{ let mut {acc}: {tn} = {}; for {counter} in 0..{k} {{ {acc} = {}; }} {acc} }}",
                    p[0], p[1]
                )
            })
        } else {
            E::map(&[&init, &step], |_, p| {
                format!(
                    "{{ let mut {acc}: {tn} = {}; let mut {counter}: i64 = 0; while {counter} < {k} {{ {acc} = {}; {counter} += 1; }} {acc} }}",
                    p[0], p[1]
                )
            })
        }
    }
}

/// An integer pattern: Rust writes a negative one without parentheses.
fn lit_pattern(v: i64, ty: &str) -> String {
    format!("{v}{ty}")
}

fn lit(v: i64, ty: &str) -> String {
    if v < 0 {
        format!("(-{}{ty})", -v)
    } else {
        format!("{v}{ty}")
    }
}

/// A literal of `t` as Rust source: an edge value (as a literal or a path constant) or a random
/// value.
fn literal_text(t: Number, rng: &mut Rng) -> String {
    let n = t.rust_name();
    let k = rng.next_u64() % 10;
    if t.is_float() {
        return match k {
            0 => format!("{n}::NAN"),
            1 => format!("{n}::INFINITY"),
            2 => format!("{n}::NEG_INFINITY"),
            3 => format!("(-0.0{n})"),
            4 => format!("{n}::MAX"),
            5 => format!("{n}::MIN_POSITIVE"),
            6 => format!("1e30{n}"),
            _ => {
                let v = ((rng.next_u64() % 2000) as f64 - 1000.0) / 8.0;
                if v < 0.0 {
                    format!("(-{:?}{n})", -v)
                } else {
                    format!("{v:?}{n}")
                }
            }
        };
    }
    match k {
        0 => format!("{n}::MIN"),
        1 => format!("{n}::MAX"),
        2 => format!("0{n}"),
        3 => format!("1{n}"),
        4 if t.is_signed_int() => format!("(-1{n})"),
        5 => {
            // The extreme values written as literals.
            let bits = t.bits();
            if t.is_signed_int() {
                format!("(-{}{n})", 1u128 << (bits - 1))
            } else {
                format!("{}{n}", (1u128 << bits) - 1)
            }
        }
        _ => {
            // Within the type's range (127 for an i8): `300u8` does not compile in Rust either.
            let top = if t.bits() == 8 {
                if t.is_signed_int() { 128 } else { 256 }
            } else {
                300
            };
            let v = rng.next_u64() % top;
            if t.is_signed_int() && rng.next_u64().is_multiple_of(2) {
                format!("(-{v}{n})")
            } else {
                format!("{v}{n}")
            }
        }
    }
}

/// `count` programs from `seed`; program `i` depends on `seed` and `i` only.
pub fn programs(seed: u64, count: usize) -> Vec<Program> {
    (0..count).map(|id| program(seed, id)).collect()
}

fn program(seed: u64, id: usize) -> Program {
    let mut g = Gen {
        rng: Rng::new(seed ^ (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        scope: Vec::new(),
        fresh: 0,
        loose_zero: false,
        in_kernel: false,
        id,
        items: Vec::new(),
    };
    let (tx, ty, ret) = (g.pick(&TYPES), g.pick(&TYPES), g.pick(&TYPES));
    let mut shape = g.pick(&[
        Shape::Scalar,
        Shape::Scalar,
        Shape::Map,
        Shape::ParLoop,
        Shape::Reduce(""),
    ]);
    if shape == Shape::Reduce("") {
        shape = if ret.is_float() {
            Shape::Map
        } else {
            Shape::Reduce(g.pick(&["+", "^", "|", "&", "min", "max"]))
        };
    }
    g.in_kernel = shape == Shape::ParLoop;
    g.scope.push(("x".into(), tx));
    g.scope.push(("y".into(), ty));
    let depth = 2 + g.below(3) as u32;
    let e = g.expr(ret, depth);
    Program {
        id,
        tx,
        ty,
        ret,
        shape,
        accel: e.accel,
        wrap: e.wrap,
        check: e.check,
        loose_zero: g.loose_zero,
        items: g.items,
    }
}

/// The inputs a program of these types runs on: each `x` with each `y`.
fn inputs(t: Number, rng: &mut Rng) -> Vec<String> {
    let mut v: Vec<String> = (0..6).map(|_| literal_text(t, rng)).collect();
    v.dedup();
    v
}

/// The `main.rs` of a crate that runs `programs` and exits with 1 after printing each
/// disagreement.
pub fn crate_main(seed: u64, programs: &[Program]) -> String {
    let mut s = String::from(HARNESS);
    let mut calls = String::new();
    for p in programs {
        let mut rng = Rng::new(seed.wrapping_add(p.id as u64));
        let (tx, ty, r) = (p.tx.rust_name(), p.ty.rust_name(), p.ret.rust_name());
        let xs = inputs(p.tx, &mut rng).join(", ");
        let ys = inputs(p.ty, &mut rng).join(", ");
        let id = p.id;
        let src = format!("{:?}", p.accel);
        let cuda = p.shape == Shape::ParLoop;
        let loose = p.loose_zero;
        match p.shape {
            Shape::Scalar => {
                let _ = write!(
                    s,
                    "{ALLOW}\nmod p{id} {{\n    use super::*;\n    pub fn wrap(x: {tx}, y: {ty}) -> {r} {{ {} }}\n    pub fn check(x: {tx}, y: {ty}) -> Option<{r}> {{ Some({}) }}\n    pub fn accel(x: {tx}, y: {ty}) -> {r} {{ accelerate!(backend = cpu, {}) }}\n}}\n",
                    p.wrap, p.check, p.accel
                );
                let _ = writeln!(
                    calls,
                    "    scalar({id}, {src}, &[{xs}], &[{ys}], p{id}::wrap, p{id}::check, p{id}::accel, {loose}, &mut fails);"
                );
            }
            Shape::Reduce(op) => {
                let (neutral, accel_op, wrap_op, check_op) = match op {
                    "+" => (
                        format!("0{r}"),
                        "a + b",
                        "a.wrapping_add(b)",
                        "a.checked_add(b)",
                    ),
                    "&" => (format!("!0{r}"), "a & b", "a & b", "Some(a & b)"),
                    "min" => (
                        format!("{r}::MAX"),
                        "a.min(b)",
                        "a.min(b)",
                        "Some(a.min(b))",
                    ),
                    "max" => (
                        format!("{r}::MIN"),
                        "a.max(b)",
                        "a.max(b)",
                        "Some(a.max(b))",
                    ),
                    "^" => (format!("0{r}"), "a ^ b", "a ^ b", "Some(a ^ b)"),
                    _ => (format!("0{r}"), "a | b", "a | b", "Some(a | b)"),
                };
                let _ = write!(
                    s,
                    "{ALLOW}\nmod p{id} {{\n    use super::*;\n    pub fn wrap(xs: &[{tx}], y: {ty}) -> {r} {{ xs.iter().map(|&x| {}).fold({neutral}, |a, b| {wrap_op}) }}\n    pub fn check(xs: &[{tx}], y: {ty}) -> Option<{r}> {{ xs.iter().map(|&x| -> Option<{r}> {{ Some({}) }}).collect::<Option<Vec<{r}>>>()?.into_iter().try_fold({neutral}, |a, b| {check_op}) }}\n    pub fn accel(xs: &[{tx}], y: {ty}) -> {r} {{\n        accelerate!(reduce(|a: {r}, b: {r}| {accel_op}, {neutral}, map(|x: {tx}| {}, xs)))\n    }}\n}}\n",
                    p.wrap, p.check, p.accel
                );
                let _ = writeln!(
                    calls,
                    "    seqs({id}, {src}, &[{xs}], &[{ys}], p{id}::wrap, p{id}::check, p{id}::accel, false, false, &mut fails);"
                );
            }
            Shape::Map | Shape::ParLoop => {
                let accel = if p.shape == Shape::Map {
                    format!("accelerate!(map(|x: {tx}| {}, xs))", p.accel)
                } else {
                    format!(
                        "let inp = Tensor::<{tx}>::from_vec(xs.to_vec(), &[xs.len()]);\n        let out = Tensor::<{r}>::from_vec(vec![Default::default(); xs.len()], &[xs.len()]);\n        let n = xs.len() as i64;\n        accelerate!(par_loop(n, |i| tensor_set(out, [i], {{ let x: {tx} = tensor_get(inp, [i]); {} }})));\n        out.to_vec()",
                        p.accel
                    )
                };
                let _ = write!(
                    s,
                    "{ALLOW}\nmod p{id} {{\n    use super::*;\n    pub fn wrap(xs: &[{tx}], y: {ty}) -> Vec<{r}> {{ xs.iter().map(|&x| {}).collect() }}\n    pub fn check(xs: &[{tx}], y: {ty}) -> Option<Vec<{r}>> {{ xs.iter().map(|&x| -> Option<{r}> {{ Some({}) }}).collect() }}\n    pub fn accel(xs: &[{tx}], y: {ty}) -> Vec<{r}> {{\n        {accel}\n    }}\n}}\n",
                    p.wrap, p.check
                );
                let _ = writeln!(
                    calls,
                    "    seqs({id}, {src}, &[{xs}], &[{ys}], p{id}::wrap, p{id}::check, p{id}::accel, {cuda}, {loose}, &mut fails);"
                );
            }
        }
        // After the program's module, so that an error in them is taken for the program's.
        for (accel, wrap, check) in &p.items {
            let _ = write!(s, "{ALLOW}\n{accel}\n{ALLOW}\n{wrap}\n{ALLOW}\n{check}\n");
        }
    }
    let _ = write!(
        s,
        "fn main() {{\n    std::panic::set_hook(Box::new(|_| {{}}));\n    let mut fails = Fails::default();\n{calls}    fails.report({});\n}}\n",
        programs.len()
    );
    s
}

/// The lints that generated code trips by design (parentheses around everything, overflowing
/// constant arithmetic that Rust evaluates at compile time).
const ALLOW: &str = "#[allow(unused_parens, unused_braces, unused_variables, unused_mut, unused_assignments, unreachable_patterns, arithmetic_overflow, unconditional_panic, clippy::all)]";

/// The part of the generated `main.rs` that compares.
const HARNESS: &str = r#"//! Generated by pmexpr-suite's progen: do not edit.
#![allow(clippy::all)]
use pmexpr::{accelerate, Target, Tensor, with_target};
use std::fmt::Debug;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Equality of results: integers exactly, floats bit for bit (any NaN equals any NaN; with
/// `loose`, 0.0 equals -0.0).
trait Same {
    fn same(&self, o: &Self, loose: bool) -> bool;
}
macro_rules! same_int { ($($t:ty)*) => { $(impl Same for $t { fn same(&self, o: &Self, _: bool) -> bool { self == o } })* } }
same_int!(i8 i16 i32 i64 isize u8 u16 u32 u64 usize);
macro_rules! same_float { ($($t:ty)*) => { $(impl Same for $t {
    fn same(&self, o: &Self, loose: bool) -> bool {
        (self.is_nan() && o.is_nan()) || self.to_bits() == o.to_bits() || (loose && self == o)
    }
})* } }
same_float!(f32 f64);
impl<T: Same> Same for Vec<T> {
    fn same(&self, o: &Self, loose: bool) -> bool {
        self.len() == o.len() && self.iter().zip(o).all(|(a, b)| a.same(b, loose))
    }
}

#[derive(Default)]
struct Fails { lines: Vec<String>, runs: usize, programs: std::collections::BTreeSet<usize> }

impl Fails {
    fn fail(&mut self, id: usize, src: &str, what: String) {
        self.programs.insert(id);
        if self.lines.len() < 200 {
            self.lines.push(format!("program {id}: {what}\n    accelerate!({src})"));
        }
    }
    fn report(&self, programs: usize) {
        for l in &self.lines { println!("{l}"); }
        println!("generated programs: {programs}, runs: {}, programs that disagree: {}", self.runs, self.programs.len());
        if !self.programs.is_empty() { std::process::exit(1); }
    }
}

fn message(e: Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

/// Runs `accel` on each target where `expected` is the wrapping result and, in debug mode, where
/// `checked` is what a debug build gives (`None`: it panics).
fn compare<R: Same + Debug>(id: usize, src: &str, input: &str, expected: &R, checked: &Option<R>, accel: &dyn Fn() -> R, cuda: bool, loose: bool, fails: &mut Fails) {
    let mut targets = vec![Target::Seq, Target::Cpu];
    if cuda { targets.push(Target::CudaEmulator); }
    for t in targets {
        fails.runs += 1;
        match catch_unwind(AssertUnwindSafe(|| with_target(t, accel))) {
            Ok(r) if r.same(expected, loose) => {}
            Ok(r) => fails.fail(id, src, format!("{input}: {t}: {r:?}, Rust: {expected:?}")),
            Err(e) => fails.fail(id, src, format!("{input}: {t} failed: {}, Rust: {expected:?}", message(e))),
        }
    }
    fails.runs += 1;
    match (catch_unwind(AssertUnwindSafe(|| with_target(Target::Debug, accel))), checked) {
        (Ok(r), Some(c)) if r.same(c, loose) => {}
        (Err(_), None) => {}
        (Ok(r), Some(c)) => fails.fail(id, src, format!("{input}: debug: {r:?}, Rust debug build: {c:?}")),
        (Ok(r), None) => fails.fail(id, src, format!("{input}: debug: {r:?}, a Rust debug build panics")),
        (Err(e), Some(c)) => fails.fail(id, src, format!("{input}: debug failed: {}, Rust debug build: {c:?}", message(e))),
    }
}

fn scalar<X: Copy + Debug, Y: Copy + Debug, R: Same + Debug>(id: usize, src: &str, xs: &[X], ys: &[Y], wrap: fn(X, Y) -> R, check: fn(X, Y) -> Option<R>, accel: fn(X, Y) -> R, loose: bool, fails: &mut Fails) {
    for &x in xs {
        for &y in ys {
            let input = format!("x = {x:?}, y = {y:?}");
            compare(id, src, &input, &wrap(x, y), &check(x, y), &|| accel(x, y), false, loose, fails);
        }
    }
}

fn seqs<X: Copy + Debug, Y: Copy + Debug, R: Same + Debug>(id: usize, src: &str, xs: &[X], ys: &[Y], wrap: fn(&[X], Y) -> R, check: fn(&[X], Y) -> Option<R>, accel: fn(&[X], Y) -> R, cuda: bool, loose: bool, fails: &mut Fails) {
    for &y in ys {
        let input = format!("xs = {xs:?}, y = {y:?}");
        compare(id, src, &input, &wrap(xs, y), &check(xs, y), &|| accel(xs, y), cuda, loose, fails);
    }
}

"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_every_shape() {
        let a = programs(3, 60);
        let b = programs(3, 60);
        assert!(
            a.iter()
                .zip(&b)
                .all(|(p, q)| p.accel == q.accel && p.wrap == q.wrap)
        );
        for shape in [Shape::Scalar, Shape::Map, Shape::ParLoop] {
            assert!(a.iter().any(|p| p.shape == shape), "no {shape:?} program");
        }
        // The checked printing differs from the accelerated one where an operator may overflow.
        assert!(
            a.iter()
                .any(|p| p.check.contains("checked_") && p.accel.contains(" + "))
        );
        assert!(crate_main(3, &a).contains("mod p59"));
    }
}
