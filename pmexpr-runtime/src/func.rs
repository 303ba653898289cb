//! `Func`: a PMExpr function value that must have a nameable Rust type.
//!
//! Generated code calls functions it knows (intrinsics, `let`-bound lambdas, `fn` items) directly,
//! so that the compiler can inline them. A function value whose identity is not known statically —
//! a parameter of function type, a function stored in a tuple or chosen by an `if` — is boxed in a
//! `Func` instead. Functions are curried: `A -> B -> C` is `Func<A, Func<B, C>>`.

use std::fmt;
use std::sync::Arc;

/// A boxed, shareable PMExpr function of one argument.
pub struct Func<'a, A, B>(Arc<dyn Fn(A) -> B + Send + Sync + 'a>);

impl<'a, A, B> Func<'a, A, B> {
    /// Boxes a closure.
    pub fn new(f: impl Fn(A) -> B + Send + Sync + 'a) -> Self {
        Func(Arc::new(f))
    }

    /// Applies the function.
    #[inline]
    pub fn call(&self, a: A) -> B {
        (self.0)(a)
    }
}

impl<A, B> Clone for Func<'_, A, B> {
    fn clone(&self) -> Self {
        Func(Arc::clone(&self.0))
    }
}

impl<A, B> fmt::Debug for Func<'_, A, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<function>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curried_application() {
        let add: Func<i64, Func<i64, i64>> = Func::new(|x| Func::new(move |y| x + y));
        assert_eq!(add.call(2).call(3), 5);
        let inc = add.call(1);
        assert_eq!(inc.clone().call(41), 42);
    }
}
