//! The keys of `#[tool(...)]`, parsed with darling.

use std::time::Duration;

use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::util::{Flag, SpannedValue};

use crate::errors::Errors;
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{Lit, LitStr, Path};

/// A key of `#[tool(...)]` and how it is written.
pub(crate) struct Key {
    pub(crate) name: &'static str,
    /// What it takes, after the key's name: "takes a string".
    pub(crate) takes: &'static str,
    /// The key written out: `name = "get_order"`.
    pub(crate) example: &'static str,
}

/// The keys of `#[tool(...)]`, in one place: each key's field, its type, its name as written
/// and how it is written. The darling struct, the list of valid keys, the "did you mean"
/// suggestions and the message for a key written in the wrong form all come from this table.
macro_rules! keys {
    ($($(#[$attr:meta])* $field:ident: $ty:ty = $key:tt, $takes:tt, $example:tt;)*) => {
        /// `#[tool(...)]`, as written.
        #[derive(Debug, Default, FromMeta)]
        pub(crate) struct ToolAttr {
            $(
                $(#[$attr])*
                #[darling(rename = $key)]
                pub(crate) $field: $ty,
            )*
            /// Where each key was written, for errors about the key rather than its value.
            #[darling(skip)]
            pub(crate) spans: Vec<(String, TokenStream)>,
        }

        /// Every key `#[tool(...)]` accepts, in the order the error message lists them.
        pub(crate) const KEYS: &[Key] = &[$(Key { name: $key, takes: $takes, example: $example }),*];
    };
}

keys! {
    name: Option<LitStr> = "name", "takes a string", r#"name = "get_order""#;
    title: Option<LitStr> = "title", "takes a string", r#"title = "Get order""#;
    description: Option<LitStr> = "description", "takes a string", r#"description = "Look up one order.""#;
    version: Option<LitStr> = "version", "takes a string", r#"version = "2""#;
    read_only: Flag = "read_only", "is a flag and takes no value", "read_only";
    mutates_workspace: Flag = "mutates_workspace", "is a flag and takes no value", "mutates_workspace";
    exclusive: Flag = "exclusive", "is a flag and takes no value", "exclusive";
    stateful: Flag = "stateful", "is a flag and takes no value", "stateful";
    pagination: Flag = "pagination", "is a flag and takes no value", "pagination";
    idempotent: Flag = "idempotent", "is a flag and takes no value", "idempotent";
    idempotency: Option<SpannedValue<Idempotency>> = "idempotency", r#"takes "on" or "off""#, r#"idempotency = "on""#;
    destructive: Flag = "destructive", "is a flag and takes no value", "destructive";
    open_world: Flag = "open_world", "is a flag and takes no value", "open_world";
    risk: Option<SpannedValue<Risk>> = "risk", r#"takes "read", "write" or "destructive""#, r#"risk = "write""#;
    #[darling(default)]
    resources: Vec<LitStr> = "resources", "takes a list of strings, even of one", r#"resources("db:orders")"#;
    #[darling(default)]
    roles: Vec<LitStr> = "roles", "takes a list of strings, even of one", r#"roles = ["billing"]"#;
    timeout: Option<LitStr> = "timeout", "takes a string with a unit", r#"timeout = "5s""#;
    blocking: Flag = "blocking", "is a flag and takes no value", "blocking";
    max_output_chars: Option<SpannedValue<usize>> = "max_output_chars", "takes a whole number", "max_output_chars = 4000";
    #[darling(multiple)]
    example: Vec<LitStr> = "example", "takes a JSON object of arguments in a string", r##"example = r#"{"order_id": "A-1024"}"#"##;
    krate: Option<Path> = "crate", "takes a path", "crate = ::tool_runtime";
}

/// The risk a tool declares with `risk = "..."`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, FromMeta)]
#[darling(rename_all = "snake_case")]
pub(crate) enum Risk {
    Read,
    Write,
    Destructive,
}

/// The tool's own choice about the runtime's idempotency layer, `idempotency = "..."`: in
/// (`"on"`) or out (`"off"`), whatever the default rule (the layer applies to a tool that is
/// neither `read_only` nor `idempotent`) would decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, FromMeta)]
#[darling(rename_all = "snake_case")]
pub(crate) enum Idempotency {
    On,
    Off,
}

impl Idempotency {
    /// Whether the layer applies: what the spec records.
    pub(crate) fn applies(self) -> bool {
        self == Idempotency::On
    }
}

fn key_names() -> String {
    KEYS.iter()
        .map(|key| key.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl ToolAttr {
    /// Parses the attribute's arguments. Unknown keys are reported with the list of valid
    /// keys and the nearest one; a known key in the wrong form is reported with how it is
    /// written; the other keys are still parsed, so every mistake in the attribute is reported
    /// at once.
    pub(crate) fn parse(args: TokenStream, errors: &mut Errors) -> Self {
        let items = match NestedMeta::parse_meta_list(args) {
            Ok(items) => items,
            Err(error) => {
                errors.syn(error);
                return Self::default();
            }
        };
        let mut known = Vec::with_capacity(items.len());
        let mut spans = Vec::with_capacity(items.len());
        for item in items {
            match key_of(&item) {
                Some(key) => match KEYS.iter().find(|known| known.name == key) {
                    Some(key_info) => {
                        // Each key alone first, so that a mistake in its form is reported
                        // with how the key is written rather than as darling's type error.
                        match Self::from_list(std::slice::from_ref(&item)) {
                            Ok(_) => {
                                spans.push((key, item.to_token_stream()));
                                known.push(item);
                            }
                            Err(error) => {
                                errors.spanned(&item, wrong_form(key_info, &item, &error));
                            }
                        }
                    }
                    None => unknown_key(&key, &item, errors),
                },
                None => errors.spanned(
                    item,
                    format!(
                        "expected a key such as `read_only` or `name = \"...\"`; valid keys: {}",
                        key_names()
                    ),
                ),
            }
        }
        let mut attr = Self::from_list(&known).unwrap_or_else(|error| {
            errors.darling(error);
            Self::default()
        });
        attr.spans = spans;
        attr
    }

    /// Where `key` was written (the whole `key = value`), when it was.
    pub(crate) fn span_of(&self, key: &str) -> Option<&TokenStream> {
        self.spans
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, tokens)| tokens)
    }

    /// The timeout, parsed from `timeout = "15s"`.
    pub(crate) fn timeout(&self, errors: &mut Errors) -> Option<Duration> {
        let literal = self.timeout.as_ref()?;
        match parse_duration(&literal.value()) {
            Ok(duration) => Some(duration),
            Err(reason) => {
                errors.spanned(literal, reason);
                None
            }
        }
    }
}

/// The message for a known key written in the wrong form: what it takes and how it is
/// written, with the value the user gave where that helps, and darling's suggestion when it
/// has one.
fn wrong_form(key: &Key, item: &NestedMeta, error: &darling::Error) -> String {
    let value = match item {
        NestedMeta::Meta(syn::Meta::NameValue(name_value)) => Some(&name_value.value),
        _ => None,
    };
    let literal = match value {
        Some(syn::Expr::Lit(syn::ExprLit { lit, .. })) => Some(lit),
        _ => None,
    };
    let darling = error.to_string();
    let suggestion = darling
        .split_once("Did you mean ")
        .and_then(|(_, rest)| rest.split_once('?'))
        .map(|(suggestion, _)| suggestion);
    let example = match (key.name, literal) {
        ("timeout", Some(Lit::Int(number))) => {
            format!("`timeout = \"{}s\"`", number.base10_digits())
        }
        ("resources", Some(Lit::Str(text))) => format!("`resources({:?})`", text.value()),
        ("roles", Some(Lit::Str(text))) => format!("`roles = [{:?}]`", text.value()),
        ("idempotency", _) => match idempotency_meant(value, suggestion) {
            Some(choice) => format!("`idempotency = \"{choice}\"`"),
            None => "`idempotency = \"on\"` to use the idempotency layer, or `idempotency = \"off\"` not to".to_owned(),
        },
        // `idempotent = "off"`: the flag taken for the key that chooses the layer.
        ("idempotent", Some(_)) => match idempotency_meant(value, None) {
            Some(choice) => format!("`idempotent`, or, to choose whether the idempotency layer applies, `idempotency = \"{choice}\"`"),
            None => format!("`{}`", key.example),
        },
        _ => format!("`{}`", key.example),
    };
    let mut message = format!("`{}` {}: write {example}", key.name, key.takes);
    if let Some(suggestion) = suggestion {
        message.push_str(&format!("; did you mean {suggestion}?"));
    }
    message
}

/// The choice an `idempotency = ...` in the wrong form means, when it is clear: `true`,
/// `off` unquoted, `"OFF"`, `"disabled"`, or a misspelling darling matched (`"of"`).
fn idempotency_meant(value: Option<&syn::Expr>, suggestion: Option<&str>) -> Option<&'static str> {
    let written = match value? {
        syn::Expr::Lit(syn::ExprLit {
            lit: Lit::Bool(choice),
            ..
        }) => return Some(if choice.value { "on" } else { "off" }),
        syn::Expr::Lit(syn::ExprLit {
            lit: Lit::Str(text),
            ..
        }) => text.value(),
        syn::Expr::Path(path) => path.path.get_ident()?.to_string(),
        _ => return None,
    };
    on_or_off(&written).or_else(|| on_or_off(suggestion?.trim_matches('`')))
}

/// The value meant by `idempotency = "..."` written another way (`"ON"`, `"true"`,
/// `"disabled"`), when it is clear.
fn on_or_off(text: &str) -> Option<&'static str> {
    match text.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "enabled" | "enable" => Some("on"),
        "off" | "false" | "no" | "disabled" | "disable" => Some("off"),
        _ => None,
    }
}

fn key_of(item: &NestedMeta) -> Option<String> {
    match item {
        NestedMeta::Meta(meta) => meta.path().get_ident().map(|ident| {
            let key = ident.to_string();
            key.strip_prefix("r#").map(str::to_owned).unwrap_or(key)
        }),
        NestedMeta::NameValueInvalidExpr(invalid) => {
            invalid.path.get_ident().map(ToString::to_string)
        }
        NestedMeta::Lit(_) => None,
    }
}

fn unknown_key(key: &str, item: &NestedMeta, errors: &mut Errors) {
    let nearest = KEYS
        .iter()
        .map(|candidate| (strsim::jaro_winkler(key, candidate.name), candidate.name))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate);
    let suggestion = match nearest {
        Some(nearest) => format!("; did you mean `{nearest}`?"),
        None => String::new(),
    };
    errors.spanned(
        item,
        format!(
            "unknown key `{key}` in #[tool]{suggestion}\nvalid keys: {}",
            key_names()
        ),
    );
}

/// Parses `"250ms"`, `"15s"`, `"2m"`, `"1h"` (a positive whole number and a unit).
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let invalid = || {
        format!(
            "invalid timeout `{text}`: write a positive whole number followed by a unit, such as \"500ms\", \"15s\", \"2m\" or \"1h\""
        )
    };
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(invalid)?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().map_err(|_| invalid())?;
    if number == 0 {
        return Err(format!(
            "invalid timeout `{text}`: a timeout of zero would fail every call; remove the key to use the runtime's default"
        ));
    }
    let millis = match unit {
        "ms" => Some(number),
        "s" => number.checked_mul(1_000),
        "m" | "min" => number.checked_mul(60_000),
        "h" => number.checked_mul(3_600_000),
        _ => return Err(invalid()),
    };
    millis.map(Duration::from_millis).ok_or_else(invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units_and_reject_the_rest() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("15s"), Ok(Duration::from_secs(15)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        for bad in ["", "15", "s", "1.5s", "15 seconds", "-1s", "0s"] {
            assert!(parse_duration(bad).is_err(), "{bad:?} should be rejected");
        }
    }
}
