// Too many arguments for an intrinsic or a lambda, too few for a parallel keyword.
use pmexpr::accelerate;

fn intrinsic() -> i64 {
    accelerate!(addi(1, 2, 3))
}

fn keyword() -> Vec<i64> {
    accelerate!(map(|x| x + 1))
}

fn lambda(s: Vec<i64>) -> i64 {
    accelerate!({
        let f = |x, y| x * y;
        reduce(addi, 0, map(|x| f(x, 1, 2), s))
    })
}

fn main() {
    intrinsic();
    keyword();
    lambda(vec![1]);
}
