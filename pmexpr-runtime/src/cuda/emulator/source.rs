//! The C++ text of a module: the shim that makes CUDA C++ host C++, the module's source, and the
//! trampolines the emulator calls (checked before pasting).

use std::fmt::Write as _;

#[cfg(doc)]
use crate::cuda::device::ParamData;
use crate::cuda::device::{KernelData, ModuleData};

/// Makes CUDA C++ valid host C++. The CUDA keywords are defined after the standard headers,
/// which use `__noinline__` as an attribute name.
pub(super) const SHIM: &str = r#"// ---- pmexpr CPU emulator shim: CUDA C++ as host C++ (pmexpr-runtime/src/cuda/emulator/source.rs) ----
#include <cmath>
#include <cstring>
#include <cstdint>
#include <type_traits>

#define __device__
#define __global__
#define __host__
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline

// Only the trampolines at the end are exported.
#pragma GCC visibility push(hidden)

struct pm_emu_dim3 { unsigned x, y, z; };
thread_local pm_emu_dim3 blockIdx, threadIdx, blockDim, gridDim;

static inline unsigned long long atomicCAS(unsigned long long* address, unsigned long long compare, unsigned long long val) {
    __atomic_compare_exchange_n(address, &compare, val, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return compare;  // the old value: `compare` is overwritten with it when the exchange fails
}
static inline double __longlong_as_double(long long x) {
    double d;
    std::memcpy(&d, &x, sizeof d);
    return d;
}
static inline float __int_as_float(int x) {
    float f;
    std::memcpy(&f, &x, sizeof f);
    return f;
}
static inline long long __double_as_longlong(double x) {
    long long i;
    std::memcpy(&i, &x, sizeof i);
    return i;
}
static inline int __float_as_int(float x) {
    int i;
    std::memcpy(&i, &x, sizeof i);
    return i;
}
using std::sqrt;
using std::exp;
using std::log;
using std::pow;
using std::sin;
using std::cos;
using std::floor;
// ---- end of the shim ----

"#;

pub(super) fn is_c_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

pub(super) fn is_c_type(s: &str) -> bool {
    !s.trim().is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || " _<>:,*&".contains(c))
}

/// Checks what the trampolines paste into C++ and what `launch` relies on.
pub(super) fn validate(module: &ModuleData) -> Result<(), String> {
    let ns = module.namespace;
    if !is_c_ident(ns) {
        return Err(format!("the namespace {ns:?} is not a C++ identifier"));
    }
    for k in module.kernels {
        if !is_c_ident(k.name) {
            return Err(format!(
                "the kernel name {:?} is not a C identifier",
                k.name
            ));
        }
        let Some(last) = k.params.last() else {
            return Err(format!(
                "kernel `{}` has no parameters (the last is `n`)",
                k.name
            ));
        };
        if last.c_type.trim() != "long long" || last.size != 8 {
            return Err(format!(
                "the last parameter of kernel `{}` is `{} {}` ({} bytes), not `long long n`",
                k.name, last.c_type, last.name, last.size
            ));
        }
        for p in k.params {
            if !is_c_ident(p.name) {
                return Err(format!(
                    "kernel `{}`: the parameter name {:?} is not a C identifier",
                    k.name, p.name
                ));
            }
            if !is_c_type(p.c_type) {
                return Err(format!(
                    "kernel `{}`: parameter `{}` has the type {:?}, which the emulator does not \
                     accept as a C++ type",
                    k.name, p.name, p.c_type
                ));
            }
            if p.size == 0 || !p.align.is_power_of_two() {
                return Err(format!(
                    "kernel `{}`: parameter `{}` has size {} and alignment {} (a C type has a \
                     size of at least 1 and a power-of-two alignment)",
                    k.name, p.name, p.size, p.align
                ));
            }
        }
    }
    Ok(())
}

/// The trampolines of one kernel (inside the module's namespace).
pub(super) fn trampoline(out: &mut String, k: &KernelData) {
    let name = k.name;
    let types: Vec<&str> = k.params.iter().map(|p| p.c_type.trim()).collect();
    let list = types.join(", ");
    let _ = writeln!(
        out,
        "extern \"C\" void {name}__pm_emu_part(void** pm_args, unsigned pm_part, unsigned pm_parts) {{"
    );
    let _ = writeln!(
        out,
        "    static_assert(std::is_same<decltype(&{name}), void (*)({list})>::value,\n        \
         \"pmexpr emulator: kernel `{name}` does not take the parameter types its KernelData lists ({list})\");"
    );
    for (i, p) in k.params.iter().enumerate() {
        let (t, pn, size, align) = (types[i], p.name, p.size, p.align);
        let _ = writeln!(
            out,
            "    static_assert(sizeof({t}) == {size}, \"pmexpr emulator: parameter `{pn}` of kernel `{name}`: its ParamData says size {size}, but sizeof({t}) differs\");\n    \
             static_assert(alignof({t}) == {align}, \"pmexpr emulator: parameter `{pn}` of kernel `{name}`: its ParamData says align {align}, but alignof({t}) differs\");\n    \
             static_assert(std::is_trivially_copyable<{t}>::value, \"pmexpr emulator: parameter `{pn}` of kernel `{name}`: {t} is not trivially copyable\");\n    \
             {t} pm_a{i};\n    \
             std::memcpy(&pm_a{i}, pm_args[{i}], sizeof pm_a{i});"
        );
    }
    let args: Vec<String> = (0..k.params.len()).map(|i| format!("pm_a{i}")).collect();
    let _ = writeln!(
        out,
        "    gridDim = {{pm_parts, 1u, 1u}};\n    blockDim = {{1u, 1u, 1u}};\n    \
         blockIdx = {{pm_part, 0u, 0u}};\n    threadIdx = {{0u, 0u, 0u}};\n    \
         {name}({});\n}}",
        args.join(", ")
    );
    let _ = writeln!(
        out,
        "extern \"C\" void {name}__pm_emu(void** pm_args) {{\n    {name}__pm_emu_part(pm_args, 0u, 1u);\n}}\n"
    );
}

/// The whole C++ file of a module.
pub(super) fn cpp_text(module: &ModuleData) -> String {
    let mut out = String::with_capacity(SHIM.len() + module.source.len() + 4096);
    out.push_str(SHIM);
    out.push_str(module.source);
    if !module.source.ends_with('\n') {
        out.push('\n');
    }
    let ns = module.namespace;
    let _ = write!(
        out,
        "\n#pragma GCC visibility pop\n\n// ---- pmexpr CPU emulator trampolines ----\nnamespace {ns} {{\n\n"
    );
    for k in module.kernels {
        trampoline(&mut out, k);
    }
    let _ = writeln!(
        out,
        "}}  // namespace {ns}\n\nextern \"C\" unsigned long long* pm_emu_error_record() {{\n    return pmexpr_error;\n}}"
    );
    out
}
