//! Rewrites the strict targets share (OpenAI strict, Anthropic strict, Gemini `parameters`).

use serde_json::{Map, Value};

use super::Ctx;
use super::Failure;
use super::walk::{
    MADE_REQUIRED, ORIGIN, is_annotation, is_hidden, is_null_schema, is_nullable, null_schema,
    origin, own_pointer, rename, shown, take_assertions, types,
};

/// Whether `object` describes an object's properties: typed `object`, or untyped with
/// object keywords.
pub(super) fn is_object_schema(object: &Map<String, Value>) -> bool {
    let listed = types(object);
    if !listed.is_empty() {
        return listed.iter().any(|ty| ty == "object");
    }
    [
        "properties",
        "required",
        "additionalProperties",
        "unevaluatedProperties",
        "patternProperties",
    ]
    .iter()
    .any(|keyword| object.contains_key(*keyword))
}

/// Whether `object` is typed `string` (alone).
pub(super) fn is_string(object: &Map<String, Value>) -> bool {
    types(object) == ["string"]
}

/// The error for a map (an object whose keys the caller chooses).
pub(super) fn map_error(ctx: &Ctx<'_>, object: &Map<String, Value>, keyword: &str) -> Failure {
    ctx.error(
        keyword,
        origin(object, keyword),
        format!(
            "makes a map (an object whose keys the caller chooses), which {} cannot express",
            ctx.target
        ),
        "use a Vec of {key, value} structs",
    )
}

/// How [`close`] treats the properties an object does not require.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Optional {
    /// Left optional.
    Keep,
    /// Made required and nullable (OpenAI strict), recorded under [`MADE_REQUIRED`].
    RequireNullable,
}

/// Closes an object schema: `type: object`, `additionalProperties: false`, a `properties` key.
/// A map (`additionalProperties` a schema, `patternProperties`, `unevaluatedProperties` a
/// schema) is an error.
pub(super) fn close(
    ctx: &Ctx<'_>,
    object: &mut Map<String, Value>,
    optional: Optional,
) -> Result<(), Failure> {
    if object.get("type").is_none() {
        object.insert("type".to_owned(), Value::String("object".to_owned()));
    }
    if object.contains_key("patternProperties") {
        return Err(map_error(ctx, object, "patternProperties"));
    }
    match object.get("unevaluatedProperties") {
        None => {}
        Some(Value::Bool(false)) => {
            object.shift_remove("unevaluatedProperties");
        }
        Some(_) => return Err(map_error(ctx, object, "unevaluatedProperties")),
    }
    match object.get("additionalProperties") {
        None | Some(Value::Bool(false)) => {
            object.insert("additionalProperties".to_owned(), Value::Bool(false));
        }
        Some(_) => return Err(map_error(ctx, object, "additionalProperties")),
    }
    if !object.contains_key("properties") {
        object.insert("properties".to_owned(), Value::Object(Map::new()));
    }
    if optional == Optional::RequireNullable {
        require_all(object);
    }
    Ok(())
}

/// Every property required; each one that was not made nullable and recorded.
fn require_all(object: &mut Map<String, Value>) {
    let required: Vec<String> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let mut names = Vec::new();
    let mut made = Vec::new();
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        for (name, schema) in properties.iter_mut() {
            names.push(Value::String(name.clone()));
            // Only a property this made nullable reads a `null` as left out: one that
            // took `null` already keeps it (`None`, where absent is its default).
            if !required.contains(name) && make_nullable(schema) {
                made.push(Value::String(name.clone()));
            }
        }
    }
    object.insert("required".to_owned(), Value::Array(names));
    if !made.is_empty() {
        object.insert(MADE_REQUIRED.to_owned(), Value::Array(made));
    }
}

/// Makes `schema` accept `null` too, in the internal form; whether it did not already.
pub(super) fn make_nullable(schema: &mut Value) -> bool {
    let Value::Object(object) = schema else {
        return false;
    };
    if is_nullable(object) || is_null_schema(object) || types(object).iter().any(|t| t == "null") {
        return false;
    }
    let union_only = |keyword: &str, object: &Map<String, Value>| {
        object.get(keyword).is_some_and(Value::is_array)
            && object
                .keys()
                .all(|key| key == keyword || is_annotation(key))
    };
    if union_only("oneOf", object) {
        rename(object, "oneOf", "anyOf");
    }
    if union_only("anyOf", object) {
        let null = null_schema(object);
        if let Some(Value::Array(alternatives)) = object.get_mut("anyOf") {
            alternatives.push(null);
        }
        return true;
    }
    let mut inner = take_assertions(object);
    if let Some(origin) = object.get(ORIGIN) {
        inner.insert(ORIGIN.to_owned(), origin.clone());
    }
    let null = null_schema(object);
    object.insert(
        "anyOf".to_owned(),
        Value::Array(vec![Value::Object(inner), null]),
    );
    true
}

/// A tuple (`prefixItems`) as an array of any of its item types, `minItems`/`maxItems` as
/// they were (`maxItems` the tuple's length when nothing else may follow); the order goes
/// into the description.
pub(super) fn tuple_to_items(
    ctx: &mut Ctx<'_>,
    object: &mut Map<String, Value>,
    label: &super::Label,
) {
    let Some(Value::Array(prefix)) = object.get("prefixItems").cloned() else {
        return;
    };
    let length = prefix.len();
    let rest = object.shift_remove("items");
    let closed = match &rest {
        None => false,
        Some(Value::Bool(false)) => true,
        Some(Value::Object(rest)) => is_never(rest),
        Some(_) => false,
    };
    let open_rest = match rest {
        Some(Value::Object(rest)) if !closed => Some(Value::Object(rest)),
        _ => None,
    };
    let mut alternatives: Vec<Value> = Vec::new();
    let mut seen: Vec<Value> = Vec::new();
    for item in prefix.into_iter().chain(open_rest) {
        let plain = shown(&item);
        if !seen.contains(&plain) {
            seen.push(plain);
            alternatives.push(item);
        }
    }
    ctx.move_keyword(object, "prefixItems", label);
    if closed && object.get("maxItems").is_none() {
        object.insert("maxItems".to_owned(), Value::from(length));
    }
    let items = match alternatives.len() {
        0 => Value::Object(Map::new()),
        1 => alternatives.pop().unwrap_or_default(),
        _ => {
            let mut union = Map::new();
            union.insert("anyOf".to_owned(), Value::Array(alternatives));
            if let Some(origin) = object.get(ORIGIN) {
                union.insert(ORIGIN.to_owned(), origin.clone());
            }
            Value::Object(union)
        }
    };
    object.insert("items".to_owned(), items);
}

/// Whether `object` is `{"not":{}}`: nothing is valid.
fn is_never(object: &Map<String, Value>) -> bool {
    let keys: Vec<&String> = object.keys().filter(|key| !is_hidden(key)).collect();
    keys.len() == 1
        && object
            .get("not")
            .and_then(Value::as_object)
            .is_some_and(|not| not.keys().all(|key| is_hidden(key)))
}

/// The error for an array that says nothing about its items, which OpenAI and Gemini's
/// `parameters` cannot express.
pub(super) fn refuse_untyped_items(
    ctx: &Ctx<'_>,
    object: &Map<String, Value>,
) -> Result<(), Failure> {
    if types(object) != ["array"] || object.contains_key("items") {
        return Ok(());
    }
    Err(ctx.error(
        "items",
        own_pointer(object),
        format!(
            "is missing: the array's items may be anything, which {} cannot express",
            ctx.target
        ),
        "give the items a concrete type (a Vec of a struct or an enum)",
    ))
}

/// The error for a schema that says nothing about its value (`{}`), which a strict target
/// cannot express.
pub(super) fn refuse_any(ctx: &Ctx<'_>, object: &Map<String, Value>) -> Result<(), Failure> {
    let says = ["type", "anyOf", "oneOf", "allOf", "$ref", "enum", "const"]
        .iter()
        .any(|keyword| object.contains_key(*keyword));
    if says {
        return Ok(());
    }
    Err(ctx.error(
        "type",
        own_pointer(object),
        format!(
            "is missing: the value may be anything, which {} cannot express",
            ctx.target
        ),
        "give the value a concrete type (a struct, an enum, a string holding JSON)",
    ))
}

/// A `type` array of several types as an `anyOf` of one type each (annotations outside),
/// each alternative with the keywords of its own type and the type-independent ones: JSON
/// Schema applies a type's keywords only to values of that type, so nothing changes.
pub(super) fn split_types(object: &mut Map<String, Value>) {
    let Some(Value::Array(listed)) = object.get("type") else {
        return;
    };
    if listed.len() < 2 {
        if let Some(one) = listed.first().cloned() {
            object.insert("type".to_owned(), one);
        }
        return;
    }
    let listed: Vec<String> = listed
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    let entries = std::mem::take(object);
    let mut shared = Map::new();
    for (key, value) in entries {
        // Gemini's `nullable` says something of the whole union.
        if is_annotation(&key) || key == "nullable" {
            object.insert(key, value);
        } else if key != "type" {
            shared.insert(key, value);
        }
    }
    let alternatives = listed
        .iter()
        .map(|ty| {
            let mut alternative = Map::new();
            alternative.insert("type".to_owned(), Value::String(ty.clone()));
            for (key, value) in &shared {
                if applies(ty, key) {
                    alternative.insert(key.clone(), value.clone());
                }
            }
            if let Some(origin) = object.get(ORIGIN) {
                alternative.insert(ORIGIN.to_owned(), origin.clone());
            }
            Value::Object(alternative)
        })
        .collect();
    // An `anyOf` beside the types went into each alternative with the other keywords.
    object.insert("anyOf".to_owned(), Value::Array(alternatives));
}

/// Removes the keywords that apply to none of `object`'s types (`properties` beside
/// `type: string`, which an inlined definition can leave): JSON Schema ignores them, a strict
/// target may not.
pub(super) fn drop_inapplicable(object: &mut Map<String, Value>) {
    let mut listed = types(object);
    if listed.is_empty() {
        // Untyped literals say their types themselves.
        let literals: Vec<&Value> = match (object.get("const"), object.get("enum")) {
            (Some(value), _) => vec![value],
            (None, Some(Value::Array(values))) => values.iter().collect(),
            _ => Vec::new(),
        };
        listed = literals
            .into_iter()
            .map(|value| json_type(value).to_owned())
            .collect();
    }
    if listed.is_empty() {
        return;
    }
    object.retain(|key, _| is_hidden(key) || listed.iter().any(|ty| applies(ty, key)));
}

/// The JSON type of `value` (`integer` for a whole number).
pub(super) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if number.is_i64() || number.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether `keyword` applies to values of type `ty` (a type-independent one always does).
fn applies(ty: &str, keyword: &str) -> bool {
    const STRING: &[&str] = &[
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "contentEncoding",
    ];
    const NUMBER: &[&str] = &[
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "format",
    ];
    const ARRAY: &[&str] = &[
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
        "minContains",
        "maxContains",
        "unevaluatedItems",
    ];
    const OBJECT: &[&str] = &[
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "unevaluatedProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "dependentSchemas",
    ];
    let of = |list: &[&str]| list.contains(&keyword);
    let typed = of(STRING) || of(NUMBER) || of(ARRAY) || of(OBJECT);
    if !typed {
        return true;
    }
    match ty {
        "string" => of(STRING),
        "number" | "integer" => of(NUMBER),
        "array" => of(ARRAY),
        "object" => of(OBJECT),
        _ => false,
    }
}
