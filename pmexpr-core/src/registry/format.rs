//! The registry's text format (described in the documentation of the `registry` module): the
//! registry written as text and read back, and the file in `OUT_DIR` loaded. A damaged or
//! truncated file is an error that says on which line.

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

use super::{ItemKind, Registry, RegistryItem, SiteSource};

/// The first line of the text format; the number changes with the format.
const FORMAT_HEADER: &str = "pmexpr-registry 3";

/// The last line of the text format (and of the CUDA manifest's).
pub(crate) const END: &str = "end";

impl ItemKind {
    /// The tag of the kind in the text format.
    fn tag(self) -> &'static str {
        match self {
            ItemKind::Fn => "fn",
            ItemKind::Record => "record",
            ItemKind::Alias => "alias",
        }
    }
}

impl Registry {
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
                ("fn" | "record" | "alias", &[line, column, name, file, source]) => {
                    registry.items.push(RegistryItem {
                        kind: match entry.tag {
                            "fn" => ItemKind::Fn,
                            "record" => ItemKind::Record,
                            _ => ItemKind::Alias,
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

/// Writes one entry of a length-prefixed text format (this one, and the build hook's CUDA
/// manifest, [`crate::glue::manifest`]): a header line with the tag, the numbers and the fields'
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
