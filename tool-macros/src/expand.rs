//! Code generation: the function itself, a marker type named like it, and, in an anonymous
//! `const`, the parameters struct, the cached spec, the `Tool` impl and the registration.
//!
//! Generated code names only `#krate::__private::...` and std paths from the root, and its
//! own locals use mixed-site hygiene, so nothing in the user's scope can capture them.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, ItemFn};

use crate::attr::{Risk, ToolAttr};
use crate::check::{self, Decl};
use crate::errors::Errors;
use crate::fallback;
use crate::model::{ContextParam, Output, ToolFn, Wrapper};

/// The whole macro: parse, check, then expand or fall back.
pub(crate) fn tool(
    args: TokenStream,
    input: TokenStream,
    default_crate: TokenStream,
) -> TokenStream {
    let item: ItemFn = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            let error = syn::Error::new(
                Span::call_site(),
                "#[tool] applies to a function: `async fn name(...) -> Result<T, ToolError>` or a plain `fn`",
            )
            .to_compile_error();
            return quote!(#input #error);
        }
    };
    let mut errors = Errors::default();
    let attr = ToolAttr::parse(args, &mut errors);
    let tool = ToolFn::parse(item, &mut errors);
    let decl = check::resolve(&attr, &tool, &mut errors);
    let krate = attr
        .krate
        .as_ref()
        .map(|path| quote!(#path))
        .unwrap_or(default_crate);
    match errors.finish() {
        Ok(()) => expand(&tool, &decl, &krate),
        Err(errors) => fallback::emit(&tool, &krate, &errors),
    }
}

pub(crate) fn expand(tool: &ToolFn, decl: &Decl, krate: &TokenStream) -> TokenStream {
    let p = quote!(#krate::__private);
    let item = &tool.item;
    let ident = &item.sig.ident;
    let marker = marker(tool, &p);
    let args_struct = args_struct(tool, &p);
    let spec = spec(tool, decl, &p);
    let checks = checks(tool, decl, &p);
    let call = call_body(tool, decl, &p);
    let takes_context = tool.context().is_some();
    let deps_type = match tool.context() {
        Some((_, context)) => {
            let core = &context.core;
            quote!(<#core as #p::FromCallContext>::deps_type())
        }
        None => quote!(#p::Option::None),
    };
    quote! {
        #item

        #marker

        // The user's types are repeated here, away from any `allow` on the function.
        #[allow(non_snake_case, unused_qualifications, clippy::all, clippy::pedantic)]
        const _: () = {
            #checks
            #args_struct
            #spec

            impl #p::Tool for #ident {
                fn spec(&self) -> &#p::ToolSpec {
                    __tool_spec()
                }

                fn deps_type(&self) -> #p::Option<#p::DepsType> {
                    #deps_type
                }

                fn takes_context(&self) -> bool {
                    #takes_context
                }

                fn prepare(
                    &self,
                    args: #p::ToolArgs<'_>,
                    call: &#p::CallContext,
                ) -> #p::Result<#p::ToolFuture, #p::ToolError> {
                    #call
                }
            }

            impl #p::ToolDef for #ident {
                const TOOL: &'static dyn #p::Tool = &#ident {};
            }

            #p::inventory::submit! {
                #p::ToolRegistration::new(<#ident as #p::ToolDef>::TOOL)
            }
        };
    }
}

/// The marker type: a braced struct lives in the type namespace only, so it can share the
/// function's name; `tools![name]` and `name::spec()` reach the tool through it.
pub(crate) fn marker(tool: &ToolFn, p: &TokenStream) -> TokenStream {
    let ident = &tool.item.sig.ident;
    let vis = &tool.item.vis;
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #vis struct #ident {}

        #[allow(dead_code)]
        impl #ident {
            /// The tool's definition.
            #vis fn spec() -> &'static #p::ToolSpec {
                <Self as #p::ToolDef>::TOOL.spec()
            }

            /// The tool, for a registry or a direct call.
            #vis fn tool() -> &'static dyn #p::Tool {
                <Self as #p::ToolDef>::TOOL
            }
        }
    }
}

fn args_struct(tool: &ToolFn, p: &TokenStream) -> TokenStream {
    let serde_path = format!("{p}::serde").replace(' ', "");
    let schemars_path = format!("{p}::schemars").replace(' ', "");
    let mut default_fns = Vec::new();
    let fields = tool.fields().map(|(param, field)| {
        let name = &param.ident;
        let ty = &param.ty;
        let docs = &field.docs;
        let passthrough = &field.passthrough;
        let default = field.default.as_ref().map(|expr| {
            let function = format_ident!("__tool_default_{}", unraw(name));
            let function_name = function.to_string();
            default_fns.push(quote_spanned! {expr.span()=>
                fn #function() -> #ty {
                    #expr
                }
            });
            quote!(#[serde(default = #function_name)])
        });
        quote! {
            #(#docs)*
            #(#passthrough)*
            #default
            #name: #ty,
        }
    });
    let fields: Vec<TokenStream> = fields.collect();
    quote! {
        #[derive(#p::serde::Deserialize, #p::schemars::JsonSchema)]
        #[serde(crate = #serde_path, deny_unknown_fields)]
        #[schemars(crate = #schemars_path)]
        struct __ToolArgs {
            #(#fields)*
        }

        #(#default_fns)*
    }
}

fn unraw(ident: &Ident) -> String {
    let name = ident.to_string();
    name.strip_prefix("r#").map(str::to_owned).unwrap_or(name)
}

fn spec(tool: &ToolFn, decl: &Decl, p: &TokenStream) -> TokenStream {
    let ident = &tool.item.sig.ident;
    let name = &decl.name;
    let description = &decl.description;
    let title = decl.title.as_ref().map(|title| quote!(.with_title(#title)));
    let version = decl
        .version
        .as_ref()
        .map(|version| quote!(.with_version(#version)));
    let declared_any = decl.read_only || decl.mutates_workspace || decl.exclusive || decl.stateful;
    let (read_only, mutates, exclusive, stateful) = if declared_any {
        (
            decl.read_only,
            decl.mutates_workspace,
            decl.exclusive,
            decl.stateful,
        )
    } else {
        (false, false, false, true)
    };
    let pagination = decl.pagination;
    let idempotent = decl.idempotent || decl.read_only;
    let destructive = decl.destructive || decl.risk == Risk::Destructive;
    let open_world = decl.open_world;
    let risk = match decl.risk {
        Risk::Read => quote!(Read),
        Risk::Write => quote!(Write),
        Risk::Destructive => quote!(Destructive),
    };
    let resources = (!decl.resources.is_empty()).then(|| {
        let resources = &decl.resources;
        quote!(.with_resources([#(#resources),*]))
    });
    let timeout = decl
        .timeout_ms
        .map(|millis| quote!(.with_timeout(#p::Option::Some(#p::Duration::from_millis(#millis)))));
    let max_output = decl
        .max_output_chars
        .map(|max| quote!(.with_output(#p::OutputPolicy { max_chars: #p::Option::Some(#max) })));
    let examples = (!decl.examples.is_empty()).then(|| {
        let examples = &decl.examples;
        quote!(.with_examples([#(#examples),*].into_iter().filter_map(#p::example)))
    });
    let output_schema = match &tool.output {
        Output::Unit => quote!(#p::Option::None),
        Output::Plain(ty) => quote!((&#p::OutputSchemaProbe::<#ty>::new()).output_schema()),
        Output::Result(ty) => quote! {
            (&#p::OutputSchemaProbe::<<#ty as #p::IntoToolResult>::Ok>::new()).output_schema()
        },
    };
    let line = quote_spanned!(ident.span()=> ::core::line!());
    quote! {
        fn __tool_spec() -> &'static #p::ToolSpec {
            static SPEC: #p::OnceLock<#p::ToolSpec> = #p::OnceLock::new();
            SPEC.get_or_init(|| {
                #[allow(unused_imports)]
                use #p::{HasOutputSchema as _, NoOutputSchema as _};
                #p::ToolSpec::new(#name, #description, #p::input_schema_for::<__ToolArgs>())
                    #title
                    #version
                    .with_output_schema(#output_schema)
                    .with_execution(#p::ToolExecution {
                        read_only: #read_only,
                        mutates_workspace: #mutates,
                        exclusive: #exclusive,
                        stateful_action: #stateful,
                        pagination: #pagination,
                    })
                    .with_hints(#p::ToolHints {
                        idempotent: #idempotent,
                        destructive: #destructive,
                        open_world: #open_world,
                    })
                    .with_risk(#p::RiskLevel::#risk)
                    #resources
                    #timeout
                    #max_output
                    #examples
                    .with_location(#p::SourceLocation { file: ::core::file!(), line: #line })
            })
        }
    }
}

/// Compile-time checks spanned on what the user wrote, so a wrong type is underlined where it
/// is written.
fn checks(tool: &ToolFn, decl: &Decl, p: &TokenStream) -> TokenStream {
    let params = tool.fields().map(|(param, _)| {
        let ty = &param.ty;
        quote_spanned!(ty.span()=> const _: () = #p::assert_param::<#ty>();)
    });
    let context = tool.context().map(|(_, context)| {
        let core = &context.core;
        quote_spanned!(core.span()=> const _: () = #p::assert_context::<#core>();)
    });
    let returns = match &tool.output {
        Output::Result(ty) => quote_spanned! {ty.span()=>
            const _: () = #p::assert_return::<<#ty as #p::ResultParts>::Ok>();
            const _: () = #p::assert_error::<<#ty as #p::ResultParts>::Err>();
        },
        Output::Plain(ty) => quote_spanned!(ty.span()=> const _: () = #p::assert_return::<#ty>();),
        Output::Unit => TokenStream::new(),
    };
    let page = match (&tool.output, decl.pagination) {
        (Output::Result(ty), true) => Some(
            quote_spanned!(ty.span()=> const _: () = #p::assert_page::<<#ty as #p::IntoToolResult>::Ok>();),
        ),
        (Output::Plain(ty), true) => {
            Some(quote_spanned!(ty.span()=> const _: () = #p::assert_page::<#ty>();))
        }
        (Output::Unit, true) => Some(quote!(const _: () = #p::assert_page::<()>();)),
        _ => None,
    };
    quote! {
        #(#params)*
        #context
        #returns
        #page
    }
}

fn call_body(tool: &ToolFn, decl: &Decl, p: &TokenStream) -> TokenStream {
    let ident = &tool.item.sig.ident;
    let parsed = Ident::new("__parsed", Span::mixed_site());
    let context_var = Ident::new("__context", Span::mixed_site());
    let result = Ident::new("__result", Span::mixed_site());

    let bindings: Vec<&Ident> = tool.fields().map(|(param, _)| &param.ident).collect();
    let (make_context, rebind_context) = match tool.context() {
        Some((_, context)) => {
            let core = &context.core;
            let mutability = context
                .wrappers
                .contains(&Wrapper::RefMut)
                .then(|| quote!(mut));
            (
                quote! {
                    let #context_var: #core =
                        match <#core as #p::FromCallContext>::from_call_context(call.clone()) {
                            #p::Result::Ok(context) => context,
                            #p::Result::Err(error) => return #p::Result::Err(error),
                        };
                },
                quote!(let #mutability #context_var = #context_var;),
            )
        }
        None => (quote!(let _ = call;), TokenStream::new()),
    };
    let call_args = tool.params.iter().map(|param| match &param.kind {
        crate::model::ParamKind::Context(context) => context_arg(context, &context_var, p),
        crate::model::ParamKind::Field(_) => {
            let binding = &param.ident;
            quote!(#binding)
        }
    });
    let awaited = tool.item.sig.asyncness.map(|_| quote!(.await));
    let finish = if decl.pagination {
        quote!(finish_page)
    } else {
        quote!(finish)
    };
    let finish = match &tool.output {
        Output::Result(ty) => quote_spanned!(ty.span()=> #p::#finish(#result)),
        Output::Plain(ty) => quote_spanned!(ty.span()=> #p::#finish(#p::Plain(#result))),
        Output::Unit => quote!(#p::#finish(#p::Plain(#result))),
    };
    // Spanned on the function's name, so a future that is not `Send` is reported there.
    let future = quote_spanned! {ident.span()=>
        #p::box_future(async move {
            let __ToolArgs { #(#bindings),* } = #parsed;
            #rebind_context
            let #result = #ident(#(#call_args),*) #awaited;
            #finish
        })
    };
    quote! {
        let #parsed: __ToolArgs = match #p::parse_args(args) {
            #p::Result::Ok(parsed) => parsed,
            #p::Result::Err(error) => return #p::Result::Err(error),
        };
        #make_context
        #future
    }
}

fn context_arg(context: &ContextParam, var: &Ident, p: &TokenStream) -> TokenStream {
    context
        .wrappers
        .iter()
        .rev()
        .fold(quote!(#var), |inner, wrapper| match wrapper {
            Wrapper::Ref => quote!(&#inner),
            Wrapper::RefMut => quote!(&mut #inner),
            Wrapper::Arc => quote!(#p::Arc::new(#inner)),
            Wrapper::Box => quote!(#p::Box::new(#inner)),
            Wrapper::Option => quote!(#p::Option::Some(#inner)),
        })
}
