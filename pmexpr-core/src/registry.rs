//! The crate registry: every `#[pmexpr]` function, `Record` struct and `accelerate!` site of a
//! crate, as the build hook (`pmexpr-build`) finds them in the sources and writes them to
//! `OUT_DIR`.
//!
//! This module is plain data plus the parts of the source scan that the proc macros need too:
//! [`collect_items`] (shared with the build hook) and [`find_pmexpr_fn_in_sources`] (the macros'
//! fallback when the hook did not run). Nothing here depends on `proc_macro`.
//!
//! # The text format
//!
//! [`Registry::to_text`] writes a line-oriented format that round-trips arbitrary text: every
//! variable-length field is preceded by its byte length, so sources may contain newlines,
//! header-like lines or any Unicode.
//!
//! ```text
//! pmexpr-registry 1
//! fn <line> <column> <name-bytes> <file-bytes> <source-bytes>
//! <name>
//! <file>
//! <source>
//! record <line> <column> <name-bytes> <file-bytes> <source-bytes>
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

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use proc_macro2::Span;
use quote::ToTokens;
use syn::punctuated::Punctuated;
use syn::{Attribute, FnArg, Item, ItemFn, ItemStruct, Token, Visibility};

/// The directories of a package that the scan reads by default, relative to its root.
pub const DEFAULT_DIRS: &[&str] = &["src", "examples", "tests", "benches"];

/// The first line of the text format; the number changes with the format.
const FORMAT_HEADER: &str = "pmexpr-registry 2";

/// The last line of the text format (and of the CUDA manifest's).
pub(crate) const END: &str = "end";

/// What a [`RegistryItem`] declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ItemKind {
    /// A function marked `#[pmexpr]`.
    Fn,
    /// A struct with `#[derive(pmexpr::Record)]`.
    Record,
}

impl ItemKind {
    /// The tag of the kind in the text format.
    fn tag(self) -> &'static str {
        match self {
            ItemKind::Fn => "fn",
            ItemKind::Record => "record",
        }
    }
}

/// A `#[pmexpr]` function or a `Record` struct found in the sources.
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
    /// The `#[pmexpr]` functions and `Record` structs.
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
            .filter(|i| match file {
                Some(f) if is_crate_of_its_own(&i.file) => f.ends_with(&i.file),
                _ => true,
            })
            .map(|i| crate::site::PreludeItem {
                name: i.name.clone(),
                location: i.location(),
                source: i.source.clone(),
            })
            .collect()
    }

    /// The `Record` structs as record definitions. A struct that cannot be a record is left out:
    /// its derive reports why, at its tokens.
    pub fn records(&self) -> crate::record::Records {
        let defs = self
            .items
            .iter()
            .filter(|i| i.kind == ItemKind::Record)
            .filter_map(|i| {
                let item = syn::parse_str::<syn::ItemStruct>(&i.source).ok()?;
                crate::parse::record_def(&item, &i.location()).ok()
            })
            .collect();
        crate::record::Records::new(defs)
    }

    fn find(&self, kind: ItemKind, name: &str) -> Vec<&RegistryItem> {
        self.items
            .iter()
            .filter(|item| item.kind == kind && item.name == name)
            .collect()
    }

    /// The registry in the text format (see the module documentation).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        out.push_str(FORMAT_HEADER);
        out.push('\n');
        for item in &self.items {
            let fields = [item.name.as_str(), &item.file, &item.source];
            write_entry(
                &mut out,
                item.kind.tag(),
                &[item.line, item.column],
                &fields,
            );
        }
        for site in &self.sites {
            let key = format!("{:016x}", site.key);
            let fields = [site.file.as_str(), &key, &site.tokens];
            write_entry(&mut out, "site", &[site.line, site.column], &fields);
        }
        out.push_str(END);
        out.push('\n');
        out
    }

    /// Reads the text format back; the error says what is wrong and on which line.
    pub fn from_text(text: &str) -> Result<Registry, String> {
        let mut registry = Registry::default();
        read_entries(text, FORMAT_HEADER, "registry", |reader, entry| {
            match (entry.tag, entry.numbers.as_slice()) {
                ("fn" | "record", &[line, column, name, file, source]) => {
                    registry.items.push(RegistryItem {
                        kind: if entry.tag == "fn" {
                            ItemKind::Fn
                        } else {
                            ItemKind::Record
                        },
                        name: reader.field(name)?.to_owned(),
                        file: reader.field(file)?.to_owned(),
                        line,
                        column,
                        source: reader.field(source)?.to_owned(),
                    });
                }
                ("site", &[line, column, file, key, tokens]) => {
                    let file = reader.field(file)?.to_owned();
                    let key = reader.field(key)?;
                    let key = u64::from_str_radix(key, 16)
                        .map_err(|_| entry.at(format_args!("`{key}` is not a site key")))?;
                    registry.sites.push(SiteSource {
                        file,
                        line,
                        column,
                        key,
                        tokens: reader.field(tokens)?.to_owned(),
                    })
                }
                _ => return Err(entry.unexpected()),
            }
            Ok(())
        })?;
        registry.sort();
        Ok(registry)
    }

    /// Reads [`Registry::FILE_NAME`] in `out_dir`: `None` when the file does not exist (the
    /// build hook did not run), an error when it cannot be read or parsed.
    pub fn load(out_dir: &Path) -> Option<Result<Registry, String>> {
        let path = out_dir.join(Self::FILE_NAME);
        match fs::read_to_string(&path) {
            Ok(text) => {
                Some(Registry::from_text(&text).map_err(|e| format!("{}: {e}", path.display())))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => Some(Err(format!("{}: {e}", path.display()))),
        }
    }
}

/// Whether a package-relative file is the root of a crate of its own that no other file
/// includes: a top-level `.rs` file of `tests/`, `examples/` or `benches/` (cargo's targets).
fn is_crate_of_its_own(file: &str) -> bool {
    let parts: Vec<&str> = file.split('/').collect();
    matches!(parts.as_slice(), [dir, name] if ["tests", "examples", "benches"].contains(dir) && name.ends_with(".rs"))
}

/// Writes one entry of a length-prefixed text format (this one, and the build hook's CUDA
/// manifest, [`crate::cuda_manifest`]): a header line with the tag, the numbers and the fields'
/// byte lengths, then each field followed by a newline.
pub(crate) fn write_entry(out: &mut String, tag: &str, numbers: &[usize], fields: &[&str]) {
    out.push_str(tag);
    for n in numbers
        .iter()
        .copied()
        .chain(fields.iter().map(|f| f.len()))
    {
        write!(out, " {n}").unwrap();
    }
    out.push('\n');
    for field in fields {
        out.push_str(field);
        out.push('\n');
    }
}

/// Reads a file of a length-prefixed text format: its first line must be `format` (`what` names
/// such a file in the message), then entries, each handed to `entry` with the reader at its
/// fields, up to the `end` line, after which nothing may follow.
pub(crate) fn read_entries<'a>(
    text: &'a str,
    format: &str,
    what: &str,
    mut entry: impl FnMut(&mut Reader<'a>, &Entry<'a>) -> Result<(), String>,
) -> Result<(), String> {
    let mut reader = Reader::new(text);
    let header = reader.line()?;
    if header != format {
        return Err(format!(
            "line 1: expected `{format}`, found `{header}` (a {what} written by another version of pmexpr?)"
        ));
    }
    loop {
        let line = reader.line;
        let text = reader.line()?;
        if text == END {
            break;
        }
        entry(&mut reader, &Entry::parse(text, line)?)?;
    }
    if !reader.rest.is_empty() {
        return Err(format!("line {}: text after `{END}`", reader.line));
    }
    Ok(())
}

/// The header line of an entry: its tag, then numbers (the fields' byte lengths last).
pub(crate) struct Entry<'a> {
    /// The whole line.
    pub(crate) text: &'a str,
    /// The first word.
    pub(crate) tag: &'a str,
    /// The numbers after it.
    pub(crate) numbers: Vec<usize>,
    /// The line's number, 1-based.
    pub(crate) line: usize,
}

impl<'a> Entry<'a> {
    /// The header `text`, read at `line`.
    fn parse(text: &'a str, line: usize) -> Result<Entry<'a>, String> {
        let (tag, numbers) = parse_header(text).map_err(|e| format!("line {line}: {e}"))?;
        Ok(Entry {
            text,
            tag,
            numbers,
            line,
        })
    }

    /// `message`, said of this entry's line.
    pub(crate) fn at(&self, message: impl std::fmt::Display) -> String {
        format!("line {}: {message}", self.line)
    }

    /// The error for an entry that has no place here.
    pub(crate) fn unexpected(&self) -> String {
        self.at(format_args!("unexpected entry `{}`", self.text))
    }
}

/// Splits an entry header into its tag and numbers.
fn parse_header(header: &str) -> Result<(&str, Vec<usize>), String> {
    let mut words = header.split(' ');
    let tag = words.next().unwrap_or_default();
    let numbers = words
        .map(|w| {
            w.parse::<usize>()
                .map_err(|_| format!("`{w}` is not a number in `{header}`"))
        })
        .collect::<Result<_, _>>()?;
    Ok((tag, numbers))
}

/// A cursor over a length-prefixed text format that counts lines for the error messages.
pub(crate) struct Reader<'a> {
    /// What is left to read.
    pub(crate) rest: &'a str,
    /// The number of the next line, 1-based.
    pub(crate) line: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `text`.
    pub(crate) fn new(text: &'a str) -> Self {
        Reader {
            rest: text,
            line: 1,
        }
    }

    /// The next line, without its newline.
    pub(crate) fn line(&mut self) -> Result<&'a str, String> {
        let Some((line, rest)) = self.rest.split_once('\n') else {
            return Err(format!("line {}: unexpected end of the file", self.line));
        };
        self.rest = rest;
        self.line += 1;
        Ok(line)
    }

    /// The next line, an entry's header.
    pub(crate) fn entry(&mut self) -> Result<Entry<'a>, String> {
        let line = self.line;
        let text = self.line()?;
        Entry::parse(text, line)
    }

    /// The next `len` bytes, which must be followed by a newline.
    pub(crate) fn field(&mut self, len: usize) -> Result<&'a str, String> {
        let err = || format!("line {}: a field of {len} bytes does not fit", self.line);
        let field = self.rest.get(..len).ok_or_else(err)?;
        let rest = self.rest[len..].strip_prefix('\n').ok_or_else(err)?;
        self.line += field.matches('\n').count() + 1;
        self.rest = rest;
        Ok(field)
    }
}

/// Parses one source file into its token stream and its syntax tree, from the same tokens so
/// that their spans agree. Like `syn::parse_file`, a byte order mark and a shebang line are
/// ignored (the shebang's newline stays, so that lines keep their numbers).
pub fn parse_source(text: &str) -> syn::Result<(proc_macro2::TokenStream, syn::File)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // `#![attr]` is an inner attribute, not a shebang.
    let text = match text.strip_prefix("#!") {
        Some(rest) if !rest.trim_start().starts_with('[') => {
            text.find('\n').map_or("", |newline| &text[newline..])
        }
        _ => text,
    };
    let tokens: proc_macro2::TokenStream = syn::parse_str(text)?;
    let file = syn::parse2(tokens.clone())?;
    Ok((tokens, file))
}

/// Collects the `#[pmexpr]` functions and `Record` structs of a parsed file, in nested inline
/// modules too (not inside function bodies or impl blocks). `file` is the path that the items
/// record; `locate` turns the span of an item's name into its 1-based (line, column), which
/// only the caller can do (it depends on where the tokens were parsed).
pub fn collect_items(
    ast: &syn::File,
    file: &str,
    locate: &dyn Fn(Span) -> (usize, usize),
) -> Vec<RegistryItem> {
    let mut out = Vec::new();
    collect_in(&ast.items, file, locate, &mut out);
    out
}

fn collect_in(
    items: &[Item],
    file: &str,
    locate: &dyn Fn(Span) -> (usize, usize),
    out: &mut Vec<RegistryItem>,
) {
    for item in items {
        let (kind, ident, source) = match item {
            Item::Fn(f) if f.attrs.iter().any(is_pmexpr_attr) => {
                (ItemKind::Fn, &f.sig.ident, fn_source(f))
            }
            Item::Struct(s) if s.attrs.iter().any(derives_record) => {
                (ItemKind::Record, &s.ident, struct_source(s))
            }
            Item::Mod(m) => {
                if let Some((_, content)) = &m.content {
                    collect_in(content, file, locate, out);
                }
                continue;
            }
            _ => continue,
        };
        let (line, column) = locate(ident.span());
        out.push(RegistryItem {
            kind,
            name: ident.to_string(),
            file: file.to_owned(),
            line,
            column,
            source,
        });
    }
}

/// Whether a path is `name`, `pmexpr::name` or `::pmexpr::name`.
fn is_pmexpr_path(path: &syn::Path, name: &str) -> bool {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    match segments.as_slice() {
        [last] => path.leading_colon.is_none() && last == name,
        [krate, last] => krate == "pmexpr" && last == name,
        _ => false,
    }
}

/// `#[pmexpr]`, `#[pmexpr::pmexpr]` or `#[::pmexpr::pmexpr]` (with or without arguments).
fn is_pmexpr_attr(attr: &Attribute) -> bool {
    is_pmexpr_path(attr.path(), "pmexpr")
}

/// A `#[derive(…)]` whose list contains `Record`, `pmexpr::Record` or `::pmexpr::Record`.
fn derives_record(attr: &Attribute) -> bool {
    if !attr.path().is_ident("derive") {
        return false;
    }
    attr.parse_args_with(Punctuated::<syn::Path, Token![,]>::parse_terminated)
        .is_ok_and(|paths| paths.iter().any(|p| is_pmexpr_path(p, "Record")))
}

/// A function as text: signature and body, without visibility or attributes.
fn fn_source(f: &ItemFn) -> String {
    let mut f = f.clone();
    f.attrs.clear();
    f.vis = Visibility::Inherited;
    for input in &mut f.sig.inputs {
        match input {
            FnArg::Receiver(r) => r.attrs.clear(),
            FnArg::Typed(t) => t.attrs.clear(),
        }
    }
    f.to_token_stream().to_string()
}

/// A struct as text, without visibility or attributes (on the struct and its fields).
fn struct_source(s: &ItemStruct) -> String {
    let mut s = s.clone();
    s.attrs.clear();
    s.vis = Visibility::Inherited;
    for field in s.fields.iter_mut() {
        field.attrs.clear();
        field.vis = Visibility::Inherited;
    }
    s.to_token_stream().to_string()
}

/// The `.rs` files under `dirs` (relative to `root`), recursively and sorted, leaving out every
/// path under one of `exclude` (relative to `root`, a file or a directory). Directories that do
/// not exist or cannot be read are passed over; symbolic links to directories are not followed,
/// so a link cycle cannot loop.
pub fn source_files(root: &Path, dirs: &[&str], exclude: &[PathBuf]) -> Vec<PathBuf> {
    let exclude: Vec<PathBuf> = exclude.iter().map(|e| root.join(e)).collect();
    let mut files = Vec::new();
    for dir in dirs {
        walk(&root.join(dir), &exclude, &mut files);
    }
    files
}

fn walk(dir: &Path, exclude: &[PathBuf], files: &mut Vec<PathBuf>) {
    if exclude.iter().any(|e| dir.starts_with(e)) {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        if file_type.is_dir() {
            walk(&path, exclude, files);
        } else if path.extension().is_some_and(|ext| ext == "rs")
            && path.is_file()
            && !exclude.iter().any(|e| path.starts_with(e))
        {
            files.push(path);
        }
    }
}

/// `path` relative to `root`, `/`-separated (the whole path when it is not under `root`).
pub fn relative_path(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<_> = relative.iter().map(|p| p.to_string_lossy()).collect();
    parts.join("/")
}

/// Finds a `#[pmexpr]` function called `name` in the default directories of the package at
/// `root` (the first in file order), for the error that the proc macro reports when the build
/// hook did not run. Files that cannot be read or parsed are passed over.
///
/// Inside a proc macro, tokens parsed from a string carry no file positions, so the line and
/// column come from the text instead: the first `fn <name>` preceded, since the end of the
/// previous item, by a mention of `pmexpr` (else the first `fn <name>` at all). When the text
/// search finds nothing (say the name is written `r#name` in one place and `name` in the other),
/// the line and column are 0.
pub fn find_pmexpr_fn_in_sources(root: &Path, name: &str) -> Option<RegistryItem> {
    source_files(root, DEFAULT_DIRS, &[])
        .into_iter()
        .find_map(|path| find_pmexpr_fn_in_file(&path, &relative_path(root, &path), name))
}

/// The `#[pmexpr]` fn called `name` in the file at `path`, shown as `file` (see
/// [`find_pmexpr_fn_in_sources`] for how its position is found).
pub fn find_pmexpr_fn_in_file(path: &Path, file: &str, name: &str) -> Option<RegistryItem> {
    let text = fs::read_to_string(path).ok()?;
    let (_, ast) = parse_source(&text).ok()?;
    let mut item = collect_items(&ast, file, &|_| (0, 0))
        .into_iter()
        .find(|item| item.kind == ItemKind::Fn && item.name == name)?;
    (item.line, item.column) = locate_fn_in_text(&text, name).unwrap_or((0, 0));
    Some(item)
}

/// The 1-based (line, column) of the name in the best `fn <name>` of `text` (see
/// [`find_pmexpr_fn_in_sources`]).
fn locate_fn_in_text(text: &str, name: &str) -> Option<(usize, usize)> {
    let candidates: Vec<usize> = text
        .match_indices(name)
        .map(|(at, _)| at)
        .filter(|&at| is_fn_name_at(text, at, name))
        .collect();
    let marked = candidates.iter().copied().find(|&at| {
        let before = &text[..at];
        let item_start = before.rfind([';', '}']).map_or(0, |i| i + 1);
        before[item_start..].contains("pmexpr")
    });
    let at = marked.or_else(|| candidates.first().copied())?;
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[..at].matches('\n').count() + 1;
    let column = text[line_start..at].chars().count() + 1;
    Some((line, column))
}

/// Whether `name` at byte `at` is a whole identifier preceded by the keyword `fn`.
fn is_fn_name_at(text: &str, at: usize, name: &str) -> bool {
    let is_ident_char = |c: char| c.is_alphanumeric() || c == '_';
    let after = text[at + name.len()..].chars().next();
    if after.is_some_and(is_ident_char) {
        return false;
    }
    let before = text[..at].trim_end();
    if before.len() == at {
        return false; // no whitespace between `fn` and the name
    }
    let Some(rest) = before.strip_suffix("fn") else {
        return false;
    };
    !rest.chars().next_back().is_some_and(is_ident_char)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(kind: ItemKind, name: &str, file: &str, line: usize, source: &str) -> RegistryItem {
        RegistryItem {
            kind,
            name: name.into(),
            file: file.into(),
            line,
            column: 4,
            source: source.into(),
        }
    }

    /// A site with any text as its tokens (the format must carry text that does not parse too).
    fn site(file: &str, line: usize, column: usize, tokens: &str) -> SiteSource {
        SiteSource {
            file: file.into(),
            line,
            column,
            tokens: tokens.into(),
            key: 0x0123_4567_89ab_cdef,
        }
    }

    /// A temporary directory unique to this process and test, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(test: &str) -> TempDir {
            let dir =
                std::env::temp_dir().join(format!("pmexpr-core-{}-{test}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }

        fn write(&self, path: &str, text: &str) {
            let path = self.0.join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn round_trip_awkward_sources() {
        let registry = Registry::new(
            vec![
                item(ItemKind::Fn, "g", "src/lib.rs", 3, "fn g() {\n}\nend\n"),
                item(
                    ItemKind::Record,
                    "Été",
                    "src/é x.rs",
                    1,
                    "fn 1 2 3 4 5\nsite 1 1 1 1\n",
                ),
                item(ItemKind::Fn, "h", "src/lib.rs", 9, ""),
                item(ItemKind::Fn, "crlf", "src/lib.rs", 12, "a\r\nb\n\n\n"),
            ],
            vec![
                site("src/lib.rs", 7, 13, "x + 1"),
                site("src/main.rs", 1, 1, "\"pmexpr-registry 1\nend\" 😀"),
                site("src/lib.rs", 7, 2, ""),
            ],
        );
        let text = registry.to_text();
        assert!(text.starts_with("pmexpr-registry 2\n"));
        assert_eq!(Registry::from_text(&text), Ok(registry));
    }

    #[test]
    fn new_sorts_by_file_line_column() {
        let registry = Registry::new(
            vec![
                item(ItemKind::Fn, "b", "src/b.rs", 1, ""),
                item(ItemKind::Fn, "a2", "src/a.rs", 10, ""),
                item(ItemKind::Fn, "a1", "src/a.rs", 2, ""),
            ],
            vec![site("src/a.rs", 3, 9, ""), site("src/a.rs", 3, 2, "")],
        );
        let names: Vec<_> = registry.items.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["a1", "a2", "b"]);
        assert_eq!(registry.sites[0].column, 2);
    }

    #[test]
    fn from_text_rejects_damaged_files() {
        let text = Registry::new(
            vec![item(ItemKind::Fn, "g", "src/lib.rs", 3, "fn g")],
            vec![],
        )
        .to_text();
        // Truncated anywhere, including just before `end`.
        for cut in 0..text.len() {
            assert!(Registry::from_text(&text[..cut]).is_err(), "cut at {cut}");
        }
        assert!(Registry::from_text(&text.replace("fn 3", "fn x")).is_err());
        assert!(Registry::from_text(&text.replace("registry 2", "registry 1")).is_err());
        assert!(Registry::from_text(&text.replace(" 4\n", " 99\n")).is_err());
        assert!(Registry::from_text(&format!("{text}more")).is_err());
        assert!(Registry::from_text(&text.replace("fn 3", "enum 3")).is_err());
    }

    #[test]
    fn from_text_rejects_a_length_inside_a_character() {
        let text = Registry::new(vec![], vec![site("é", 1, 1, "")]).to_text();
        let damaged = text.replace("site 1 1 2 16 0", "site 1 1 1 17 0");
        assert_ne!(damaged, text);
        assert!(Registry::from_text(&damaged).is_err());
    }

    #[test]
    fn find_by_kind_and_name() {
        let registry = Registry::new(
            vec![
                item(ItemKind::Fn, "g", "src/a.rs", 1, ""),
                item(ItemKind::Record, "g", "src/a.rs", 5, ""),
                item(ItemKind::Fn, "g", "src/b.rs", 1, ""),
            ],
            vec![],
        );
        assert_eq!(registry.find_fn("g").len(), 2);
        assert_eq!(registry.find_record("g")[0].line, 5);
        assert!(registry.find_fn("h").is_empty());
    }

    #[test]
    fn load_missing_present_and_damaged() {
        let dir = TempDir::new("load");
        assert_eq!(Registry::load(&dir.0), None);
        let registry = Registry::new(vec![], vec![site("src/lib.rs", 1, 1, "1")]);
        dir.write(Registry::FILE_NAME, &registry.to_text());
        assert_eq!(Registry::load(&dir.0), Some(Ok(registry)));
        dir.write(Registry::FILE_NAME, "garbage");
        assert!(matches!(Registry::load(&dir.0), Some(Err(_))));
    }

    #[test]
    fn collects_marked_items_and_strips_attributes() {
        let text = "
            /// Doc.
            #[inline] #[pmexpr] pub(crate) fn g(#[allow(unused)] x: i64) -> i64 { addi(x, 1) }
            fn plain() {}
            #[derive(Debug, pmexpr::Record)]
            pub struct P { /// x.
                pub x: i64, y: f64 }
            #[derive(Debug)] struct NotARecord;
            #[derive(other::Record)] struct AlsoNot;
            #[derive(Record)] struct T(pub i64);
            mod m { mod n { #[::pmexpr::pmexpr] fn deep() {} } }
            #[cfg(test)] fn f() { #[pmexpr] fn inside_body_skipped() {} }
            #[x::pmexpr] fn not_ours() {}
        ";
        let (_, ast) = parse_source(text).unwrap();
        let items = collect_items(&ast, "src/lib.rs", &|_| (1, 1));
        let summary: Vec<_> = items.iter().map(|i| (i.kind, i.name.as_str())).collect();
        assert_eq!(
            summary,
            [
                (ItemKind::Fn, "g"),
                (ItemKind::Record, "P"),
                (ItemKind::Record, "T"),
                (ItemKind::Fn, "deep")
            ]
        );
        assert_eq!(items[0].source, "fn g (x : i64) -> i64 { addi (x , 1) }");
        assert_eq!(items[1].source, "struct P { x : i64 , y : f64 }");
        assert_eq!(items[2].source, "struct T (i64) ;");
        assert_eq!(items[3].file, "src/lib.rs");
    }

    #[test]
    fn parse_source_skips_bom_and_shebang_but_not_inner_attributes() {
        let (_, ast) = parse_source("\u{feff}#!/usr/bin/env run\n#[pmexpr] fn g() {}").unwrap();
        assert_eq!(ast.items.len(), 1);
        let (_, ast) = parse_source("#![allow(unused)]\nfn g() {}").unwrap();
        assert_eq!(ast.attrs.len(), 1);
        assert!(parse_source("fn g( {}").is_err());
    }

    #[test]
    fn source_files_are_sorted_and_excluded() {
        let dir = TempDir::new("files");
        for path in [
            "src/b.rs",
            "src/a/z.rs",
            "src/a.rs",
            "src/notes.txt",
            "tests/ui/x.rs",
        ] {
            dir.write(path, "");
        }
        dir.write("tests/t.rs", "");
        let files = source_files(&dir.0, DEFAULT_DIRS, &[PathBuf::from("tests/ui")]);
        let names: Vec<_> = files.iter().map(|f| relative_path(&dir.0, f)).collect();
        assert_eq!(names, ["src/a/z.rs", "src/a.rs", "src/b.rs", "tests/t.rs"]);
    }

    #[test]
    fn finds_a_fn_in_the_sources_with_a_textual_position() {
        let dir = TempDir::new("find");
        dir.write("src/lib.rs", "mod m;\n// fn g is in m\n");
        dir.write(
            "src/m.rs",
            "fn g_other() {}\nfn g() {} // not marked\nmod inner {\n    #[pmexpr]\n    fn  g(x: i64) -> i64 { x }\n}\n",
        );
        let found = find_pmexpr_fn_in_sources(&dir.0, "g").unwrap();
        assert_eq!(
            (found.file.as_str(), found.line, found.column),
            ("src/m.rs", 5, 9)
        );
        assert_eq!(found.source, "fn g (x : i64) -> i64 { x }");
        assert_eq!(find_pmexpr_fn_in_sources(&dir.0, "h"), None);
    }

    #[test]
    fn textual_position_falls_back_to_the_first_fn_then_to_zero() {
        assert_eq!(
            locate_fn_in_text("struct fn_x;\n\tfn é() {}", "é"),
            Some((2, 5))
        );
        assert_eq!(locate_fn_in_text("fn gg() {} fn_g", "g"), None);
    }

    #[test]
    fn a_test_or_example_file_keeps_its_functions_to_itself() {
        let item = |file: &str| RegistryItem {
            kind: ItemKind::Fn,
            name: "f".into(),
            file: file.into(),
            line: 1,
            column: 1,
            source: "fn f(x: i64) -> i64 { x }".into(),
        };
        let registry = Registry::new(
            vec![
                item("src/lib.rs"),
                item("tests/a.rs"),
                item("tests/common/mod.rs"),
                item("examples/b.rs"),
            ],
            Vec::new(),
        );
        let seen = |file: &str| registry.prelude_for(Some(Path::new(file))).len();
        // The library's and the shared test module's functions, and the file's own.
        assert_eq!(seen("tests/a.rs"), 3);
        assert_eq!(seen("/home/u/pkg/tests/a.rs"), 3);
        assert_eq!(seen("tests/other.rs"), 2);
        assert_eq!(seen("examples/b.rs"), 3);
        assert_eq!(seen("src/lib.rs"), 2);
        assert_eq!(registry.prelude().len(), 4);
    }
}
