//! Debug mode's checks of the assumptions the accelerated backends make (paper, appendix §
//! "Dynamic assumptions"): nested sequences are regular. (Tensor rank is checked whenever a tensor
//! is captured, since the CPU representation depends on it too.)

use crate::seq::Seq;
use crate::site::Site;
use crate::tensor::{Element, TensorRef};

/// The shape of a value as far as regularity is concerned.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// A scalar, tensor or function: no sequence inside.
    Leaf,
    /// A sequence of the given length whose elements all have the given shape.
    Seq(usize, Box<Shape>),
    /// A record: one shape per field.
    Record(Vec<Shape>),
}

/// Values whose nested sequences can be checked for regularity.
#[doc(hidden)]
pub trait Regular {
    /// The common shape, or a description of where the value is irregular.
    fn shape(&self) -> Result<Shape, String>;
}

macro_rules! leaf {
    ($($t:ty),*) => { $(impl Regular for $t { fn shape(&self) -> Result<Shape, String> { Ok(Shape::Leaf) } })* };
}
leaf!(
    i64,
    f64,
    i32,
    f32,
    bool,
    i8,
    i16,
    isize,
    u8,
    u16,
    u32,
    u64,
    usize,
    ()
);

impl<T: Element> Regular for TensorRef<'_, T> {
    fn shape(&self) -> Result<Shape, String> {
        Ok(Shape::Leaf)
    }
}

impl<A, B> Regular for crate::func::Func<'_, A, B> {
    fn shape(&self) -> Result<Shape, String> {
        Ok(Shape::Leaf)
    }
}

impl<T: Regular> Regular for Seq<'_, T> {
    fn shape(&self) -> Result<Shape, String> {
        let mut elems = self.iter().enumerate();
        let Some((_, first)) = elems.next() else {
            return Ok(Shape::Seq(0, Box::new(Shape::Leaf)));
        };
        let inner = first.shape().map_err(|e| format!("element 0: {e}"))?;
        for (i, x) in elems {
            let s = x.shape().map_err(|e| format!("element {i}: {e}"))?;
            if s != inner {
                return Err(format!(
                    "element {i} has shape {} but element 0 has shape {}",
                    describe(&s),
                    describe(&inner)
                ));
            }
        }
        Ok(Shape::Seq(self.len(), Box::new(inner)))
    }
}

macro_rules! record {
    ($(($($t:ident $n:tt $_c:ident $_r:ident),+))*) => {$(
        impl<$($t: Regular),+> Regular for ($($t,)+) {
            fn shape(&self) -> Result<Shape, String> {
                Ok(Shape::Record(vec![$(self.$n.shape().map_err(|e| format!("field {}: {e}", $n))?),+]))
            }
        }
    )*};
}
for_tuples!(record);

fn describe(s: &Shape) -> String {
    match s {
        Shape::Leaf => "scalar".into(),
        Shape::Seq(n, inner) => match **inner {
            Shape::Leaf => format!("[{n}]"),
            _ => format!("[{n}] of {}", describe(inner)),
        },
        Shape::Record(fields) => {
            format!(
                "({})",
                fields.iter().map(describe).collect::<Vec<_>>().join(", ")
            )
        }
    }
}

/// Debug mode: fails at `site` unless every nested sequence in `value` is regular.
pub fn check_regular<T: Regular>(site: &Site, what: &str, value: &T) {
    if let Err(e) = value.shape() {
        site.fail(format_args!(
            "Irregular sequence found in {what}: {e} (accelerated code assumes that all inner \
             sequences of a nested sequence have the same length)"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SITE: Site = Site::new("c.rs", 1, 1);

    fn seq2(rows: &[&[i64]]) -> Seq<'static, Seq<'static, i64>> {
        Seq::from_vec(rows.iter().map(|r| Seq::from_vec(r.to_vec())).collect())
    }

    #[test]
    fn regular_sequences_pass() {
        check_regular(&SITE, "m", &seq2(&[&[1, 2], &[3, 4]]));
        check_regular(&SITE, "m", &seq2(&[]));
        check_regular(&SITE, "x", &(1_i64, seq2(&[&[1]])));
    }

    #[test]
    fn irregular_sequences_are_reported() {
        let e = std::panic::catch_unwind(|| {
            check_regular(&SITE, "captured variable `m`", &seq2(&[&[1, 2], &[3]]))
        })
        .unwrap_err();
        let msg = e.downcast_ref::<String>().unwrap();
        assert!(msg.contains("c.rs:1:1"), "{msg}");
        assert!(msg.contains("Irregular sequence found in captured variable `m`: element 1 has shape [1] but element 0 has shape [2]"), "{msg}");
    }
}
