//! The Rust side of a Futhark-class site: the glue file that the build hook generated for it from
//! the compiled library's manifest (`pmexpr-build`, `futhark::glue`), which the site's expansion
//! `include!`s, or the reason the site has none.

use crate::classify::Backend;
use crate::codegen::rust::{CudaBuild, FutharkHost};
use crate::mangle::glue_file;
use crate::site::SiteProgram;

/// The glue of a site, where the build hook wrote it under `OUT_DIR` (`None`: not a Futhark-class
/// site).
pub fn futhark_host(program: &SiteProgram, build: &CudaBuild) -> Option<FutharkHost> {
    if program.backend != Backend::Futhark {
        return None;
    }
    let file = build
        .out_dir
        .as_ref()
        .map(|d| glue_file(d, &build.site_name));
    Some(
        match file
            .filter(|f| f.is_file())
            .and_then(|f| f.to_str().map(str::to_owned))
        {
            Some(path) => FutharkHost::Glue(path),
            None => FutharkHost::Missing,
        },
    )
}
