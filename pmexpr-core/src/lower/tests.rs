//! The lowering, tokens in and PMExpr out.

use quote::quote;

use crate::parse::parse_tokens;
use crate::pretty;

fn lowered(tokens: proc_macro2::TokenStream) -> String {
    match parse_tokens(tokens) {
        Ok(e) => pretty::expr(&e, &[]),
        Err(errs) => panic!("{}", errs[0].text()),
    }
}

#[test]
fn explore() {
    for t in [
        quote!({
            let mut x = 1;
            x += 2;
            x * 3
        }),
        quote!({
            let mut s = 0;
            for i in 0..n {
                s += i;
            }
            s
        }),
        quote!({
            let mut s = 0;
            let mut i = 0;
            while i < 10 {
                if i % 3 == 0 {
                    i += 1;
                    continue;
                }
                s += i;
                i += 1;
            }
            s
        }),
        quote!({
            let mut k = 0;
            loop {
                k += 1;
                if k > 5 {
                    break k * 2;
                }
            }
        }),
        quote!({
            fn find(s: Vec<i64>, x: i64) -> i64 {
                for i in 0..s.len() {
                    if s[i] == x {
                        return i;
                    }
                }
                -1
            }
            find(v, 3)
        }),
        quote!({
            let mut p = (1, 2);
            p.0 += 5;
            p
        }),
        quote!({
            let mut c = 0;
            for &x in s.iter() {
                if x > 0 {
                    c += 1;
                }
            }
            c
        }),
        quote!({
            let y = 10;
            let z = {
                let y = 1;
                y
            };
            y + z
        }),
        quote!({
            let mut a = 0;
            for i in (0..=n).rev() {
                a = a * 2 + i;
            }
            for (i, x) in s.iter().enumerate() {
                a += i * x;
            }
            a
        }),
    ] {
        println!("{}\n=> {}\n", t, lowered(t.clone()));
        let c = crate::site::compile_for_test(quote!(backend = cpu, #t), &[]);
        match c {
            Ok(c) => {
                let m = pretty::expr(&c.mono.expr, &c.mono.names);
                println!("mono: {m}\n")
            }
            Err(e) => println!("ERR: {}\n", e[0].text()),
        }
    }
}
