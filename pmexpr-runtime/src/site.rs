//! The `accelerate!` site: where in the user's source an accelerated expression is, so that every
//! runtime failure can name it.

use std::fmt;

/// The source location of one `accelerate!` invocation.
///
/// Generated code holds one `static` `Site` per invocation; every check that can fail at run time
/// receives it and reports through [`Site::fail`], so a failure names the user's code, never the
/// runtime's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Site {
    /// The file of the invocation, as `file!()` gives it.
    pub file: &'static str,
    /// The line of the invocation (1-based).
    pub line: u32,
    /// The column of the invocation (1-based).
    pub column: u32,
}

impl Site {
    /// A site at the given location (used by generated code with `file!()`, `line!()`, `column!()`).
    pub const fn new(file: &'static str, line: u32, column: u32) -> Self {
        Site { file, line, column }
    }

    /// Stops the accelerated expression with a message that names this site and the assumption
    /// that was broken.
    ///
    /// This is a panic, like an out-of-bounds index in ordinary Rust: the accelerated expression
    /// broke a rule of the language, and no value can be returned. Under the `cpu` backend the panic
    /// travels from the worker thread to the thread that called `accelerate!`.
    #[cold]
    #[track_caller]
    pub fn fail(&self, message: impl fmt::Display) -> ! {
        panic!("pmexpr: accelerate! at {self}: {message}")
    }
}

/// Prints `line` to stderr once per process per `key`: how fallbacks to the CPU are reported.
pub(crate) fn say_once(key: String, line: &str) {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static SAID: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    let mut said = SAID
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if said.insert(key) {
        eprintln!("{line}");
    }
}

/// The instantiation name of `T`, the type an open type variable of the site stands for (a
/// type the captured values fix, which the expression only moves, compares or counts), for the
/// GPU code of `target` (`cuda`, `cuda-emulator`, `futhark` or `auto`): [`OpenType::instantiation`].
/// `None` when `T` is not a number or `bool`: the build generated that code for those only, so the
/// site runs on the CPU, said once on stderr (under `auto` only where a GPU would have run it).
/// `var` is a captured variable that holds such values and `captured` its Rust type (called only
/// then), for the message. Used by generated code.
///
/// [`OpenType::instantiation`]: crate::numeric::OpenType::instantiation
#[doc(hidden)]
pub fn open_instantiation<T: crate::numeric::OpenType>(
    site: &'static Site,
    target: crate::Target,
    var: &str,
    captured: fn() -> String,
) -> Option<&'static str> {
    let ty = match T::instantiation() {
        Ok(name) => return Some(name),
        Err(ty) => ty,
    };
    // Under `auto` a site runs on the CPU anyway without a GPU: nothing to say then.
    if target == crate::Target::Auto && crate::gpu::probe().is_err() {
        return None;
    }
    let code = match target {
        crate::Target::Futhark => "Futhark entry points",
        _ => "CUDA kernels",
    };
    let captured = captured();
    // A type named in the expression is concrete, and the build generates code for it; a
    // tensor, though, cannot be an element of a Futhark array or of a CUDA sequence.
    let advice = if captured.contains("Tensor<") {
        String::new()
    } else {
        format!(
            "; to run it there, name the type in the expression: `let {var}: {captured} = {var};` at the start of the body (for a `#[derive(pmexpr::Record)]` struct, its name)"
        )
    };
    say_once(
        format!("{site} open {target} {ty}"),
        &format!(
            "pmexpr: accelerate! at {site} runs on the CPU under the {target} target: captured `{var}` (a `{captured}` here) holds values of type `{ty}` that the expression only moves or counts, so their type comes from Rust, and the build, which runs before rustc, generates {code} for such values as i64, f64, i32, f32 or bool only{advice}"
        ),
    );
    None
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_file_line_column() {
        assert_eq!(
            Site::new("src/main.rs", 3, 9).to_string(),
            "src/main.rs:3:9"
        );
    }

    #[test]
    fn fail_names_the_site_and_the_message() {
        let site = Site::new("src/lib.rs", 10, 5);
        let payload = std::panic::catch_unwind(|| site.fail("Division by zero")).unwrap_err();
        let text = payload.downcast_ref::<String>().unwrap();
        assert_eq!(
            text,
            "pmexpr: accelerate! at src/lib.rs:10:5: Division by zero"
        );
    }

    #[test]
    fn an_open_type_picks_a_number_s_code_or_names_its_rust_type() {
        use crate::numeric::OpenType;
        use crate::seq::Seq;
        use crate::tensor::TensorRef;
        static SITE: Site = Site::new("src/open.rs", 1, 1);
        let unused = || unreachable!("asked only for the message");
        for t in [crate::Target::CudaEmulator, crate::Target::Futhark] {
            assert_eq!(
                open_instantiation::<i64>(&SITE, t, "s", unused),
                Some("i64")
            );
            assert_eq!(
                open_instantiation::<f32>(&SITE, t, "s", unused),
                Some("f32")
            );
            assert_eq!(
                open_instantiation::<bool>(&SITE, t, "s", unused),
                Some("bool")
            );
            let name = <Seq<'static, (i64, f64)> as OpenType>::rust_name;
            assert_eq!(open_instantiation::<(i64, f64)>(&SITE, t, "s", name), None);
        }
        assert_eq!(<(i64, f64)>::instantiation(), Err("(i64, f64)".to_string()));
        assert_eq!(<(bool,)>::rust_name(), "(bool,)");
        assert_eq!(
            <Seq<'static, Seq<'static, (i32, ())>>>::rust_name(),
            "Vec<Vec<(i32, ())>>"
        );
        assert_eq!(
            <TensorRef<'static, f32>>::rust_name(),
            "pmexpr::Tensor<f32>"
        );
    }
}
