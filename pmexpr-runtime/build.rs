//! Reads the maximum tensor rank (the paper's `--tensor-max-rank`, 3 by default) from the
//! environment at build time, so that tensor views can keep their shape inline.
use std::env;
use std::fs;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=PMEXPR_TENSOR_MAX_RANK");
    let rank = match env::var("PMEXPR_TENSOR_MAX_RANK") {
        Err(_) => 3,
        Ok(text) => match text.trim().parse::<usize>() {
            Ok(n) if (1..=16).contains(&n) => n,
            _ => {
                eprintln!(
                    "error: PMEXPR_TENSOR_MAX_RANK={text:?} is not a tensor rank between 1 and 16"
                );
                std::process::exit(1);
            }
        },
    };
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::write(
        out.join("max_rank.rs"),
        format!("/// The maximum rank of a tensor that `accelerate!` accepts (`PMEXPR_TENSOR_MAX_RANK` at build time).\npub const MAX_RANK: usize = {rank};\n"),
    )
    .expect("write max_rank.rs into OUT_DIR");
}
