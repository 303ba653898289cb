//! How deep the user's tokens nest, measured before `syn` parses them: `syn` recurses once per
//! level of nesting, and so does dropping what it built, so tokens that nest deeper than the
//! parser accepts ([`MAX_DEPTH`]) are refused here, and the tokens that pass are parsed on a stack
//! sized for them ([`with_parse_stack`]), however the crate was optimized (cargo builds proc
//! macros and build scripts at opt-level 0, where each level takes kilobytes).
//!
//! Three measures, in one pass over the tokens without recursion:
//!
//! - the *depth*: delimited groups (`(`, `[`, `{` and the invisible groups of `macro_rules!`)
//!   nested in each other, and *runs* that nest without a group, each step at least one level of
//!   the parser's nesting: prefix tokens (`&&&&x`, `- - -x`, `return return x`), the `<` and `->`
//!   of a type (`Vec<Vec<i64>>`, `fn() -> fn() -> i64`), closures (`|x| |y| …`, two `|` each) and
//!   `else if`s: past [`MAX_DEPTH`], an error;
//! - the *levels* of `syn`'s recursion, bounded for its stack. Apart from groups, each level of
//!   its recursion takes at least one token of the group it is in (a `Vec<`, an `else if`, a
//!   closure's `|x|`), and what a `;` ends (or a `,` or `=>` outside a generic argument list or a
//!   closure's parameters) has returned: the bound is, over the path of groups to each token, the
//!   sum of the tokens since the last such separator in each group;
//! - the depth of the *tree* the parser makes, bounded for the stack of the passes that recurse
//!   over it: nesting is at most [`MAX_DEPTH`] levels, but a chain is not (each statement of a
//!   block is in the scope of the ones before it, each `match` arm in the `else` of the one before
//!   it, each pattern parameter in the match of the one before it), so the bound is the nesting
//!   limit plus, over the path of groups to each token, the chains of each group: its `;`, `=>`
//!   and `fn` tokens, and the `,` between a closure's or a `fn`'s parameters.

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

use super::MAX_DEPTH;
use crate::error::{Error, Errors, SpanRange};

/// The stack `syn` may need per level of its recursion (with the drop of what it built and
/// the parser's own frames), at opt-level 0: measured at about 6 KiB for the deepest chains
/// (`fn() -> fn() -> …`, `Vec<Vec<…>>`, `else if`), 3× that for a margin.
const STACK_PER_LEVEL: usize = 16 << 10;
/// The levels a group adds to the recursion bound besides its tokens (statement, expression,
/// the group's own parse).
const LEVELS_PER_GROUP: usize = 4;
/// The stack every parse gets besides its levels.
const STACK_BASE: usize = 1 << 20;

/// The nesting of a token stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Nesting {
    /// The deepest group nesting, runs of prefix tokens included.
    pub depth: usize,
    /// A bound on the levels of `syn`'s recursion over the tokens.
    pub levels: usize,
    /// A bound on the depth of the tree the parser makes of them, beyond [`MAX_DEPTH`].
    pub chains: usize,
}

/// One group being measured.
struct Open {
    tokens: proc_macro2::token_stream::IntoIter,
    /// Its depth (groups and prefix runs around it).
    depth: usize,
    /// The recursion bound where it opened.
    levels: usize,
    /// Tokens since the last separator.
    since: usize,
    /// The runs that end at the current token.
    run: Runs,
    /// `<` not yet closed by a `>` since the last separator.
    angles: usize,
    /// Whether a `|` was seen since the last separator (a closure's parameters may be open).
    bar: bool,
    /// The previous token was a joint `-` or `=` (so a `>` is `->` or `=>`).
    arrow: Option<char>,
    /// The chain tokens of this group.
    chains: usize,
    /// The longest chain in a group inside this one.
    inner: usize,
    /// This group holds a `fn`'s parameters (its `,` make a chain).
    params: bool,
    /// The last two tokens were `fn` and a name.
    fn_name: (bool, bool),
}

impl Open {
    fn new(tokens: TokenStream, depth: usize, levels: usize, params: bool) -> Open {
        Open {
            tokens: tokens.into_iter(),
            depth,
            levels,
            since: 0,
            run: Runs::default(),
            angles: 0,
            bar: false,
            arrow: None,
            chains: 0,
            inner: 0,
            params,
            fn_name: (false, false),
        }
    }

    fn separate(&mut self) {
        self.since = 0;
        self.angles = 0;
        self.bar = false;
    }
}

/// The runs of tokens that nest without a group, each counted in steps that are at least one
/// level of the parser's nesting (so that a run past the limit is refused as the parser would):
/// never more steps than levels, but a run may stop early (it is a lower bound).
#[derive(Debug, Clone, Copy, Default)]
struct Runs {
    /// Prefix operators (`&`, `-`, `!`, `*`, `.`), the words that go with one (`&mut`, `&raw
    /// const`), and `return`, `break`, `yield`, `box`, which take an expression: `&&&x`. Any
    /// other token ends the run (`a - b - c` is no run: it is not nested).
    prefix: usize,
    /// The `<` and `->` of a type, through the names, `:`, `::` and parameter lists between
    /// them: `Vec<Vec<…>>`, `fn() -> fn() -> …` (a `<` is a comparison as well, but two
    /// comparisons cannot be chained).
    types: usize,
    /// The `|` of closures, through their parameters' names: `|x| |y| …` (two each).
    bars: usize,
    /// `else if`s, through their conditions and blocks (an `if` that does not follow `else`
    /// starts a new run).
    elifs: usize,
    /// The previous token was `else`.
    after_else: bool,
}

impl Runs {
    fn depth(&self) -> usize {
        self.prefix
            .max(self.types)
            .max(self.bars / 2)
            .max(self.elifs)
    }

    /// The runs after token `t`; `arrow` says whether it is the `>` of a `->`.
    fn next(self, t: &TokenTree, arrow: bool) -> Runs {
        let word = match t {
            TokenTree::Ident(i) => Some(i.to_string()),
            _ => None,
        };
        let punct = match t {
            TokenTree::Punct(p) => Some((p.as_char(), p.spacing())),
            _ => None,
        };
        let prefix_word = word.as_deref().is_some_and(|w| {
            matches!(
                w,
                "mut" | "const" | "raw" | "return" | "break" | "yield" | "box" | "become" | "move"
            )
        });
        let prefix = match punct {
            Some(('&' | '-' | '!' | '*' | '.', _)) => self.prefix + 1,
            _ if prefix_word => self.prefix + 1,
            _ => 0,
        };
        let params = matches!(t, TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis);
        let types = match punct {
            Some(('<', _)) => self.types + 1,
            Some(('>', _)) if arrow => self.types + 1,
            Some(('-', Spacing::Joint)) | Some((':', _)) => self.types,
            None if word.is_some() || params => self.types,
            _ => 0,
        };
        let bars = match punct {
            Some(('|', _)) => self.bars + 1,
            Some((':', _)) => self.bars,
            None if word.is_some() || params => self.bars,
            _ => 0,
        };
        let elifs = match word.as_deref() {
            Some("if") if self.after_else => self.elifs + 1,
            Some("if") => 0,
            Some("else") => self.elifs,
            // A condition or a block of the chain.
            _ if !matches!(punct, Some((';' | ',', _))) => self.elifs,
            _ => 0,
        };
        Runs {
            prefix,
            types,
            bars,
            elifs,
            after_else: word.as_deref() == Some("else"),
        }
    }
}

fn is_punct(t: &TokenTree, c: char) -> bool {
    matches!(t, TokenTree::Punct(p) if p.as_char() == c)
}

/// Measures `tokens`; the first group or run that is deeper than `limit`, if any.
pub fn measure(tokens: &TokenStream, limit: usize) -> (Nesting, Option<SpanRange>) {
    let mut out = Nesting::default();
    let mut too_deep = None;
    let mut stack = vec![Open::new(tokens.clone(), 0, 0, false)];
    while let Some(top) = stack.last_mut() {
        let Some(t) = top.tokens.next() else {
            let Some(done) = stack.pop() else { break };
            let chain = done.chains.saturating_add(done.inner);
            match stack.last_mut() {
                Some(parent) => parent.inner = parent.inner.max(chain),
                None => out.chains = chain,
            }
            continue;
        };
        top.since += 1;
        let arrow = top.arrow.take();
        let run_before = top.run;
        top.run = top.run.next(&t, arrow == Some('-') && is_punct(&t, '>'));
        let depth = top.depth + top.run.depth();
        if depth > limit && too_deep.is_none() {
            too_deep = Some(SpanRange::single(t.span()));
        }
        out.depth = out.depth.max(depth);
        let after_fn_name = top.fn_name.1;
        top.fn_name = (
            matches!(&t, TokenTree::Ident(i) if i == "fn"),
            top.fn_name.0 && matches!(&t, TokenTree::Ident(_)),
        );
        match &t {
            TokenTree::Punct(p) => match p.as_char() {
                ';' => {
                    top.chains += 1;
                    top.separate();
                }
                '>' if arrow == Some('=') => {
                    top.chains += 1;
                    top.separate();
                }
                ',' => {
                    if top.bar || top.params {
                        top.chains += 1;
                    }
                    if top.angles == 0 && !top.bar {
                        top.separate();
                    }
                }
                '>' if arrow == Some('-') => {}
                '>' => top.angles = top.angles.saturating_sub(1),
                '<' => top.angles += 1,
                '|' => top.bar = true,
                c @ ('-' | '=') if p.spacing() == Spacing::Joint => top.arrow = Some(c),
                _ => {}
            },
            TokenTree::Ident(i) if i == "fn" => top.chains += 1,
            TokenTree::Group(g) => {
                let levels = top.levels + top.since + LEVELS_PER_GROUP;
                // The group is inside the runs before it.
                let depth = top.depth + run_before.depth() + 1;
                if depth > limit && too_deep.is_none() {
                    too_deep = Some(SpanRange::single(g.span_open()));
                }
                out.depth = out.depth.max(depth);
                out.levels = out.levels.max(levels);
                // An invisible group goes on with the runs around it.
                let inner_run = if g.delimiter() == Delimiter::None {
                    run_before
                } else {
                    Runs::default()
                };
                let params = after_fn_name && g.delimiter() == Delimiter::Parenthesis;
                let mut open = Open::new(g.stream(), depth, levels, params);
                open.run = inner_run;
                stack.push(open);
                continue;
            }
            _ => {}
        }
        out.levels = out.levels.max(top.levels + top.since);
    }
    (out, too_deep)
}

/// The error for tokens that nest too deeply.
pub fn too_deep(span: SpanRange) -> Error {
    Error::new(
        span,
        format!("this nests more than {MAX_DEPTH} levels deep, more than `accelerate!` accepts"),
    )
    .help("bind the inner parts to variables with `let` (a block may hold any number of `let`s)")
}

/// Refuses tokens nested deeper than [`MAX_DEPTH`]; otherwise runs `parse` (which parses them
/// with `syn`, and drops what it built) on a stack deep enough for `syn`'s recursion over them.
pub fn with_parse_stack<R>(tokens: &TokenStream, parse: impl FnOnce() -> R) -> Result<R, Errors> {
    let (nesting, deep) = measure(tokens, MAX_DEPTH);
    if let Some(span) = deep {
        return Err(vec![too_deep(span)]);
    }
    Ok(on_stack_for(nesting, parse))
}

/// Runs `f` on a stack deep enough for `syn`'s recursion over tokens of this nesting (the
/// current one when enough of it is left).
pub fn on_stack_for<R>(nesting: Nesting, f: impl FnOnce() -> R) -> R {
    let levels = nesting.levels.saturating_add(nesting.depth);
    let size = STACK_BASE.saturating_add(levels.saturating_mul(STACK_PER_LEVEL));
    stacker::maybe_grow(size, size, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_bound_the_tree() {
        let lets = format!("{{ {} x }}", "let x = -y; ".repeat(1000));
        assert!(nesting(&lets).chains >= 1000);
        let arms = format!("match x {{ {} }}", "1 => { 2 } ".repeat(1000));
        assert!(nesting(&arms).chains >= 1000);
        let params = format!("|{}| 0", "(a, b), ".repeat(100));
        assert!(nesting(&params).chains >= 100);
        let params = format!("fn f({}) {{}}", "(a, b): (i64, i64), ".repeat(100));
        assert!(nesting(&params).chains >= 100);
        // Nested blocks: the chains of each group on the path add up.
        let nested = format!(
            "{{ let a = 1; let b = {{ {} 1 }}; 2 }}",
            "let c = 1; ".repeat(50)
        );
        assert!(nesting(&nested).chains >= 52);
        // A sequence literal is flat.
        let long = format!("[{}]", vec!["-1"; 1000].join(", "));
        assert!(nesting(&long).chains < 5);
    }

    fn nesting(src: &str) -> Nesting {
        measure(&src.parse().unwrap(), usize::MAX).0
    }

    #[test]
    fn groups_and_prefix_runs_are_depth() {
        assert_eq!(nesting("((x))").depth, 2);
        assert_eq!(nesting("[{(1)}]").depth, 3);
        assert_eq!(nesting("&&&x").depth, 3);
        assert_eq!(nesting("- - (- x)").depth, 4);
        assert_eq!(nesting("return return 1").depth, 2);
        assert_eq!(nesting("a - b - c").depth, 1);
        assert_eq!(nesting("x.f.g").depth, 1);
        assert_eq!(nesting("Vec<Vec<Vec<i64>>>").depth, 3);
        assert_eq!(nesting("fn() -> fn(i64) -> i64").depth, 2);
        assert_eq!(nesting("|x| |y| |z| x").depth, 3);
        assert_eq!(
            nesting("if a { 1 } else if b { 2 } else if c { 3 } else { 4 }").depth,
            3
        );
        // Not nesting: comparisons, sums, statements, a sequence of closures.
        assert_eq!(nesting("a < b && c < d && e < f").depth, 2);
        assert_eq!(nesting("a - b * c - d").depth, 1);
        assert_eq!(
            nesting("if a { 1 } else { 2 }; if b { 1 } else { 2 }").depth,
            1
        );
        assert_eq!(nesting("[|x| x, |y| y, |z| z]").depth, 2);
    }

    #[test]
    fn separators_end_what_syn_parsed() {
        // Flat lists and statements: the bound stays small however long they are.
        let long = format!("[{}]", vec!["-1"; 1000].join(", "));
        assert!(nesting(&long).levels < 20, "{:?}", nesting(&long));
        let lets = format!("{{ {} x }}", "let x = -y; ".repeat(1000));
        assert!(nesting(&lets).levels < 20);
        let arms = format!("match x {{ {} }}", "1 => { 2 } ".repeat(1000));
        assert!(nesting(&arms).levels < 20);
        // Chains: one level per repetition at least.
        let vecs = format!("{}i64{}", "Vec<".repeat(100), ">".repeat(100));
        assert!(nesting(&vecs).levels >= 100);
        let closures = "|a, b| ".repeat(100) + "0";
        assert!(nesting(&closures).levels >= 100);
        let generics = format!("{}i64{}", "HashMap<K, ".repeat(100), ">".repeat(100));
        assert!(nesting(&generics).levels >= 100);
        let fns = format!("{}i64", "fn(a, b) -> ".repeat(100));
        assert!(nesting(&fns).levels >= 100);
        let elses = "if c { 1 } else ".repeat(100) + "{ 0 }";
        assert!(nesting(&elses).levels >= 100);
    }

    #[test]
    fn the_first_group_past_the_limit_is_reported() {
        let src = format!("{}x{}", "(".repeat(10), ")".repeat(10));
        let (n, deep) = measure(&src.parse().unwrap(), 4);
        assert_eq!(n.depth, 10);
        assert!(deep.is_some());
        let (_, deep) = measure(&src.parse().unwrap(), 10);
        assert!(deep.is_none());
    }
}
