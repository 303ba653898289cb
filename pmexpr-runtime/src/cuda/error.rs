//! The device's error record, worded as the CPU targets word the same failures.
//!
//! Device code cannot stop the program: a failed runtime check records itself in the module's
//! `pmexpr_error[4]` (the first one of a launch wins) and goes on with a harmless value. After a
//! launch the host reads the record: `[0]` the error code (0: none; the codes of the prelude's
//! `pm_error_code`), `[1]` the number of the check, `[2]` and `[3]` the values involved.

/// The message for an error record, or `None` when it records no error.
pub fn describe(record: [u64; 4]) -> Option<String> {
    let [code, _, a, b] = record;
    let (a, b) = (a as i64, b as i64);
    let m = match code {
        0 => return None,
        1 => "Division by zero",
        2 => "Negative index used to access sequence",
        3 => "Out of bounds access in sequence",
        4 => "Wrong number of dimensions used to access tensor",
        5 => "Invalid indices used to access tensor",
        6 => "Negative index used to access tensor",
        7 => "Out of bounds access in tensor",
        8 => "Subtensor using negative offset",
        9 => "Subtensor using negative length",
        10 => "Subtensor out of bounds",
        11 => "reached `never!()`",
        12 => {
            "no pattern matched the value (`match` inside `accelerate!` is not checked for exhaustiveness)"
        }
        // Worded as `Int::from_lit` words it on the CPU.
        13 => return Some(format!("the integer literal {a} does not fit in i{b}")),
        // Rust's panic messages, as the CPU targets give them (`Int::isqrt`, `Num::clamp`);
        // a float clamp's bounds are recorded as their bits.
        14 => "argument of integer square root cannot be negative",
        18 => "attempt to divide with overflow",
        19 => "attempt to calculate the remainder with overflow",
        20 => "argument of integer logarithm must be positive",
        15 => return Some(format!("min > max. min = {a}, max = {b}")),
        16 => {
            let (lo, hi) = (f64::from_bits(a as u64), f64::from_bits(b as u64));
            return Some(format!(
                "min > max, or either was NaN. min = {lo:?}, max = {hi:?}"
            ));
        }
        17 => {
            let (lo, hi) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
            return Some(format!(
                "min > max, or either was NaN. min = {lo:?}, max = {hi:?}"
            ));
        }
        other => return Some(format!("unknown device error code {other}")),
    };
    Some(match code {
        2 | 6 | 8 => format!("{m}: {a}"),
        3 => format!("{m}: index {a} for a sequence of length {b}"),
        7 => format!("{m}: linear index {a} for a tensor of {b} elements"),
        4 => format!("{m}: {a} indices for a tensor of rank {b}"),
        5 => format!("{m}: index {b} in dimension {a}"),
        9 => format!("{m}: {b}"),
        10 => format!("{m}: rows {a}..{}", a.wrapping_add(b)),
        _ => m.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_worded_like_the_cpu_targets() {
        assert_eq!(describe([0, 0, 0, 0]), None);
        assert_eq!(
            describe([3, 1, 5, 3]).as_deref(),
            Some("Out of bounds access in sequence: index 5 for a sequence of length 3")
        );
        assert_eq!(describe([1, 2, 0, 0]).as_deref(), Some("Division by zero"));
        // Rust's `ilog2`/`ilog10` panic message.
        assert_eq!(
            describe([20, 1, 0, 0]).as_deref(),
            Some("argument of integer logarithm must be positive")
        );
        assert_eq!(
            describe([6, 1, (-2_i64) as u64, 0]).as_deref(),
            Some("Negative index used to access tensor: -2")
        );
        assert_eq!(
            describe([13, 1, 3_000_000_000, 32]).as_deref(),
            Some("the integer literal 3000000000 does not fit in i32")
        );
        assert_eq!(
            describe([15, 1, 3, (-2_i64) as u64]).as_deref(),
            Some("min > max. min = 3, max = -2")
        );
        assert_eq!(
            describe([16, 1, 2.0_f64.to_bits(), f64::NAN.to_bits()]).as_deref(),
            Some("min > max, or either was NaN. min = 2.0, max = NaN")
        );
        // An `f32`'s bits, sign-extended from the device's `int`.
        assert_eq!(
            describe([17, 1, (-0.1_f32).to_bits() as i32 as i64 as u64, 0]).as_deref(),
            Some("min > max, or either was NaN. min = -0.1, max = 0.0")
        );
        assert!(describe([14, 1, 0, 0]).unwrap().contains("square root"));
        assert!(describe([99, 0, 0, 0]).unwrap().contains("99"));
    }
}
