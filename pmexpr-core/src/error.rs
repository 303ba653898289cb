//! Compile-time errors: data with the span of the user's offending tokens.
//!
//! Every pass reports [`Error`]s instead of panicking; the macro turns each into a
//! `compile_error!` at its span (first to last token, as rustc underlines it), with a `help:` line
//! when there is a concrete fix to suggest.

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

/// One compile-time error.
#[derive(Debug, Clone)]
pub struct Error {
    /// Where the user's offending tokens are.
    pub span: SpanRange,
    /// What is wrong, in a user's words.
    pub message: String,
    /// A concrete fix, shown as `help: …`.
    pub help: Option<String>,
}

impl Error {
    /// An error at `span`.
    pub fn new(span: SpanRange, message: impl Into<String>) -> Self {
        Error {
            span,
            message: message.into(),
            help: None,
        }
    }

    /// Adds a `help:` line.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// The full text of the error (message, then help).
    pub fn text(&self) -> String {
        match &self.help {
            Some(h) => format!("{}\nhelp: {h}", self.message),
            None => self.message.clone(),
        }
    }

    /// The error as a `compile_error!` invocation spanning the user's tokens.
    pub fn to_compile_error(&self) -> TokenStream {
        let text = self.text();
        let start = self.span.start;
        let end = self.span.end;
        let body = quote_spanned!(end=> { #text });
        quote_spanned!(start=> ::core::compile_error! #body;)
    }
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
