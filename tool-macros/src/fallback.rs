//! What is emitted when the attribute or the function is wrong: the function itself (so
//! completion and other diagnostics keep working), the errors, and a marker type whose tool is
//! a placeholder, so `tools![name]` and `name::spec()` elsewhere do not add errors of their own.

use proc_macro2::TokenStream;
use quote::quote;

use crate::expand::marker;
use crate::model::ToolFn;

pub(crate) fn emit(tool: &ToolFn, krate: &TokenStream, errors: &TokenStream) -> TokenStream {
    let p = quote!(#krate::__private);
    let item = &tool.item;
    // A method lives in an `impl` block, where no struct or `const _` may follow it.
    if item.sig.receiver().is_some() {
        return quote!(#item #errors);
    }
    let ident = &item.sig.ident;
    let marker = marker(tool, &p);
    quote! {
        #item
        #marker
        const _: () = {
            impl #p::ToolDef for #ident {
                const TOOL: &'static dyn #p::Tool = &#p::InvalidTool;
            }
        };
        #errors
    }
}
