//! The build hook's CUDA manifest: for every CUDA-class `accelerate!` site the hook compiled, the
//! module files it wrote under `OUT_DIR` (the `.cu`, and the `.ptx` where NVRTC made one), one per
//! instantiation of the site's number types, with what the runtime needs of each module's kernels
//! (names, parameter layouts, checks), in the order of the site's kernel split
//! ([`crate::kernels`]).
//!
//! The CUDA code of a site is generated once, by the hook (`pmexpr-build`, which writes this file
//! as [`CudaManifest::FILE`]); `accelerate!` reads the manifest, embeds the files it names
//! (`include_str!`, so that cargo tracks them) and generates the launches from its own kernel
//! split ([`super::cuda`]), never the CUDA code itself. The hook and the macro run the same passes
//! over the same tokens, so the split gives both the same kernels in the same order: the manifest
//! holds no node of the site's program, only each kernel's ABI, which the macro checks against
//! its split. The site's key ([`crate::mangle::site_key`]) tells a stale entry from the site's
//! own.
//!
//! # The text format
//!
//! Line-oriented like the registry's ([`crate::registry`]): every variable-length field is
//! preceded by its byte length on the entry's header line, and followed by one `\n` that the length
//! does not count.
//!
//! ```text
//! pmexpr-cuda-manifest 1
//! site <name-bytes> <key-bytes> <body-bytes>
//! <name: file:line:column>
//! <key: 16 hexadecimal digits>
//! <body: the site's entries, below>
//! site …
//! end
//! ```
//!
//! A site's body is one field, so that `accelerate!` skips the other sites' bodies unread
//! ([`CudaManifest::site_in`]). It holds either why the site runs on the CPU targets only:
//!
//! ```text
//! cpu <why-bytes>
//! <why>
//! ```
//!
//! or its number of kernels, then its modules, each followed by its kernels (each followed by its
//! parameters, the last `n`) and its runtime checks:
//!
//! ```text
//! kernels <count>
//! module <max-rank> <tags-bytes> <namespace-bytes> <cu-bytes> <ptx-bytes>
//! <number types, space-separated>
//! <namespace>
//! <the .cu file, relative to OUT_DIR>
//! <the .ptx file, relative to OUT_DIR; empty when there is none>
//! kernel <name-bytes>
//! <name>
//! param <size> <align> <name-bytes> <c-type-bytes>
//! <name>
//! <C type>
//! check <text-bytes>
//! <text>
//! ```
//!
//! The final `end` line tells a complete file from a truncated one.

use std::fs;
use std::io;
use std::path::Path;

use crate::registry::{END, Reader, read_entries, write_entry};

/// The first line of the text format; the number changes with the format.
const FORMAT_HEADER: &str = "pmexpr-cuda-manifest 2";

/// What the build hook generated for the CUDA-class sites of a crate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CudaManifest {
    /// The sites, in the hook's (registry) order.
    pub sites: Vec<ManifestSite>,
}

/// One CUDA-class site of the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestSite {
    /// `file:line:column` of the site ([`crate::mangle::site_name`]).
    pub name: String,
    /// [`crate::mangle::site_key`] of the site's tokens.
    pub key: u64,
    /// Its modules, or why it runs on the CPU targets only (the hook's warning).
    pub cuda: Result<SiteModules, String>,
}

/// The modules of a CUDA-class site, one per instantiation of its number types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteModules {
    /// The number of kernels the site launches: every module has as many, in the order of the
    /// site's kernel split.
    pub kernels: usize,
    /// The modules, the default instantiation first.
    pub modules: Vec<ModuleFiles>,
}

/// One module: its files under `OUT_DIR` and what the runtime needs of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleFiles {
    /// The Rust types of the number type variables (`i64`, `f32`, `bool`), in variable order.
    pub instantiation: Vec<String>,
    /// The C++ namespace of the module.
    pub namespace: String,
    /// The CUDA C++ source, relative to `OUT_DIR` (`/`-separated).
    pub source: String,
    /// The PTX NVRTC compiled it to, relative to `OUT_DIR`, when the hook found NVRTC.
    pub ptx: Option<String>,
    /// The kernels, in launch-index order.
    pub kernels: Vec<KernelAbi>,
    /// What each runtime check is, in words (`checks[k - 1]` for check number `k`).
    pub checks: Vec<String>,
    /// The maximum tensor rank the module was generated for.
    pub max_rank: usize,
}

/// A kernel as the runtime launches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelAbi {
    /// The `extern "C"` name.
    pub name: String,
    /// Its parameters, in order (the last is `n`).
    pub params: Vec<ParamAbi>,
}

/// A kernel parameter's C type and layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamAbi {
    /// The parameter's name in the source.
    pub name: String,
    /// Its C++ type.
    pub c_type: String,
    /// Its size in bytes.
    pub size: usize,
    /// Its alignment in bytes.
    pub align: usize,
}

impl CudaManifest {
    /// The directory of the CUDA modules and of the manifest, relative to `OUT_DIR`.
    pub const DIR: &str = "pmexpr/cuda";

    /// The manifest's file, relative to `OUT_DIR`.
    pub const FILE: &str = "pmexpr/cuda/manifest.txt";

    /// The entry of the site called `name` whose tokens have the key `key`.
    pub fn site(&self, name: &str, key: u64) -> Option<&ManifestSite> {
        self.sites.iter().find(|s| s.name == name && s.key == key)
    }

    /// The manifest in the text format (see the module documentation).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        out.push_str(FORMAT_HEADER);
        out.push('\n');
        for site in &self.sites {
            let key = format!("{:016x}", site.key);
            let body = site_body(&site.cuda);
            write_entry(&mut out, "site", &[], &[&site.name, &key, &body]);
        }
        out.push_str(END);
        out.push('\n');
        out
    }

    /// Reads the text format back; the error says what is wrong and on which line.
    pub fn from_text(text: &str) -> Result<CudaManifest, String> {
        let mut manifest = CudaManifest::default();
        read_sites(text, |_, _| true, |site| manifest.sites.push(site))?;
        Ok(manifest)
    }

    /// The entry of the site called `name` whose tokens have the key `key`, read from the text
    /// format without reading the other sites' entries (what `accelerate!` does).
    pub fn site_in(text: &str, name: &str, key: u64) -> Result<Option<ManifestSite>, String> {
        let mut found = None;
        read_sites(
            text,
            |n, k| n == name && k == key,
            |site| found = Some(site),
        )?;
        Ok(found)
    }

    /// The text of [`CudaManifest::FILE`] in `out_dir`: `None` when the file does not exist (the
    /// build hook did not run), an error when it cannot be read.
    pub fn read(out_dir: &Path) -> Option<Result<String, String>> {
        let path = out_dir.join(Self::FILE);
        match fs::read_to_string(&path) {
            Ok(text) => Some(Ok(text)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => Some(Err(format!("{}: {e}", path.display()))),
        }
    }
}

/// The entries of a site's body (everything after its `site` entry's name and key).
fn site_body(cuda: &Result<SiteModules, String>) -> String {
    let mut out = String::new();
    let modules = match cuda {
        Err(why) => {
            write_entry(&mut out, "cpu", &[], &[why]);
            return out;
        }
        Ok(m) => m,
    };
    write_entry(&mut out, "kernels", &[modules.kernels], &[]);
    for m in &modules.modules {
        let tags = m.instantiation.join(" ");
        let ptx = m.ptx.as_deref().unwrap_or_default();
        let fields = [tags.as_str(), &m.namespace, &m.source, ptx];
        write_entry(&mut out, "module", &[m.max_rank], &fields);
        for k in &m.kernels {
            write_entry(&mut out, "kernel", &[], &[&k.name]);
            for p in &k.params {
                write_entry(&mut out, "param", &[p.size, p.align], &[&p.name, &p.c_type]);
            }
        }
        for c in &m.checks {
            write_entry(&mut out, "check", &[], &[c]);
        }
    }
    out
}

/// Reads the sites of the text format, handing those that `wanted` picks (by name and key) to
/// `take`; the others' bodies are skipped unread.
fn read_sites(
    text: &str,
    wanted: impl Fn(&str, u64) -> bool,
    mut take: impl FnMut(ManifestSite),
) -> Result<(), String> {
    read_entries(text, FORMAT_HEADER, "manifest", |reader, entry| {
        let ("site", &[name, key, body]) = (entry.tag, entry.numbers.as_slice()) else {
            return Err(entry.unexpected());
        };
        let name = reader.field(name)?;
        let key = reader.field(key)?;
        let key = u64::from_str_radix(key, 16)
            .map_err(|_| entry.at(format_args!("`{key}` is not a site key")))?;
        let body_line = reader.line;
        let body = reader.field(body)?;
        if wanted(name, key) {
            let cuda = read_body(Reader {
                rest: body,
                line: body_line,
            })
            .map_err(|e| format!("site {name}: {e}"))?;
            take(ManifestSite {
                name: name.to_owned(),
                key,
                cuda,
            });
        }
        Ok(())
    })
}

/// Reads a site's body: a `cpu` entry, or a `kernels` entry and the modules.
fn read_body(mut reader: Reader<'_>) -> Result<Result<SiteModules, String>, String> {
    let mut site: Option<Result<SiteModules, String>> = None;
    while !reader.rest.is_empty() {
        let entry = reader.entry()?;
        let tag = entry.tag;
        let misplaced = || entry.at(format_args!("`{tag}` is not where it may be"));
        match (tag, entry.numbers.as_slice(), site.as_mut()) {
            ("cpu", &[why], None) => site = Some(Err(reader.field(why)?.to_owned())),
            ("kernels", &[kernels], None) => {
                site = Some(Ok(SiteModules {
                    kernels,
                    modules: Vec::new(),
                }));
            }
            ("module", &[max_rank, tags, namespace, source, ptx], Some(Ok(site))) => {
                let tags = reader.field(tags)?;
                let namespace = reader.field(namespace)?.to_owned();
                let source = reader.field(source)?.to_owned();
                let ptx = reader.field(ptx)?;
                site.modules.push(ModuleFiles {
                    instantiation: tags.split_whitespace().map(str::to_owned).collect(),
                    namespace,
                    source,
                    ptx: (!ptx.is_empty()).then(|| ptx.to_owned()),
                    kernels: Vec::new(),
                    checks: Vec::new(),
                    max_rank,
                });
            }
            ("kernel" | "param" | "check", _, Some(Ok(site))) => {
                let module = site.modules.last_mut().ok_or_else(misplaced)?;
                match (tag, entry.numbers.as_slice()) {
                    ("kernel", &[name]) => module.kernels.push(KernelAbi {
                        name: reader.field(name)?.to_owned(),
                        params: Vec::new(),
                    }),
                    ("param", &[size, align, name, c_type]) => {
                        let kernel = module.kernels.last_mut().ok_or_else(misplaced)?;
                        kernel.params.push(ParamAbi {
                            name: reader.field(name)?.to_owned(),
                            c_type: reader.field(c_type)?.to_owned(),
                            size,
                            align,
                        });
                    }
                    ("check", &[text]) => module.checks.push(reader.field(text)?.to_owned()),
                    _ => return Err(entry.unexpected()),
                }
            }
            ("cpu" | "kernels" | "module" | "kernel" | "param" | "check", _, _) => {
                return Err(misplaced());
            }
            _ => return Err(entry.unexpected()),
        }
    }
    let site = site.ok_or_else(|| format!("line {}: an empty entry", reader.line))?;
    if let Ok(m) = &site
        && (m.modules.is_empty() || m.modules.iter().any(|x| x.kernels.len() != m.kernels))
    {
        return Err(format!(
            "{} kernels launched, but a module has another number of kernels (or there is no module)",
            m.kernels
        ));
    }
    Ok(site)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> CudaManifest {
        let kernel = |name: &str| KernelAbi {
            name: name.into(),
            params: vec![
                ParamAbi {
                    name: "t_3".into(),
                    c_type: "pm_tensor<double>".into(),
                    size: 80,
                    align: 8,
                },
                ParamAbi {
                    name: "n".into(),
                    c_type: "long long".into(),
                    size: 8,
                    align: 8,
                },
            ],
        };
        let module = |tag: &str, ptx: bool| ModuleFiles {
            instantiation: if tag.is_empty() {
                vec![]
            } else {
                vec![tag.into(), "bool".into()]
            },
            namespace: format!("pm_src_a_rs_1_2{tag}"),
            source: format!("pmexpr/cuda/pm_src_a_rs_1_2{tag}.cu"),
            ptx: ptx.then(|| format!("pmexpr/cuda/pm_src_a_rs_1_2{tag}.ptx")),
            kernels: vec![kernel("k0"), kernel("k1")],
            checks: vec!["`get` in device function `f`\nwith a newline".into()],
            max_rank: 8,
        };
        CudaManifest {
            sites: vec![
                ManifestSite {
                    name: "src/a.rs:1:2".into(),
                    key: 0x0123_4567_89ab_cdef,
                    cuda: Ok(SiteModules {
                        kernels: 2,
                        modules: vec![module("i64", true), module("f32", false)],
                    }),
                },
                ManifestSite {
                    name: "src/b.rs:3:4".into(),
                    key: 1,
                    cuda: Err("its host code uses a function as a value".into()),
                },
                ManifestSite {
                    name: "src/c.rs:5:6".into(),
                    key: 2,
                    cuda: Ok(SiteModules {
                        kernels: 2,
                        modules: vec![module("", false)],
                    }),
                },
            ],
        }
    }

    #[test]
    fn round_trips() {
        let m = sample();
        let text = m.to_text();
        assert_eq!(CudaManifest::from_text(&text), Ok(m.clone()));
        assert!(
            text.starts_with("pmexpr-cuda-manifest 2\nsite 12 16 "),
            "{text}"
        );
        assert!(
            text.contains(
                "\nsrc/a.rs:1:2\n0123456789abcdef\nkernels 2\nmodule 8 8 18 33 34\ni64 bool\n"
            ),
            "{text}"
        );
        assert_eq!(
            m.site("src/a.rs:1:2", 0x0123_4567_89ab_cdef),
            Some(&m.sites[0])
        );
        // Another key: a stale entry, not this site's.
        assert_eq!(m.site("src/a.rs:1:2", 5), None);
        assert_eq!(
            CudaManifest::from_text(&CudaManifest::default().to_text()),
            Ok(CudaManifest::default())
        );
    }

    #[test]
    fn one_site_is_read_without_the_others() {
        let m = sample();
        let text = m.to_text();
        for s in &m.sites {
            assert_eq!(
                CudaManifest::site_in(&text, &s.name, s.key),
                Ok(Some(s.clone()))
            );
        }
        assert_eq!(CudaManifest::site_in(&text, "src/b.rs:3:4", 2), Ok(None));
        // The other sites' bodies are not read: a broken one does not matter.
        // The last site's `kernels` entry broken.
        let at = text.rfind("kernels 2").unwrap();
        let broken = format!("{}kernels X{}", &text[..at], &text[at + 9..]);
        assert_ne!(broken, text);
        assert!(CudaManifest::from_text(&broken).is_err());
        assert_eq!(
            CudaManifest::site_in(&broken, "src/a.rs:1:2", 0x0123_4567_89ab_cdef),
            Ok(Some(m.sites[0].clone()))
        );
    }

    #[test]
    fn broken_manifests_are_errors() {
        let text = sample().to_text();
        let body = |s: &ManifestSite| site_body(&s.cuda);
        let sites = sample().sites;
        // A site's body with one line changed (its length fixed), in place of the first's.
        let with_body = |from: &str, to: &str| {
            let old = body(&sites[0]);
            let new = old.replacen(from, to, 1);
            assert_ne!(old, new, "{from}");
            text.replacen(
                &format!("site 12 16 {}\n", old.len()),
                &format!("site 12 16 {}\n", new.len()),
                1,
            )
            .replacen(&old, &new, 1)
        };
        for (broken, says) in [
            (text[..text.len() - 4].to_string(), "unexpected end"),
            (
                text.replace("pmexpr-cuda-manifest 2", "pmexpr-cuda-manifest 1"),
                "another version",
            ),
            (
                with_body("kernels 2", "kernels 3"),
                "another number of kernels",
            ),
            (with_body("kernels 2", "launch 2"), "unexpected entry"),
            (with_body("kernels 2\n", ""), "not where it may be"),
            (with_body("kernels 2", "kernels 2 7"), "not where it may be"),
            (
                with_body("kernels 2", "cpu 0\n\nkernels 2"),
                "not where it may be",
            ),
            (
                text.replacen("site 12 16", "kernel 12 16", 1),
                "unexpected entry",
            ),
            (format!("{text}more"), "text after"),
        ] {
            let e = CudaManifest::from_text(&broken).unwrap_err();
            assert!(e.contains(says), "{says}: {e}");
        }
    }
}
