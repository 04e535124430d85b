//! Anthropic's `input_schema`, plain and strict.
//!
//! Plain ([`Target::Anthropic`](crate::providers::Target)): the internal form (JSON Schema
//! 2020-12), spelled so that Anthropic's own SDK helper (`transform_schema`, which every
//! schema may meet on its way to strict use) can read it, with the same meaning: a `type`
//! array becomes an `anyOf` of one type each, and a schema that names no type, union,
//! reference or literal (`{}`, `{"not": ...}`) gets an `anyOf` of every type beside what it
//! says.
//!
//! Strict ([`Target::AnthropicStrict`](crate::providers::Target)): compositions merged
//! ([`compose`]; a `$ref` keeps its description), recursion refused; every
//! object closed; kept are `type`, `enum`/`const` of primitives, `anyOf` (`oneOf` becomes it),
//! local `$ref`/`$defs`, `description`, `properties`, `required`, `items`, the formats
//! Anthropic knows and `minItems` of 0 or 1; every other constraint moves into the
//! description. A map and a value of any type are errors.

use serde_json::{Map, Value};

use super::Failure;
use super::compose::{self, RefSiblings};
use super::strict::{self, Optional};
use super::walk::{Label, Slot, is_hidden, rename, walk};
use super::{Ctx, normal};

pub(super) fn lower(mut schema: Value, ctx: &mut Ctx<'_>) -> Result<Value, Failure> {
    super::json_root(ctx, &mut schema)?;
    walk::<Failure>(&mut schema, None, &Label::root(), &mut |object, slot, _| {
        readable(object, slot);
        Ok(())
    })?;
    Ok(schema)
}

/// Whether `object` names what it accepts the way `transform_schema` needs: a type, a union,
/// a reference or literals.
fn names_its_values(object: &Map<String, Value>) -> bool {
    let primitive = |value: &Value| !value.is_array() && !value.is_object();
    object.get("type").is_some_and(Value::is_string)
        || ["anyOf", "oneOf", "allOf", "$ref"]
            .iter()
            .any(|keyword| object.contains_key(*keyword))
        || object
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|values| !values.is_empty() && values.iter().all(primitive))
        || object.get("const").is_some_and(primitive)
}

fn readable(object: &mut Map<String, Value>, slot: Option<&Slot>) {
    strict::split_types(object);
    // The places `transform_schema` reads a schema from.
    let read = matches!(
        slot,
        None | Some(Slot::Property(_) | Slot::Items | Slot::Alternative(..) | Slot::Definition(..))
    );
    if read && !names_its_values(object) {
        let every_type = ["string", "number", "boolean", "object", "array", "null"]
            .iter()
            .map(|ty| serde_json::json!({ "type": ty }))
            .collect();
        object.insert("anyOf".to_owned(), Value::Array(every_type));
    }
}

/// The keywords Anthropic's strict tool use enforces (besides those checked one by one).
const KEPT: &[&str] = &[
    "type",
    "anyOf",
    "$ref",
    "$defs",
    "description",
    "properties",
    "required",
    "items",
    "additionalProperties",
];

/// The string formats Anthropic's strict tool use knows.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Constraints Anthropic's strict tool use does not enforce, said in the description.
const MOVED: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "default",
    "pattern",
    "format",
    "enum",
    "const",
    "propertyNames",
    "contains",
    "minContains",
    "maxContains",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedItems",
    "additionalItems",
];

pub(super) fn lower_strict(mut schema: Value, ctx: &mut Ctx<'_>) -> Result<Value, Failure> {
    compose::flatten(ctx, &mut schema, RefSiblings::Keep)?;
    super::strict_root(ctx, &mut schema)?;
    compose::refuse_recursion(
        ctx,
        &schema,
        (
            "refers back to a type that contains it; Anthropic's strict tool use refuses \
             recursive schemas",
            "offer the tool without `strict` (Target::Anthropic), or bound the depth with \
             distinct types",
        ),
    )?;
    walk(
        &mut schema,
        None,
        &Label::root(),
        &mut |object, _, label| strict_node(ctx, object, label),
    )?;
    compose::prune_definitions(&mut schema);
    Ok(schema)
}

fn strict_node(
    ctx: &mut Ctx<'_>,
    object: &mut Map<String, Value>,
    label: &Label,
) -> Result<(), Failure> {
    rename(object, "oneOf", "anyOf");
    normal::normalize_null(object);
    strict::split_types(object);
    strict::drop_inapplicable(object);
    strict::tuple_to_items(ctx, object, label);
    if strict::is_object_schema(object) {
        strict::close(ctx, object, Optional::Keep)?;
    }
    let primitive = |value: &Value| !value.is_array() && !value.is_object();
    let keys: Vec<String> = object
        .keys()
        .filter(|key| !is_hidden(key))
        .cloned()
        .collect();
    for key in keys {
        let Some(value) = object.get(&key) else {
            continue;
        };
        let kept = match key.as_str() {
            "enum" => value
                .as_array()
                .is_some_and(|values| !values.is_empty() && values.iter().all(primitive)),
            "const" => primitive(value),
            "format" => {
                strict::is_string(object)
                    && value
                        .as_str()
                        .is_some_and(|format| FORMATS.contains(&format))
            }
            "minItems" => value.as_u64().is_some_and(|n| n <= 1),
            key => KEPT.contains(&key),
        };
        if kept {
            continue;
        }
        if MOVED.contains(&key.as_str()) {
            ctx.move_keyword(object, &key, label);
        } else {
            object.shift_remove(&key);
        }
    }
    strict::refuse_any(ctx, object)
}
