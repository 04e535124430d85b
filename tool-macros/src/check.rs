//! Rules that involve several keys or the function as a whole, and the resolved declaration.

use crate::errors::Errors;

use crate::attr::{Idempotency, Risk, ToolAttr};
use crate::model::{ParamKind, ToolFn};

/// What the attribute and the function declare, checked and resolved.
pub(crate) struct Decl {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) title: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) read_only: bool,
    pub(crate) mutates_workspace: bool,
    pub(crate) exclusive: bool,
    pub(crate) stateful: bool,
    pub(crate) pagination: bool,
    pub(crate) idempotent: bool,
    pub(crate) destructive: bool,
    pub(crate) open_world: bool,
    pub(crate) risk: Risk,
    pub(crate) resources: Vec<String>,
    /// The roles a principal needs, every one, checked: portable and each listed once.
    pub(crate) roles: Vec<String>,
    /// The tool's own choice about the runtime's idempotency layer: `Some(true)` in,
    /// `Some(false)` out, `None` for the default rule.
    pub(crate) idempotency: Option<bool>,
    pub(crate) timeout_ms: Option<u64>,
    /// A sync function whose body runs on tokio's blocking pool.
    pub(crate) blocking: bool,
    pub(crate) max_output_chars: Option<usize>,
    pub(crate) examples: Vec<String>,
}

pub(crate) fn resolve(attr: &ToolAttr, tool: &ToolFn, errors: &mut Errors) -> Decl {
    check_signature(tool, errors);
    check_contexts(tool, errors);
    check_contradictions(attr, errors);
    check_pagination(attr, tool, errors);
    check_blocking(attr, tool, errors);

    let name = resolve_name(attr, tool, errors);
    let description = resolve_description(attr, tool, errors);
    let roles = check_roles(attr, errors);
    let timeout_ms = attr
        .timeout(errors)
        .map(|timeout| u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX));
    let examples = attr
        .example
        .iter()
        .filter_map(|example| check_example(example, tool, errors))
        .collect();

    let read_only = attr.read_only.is_present();
    let destructive = attr.destructive.is_present();
    let risk = match &attr.risk {
        Some(risk) => **risk,
        None if read_only => Risk::Read,
        None if destructive => Risk::Destructive,
        None => Risk::Write,
    };
    Decl {
        name,
        description,
        title: attr.title.as_ref().map(syn::LitStr::value),
        version: attr.version.as_ref().map(syn::LitStr::value),
        read_only,
        mutates_workspace: attr.mutates_workspace.is_present(),
        exclusive: attr.exclusive.is_present(),
        stateful: attr.stateful.is_present(),
        pagination: attr.pagination.is_present(),
        idempotent: attr.idempotent.is_present(),
        destructive,
        open_world: attr.open_world.is_present(),
        risk,
        resources: attr.resources.iter().map(syn::LitStr::value).collect(),
        roles,
        idempotency: attr.idempotency.as_ref().map(|choice| choice.applies()),
        timeout_ms,
        blocking: attr.blocking.is_present(),
        max_output_chars: attr.max_output_chars.as_ref().map(|max| **max),
        examples,
    }
}

fn check_signature(tool: &ToolFn, errors: &mut Errors) {
    let sig = &tool.item.sig;
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.spanned(&sig.generics, "a #[tool] function cannot be generic: its JSON Schema must be known when the tool is registered; write one concrete #[tool] per type, or take a `serde_json::Value`",);
    }
    if let Some(constness) = &sig.constness {
        errors.spanned(constness, "a #[tool] function cannot be `const`");
    }
    if let syn::Safety::Unsafe(unsafety) = &sig.safety {
        errors.spanned(unsafety, "a #[tool] function cannot be `unsafe`: the runtime calls it with whatever the model sends",);
    }
    if let Some(abi) = &sig.abi {
        errors.spanned(abi, "a #[tool] function cannot have an ABI");
    }
    if let Some(variadic) = &sig.variadic {
        errors.spanned(variadic, "a #[tool] function cannot be variadic");
    }
}

fn check_contexts(tool: &ToolFn, errors: &mut Errors) {
    let mut contexts = tool
        .params
        .iter()
        .filter(|param| matches!(param.kind, ParamKind::Context));
    let Some(first) = contexts.next() else {
        return;
    };
    for extra in contexts {
        errors.spanned(&extra.ty, format!(
                "a #[tool] takes at most one context, but `{}` is a second one (the first is `{}`); read everything from one `RunContext<D>`",
                extra.ident, first.ident
            ));
    }
}

fn check_contradictions(attr: &ToolAttr, errors: &mut Errors) {
    let read_only = attr.read_only.is_present();
    let pairs = [
        (
            read_only,
            "read_only",
            &attr.mutates_workspace,
            "mutates_workspace",
            "changes nothing",
        ),
        (
            read_only,
            "read_only",
            &attr.destructive,
            "destructive",
            "destroys nothing",
        ),
        (
            read_only,
            "read_only",
            &attr.stateful,
            "stateful",
            "has no side effects",
        ),
    ];
    for (first_present, first, second, second_name, reason) in pairs {
        if first_present && second.is_present() {
            errors.at(second.span(), format!(
                    "`{first}` contradicts `{second_name}`: a read-only tool {reason}; remove one of them"
                ));
        }
    }
    if let Some(risk) = &attr.risk {
        let span = risk.span();
        if read_only && **risk != Risk::Read {
            errors.at(span, "`read_only` contradicts this risk: a read-only tool has `risk = \"read\"`; remove one of them",);
        }
        if attr.destructive.is_present() && **risk == Risk::Read {
            errors.at(span, "`destructive` contradicts `risk = \"read\"`: a destructive tool has `risk = \"destructive\"`; remove one of them",);
        }
    }
    if let Some(idempotency) = &attr.idempotency
        && read_only
        && **idempotency == Idempotency::Off
    {
        errors.at(idempotency.span(), "`idempotency = \"off\"` is pointless on a `read_only` tool: reads never use the idempotency layer unless they opt in with `idempotency = \"on\"`; remove it",);
    } else if let Some(idempotency) = &attr.idempotency
        && attr.idempotent.is_present()
        && **idempotency == Idempotency::Off
    {
        errors.at(idempotency.span(), "`idempotency = \"off\"` is pointless on an `idempotent` tool: the idempotency layer leaves idempotent tools alone unless they opt in with `idempotency = \"on\"`; remove it",);
    }
}

fn check_pagination(attr: &ToolAttr, tool: &ToolFn, errors: &mut Errors) {
    if !attr.pagination.is_present() {
        return;
    }
    let has_cursor = tool.fields().any(|(param, _)| param.ident == "cursor");
    if !has_cursor {
        errors.at(attr.pagination.span(), "a `pagination` tool takes a `cursor` parameter (`cursor: Option<String>`, absent for the first page) and returns `Page<T>`",);
    }
}

/// `blocking` is for a sync function; a timeout needs a function it can interrupt.
fn check_blocking(attr: &ToolAttr, tool: &ToolFn, errors: &mut Errors) {
    let is_async = tool.item.sig.asyncness.is_some();
    if is_async && attr.blocking.is_present() {
        errors.at(attr.blocking.span(), "`blocking` is for a sync `fn`, whose whole body then runs on tokio's blocking pool; an `async fn` runs on the turn's task and must not block it: remove `blocking` and move the blocking part into `tokio::task::spawn_blocking`, or make the tool a plain `fn`",);
    }
    if !is_async
        && !attr.blocking.is_present()
        && let Some(timeout) = attr.span_of("timeout")
    {
        errors.spanned(timeout, "a sync tool runs inline on the turn's task, where a timeout cannot interrupt it; make it `async fn`, or add `blocking` to run it on tokio's blocking pool",);
    }
}

fn resolve_name(attr: &ToolAttr, tool: &ToolFn, errors: &mut Errors) -> String {
    let (name, span) = match &attr.name {
        Some(name) => (name.value(), name.span()),
        None => {
            let ident = &tool.item.sig.ident;
            let name = ident.to_string();
            let name = name.strip_prefix("r#").map(str::to_owned).unwrap_or(name);
            (name, ident.span())
        }
    };
    if !is_portable_name(&name) {
        errors.at(span, format!(
                "the tool name `{name}` is not accepted by every provider: a name starts with a letter or `_`, continues with letters, digits, `_` or `-`, and has at most 64 characters; set one with `name = \"...\"`"
            ));
    }
    name
}

/// `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`: the rule every provider's tool names satisfy. The same
/// rule as `tool_core::is_portable_tool_name`, which this crate cannot depend on (tool-core
/// depends on it).
fn is_portable_name(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '_')
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The most characters a role has.
const MAX_ROLE_CHARS: usize = 64;

/// `roles = [...]`: at least one role, each a portable identifier, none listed twice. Returns
/// the roles that pass, in the order written.
fn check_roles(attr: &ToolAttr, errors: &mut Errors) -> Vec<String> {
    if attr.roles.is_empty() {
        if let Some(key) = attr.span_of("roles") {
            errors.spanned(key, "`roles` lists no role: a tool that every principal may call takes no `roles` key; remove it, or name the roles a principal needs, such as `roles = [\"billing\"]`",);
        }
        return Vec::new();
    }
    let mut roles: Vec<String> = Vec::with_capacity(attr.roles.len());
    for literal in &attr.roles {
        let role = literal.value();
        if let Err(reason) = check_role(&role) {
            errors.spanned(literal, reason);
        } else if roles.contains(&role) {
            errors.spanned(literal, format!(
                    "the role `{role}` is already listed: a principal needs every listed role, so each is listed once; remove this one"
                ));
        } else {
            roles.push(role);
        }
    }
    roles
}

/// Whether `role` is a portable identifier: 1 to 64 characters, each an ASCII letter, digit,
/// `_`, `-`, `.` or `:`. The reason when it is not.
fn check_role(role: &str) -> Result<(), String> {
    const RULE: &str = "a role is 1 to 64 characters, each an ASCII letter, digit, `_`, `-`, `.` or `:`, such as \"billing\" or \"org:admin\"";
    if role.is_empty() {
        return Err(format!("a role cannot be empty: {RULE}"));
    }
    if let Some(bad) = role.chars().find(|&c| !is_role_char(c)) {
        return Err(format!(
            "the role `{}` is not a portable identifier: {:?} is not allowed; {RULE}",
            role.escape_debug(),
            bad
        ));
    }
    if role.len() > MAX_ROLE_CHARS {
        return Err(format!(
            "the role `{role}` has {} characters; {RULE}",
            role.len()
        ));
    }
    Ok(())
}

fn is_role_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')
}

fn resolve_description(attr: &ToolAttr, tool: &ToolFn, errors: &mut Errors) -> String {
    if let Some(description) = &attr.description {
        let text = description.value().trim().to_owned();
        if text.is_empty() {
            errors.spanned(
                description,
                "`description` is empty: the model chooses tools by their description",
            );
        }
        return text;
    }
    match &tool.docs {
        Some(docs) => docs.clone(),
        None => {
            errors.spanned(&tool.item.sig.ident, "a #[tool] needs a description: the model chooses tools by it; add a doc comment (`/// What it does and when to use it.`) or `description = \"...\"`",);
            String::new()
        }
    }
}

/// An example must be a JSON object whose keys are parameters of the tool.
fn check_example(example: &syn::LitStr, tool: &ToolFn, errors: &mut Errors) -> Option<String> {
    let text = example.value();
    let value: serde_json::Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(error) => {
            errors.spanned(example, format!("`example` is not valid JSON: {error}"));
            return None;
        }
    };
    let Some(object) = value.as_object() else {
        errors.spanned(example, "`example` must be a JSON object of arguments");
        return None;
    };
    let names: Vec<String> = tool
        .fields()
        .map(|(param, _)| {
            let name = param.ident.to_string();
            name.strip_prefix("r#").map(str::to_owned).unwrap_or(name)
        })
        .collect();
    let renamed = tool
        .fields()
        .any(|(_, field)| !field.passthrough.is_empty());
    if !renamed && let Some(unknown) = object.keys().find(|key| !names.contains(key)) {
        errors.spanned(example, format!(
                    "`example` names `{unknown}`, which is not a parameter of this tool (parameters: {})",
                    names.join(", ")
                ));
        return None;
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::{check_role, is_portable_name};

    #[test]
    fn portable_roles() {
        for good in [
            "billing",
            "admin",
            "org:admin",
            "team.support-lead_2",
            "A",
            "0",
            &"r".repeat(64),
        ] {
            assert_eq!(check_role(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            " admin",
            "with space",
            "a/b",
            "ünicode",
            "tab\t",
            &"r".repeat(65),
        ] {
            assert!(check_role(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn portable_names() {
        for good in ["get_order", "_private", "a", "kebab-case", &"x".repeat(64)] {
            assert!(is_portable_name(good), "{good}");
        }
        for bad in [
            "",
            "1st",
            "dotted.name",
            "with space",
            "ünicode",
            &"x".repeat(65),
        ] {
            assert!(!is_portable_name(bad), "{bad}");
        }
    }
}
