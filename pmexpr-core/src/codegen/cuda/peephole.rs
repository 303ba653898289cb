//! Text peepholes over emitted lines: dropping redundant parentheses and temporaries, `else if`
//! chains and `?:` operands.

use super::code::is_atom;

/// `(c)` → `c`, for an `if` condition that brings its own parentheses.
pub(super) fn strip_parens(c: &str) -> &str {
    if c.starts_with('(') && c.ends_with(')') {
        // Only when the outer parentheses match each other.
        let inner = &c[1..c.len() - 1];
        let mut depth = 0i32;
        for ch in inner.chars() {
            match ch {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth < 0 {
                        return c;
                    }
                }
                _ => {}
            }
        }
        if depth == 0 {
            return inner;
        }
    }
    c
}

/// Whether a C name is a temporary of the generator (`tmp3`), used once.
pub(super) fn is_temp(c: &str) -> bool {
    c.strip_prefix("tmp")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|ch| ch.is_ascii_digit()))
}

/// `x` when `lines` is the single line `<prefix>x;` (one branch delivering one expression).
pub(super) fn single_delivery<'l>(lines: &'l [(usize, String)], prefix: &str) -> Option<&'l str> {
    match lines {
        [(_, line)] => line.strip_prefix(prefix)?.strip_suffix(';'),
        _ => None,
    }
}

/// The lines of an `else` branch that is a whole `if … else …` statement at `depth`, one level
/// less indented, when it is one (then the branch can be written `else if`).
pub(super) fn else_if(lines: &[(usize, String)], depth: usize) -> Option<Vec<(usize, String)>> {
    let (first, last) = (lines.first()?, lines.last()?);
    let own = |(d, l): &(usize, String)| {
        *d != depth
            || l.starts_with("} else")
            || std::ptr::eq(l, &first.1)
            || std::ptr::eq(l, &last.1)
    };
    let whole = first.0 == depth
        && first.1.starts_with("if (")
        && *last == (depth, "}".to_string())
        && lines.iter().all(own);
    whole.then(|| lines.iter().map(|(d, l)| (d - 1, l.clone())).collect())
}

/// An operand of `?:`: parenthesized unless it is a name, a literal, a call or a braced
/// initializer.
pub(super) fn wrap(x: &str) -> String {
    let closed = |open: char, close: char| -> bool {
        let Some(p) = x.find(open) else {
            return false;
        };
        let head_ok = x[..p]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_<> :".contains(c));
        let mut depth = 0i32;
        for (k, c) in x.char_indices().skip_while(|(k, _)| *k < p) {
            if c == open {
                depth += 1;
            } else if c == close {
                depth -= 1;
                if depth == 0 {
                    return head_ok && k == x.len() - 1;
                }
            }
        }
        false
    };
    if is_atom(x) || closed('(', ')') || closed('{', '}') {
        x.to_string()
    } else {
        format!("({x})")
    }
}
