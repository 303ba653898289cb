//! The runtime's module graph stays acyclic, and the base number traits stay free of the backends:
//! a module depends on the modules whose items it names (`crate::…` and `super::…` paths, test
//! modules left out; a module naming its own ancestor, e.g. for a re-export, does not count).

mod graph;

use std::path::Path;

use graph::{cycle, graph};

fn modules() -> std::collections::BTreeMap<String, String> {
    graph::modules(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

#[test]
fn the_module_graph_is_acyclic() {
    let g = graph(&modules());
    assert_eq!(cycle(&g), None);
    // The graph is read correctly: these edges exist.
    assert!(g["cuda::call"].contains("cuda::arg"), "{g:?}");
    assert!(g["cuda::arg"].contains("cuda::upload"), "{g:?}");
    assert!(g["futhark::leaf"].contains("numeric"), "{g:?}");
}

#[test]
fn the_number_traits_know_no_backend() {
    let g = graph(&modules());
    for base in ["numeric", "tensor", "prim"] {
        for d in &g[base] {
            assert!(
                !(d.starts_with("cuda") || d.starts_with("futhark") || d == "backend"),
                "`{base}` depends on the backend module `{d}`"
            );
        }
    }
}
