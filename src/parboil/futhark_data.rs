//! The generated datasets as Futhark's binary data files: the inputs of each original's `main` (and
//! of the golden programs' `entry main`, which take the same), in its parameter order, so that
//! `futhark bench` can time the original and the program generated from the port on the same
//! inputs (`cargo run --release --example parboil -- futhark-data DIR`, see BENCHMARKS.md).
//!
//! The format (Futhark's "binary data format"): per value the byte `b`, the version 2, the rank,
//! the element type in four characters (` f32`, ` i32`, ` f64`), the shape as little-endian
//! `u64`s, then the elements, little-endian.

use std::io::{self, Write};

use super::{Dataset, histo, mriq, sgemm, stencil, tpacf};

/// An element type of the format.
trait Elem: Copy {
    const TAG: &'static [u8; 4];
    fn put(self, out: &mut Vec<u8>);
}

impl Elem for f32 {
    const TAG: &'static [u8; 4] = b" f32";
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes())
    }
}

impl Elem for f64 {
    const TAG: &'static [u8; 4] = b" f64";
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes())
    }
}

impl Elem for i32 {
    const TAG: &'static [u8; 4] = b" i32";
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes())
    }
}

fn header<T: Elem>(out: &mut Vec<u8>, shape: &[usize]) {
    out.extend_from_slice(&[b'b', 2, shape.len() as u8]);
    out.extend_from_slice(T::TAG);
    for &d in shape {
        out.extend_from_slice(&(d as u64).to_le_bytes());
    }
}

fn scalar<T: Elem>(out: &mut Vec<u8>, x: T) {
    header::<T>(out, &[]);
    x.put(out);
}

fn vector<T: Elem>(out: &mut Vec<u8>, xs: &[T]) {
    header::<T>(out, &[xs.len()]);
    xs.iter().for_each(|&x| x.put(out));
}

/// A matrix of rows of one length (`cols` when there are none).
fn matrix<T: Elem>(out: &mut Vec<u8>, rows: &[Vec<T>], cols: usize) {
    header::<T>(out, &[rows.len(), rows.first().map_or(cols, Vec::len)]);
    rows.iter().flatten().for_each(|&x| x.put(out));
}

/// The inputs of `dataset` (generated as the example generates them) in the binary data format.
pub fn inputs(dataset: &Dataset) -> Vec<u8> {
    let mut out = Vec::new();
    let o = &mut out;
    match dataset.bench {
        "sgemm" => {
            let (n, m, p) = sgemm::dims(dataset.name).expect("a dataset");
            let i = sgemm::input(n, m, p);
            matrix(o, &i.a, m);
            matrix(o, &i.b, p);
            matrix(o, &i.c, p);
            scalar(o, i.alpha);
            scalar(o, i.beta);
        }
        "mri-q" => {
            let (k, x) = mriq::dims(dataset.name).expect("a dataset");
            let i = mriq::input(k, x);
            for v in [&i.kx, &i.ky, &i.kz, &i.x, &i.y, &i.z, &i.phi_r, &i.phi_i] {
                vector(o, v);
            }
        }
        "stencil" => {
            let (nx, ny, nz, iterations) = stencil::dims(dataset.name).expect("a dataset");
            scalar(o, iterations as i32);
            scalar(o, nx as i32);
            matrix(o, &stencil::input(ny, nz), nz);
        }
        "histo" => {
            let (w, h, hw, hh) = histo::dims(dataset.name).expect("a dataset");
            let i = histo::input(w, h, hw, hh);
            scalar(o, i.histo_width as i32);
            scalar(o, i.histo_height as i32);
            matrix(o, &i.img, h);
        }
        "tpacf" => {
            let (n, r) = tpacf::dims(dataset.name).expect("a dataset");
            let i = tpacf::input(n, r);
            vector(o, &i.datapoints_x);
            vector(o, &i.datapoints_y);
            matrix(o, &i.random_x, n);
            matrix(o, &i.random_y, n);
        }
        other => panic!("no benchmark {other}"),
    }
    out
}

/// Writes `DIR/<bench>/data/<dataset>.in` for every dataset; returns the files written.
pub fn write_all(dir: &std::path::Path) -> io::Result<Vec<std::path::PathBuf>> {
    let mut written = Vec::new();
    for d in super::DATASETS {
        let folder = dir.join(d.bench).join("data");
        std::fs::create_dir_all(&folder)?;
        let file = folder.join(format!("{}.in", d.name));
        std::fs::File::create(&file)?.write_all(&inputs(d))?;
        written.push(file);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_laid_out_as_futhark_reads_them() {
        let mut out = Vec::new();
        scalar(&mut out, 7_i32);
        matrix(&mut out, &[vec![1.5_f32, -2.0], vec![0.25, 4.0]], 2);
        let mut want = vec![b'b', 2, 0];
        want.extend_from_slice(b" i32");
        want.extend_from_slice(&7_i32.to_le_bytes());
        want.extend_from_slice(&[b'b', 2, 2]);
        want.extend_from_slice(b" f32");
        want.extend_from_slice(&2_u64.to_le_bytes());
        want.extend_from_slice(&2_u64.to_le_bytes());
        for x in [1.5_f32, -2.0, 0.25, 4.0] {
            want.extend_from_slice(&x.to_le_bytes());
        }
        assert_eq!(out, want);
    }
}
