//! Gemini's two fields: `parametersJsonSchema` and `parameters`.
//!
//! `parametersJsonSchema` ([`Target::Gemini`](crate::providers::Target)): the internal form
//! with `examples` removed, `exclusiveMinimum`/`exclusiveMaximum` moved into the description
//! and `const` spelled as a one-value `enum`.
//!
//! `parameters` ([`Target::GeminiParameters`](crate::providers::Target), the OpenAPI 3.0
//! subset): compositions merged ([`compose`]), every `$ref` inlined (a
//! recursive type is an error), then for every schema:
//!
//! - one `type`; nullability as `nullable: true`; a `type` array an `anyOf` of one type each;
//!   `oneOf` becomes `anyOf`;
//! - `const` a one-value `enum`; an enum of anything but strings moves into the description
//!   (Gemini's enums are strings);
//! - formats: `int32`/`int64` for integers (`uint8`, `int16`... become `int32`, `uint32`,
//!   `uint64`... `int64`), `float`/`double` for numbers, `date-time`/`enum` for strings; any
//!   other format moves into the description (a mapped one too, its range said in words);
//! - `additionalProperties: false` dropped; a map (`additionalProperties` a schema,
//!   `patternProperties`) is an error, chosen over a silent free-form object: Gemini refuses
//!   an object without properties, and the model would not learn the values' type;
//! - a tuple: an array of any of its item types, its length kept;
//! - the keywords outside the subset (exclusive bounds, `multipleOf`, `uniqueItems`, `not`,
//!   ...) move into the description.
//!
//! Both: a parameter's name is letters, digits and `_`, starting with a letter or `_`.

use serde_json::{Map, Value};

use super::Failure;
use super::compose::{self, RefSiblings};
use super::strict;
use super::walk::{
    Label, Slot, is_hidden, is_null_schema, is_nullable, origin, own_pointer, rename, types, walk,
};
use super::{Ctx, normal};

pub(super) fn lower_json(mut schema: Value, ctx: &mut Ctx<'_>) -> Result<Value, Failure> {
    super::json_root(ctx, &mut schema)?;
    walk(
        &mut schema,
        None,
        &Label::root(),
        &mut |object, _, label| {
            object.shift_remove("examples");
            for keyword in ["exclusiveMinimum", "exclusiveMaximum"] {
                ctx.move_keyword(object, keyword, label);
            }
            if let Some(value) = object.shift_remove("const") {
                object.insert("enum".to_owned(), Value::Array(vec![value]));
            }
            Ok::<(), Failure>(())
        },
    )?;
    parameter_names(ctx, &schema)?;
    Ok(schema)
}

/// The keywords of Gemini's `parameters` subset (besides those checked one by one).
const KEPT: &[&str] = &[
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "items",
    "minItems",
    "maxItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "default",
    "anyOf",
    "propertyOrdering",
    "minimum",
    "maximum",
];

/// Constraints outside the subset, said in the description.
const MOVED: &[&str] = &[
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "propertyNames",
    "unevaluatedItems",
    "additionalItems",
    "allOf",
];

pub(super) fn lower_parameters(mut schema: Value, ctx: &mut Ctx<'_>) -> Result<Value, Failure> {
    compose::flatten(ctx, &mut schema, RefSiblings::Inline)?;
    super::strict_root(ctx, &mut schema)?;
    compose::inline_all(
        ctx,
        &mut schema,
        (
            "refers back to a type that contains it; Gemini's `parameters` cannot express a \
             recursive type",
            "offer the tool with `parametersJsonSchema` (Target::Gemini), or bound the depth \
             with distinct types",
        ),
    )?;
    walk(
        &mut schema,
        None,
        &Label::root(),
        &mut |object, slot, label| parameter_node(ctx, object, slot, label),
    )?;
    parameter_names(ctx, &schema)?;
    Ok(schema)
}

fn parameter_node(
    ctx: &mut Ctx<'_>,
    object: &mut Map<String, Value>,
    slot: Option<&Slot>,
    label: &Label,
) -> Result<(), Failure> {
    rename(object, "oneOf", "anyOf");
    normal::normalize_null(object);
    if is_nullable(object) {
        spell_nullable(ctx, object)?;
        // The alternative merged in may be a `oneOf` itself.
        rename(object, "oneOf", "anyOf");
    }
    strict::split_types(object);
    strict::drop_inapplicable(object);
    if is_null_schema(object) {
        return Err(ctx.error(
            "type",
            origin(object, "type"),
            "is `null`: the value is always null, which Gemini's `parameters` cannot express",
            "remove the field, or make it an Option of a real type",
        ));
    }
    strict::tuple_to_items(ctx, object, label);
    if let Some(value) = object.shift_remove("const") {
        object.insert("enum".to_owned(), Value::Array(vec![value]));
    }
    enumeration(ctx, object, label);
    format(ctx, object, label);
    if strict::is_object_schema(object) {
        open_object(ctx, object, slot)?;
    }
    let keys: Vec<String> = object
        .keys()
        .filter(|key| !is_hidden(key))
        .cloned()
        .collect();
    for key in keys {
        if KEPT.contains(&key.as_str()) {
            continue;
        }
        if MOVED.contains(&key.as_str()) {
            ctx.move_keyword(object, &key, label);
        } else {
            object.shift_remove(&key);
        }
    }
    strict::refuse_untyped_items(ctx, object)?;
    strict::refuse_any(ctx, object)
}

/// `anyOf: [X, {"type":"null"}]` as X with `nullable: true` (several alternatives stay an
/// `anyOf`, nullable).
fn spell_nullable(ctx: &Ctx<'_>, object: &mut Map<String, Value>) -> Result<(), Failure> {
    let pointer = origin(object, "anyOf");
    let Some(Value::Array(mut alternatives)) = object.shift_remove("anyOf") else {
        return Ok(());
    };
    alternatives.pop();
    match alternatives.len() {
        0 => {
            return Err(ctx.error(
                "anyOf",
                pointer,
                "accepts only null, which Gemini's `parameters` cannot express",
                "remove the field, or make it an Option of a real type",
            ));
        }
        1 => {
            let Some(Value::Object(only)) = alternatives.pop() else {
                return Ok(());
            };
            let outer = std::mem::take(object);
            *object = compose::merge(outer, only).map_err(|_| {
                ctx.error(
                    "anyOf",
                    pointer,
                    "cannot be written as one nullable schema",
                    "describe the value in one schema",
                )
            })?;
        }
        _ => {
            object.insert("anyOf".to_owned(), Value::Array(alternatives));
        }
    }
    object.insert("nullable".to_owned(), Value::Bool(true));
    Ok(())
}

/// Gemini's enums are strings: any other enum is said in the description (its values' type
/// kept as the schema's type).
fn enumeration(ctx: &mut Ctx<'_>, object: &mut Map<String, Value>, label: &Label) {
    let Some(Value::Array(values)) = object.get_mut("enum") else {
        return;
    };
    if values.iter().any(Value::is_null) {
        values.retain(|value| !value.is_null());
        object.insert("nullable".to_owned(), Value::Bool(true));
    }
    let Some(Value::Array(values)) = object.get("enum") else {
        return;
    };
    let strings = !values.is_empty() && values.iter().all(Value::is_string);
    let typed = types(object);
    if strings && (typed.is_empty() || typed == ["string"]) {
        object.insert("type".to_owned(), Value::String("string".to_owned()));
        return;
    }
    if typed.is_empty() {
        let mut found: Vec<&str> = values.iter().map(strict::json_type).collect();
        found.dedup();
        if let [one] = found.as_slice() {
            object.insert("type".to_owned(), Value::String((*one).to_owned()));
        }
    }
    ctx.move_keyword(object, "enum", label);
}

/// The format Gemini knows for a type and format (`None`: none), and whether the original is
/// to be said in the description (Gemini's does not say all of it).
fn gemini_format(ty: &str, format: &str) -> (Option<&'static str>, bool) {
    match (ty, format) {
        ("integer", "int32") => (Some("int32"), false),
        ("integer", "int64") => (Some("int64"), false),
        ("integer", "int8" | "int16" | "uint8" | "uint16") => (Some("int32"), true),
        ("integer", _) => (Some("int64"), true),
        ("number", "float") => (Some("float"), false),
        ("number", "double") => (Some("double"), false),
        ("string", "date-time") => (Some("date-time"), false),
        ("string", "enum") => (Some("enum"), false),
        _ => (None, true),
    }
}

fn format(ctx: &mut Ctx<'_>, object: &mut Map<String, Value>, label: &Label) {
    let Some(format) = object
        .get("format")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        return;
    };
    let typed = types(object);
    let ty = typed.first().map_or("", String::as_str);
    let (mapped, said) = gemini_format(ty, &format);
    if said {
        ctx.move_keyword(object, "format", label);
    }
    match mapped {
        Some(mapped) => {
            object.insert("format".to_owned(), Value::String(mapped.to_owned()));
        }
        None => {
            object.shift_remove("format");
        }
    }
}

/// An object as Gemini's subset writes it: no `additionalProperties`, some properties.
fn open_object(
    ctx: &Ctx<'_>,
    object: &mut Map<String, Value>,
    slot: Option<&Slot>,
) -> Result<(), Failure> {
    if object.get("type").is_none() {
        object.insert("type".to_owned(), Value::String("object".to_owned()));
    }
    if object.contains_key("patternProperties") {
        return Err(strict::map_error(ctx, object, "patternProperties"));
    }
    for keyword in ["additionalProperties", "unevaluatedProperties"] {
        match object.get(keyword) {
            None => {}
            Some(Value::Bool(false)) => {
                object.shift_remove(keyword);
            }
            Some(_) => return Err(strict::map_error(ctx, object, keyword)),
        }
    }
    let empty = object
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    if empty && slot.is_some() {
        return Err(ctx.error(
            "properties",
            format!("{}/properties", own_pointer(object)),
            "are empty: Gemini's `parameters` refuse an object without properties",
            "give the struct a field, or remove it",
        ));
    }
    Ok(())
}

/// Gemini's rule for a parameter's name.
fn parameter_names(ctx: &Ctx<'_>, schema: &Value) -> Result<(), Failure> {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return Ok(());
    };
    for name in properties.keys() {
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(ctx.error(
                "properties",
                format!("/properties/{}", super::walk::escape(name)),
                format!(
                    "name a parameter `{name}`; Gemini's parameter names are letters, digits \
                     and `_`, starting with a letter or `_`"
                ),
                "rename the parameter (`#[serde(rename = \"...\")]`)",
            ));
        }
    }
    Ok(())
}
