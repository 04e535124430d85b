//! A keyword a target cannot enforce, said in words for the description.

use serde_json::Value;

use super::walk::shown;

/// `keyword: value` in a few words (`at most 200 characters`); `None` when there is nothing
/// worth saying (`default: null`, `uniqueItems: false`).
pub(super) fn text(keyword: &str, value: &Value) -> Option<String> {
    let json = || compact(value);
    let count = |one: &str, many: &str| {
        let n = value.as_u64();
        let noun = if n == Some(1) { one } else { many };
        format!("{} {noun}", json())
    };
    let text = match keyword {
        "minLength" => format!("at least {}", count("character", "characters")),
        "maxLength" => format!("at most {}", count("character", "characters")),
        "pattern" => format!(
            "matches the pattern `{}`",
            value.as_str().unwrap_or_default()
        ),
        "format" => format!("format {}", value.as_str().map_or_else(json, str::to_owned)),
        "minimum" => format!("at least {}", json()),
        "maximum" => format!("at most {}", json()),
        "exclusiveMinimum" => format!("greater than {}", json()),
        "exclusiveMaximum" => format!("less than {}", json()),
        "multipleOf" => format!("a multiple of {}", json()),
        "minItems" => format!("at least {}", count("item", "items")),
        "maxItems" => format!("at most {}", count("item", "items")),
        "uniqueItems" if value == true => "no duplicate items".to_owned(),
        "uniqueItems" => return None,
        "minProperties" => format!("at least {}", count("entry", "entries")),
        "maxProperties" => format!("at most {}", count("entry", "entries")),
        "minContains" => format!("at least {} matching", count("item", "items")),
        "maxContains" => format!("at most {} matching", count("item", "items")),
        "default" if value.is_null() => return None,
        "default" => format!("default {}", json()),
        "enum" => match value {
            Value::Array(values) => format!(
                "one of {}",
                values.iter().map(compact).collect::<Vec<_>>().join(", ")
            ),
            _ => format!("one of {}", json()),
        },
        "const" => format!("exactly {}", json()),
        "not" => format!("must not match {}", json()),
        "if" => format!("when it matches {}", json()),
        "then" => format!("then it must match {}", json()),
        "else" => format!("otherwise it must match {}", json()),
        "contains" => format!("has an item matching {}", json()),
        "propertyNames" => format!("keys match {}", json()),
        "unevaluatedItems" | "additionalItems" => format!("other items match {}", json()),
        "dependentRequired" => match value {
            Value::Object(entries) => entries
                .iter()
                .map(|(name, needs)| {
                    let needs = needs
                        .as_array()
                        .map(|needs| {
                            needs
                                .iter()
                                .map(|need| format!("`{}`", need.as_str().unwrap_or_default()))
                                .collect::<Vec<_>>()
                                .join(", ")
                        })
                        .unwrap_or_default();
                    format!("with `{name}`, also {needs}")
                })
                .collect::<Vec<_>>()
                .join(", "),
            _ => format!("dependentRequired {}", json()),
        },
        "dependentSchemas" => match value {
            Value::Object(entries) => entries
                .iter()
                .map(|(name, schema)| format!("with `{name}`, it must match {}", compact(schema)))
                .collect::<Vec<_>>()
                .join(", "),
            _ => format!("dependentSchemas {}", json()),
        },
        "prefixItems" => match value {
            Value::Array(items) => format!(
                "items in this order: {}",
                items.iter().map(summary).collect::<Vec<_>>().join(", ")
            ),
            _ => format!("prefixItems {}", json()),
        },
        other => format!("{other} {}", json()),
    };
    Some(text)
}

/// `texts` with each pair `at least N x` / `at most N x` said once, `exactly N x`, where the
/// first of them was.
pub(super) fn exactly(texts: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(texts.len());
    for text in texts {
        if let Some(rest) = text.strip_prefix("at most ")
            && let Some(lower) = out
                .iter_mut()
                .find(|seen| seen.strip_prefix("at least ") == Some(rest))
        {
            *lower = format!("exactly {rest}");
            continue;
        }
        out.push(text.clone());
    }
    out
}

/// A value as compact JSON, the lowering's hidden keys left out.
fn compact(value: &Value) -> String {
    serde_json::to_string(&shown(value)).unwrap_or_default()
}

/// A schema in a word or two: its type, the definition it names, or its JSON.
fn summary(schema: &Value) -> String {
    let Value::Object(object) = schema else {
        return compact(schema);
    };
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        return reference.rsplit('/').next().unwrap_or(reference).to_owned();
    }
    match object.get("type") {
        Some(Value::String(ty)) => match object.get("format").and_then(Value::as_str) {
            Some(format) => format!("{ty} ({format})"),
            None => ty.clone(),
        },
        _ => compact(schema),
    }
}
