//! The keys of `#[tool(...)]`, parsed with darling.

use std::time::Duration;

use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::util::{Flag, SpannedValue};

use crate::errors::Errors;
use proc_macro2::TokenStream;
use syn::{LitStr, Path};

/// Every key `#[tool(...)]` accepts, in the order the error message lists them.
pub(crate) const KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "version",
    "read_only",
    "mutates_workspace",
    "exclusive",
    "stateful",
    "pagination",
    "idempotent",
    "destructive",
    "open_world",
    "risk",
    "resources",
    "timeout",
    "max_output_chars",
    "example",
    "crate",
];

/// The risk a tool declares with `risk = "..."`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, FromMeta)]
#[darling(rename_all = "snake_case")]
pub(crate) enum Risk {
    Read,
    Write,
    Destructive,
}

/// `#[tool(...)]`, as written.
#[derive(Debug, Default, FromMeta)]
pub(crate) struct ToolAttr {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) version: Option<LitStr>,
    pub(crate) read_only: Flag,
    pub(crate) mutates_workspace: Flag,
    pub(crate) exclusive: Flag,
    pub(crate) stateful: Flag,
    pub(crate) pagination: Flag,
    pub(crate) idempotent: Flag,
    pub(crate) destructive: Flag,
    pub(crate) open_world: Flag,
    pub(crate) risk: Option<SpannedValue<Risk>>,
    #[darling(default)]
    pub(crate) resources: Vec<LitStr>,
    pub(crate) timeout: Option<LitStr>,
    pub(crate) max_output_chars: Option<SpannedValue<usize>>,
    #[darling(multiple)]
    pub(crate) example: Vec<LitStr>,
    #[darling(rename = "crate")]
    pub(crate) krate: Option<Path>,
}

impl ToolAttr {
    /// Parses the attribute's arguments. Unknown keys are reported with the list of valid
    /// keys and the nearest one; the known keys are still parsed, so every mistake in the
    /// attribute is reported at once.
    pub(crate) fn parse(args: TokenStream, errors: &mut Errors) -> Self {
        let items = match NestedMeta::parse_meta_list(args) {
            Ok(items) => items,
            Err(error) => {
                errors.syn(error);
                return Self::default();
            }
        };
        let mut known = Vec::with_capacity(items.len());
        for item in items {
            match key_of(&item) {
                Some(key) if KEYS.contains(&key.as_str()) => known.push(item),
                Some(key) => unknown_key(&key, &item, errors),
                None => errors.spanned(
                    item,
                    format!(
                        "expected a key such as `read_only` or `name = \"...\"`; valid keys: {}",
                        KEYS.join(", ")
                    ),
                ),
            }
        }
        Self::from_list(&known).unwrap_or_else(|error| {
            errors.darling(error);
            Self::default()
        })
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
        .map(|candidate| (strsim::jaro_winkler(key, candidate), *candidate))
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
            KEYS.join(", ")
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
