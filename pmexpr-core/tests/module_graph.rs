//! pmexpr-core's module graph stays acyclic: the passes, the merge of a crate's sites and the code
//! generators depend one way (the glue of the GPU targets on the Rust generator, not back).

#[path = "../../pmexpr-runtime/tests/graph/mod.rs"]
mod graph;

use std::path::Path;

use graph::{cycle, graph};

#[test]
fn the_module_graph_is_acyclic() {
    let g = graph(&graph::modules(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
    ));
    assert_eq!(cycle(&g), None);
    // The graph is read correctly: these edges exist.
    assert!(g["glue::cuda"].contains("codegen::cuda"), "{g:?}");
    assert!(g["codegen::futhark"].contains("merge"), "{g:?}");
    assert!(g["infer"].contains("types"), "{g:?}");
    // The folders of one file per concept are read too.
    assert!(g["parse::expr"].contains("parse::span"), "{g:?}");
    assert!(g["infer::apply"].contains("infer::unify"), "{g:?}");
    assert!(g["registry::find"].contains("registry::walk"), "{g:?}");
}
