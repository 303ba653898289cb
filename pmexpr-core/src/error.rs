//! Compile-time errors as data: a kind (what went wrong, for the code that reacts to it), the
//! span of the user's offending tokens, labels at other tokens, notes and a help.
//!
//! Every pass reports [`Error`]s instead of panicking; the macro turns each into a
//! `compile_error!` at its span (first to last token, as rustc underlines it), its text the
//! message, a `help:` line when there is a concrete fix to suggest, and `note:` lines for context.
//! No code reads an error's text to decide anything: it asks its [`ErrorKind`].

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote_spanned};

/// A span from the first to the last token of a piece of user code.
#[derive(Debug, Clone, Copy)]
pub struct SpanRange {
    /// The span of the first token.
    pub start: Span,
    /// The span of the last token.
    pub end: Span,
}

impl SpanRange {
    /// A range covering one token.
    pub fn single(span: Span) -> Self {
        SpanRange {
            start: span,
            end: span,
        }
    }

    /// The range of the tokens of a syntax node.
    pub fn of(node: &impl ToTokens) -> Self {
        let mut tokens = node.to_token_stream().into_iter();
        let Some(first) = tokens.next() else {
            return SpanRange::single(Span::call_site());
        };
        let start = first.span();
        let end = tokens.last().map_or(start, |t| t.span());
        SpanRange { start, end }
    }

    /// The range from the start of `self` to the end of `other`.
    pub fn to(self, other: SpanRange) -> Self {
        SpanRange {
            start: self.start,
            end: other.end,
        }
    }

    /// A range with no user tokens (generated code).
    pub fn call_site() -> Self {
        SpanRange::single(Span::call_site())
    }
}

/// What went wrong, as data: the code that reacts to an error (another message instead, a help
/// added, a retry) asks its kind, never its text. Most errors need no kind of their own
/// ([`ErrorKind::Other`]); a kind exists where some code asks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ErrorKind {
    /// Nothing asks about this error beyond its text.
    #[default]
    Other,
    /// A call of a name that is neither bound, an intrinsic nor a keyword (`resolve`).
    UnknownFunction {
        /// The name called.
        name: String,
    },
    /// A `#[pmexpr]` function that names something it neither binds nor can call.
    ItemUsesUnknown {
        /// The function.
        function: String,
        /// The name it uses.
        name: String,
    },
    /// An argument whose type does not fit the parameter it is passed to (`infer`).
    ArgumentMismatch {
        /// The callee as the message names it (`` `map` ``).
        callee: String,
    },
    /// The `#[pmexpr]` functions a site uses do not compile together.
    ItemsDoNotCompile {
        /// The kind of their first error.
        cause: Box<ErrorKind>,
    },
    /// A rule of the appendix's well-formedness check for the site's backend (`wellformed`).
    WellFormedness,
}

impl ErrorKind {
    /// Whether this error, or the error that caused it, is about `name`: a function called that
    /// does not exist, or a name a `#[pmexpr]` function uses.
    pub fn names(&self, name: &str) -> bool {
        match self {
            ErrorKind::UnknownFunction { name: n } | ErrorKind::ItemUsesUnknown { name: n, .. } => {
                n == name
            }
            ErrorKind::ItemsDoNotCompile { cause } => cause.names(name),
            _ => false,
        }
    }
}

/// A secondary span: more of the user's tokens that explain the error.
#[derive(Debug, Clone)]
pub struct Label {
    /// The tokens.
    pub span: SpanRange,
    /// What they have to do with the error.
    pub text: String,
}

/// One compile-time error: a kind, a primary span, labels, notes and a help, as rustc's
/// diagnostics have.
#[derive(Debug, Clone)]
pub struct Error {
    /// What went wrong, for the code that reacts to it.
    pub kind: ErrorKind,
    /// Where the user's offending tokens are.
    pub span: SpanRange,
    /// What is wrong, in a user's words.
    pub message: String,
    /// Other tokens that explain it.
    pub labels: Vec<Label>,
    /// Context, shown as `note: …` after the help.
    pub notes: Vec<String>,
    /// A concrete fix, shown as `help: …`.
    pub help: Option<String>,
}

impl Error {
    /// An error at `span`.
    pub fn new(span: SpanRange, message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Other,
            span,
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
            help: None,
        }
    }

    /// The error with its kind.
    pub fn kind(mut self, kind: ErrorKind) -> Self {
        self.kind = kind;
        self
    }

    /// Adds a `help:` line.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Adds a `note:` line.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// Adds a label at other tokens.
    pub fn label(mut self, span: SpanRange, text: impl Into<String>) -> Self {
        self.labels.push(Label {
            span,
            text: text.into(),
        });
        self
    }

    /// The full text of the error at its primary span: the message, the help, then the notes.
    pub fn text(&self) -> String {
        let mut text = self.message.clone();
        if let Some(h) = &self.help {
            text.push_str("\nhelp: ");
            text.push_str(h);
        }
        for n in &self.notes {
            text.push_str("\nnote: ");
            text.push_str(n);
        }
        text
    }

    /// The error as `compile_error!` invocations: one spanning the user's tokens, and one per
    /// label at the label's tokens (a stable proc macro can emit only errors, so a label is an
    /// error whose text says what it refers to).
    pub fn to_compile_error(&self) -> TokenStream {
        let mut out = compile_error_at(self.span, &self.text());
        for l in &self.labels {
            out.extend(compile_error_at(
                l.span,
                &format!("note: {} (see: {})", l.text, self.message),
            ));
        }
        out
    }
}

fn compile_error_at(span: SpanRange, text: &str) -> TokenStream {
    let (start, end) = (span.start, span.end);
    let body = quote_spanned!(end=> { #text });
    quote_spanned!(start=> ::core::compile_error! #body;)
}

/// The errors of a pass, reported together.
pub type Errors = Vec<Error>;

/// All errors as `compile_error!` statements.
pub fn to_compile_errors(errors: &[Error]) -> TokenStream {
    errors.iter().map(Error::to_compile_error).collect()
}

/// The help of every error caused by a missing build hook: how to add it.
pub(crate) const ADD_HOOK_HELP: &str = "add `pmexpr-build` to [build-dependencies] and a build.rs with \
     `fn main() { pmexpr_build::Build::new().compile(); }`";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_is_message_help_then_notes_and_labels_are_errors_of_their_own() {
        let e = Error::new(SpanRange::call_site(), "it is wrong")
            .help("do this")
            .note("because of that")
            .label(SpanRange::call_site(), "this is why");
        assert_eq!(
            e.text(),
            "it is wrong\nhelp: do this\nnote: because of that"
        );
        let out = e.to_compile_error().to_string();
        assert_eq!(out.matches("compile_error").count(), 2, "{out}");
        assert!(
            out.contains("note: this is why (see: it is wrong)"),
            "{out}"
        );
    }

    #[test]
    fn kinds_say_which_name_an_error_is_about() {
        let unknown = ErrorKind::UnknownFunction { name: "f".into() };
        assert!(unknown.names("f") && !unknown.names("g"));
        let caused = ErrorKind::ItemsDoNotCompile {
            cause: Box::new(ErrorKind::ItemUsesUnknown {
                function: "g".into(),
                name: "f".into(),
            }),
        };
        assert!(caused.names("f") && !caused.names("g"));
        assert!(!ErrorKind::Other.names("f"));
    }
}
