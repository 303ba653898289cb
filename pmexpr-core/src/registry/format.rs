//! The registry's text format (described in the documentation of the `registry` module): the
//! registry written as text and read back, and the file in `OUT_DIR` loaded. A damaged or
//! truncated file is an error that says on which line.

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

use super::{ItemKind, Registry, RegistryItem, SiteSource};

/// The first line of the text format; the number changes with the format.
const FORMAT_HEADER: &str = "pmexpr-registry 2";

/// The last line of the text format.
const END: &str = "end";

impl ItemKind {
    /// The tag of the kind in the text format.
    fn tag(self) -> &'static str {
        match self {
            ItemKind::Fn => "fn",
            ItemKind::Record => "record",
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
            let fields = [&item.name, &item.file, &item.source];
            write_entry(&mut out, item.kind.tag(), item.line, item.column, &fields);
        }
        for site in &self.sites {
            let key = format!("{:016x}", site.key);
            let fields = [&site.file, &key, &site.tokens];
            write_entry(&mut out, "site", site.line, site.column, &fields);
        }
        out.push_str(END);
        out.push('\n');
        out
    }

    /// Reads the text format back; the error says what is wrong and on which line.
    pub fn from_text(text: &str) -> Result<Registry, String> {
        let mut reader = Reader {
            rest: text,
            line: 1,
        };
        let header = reader.line()?;
        if header != FORMAT_HEADER {
            return Err(format!(
                "line 1: expected `{FORMAT_HEADER}`, found `{header}` (a registry written by another version of pmexpr?)"
            ));
        }
        let mut registry = Registry::default();
        loop {
            let header_line = reader.line;
            let header = reader.line()?;
            if header == END {
                break;
            }
            let at = |e: String| format!("line {header_line}: {e}");
            let (tag, numbers) = parse_header(header).map_err(at)?;
            match (tag, numbers.as_slice()) {
                ("fn" | "record", &[line, column, name, file, source]) => {
                    registry.items.push(RegistryItem {
                        kind: if tag == "fn" {
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
                        .map_err(|_| at(format!("`{key}` is not a site key")))?;
                    registry.sites.push(SiteSource {
                        file,
                        line,
                        column,
                        key,
                        tokens: reader.field(tokens)?.to_owned(),
                    })
                }
                _ => return Err(at(format!("unexpected entry `{header}`"))),
            }
        }
        if !reader.rest.is_empty() {
            return Err(format!("line {}: text after `{END}`", reader.line));
        }
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

/// Writes one entry: a header line with the tag, position and field lengths, then each field
/// followed by a newline.
fn write_entry(out: &mut String, tag: &str, line: usize, column: usize, fields: &[&String]) {
    write!(out, "{tag} {line} {column}").unwrap();
    for field in fields {
        write!(out, " {}", field.len()).unwrap();
    }
    out.push('\n');
    for field in fields {
        out.push_str(field);
        out.push('\n');
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

/// A cursor over the text format that counts lines for the error messages.
struct Reader<'a> {
    rest: &'a str,
    line: usize,
}

impl<'a> Reader<'a> {
    /// The next line, without its newline.
    fn line(&mut self) -> Result<&'a str, String> {
        let Some((line, rest)) = self.rest.split_once('\n') else {
            return Err(format!(
                "line {}: unexpected end of the registry",
                self.line
            ));
        };
        self.rest = rest;
        self.line += 1;
        Ok(line)
    }

    /// The next `len` bytes, which must be followed by a newline.
    fn field(&mut self, len: usize) -> Result<&'a str, String> {
        let err = || format!("line {}: a field of {len} bytes does not fit", self.line);
        let field = self.rest.get(..len).ok_or_else(err)?;
        let rest = self.rest[len..].strip_prefix('\n').ok_or_else(err)?;
        self.line += field.matches('\n').count() + 1;
        self.rest = rest;
        Ok(field)
    }
}
