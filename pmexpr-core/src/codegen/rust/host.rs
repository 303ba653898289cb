//! Host code for the CUDA targets: the site's expression compiled like for the CPU targets
//! (sequentially), where each `par_loop` (or `tensor_gemm`) that the kernel split
//! ([`crate::kernels`]) made a launch launches its kernel ([`CudaHost`], which
//! [`crate::glue::cuda`] makes from the split and the build hook's manifest). The split decided
//! that this host code can be printed; the printer decides nothing.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::{Binding, CudaHost, Gen};
use crate::ast::{Expr, ExprKind, NodeId};
use crate::intrinsics::{Intrinsic, Keyword};
use crate::kernels::is_launch;
use crate::opt::Program;

impl Gen<'_> {
    /// The body of the host code for the CUDA targets (the variables of the site bound as
    /// `self`'s), or why there is none: a kernel of the split that no launch reached (a bug).
    pub(super) fn cuda_body(
        &self,
        program: &Program,
        host: &CudaHost,
    ) -> Result<TokenStream, String> {
        let mut gc = Gen::new(
            self.names,
            &self.rt,
            &self.numeric,
            &program.facts,
            Some(host),
        );
        gc.bindings = self.bindings.clone();
        gc.tmp = self.tmp;
        let body = gc.value(&program.expr);
        // Every kernel must have been launched from the node it was generated for.
        if gc.host.launched.len() != host.kernel_args.len() {
            return Err(format!(
                "{} of its {} kernels have no launch in the host code (a bug in pmexpr: please report it)",
                host.kernel_args.len() - gc.host.launched.len(),
                host.kernel_args.len()
            ));
        }
        Ok(body)
    }

    /// In host code for the CUDA targets: whether running `e` may launch a kernel (it holds a
    /// launching `par_loop`, or uses a function that launches).
    pub(super) fn launches_in(&self, e: &Expr) -> bool {
        let Some(host) = self.cuda else {
            return false;
        };
        let mut found = false;
        e.walk(&mut |x| match &x.kind {
            _ if is_launch(x) => found |= host.launches.contains_key(&x.id),
            ExprKind::Var { ident, .. } => {
                found |= match self.bindings.get(&ident.id) {
                    Some(Binding::Closure { rust, .. } | Binding::Item { rust, .. }) => {
                        self.host.launchers.contains(&rust.to_string())
                    }
                    _ => false,
                }
            }
            _ => {}
        });
        found
    }

    /// The kernel that this keyword application (node `id`) launches, if it is a `par_loop` of
    /// host code for the CUDA targets.
    pub(super) fn launched(&self, kw: Keyword, id: NodeId) -> Option<usize> {
        if kw != Keyword::ParLoop {
            return None;
        }
        self.cuda.and_then(|h| h.launches.get(&id).copied())
    }

    /// The kernel that this application (`e`) launches, if it is a `tensor_gemm` of host code for
    /// the CUDA targets.
    pub(super) fn launched_gemm(&self, e: &Expr) -> Option<usize> {
        match &e.kind {
            ExprKind::App { func, .. }
                if matches!(func.kind, ExprKind::Intrinsic(Intrinsic::TensorGemm)) =>
            {
                self.cuda.and_then(|h| h.launches.get(&e.id).copied())
            }
            _ => None,
        }
    }

    /// The launch of kernel `k` by a `tensor_gemm` of host code (`args`: its seven arguments,
    /// which the kernel's parameters evaluate in order): the operands are checked on the host,
    /// as on the CPU targets, and the kernel covers the elements of `c`.
    pub(super) fn launch_gemm(&mut self, k: usize, args: &[Expr]) -> TokenStream {
        let rt = self.rt.clone();
        let site = self.site();
        let names = [0, 1, 3].map(|i| self.tensor_name(&args[i]));
        let [cn, an, bn] = &names;
        let (stmts, vals) = self.kernel_params(k);
        let [c, a, ta, b, tb, ..] = &vals[..] else {
            unreachable!("seven arguments, checked by inference")
        };
        let n = quote!(__pm_n);
        let call = self.launch_call(k, &n, &vals);
        quote!({
            #(#stmts)*
            let #n: i64 = #rt::gemm_elements(#site, [#cn, #an, #bn], *#c, *#a, *#ta, *#b, *#tb);
            #call
        })
    }

    /// The launch of kernel `k` by a `par_loop` of host code (`args`: the loop's `n` and
    /// function): the kernel's parameters marshaled in order, then `n`.
    pub(super) fn launch(&mut self, k: usize, args: &[Expr]) -> TokenStream {
        let n = self.index_value(&args[0]);
        let nv = self.fresh("n");
        let (stmts, vals) = self.kernel_params(k);
        let call = self.launch_call(k, &quote!(#nv), &vals);
        quote!({
            let #nv: i64 = #n;
            #(#stmts)*
            #call
        })
    }

    /// The statements that evaluate kernel `k`'s parameters but `n` (in order, each into a
    /// variable holding a reference), and those variables.
    fn kernel_params(&mut self, k: usize) -> (Vec<TokenStream>, Vec<proc_macro2::Ident>) {
        let host = self.cuda.expect("launches are found in host code only");
        let mut stmts = Vec::new();
        let mut vals = Vec::new();
        for e in &host.kernel_args[k] {
            let v = self.value(e);
            let x = self.fresh("param");
            stmts.push(quote!(let #x = &(#v);));
            vals.push(x);
        }
        (stmts, vals)
    }

    /// Launches kernel `k` over `0..n` with the parameters `vals`. Everything is evaluated before
    /// the call is borrowed, since evaluating may launch too.
    fn launch_call(
        &mut self,
        k: usize,
        n: &TokenStream,
        vals: &[proc_macro2::Ident],
    ) -> TokenStream {
        self.host.launched.insert(k);
        let k = Literal::usize_unsuffixed(k);
        quote! {
            let mut __pm_c = __pm_call.borrow_mut();
            let __pm_params = ::std::vec![#(__pm_c.param(#vals)),*];
            __pm_c.launch(#k, #n, __pm_params);
        }
    }
}
