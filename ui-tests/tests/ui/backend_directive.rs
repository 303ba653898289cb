// `backend = …` names futhark, cuda or cpu.
use pmexpr::accelerate;

fn main() {
    let x: i64 = 1;
    let _r: i64 = accelerate!(backend = opencl, x + 1);
}
