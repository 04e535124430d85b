//! The first step of every lowering: the canonical schema, cloned, in one internal form.
//!
//! - no `$schema`, no root `title`; a nested `title` is folded into the description (as the
//!   canonical form does, so a schema that did not pass through it loses nothing either);
//! - no boolean subschemas: `true` is `{}`, `false` is `{"not":{}}`, except
//!   `additionalProperties`/`unevaluatedProperties: false`, which every target accepts;
//! - root `definitions` (draft 7) become `$defs`, and their references follow;
//! - one spelling of nullability: `anyOf: [X, {"type":"null"}]`, the null alternative last and
//!   once, annotations (description, default, ...) outside. `"type": [T, "null"]`,
//!   `"nullable": true` and a `null` in an untyped `enum` are rewritten to it.
//!
//! Each schema object also carries its [`ORIGIN`], its pointer in the
//! canonical schema.

use serde_json::{Map, Value};

use super::walk::{
    ORIGIN, annotate, children_mut, is_hidden, is_null_schema, null_schema, take_assertions,
};

/// The canonical schema in the internal form (a clone: the canonical value is not touched).
pub(super) fn prepare(canonical: &Value) -> Value {
    let mut schema = canonical.clone();
    unbool(&mut schema, false);
    if let Value::Object(root) = &mut schema {
        root.shift_remove("$schema");
        root.shift_remove("title");
    }
    annotate(&mut schema, "");
    fold_titles(&mut schema, true);
    rename_definitions(&mut schema);
    normalize_nulls(&mut schema);
    schema
}

/// Whether the prepared schema is that of a tool without parameters: an object that lists no
/// properties and takes none (a description aside).
pub(super) fn without_parameters(schema: &Value) -> bool {
    let Value::Object(root) = schema else {
        return false;
    };
    let closed = matches!(root.get("additionalProperties"), Some(Value::Bool(false)))
        || matches!(root.get("unevaluatedProperties"), Some(Value::Bool(false)));
    let empty = |key: &str| match root.get(key) {
        None => true,
        Some(Value::Object(entries)) => entries.is_empty(),
        Some(Value::Array(entries)) => entries.is_empty(),
        Some(_) => false,
    };
    closed
        && root.get("type").is_none_or(|ty| ty == "object")
        && empty("properties")
        && empty("required")
        && root.keys().all(|key| {
            is_hidden(key)
                || matches!(
                    key.as_str(),
                    "type"
                        | "properties"
                        | "required"
                        | "additionalProperties"
                        | "unevaluatedProperties"
                        | "description"
                )
        })
}

fn unbool(schema: &mut Value, closure: bool) {
    match schema {
        Value::Bool(true) => *schema = Value::Object(Map::new()),
        Value::Bool(false) if closure => {}
        Value::Bool(false) => *schema = serde_json::json!({"not": {}}),
        Value::Object(object) => {
            for (slot, child) in children_mut(object) {
                let closure = matches!(slot, super::walk::Slot::Rest(_));
                unbool(child, closure);
            }
        }
        _ => {}
    }
}

fn fold_titles(schema: &mut Value, root: bool) {
    let Value::Object(object) = schema else {
        return;
    };
    if !root {
        object.shift_remove("$schema");
        if let Some(Value::String(title)) = object.shift_remove("title") {
            let description = match object.get("description") {
                Some(Value::String(description)) if !description.is_empty() => {
                    format!("{title}\n\n{description}")
                }
                _ => title,
            };
            object.insert("description".to_owned(), Value::String(description));
        }
    }
    for (_, child) in children_mut(object) {
        fold_titles(child, false);
    }
}

/// Root `definitions` become `$defs` (one place for definitions); the references follow.
fn rename_definitions(schema: &mut Value) {
    let Value::Object(root) = schema else {
        return;
    };
    if root.contains_key("$defs") || !root.contains_key("definitions") {
        return;
    }
    super::walk::rename(root, "definitions", "$defs");
    rewrite_references(schema);
}

fn rewrite_references(schema: &mut Value) {
    let Value::Object(object) = schema else {
        return;
    };
    if let Some(Value::String(reference)) = object.get_mut("$ref")
        && let Some(rest) = reference.strip_prefix("#/definitions/")
    {
        *reference = format!("#/$defs/{rest}");
    }
    for (_, child) in children_mut(object) {
        rewrite_references(child);
    }
}

fn normalize_nulls(schema: &mut Value) {
    let Value::Object(object) = schema else {
        return;
    };
    normalize_null(object);
    for (_, child) in children_mut(object) {
        normalize_nulls(child);
    }
}

/// Rewrites one schema object's nullability into the internal form (its children aside).
pub(super) fn normalize_null(object: &mut Map<String, Value>) {
    let mut nullable = false;
    if let Some(flag) = object.shift_remove("nullable") {
        nullable = flag == Value::Bool(true);
    }
    if let Some(Value::Array(types)) = object.get("type") {
        let others: Vec<Value> = types.iter().filter(|ty| *ty != "null").cloned().collect();
        if others.len() < types.len() {
            // `["null"]` alone is the null type, not a nullable one.
            nullable = !others.is_empty();
            let single = match others.as_slice() {
                [] => Value::String("null".to_owned()),
                [one] => one.clone(),
                _ => Value::Array(others),
            };
            object.insert("type".to_owned(), single);
        }
    }
    if is_null_schema(object) {
        // `null` alone: nothing to wrap.
        return;
    }
    // An enum or const that does not list null refuses it, whatever the type says.
    let listed = |object: &Map<String, Value>| match (object.get("enum"), object.get("const")) {
        (Some(Value::Array(values)), _) => Some(values.iter().any(Value::is_null)),
        (None, Some(value)) => Some(value.is_null()),
        _ => None,
    };
    match listed(object) {
        Some(false) => nullable = false,
        Some(true) if object.get("type").is_none() => nullable = true,
        _ => {}
    }
    if nullable {
        wrap_nullable(object);
    }
    tidy_null_alternatives(object);
}

/// `object` as `{annotations..., "anyOf": [rest, {"type":"null"}]}`.
fn wrap_nullable(object: &mut Map<String, Value>) {
    let mut inner = take_assertions(object);
    if let Some(Value::Array(values)) = inner.get_mut("enum") {
        values.retain(|value| !value.is_null());
    }
    if let Some(origin) = object.get(ORIGIN) {
        inner.insert(ORIGIN.to_owned(), origin.clone());
    }
    let null = null_schema(object);
    object.insert(
        "anyOf".to_owned(),
        Value::Array(vec![Value::Object(inner), null]),
    );
}

/// In an `anyOf`: a nested bare nullable `anyOf` is spliced in, and the null alternatives
/// become one `{"type":"null"}`, last.
fn tidy_null_alternatives(object: &mut Map<String, Value>) {
    let Some(Value::Array(alternatives)) = object.get_mut("anyOf") else {
        return;
    };
    let mut spliced = Vec::with_capacity(alternatives.len());
    for alternative in std::mem::take(alternatives) {
        match alternative {
            Value::Object(inner)
                if inner.keys().all(|key| is_hidden(key) || key == "anyOf")
                    && inner.get("anyOf").is_some_and(Value::is_array) =>
            {
                if let Some(Value::Array(nested)) = inner.get("anyOf") {
                    spliced.extend(nested.iter().cloned());
                }
            }
            other => spliced.push(other),
        }
    }
    let before = spliced.len();
    spliced.retain(|alternative| !alternative.as_object().is_some_and(is_null_schema));
    let had_null = spliced.len() < before;
    *alternatives = spliced;
    if had_null {
        let null = null_schema(object);
        if let Some(Value::Array(alternatives)) = object.get_mut("anyOf") {
            alternatives.push(null);
        }
    }
}
