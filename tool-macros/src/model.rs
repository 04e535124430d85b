//! The function's IR: each parameter classified as context or model-visible field, keeping
//! the syntax the user wrote.

use crate::errors::Errors;
use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use quote::{ToTokens, TokenStreamExt};
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{
    Attribute, Expr, FnArg, GenericArgument, Ident, Pat, PathArguments, ReturnType, Signature,
    Type, Visibility,
};

use crate::docs;

/// A function as the macro reads it: attributes, visibility and signature parsed, the body
/// kept as the tokens it came as. The body is never parsed (nothing here needs it), so a long
/// body costs the macro nothing and comes out exactly as written.
pub(crate) struct FnItem {
    /// The outer attributes.
    pub(crate) attrs: Vec<Attribute>,
    pub(crate) vis: Visibility,
    pub(crate) sig: Signature,
    /// The body: one `{ ... }` group.
    pub(crate) body: Group,
}

impl FnItem {
    /// `tokens` as a function, or `None` when they are not one.
    pub(crate) fn parse(tokens: TokenStream) -> Option<Self> {
        let mut trees: Vec<TokenTree> = tokens.into_iter().collect();
        let body = match trees.pop() {
            Some(TokenTree::Group(body)) if body.delimiter() == Delimiter::Brace => body,
            _ => return None,
        };
        let head = |input: ParseStream<'_>| {
            Ok((
                input.call(Attribute::parse_outer)?,
                input.parse::<Visibility>()?,
                input.parse::<Signature>()?,
            ))
        };
        let (attrs, vis, sig) = head.parse2(trees.into_iter().collect()).ok()?;
        Some(Self {
            attrs,
            vis,
            sig,
            body,
        })
    }

    /// The inner attributes at the start of the body (`//!` comments become these).
    fn inner_attrs(&self) -> Vec<Attribute> {
        let mut trees = self.body.stream().into_iter();
        let mut leading = TokenStream::new();
        loop {
            match (trees.next(), trees.next(), trees.next()) {
                (
                    Some(TokenTree::Punct(pound)),
                    Some(TokenTree::Punct(bang)),
                    Some(TokenTree::Group(group)),
                ) if pound.as_char() == '#'
                    && bang.as_char() == '!'
                    && group.delimiter() == Delimiter::Bracket =>
                {
                    leading.extend([
                        TokenTree::Punct(pound),
                        TokenTree::Punct(bang),
                        TokenTree::Group(group),
                    ]);
                }
                _ => break,
            }
        }
        Attribute::parse_inner.parse2(leading).unwrap_or_default()
    }
}

impl ToTokens for FnItem {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.append_all(&self.attrs);
        self.vis.to_tokens(tokens);
        self.sig.to_tokens(tokens);
        self.body.to_tokens(tokens);
    }
}

/// A `#[tool]` function, parsed and classified.
pub(crate) struct ToolFn {
    /// The function with our parameter attributes removed: what is emitted.
    pub(crate) item: FnItem,
    /// The function's doc comment text, when any.
    pub(crate) docs: Option<String>,
    pub(crate) params: Vec<Param>,
    pub(crate) output: Output,
}

impl ToolFn {
    pub(crate) fn fields(&self) -> impl Iterator<Item = (&Param, &FieldParam)> {
        self.params.iter().filter_map(|param| match &param.kind {
            ParamKind::Field(field) => Some((param, &**field)),
            ParamKind::Context => None,
        })
    }

    /// The context parameter, when the function takes one.
    pub(crate) fn context(&self) -> Option<&Param> {
        self.params
            .iter()
            .find(|param| matches!(param.kind, ParamKind::Context))
    }
}

pub(crate) struct Param {
    /// The binding the function is called with.
    pub(crate) ident: Ident,
    /// The type as written.
    pub(crate) ty: Type,
    pub(crate) kind: ParamKind,
}

pub(crate) enum ParamKind {
    /// Injected by the runtime, never in the schema. The expansion names only the type as
    /// written: `ContextParam` (in `__private`) builds it, also through an alias.
    Context,
    Field(Box<FieldParam>),
}

/// A wrapper the macro sees around a context, to check the form is one the runtime injects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wrapper {
    Option,
    Ref,
    RefMut,
    Arc,
    Box,
}

/// A model-visible parameter.
pub(crate) struct FieldParam {
    /// `#[doc]` attributes: the property's description.
    pub(crate) docs: Vec<Attribute>,
    /// `#[default = expr]`: the value used when the model omits the parameter.
    pub(crate) default: Option<Expr>,
    /// `#[serde(...)]` and `#[schemars(...)]` attributes, passed on to the parameters struct.
    pub(crate) passthrough: Vec<Attribute>,
}

/// What the function returns.
pub(crate) enum Output {
    /// Nothing: the model receives `null`.
    Unit,
    /// `Result<T, E>` (also through an alias such as `anyhow::Result<T>`).
    Result(Type),
    /// A plain value.
    Plain(Type),
}

impl ToolFn {
    pub(crate) fn parse(mut item: FnItem, errors: &mut Errors) -> Self {
        let mut attrs = item.attrs.clone();
        attrs.extend(item.inner_attrs());
        let docs = docs::text(&attrs);
        let mut params = Vec::with_capacity(item.sig.inputs.len());
        for input in item.sig.inputs.iter_mut() {
            match input {
                FnArg::Receiver(receiver) => errors.spanned(receiver.self_token, "a #[tool] must be a free function, not a method: move it out of the `impl` block and reach shared state through `RunContext<Deps>`",),
                FnArg::Typed(typed) => {
                    let attrs = std::mem::take(&mut typed.attrs);
                    let (ours, theirs) = split_attrs(attrs);
                    typed.attrs = theirs;
                    if let Some(param) = Param::parse(&typed.pat, &typed.ty, ours, errors) {
                        params.push(param);
                    }
                }
            }
        }
        let output = match &item.sig.output {
            ReturnType::Default => Output::Unit,
            ReturnType::Type(_, ty) => Output::parse(ty, errors),
        };
        Self {
            item,
            docs,
            params,
            output,
        }
    }
}

/// The parameter attributes the macro consumes, and the rest (left on the function).
struct OurAttrs {
    docs: Vec<Attribute>,
    ctx: Option<Attribute>,
    default: Option<Attribute>,
    passthrough: Vec<Attribute>,
}

fn split_attrs(attrs: Vec<Attribute>) -> (OurAttrs, Vec<Attribute>) {
    let mut ours = OurAttrs {
        docs: Vec::new(),
        ctx: None,
        default: None,
        passthrough: Vec::new(),
    };
    let mut theirs = Vec::new();
    for attr in attrs {
        let path = attr.path();
        if path.is_ident("doc") {
            ours.docs.push(attr);
        } else if path.is_ident("ctx") {
            ours.ctx = Some(attr);
        } else if path.is_ident("default") {
            ours.default = Some(attr);
        } else if path.is_ident("serde") || path.is_ident("schemars") {
            ours.passthrough.push(attr);
        } else {
            theirs.push(attr);
        }
    }
    (ours, theirs)
}

impl Param {
    fn parse(pat: &Pat, ty: &Type, attrs: OurAttrs, errors: &mut Errors) -> Option<Self> {
        if let Some(ctx) = &attrs.ctx
            && !matches!(ctx.meta, syn::Meta::Path(_))
        {
            errors.spanned(&ctx.meta, "`#[ctx]` takes no arguments");
        }
        let context = match context_shape(ty, attrs.ctx.is_some()) {
            Ok(context) => context,
            Err(error) => {
                errors.syn(error);
                return None;
            }
        };
        let ident = match (pat, &context) {
            (Pat::Ident(binding), _) if binding.by_ref.is_none() && binding.subpat.is_none() => {
                binding.ident.clone()
            }
            (Pat::Wild(wild), true) => Ident::new("__tool_unused_context", wild.span()),
            _ => {
                errors.spanned(pat, "a #[tool] parameter must be a plain name (`order_id: String`): the name is what the model sees",);
                return None;
            }
        };

        if context {
            for (attr, what) in [
                (attrs.default.as_ref(), "a default"),
                (attrs.passthrough.first(), "serde or schemars attributes"),
            ] {
                if let Some(attr) = attr {
                    errors.spanned(
                        attr,
                        format!(
                            "a context parameter cannot have {what}: it is not part of the schema"
                        ),
                    );
                }
            }
            return Some(Self {
                ident,
                ty: ty.clone(),
                kind: ParamKind::Context,
            });
        }

        if ident == "ctx" {
            errors.spanned(ty, format!(
                    "the parameter name `ctx` is kept for the context, but `{}` is not a `RunContext`; rename the parameter, or mark it `#[ctx]` if its type is an alias of `RunContext<D>`",
                    tokens_to_string(ty)
                ));
        }
        if let Type::Reference(reference) = ty {
            errors.spanned(reference, "a tool parameter cannot be borrowed: the arguments are parsed into owned values; use an owned type such as `String` or `Vec<T>`",);
        }
        if let Type::ImplTrait(impl_trait) = ty {
            errors.spanned(impl_trait, "a tool parameter cannot be `impl Trait`: its JSON Schema must be known when the tool is registered; use a concrete type",);
        }
        let default = attrs.default.and_then(|attr| match default_expr(&attr) {
            Ok(expr) => Some(expr),
            Err(error) => {
                errors.syn(error);
                None
            }
        });
        Some(Self {
            ident,
            ty: ty.clone(),
            kind: ParamKind::Field(Box::new(FieldParam {
                docs: attrs.docs,
                default,
                passthrough: attrs.passthrough,
            })),
        })
    }
}

/// `#[default = expr]` or `#[default(expr)]`.
fn default_expr(attr: &Attribute) -> Result<Expr, syn::Error> {
    match &attr.meta {
        syn::Meta::NameValue(name_value) => Ok(name_value.value.clone()),
        syn::Meta::List(list) => list.parse_args::<Expr>(),
        syn::Meta::Path(path) => Err(syn::Error::new_spanned(
            path,
            "`#[default]` needs a value: `#[default = 20]` or `#[default(Vec::new())]`",
        )),
    }
}

/// Classifies `ty` as a context (`true`) or not; a context in a form the runtime cannot
/// inject is an error. A `#[ctx]` type is a context whatever it names: the wrappers the macro
/// sees are checked, and what it cannot see (an alias) is checked by the type checker.
fn context_shape(ty: &Type, marked: bool) -> Result<bool, syn::Error> {
    let mut wrappers = Vec::new();
    let mut current = ty;
    loop {
        match current {
            Type::Paren(paren) => current = &paren.elem,
            Type::Group(group) => current = &group.elem,
            Type::Reference(reference) if is_context_candidate(&reference.elem, marked) => {
                wrappers.push(if reference.mutability.is_some() {
                    Wrapper::RefMut
                } else {
                    Wrapper::Ref
                });
                current = &reference.elem;
            }
            Type::Path(path) if path.qself.is_none() => {
                let Some(last) = path.path.segments.last() else {
                    break;
                };
                if last.ident == "RunContext" {
                    return finish_shape(ty, wrappers);
                }
                let wrapper = match last.ident.to_string().as_str() {
                    "Option" => Some(Wrapper::Option),
                    "Arc" => Some(Wrapper::Arc),
                    "Box" => Some(Wrapper::Box),
                    _ => None,
                };
                match (wrapper, single_type_arg(&last.arguments)) {
                    (Some(wrapper), Some(inner)) if is_context_candidate(inner, marked) => {
                        wrappers.push(wrapper);
                        current = inner;
                    }
                    _ if marked => return finish_shape(ty, wrappers),
                    _ => break,
                }
            }
            _ if marked => return finish_shape(ty, wrappers),
            _ => break,
        }
    }
    if mentions_run_context(ty) {
        return Err(syn::Error::new_spanned(
            ty,
            format!(
                "a context cannot be injected inside `{}`: take `RunContext<D>` directly, or as `&RunContext<D>`, `Arc<RunContext<D>>`, `Box<RunContext<D>>` or `Option<...>` of these",
                tokens_to_string(ty)
            ),
        ));
    }
    Ok(false)
}

/// Checks the wrapper order: at most one `Option`, outermost, and at most one of `&`, `Arc`,
/// `Box` inside it.
fn finish_shape(whole: &Type, wrappers: Vec<Wrapper>) -> Result<bool, syn::Error> {
    let valid = match wrappers.as_slice() {
        [] | [_] => true,
        [Wrapper::Option, inner] => *inner != Wrapper::Option,
        _ => false,
    };
    if !valid {
        return Err(syn::Error::new_spanned(
            whole,
            format!(
                "a context cannot be injected as `{}`: use `RunContext<D>`, `&RunContext<D>`, `&mut RunContext<D>`, `Arc<RunContext<D>>`, `Box<RunContext<D>>` or `Option<...>` of one of these",
                tokens_to_string(whole)
            ),
        ));
    }
    Ok(true)
}

/// Whether peeling `ty` could still reach a context.
fn is_context_candidate(ty: &Type, marked: bool) -> bool {
    marked || mentions_run_context(ty)
}

fn single_type_arg(arguments: &PathArguments) -> Option<&Type> {
    let PathArguments::AngleBracketed(arguments) = arguments else {
        return None;
    };
    let mut types = arguments.args.iter().filter_map(|arg| match arg {
        GenericArgument::Type(ty) => Some(ty),
        _ => None,
    });
    match (types.next(), types.next()) {
        (Some(ty), None) => Some(ty),
        _ => None,
    }
}

fn mentions_run_context(ty: &Type) -> bool {
    fn walk(tokens: TokenStream) -> bool {
        tokens.into_iter().any(|token| match token {
            TokenTree::Ident(ident) => ident == "RunContext",
            TokenTree::Group(group) => walk(group.stream()),
            _ => false,
        })
    }
    walk(quote::quote!(#ty))
}

pub(crate) fn tokens_to_string(ty: &Type) -> String {
    quote::quote!(#ty)
        .to_string()
        .replace(" < ", "<")
        .replace("< ", "<")
        .replace(" <", "<")
        .replace(" >", ">")
        .replace("& ", "&")
        .replace(" :: ", "::")
}

impl Output {
    fn parse(ty: &Type, errors: &mut Errors) -> Self {
        match ty {
            Type::ImplTrait(impl_trait) => {
                errors.spanned(impl_trait, "a #[tool] cannot return `impl Trait`: name the result type, so its output schema is known",);
                Output::Plain(ty.clone())
            }
            Type::Tuple(tuple) if tuple.elems.is_empty() => Output::Unit,
            Type::Path(path)
                if path
                    .path
                    .segments
                    .last()
                    .is_some_and(|last| last.ident == "Result") =>
            {
                Output::Result(ty.clone())
            }
            _ => Output::Plain(ty.clone()),
        }
    }
}
