//! The canonical JSON Schema of a tool's parameters (DESIGN.md decision 5).
//!
//! JSON Schema 2020-12 with an object root; every object the parameters define is closed
//! (`additionalProperties: false`); no `$schema`, no root `title`, no per-property titles (a
//! title is folded into the description, so nothing the author wrote is lost); no boolean
//! sub-schemas (`true` becomes `{}`, `false` becomes `{"not":{}}`), except
//! `additionalProperties: false`, which every provider accepts. Provider-specific rules are
//! applied by separate lowering steps, never here.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The canonical input schema of a parameters type `T`.
pub fn input_schema_for<T: JsonSchema>() -> Value {
    let mut schema = generate::<T>();
    canonicalize(&mut schema);
    close_root(&mut schema);
    schema
}

/// The canonical output schema of a result type `T` (not forced to an object root).
pub fn output_schema_for<T: JsonSchema>() -> Value {
    let mut schema = generate::<T>();
    canonicalize(&mut schema);
    schema
}

fn generate<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| settings.meta_schema = None)
        .into_generator();
    generator.into_root_schema_for::<T>().to_value()
}

/// Applies the canonical rules to any schema (also one a dynamic tool brings).
pub fn canonicalize(schema: &mut Value) {
    if let Value::Object(root) = schema {
        root.remove("$schema");
        root.remove("title");
    }
    walk_schema(schema, Position::Root);
}

/// Makes sure the root is an object schema with `properties`, closed unless it says otherwise.
pub fn close_root(schema: &mut Value) {
    let Value::Object(root) = schema else {
        *schema = empty_object_schema();
        return;
    };
    root.entry("type")
        .or_insert_with(|| Value::String("object".to_owned()));
    root.entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    root.entry("additionalProperties")
        .or_insert(Value::Bool(false));
}

/// `{"type":"object","properties":{},"additionalProperties":false}`: the schema of a tool
/// without parameters.
pub fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false})
}

#[derive(Clone, Copy, PartialEq)]
enum Position {
    Root,
    Nested,
    AdditionalProperties,
}

/// Keywords whose value is one schema.
const SCHEMA_KEYWORDS: &[&str] = &[
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
];
/// Keywords whose value is an array of schemas.
const SCHEMA_ARRAY_KEYWORDS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
/// Keywords whose value is a map of schemas.
const SCHEMA_MAP_KEYWORDS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

fn walk_schema(schema: &mut Value, position: Position) {
    let object = match schema {
        Value::Bool(true) => {
            *schema = Value::Object(Map::new());
            return;
        }
        Value::Bool(false) if position == Position::AdditionalProperties => return,
        Value::Bool(false) => {
            *schema = serde_json::json!({"not": {}});
            return;
        }
        Value::Object(object) => object,
        _ => return,
    };

    if position != Position::Root {
        fold_title_into_description(object);
    }

    let is_object_schema =
        object.get("type").is_some_and(|ty| ty == "object") || object.contains_key("properties");
    if is_object_schema && !object.contains_key("additionalProperties") {
        object.insert("additionalProperties".to_owned(), Value::Bool(false));
    }

    for (keyword, value) in object.iter_mut() {
        let keyword = keyword.as_str();
        if keyword == "additionalProperties" {
            walk_schema(value, Position::AdditionalProperties);
        } else if SCHEMA_KEYWORDS.contains(&keyword) {
            walk_schema(value, Position::Nested);
        } else if SCHEMA_ARRAY_KEYWORDS.contains(&keyword) {
            if let Value::Array(items) = value {
                items
                    .iter_mut()
                    .for_each(|item| walk_schema(item, Position::Nested));
            }
        } else if SCHEMA_MAP_KEYWORDS.contains(&keyword)
            && let Value::Object(entries) = value
        {
            entries
                .values_mut()
                .for_each(|entry| walk_schema(entry, Position::Nested));
        }
    }
}

fn fold_title_into_description(object: &mut Map<String, Value>) {
    let Some(Value::String(title)) = object.remove("title") else {
        return;
    };
    let description = match object.get("description") {
        Some(Value::String(description)) => format!("{title}\n\n{description}"),
        _ => title,
    };
    object.insert("description".to_owned(), Value::String(description));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn booleans_become_objects_and_objects_close() {
        let mut schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Args",
            "type": "object",
            "properties": {
                "anything": true,
                "never": false,
                "nested": {"type": "object", "properties": {"x": {"type": "integer", "title": "X"}}},
                "map": {"type": "object", "additionalProperties": {"type": "string"}},
                "open": {"type": "object", "additionalProperties": true},
                "tuple": {"type": "array", "prefixItems": [{"type": "integer"}], "items": false},
                "with_default": {"type": "object", "default": {"title": "kept"}}
            }
        });
        canonicalize(&mut schema);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "anything": {},
                    "never": {"not": {}},
                    "nested": {
                        "type": "object",
                        "properties": {"x": {"type": "integer", "description": "X"}},
                        "additionalProperties": false
                    },
                    "map": {"type": "object", "additionalProperties": {"type": "string"}},
                    "open": {"type": "object", "additionalProperties": {}},
                    "tuple": {"type": "array", "prefixItems": [{"type": "integer"}], "items": {"not": {}}},
                    "with_default": {"type": "object", "default": {"title": "kept"}, "additionalProperties": false}
                },
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn empty_struct_has_empty_properties() {
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code, reason = "schema only")]
        struct Nothing {}
        assert_eq!(input_schema_for::<Nothing>(), empty_object_schema());
    }
}
