// ---- pmexpr CUDA prelude: shared by every generated module, needs no header ----
#ifndef PMEXPR_PRELUDE
#define PMEXPR_PRELUDE
#define PM_MAX_RANK @MAX_RANK@

// `()`: an empty struct, so that unit values can be stored and passed like any other.
struct pm_unit {};

// `[T]`: a read-only view of device memory (CUDA code never builds sequences).
template <typename T> struct pm_seq {
    const T* data;
    long long len;
};

// `Tensor[T]`: a row-major view; `tensor_sub`/`tensor_slice` make views of the same memory.
// `dims[rank..]` are 0 and `size` is the product of `dims[..rank]` (1 for rank 0).
template <typename T> struct pm_tensor {
    T* data;
    long long dims[PM_MAX_RANK];
    long long rank;
    long long size;
};

// The first failed runtime check of a launch: [0] the error code (0: none), [1] the check's
// number in the module, [2] and [3] the values involved. The host resets it before a launch and
// reads it after: a device cannot stop the program, so a failed check records itself here and
// the code goes on with a harmless value (never reading or writing out of bounds).
__device__ unsigned long long pmexpr_error[4];

enum pm_error_code {
    PM_DIVISION_BY_ZERO = 1,
    PM_SEQ_NEGATIVE_INDEX = 2,
    PM_SEQ_OUT_OF_BOUNDS = 3,
    PM_TENSOR_WRONG_RANK = 4,
    PM_TENSOR_BAD_INDEX = 5,
    PM_TENSOR_NEGATIVE_INDEX = 6,
    PM_TENSOR_OUT_OF_BOUNDS = 7,
    PM_SUB_NEGATIVE_OFFSET = 8,
    PM_SUB_NEGATIVE_LENGTH = 9,
    PM_SUB_OUT_OF_BOUNDS = 10,
    PM_NEVER = 11,
    PM_NO_MATCH = 12,
    PM_LITERAL_TOO_BIG = 13,
    PM_ISQRT_NEGATIVE = 14,
    PM_CLAMP_BOUNDS = 15,
    PM_CLAMP_BOUNDS_F64 = 16,
    PM_CLAMP_BOUNDS_F32 = 17,
    PM_DIVIDE_OVERFLOW = 18,
    PM_REMAINDER_OVERFLOW = 19,
    PM_ILOG_NOT_POSITIVE = 20
};

__device__ __noinline__ void pm_fail(int code, int check, long long a, long long b) {
    // First error wins: only the thread that moves the code from 0 writes the details.
    if (atomicCAS(&pmexpr_error[0], 0ULL, (unsigned long long)code) == 0ULL) {
        pmexpr_error[1] = (unsigned long long)check;
        pmexpr_error[2] = (unsigned long long)a;
        pmexpr_error[3] = (unsigned long long)b;
    }
}

// Keeps a parameter out of template argument deduction: the element type comes from the tensor.
template <typename T> struct pm_same { typedef T type; };

template <typename T> __device__ __forceinline__ T pm_fail_value(int code, int check) {
    pm_fail(code, check, 0, 0);
    return T();
}

// Integer arithmetic wraps like Rust's wrapping_* (signed overflow is undefined in C++, unsigned
// arithmetic is modular).
__device__ __forceinline__ long long pm_addi(long long a, long long b) {
    return (long long)((unsigned long long)a + (unsigned long long)b);
}
__device__ __forceinline__ long long pm_subi(long long a, long long b) {
    return (long long)((unsigned long long)a - (unsigned long long)b);
}
__device__ __forceinline__ long long pm_muli(long long a, long long b) {
    return (long long)((unsigned long long)a * (unsigned long long)b);
}
__device__ __forceinline__ long long pm_negi(long long a) {
    return (long long)(0ULL - (unsigned long long)a);
}
// `abs` wraps at MIN, as Rust's `wrapping_abs`.
__device__ __forceinline__ long long pm_absi(long long a) {
    return a < 0 ? pm_negi(a) : a;
}
// Division truncates toward zero (C++11 and Rust agree); MIN / -1 and MIN % -1 fail, as Rust
// panics (C's are undefined).
__device__ __forceinline__ long long pm_divi(int check, long long a, long long b) {
    if (b == 0) { pm_fail(PM_DIVISION_BY_ZERO, check, a, b); return 0; }
    if (b == -1) {
        if (a == (-9223372036854775807LL - 1LL)) { pm_fail(PM_DIVIDE_OVERFLOW, check, a, b); return 0; }
        return pm_negi(a);
    }
    return a / b;
}
__device__ __forceinline__ long long pm_modi(int check, long long a, long long b) {
    if (b == 0) { pm_fail(PM_DIVISION_BY_ZERO, check, a, b); return 0; }
    if (b == -1) {
        if (a == (-9223372036854775807LL - 1LL)) { pm_fail(PM_REMAINDER_OVERFLOW, check, a, b); }
        return 0;
    }
    return a % b;
}
// The same for `i32` (`int`): 32-bit wrapping, as Rust's `i32` wraps.
__device__ __forceinline__ int pm_addi32(int a, int b) {
    return (int)((unsigned)a + (unsigned)b);
}
__device__ __forceinline__ int pm_subi32(int a, int b) {
    return (int)((unsigned)a - (unsigned)b);
}
__device__ __forceinline__ int pm_muli32(int a, int b) {
    return (int)((unsigned)a * (unsigned)b);
}
__device__ __forceinline__ int pm_negi32(int a) {
    return (int)(0U - (unsigned)a);
}
__device__ __forceinline__ int pm_absi32(int a) {
    return a < 0 ? pm_negi32(a) : a;
}
__device__ __forceinline__ int pm_divi32(int check, int a, int b) {
    if (b == 0) { pm_fail(PM_DIVISION_BY_ZERO, check, a, b); return 0; }
    if (b == -1) {
        if (a == (-2147483647 - 1)) { pm_fail(PM_DIVIDE_OVERFLOW, check, a, b); return 0; }
        return pm_negi32(a);
    }
    return a / b;
}
// The limits of each integer C type (`isize` and `usize` are `long long` and
// `unsigned long long`), and the unsigned type its wrapping arithmetic is done in: at least
// `unsigned`, since C++ promotes a narrower operand to a signed `int`, whose overflow (of
// `unsigned short * unsigned short`, say) is undefined.
template <typename T> struct pm_int;
#define PM_INT(T, ARITH, MINV, MAXV)                                                             \
template <> struct pm_int<T> {                                                                  \
    typedef ARITH arith;                                                                        \
    static __device__ __forceinline__ T min() { return MINV; }                                  \
    static __device__ __forceinline__ T max() { return MAXV; }                                  \
};
PM_INT(signed char, unsigned, (-127 - 1), 127)
PM_INT(short, unsigned, (-32767 - 1), 32767)
PM_INT(int, unsigned, (-2147483647 - 1), 2147483647)
PM_INT(long long, unsigned long long, (-9223372036854775807LL - 1LL), 9223372036854775807LL)
PM_INT(unsigned char, unsigned, 0, 255)
PM_INT(unsigned short, unsigned, 0, 65535)
PM_INT(unsigned int, unsigned, 0U, 4294967295U)
PM_INT(unsigned long long, unsigned long long, 0ULL, 18446744073709551615ULL)
#undef PM_INT
// The other integer types' arithmetic (`i8`, `u16`, `usize`, …): wrapping as Rust's release
// build; `/ 0`, `% 0`, and `MIN / -1`, `MIN % -1` of a signed type (`T(-1)` is negative) are
// errors, as Rust panics.
template <typename T> __device__ __forceinline__ T pm_wadd(T a, T b) {
    typedef typename pm_int<T>::arith U;
    return (T)((U)a + (U)b);
}
template <typename T> __device__ __forceinline__ T pm_wsub(T a, T b) {
    typedef typename pm_int<T>::arith U;
    return (T)((U)a - (U)b);
}
template <typename T> __device__ __forceinline__ T pm_wmul(T a, T b) {
    typedef typename pm_int<T>::arith U;
    return (T)((U)a * (U)b);
}
template <typename T> __device__ __forceinline__ T pm_wneg(T a) {
    typedef typename pm_int<T>::arith U;
    return (T)((U)0 - (U)a);
}
template <typename T> __device__ __forceinline__ T pm_wabs(T a) {
    return a < (T)0 ? pm_wneg(a) : a;
}
template <typename T> __device__ __forceinline__ T pm_wdiv(int check, T a, T b) {
    if (b == (T)0) { pm_fail(PM_DIVISION_BY_ZERO, check, (long long)a, (long long)b); return 0; }
    if ((T)-1 < (T)0 && b == (T)-1) {
        if (a == pm_int<T>::min()) { pm_fail(PM_DIVIDE_OVERFLOW, check, (long long)a, (long long)b); return 0; }
        return pm_wneg(a);
    }
    return (T)(a / b);
}
template <typename T> __device__ __forceinline__ T pm_wmod(int check, T a, T b) {
    if (b == (T)0) { pm_fail(PM_DIVISION_BY_ZERO, check, (long long)a, (long long)b); return 0; }
    if ((T)-1 < (T)0 && b == (T)-1) {
        if (a == pm_int<T>::min()) { pm_fail(PM_REMAINDER_OVERFLOW, check, (long long)a, (long long)b); }
        return 0;
    }
    return (T)(a % b);
}
// An integer literal that does not fit the number type the captured values gave it (the CPU
// targets check it when they evaluate it, too): [2] the literal, [3] the type's bits.
template <typename T> __device__ __forceinline__ T pm_literal_too_big(int check, long long v) {
    pm_fail(PM_LITERAL_TOO_BIG, check, v, (long long)(8 * sizeof(T)));
    return T();
}
// `floorfi`, saturating like Rust's `as i64` (NaN gives 0); the C++ conversion would be undefined.
__device__ __forceinline__ long long pm_floorfi(double x) {
    if (x != x) return 0;
    if (x >= 9223372036854775808.0) return 9223372036854775807LL;
    if (x < -9223372036854775808.0) return -9223372036854775807LL - 1LL;
    return (long long)floor(x);
}

template <typename T> __device__ __forceinline__ T pm_get(int check, pm_seq<T> s, long long i) {
    if ((unsigned long long)i >= (unsigned long long)s.len) {
        pm_fail(i < 0 ? PM_SEQ_NEGATIVE_INDEX : PM_SEQ_OUT_OF_BOUNDS, check, i, s.len);
        return T();
    }
    return s.data[i];
}

// The row-major position of a full index (of any integer type), or -1 after recording the error.
template <typename T, typename I>
__device__ long long pm_tensor_offset(int check, const pm_tensor<T>& t, const I* ix, long long k) {
    if (k != t.rank) { pm_fail(PM_TENSOR_WRONG_RANK, check, k, t.rank); return -1; }
    long long ofs = 0;
    for (long long d = 0; d < k; ++d) {
        const long long i = (long long)ix[d];
        if ((unsigned long long)i >= (unsigned long long)t.dims[d]) {
            pm_fail(PM_TENSOR_BAD_INDEX, check, d, i);
            return -1;
        }
        ofs = ofs * t.dims[d] + i;
    }
    return ofs;
}
template <typename T, typename... I> __device__ __forceinline__ T pm_tensor_get(int check, pm_tensor<T> t, I... ix) {
    const long long idx[sizeof...(I) + 1] = {(long long)ix..., 0};
    long long o = pm_tensor_offset(check, t, idx, (long long)sizeof...(I));
    return o < 0 ? T() : t.data[o];
}
template <typename T, typename I> __device__ __forceinline__ T pm_tensor_get_seq(int check, pm_tensor<T> t, pm_seq<I> ix) {
    long long o = pm_tensor_offset(check, t, ix.data, ix.len);
    return o < 0 ? T() : t.data[o];
}
template <typename T, typename... I> __device__ __forceinline__ void pm_tensor_set(int check, pm_tensor<T> t, typename pm_same<T>::type v, I... ix) {
    const long long idx[sizeof...(I) + 1] = {(long long)ix..., 0};
    long long o = pm_tensor_offset(check, t, idx, (long long)sizeof...(I));
    if (o >= 0) t.data[o] = v;
}
template <typename T, typename I> __device__ __forceinline__ void pm_tensor_set_seq(int check, pm_tensor<T> t, pm_seq<I> ix, typename pm_same<T>::type v) {
    long long o = pm_tensor_offset(check, t, ix.data, ix.len);
    if (o >= 0) t.data[o] = v;
}
template <typename T> __device__ __forceinline__ T pm_tensor_linear_get(int check, pm_tensor<T> t, long long i) {
    if ((unsigned long long)i >= (unsigned long long)t.size) {
        pm_fail(i < 0 ? PM_TENSOR_NEGATIVE_INDEX : PM_TENSOR_OUT_OF_BOUNDS, check, i, t.size);
        return T();
    }
    return t.data[i];
}
template <typename T> __device__ __forceinline__ void pm_tensor_linear_set(int check, pm_tensor<T> t, long long i, typename pm_same<T>::type v) {
    if ((unsigned long long)i >= (unsigned long long)t.size) {
        pm_fail(i < 0 ? PM_TENSOR_NEGATIVE_INDEX : PM_TENSOR_OUT_OF_BOUNDS, check, i, t.size);
        return;
    }
    t.data[i] = v;
}
// `get(tensor_shape(t), k)` without building the sequence.
template <typename T> __device__ __forceinline__ long long pm_tensor_dim(int check, pm_tensor<T> t, long long k) {
    if ((unsigned long long)k >= (unsigned long long)t.rank) {
        pm_fail(k < 0 ? PM_SEQ_NEGATIVE_INDEX : PM_SEQ_OUT_OF_BOUNDS, check, k, t.rank);
        return 0;
    }
    return t.dims[k];
}
// `tensor_sub t ofs len`: rows ofs..ofs+len of the first dimension. On an error the view is `t`
// itself, which stays within the tensor's memory.
template <typename T> __device__ pm_tensor<T> pm_tensor_sub(int check, pm_tensor<T> t, long long ofs, long long len) {
    if (ofs < 0) { pm_fail(PM_SUB_NEGATIVE_OFFSET, check, ofs, len); return t; }
    if (len < 0) { pm_fail(PM_SUB_NEGATIVE_LENGTH, check, ofs, len); return t; }
    if (t.rank == 0 || (unsigned long long)ofs + (unsigned long long)len > (unsigned long long)t.dims[0]) {
        pm_fail(PM_SUB_OUT_OF_BOUNDS, check, ofs, len);
        return t;
    }
    long long stride = 1;
    for (long long d = 1; d < t.rank; ++d) stride *= t.dims[d];
    pm_tensor<T> r = t;
    r.data = t.data + ofs * stride;
    r.dims[0] = len;
    r.size = len * stride;
    return r;
}
// `tensor_slice t [i, …]`: the leading indices fixed; the rank decreases by their number.
template <typename T>
__device__ pm_tensor<T> pm_tensor_slice_n(int check, pm_tensor<T> t, const long long* ix, long long k) {
    if (k > t.rank) { pm_fail(PM_TENSOR_WRONG_RANK, check, k, t.rank); return t; }
    long long ofs = 0;
    for (long long d = 0; d < k; ++d) {
        if ((unsigned long long)ix[d] >= (unsigned long long)t.dims[d]) {
            pm_fail(PM_TENSOR_BAD_INDEX, check, d, ix[d]);
            return t;
        }
        ofs = ofs * t.dims[d] + ix[d];
    }
    long long stride = 1;
    for (long long d = k; d < t.rank; ++d) stride *= t.dims[d];
    pm_tensor<T> r;
    r.data = t.data + ofs * stride;
    for (long long d = 0; d < PM_MAX_RANK; ++d) r.dims[d] = d + k < t.rank ? t.dims[d + k] : 0;
    r.rank = t.rank - k;
    r.size = stride;
    return r;
}
template <typename T, typename... I> __device__ __forceinline__ pm_tensor<T> pm_tensor_slice(int check, pm_tensor<T> t, I... ix) {
    const long long idx[sizeof...(I) + 1] = {(long long)ix..., 0};
    return pm_tensor_slice_n(check, t, idx, (long long)sizeof...(I));
}
template <typename T> __device__ __forceinline__ pm_tensor<T> pm_tensor_slice_seq(int check, pm_tensor<T> t, pm_seq<long long> ix) {
    return pm_tensor_slice_n(check, t, ix.data, ix.len);
}

// `tensor_gemm(c, a, ta, b, tb, alpha, beta)` in host code: c := alpha · op(a) · op(b) + beta · c
// with one element of `c` per index in 0..n (n = the elements of `c`). The host checked the
// ranks, the shapes and that `c` shares no memory with `a` or `b` before the launch. Each element
// sums over `l` in order, and (without contraction, `--fmad=false`) gives the sequential
// meaning's result bit for bit; consecutive indices read consecutive columns of `op(b)`.
template <typename T>
__device__ void pm_gemm(pm_tensor<T> c, pm_tensor<T> a, bool ta, pm_tensor<T> b, bool tb, T alpha, T beta, long long n) {
    const long long cols = c.dims[1];
    const long long k = ta ? a.dims[0] : a.dims[1];
    // Row and column strides of op(a) ([m, k]) and op(b) ([k, n]) in row-major storage.
    const long long a_rs = ta ? 1 : a.dims[1], a_cs = ta ? a.dims[1] : 1;
    const long long b_rs = tb ? 1 : b.dims[1], b_cs = tb ? b.dims[1] : 1;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += stride) {
        const long long i = idx / cols, j = idx % cols;
        const T* ap = a.data + i * a_rs;
        const T* bp = b.data + j * b_cs;
        T acc = T(0);
        for (long long l = 0; l < k; ++l) acc = acc + ap[l * a_cs] * bp[l * b_rs];
        // As in the meaning, `beta == 0` does not read `c`.
        c.data[idx] = beta == T(0) ? alpha * acc : alpha * acc + beta * c.data[idx];
    }
}
// ---- Rust's bit operators, `as` and numeric methods (`pm_shl`, `pm_as_i64`, `pm_m_*`), with
// Rust's results: shifts masked to the width as a release build does (C's shift by the width or
// more is undefined, and so is a left shift of a negative number: done on the unsigned type);
// `>>` on a signed integer is arithmetic.
// `T`'s bits are read zero-extended (`(U)(UT)a`: `UT` is the unsigned type of `T`'s width, `U`
// the type of its arithmetic), so that a narrow negative value has only its own bits.
#define PM_INT_OPS(T, UT, U, BITS)                                                              \
template <typename N> __device__ __forceinline__ T pm_shl(T a, N n) {                          \
    return (T)((U)a << ((unsigned)n & (BITS - 1)));                                             \
}                                                                                               \
template <typename N> __device__ __forceinline__ T pm_shr(T a, N n) {                          \
    return a >> ((unsigned)n & (BITS - 1));                                                     \
}                                                                                               \
__device__ __forceinline__ unsigned int pm_m_count_ones(T a) {                                  \
    U x = (U)(UT)a; unsigned int c = 0;                                                         \
    while (x) { c += (unsigned int)(x & 1u); x >>= 1; }                                         \
    return c;                                                                                   \
}                                                                                               \
__device__ __forceinline__ unsigned int pm_m_leading_zeros(T a) {                               \
    U x = (U)(UT)a; unsigned int c = 0;                                                         \
    for (int k = BITS - 1; k >= 0 && !((x >> k) & 1u); --k) ++c;                                \
    return c;                                                                                   \
}                                                                                               \
__device__ __forceinline__ unsigned int pm_m_trailing_zeros(T a) {                              \
    U x = (U)(UT)a; unsigned int c = 0;                                                         \
    for (int k = 0; k < BITS && !((x >> k) & 1u); ++k) ++c;                                     \
    return c;                                                                                   \
}                                                                                               \
__device__ __forceinline__ T pm_m_reverse_bits(T a) {                                           \
    U x = (U)(UT)a, r = 0;                                                                          \
    for (int k = 0; k < BITS; ++k) { r = (r << 1) | (x & 1u); x >>= 1; }                        \
    return (T)r;                                                                                \
}                                                                                               \
__device__ __forceinline__ T pm_m_swap_bytes(T a) {                                             \
    U x = (U)(UT)a, r = 0;                                                                          \
    for (int k = 0; k < BITS / 8; ++k) { r = (r << 8) | (x & 0xffu); x >>= 8; }                 \
    return (T)r;                                                                                \
}                                                                                               \
template <typename N> __device__ __forceinline__ T pm_m_rotate_left(T a, N n) {                \
    unsigned k = (unsigned)n & (BITS - 1);                                                      \
    U x = (U)(UT)a;                                                                             \
    return k == 0 ? a : (T)((x << k) | (x >> (BITS - k)));                                      \
}                                                                                               \
template <typename N> __device__ __forceinline__ T pm_m_rotate_right(T a, N n) {               \
    unsigned k = (unsigned)n & (BITS - 1);                                                      \
    U x = (U)(UT)a;                                                                             \
    return k == 0 ? a : (T)((x >> k) | (x << (BITS - k)));                                      \
}                                                                                               \
__device__ __forceinline__ T pm_m_wrapping_add(T a, T b) { return (T)((U)a + (U)b); }           \
__device__ __forceinline__ T pm_m_wrapping_sub(T a, T b) { return (T)((U)a - (U)b); }           \
__device__ __forceinline__ T pm_m_wrapping_mul(T a, T b) { return (T)((U)a * (U)b); }           \
__device__ __forceinline__ T pm_m_wrapping_neg(T a) { return (T)(0u - (U)a); }            \
/* The complement back in T (C computes `~` of a narrow type in `int`). */                    \
__device__ __forceinline__ unsigned int pm_m_count_zeros(T a) { return pm_m_count_ones((T)~a); } \
__device__ __forceinline__ unsigned int pm_m_leading_ones(T a) { return pm_m_leading_zeros((T)~a); } \
__device__ __forceinline__ unsigned int pm_m_trailing_ones(T a) { return pm_m_trailing_zeros((T)~a); } \
template <typename N> __device__ __forceinline__ T pm_m_wrapping_shl(T a, N n) { return pm_shl(a, n); } \
template <typename N> __device__ __forceinline__ T pm_m_wrapping_shr(T a, N n) { return pm_shr(a, n); }
// Saturating arithmetic and `signum` of a signed type ...
#define PM_SIGNED_OPS(T, U, MINV, MAXV)                                                         \
__device__ __forceinline__ T pm_m_saturating_add(T a, T b) {                                    \
    T r = (T)((U)a + (U)b);                                                                     \
    if (((a ^ r) & (b ^ r)) < 0) return a < 0 ? MINV : MAXV;                                    \
    return r;                                                                                   \
}                                                                                               \
__device__ __forceinline__ T pm_m_saturating_sub(T a, T b) {                                    \
    T r = (T)((U)a - (U)b);                                                                     \
    if (((a ^ b) & (a ^ r)) < 0) return a < 0 ? MINV : MAXV;                                    \
    return r;                                                                                   \
}                                                                                               \
__device__ __forceinline__ T pm_m_saturating_mul(T a, T b) {                                    \
    if (a == 0 || b == 0) return 0;                                                             \
    T sat = ((a < 0) != (b < 0)) ? MINV : MAXV;                                                 \
    if ((a == -1 && b == MINV) || (b == -1 && a == MINV)) return sat;                           \
    T r = (T)((U)a * (U)b);                                                                     \
    if (r / b != a) return sat;                                                                 \
    return r;                                                                                   \
}                                                                                               \
__device__ __forceinline__ T pm_m_signum(T a) { return a > 0 ? 1 : (a < 0 ? -1 : 0); }
// ... and of an unsigned one (no `signum` in Rust; the generic one gives 0 or 1).
#define PM_UNSIGNED_OPS(T, U, MAXV)                                                             \
__device__ __forceinline__ T pm_m_saturating_add(T a, T b) {                                    \
    T r = (T)((U)a + (U)b);                                                                     \
    return r < a ? MAXV : r;                                                                    \
}                                                                                               \
__device__ __forceinline__ T pm_m_saturating_sub(T a, T b) { return a < b ? 0 : (T)(a - b); }   \
__device__ __forceinline__ T pm_m_saturating_mul(T a, T b) {                                    \
    T r = (T)((U)a * (U)b);                                                                     \
    if (a != 0 && (T)(r / a) != b) return MAXV;                                                 \
    return r;                                                                                   \
}                                                                                               \
__device__ __forceinline__ T pm_m_signum(T a) { return a > 0 ? 1 : 0; }
PM_INT_OPS(long long, unsigned long long, unsigned long long, 64)
PM_INT_OPS(int, unsigned, unsigned, 32)
PM_INT_OPS(signed char, unsigned char, unsigned, 8)
PM_INT_OPS(short, unsigned short, unsigned, 16)
PM_INT_OPS(unsigned char, unsigned char, unsigned, 8)
PM_INT_OPS(unsigned short, unsigned short, unsigned, 16)
PM_INT_OPS(unsigned int, unsigned int, unsigned, 32)
PM_INT_OPS(unsigned long long, unsigned long long, unsigned long long, 64)
PM_SIGNED_OPS(long long, unsigned long long, (-9223372036854775807LL - 1LL), 9223372036854775807LL)
PM_SIGNED_OPS(int, unsigned, (-2147483647 - 1), 2147483647)
PM_SIGNED_OPS(signed char, unsigned, (-127 - 1), 127)
PM_SIGNED_OPS(short, unsigned, (-32767 - 1), 32767)
PM_UNSIGNED_OPS(unsigned char, unsigned, 255)
PM_UNSIGNED_OPS(unsigned short, unsigned, 65535)
PM_UNSIGNED_OPS(unsigned int, unsigned, 4294967295U)
PM_UNSIGNED_OPS(unsigned long long, unsigned long long, 18446744073709551615ULL)
#undef PM_INT_OPS
#undef PM_SIGNED_OPS
#undef PM_UNSIGNED_OPS

// `as`, Rust's: between integers truncation, sign or zero extension (C++'s conversions, modular
// on every compiler pmexpr uses); an integer to a float rounded to the nearest (the default
// rounding of the conversion); `f64` to `f32` rounded to the nearest; `true` is 1. A float to
// an integer truncates toward zero and saturates, NaN giving 0: the C++ conversion of a value
// out of range is undefined, so the bounds are tested first (`MAX + 1` is a power of two, so
// exactly a float; `MIN` is 0 or minus one).
template <typename T, typename F> __device__ __forceinline__ T pm_sat(F x) {
    if (x != x) return 0;
    if (x <= (F)pm_int<T>::min()) return pm_int<T>::min();
    if (x >= (F)(pm_int<T>::max() / 2 + 1) * (F)2) return pm_int<T>::max();
    return (T)x;
}
template <typename T, typename F> struct pm_cast {
    static __device__ __forceinline__ T of(F x) { return (T)x; }
};
template <typename T> struct pm_cast<T, double> {
    static __device__ __forceinline__ T of(double x) { return pm_sat<T, double>(x); }
};
template <typename T> struct pm_cast<T, float> {
    static __device__ __forceinline__ T of(float x) { return pm_sat<T, float>(x); }
};
template <> struct pm_cast<double, double> {
    static __device__ __forceinline__ double of(double x) { return x; }
};
template <> struct pm_cast<float, double> {
    static __device__ __forceinline__ float of(double x) { return (float)x; }
};
template <> struct pm_cast<double, float> {
    static __device__ __forceinline__ double of(float x) { return (double)x; }
};
template <> struct pm_cast<float, float> {
    static __device__ __forceinline__ float of(float x) { return x; }
};
template <typename T, typename F> __device__ __forceinline__ T pm_as(F x) {
    return pm_cast<T, F>::of(x);
}

// The float methods: C's functions of the same meaning (`round` is half away from zero as
// Rust's, `fma` fused as `mul_add`), and Rust's definitions where C has none.
#define PM_FLOAT_OPS(T, SUF, PI_OVER_180, D180_OVER_PI)                                          \
__device__ __forceinline__ T pm_m_floor(T x) { return floor##SUF(x); }                          \
__device__ __forceinline__ T pm_m_ceil(T x) { return ceil##SUF(x); }                            \
__device__ __forceinline__ T pm_m_round(T x) { return round##SUF(x); }                          \
__device__ __forceinline__ T pm_m_trunc(T x) { return trunc##SUF(x); }                          \
__device__ __forceinline__ T pm_m_fract(T x) { return x - trunc##SUF(x); }                      \
__device__ __forceinline__ T pm_m_cbrt(T x) { return cbrt##SUF(x); }                            \
__device__ __forceinline__ T pm_m_exp2(T x) { return exp2##SUF(x); }                            \
__device__ __forceinline__ T pm_m_log2(T x) { return log2##SUF(x); }                            \
__device__ __forceinline__ T pm_m_log10(T x) { return log10##SUF(x); }                          \
__device__ __forceinline__ T pm_m_tan(T x) { return tan##SUF(x); }                              \
__device__ __forceinline__ T pm_m_asin(T x) { return asin##SUF(x); }                            \
__device__ __forceinline__ T pm_m_acos(T x) { return acos##SUF(x); }                            \
__device__ __forceinline__ T pm_m_atan(T x) { return atan##SUF(x); }                            \
__device__ __forceinline__ T pm_m_atan2(T y, T x) { return atan2##SUF(y, x); }                  \
__device__ __forceinline__ T pm_m_sinh(T x) { return sinh##SUF(x); }                            \
__device__ __forceinline__ T pm_m_cosh(T x) { return cosh##SUF(x); }                            \
__device__ __forceinline__ T pm_m_tanh(T x) { return tanh##SUF(x); }                            \
__device__ __forceinline__ T pm_m_hypot(T x, T y) { return hypot##SUF(x, y); }                  \
__device__ __forceinline__ T pm_m_mul_add(T x, T a, T b) { return fma##SUF(x, a, b); }          \
__device__ __forceinline__ bool pm_m_is_nan(T x) { return x != x; }                             \
__device__ __forceinline__ bool pm_m_is_finite(T x) { return (x - x) == (T)0; }                 \
__device__ __forceinline__ T pm_m_to_radians(T x) { return x * (PI_OVER_180); }                 \
__device__ __forceinline__ T pm_m_to_degrees(T x) { return x * (D180_OVER_PI); }                \
__device__ __forceinline__ T pm_m_signum(T x) {                                                 \
    if (x != x) return x;                                                                       \
    return copysign##SUF((T)1, x);                                                              \
}                                                                                               \
__device__ __forceinline__ T pm_m_recip(T x) { return (T)1 / x; }                               \
__device__ __forceinline__ bool pm_m_is_infinite(T x) { return x == x && (x - x) != (x - x); }  \
__device__ __forceinline__ T pm_m_copysign(T x, T s) { return copysign##SUF(x, s); }            \
__device__ __forceinline__ T pm_m_exp_m1(T x) { return expm1##SUF(x); }                         \
__device__ __forceinline__ T pm_m_ln_1p(T x) { return log1p##SUF(x); }                          \
__device__ __forceinline__ T pm_m_log(T x, T b) { return log##SUF(x) / log##SUF(b); }           \
/* Rust's definitions on C's `log1p`, `hypot`, `sqrt` and `log` (C's own `asinh` is finite at */ \
/* MAX, where Rust's overflows). */                                                              \
__device__ __forceinline__ T pm_m_asinh(T x) {                                                  \
    T ax = fabs##SUF(x), ix = (T)1 / ax;                                                        \
    return copysign##SUF(log1p##SUF(ax + ax / (hypot##SUF((T)1, ix) + ix)), x);                 \
}                                                                                               \
__device__ __forceinline__ T pm_m_acosh(T x) {                                                  \
    if (x < (T)1) return (x - x) / (x - x);                                                     \
    return log##SUF(x + sqrt##SUF(x - (T)1) * sqrt##SUF(x + (T)1));                             \
}                                                                                               \
__device__ __forceinline__ T pm_m_atanh(T x) {                                                  \
    return (T)0.5 * log1p##SUF(((T)2 * x) / ((T)1 - x));                                        \
}                                                                                               \
/* `rint` in the default rounding mode, to nearest with ties to even. */                      \
__device__ __forceinline__ T pm_m_round_ties_even(T x) { return rint##SUF(x); }                 \
/* Rust's definitions on `%` (C's `fmod`); floats never fail. */                               \
__device__ __forceinline__ T pm_m_rem_euclid(int check, T a, T b) {                             \
    T r = fmod##SUF(a, b);                                                                      \
    return r < (T)0 ? r + fabs##SUF(b) : r;                                                     \
}                                                                                               \
__device__ __forceinline__ T pm_m_div_euclid(int check, T a, T b) {                             \
    T q = trunc##SUF(a / b);                                                                    \
    if (fmod##SUF(a, b) < (T)0) return b > (T)0 ? q - (T)1 : q + (T)1;                          \
    return q;                                                                                   \
}
// Rust's constants: `PI / 180.0` and `180.0 / PI` in `f64`; in `f32` `PI / 180.0` computed in
// `f32` and `180/π` rounded to `f32`.
PM_FLOAT_OPS(double, , (3.141592653589793 / 180.0), (180.0 / 3.141592653589793))
PM_FLOAT_OPS(float, f, (3.14159265358979323846f / 180.0f), 57.2957795130823208767981548141051703f)
#undef PM_FLOAT_OPS

// ---- More of Rust's numeric methods (`pm_m_pow`, `pm_m_isqrt` …), with Rust's results on
// every integer type (SIGNED: 1 or 0); where Rust panics (`isqrt` of a negative number, division
// by zero, `clamp` with `min > max`) a failed check, as `pm_divi`'s. Unsigned arithmetic (U, at
// least 32 bits) where Rust's wraps.
#define PM_INT_METHODS(T, UT, U, BITS, SIGNED)                                                  \
template <typename N> __device__ __forceinline__ T pm_m_pow(T a, N n) {                         \
    /* `wrapping_pow(n as u32)`: square and multiply, modular in U. */                          \
    unsigned e = (unsigned)n;                                                                   \
    U b = (U)a, r = 1;                                                                          \
    while (e) { if (e & 1u) r = (U)(r * b); b = (U)(b * b); e >>= 1; }                          \
    return (T)r;                                                                                \
}                                                                                               \
__device__ __forceinline__ T pm_m_isqrt(int check, T a) {                                       \
    if (a < 0) { pm_fail(PM_ISQRT_NEGATIVE, check, (long long)a, 0); return 0; }                 \
    /* Digit by digit from the highest power of four: exact, no overflow, no float. */         \
    U x = (U)a, c = 0, d = (U)1 << (BITS - 2);                                                  \
    while (d) {                                                                                 \
        if (x >= c + d) { x -= c + d; c = (c >> 1) + d; } else { c >>= 1; }                    \
        d >>= 2;                                                                                \
    }                                                                                           \
    return (T)c;                                                                                \
}                                                                                               \
/* Rust's: the unsigned type of the width, UT (the node's type; U is wider for 8 and 16 bits). */\
__device__ __forceinline__ UT pm_m_abs_diff(T a, T b) {                                         \
    return (UT)(a > b ? (U)a - (U)b : (U)b - (U)a);                                             \
}                                                                                               \
__device__ __forceinline__ T pm_m_div_ceil(int check, T a, T b) {                               \
    if (b == 0) { pm_fail(PM_DIVISION_BY_ZERO, check, (long long)a, (long long)b); return 0; }  \
    if (SIGNED && b == (T)-1) {                                                                 \
        if (a == pm_int<T>::min()) { pm_fail(PM_DIVIDE_OVERFLOW, check, (long long)a, -1); return 0; } \
        return (T)(0u - (U)a);                                                                  \
    }                                                                                           \
    T d = a / b, r = a % b;                                                                     \
    return (r != 0 && ((a < 0) == (b < 0))) ? (T)(d + 1) : d;                                   \
}                                                                                               \
__device__ __forceinline__ T pm_m_rem_euclid(int check, T a, T b) {                             \
    if (b == 0) { pm_fail(PM_DIVISION_BY_ZERO, check, (long long)a, (long long)b); return 0; }  \
    if (SIGNED && b == (T)-1) {                                                                 \
        if (a == pm_int<T>::min()) { pm_fail(PM_REMAINDER_OVERFLOW, check, (long long)a, -1); } \
        return 0;                                                                               \
    }                                                                                           \
    T r = a % b;                                                                                \
    /* `r.wrapping_add(b.wrapping_abs())`: at b = MIN, modular. */                              \
    return r < 0 ? (T)((U)r + (b < 0 ? 0u - (U)b : (U)b)) : r;                                  \
}                                                                                               \
__device__ __forceinline__ T pm_m_div_euclid(int check, T a, T b) {                             \
    if (b == 0) { pm_fail(PM_DIVISION_BY_ZERO, check, (long long)a, (long long)b); return 0; }  \
    if (SIGNED && b == (T)-1) {                                                                 \
        if (a == pm_int<T>::min()) { pm_fail(PM_DIVIDE_OVERFLOW, check, (long long)a, -1); return 0; } \
        return (T)(0u - (U)a);                                                                  \
    }                                                                                           \
    T q = a / b;                                                                                \
    if (a % b < 0) return b > 0 ? (T)(q - 1) : (T)(q + 1);                                      \
    return q;                                                                                   \
}                                                                                               \
__device__ __forceinline__ bool pm_m_is_power_of_two(T a) { return a > 0 && (a & (a - 1)) == 0; } \
__device__ __forceinline__ T pm_m_next_power_of_two(T a) {                                      \
    if (a <= 1) return 1;                                                                       \
    /* Not representable (past the width, or the sign bit): 0, as a release build's overflow. */\
    int e = BITS - (int)pm_m_leading_zeros((T)(a - 1));                                         \
    return e >= BITS - SIGNED ? (T)0 : (T)((U)1 << e);                                          \
}                                                                                               \
__device__ __forceinline__ T pm_m_clamp(int check, T x, T lo, T hi) {                           \
    if (lo > hi) { pm_fail(PM_CLAMP_BOUNDS, check, (long long)lo, (long long)hi); return x; }   \
    return x < lo ? lo : (x > hi ? hi : x);                                                     \
}                                                                                               \
/* Rust has these of signed integers; of an unsigned one, no sign: the value, false or 0. */  \
__device__ __forceinline__ UT pm_m_unsigned_abs(T a) {                                          \
    return (UT)(a < 0 ? (U)0 - (U)a : (U)a);                                                    \
}                                                                                               \
__device__ __forceinline__ bool pm_m_is_positive(T a) { return a > 0; }                         \
__device__ __forceinline__ bool pm_m_is_negative(T a) { return a < 0; }                         \
__device__ __forceinline__ T pm_m_wrapping_abs(T a) { return a < 0 ? (T)((U)0 - (U)a) : a; }    \
__device__ __forceinline__ T pm_m_saturating_abs(T a) {                                         \
    if (SIGNED && a == pm_int<T>::min()) return pm_int<T>::max();                               \
    return pm_m_wrapping_abs(a);                                                                \
}                                                                                               \
__device__ __forceinline__ T pm_m_saturating_neg(T a) {                                         \
    if (!SIGNED) return 0;                                                                      \
    return a == pm_int<T>::min() ? pm_int<T>::max() : (T)((U)0 - (U)a);                         \
}                                                                                               \
/* `MIN / -1` wraps to MIN, `MIN % -1` is 0; division by zero fails, as `/`. */               \
__device__ __forceinline__ T pm_m_wrapping_div(int check, T a, T b) {                           \
    if (b == 0) { pm_fail(PM_DIVISION_BY_ZERO, check, (long long)a, (long long)b); return 0; }  \
    if (SIGNED && b == (T)-1) return (T)((U)0 - (U)a);                                          \
    return (T)(a / b);                                                                          \
}                                                                                               \
__device__ __forceinline__ T pm_m_wrapping_rem(int check, T a, T b) {                           \
    if (b == 0) { pm_fail(PM_DIVISION_BY_ZERO, check, (long long)a, (long long)b); return 0; }  \
    if (SIGNED && b == (T)-1) return 0;                                                         \
    return (T)(a % b);                                                                          \
}                                                                                               \
__device__ __forceinline__ unsigned int pm_m_ilog2(int check, T a) {                            \
    if (a <= 0) { pm_fail(PM_ILOG_NOT_POSITIVE, check, (long long)a, 0); return 0; }            \
    return (unsigned int)(BITS - 1) - pm_m_leading_zeros(a);                                    \
}                                                                                               \
__device__ __forceinline__ unsigned int pm_m_ilog10(int check, T a) {                           \
    if (a <= 0) { pm_fail(PM_ILOG_NOT_POSITIVE, check, (long long)a, 0); return 0; }            \
    unsigned int c = 0;                                                                         \
    while (a >= 10) { a = (T)(a / 10); ++c; }                                                   \
    return c;                                                                                   \
}                                                                                               \
template <typename N> __device__ __forceinline__ T pm_m_wrapping_pow(T a, N n) { return pm_m_pow(a, n); } \
/* Whether `a * b` overflows T (no division of MIN by -1, which C leaves undefined). */         \
__device__ __forceinline__ bool pm_mul_overflows(T a, T b) {                                    \
    if (a == 0 || b == 0) return false;                                                         \
    if (SIGNED && ((a == (T)-1 && b == pm_int<T>::min()) || (b == (T)-1 && a == pm_int<T>::min()))) return true; \
    T r = (T)((U)a * (U)b);                                                                     \
    return (T)(r / b) != a;                                                                     \
}                                                                                               \
/* Rust's `checked_pow` (no squaring after the last factor); on overflow MIN for a negative */ \
/* base and an odd exponent, else MAX. */                                                       \
template <typename N> __device__ __forceinline__ T pm_m_saturating_pow(T a, N n) {              \
    unsigned e = (unsigned)n;                                                                   \
    if (e == 0) return 1;                                                                       \
    T sat = (SIGNED && a < 0 && (e & 1u)) ? pm_int<T>::min() : pm_int<T>::max();                \
    T r = 1, b = a;                                                                             \
    while (e > 1) {                                                                             \
        if (e & 1u) { if (pm_mul_overflows(r, b)) return sat; r = (T)((U)r * (U)b); }           \
        e >>= 1;                                                                                \
        if (pm_mul_overflows(b, b)) return sat;                                                 \
        b = (T)((U)b * (U)b);                                                                   \
    }                                                                                           \
    if (pm_mul_overflows(r, b)) return sat;                                                     \
    return (T)((U)r * (U)b);                                                                    \
}
PM_INT_METHODS(long long, unsigned long long, unsigned long long, 64, 1)
PM_INT_METHODS(int, unsigned, unsigned, 32, 1)
PM_INT_METHODS(signed char, unsigned char, unsigned, 8, 1)
PM_INT_METHODS(short, unsigned short, unsigned, 16, 1)
PM_INT_METHODS(unsigned char, unsigned char, unsigned, 8, 0)
PM_INT_METHODS(unsigned short, unsigned short, unsigned, 16, 0)
PM_INT_METHODS(unsigned int, unsigned int, unsigned, 32, 0)
PM_INT_METHODS(unsigned long long, unsigned long long, unsigned long long, 64, 0)
#undef PM_INT_METHODS

// `powi` as Rust computes it (compiler-builtins' `__powidf2`, `__powisf2`: square and multiply
// in T, then the reciprocal for a negative exponent), so the results agree bit for bit; `clamp`
// failing where Rust's `assert!(min <= max)` does (a NaN bound too), recording the bounds' bits.
#define PM_FLOAT_METHODS(T, CODE, BITS_OF)                                                      \
template <typename N> __device__ __forceinline__ T pm_m_powi(T a, N n) {                        \
    int e = (int)n;                                                                             \
    unsigned p = e < 0 ? 0u - (unsigned)e : (unsigned)e;                                        \
    T r = (T)1;                                                                                 \
    while (true) {                                                                              \
        if (p & 1u) r *= a;                                                                     \
        p >>= 1;                                                                                \
        if (p == 0) break;                                                                      \
        a *= a;                                                                                 \
    }                                                                                           \
    return e < 0 ? (T)1 / r : r;                                                                \
}                                                                                               \
__device__ __forceinline__ T pm_m_clamp(int check, T x, T lo, T hi) {                           \
    if (!(lo <= hi)) { pm_fail(CODE, check, (long long)BITS_OF(lo), (long long)BITS_OF(hi)); return x; } \
    T r = x;                                                                                    \
    if (r < lo) r = lo;                                                                         \
    if (r > hi) r = hi;                                                                         \
    return r;                                                                                   \
}
PM_FLOAT_METHODS(double, PM_CLAMP_BOUNDS_F64, __double_as_longlong)
PM_FLOAT_METHODS(float, PM_CLAMP_BOUNDS_F32, __float_as_int)
#undef PM_FLOAT_METHODS

// The sign bit (of a NaN too, as Rust's), and the exponent field for `is_normal` (neither all
// zeros, zero or subnormal, nor all ones, infinite or NaN).
__device__ __forceinline__ bool pm_m_is_sign_negative(double x) { return __double_as_longlong(x) < 0; }
__device__ __forceinline__ bool pm_m_is_sign_negative(float x) { return __float_as_int(x) < 0; }
__device__ __forceinline__ bool pm_m_is_sign_positive(double x) { return __double_as_longlong(x) >= 0; }
__device__ __forceinline__ bool pm_m_is_sign_positive(float x) { return __float_as_int(x) >= 0; }
__device__ __forceinline__ bool pm_m_is_normal(double x) {
    int e = (int)((__double_as_longlong(x) >> 52) & 0x7ff);
    return e != 0 && e != 0x7ff;
}
__device__ __forceinline__ bool pm_m_is_normal(float x) {
    int e = (__float_as_int(x) >> 23) & 0xff;
    return e != 0 && e != 0xff;
}

#endif  // PMEXPR_PRELUDE
// ---- end of the prelude ----
