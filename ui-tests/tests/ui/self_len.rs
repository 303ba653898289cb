// A struct with a `len` method of its own, whose `self.len()` is written inside `accelerate!`:
// PMExpr reads `.len()` as the length of a sequence, and the error says so at `self`.
use pmexpr::accelerate;

struct Board {
    cells: Vec<i64>,
}

impl Board {
    fn len(&self) -> usize {
        self.cells.len()
    }

    fn live(&self) -> i64 {
        let _ = self.len();
        accelerate!(reduce(|a, b| a + b, 0, create(self.len(), |i| i as i64)))
    }
}

fn main() {
    let b = Board { cells: vec![1, 0, 1] };
    let _ = b.live();
}
