//! Site identity and every name derived from it: the one place that decides how a site is named
//! in generated code, files and messages.
//!
//! A site is named by the position of its `accelerate` identifier, `file:line:column` (the file
//! relative to the package root, `/`-separated; line and column 1-based as rustc prints them).
//! From that name come the CUDA namespace ([`cuda_prefix`]), the Futhark entry point
//! ([`futhark_entry`]), the Futhark glue file ([`glue_file`]) and the dump file ([`dump_file`]).
//!
//! The macro finds its site among those the build hook recorded by file and by [`site_key`]: a
//! hash of our own canonical printout of the site's tokens ([`canonical_tokens`]), which depends on
//! the tokens alone — not on how they are laid out in the source, and not on
//! `TokenStream::to_string`, whose spacing changes between toolchains (the krnl crate broke on a
//! toolchain update that way).

use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

/// The name of a site: `file:line:column` of its `accelerate` identifier.
pub fn site_name(file: &str, line: usize, column: usize) -> String {
    format!("{file}:{line}:{column}")
}

/// A site name with every character other than an ASCII letter or digit replaced by `_`.
fn identifier_body(site: &str) -> String {
    site.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// The C identifier that starts every name of a site's CUDA modules (the namespace, without the
/// instantiation's suffix): `examples/listing1.rs:45:5` gives `pm_examples_listing1_rs_45_5`.
pub fn cuda_prefix(site: &str) -> String {
    format!("pm_{}", identifier_body(site))
}

/// The name of a site's Futhark entry point: `site_`, the sanitized site, then one `_<type>` per
/// number type of the instantiation, in type-variable order (`site_src_main_rs_12_5_i32`). The
/// runtime calls the entry by this name.
pub fn futhark_entry<'a>(site: &str, number_types: impl IntoIterator<Item = &'a str>) -> String {
    let mut name = format!("site_{}", identifier_body(site));
    for t in number_types {
        name.push('_');
        name.push_str(t);
    }
    name
}

/// Where the build hook writes the Futhark glue of a site under `OUT_DIR`: named like its entry
/// points, without the number types.
pub fn glue_file(out_dir: &Path, site: &str) -> PathBuf {
    out_dir
        .join("pmexpr")
        .join("futhark")
        .join("glue")
        .join(format!("{}.rs", futhark_entry(site, [])))
}

/// The name of a site's dump file under `pmexpr-dump/` (`PMEXPR_DUMP=1`): the site with every
/// character other than an ASCII letter, digit or `.` replaced by `_`, and `.txt`
/// (`examples/listing1.rs:45:5` gives `examples_listing1.rs_45_5.txt`).
pub fn dump_file(site: &str) -> String {
    let body: String = site
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{body}.txt")
}

/// Our canonical printout of a site's tokens: identifiers and literals as written, punctuation
/// with a space after each one that is not joined to the next, groups with their delimiters, one
/// space between tokens. Line breaks, indentation and comments do not change it.
pub fn canonical_tokens(tokens: &TokenStream) -> String {
    let mut out = String::new();
    print_tokens(tokens, &mut out);
    out
}

fn print_tokens(tokens: &TokenStream, out: &mut String) {
    // An explicit stack instead of recursion: the printout runs before any depth check.
    let mut stack: Vec<(proc_macro2::token_stream::IntoIter, Option<char>)> =
        vec![(tokens.clone().into_iter(), None)];
    while let Some((iter, _)) = stack.last_mut() {
        let Some(token) = iter.next() else {
            if let Some((_, Some(close))) = stack.pop() {
                out.push(close);
                out.push(' ');
            }
            continue;
        };
        match token {
            TokenTree::Ident(i) => {
                out.push_str(&i.to_string());
                out.push(' ');
            }
            TokenTree::Literal(l) => {
                out.push_str(&l.to_string());
                out.push(' ');
            }
            TokenTree::Punct(p) => {
                out.push(p.as_char());
                if p.spacing() == Spacing::Alone {
                    out.push(' ');
                }
            }
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => (Some('('), Some(')')),
                    Delimiter::Brace => (Some('{'), Some('}')),
                    Delimiter::Bracket => (Some('['), Some(']')),
                    Delimiter::None => (None, None),
                };
                if let Some(open) = open {
                    out.push(open);
                    out.push(' ');
                }
                stack.push((g.stream().into_iter(), close));
            }
        }
    }
}

/// The key by which the macro finds its site among those the build hook recorded: [`fnv1a`] of
/// [`canonical_tokens`], the same in the build script and in the proc macro.
pub fn site_key(tokens: &TokenStream) -> u64 {
    fnv1a(canonical_tokens(tokens).as_bytes())
}

/// FNV-1a, 64 bits: a hash that is the same in every process, build and toolchain (the keys and
/// stamps of generated artifacts).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str) -> u64 {
        site_key(&text.parse().expect("tokens"))
    }

    #[test]
    fn names_derived_from_a_site() {
        let site = site_name("examples/listing1.rs", 45, 5);
        assert_eq!(site, "examples/listing1.rs:45:5");
        assert_eq!(cuda_prefix(&site), "pm_examples_listing1_rs_45_5");
        assert_eq!(futhark_entry(&site, []), "site_examples_listing1_rs_45_5");
        assert_eq!(
            futhark_entry("a.rs:1:1", ["bool", "i32"]),
            "site_a_rs_1_1_bool_i32"
        );
        assert_eq!(dump_file(&site), "examples_listing1.rs_45_5.txt");
        assert_eq!(
            glue_file(Path::new("/out"), "src/lib.rs:3:5"),
            Path::new("/out/pmexpr/futhark/glue/site_src_lib_rs_3_5.rs")
        );
        assert_eq!(cuda_prefix("src/ä-b.rs:1:2"), "pm_src___b_rs_1_2");
    }

    #[test]
    fn differently_formatted_copies_of_a_site_have_one_key() {
        let compact = "{ let f = |x| x + 1; reduce(addi, 0, map(f, s)) }";
        let spread = "{\n    let f = | x |\n        x+1 ;\n  reduce ( addi , 0 , map( f,s ) )\n}";
        let commented = "{ let f = |x| /* inc */ x + 1; // then\n reduce(addi, 0, map(f, s)) }";
        assert_eq!(key(compact), key(spread));
        assert_eq!(key(compact), key(commented));
        assert_eq!(
            canonical_tokens(&compact.parse().unwrap()),
            "{ let f = | x | x + 1 ; reduce ( addi , 0 , map ( f , s ) ) } "
        );
    }

    #[test]
    fn different_sites_have_different_keys() {
        let base = key("reduce(addi, 0, s)");
        for other in [
            "reduce(addi, 1, s)",
            "reduce(addi, 0, t)",
            "reduce(muli, 0, s)",
            "reduce(addi, 0, [s])",
            "reduce(addi, 0.0, s)",
        ] {
            assert_ne!(base, key(other), "{other}");
        }
        // Joined punctuation is another token than the same characters apart.
        assert_ne!(key("a || b"), key("a | | b"));
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let text = format!("{}x{}", "(".repeat(20_000), ")".repeat(20_000));
        let tokens: TokenStream = text.parse().unwrap();
        let _ = site_key(&tokens);
    }
}
