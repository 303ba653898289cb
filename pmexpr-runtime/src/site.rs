//! The `accelerate!` site: where in the user's source an accelerated expression is, so that every
//! runtime failure can name it.

use std::cell::Cell;
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
    ///
    /// Inside [`probe`] (debug mode's extra applications of an operator, which the program
    /// itself does not compute) the failure is not the program's: it unwinds to the probe
    /// without a message.
    #[cold]
    #[track_caller]
    pub fn fail(&self, message: impl fmt::Display) -> ! {
        if PROBES.with(Cell::get) > 0 {
            std::panic::resume_unwind(Box::new(Probed));
        }
        panic!("pmexpr: accelerate! at {self}: {message}")
    }
}

thread_local! {
    /// How many [`probe`]s the current thread is inside.
    static PROBES: Cell<u32> = const { Cell::new(0) };
}

/// The payload of a failure inside a [`probe`]; `resume_unwind` skips the panic hook, so
/// nothing is printed.
struct Probed;

/// `f()`, or `None` where it fails at a site ([`Site::fail`]): for computations that only a
/// check makes, such as the law checks' applications of an operator to pairs the program never
/// combines (`f(f(a, b), c)` may overflow where the reduction does not), whose failure says
/// nothing about the program. Any other panic goes on unwinding.
pub(crate) fn probe<T>(f: impl FnOnce() -> T) -> Option<T> {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            PROBES.with(|p| p.set(p.get() - 1));
        }
    }
    PROBES.with(|p| p.set(p.get() + 1));
    let _leave = Leave;
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(v) => Some(v),
        Err(e) if e.is::<Probed>() => None,
        Err(e) => std::panic::resume_unwind(e),
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
}
