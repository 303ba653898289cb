//! The crate registry: every `#[pmexpr]` function, `Record` struct and `accelerate!` site of a
//! crate, as the build hook (`pmexpr-build`) finds them in the sources and writes them to
//! `OUT_DIR`.
//!
//! This module is plain data plus the parts of the source scan that the proc macros need too:
//! [`collect_items`] (shared with the build hook) and [`find_pmexpr_fn_in_sources`] (the macros'
//! fallback when the hook did not run). Nothing here depends on `proc_macro`.
//!
//! This file holds the data (the items, the sites, and what a site sees of them); the rest is one
//! submodule each:
//!
//! - `format`: the text format the hook writes to `OUT_DIR` and the macros read back;
//! - `items`: the `#[pmexpr]` functions and `Record` structs of a parsed source file;
//! - `walk`: the `.rs` files of a package's source directories;
//! - `find`: the macros' search for a `#[pmexpr]` function when the hook did not run.
//!
//! # The text format
//!
//! [`Registry::to_text`] writes a line-oriented format that round-trips arbitrary text: every
//! variable-length field is preceded by its byte length, so sources may contain newlines,
//! header-like lines or any Unicode.
//!
//! ```text
//! pmexpr-registry 3
//! fn <line> <column> <name-bytes> <file-bytes> <source-bytes>
//! <name>
//! <file>
//! <source>
//! record <line> <column> <name-bytes> <file-bytes> <source-bytes>
//! …
//! alias <line> <column> <name-bytes> <file-bytes> <source-bytes>
//! …
//! site <line> <column> <file-bytes> <key-bytes> <tokens-bytes>
//! <file>
//! <key, 16 hexadecimal digits>
//! <tokens>
//! end
//! ```
//!
//! Each field is followed by one `\n` that its length does not count; the final `end` line tells
//! a complete file from a truncated one.

mod find;
mod format;
mod items;
mod walk;

pub use find::{find_pmexpr_fn_in_file, find_pmexpr_fn_in_sources};
pub(crate) use format::{END, Reader, read_entries, write_entry};
pub use items::{collect_items, parse_source};
pub use walk::{DEFAULT_DIRS, relative_path, source_files};

use std::path::Path;

/// What a [`RegistryItem`] declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ItemKind {
    /// A function marked `#[pmexpr]`.
    Fn,
    /// A struct with `#[derive(pmexpr::Record)]`.
    Record,
    /// A type alias without generic parameters (`type Real = f64;`): inside `accelerate!` it
    /// means the type it names, where that is a PMExpr type.
    Alias,
}

/// A `#[pmexpr]` function, a `Record` struct or a type alias found in the sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryItem {
    /// What the item declares.
    pub kind: ItemKind,
    /// The name of the function or struct.
    pub name: String,
    /// The file, relative to the package root, `/`-separated.
    pub file: String,
    /// The line of the item's name, 1-based (0 when unknown).
    pub line: usize,
    /// The column of the item's name, 1-based like rustc prints it (0 when unknown).
    pub column: usize,
    /// The item as Rust text, without visibility, attributes or doc comments (on the item, its
    /// fields and its parameters); a function keeps its signature and body.
    pub source: String,
}

/// One `accelerate!` invocation found in the sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteSource {
    /// The file, relative to the package root, `/`-separated.
    pub file: String,
    /// The line of the `accelerate` identifier, 1-based.
    pub line: usize,
    /// The column of the `accelerate` identifier, 1-based like rustc prints it.
    pub column: usize,
    /// The macro input as text, delimiters excluded.
    pub tokens: String,
    /// [`crate::mangle::site_key`] of the macro input: how the macro finds this entry.
    pub key: u64,
}

impl SiteSource {
    /// The site whose `accelerate` identifier is at `line`:`column` of `file`, with its macro
    /// input.
    pub fn new(file: &str, line: usize, column: usize, input: &proc_macro2::TokenStream) -> Self {
        SiteSource {
            file: file.to_owned(),
            line,
            column,
            tokens: input.to_string(),
            key: crate::mangle::site_key(input),
        }
    }

    /// The site's name ([`crate::mangle::site_name`]).
    pub fn name(&self) -> String {
        crate::mangle::site_name(&self.file, self.line, self.column)
    }
}

impl RegistryItem {
    /// Where the item is defined, `file:line:column`.
    pub fn location(&self) -> String {
        crate::mangle::site_name(&self.file, self.line, self.column)
    }
}

/// Everything the build hook found in a crate, sorted by (file, line, column) so that the
/// written file only changes when the sources do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Registry {
    /// The `#[pmexpr]` functions, `Record` structs and type aliases.
    pub items: Vec<RegistryItem>,
    /// The `accelerate!` sites.
    pub sites: Vec<SiteSource>,
}

impl Registry {
    /// The name of the registry file in `OUT_DIR`.
    pub const FILE_NAME: &str = "pmexpr-registry.txt";
    /// The file beside the registry that names the package root it was made for.
    pub const OWNER_FILE_NAME: &str = "pmexpr-registry.owner";

    /// A registry of these items and sites, sorted.
    pub fn new(items: Vec<RegistryItem>, sites: Vec<SiteSource>) -> Registry {
        let mut registry = Registry { items, sites };
        registry.sort();
        registry
    }

    /// Sorts the items and the sites by (file, line, column); the kind and name break ties
    /// between items whose position is unknown.
    pub fn sort(&mut self) {
        self.items.sort_by(|a, b| {
            (&a.file, a.line, a.column, a.kind, &a.name)
                .cmp(&(&b.file, b.line, b.column, b.kind, &b.name))
        });
        self.sites
            .sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
    }

    /// The `#[pmexpr]` functions called `name` (more than one when the name is defined twice).
    pub fn find_fn(&self, name: &str) -> Vec<&RegistryItem> {
        self.find(ItemKind::Fn, name)
    }

    /// The `Record` structs called `name`.
    pub fn find_record(&self, name: &str) -> Vec<&RegistryItem> {
        self.find(ItemKind::Record, name)
    }

    /// The `#[pmexpr]` functions, as a site sees them.
    pub fn prelude(&self) -> Vec<crate::site::PreludeItem> {
        self.prelude_for(None)
    }

    /// The `#[pmexpr]` functions that a site (or function) in `file` sees: all of them except
    /// those in a file that is a crate of its own (a top-level file of `tests/`, `examples/` or
    /// `benches/`) other than `file` itself, since another crate's functions are not the
    /// program's. `file` may be the package-relative path or a path that ends with it; `None`
    /// sees every function.
    pub fn prelude_for(&self, file: Option<&Path>) -> Vec<crate::site::PreludeItem> {
        self.items
            .iter()
            .filter(|i| i.kind == ItemKind::Fn)
            .filter(|i| seen_from(i, file))
            .map(|i| crate::site::PreludeItem {
                name: i.name.clone(),
                location: i.location(),
                source: i.source.clone(),
            })
            .collect()
    }

    /// The `Record` structs as record definitions, with the crate's type aliases: all of them.
    pub fn records(&self) -> crate::record::Records {
        self.records_for(None)
    }

    /// The `Record` structs and type aliases that a site in `file` sees, scoped as
    /// [`Registry::prelude_for`] scopes functions (a test file's struct is not another test's).
    /// A struct that cannot be a record is left out: its derive reports why, at its tokens. An
    /// alias of a type that is not a PMExpr type is kept as such, for the message where a site
    /// names it.
    pub fn records_for(&self, file: Option<&Path>) -> crate::record::Records {
        let parsed =
            |i: &RegistryItem| -> Option<proc_macro2::TokenStream> { i.source.parse().ok() };
        let defs = self
            .items
            .iter()
            .filter(|i| i.kind == ItemKind::Record && seen_from(i, file))
            .filter_map(|i| {
                let tokens = parsed(i)?;
                let def = crate::parse::nesting::with_parse_stack(&tokens, || {
                    let item = syn::parse2::<syn::ItemStruct>(tokens.clone()).ok()?;
                    crate::parse::record_def(&item, &i.location()).ok()
                });
                def.ok().flatten()
            })
            .collect();
        let aliases = self
            .items
            .iter()
            .filter(|i| i.kind == ItemKind::Alias && seen_from(i, file))
            .filter_map(|i| {
                let tokens = parsed(i)?;
                let def = crate::parse::nesting::with_parse_stack(&tokens, || {
                    let item = syn::parse2::<syn::ItemType>(tokens.clone()).ok()?;
                    Some(crate::record::AliasDef {
                        name: item.ident.to_string(),
                        ty: crate::parse::parse_field_type(&item.ty)
                            .map_err(|_| quote::ToTokens::to_token_stream(&item.ty).to_string()),
                        location: i.location(),
                    })
                });
                def.ok().flatten()
            })
            .collect();
        crate::record::Records::new(defs).with_aliases(aliases)
    }

    fn find(&self, kind: ItemKind, name: &str) -> Vec<&RegistryItem> {
        self.items
            .iter()
            .filter(|item| item.kind == kind && item.name == name)
            .collect()
    }
}

/// Whether a site or function in `file` (`None`: anywhere) sees `item`: an item in a crate of its
/// own only from that file.
fn seen_from(item: &RegistryItem, file: Option<&Path>) -> bool {
    match file {
        Some(f) if is_crate_of_its_own(&item.file) => f.ends_with(&item.file),
        _ => true,
    }
}

/// Whether a site's file is a crate of its own, whose own items it sees beside the others':
/// the key under which sites share what they see.
pub fn own_crate_key(file: &str) -> Option<&str> {
    is_crate_of_its_own(file).then_some(file)
}

/// Whether a package-relative file is the root of a crate of its own that no other file
/// includes: a top-level `.rs` file of `tests/`, `examples/` or `benches/` (cargo's targets).
fn is_crate_of_its_own(file: &str) -> bool {
    let parts: Vec<&str> = file.split('/').collect();
    matches!(parts.as_slice(), [dir, name] if ["tests", "examples", "benches"].contains(dir) && name.ends_with(".rs"))
}

#[cfg(test)]
mod tests;
