//! Code generation: the function itself, a marker type named like it, and, in an anonymous
//! `const`, the parameters struct, the tool and its registration.
//!
//! What is generated per tool is kept to what only this tool can say, because a crate of many
//! tools compiles all of it: the tool is a `static` of `__private::FnTool`, whose one `Tool`
//! impl (spec building included) every tool shares; the expansion gives it the declaration as
//! constants (`ToolDecl`) and the few functions that name this tool's types (parse, schemas,
//! deps type, the call). See `tests/compile_cost.md` for how this is measured.
//!
//! Generated code names only `#krate::__private::...` and std paths from the root, and its
//! own locals use mixed-site hygiene, so nothing in the user's scope can capture them.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{GenericArgument, Ident, PathArguments, Type};

use crate::attr::{Risk, ToolAttr};
use crate::check::{self, Decl};
use crate::errors::Errors;
use crate::fallback;
use crate::model::{FnItem, Output, ParamKind, ToolFn};

/// The whole macro: parse, check, then expand or fall back.
pub(crate) fn tool(
    args: TokenStream,
    input: TokenStream,
    default_crate: TokenStream,
) -> TokenStream {
    let Some(item) = FnItem::parse(input.clone()) else {
        let error = syn::Error::new(
            Span::call_site(),
            "#[tool] applies to a function: `async fn name(...) -> Result<T, ToolError>` or a plain `fn`",
        )
        .to_compile_error();
        return quote!(#input #error);
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
    let private = quote!(#krate::__private);
    // Inside the anonymous `const`, `__private` is imported under a short name: a crate of
    // many tools parses each path of the expansion, and this one is in most of them.
    let p = quote!(__p);
    let item = &tool.item;
    let ident = &item.sig.ident;
    let marker = marker(tool, &private);
    let args_struct = args_struct(tool, &p);
    let returns = returns(tool, decl, &p);
    let checks = checks(tool, &p);
    let (output_schema_fn, output_schema) = output_schema(tool, &p);
    let declared = declared(tool, decl, &p);
    let prepare = prepare(tool, decl, &p);
    let generic_types = generic_types(tool);
    let deps_type = match tool.context() {
        Some(context) => context_fn(&context.ty, "deps_type", &p),
        None => quote!(#p::no_deps_type),
    };
    let takes_context = tool.context().is_some();
    quote! {
        #item

        #marker

        // The user's types are repeated here, away from any `allow` on the function.
        #[allow(non_snake_case, unused_qualifications, clippy::all, clippy::pedantic)]
        const _: () = {
            use #private as __p;

            #checks
            #args_struct
            #returns
            #output_schema_fn

            // Before `__tool_prepare`: a parameter type with neither trait is reported for its
            // schema first, then for its parse.
            static __TOOL: #p::FnTool = #p::FnTool::new(
                #declared,
                __tool_schema::<#(#generic_types),*>,
                #output_schema,
                #deps_type,
                #takes_context,
                __tool_prepare,
            );

            #prepare

            impl #p::ToolDef for #ident {
                const TOOL: &'static dyn #p::Tool = &__TOOL;
            }

            #p::inventory::submit! {
                #p::ToolRegistration::new(&__TOOL)
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

/// The parameters struct, with a parse and a schema function.
///
/// A parameter whose type the struct may hold as a type parameter (no default and no serde
/// attribute that names a function of its type: see `is_generic`) is one: the derived impls
/// are then checked once, generically, and the parameter's type is checked only where the
/// parse and schema functions are called with it, each type spanned where the function names
/// it. A type without `Deserialize` or `JsonSchema` is so one error, on that type. Other
/// parameters keep their type in the struct, checked by `assert_param`.
///
/// The struct derives only `JsonSchema` when the macro knows what every parameter's serde
/// attributes mean (names and defaults: see `read_param_attrs`): the arguments are then
/// parsed by `__private::parse_params`, compiled once for all tools, into slots this tool
/// writes (`slots`). Otherwise it derives `Deserialize` too, parsed by the generic
/// `parse_args`.
fn args_struct(tool: &ToolFn, p: &TokenStream) -> TokenStream {
    let serde_path = format!("{p}::serde").replace(' ', "");
    let schemars_path = format!("{p}::schemars").replace(' ', "");
    let mut default_fns = Vec::new();
    let mut type_params = Vec::new();
    let mut slot_types = Vec::new();
    let fields = tool.fields().map(|(param, field)| {
        let name = &param.ident;
        let ty = &param.ty;
        let docs = &field.docs;
        let passthrough = &field.passthrough;
        let default = field.default.as_ref().map(|expr| {
            let function = default_fn(name);
            let function_name = function.to_string();
            default_fns.push(quote_spanned! {expr.span()=>
                fn #function() -> #ty {
                    #expr
                }
            });
            quote!(#[serde(default = #function_name)])
        });
        let field_ty = if is_generic(field) {
            let param = type_param(type_params.len());
            type_params.push(param.clone());
            quote!(#param)
        } else {
            quote!(#ty)
        };
        slot_types.push(field_ty.clone());
        quote! {
            #(#docs)*
            #(#passthrough)*
            #default
            #name: #field_ty,
        }
    });
    let fields: Vec<TokenStream> = fields.collect();
    let path = p.to_string().replace(' ', "");
    let bounds = |traits: &str| {
        type_params
            .iter()
            .map(|param| format!("{param}: {path}::{traits}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (deserialize_bounds, schema_bounds) = (bounds("ParamDeserialize"), bounds("ParamSchema"));
    let deserialize_params: Vec<TokenStream> = type_params
        .iter()
        .map(|param| quote!(#param: #p::ParamDeserialize))
        .collect();
    let schema_params = type_params
        .iter()
        .map(|param| quote!(#param: #p::ParamSchema));
    let args = Ident::new("__args", Span::mixed_site());
    let read_by_us: Option<Vec<ParamAttrs>> = tool
        .fields()
        .map(|(param, field)| read_param_attrs(&param.ident, field))
        .collect();
    let (derives, serde_attr, parse) = match read_by_us {
        Some(attrs) => (
            quote!(#[derive(#p::schemars::JsonSchema)]),
            quote!(#[serde(deny_unknown_fields)]),
            slots(
                tool,
                p,
                &attrs,
                &type_params,
                &slot_types,
                &deserialize_params,
            ),
        ),
        None => (
            quote!(#[derive(#p::serde::Deserialize, #p::schemars::JsonSchema)]),
            quote! {
                #[serde(
                    crate = #serde_path,
                    deny_unknown_fields,
                    bound(deserialize = #deserialize_bounds)
                )]
            },
            quote! {
                fn __tool_parse<#(#deserialize_params),*>(
                    #args: #p::ToolArgs<'_>,
                ) -> #p::Result<__ToolArgs<#(#type_params),*>, #p::ToolError> {
                    #p::parse_args(#args)
                }
            },
        ),
    };
    let schema_of = quote!(<__ToolArgs<#(#type_params),*> as #p::schemars::JsonSchema>);
    quote! {
        #derives
        #serde_attr
        #[schemars(crate = #schemars_path, bound = #schema_bounds)]
        struct __ToolArgs<#(#type_params),*> {
            #(#fields)*
        }

        #parse

        fn __tool_schema<#(#schema_params),*>() -> #p::serde_json::Value {
            #p::input_schema_from(#schema_of::schema_name, #schema_of::json_schema)
        }

        #(#default_fns)*
    }
}

/// The function that gives a parameter's `#[default = expr]`.
fn default_fn(name: &Ident) -> Ident {
    format_ident!("__tool_default_{}", unraw(name))
}

/// What a parameter's attributes say about parsing it, when the macro knows what they mean.
struct ParamAttrs {
    /// The key the parameter is read from: its name or `rename`.
    name: String,
    /// Its `alias`es.
    aliases: Vec<String>,
    /// The function that gives it when no key does; `None` for serde's missing field.
    default: Option<TokenStream>,
}

/// The parameter's name, aliases and default, from `#[default = expr]` and the serde
/// attributes `rename = "..."`, `alias = "..."`, `default` and `default = "path"`. `None` for
/// any other serde attribute (or one that does not parse): only serde knows its meaning, and
/// the parameters keep a derived `Deserialize`.
fn read_param_attrs(ident: &Ident, field: &crate::model::FieldParam) -> Option<ParamAttrs> {
    let mut attrs = ParamAttrs {
        name: unraw(ident),
        aliases: Vec::new(),
        default: field.default.as_ref().map(|_| {
            let function = default_fn(ident);
            quote!(#function)
        }),
    };
    for attr in &field.passthrough {
        if !attr.path().is_ident("serde") {
            continue;
        }
        let mut known = true;
        let parsed = attr.parse_nested_meta(|meta| {
            let text = |meta: &syn::meta::ParseNestedMeta<'_>| -> syn::Result<String> {
                Ok(meta.value()?.parse::<syn::LitStr>()?.value())
            };
            if meta.path.is_ident("rename") && meta.input.peek(syn::Token![=]) {
                attrs.name = text(&meta)?;
            } else if meta.path.is_ident("alias") {
                attrs.aliases.push(text(&meta)?);
            } else if meta.path.is_ident("default") && meta.input.peek(syn::Token![=]) {
                let path: syn::ExprPath = syn::parse_str(&text(&meta)?)?;
                attrs.default = Some(quote!(#path));
            } else if meta.path.is_ident("default")
                && (meta.input.is_empty() || meta.input.peek(syn::Token![,]))
            {
                attrs.default = Some(quote!(::core::default::Default::default));
            } else {
                known = false;
                // Consume whatever the attribute holds, so that the rest is still read.
                if meta.input.peek(syn::Token![=]) {
                    meta.value()?.parse::<syn::Expr>()?;
                } else if meta.input.peek(syn::token::Paren) {
                    meta.input.parse::<proc_macro2::Group>()?;
                }
            }
            Ok(())
        });
        if parsed.is_err() || !known {
            return None;
        }
    }
    Some(attrs)
}

/// The slots the arguments are parsed into by `parse_params`, and `__tool_parse`, which
/// turns them into the parameters struct: all this tool's own code for parsing.
fn slots(
    tool: &ToolFn,
    p: &TokenStream,
    attrs: &[ParamAttrs],
    type_params: &[Ident],
    slot_types: &[TokenStream],
    deserialize_params: &[TokenStream],
) -> TokenStream {
    let local = |name: &str| Ident::new(name, Span::mixed_site());
    let (args, slots, index, input, value) = (
        local("__args"),
        local("__slots"),
        local("__index"),
        local("__input"),
        local("__value"),
    );
    let members: Vec<syn::Index> = (0..attrs.len()).map(syn::Index::from).collect();
    let mut keys = Vec::new();
    let mut params = Vec::new();
    for (at, attr) in attrs.iter().enumerate() {
        // As serde lists them in an unknown field's message: name and aliases, sorted.
        let mut names: Vec<&String> = std::iter::once(&attr.name).chain(&attr.aliases).collect();
        names.sort();
        names.dedup();
        params.extend(std::iter::repeat_n(at, names.len()));
        keys.extend(names);
    }
    // What JSON escapes: `"`, `\` and the control characters below U+0020.
    let plain = keys.iter().all(|key| {
        !key.chars()
            .any(|c| matches!(c, '"' | '\\' | '\0'..='\u{1f}'))
    });
    let names = attrs.iter().map(|attr| &attr.name);
    let fill = attrs
        .iter()
        .zip(&members)
        .map(|(attr, member)| match &attr.default {
            Some(default) => quote!(#p::fill_with(&mut self.#member, #default);),
            None => {
                let name = &attr.name;
                quote!(#p::fill_missing(&mut self.#member, #name)?;)
            }
        });
    let values: Vec<Ident> = (0..attrs.len())
        .map(|at| local(&format!("__value{at}")))
        .collect();
    let field_names = tool.fields().map(|(param, _)| &param.ident);
    let nones = members.iter().map(|_| quote!(#p::Option::None));
    quote! {
        struct __ToolSlots<#(#type_params),*>(#(#p::Option<#slot_types>),*);

        const __TOOL_PARAMS: #p::ParamTable = #p::ParamTable {
            keys: &[#(#keys),*],
            params: &[#(#params),*],
            names: &[#(#names),*],
            plain: #plain,
        };

        impl<#(#deserialize_params),*> #p::ParamSlots for __ToolSlots<#(#type_params),*> {
            fn set(
                &mut self,
                #index: usize,
                #input: #p::FieldInput<'_>,
            ) -> #p::Result<usize, #p::FieldError> {
                match #index {
                    #(#members => #p::read_param(&mut self.#members, #input),)*
                    _ => #p::Result::Ok(0),
                }
            }

            fn set_value(
                &mut self,
                #index: usize,
                #value: &#p::serde_json::Value,
            ) -> #p::Result<(), #p::FieldError> {
                match #index {
                    #(#members => #p::read_value(&mut self.#members, #value),)*
                    _ => #p::Result::Ok(()),
                }
            }

            fn finish(&mut self) -> #p::Result<(), #p::serde_json::Error> {
                #(#fill)*
                #p::Result::Ok(())
            }
        }

        fn __tool_parse<#(#deserialize_params),*>(
            #args: #p::ToolArgs<'_>,
        ) -> #p::Result<__ToolArgs<#(#type_params),*>, #p::ToolError> {
            let mut #slots = __ToolSlots::<#(#type_params),*>(#(#nones),*);
            #p::parse_params(#args, &__TOOL_PARAMS, &mut #slots)?;
            match #slots {
                __ToolSlots(#(#p::Option::Some(#values)),*) => {
                    #p::Result::Ok(__ToolArgs { #(#field_names: #values),* })
                }
                #[allow(unreachable_patterns)]
                _ => #p::Result::Err(#p::params_incomplete()),
            }
        }
    }
}

/// Whether a parameter's type can be a type parameter of the parameters struct: it has no
/// `#[default]` (its function returns the type as written) and its serde attributes only
/// rename it (`with`, `deserialize_with`, `default` name functions of the type as written).
fn is_generic(field: &crate::model::FieldParam) -> bool {
    field.default.is_none()
        && field.passthrough.iter().all(|attr| {
            let serde = attr.path().is_ident("serde");
            let mut keys = Vec::new();
            let parsed = attr.parse_nested_meta(|meta| {
                keys.push(meta.path.get_ident().map(ToString::to_string));
                if meta.input.peek(syn::Token![=]) {
                    meta.value()?.parse::<syn::Expr>()?;
                } else if meta.input.peek(syn::token::Paren) {
                    meta.input.parse::<proc_macro2::Group>()?;
                }
                Ok(())
            });
            parsed.is_ok()
                && keys.iter().all(|key| match key.as_deref() {
                    Some("rename" | "alias") => true,
                    Some("default" | "skip" | "skip_deserializing" | "flatten") => false,
                    Some(_) => !serde,
                    None => false,
                })
        })
}

/// The `index`th type parameter of the parameters struct.
fn type_param(index: usize) -> Ident {
    format_ident!("__T{index}")
}

/// The types the parameters struct is instantiated with: each generic parameter's type as
/// written, so that the compiler underlines it when it lacks a trait.
fn generic_types(tool: &ToolFn) -> Vec<&Type> {
    tool.fields()
        .filter(|(_, field)| is_generic(field))
        .map(|(param, _)| &param.ty)
        .collect()
}

fn unraw(ident: &Ident) -> String {
    let name = ident.to_string();
    name.strip_prefix("r#").map(str::to_owned).unwrap_or(name)
}

/// What the attribute and the function declare, as a `ToolDecl` constant: the spec is built
/// from it, when first asked for, by code in `__private` that every tool shares.
fn declared(tool: &ToolFn, decl: &Decl, p: &TokenStream) -> TokenStream {
    let ident = &tool.item.sig.ident;
    let name = &decl.name;
    let description = &decl.description;
    let title = decl
        .title
        .as_ref()
        .map(|title| quote!(title: #p::Option::Some(#title),));
    let version = decl
        .version
        .as_ref()
        .map(|version| quote!(version: #p::Option::Some(#version),));
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
        quote!(resources: &[#(#resources),*],)
    });
    let roles = (!decl.roles.is_empty()).then(|| {
        let roles = &decl.roles;
        quote!(roles: &[#(#roles),*],)
    });
    let idempotency = decl
        .idempotency
        .map(|choice| quote!(idempotency: #p::Option::Some(#choice),));
    let timeout = decl
        .timeout_ms
        .map(|millis| quote!(timeout: #p::Option::Some(#p::Duration::from_millis(#millis)),));
    let max_output = decl
        .max_output_chars
        .map(|max| quote!(output: #p::OutputPolicy { max_chars: #p::Option::Some(#max) },));
    let examples = (!decl.examples.is_empty()).then(|| {
        let examples = &decl.examples;
        quote!(examples: &[#(#examples),*],)
    });
    let line = quote_spanned!(ident.span()=> ::core::line!());
    quote! {
        #p::ToolDecl {
            name: #name,
            description: #description,
            #title
            #version
            execution: #p::ToolExecution {
                read_only: #read_only,
                mutates_workspace: #mutates,
                exclusive: #exclusive,
                stateful_action: #stateful,
                pagination: #pagination,
            },
            hints: #p::ToolHints {
                idempotent: #idempotent,
                destructive: #destructive,
                open_world: #open_world,
            },
            risk: #p::RiskLevel::#risk,
            #resources
            #roles
            #idempotency
            #timeout
            #max_output
            #examples
            location: #p::SourceLocation { file: ::core::file!(), line: #line },
            ..#p::ToolDecl::UNSET
        }
    }
}

/// The function that gives the result's schema, when the result type has one (asked without
/// requiring it: see `OutputSchemaProbe`), and the path the tool names it by.
fn output_schema(tool: &ToolFn, p: &TokenStream) -> (TokenStream, TokenStream) {
    match &tool.output {
        Output::Unit => (TokenStream::new(), quote!(#p::no_output_schema)),
        Output::Plain(_) | Output::Result(_) => (
            quote! {
                fn __tool_output_schema() -> #p::Option<#p::serde_json::Value> {
                    #[allow(unused_imports)]
                    use #p::{HasOutputSchema as _, NoOutputSchema as _};
                    (&#p::OutputSchemaProbe::<<__ToolReturns as #p::Returns>::Ok>::new())
                        .output_schema()
                }
            },
            quote!(__tool_output_schema),
        ),
    }
}

/// What the function returns, as `Returns` (and `PageReturns` for a pagination tool): the
/// success and error types, each spanned where the function names it, so that a type that
/// does not fit is one error there and the code that uses them (generic over `Returns`)
/// adds none.
fn returns(tool: &ToolFn, decl: &Decl, p: &TokenStream) -> TokenStream {
    let (ok, err, ok_span) = match &tool.output {
        Output::Unit => (
            quote!(()),
            quote!(#p::Infallible),
            tool.item.sig.ident.span(),
        ),
        Output::Plain(ty) => (quote!(#ty), quote!(#p::Infallible), first_span(ty)),
        Output::Result(ty) => {
            // `Result<T, E>` as written: each side spanned on its own type. An alias such as
            // `io::Result<T>`: both spanned on the whole type.
            let (ok_tokens, err_tokens) = match result_args(ty) {
                Some((ok, err)) => (ok.to_token_stream(), err.to_token_stream()),
                None => (ty.to_token_stream(), ty.to_token_stream()),
            };
            (
                projection(ty, "Ok", &ok_tokens, p),
                projection(ty, "Err", &err_tokens, p),
                first_span(&ok_tokens),
            )
        }
    };
    let page = decl.pagination.then(|| {
        let page_returns = respan(quote!(#p::PageReturns), ok_span);
        quote_spanned!(ok_span=> impl #page_returns for __ToolReturns {})
    });
    quote! {
        struct __ToolReturns;

        impl #p::Returns for __ToolReturns {
            type Ok = #ok;
            type Err = #err;
        }

        #page
    }
}

/// `<ty as ResultParts>::side`, its first token spanned on the first token of `at` and its
/// last on the last, so that the compiler underlines all of `at` for it.
fn projection(ty: &Type, side: &str, at: &TokenStream, p: &TokenStream) -> TokenStream {
    let mut tokens = at.clone().into_iter();
    let first = tokens
        .next()
        .map_or_else(Span::call_site, |token| token.span());
    let last = tokens.last().map_or(first, |token| token.span());
    let side = Ident::new(side, last);
    let open = quote_spanned!(first=> <);
    quote!(#open #ty as #p::ResultParts>::#side)
}

/// `T` and `E` of a return type written `Result<T, E>` (any path ending in `Result`).
fn result_args(ty: &Type) -> Option<(&Type, &Type)> {
    let Type::Path(path) = ty else {
        return None;
    };
    let PathArguments::AngleBracketed(arguments) = &path.path.segments.last()?.arguments else {
        return None;
    };
    let mut types = arguments.args.iter().filter_map(|arg| match arg {
        GenericArgument::Type(ty) => Some(ty),
        _ => None,
    });
    match (types.next(), types.next(), types.next()) {
        (Some(ok), Some(err), None) => Some((ok, err)),
        _ => None,
    }
}

/// `<ty as ContextParam<'_>>::function`, every token spanned on the type's first: a type
/// that is not a context is then the same error at each use, which the compiler reports once,
/// there.
fn context_fn(ty: &Type, function: &str, p: &TokenStream) -> TokenStream {
    let function = Ident::new(function, Span::call_site());
    respan(
        quote!(<#ty as #p::ContextParam<'_>>::#function),
        first_span(ty),
    )
}

/// `tokens`, every one spanned at `span`.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let proc_macro2::TokenTree::Group(group) = &token {
                let mut inner =
                    proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                inner.set_span(span);
                token = proc_macro2::TokenTree::Group(inner);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}

fn first_span(tokens: &impl ToTokens) -> Span {
    tokens
        .to_token_stream()
        .into_iter()
        .next()
        .map_or_else(Span::call_site, |token| token.span())
}

/// Compile-time checks spanned on what the user wrote, so a wrong type is underlined where it
/// is written.
fn checks(tool: &ToolFn, p: &TokenStream) -> TokenStream {
    let params = tool
        .fields()
        .filter(|(_, field)| !is_generic(field))
        .map(|(param, _)| {
            let ty = &param.ty;
            quote_spanned!(first_span(ty)=> const _: () = #p::assert_param::<#ty>();)
        });
    quote! {
        #(#params)*
    }
}

/// `__tool_prepare`, what the tool's `Tool::prepare` calls: parse the arguments and build the
/// context now (a bad call fails before anything runs), then box the future that calls the
/// function.
///
/// Every local here is mixed-site, and the parameters are bound to mixed-site names: no name
/// the user's function or parameters use can capture or shadow one of ours, and the function
/// itself is the only thing its name can mean.
fn prepare(tool: &ToolFn, decl: &Decl, p: &TokenStream) -> TokenStream {
    let local = |name: &str| Ident::new(name, Span::mixed_site());
    let (args, call) = (local("__args"), local("__call"));
    let (parsed, context, result) = (local("__parsed"), local("__context"), local("__result"));
    let ident = &tool.item.sig.ident;
    let generic_types = generic_types(tool);

    let fields: Vec<TokenStream> = tool
        .fields()
        .enumerate()
        .map(|(index, (param, _))| {
            let field = &param.ident;
            let binding = local(&format!("__arg{index}"));
            quote!(#field: #binding)
        })
        .collect();
    let mut field_index = 0;
    let call_args: Vec<TokenStream> = tool
        .params
        .iter()
        .map(|param| match &param.kind {
            ParamKind::Context => {
                let view = context_fn(&param.ty, "view", p);
                quote!(#view(&mut #context))
            }
            ParamKind::Field(_) => {
                let binding = local(&format!("__arg{field_index}"));
                field_index += 1;
                quote!(#binding)
            }
        })
        .collect();

    let make_context = match tool.context() {
        Some(param) => {
            let storage = context_fn(&param.ty, "storage", p);
            quote! {
                let #context = #storage(#call.clone())?;
            }
        }
        None => quote!(let _ = #call;),
    };
    let take_context = tool.context().map(|_| quote!(let mut #context = #context;));

    let run = if decl.blocking {
        quote! {
            #p::run_blocking(move || {
                #take_context
                #ident(#(#call_args),*)
            })
            .await?
        }
    } else {
        let awaited = tool.item.sig.asyncness.map(|_| quote!(.await));
        quote! {{
            #take_context
            #ident(#(#call_args),*) #awaited
        }}
    };
    let finish = if decl.pagination {
        quote!(finish_page)
    } else {
        quote!(finish)
    };
    let finish = match &tool.output {
        Output::Result(_) => quote!(#p::#finish::<__ToolReturns>(#result)),
        Output::Plain(_) | Output::Unit => {
            quote!(#p::#finish::<__ToolReturns>(#p::Result::Ok(#result)))
        }
    };
    // Spanned on the function's name, so a future that is not `Send` is reported there.
    let future = quote_spanned! {ident.span()=>
        #p::box_future(async move {
            let __ToolArgs { #(#fields),* } = #parsed;
            let #result = #run;
            #finish
        })
    };
    quote! {
        fn __tool_prepare(
            #args: #p::ToolArgs<'_>,
            #call: &#p::CallContext,
        ) -> #p::Result<#p::ToolFuture, #p::ToolError> {
            let #parsed = __tool_parse::<#(#generic_types),*>(#args)?;
            #make_context
            #future
        }
    }
}
