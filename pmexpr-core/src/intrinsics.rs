//! The intrinsic table: PMExpr's built-in functions (paper: constants `c`) and parallel keywords,
//! with their names inside `accelerate!`, their arity and their types; and the operator table
//! ([`OPERATORS`]): which intrinsic each of `+ - * / % == != < <= > >=` means at each type.

use crate::types::{Number, Type};

macro_rules! intrinsics {
    ($($variant:ident $name:literal,)*) => {
        /// A built-in function of PMExpr.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Intrinsic {
            $(#[doc = concat!("`", $name, "`")] $variant,)*
            /// `x as n`: Rust's cast to the number `n` (never `bool`, which Rust casts nothing
            /// to), one intrinsic for every number type, printed `__as_n` in the dumps.
            As(Number),
        }

        impl Intrinsic {
            /// Every intrinsic but the casts ([`Intrinsic::As`], one per number, which no
            /// user names): what names are looked up in.
            pub const ALL: &'static [Intrinsic] = &[$(Intrinsic::$variant,)*];

            /// The name inside `accelerate!`; `__as` for every cast, whose number is its
            /// parameter (the dumps print `__as_u8`: [`Intrinsic`]'s `Display`).
            pub fn name(self) -> &'static str {
                match self { $(Intrinsic::$variant => $name,)* Intrinsic::As(_) => "__as" }
            }
        }
    };
}

/// The name, and for a cast its number (`__as_u8`): how the dumps and internal messages write
/// an intrinsic.
impl std::fmt::Display for Intrinsic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Intrinsic::As(n) => write!(f, "__as_{n}"),
            i => f.write_str(i.name()),
        }
    }
}

intrinsics! {
    AddI "addi", SubI "subi", MulI "muli", DivI "divi", ModI "modi", NegI "negi",
    AddF "addf", SubF "subf", MulF "mulf", DivF "divf", NegF "negf", AbsI "absi", AbsF "absf",
    EqI "eqi", NeqI "neqi", LtI "lti", GtI "gti", LeqI "leqi", GeqI "geqi",
    EqF "eqf", NeqF "neqf", LtF "ltf", GtF "gtf", LeqF "leqf", GeqF "geqf",
    EqB "eqb", NeqB "neqb", Not "not",
    Int2Float "int2float", FloorFI "floorfi",
    Sqrt "sqrt", Exp "exp", Log "log", Pow "pow", Sin "sin", Cos "cos",
    Create "create", Length "length", Get "get", Set "set", Foldl "foldl", Head "head",
    Tail "tail", Null "null", Concat "concat", Reverse "reverse", Subsequence "subsequence",
    TensorGet "tensor_get", TensorSet "tensor_set", TensorLinearGet "tensor_linear_get",
    TensorLinearSet "tensor_linear_set", TensorRank "tensor_rank", TensorShape "tensor_shape",
    TensorSub "tensor_sub", TensorSlice "tensor_slice", TensorGemm "tensor_gemm",
    NumAdd "__num_add", NumSub "__num_sub", NumMul "__num_mul", NumDiv "__num_div", NumRem "__num_rem", NumNeg "__num_neg", NumAbs "__num_abs",
    NumEq "__num_eq", NumNe "__num_ne", NumLt "__num_lt", NumLe "__num_le", NumGt "__num_gt", NumGe "__num_ge",
    SetField "__set_field",
    NumAnd "__num_and", NumOr "__num_or", NumXor "__num_xor", NumShl "__num_shl", NumShr "__num_shr", NumNot "__num_not",
    Len "__len",
    MCountOnes "__m_count_ones", MLeadingZeros "__m_leading_zeros", MTrailingZeros "__m_trailing_zeros",
    MReverseBits "__m_reverse_bits", MSwapBytes "__m_swap_bytes",
    MRotateLeft "__m_rotate_left", MRotateRight "__m_rotate_right", MWrappingAdd "__m_wrapping_add",
    MWrappingSub "__m_wrapping_sub", MWrappingMul "__m_wrapping_mul", MWrappingNeg "__m_wrapping_neg",
    MSaturatingAdd "__m_saturating_add", MSaturatingSub "__m_saturating_sub", MSaturatingMul "__m_saturating_mul",
    MSignum "__m_signum",
    MFloor "__m_floor", MCeil "__m_ceil", MRound "__m_round", MTrunc "__m_trunc", MFract "__m_fract",
    MCbrt "__m_cbrt", MExp2 "__m_exp2", MLog2 "__m_log2", MLog10 "__m_log10",
    MTan "__m_tan", MAsin "__m_asin", MAcos "__m_acos", MAtan "__m_atan",
    MAtan2 "__m_atan2", MSinh "__m_sinh", MCosh "__m_cosh", MTanh "__m_tanh", MHypot "__m_hypot",
    MIsNan "__m_is_nan", MIsFinite "__m_is_finite", MToRadians "__m_to_radians",
    MToDegrees "__m_to_degrees", MMulAdd "__m_mul_add",
    MPow "__m_pow", MIsqrt "__m_isqrt", MAbsDiff "__m_abs_diff", MDivCeil "__m_div_ceil",
    MRemEuclid "__m_rem_euclid", MDivEuclid "__m_div_euclid",
    MIsPowerOfTwo "__m_is_power_of_two", MNextPowerOfTwo "__m_next_power_of_two",
    MPowi "__m_powi", MClamp "__m_clamp",
    MCountZeros "__m_count_zeros", MLeadingOnes "__m_leading_ones", MTrailingOnes "__m_trailing_ones",
    MUnsignedAbs "__m_unsigned_abs", MIsPositive "__m_is_positive", MIsNegative "__m_is_negative",
    MWrappingShl "__m_wrapping_shl", MWrappingShr "__m_wrapping_shr",
    MWrappingPow "__m_wrapping_pow", MSaturatingPow "__m_saturating_pow",
    MWrappingAbs "__m_wrapping_abs", MSaturatingAbs "__m_saturating_abs", MSaturatingNeg "__m_saturating_neg",
    MWrappingDiv "__m_wrapping_div", MWrappingRem "__m_wrapping_rem",
    MIlog2 "__m_ilog2", MIlog10 "__m_ilog10",
    MRecip "__m_recip", MIsInfinite "__m_is_infinite", MIsSignNegative "__m_is_sign_negative",
    MIsSignPositive "__m_is_sign_positive", MIsNormal "__m_is_normal", MCopysign "__m_copysign",
    MExpM1 "__m_exp_m1", MLn1p "__m_ln_1p", MLogBase "__m_log", MAsinh "__m_asinh",
    MAcosh "__m_acosh", MAtanh "__m_atanh", MRoundTiesEven "__m_round_ties_even",
    RemF "__remf",
}

/// What a numeric method (`x.count_ones()`, `x.floor()`) takes and gives: see [`Intrinsic::method`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodType {
    /// Of an integer (of any type): `args` more of the receiver's type, a result of it.
    Int {
        /// How many arguments besides the receiver.
        args: usize,
    },
    /// Of an integer, with one argument of any integer type (`rotate_left`): the receiver's
    /// type.
    IntAmount,
    /// Of a float (`f64` or `f32`): `args` more of the receiver's type, a result of it.
    Float {
        /// How many arguments besides the receiver.
        args: usize,
    },
    /// Of a float, a `bool` (`is_nan`).
    FloatTest,
    /// Of any number, its type (`signum`).
    Num,
    /// Of an integer, a `bool` (`is_power_of_two`).
    IntTest,
    /// Of an integer, a count of its bits as Rust's `u32` (`count_ones`).
    IntCount,
    /// Of a float, with one argument of any integer type (`powi`): the receiver's type.
    FloatAmount,
    /// Of any number, `args` more of its type, a result of it (`clamp`).
    NumWith {
        /// How many arguments besides the receiver.
        args: usize,
    },
}

impl Intrinsic {
    /// The intrinsic called `name`, if any. The operators on numbers whose type comes from the
    /// captured values (`__num_*`) cannot be named by users.
    pub fn from_name(name: &str) -> Option<Intrinsic> {
        Intrinsic::ALL
            .iter()
            .copied()
            .find(|i| i.name() == name && !name.starts_with("__"))
    }

    /// Whether this is a math function (`sqrt exp log pow sin cos`): typed `f64` in the table,
    /// and instantiated by inference at the float type of its arguments (`f64` or `f32`), like
    /// a float literal.
    pub fn is_float_math(self) -> bool {
        use Intrinsic::*;
        matches!(self, Sqrt | Exp | Log | Pow | Sin | Cos)
    }

    /// The number `x as T` converts to, for the cast intrinsic of `T` (`__as_u8`: `u8`).
    pub fn cast_target(self) -> Option<Number> {
        match self {
            Intrinsic::As(n) => Some(n),
            _ => None,
        }
    }

    /// The intrinsic of `x as n` ([`Intrinsic::As`]); none for `bool`, which Rust casts
    /// nothing to.
    pub fn cast_to(n: Number) -> Option<Intrinsic> {
        n.is_arithmetic().then_some(Intrinsic::As(n))
    }

    /// Whether this is the compiler's own (`__num_add`, `__set_field`): no user can name it.
    pub fn is_internal(self) -> bool {
        self.name().starts_with("__")
    }

    /// A numeric method written as Rust writes it (`x.count_ones()`): its Rust name and what it
    /// takes and gives. The compiler's own intrinsics (`__m_*`): users call them as methods.
    pub fn method(self) -> Option<(&'static str, MethodType)> {
        use Intrinsic::*;
        use MethodType as M;
        let t = match self {
            MCountOnes | MLeadingZeros | MTrailingZeros | MCountZeros | MLeadingOnes
            | MTrailingOnes | MIlog2 | MIlog10 => M::IntCount,
            MReverseBits | MSwapBytes | MWrappingNeg | MUnsignedAbs | MWrappingAbs
            | MSaturatingAbs | MSaturatingNeg => M::Int { args: 0 },
            MIsPositive | MIsNegative => M::IntTest,
            MWrappingShl | MWrappingShr | MWrappingPow | MSaturatingPow => M::IntAmount,
            MWrappingDiv | MWrappingRem => M::Int { args: 1 },
            MRecip | MExpM1 | MLn1p | MAsinh | MAcosh | MAtanh | MRoundTiesEven => {
                M::Float { args: 0 }
            }
            MIsInfinite | MIsSignNegative | MIsSignPositive | MIsNormal => M::FloatTest,
            MCopysign | MLogBase => M::Float { args: 1 },
            MSignum => M::Num,
            MWrappingAdd | MWrappingSub | MWrappingMul | MSaturatingAdd | MSaturatingSub
            | MSaturatingMul => M::Int { args: 1 },
            MRotateLeft | MRotateRight => M::IntAmount,
            MFloor | MCeil | MRound | MTrunc | MFract | MCbrt | MExp2 | MLog2 | MLog10 | MTan
            | MAsin | MAcos | MAtan | MSinh | MCosh | MTanh | MToRadians | MToDegrees => {
                M::Float { args: 0 }
            }
            MAtan2 | MHypot => M::Float { args: 1 },
            MMulAdd => M::Float { args: 2 },
            MIsNan | MIsFinite => M::FloatTest,
            MIsqrt | MNextPowerOfTwo => M::Int { args: 0 },
            MAbsDiff | MDivCeil => M::Int { args: 1 },
            // Of floats too (Rust's `f64::rem_euclid`), which never fail.
            MRemEuclid | MDivEuclid => M::NumWith { args: 1 },
            MPow => M::IntAmount,
            MIsPowerOfTwo => M::IntTest,
            MPowi => M::FloatAmount,
            MClamp => M::NumWith { args: 2 },
            _ => return None,
        };
        Some((self.name().strip_prefix("__m_")?, t))
    }

    /// Whether a numeric method can fail at the site, where Rust panics: `isqrt` of a negative
    /// number, `rem_euclid`, `div_euclid`, `div_ceil`, `wrapping_div` and `wrapping_rem` of
    /// integers by zero, `ilog2` and `ilog10` of a number that is not positive, `clamp` with a
    /// minimum above the maximum (or a NaN bound). Each generator checks it on every target, as
    /// `/` is.
    pub fn method_may_fail(self) -> bool {
        use Intrinsic::*;
        matches!(
            self,
            MIsqrt
                | MRemEuclid
                | MDivEuclid
                | MDivCeil
                | MClamp
                | MWrappingDiv
                | MWrappingRem
                | MIlog2
                | MIlog10
        )
    }

    /// Whether this numeric method exists in Rust for signed integers only (`is_negative`,
    /// `wrapping_abs` …): inference refuses it on an unsigned type.
    pub fn signed_only(self) -> bool {
        use Intrinsic::*;
        matches!(
            self,
            MUnsignedAbs
                | MIsPositive
                | MIsNegative
                | MWrappingAbs
                | MSaturatingAbs
                | MSaturatingNeg
        )
    }

    /// The numeric method intrinsic of Rust method `name`, if any.
    pub fn method_named(name: &str) -> Option<Intrinsic> {
        Intrinsic::ALL
            .iter()
            .copied()
            .find(|i| i.method().is_some_and(|(n, _)| n == name))
    }

    /// Whether this is an operator on a number whose type comes from the captured values.
    pub fn is_generic_numeric(self) -> bool {
        self.name().starts_with("__num_")
    }

    /// The parameter types and result type; `fresh` makes a new type variable.
    pub fn signature(self, fresh: &mut dyn FnMut() -> Type) -> (Vec<Type>, Type) {
        use Intrinsic::*;
        const INT: Type = Type::INT;
        const FLOAT: Type = Type::FLOAT;
        const BOOL: Type = Type::BOOL;
        match self {
            AddI | SubI | MulI | DivI | ModI => (vec![INT, INT], INT),
            NegI | AbsI => (vec![INT], INT),
            AddF | SubF | MulF | DivF | Pow => (vec![FLOAT, FLOAT], FLOAT),
            NegF | AbsF | Sqrt | Exp | Log | Sin | Cos => (vec![FLOAT], FLOAT),
            EqI | NeqI | LtI | GtI | LeqI | GeqI => (vec![INT, INT], BOOL),
            EqF | NeqF | LtF | GtF | LeqF | GeqF => (vec![FLOAT, FLOAT], BOOL),
            EqB | NeqB => (vec![BOOL, BOOL], BOOL),
            Not => (vec![BOOL], BOOL),
            Int2Float => (vec![INT], FLOAT),
            FloorFI => (vec![FLOAT], INT),
            // The count, and the index it gives, of any integer type (`index_type`).
            Create => {
                let (ix, a) = (fresh(), fresh());
                (vec![ix.clone(), Type::arrow(ix, a.clone())], Type::seq(a))
            }
            Length => (vec![Type::seq(fresh())], INT),
            Null => (vec![Type::seq(fresh())], BOOL),
            Get => {
                let a = fresh();
                (vec![Type::seq(a.clone()), fresh()], a)
            }
            Set => {
                let a = fresh();
                (vec![Type::seq(a.clone()), fresh(), a.clone()], Type::seq(a))
            }
            Foldl => {
                let (a, b) = (fresh(), fresh());
                (
                    vec![
                        Type::arrows([a.clone(), b.clone()], a.clone()),
                        a.clone(),
                        Type::seq(b),
                    ],
                    a,
                )
            }
            Head => {
                let a = fresh();
                (vec![Type::seq(a.clone())], a)
            }
            Tail | Reverse => {
                let a = Type::seq(fresh());
                (vec![a.clone()], a)
            }
            Concat => {
                let a = Type::seq(fresh());
                (vec![a.clone(), a.clone()], a)
            }
            Subsequence => {
                let (a, ix) = (Type::seq(fresh()), fresh());
                (vec![a.clone(), ix.clone(), ix], a)
            }
            TensorGet => {
                let a = fresh();
                (vec![Type::tensor(a.clone()), Type::seq(fresh())], a)
            }
            TensorSet => {
                let a = fresh();
                (
                    vec![Type::tensor(a.clone()), Type::seq(fresh()), a],
                    Type::unit(),
                )
            }
            TensorLinearGet => {
                let a = fresh();
                (vec![Type::tensor(a.clone()), INT], a)
            }
            TensorLinearSet => {
                let a = fresh();
                (vec![Type::tensor(a.clone()), INT, a], Type::unit())
            }
            TensorRank => (vec![Type::tensor(fresh())], INT),
            TensorShape => (vec![Type::tensor(fresh())], Type::seq(INT)),
            TensorSub => {
                let t = Type::tensor(fresh());
                (vec![t.clone(), INT, INT], t)
            }
            TensorSlice => {
                let t = Type::tensor(fresh());
                (vec![t.clone(), Type::seq(INT)], t)
            }
            TensorGemm => {
                // `tensor_gemm(c, a, trans_a, b, trans_b, alpha, beta)`; inference makes the
                // element a float (`f64`, or `f32` from the captured tensors).
                let a = fresh();
                let t = Type::tensor(a.clone());
                (
                    vec![t.clone(), t.clone(), BOOL, t, BOOL, a.clone(), a],
                    Type::unit(),
                )
            }
            // `%` of floats, after monomorphization (Rust's `%`: C's `fmod`).
            RemF => (vec![FLOAT, FLOAT], FLOAT),
            NumAdd | NumSub | NumMul | NumDiv | NumRem => {
                let a = fresh();
                (vec![a.clone(), a.clone()], a)
            }
            NumNeg | NumAbs => {
                let a = fresh();
                (vec![a.clone()], a)
            }
            NumEq | NumNe | NumLt | NumLe | NumGt | NumGe => {
                let a = fresh();
                (vec![a.clone(), a], BOOL)
            }
            // `__set_field(r, r.l, v)`: `r` with its field `l` (the projection's label) set to
            // `v`. Made by the lowering of `r.l = v`; `mono` writes it as the record literal it
            // means, so no generator sees one.
            SetField => {
                let (r, a) = (fresh(), fresh());
                (vec![r.clone(), a.clone(), a], r)
            }
            NumAnd | NumOr | NumXor => {
                let a = fresh();
                (vec![a.clone(), a.clone()], a)
            }
            NumShl | NumShr => {
                let a = fresh();
                (vec![a.clone(), fresh()], a)
            }
            NumNot => {
                let a = fresh();
                (vec![a.clone()], a)
            }
            // Inference gives the operand its kind (a number or `bool`).
            As(n) => (vec![fresh()], Type::number(n)),
            // `s.len()`: inference makes the result Rust's type of a length ([`len_type`]).
            Len => (vec![Type::seq(fresh())], fresh()),
            // Inference gives these their kinds (`infer`): an integer or a float receiver.
            _ => match self.method() {
                Some((_, t)) => {
                    let a = fresh();
                    match t {
                        MethodType::Int { args }
                        | MethodType::Float { args }
                        | MethodType::NumWith { args } => (vec![a.clone(); args + 1], a),
                        MethodType::IntAmount | MethodType::FloatAmount => {
                            (vec![a.clone(), fresh()], a)
                        }
                        MethodType::FloatTest | MethodType::IntTest => (vec![a], BOOL),
                        MethodType::IntCount => (vec![a], Type::number(Number::U32)),
                        MethodType::Num => (vec![a.clone()], a),
                    }
                }
                None => unreachable!("every intrinsic has a signature"),
            },
        }
    }

    /// The type of this intrinsic's index or count in its parameter types `params` (from
    /// [`Intrinsic::signature`]), if it has one: a fresh variable that inference makes an integer
    /// of any type (`i64` when nothing fixes it), so that `s[i]` takes an `i: i32` as Rust's
    /// indexing takes a `usize`, and `create(n, f)` gives `f` an index of `n`'s type.
    pub fn index_type(self, params: &[Type]) -> Option<Type> {
        use Intrinsic::*;
        match (self, params) {
            (Get | Set | Subsequence, [_, ix, ..]) | (Create, [ix, ..]) => Some(ix.clone()),
            (TensorGet | TensorSet, [_, Type::Seq(ix), ..]) => Some((**ix).clone()),
            _ => None,
        }
    }

    /// The number of arguments.
    pub fn arity(self) -> usize {
        self.signature(&mut || Type::unit()).0.len()
    }

    /// The counterpart for the other numeric type (`addi` ↔ `addf`), for suggestions.
    pub fn numeric_twin(self) -> Option<Intrinsic> {
        let name = self.name();
        if name.starts_with("__") {
            return None;
        }
        let twin = if let Some(stem) = name.strip_suffix('i') {
            format!("{stem}f")
        } else {
            format!("{}i", name.strip_suffix('f')?)
        };
        Intrinsic::from_name(&twin)
    }
}

/// What a binary operator's operands must be, checked by inference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operands {
    /// Numbers of one type (any integer or float).
    Numbers,
    /// Values of one type that can be compared for equality (numbers and `bool`).
    Equality,
    /// Integers of one type, or `bool`s (`& | ^`).
    Bits,
    /// An integer of any type shifted by an integer of any type (`<< >>`).
    Shift,
}

/// A binary operator, resolved by the type of its operands after inference (`+` on `i64` is
/// `addi`, on `f64` it is `addf`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `&`
    BitAnd,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
}

/// One binary operator of the source language: its spelling, what its operands must be, and the
/// intrinsic it means at each operand type. The one table that type inference, monomorphization,
/// the pretty-printer and the generators' infix spellings read (the parser maps `syn`'s operators
/// to [`BinOp`] itself).
#[derive(Debug, Clone, Copy)]
pub struct Operator {
    /// The operator in the AST.
    pub op: BinOp,
    /// As written in Rust, and the infix spelling of its intrinsics in generated Rust and CUDA.
    pub symbol: &'static str,
    /// What its operands must be.
    pub operands: Operands,
    /// Whether the result is a `bool` (a comparison).
    pub comparison: bool,
    /// The intrinsic on `i64` (and on `i32` after instantiation).
    pub int: Intrinsic,
    /// The intrinsic on `f64`, if the operator applies to floats.
    pub float: Option<Intrinsic>,
    /// The intrinsic on `bool`, if the operator applies to `bool`.
    pub bool: Option<Intrinsic>,
    /// The operator before its operands' type is known: what the parser writes for `a op b`,
    /// and, after monomorphization, the operator on a number whose type comes from the captured
    /// values. The compiler's own (`__num_*`): users cannot name it.
    pub generic: Intrinsic,
}

/// One row of [`OPERATORS`], so that the table reads as a table.
#[allow(clippy::too_many_arguments)] // one argument per column
const fn row(
    op: BinOp,
    symbol: &'static str,
    operands: Operands,
    comparison: bool,
    int: Intrinsic,
    float: Option<Intrinsic>,
    bool: Option<Intrinsic>,
    generic: Intrinsic,
) -> Operator {
    Operator {
        op,
        symbol,
        operands,
        comparison,
        int,
        float,
        bool,
        generic,
    }
}

/// Every binary operator (`&&` and `||` are `if` expressions, unary `-` and `!` are `neg*` and
/// `not`).
#[rustfmt::skip]
pub const OPERATORS: &[Operator] = {
    use BinOp as B;
    use Intrinsic::*;
    use Operands::*;
    &[
        //   op     symbol operands  cmp    int   float       bool        generic
        row(B::Add, "+",  Numbers,  false, AddI, Some(AddF), None,       NumAdd),
        row(B::Sub, "-",  Numbers,  false, SubI, Some(SubF), None,       NumSub),
        row(B::Mul, "*",  Numbers,  false, MulI, Some(MulF), None,       NumMul),
        row(B::Div, "/",  Numbers,  false, DivI, Some(DivF), None,       NumDiv),
        row(B::Rem, "%",  Numbers,  false, ModI, Some(RemF), None,       NumRem),
        row(B::Eq,  "==", Equality, true,  EqI,  Some(EqF),  Some(EqB),  NumEq),
        row(B::Ne,  "!=", Equality, true,  NeqI, Some(NeqF), Some(NeqB), NumNe),
        row(B::Lt,  "<",  Numbers,  true,  LtI,  Some(LtF),  None,       NumLt),
        row(B::Le,  "<=", Numbers,  true,  LeqI, Some(LeqF), None,       NumLe),
        row(B::Gt,  ">",  Numbers,  true,  GtI,  Some(GtF),  None,       NumGt),
        row(B::Ge,  ">=", Numbers,  true,  GeqI, Some(GeqF), None,       NumGe),
        row(B::BitAnd, "&", Bits,   false, NumAnd, None,     Some(NumAnd), NumAnd),
        row(B::BitOr,  "|", Bits,   false, NumOr,  None,     Some(NumOr),  NumOr),
        row(B::BitXor, "^", Bits,   false, NumXor, None,     Some(NumXor), NumXor),
        row(B::Shl,  "<<", Shift,   false, NumShl, None,     None,         NumShl),
        row(B::Shr,  ">>", Shift,   false, NumShr, None,     None,         NumShr),
    ]
};

/// The row of `op` in [`OPERATORS`].
pub fn operator(op: BinOp) -> &'static Operator {
    OPERATORS
        .iter()
        .find(|o| o.op == op)
        .expect("OPERATORS has a row for every BinOp")
}

impl Intrinsic {
    /// The row of [`OPERATORS`] this intrinsic implements (`addi`, `addf` and `__num_add` are
    /// `+`), if it is a binary operator.
    pub fn operator(self) -> Option<&'static Operator> {
        OPERATORS.iter().find(|o| {
            o.int == self || o.float == Some(self) || o.bool == Some(self) || o.generic == self
        })
    }

    /// A generic operator on numbers (`__num_add` …) at its instantiated operand type: float
    /// or `bool` operands pick the row's `float`/`bool` intrinsic, others the `i64` one; `neg`
    /// and `abs` likewise. Other intrinsics are themselves.
    pub fn concrete(self, float: bool, boolean: bool) -> Intrinsic {
        if self == Intrinsic::NumNeg {
            return if float {
                Intrinsic::NegF
            } else {
                Intrinsic::NegI
            };
        }
        if self == Intrinsic::NumNot && boolean {
            return Intrinsic::Not;
        }
        if self == Intrinsic::NumAbs {
            return if float {
                Intrinsic::AbsF
            } else {
                Intrinsic::AbsI
            };
        }
        match self.operator() {
            Some(o) if o.generic == self => {
                let chosen = if float {
                    o.float
                } else if boolean {
                    o.bool
                } else {
                    None
                };
                chosen.unwrap_or(o.int)
            }
            _ => self,
        }
    }
}

/// A parallel keyword (paper, Figure "extensions": `map map2 reduce flatten` for Futhark,
/// `loop` for CUDA; beyond the paper Futhark's `scan`, `filter`, `scatter` and `hist`) or one of
/// the sequential loops legal inside kernels. (`create`, Futhark's `tabulate`, is an intrinsic
/// that classification counts as a parallel keyword too: [`crate::classify`].)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Keyword {
    /// `map(f, s)`.
    Map,
    /// `map2(f, a, b)`.
    Map2,
    /// `reduce(f, ne, s)`.
    Reduce,
    /// `flatten(s)`.
    Flatten,
    /// `scan(f, ne, s)`: the inclusive scan (Futhark's `scan`: element `i` is `f` over elements
    /// `0..=i`, starting from `ne`).
    Scan,
    /// `filter(p, s)`: the elements for which `p` holds, in order.
    Filter,
    /// `scatter(dest, is, vs)`: `dest` with `vs[j]` at `is[j]` (Futhark's `scatter`; indices
    /// outside `dest` skipped).
    Scatter,
    /// `hist(f, ne, k, is, vs)`: a histogram of `k` bins (Futhark's `hist`).
    Hist,
    /// `par_loop(n, f)`: the paper's `loop`.
    ParLoop,
    /// `seq_loop(n, f)`.
    SeqLoop,
    /// `seq_loop_acc(acc, n, f)`.
    SeqLoopAcc,
}

/// Which backend's class a keyword puts its site in (the paper's P_F and P_C).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeywordClass {
    /// A functional parallel keyword: Futhark (P_F).
    Functional,
    /// The imperative parallel keyword: CUDA (P_C).
    Imperative,
    /// A sequential loop: no class of its own.
    Sequential,
}

/// A keyword's facts, one row each in [`KEYWORDS`]: what the passes and the messages ask of it
/// (its types are [`Keyword::signature`]).
#[derive(Debug, Clone, Copy)]
pub struct KeywordRow {
    /// The keyword.
    pub keyword: Keyword,
    /// Its name inside `accelerate!`.
    pub name: &'static str,
    /// How it is written with its arguments, for messages.
    pub usage: &'static str,
    /// What its arguments must be, for the `help:` of a mismatched argument.
    pub parameters: &'static str,
    /// The backend class it gives its site.
    pub class: KeywordClass,
    /// Its function argument, if it takes one (`map`'s `f`, a loop's body).
    pub function: Option<FunctionArg>,
}

/// Which argument of a keyword is a function, and of how many parameters (a loop's body takes
/// the loop variable last: `seq_loop_acc`'s takes the accumulator, then the index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FunctionArg {
    /// The argument's position.
    pub index: usize,
    /// The function's parameters.
    pub params: usize,
}

/// Every keyword's row, in [`Keyword::ALL`]'s order.
pub const KEYWORDS: [KeywordRow; 11] = {
    use KeywordClass::*;
    const fn row(
        keyword: Keyword,
        name: &'static str,
        usage: &'static str,
        parameters: &'static str,
        class: KeywordClass,
        function: Option<(usize, usize)>,
    ) -> KeywordRow {
        let function = match function {
            Some((index, params)) => Some(FunctionArg { index, params }),
            None => None,
        };
        KeywordRow {
            keyword,
            name,
            usage,
            parameters,
            class,
            function,
        }
    }
    [
        row(
            Keyword::Map,
            "map",
            "map(f, s)",
            "`map(f, s)` takes a function `f` of one element of the sequence `s`",
            Functional,
            Some((0, 1)),
        ),
        row(
            Keyword::Map2,
            "map2",
            "map2(f, a, b)",
            "`map2(f, a, b)` takes a function `f` of an element of `a` and one of `b`",
            Functional,
            Some((0, 2)),
        ),
        row(
            Keyword::Reduce,
            "reduce",
            "reduce(f, ne, s)",
            "`reduce(f, ne, s)` takes an operator `f` of two elements of `s` returning one, \
                 and its neutral element `ne`, of the elements' type",
            Functional,
            Some((0, 2)),
        ),
        row(
            Keyword::Flatten,
            "flatten",
            "flatten(s)",
            "`flatten(s)` takes a sequence of sequences",
            Functional,
            None,
        ),
        row(
            Keyword::Scan,
            "scan",
            "scan(f, ne, s)",
            "`scan(f, ne, s)` takes an operator `f` of two elements of `s` returning one, \
                 and its neutral element `ne`, of the elements' type",
            Functional,
            Some((0, 2)),
        ),
        row(
            Keyword::Filter,
            "filter",
            "filter(p, s)",
            "`filter(p, s)` takes a predicate `p` of one element of `s` returning `bool` \
                 (write `|x| x % 2 == 1`, not `|x| x % 2`)",
            Functional,
            Some((0, 1)),
        ),
        row(
            Keyword::Scatter,
            "scatter",
            "scatter(dest, is, vs)",
            "`scatter(dest, is, vs)` takes `i64` indices `is` (convert others with `map`), \
                 and values `vs` of the type of `dest`'s elements",
            Functional,
            None,
        ),
        row(
            Keyword::Hist,
            "hist",
            "hist(f, ne, k, is, vs)",
            "`hist(f, ne, k, is, vs)` takes an operator `f` and neutral element `ne` of the \
                 values' type, a bin count `k: i64`, and `i64` or `i32` indices `is`",
            Functional,
            Some((0, 2)),
        ),
        row(
            Keyword::ParLoop,
            "par_loop",
            "par_loop(n, f)",
            "`par_loop(n, f)` takes a count `n` of an integer type and a function of an index \
                 of that type",
            Imperative,
            Some((1, 1)),
        ),
        row(
            Keyword::SeqLoop,
            "seq_loop",
            "seq_loop(n, f)",
            "`seq_loop(n, f)` takes a count `n` of an integer type and a function of an index \
                 of that type",
            Sequential,
            Some((1, 1)),
        ),
        row(
            Keyword::SeqLoopAcc,
            "seq_loop_acc",
            "seq_loop_acc(acc, n, f)",
            "`seq_loop_acc(acc, n, f)` takes an accumulator, a count `n` of an integer type \
                 and a function of the accumulator and an index of `n`'s type returning the \
                 accumulator",
            Sequential,
            Some((2, 2)),
        ),
    ]
};

impl Keyword {
    /// Every keyword.
    pub const ALL: &'static [Keyword] = &[
        Keyword::Map,
        Keyword::Map2,
        Keyword::Reduce,
        Keyword::Flatten,
        Keyword::Scan,
        Keyword::Filter,
        Keyword::Scatter,
        Keyword::Hist,
        Keyword::ParLoop,
        Keyword::SeqLoop,
        Keyword::SeqLoopAcc,
    ];

    /// Its row of facts.
    pub fn row(self) -> &'static KeywordRow {
        // `ALL` and `KEYWORDS` list the keywords in one order (a unit test checks it).
        &KEYWORDS[self as usize]
    }

    /// The name inside `accelerate!`.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// The keyword called `name`, if any.
    pub fn from_name(name: &str) -> Option<Keyword> {
        Keyword::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// How the keyword is written with its arguments, for messages.
    pub fn usage(self) -> &'static str {
        self.row().usage
    }

    /// What the keyword's arguments must be, for the `help:` of a mismatched argument.
    pub fn parameters(self) -> &'static str {
        self.row().parameters
    }

    /// The parameter types and result type (paper, reference implementation §2.1).
    pub fn signature(self, fresh: &mut dyn FnMut() -> Type) -> (Vec<Type>, Type) {
        const INT: Type = Type::INT;
        match self {
            Keyword::Map => {
                let (a, b) = (fresh(), fresh());
                (
                    vec![Type::arrow(a.clone(), b.clone()), Type::seq(a)],
                    Type::seq(b),
                )
            }
            Keyword::Map2 => {
                let (a, b, c) = (fresh(), fresh(), fresh());
                (
                    vec![
                        Type::arrows([a.clone(), b.clone()], c.clone()),
                        Type::seq(a),
                        Type::seq(b),
                    ],
                    Type::seq(c),
                )
            }
            Keyword::Reduce => {
                let a = fresh();
                (
                    vec![
                        Type::arrows([a.clone(), a.clone()], a.clone()),
                        a.clone(),
                        Type::seq(a.clone()),
                    ],
                    a,
                )
            }
            Keyword::Flatten => {
                let a = fresh();
                (vec![Type::seq(Type::seq(a.clone()))], Type::seq(a))
            }
            Keyword::Scan => {
                let a = fresh();
                (
                    vec![
                        Type::arrows([a.clone(), a.clone()], a.clone()),
                        a.clone(),
                        Type::seq(a.clone()),
                    ],
                    Type::seq(a),
                )
            }
            Keyword::Filter => {
                let a = fresh();
                (
                    vec![Type::arrow(a.clone(), Type::BOOL), Type::seq(a.clone())],
                    Type::seq(a),
                )
            }
            Keyword::Scatter => {
                // The indices are `i64`, as Futhark's.
                let a = fresh();
                (
                    vec![Type::seq(a.clone()), Type::seq(INT), Type::seq(a.clone())],
                    Type::seq(a),
                )
            }
            Keyword::Hist => {
                // The indices are an integer type (`i64` or `i32`): inference constrains the
                // fresh variable, so that an `i32` image indexes without a conversion.
                let (a, ix) = (fresh(), fresh());
                (
                    vec![
                        Type::arrows([a.clone(), a.clone()], a.clone()),
                        a.clone(),
                        INT,
                        Type::seq(ix),
                        Type::seq(a.clone()),
                    ],
                    Type::seq(a),
                )
            }
            // The count, and the index it gives, of any integer type (`index_type`).
            Keyword::ParLoop | Keyword::SeqLoop => {
                let ix = fresh();
                (
                    vec![ix.clone(), Type::arrow(ix, Type::unit())],
                    Type::unit(),
                )
            }
            Keyword::SeqLoopAcc => {
                let (a, ix) = (fresh(), fresh());
                (
                    vec![
                        a.clone(),
                        ix.clone(),
                        Type::arrows([a.clone(), ix], a.clone()),
                    ],
                    a,
                )
            }
        }
    }

    /// The type of this keyword's count or indices in its parameter types `params` (from
    /// [`Keyword::signature`]), if it has one: a fresh variable that inference makes an integer
    /// of any type (`i64` when nothing fixes it). The loop variable of `par_loop(n, |i| …)` has
    /// `n`'s type, as in Rust's `for i in 0..n`.
    pub fn index_type(self, params: &[Type]) -> Option<Type> {
        match (self, params) {
            (Keyword::ParLoop | Keyword::SeqLoop, [n, ..]) | (Keyword::SeqLoopAcc, [_, n, ..]) => {
                Some(n.clone())
            }
            (Keyword::Hist, [_, _, _, Type::Seq(ix), ..]) => Some((**ix).clone()),
            _ => None,
        }
    }

    /// The number of arguments.
    pub fn arity(self) -> usize {
        self.signature(&mut || Type::unit()).0.len()
    }

    /// Its function argument, if it takes one.
    pub fn function(self) -> Option<FunctionArg> {
        self.row().function
    }

    /// The body of a loop (`par_loop`, `seq_loop`, `seq_loop_acc`): a function of the loop
    /// variable, its last parameter.
    pub fn loop_body(self) -> Option<FunctionArg> {
        self.function().filter(|_| !self.is_functional())
    }

    /// Whether this is one of the functional parallel keywords (the paper's P_F: Futhark).
    pub fn is_functional(self) -> bool {
        self.row().class == KeywordClass::Functional
    }

    /// Whether this is the imperative parallel keyword (the paper's P_C: CUDA).
    pub fn is_imperative(self) -> bool {
        self.row().class == KeywordClass::Imperative
    }
}

/// Every name with a meaning of its own inside `accelerate!` (for "did you mean" suggestions).
pub fn all_names() -> impl Iterator<Item = &'static str> {
    Intrinsic::ALL
        .iter()
        .map(|i| i.name())
        .filter(|n| !n.starts_with("__"))
        .chain(Keyword::ALL.iter().map(|k| k.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operator_table_is_consistent() {
        use BinOp::*;
        let ops = [
            Add, Sub, Mul, Div, Rem, Eq, Ne, Lt, Le, Gt, Ge, BitAnd, BitOr, BitXor, Shl, Shr,
        ];
        assert_eq!(OPERATORS.len(), ops.len());
        for op in ops {
            let o = operator(op);
            assert_eq!(o.op, op);
            let mut fresh = || Type::Var(crate::types::TyVar(0));
            for i in [Some(o.int), o.float, o.bool, Some(o.generic)]
                .into_iter()
                .flatten()
            {
                // Each intrinsic belongs to exactly this row and takes two operands.
                assert_eq!(i.operator().map(|r| r.op), Some(op), "{}", i.name());
                let (params, result) = i.signature(&mut fresh);
                assert_eq!(params.len(), 2, "{}", i.name());
                assert_eq!(result == Type::BOOL, o.comparison, "{}", i.name());
            }
        }
        assert_eq!(operator(Add).generic.concrete(true, false), Intrinsic::AddF);
        assert_eq!(operator(Add).generic, Intrinsic::NumAdd);
        assert_eq!(Intrinsic::NumRem.concrete(false, false), Intrinsic::ModI);
        assert_eq!(operator(Eq).generic.concrete(false, true), Intrinsic::EqB);
        assert_eq!(Intrinsic::NumLe.concrete(true, false), Intrinsic::LeqF);
        assert_eq!(Intrinsic::NumNe.concrete(false, true), Intrinsic::NeqB);
        assert_eq!(Intrinsic::NumDiv.concrete(false, false), Intrinsic::DivI);
        assert_eq!(Intrinsic::NumNeg.concrete(true, false), Intrinsic::NegF);
        assert_eq!(Intrinsic::Sqrt.concrete(true, false), Intrinsic::Sqrt);
    }

    #[test]
    fn names_round_trip() {
        for &i in Intrinsic::ALL {
            let visible = if i.is_internal() { None } else { Some(i) };
            assert_eq!(Intrinsic::from_name(i.name()), visible);
        }
        for &k in Keyword::ALL {
            assert_eq!(Keyword::from_name(k.name()), Some(k));
            assert_eq!(k.row().keyword, k, "KEYWORDS is in Keyword::ALL's order");
        }
        assert_eq!(KEYWORDS.len(), Keyword::ALL.len());
    }

    #[test]
    fn arities() {
        assert_eq!(Intrinsic::AddI.arity(), 2);
        assert_eq!(Intrinsic::TensorSet.arity(), 3);
        assert_eq!(Intrinsic::TensorGemm.arity(), 7);
        assert_eq!(Keyword::SeqLoopAcc.arity(), 3);
        assert_eq!(Keyword::Flatten.arity(), 1);
    }

    #[test]
    fn function_arguments_are_functions_of_their_rows_arity() {
        for &k in Keyword::ALL {
            let (params, _) = k.signature(&mut || Type::Var(crate::types::TyVar(0)));
            for (i, p) in params.iter().enumerate() {
                match k.function().filter(|f| f.index == i) {
                    Some(f) => assert_eq!(p.split_arrows(usize::MAX).0.len(), f.params, "{k:?}"),
                    None => assert!(!p.is_arrow(), "{k:?} argument {i}"),
                }
            }
        }
    }

    #[test]
    fn numeric_twins() {
        assert_eq!(Intrinsic::AddI.numeric_twin(), Some(Intrinsic::AddF));
        assert_eq!(Intrinsic::MulF.numeric_twin(), Some(Intrinsic::MulI));
        assert_eq!(Intrinsic::LeqI.numeric_twin(), Some(Intrinsic::LeqF));
        assert_eq!(Intrinsic::ModI.numeric_twin(), None);
        assert_eq!(Intrinsic::Length.numeric_twin(), None);
    }
}

/// The user documentation lists exactly the intrinsics of the table, and every keyword.
#[cfg(test)]
mod doc_tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The names in backticks on the table row `| intrinsics | … |` of a document.
    fn documented_intrinsics(doc: &str) -> BTreeSet<String> {
        let row = doc
            .lines()
            .find(|l| l.contains("| intrinsics |"))
            .expect("the document has an `| intrinsics |` table row");
        row.split('`')
            .skip(1)
            .step_by(2)
            .flat_map(|names| names.split_whitespace())
            .map(str::to_owned)
            .collect()
    }

    fn docs() -> Vec<(&'static str, String)> {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        ["README.md", "pmexpr/src/lib.rs"]
            .into_iter()
            .map(|p| {
                let text = std::fs::read_to_string(format!("{root}/{p}"))
                    .unwrap_or_else(|e| panic!("read {p}: {e}"));
                (p, text)
            })
            .collect()
    }

    #[test]
    fn the_intrinsic_lists_in_the_docs_match_the_table() {
        let table: BTreeSet<String> = Intrinsic::ALL
            .iter()
            .filter(|i| !i.is_internal())
            .map(|i| i.name().to_owned())
            .collect();
        for (path, text) in docs() {
            let listed = documented_intrinsics(&text);
            let missing: Vec<_> = table.difference(&listed).collect();
            let unknown: Vec<_> = listed.difference(&table).collect();
            assert!(
                missing.is_empty() && unknown.is_empty(),
                "{path}: intrinsics missing from its list: {missing:?}; listed but not intrinsics: {unknown:?}"
            );
        }
    }

    #[test]
    fn every_keyword_is_documented() {
        for (path, text) in docs() {
            for k in Keyword::ALL {
                let call = format!("`{}(", k.name());
                assert!(
                    text.contains(&call),
                    "{path} does not document `{}`",
                    k.name()
                );
            }
        }
    }
}
