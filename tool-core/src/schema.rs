//! The canonical JSON Schema of a tool's parameters (DESIGN.md decision 5).
//!
//! JSON Schema 2020-12 with an object root; no `$schema`, no root `title`, no per-property
//! titles (a title is folded into the description, so nothing the author wrote is lost); no
//! boolean sub-schemas (`true` becomes `{}`, `false` becomes `{"not":{}}`), except
//! `additionalProperties: false` and `unevaluatedProperties: false`.
//!
//! # Closed objects
//!
//! Every object is closed where its value is finally composed, not in each of its parts:
//!
//! - a plain object schema (`properties`, no composition) gets `additionalProperties: false`;
//! - a composed one (`$ref` or `anyOf`/`oneOf` beside properties of its own, `allOf`,
//!   `if`/`then`/`else`: an internally tagged variant, a flattened enum) gets
//!   `unevaluatedProperties: false` at the composition point, and its parts stay open: a part
//!   closed on its own would refuse the properties of its siblings;
//! - the alternatives of a plain union (`anyOf`/`oneOf` with nothing beside it: an enum, an
//!   `Option`) are whole values, each closed on its own;
//! - a definition used only whole is closed where it is defined; one that is also a part of
//!   some composition stays open, and each whole use of it is closed beside its `$ref`;
//! - an explicit free-form object (`{"type":"object"}` with no properties, a map of anything)
//!   stays open, spelled `additionalProperties: {}`;
//! - nothing changes under `not`, `if`, `contains` or `propertyNames`, where closing would
//!   change what the schema means.
//!
//! `unevaluatedProperties` is 2020-12's own way to close a composition; a provider that
//! accepts only `additionalProperties` (OpenAI strict, Anthropic strict, Gemini `parameters`)
//! gets a lowering that merges each composition into plain objects and closes those: the
//! canonical form says what is allowed, each lowering says it as its provider can. Provider
//! rules are applied by those separate lowering steps, never here.

use std::collections::HashSet;

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

/// The settings of every schema here: 2020-12, no `$schema`.
pub(crate) fn settings() -> SchemaSettings {
    SchemaSettings::draft2020_12().with(|settings| settings.meta_schema = None)
}

/// The canonical output schema of a result type `T` (not forced to an object root).
pub fn output_schema_for<T: JsonSchema>() -> Value {
    let mut schema = generate::<T>();
    canonicalize(&mut schema);
    schema
}

fn generate<T: JsonSchema>() -> Value {
    settings()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// Applies the canonical rules to any schema (also one a dynamic tool brings). Applying them
/// twice changes nothing.
pub fn canonicalize(schema: &mut Value) {
    if let Value::Object(root) = schema {
        root.remove("$schema");
        root.remove("title");
    }
    normalize(schema, Position::Root);
    close_objects(schema);
}

/// Makes sure the root is an object schema with `properties`. A root that says nothing about
/// its properties (`{"type":"object"}`) takes any object, and says so
/// (`additionalProperties: {}`); a composed root is left as composed.
pub fn close_root(schema: &mut Value) {
    let Value::Object(root) = schema else {
        *schema = empty_object_schema();
        return;
    };
    root.entry("type")
        .or_insert_with(|| Value::String("object".to_owned()));
    if shape(root) != Shape::Plain || root.contains_key("properties") {
        return;
    }
    if !OPEN_OR_CLOSED
        .iter()
        .any(|keyword| root.contains_key(*keyword))
        && !root.contains_key("patternProperties")
    {
        root.insert("additionalProperties".to_owned(), Value::Object(Map::new()));
    }
    root.insert("properties".to_owned(), Value::Object(Map::new()));
}

/// `{"type":"object","properties":{},"additionalProperties":false}`: the schema of a tool
/// without parameters.
pub fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false})
}

// ---------------------------------------------------------------------------------------------
// Booleans and titles

#[derive(Clone, Copy, PartialEq)]
enum Position {
    Root,
    Nested,
    /// `additionalProperties` or `unevaluatedProperties`, where `false` stays `false`.
    Closure,
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
/// Keywords that say whether an object takes properties it does not list.
const OPEN_OR_CLOSED: &[&str] = &["additionalProperties", "unevaluatedProperties"];

fn normalize(schema: &mut Value, position: Position) {
    let object = match schema {
        Value::Bool(true) => {
            *schema = Value::Object(Map::new());
            return;
        }
        Value::Bool(false) if position == Position::Closure => return,
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

    for (keyword, value) in object.iter_mut() {
        let keyword = keyword.as_str();
        if OPEN_OR_CLOSED.contains(&keyword) {
            normalize(value, Position::Closure);
        } else if SCHEMA_KEYWORDS.contains(&keyword) {
            normalize(value, Position::Nested);
        } else if SCHEMA_ARRAY_KEYWORDS.contains(&keyword) {
            if let Value::Array(items) = value {
                items
                    .iter_mut()
                    .for_each(|item| normalize(item, Position::Nested));
            }
        } else if SCHEMA_MAP_KEYWORDS.contains(&keyword)
            && let Value::Object(entries) = value
        {
            entries
                .values_mut()
                .for_each(|entry| normalize(entry, Position::Nested));
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

// ---------------------------------------------------------------------------------------------
// Closing objects where they are composed

/// What a schema does with the instance it validates.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Validates a whole value: the object may have nothing this schema does not evaluate.
    Whole,
    /// Validates a value together with sibling schemas: the closing happens where they meet.
    Part,
    /// Under `not`, `if`, `contains` or `propertyNames`: closing would change the meaning.
    Condition,
}

/// How a schema is built.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Shape {
    /// No composition: properties of its own, or none.
    Plain,
    /// Only `anyOf` or only `oneOf`: its alternatives are whole values.
    Union,
    /// Only a `$ref` (besides annotations): the target is the whole value.
    BareRef,
    /// Anything else: parts that meet here.
    Composed,
}

/// What a keyword's subschemas are to the schema that holds them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Child {
    /// A value inside the instance (a property, an item): a whole value of its own.
    Value,
    /// Applies to the same instance as its siblings.
    Composition,
    /// `anyOf` / `oneOf`: alternatives for the same instance.
    Union,
    /// Only tests the instance.
    Condition,
    /// A definition, reached through `$ref`.
    Definition,
}

/// The subschemas of `object`, each with what it is to `object` and its pointer segment.
fn children(object: &Map<String, Value>) -> impl Iterator<Item = (Child, String, &Value)> {
    object.iter().flat_map(|(keyword, value)| {
        let kind = match keyword.as_str() {
            "properties" | "patternProperties" => Some((Child::Value, Layout::Map)),
            "additionalProperties"
            | "unevaluatedProperties"
            | "items"
            | "unevaluatedItems"
            | "additionalItems" => Some((Child::Value, Layout::One)),
            "prefixItems" => Some((Child::Value, Layout::Array)),
            "not" | "if" | "contains" | "propertyNames" => Some((Child::Condition, Layout::One)),
            "allOf" => Some((Child::Composition, Layout::Array)),
            "then" | "else" => Some((Child::Composition, Layout::One)),
            "dependentSchemas" => Some((Child::Composition, Layout::Map)),
            "anyOf" | "oneOf" => Some((Child::Union, Layout::Array)),
            "$defs" | "definitions" => Some((Child::Definition, Layout::Map)),
            _ => None,
        };
        let escaped = escape(keyword);
        let entries: Vec<(Child, String, &Value)> = match (kind, value) {
            (Some((child, Layout::One)), value) => vec![(child, escaped, value)],
            (Some((child, Layout::Array)), Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(index, item)| (child, format!("{escaped}/{index}"), item))
                .collect(),
            (Some((child, Layout::Map)), Value::Object(entries)) => entries
                .iter()
                .map(|(name, entry)| (child, format!("{escaped}/{}", escape(name)), entry))
                .collect(),
            _ => Vec::new(),
        };
        entries
    })
}

#[derive(Clone, Copy)]
enum Layout {
    One,
    Array,
    Map,
}

/// The mutable subschemas of `object`, each with what it is to `object`, definitions left
/// out (they are closed on their own, by the role their uses give them).
fn children_mut(object: &mut Map<String, Value>) -> Vec<(Child, &mut Value)> {
    let mut out = Vec::new();
    for (keyword, value) in object.iter_mut() {
        let child = match keyword.as_str() {
            "properties"
            | "patternProperties"
            | "additionalProperties"
            | "unevaluatedProperties"
            | "items"
            | "unevaluatedItems"
            | "additionalItems"
            | "prefixItems" => Child::Value,
            "not" | "if" | "contains" | "propertyNames" => Child::Condition,
            "allOf" | "then" | "else" | "dependentSchemas" => Child::Composition,
            "anyOf" | "oneOf" => Child::Union,
            _ => continue,
        };
        match (keyword.as_str(), value) {
            ("properties" | "patternProperties" | "dependentSchemas", Value::Object(entries)) => {
                out.extend(entries.values_mut().map(|entry| (child, entry)));
            }
            ("properties" | "patternProperties" | "dependentSchemas", _) => {}
            (_, Value::Array(items)) => out.extend(items.iter_mut().map(|item| (child, item))),
            (_, value) => out.push((child, value)),
        }
    }
    out
}

fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

fn shape(object: &Map<String, Value>) -> Shape {
    let reference = object.contains_key("$ref");
    let unions = ["anyOf", "oneOf"]
        .iter()
        .filter(|keyword| object.contains_key(**keyword))
        .count();
    let parts = ["allOf", "if", "then", "else", "dependentSchemas"]
        .iter()
        .any(|keyword| object.contains_key(*keyword));
    let own = ["properties", "patternProperties"]
        .iter()
        .chain(OPEN_OR_CLOSED)
        .any(|keyword| object.contains_key(*keyword));
    match (reference, unions, parts, own) {
        (false, 0, false, _) => Shape::Plain,
        (false, 1, false, false) => Shape::Union,
        (true, 0, false, false) => Shape::BareRef,
        _ => Shape::Composed,
    }
}

/// The role of a child of a schema that has `role` and `shape`.
fn child_role(role: Role, shape: Shape, child: Child) -> Role {
    match (role, child) {
        (Role::Condition, _) | (_, Child::Condition) => Role::Condition,
        (_, Child::Value) => Role::Whole,
        (Role::Whole, Child::Union) if shape == Shape::Union => Role::Whole,
        _ => Role::Part,
    }
}

/// The pointer (without `#`) a local `$ref` names.
fn local_target(object: &Map<String, Value>) -> Option<&str> {
    object
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| reference.strip_prefix('#'))
}

/// What closing needs to know about the definitions.
struct Definitions {
    /// Every definition's pointer.
    all: Vec<String>,
    /// The definitions that are a part of some composition (or tested by a condition): they
    /// stay open, and their whole uses are closed beside the `$ref`.
    open: HashSet<String>,
    /// The definitions that can describe an object.
    objects: HashSet<String>,
}

fn close_objects(root: &mut Value) {
    let mut all = Vec::new();
    find_definitions(root, String::new(), &mut all);
    let objects = object_definitions(root, &all);
    let open = open_definitions(root, &all);
    let definitions = Definitions { all, open, objects };
    close(root, Role::Whole, &definitions);
    for pointer in &definitions.all {
        let role = if definitions.open.contains(pointer) {
            Role::Part
        } else {
            Role::Whole
        };
        if let Some(definition) = root.pointer_mut(pointer) {
            close(definition, role, &definitions);
        }
    }
}

fn find_definitions(schema: &Value, at: String, out: &mut Vec<String>) {
    let Value::Object(object) = schema else {
        return;
    };
    for (child, segment, value) in children(object) {
        let pointer = format!("{at}/{segment}");
        if child == Child::Definition {
            out.push(pointer.clone());
        }
        find_definitions(value, pointer, out);
    }
}

/// The definitions whose schema can describe an object (those a closing beside a `$ref` can
/// matter to).
fn object_definitions(root: &Value, all: &[String]) -> HashSet<String> {
    let mut objects = HashSet::new();
    loop {
        let found: Vec<String> = all
            .iter()
            .filter(|pointer| !objects.contains(*pointer))
            .filter(|pointer| {
                root.pointer(pointer)
                    .is_some_and(|schema| describes_objects(schema, all, &objects))
            })
            .cloned()
            .collect();
        if found.is_empty() {
            return objects;
        }
        objects.extend(found);
    }
}

/// Whether `schema` (with the definitions in `objects`) can describe an object's properties.
/// A reference to a schema outside the definitions counts as one.
fn describes_objects(schema: &Value, all: &[String], objects: &HashSet<String>) -> bool {
    match schema {
        Value::Object(object) => composes_objects(object, all, objects),
        _ => false,
    }
}

/// [`describes_objects`] for a schema object.
fn composes_objects(
    object: &Map<String, Value>,
    all: &[String],
    objects: &HashSet<String>,
) -> bool {
    let own = [
        "properties",
        "patternProperties",
        "additionalProperties",
        "unevaluatedProperties",
        "required",
    ]
    .iter()
    .any(|keyword| object.contains_key(*keyword));
    let referenced = match local_target(object) {
        Some(pointer) if all.iter().any(|known| known == pointer) => objects.contains(pointer),
        Some(_) | None => object.contains_key("$ref"),
    };
    typed_object(object)
        || own
        || referenced
        || children(object).any(|(child, _, value)| {
            matches!(child, Child::Composition | Child::Union)
                && describes_objects(value, all, objects)
        })
}

/// The definitions some use of which is not whole, found until no more are.
fn open_definitions(root: &Value, all: &[String]) -> HashSet<String> {
    let mut open = HashSet::new();
    loop {
        let mut parts = HashSet::new();
        find_part_uses(root, Role::Whole, all, &mut parts);
        for pointer in all {
            let role = if open.contains(pointer) {
                Role::Part
            } else {
                Role::Whole
            };
            if let Some(definition) = root.pointer(pointer) {
                find_part_uses(definition, role, all, &mut parts);
            }
        }
        let before = open.len();
        open.extend(parts);
        if open.len() == before {
            return open;
        }
    }
}

fn find_part_uses(schema: &Value, role: Role, all: &[String], parts: &mut HashSet<String>) {
    let Value::Object(object) = schema else {
        return;
    };
    let shape = shape(object);
    if let Some(pointer) = local_target(object)
        && all.iter().any(|known| known == pointer)
        && !(role == Role::Whole && shape == Shape::BareRef)
    {
        parts.insert(pointer.to_owned());
    }
    for (child, _, value) in children(object) {
        if child != Child::Definition {
            find_part_uses(value, child_role(role, shape, child), all, parts);
        }
    }
}

fn close(schema: &mut Value, role: Role, definitions: &Definitions) {
    let Value::Object(object) = schema else {
        return;
    };
    let shape = shape(object);
    match role {
        Role::Condition => {}
        Role::Part => {
            for keyword in OPEN_OR_CLOSED {
                if object.get(*keyword) == Some(&Value::Bool(false)) {
                    object.shift_remove(*keyword);
                }
            }
        }
        Role::Whole => close_whole(object, shape, definitions),
    }
    for (child, value) in children_mut(object) {
        close(value, child_role(role, shape, child), definitions);
    }
}

/// Whether the schema's `type` is or includes `object`.
fn typed_object(object: &Map<String, Value>) -> bool {
    match object.get("type") {
        Some(Value::String(ty)) => ty == "object",
        Some(Value::Array(types)) => types.iter().any(|ty| ty == "object"),
        _ => false,
    }
}

fn close_whole(object: &mut Map<String, Value>, shape: Shape, definitions: &Definitions) {
    let says = |object: &Map<String, Value>| {
        OPEN_OR_CLOSED
            .iter()
            .any(|keyword| object.contains_key(*keyword))
    };
    match shape {
        Shape::Union => {}
        Shape::Plain => {
            let listed =
                object.contains_key("properties") || object.contains_key("patternProperties");
            if (typed_object(object) || listed) && !says(object) {
                // An object that lists no properties is an explicit free-form one.
                let rest = if listed {
                    Value::Bool(false)
                } else {
                    Value::Object(Map::new())
                };
                object.insert("additionalProperties".to_owned(), rest);
            }
        }
        Shape::BareRef => {
            if let Some(pointer) = local_target(object)
                && definitions.open.contains(pointer)
                && definitions.objects.contains(pointer)
            {
                object.insert("unevaluatedProperties".to_owned(), Value::Bool(false));
            }
        }
        Shape::Composed => {
            // `additionalProperties` sees only the properties beside it, not those of the
            // parts: closed, it would refuse theirs.
            if object.get("additionalProperties") == Some(&Value::Bool(false)) {
                object.shift_remove("additionalProperties");
            }
            if !says(object) && composes_objects(object, &definitions.all, &definitions.objects) {
                object.insert("unevaluatedProperties".to_owned(), Value::Bool(false));
            }
        }
    }
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
                    "with_default": {"type": "object", "default": {"title": "kept"}, "additionalProperties": {}}
                },
                "additionalProperties": false
            })
        );
    }

    fn canonical(mut schema: Value) -> Value {
        canonicalize(&mut schema);
        let mut again = schema.clone();
        canonicalize(&mut again);
        assert_eq!(again, schema, "canonicalizing twice changes nothing");
        schema
    }

    #[test]
    fn a_composition_is_closed_where_it_is_composed_and_its_parts_stay_open() {
        let schema = canonical(json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "oneOf": [
                {"type": "object", "properties": {"kind": {"const": "a"}, "x": {"type": "integer"}}, "additionalProperties": false},
                {"$ref": "#/$defs/B", "properties": {"kind": {"const": "b"}}}
            ],
            "additionalProperties": false,
            "$defs": {"B": {"type": "object", "properties": {"y": {"type": "integer"}}, "additionalProperties": false}}
        }));
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "oneOf": [
                    {"type": "object", "properties": {"kind": {"const": "a"}, "x": {"type": "integer"}}},
                    {"$ref": "#/$defs/B", "properties": {"kind": {"const": "b"}}}
                ],
                "$defs": {"B": {"type": "object", "properties": {"y": {"type": "integer"}}}},
                "unevaluatedProperties": false
            })
        );
    }

    #[test]
    fn union_alternatives_are_whole_values() {
        let schema = canonical(json!({
            "anyOf": [
                {"type": "object", "properties": {"a": {"type": "integer"}}},
                {"$ref": "#/$defs/B"},
                {"type": "null"}
            ],
            "$defs": {"B": {"type": "object", "properties": {"b": {"type": "integer"}}}}
        }));
        assert_eq!(schema["anyOf"][0]["additionalProperties"], json!(false));
        assert_eq!(schema["anyOf"][1], json!({"$ref": "#/$defs/B"}));
        assert_eq!(schema["$defs"]["B"]["additionalProperties"], json!(false));
    }

    #[test]
    fn a_definition_used_whole_and_as_a_part_is_closed_at_its_whole_uses() {
        let schema = canonical(json!({
            "type": "object",
            "properties": {
                "whole": {"$ref": "#/$defs/B", "description": "used whole"},
                "part": {"allOf": [{"$ref": "#/$defs/B"}], "properties": {"c": {}}},
                "color": {"$ref": "#/$defs/Color"}
            },
            "$defs": {
                "B": {"type": "object", "properties": {"b": {"type": "integer"}}},
                "Color": {"type": "string", "enum": ["red"]}
            }
        }));
        assert_eq!(
            schema["properties"],
            json!({
                "whole": {"$ref": "#/$defs/B", "description": "used whole", "unevaluatedProperties": false},
                "part": {"allOf": [{"$ref": "#/$defs/B"}], "properties": {"c": {}}, "unevaluatedProperties": false},
                "color": {"$ref": "#/$defs/Color"}
            })
        );
        assert_eq!(schema["$defs"]["B"].get("additionalProperties"), None);
    }

    #[test]
    fn conditions_keep_their_meaning() {
        let input = json!({
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "not": {"type": "object", "properties": {"a": {"const": "x"}}},
            "if": {"properties": {"a": {"const": "y"}}},
            "then": {"required": ["a"]}
        });
        let schema = canonical(input.clone());
        assert_eq!(schema["not"], input["not"]);
        assert_eq!(schema["if"], input["if"]);
        assert_eq!(schema["unevaluatedProperties"], json!(false));
    }

    #[test]
    fn a_root_that_lists_no_properties_takes_any_object() {
        let mut schema = json!({"type": "object"});
        canonicalize(&mut schema);
        close_root(&mut schema);
        assert_eq!(
            schema,
            json!({"type": "object", "additionalProperties": {}, "properties": {}})
        );
        let mut schema = json!({"properties": {"a": {"type": "integer"}}});
        canonicalize(&mut schema);
        close_root(&mut schema);
        assert_eq!(
            schema,
            json!({"properties": {"a": {"type": "integer"}}, "additionalProperties": false, "type": "object"})
        );
    }

    #[test]
    fn empty_struct_has_empty_properties() {
        // What `#[tool]` makes of a function without parameters: a struct that refuses
        // unknown fields.
        #[derive(schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code, reason = "schema only")]
        struct Nothing {}
        assert_eq!(input_schema_for::<Nothing>(), empty_object_schema());
        // Without it, serde takes any object, and schemars says `{"type":"object"}`: an
        // object that lists no properties, which stays open.
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code, reason = "schema only")]
        struct Anything {}
        assert_eq!(
            input_schema_for::<Anything>(),
            json!({"type": "object", "additionalProperties": {}, "properties": {}})
        );
    }
}
