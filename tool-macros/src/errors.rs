//! One accumulator for every error the macro finds, so all are reported at once.
//!
//! Errors are kept as `syn::Error`s, which span the whole of what they point at (a type such
//! as `Vec<RunContext>`, not just its first token); darling's parse errors join them as they
//! are.

use std::fmt::Display;

use proc_macro2::TokenStream;
use quote::ToTokens;

#[derive(Default)]
pub(crate) struct Errors {
    rendered: Vec<TokenStream>,
}

impl Errors {
    /// An error spanning all of `tokens`.
    pub(crate) fn spanned(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.rendered
            .push(syn::Error::new_spanned(tokens, message).to_compile_error());
    }

    /// An error at one span.
    pub(crate) fn at(&mut self, span: proc_macro2::Span, message: impl Display) {
        self.rendered
            .push(syn::Error::new(span, message).to_compile_error());
    }

    /// An error darling produced.
    pub(crate) fn darling(&mut self, error: darling::Error) {
        self.rendered.push(error.write_errors());
    }

    /// An error syn produced (or one built with its full span).
    pub(crate) fn syn(&mut self, error: syn::Error) {
        self.rendered.push(error.to_compile_error());
    }

    /// `Ok` when nothing was reported; the `compile_error!`s otherwise.
    pub(crate) fn finish(self) -> Result<(), TokenStream> {
        if self.rendered.is_empty() {
            Ok(())
        } else {
            Err(self.rendered.into_iter().collect())
        }
    }
}
