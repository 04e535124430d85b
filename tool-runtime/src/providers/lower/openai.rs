//! OpenAI's strict function calling (`strict: true`).
//!
//! Compositions merged ([`compose`], a `$ref` with anything beside it
//! inlined, as OpenAI's own `to_strict_json_schema` does); then, for every schema:
//!
//! - `oneOf` becomes `anyOf`; a tuple an array of any of its item types, its length kept;
//! - every object `additionalProperties: false`, with `properties`, every property in
//!   `required` (in the order of `properties`); a property that was optional becomes
//!   nullable and is listed in [`LoweredTool::nullable_optional`](crate::providers::LoweredTool);
//! - `default`, `minLength`, `maxLength`, formats other than OpenAI's, and the keywords
//!   OpenAI does not support (`not`, `if`/`then`/`else`, `dependent*`, `uniqueItems`,
//!   `contains`, `propertyNames`, `min/maxProperties`) move into the description;
//! - a map (`additionalProperties` a schema, `patternProperties`), a value of any type (`{}`)
//!   and a union at the root are errors;
//! - OpenAI's limits: at most 5,000 properties, 10 levels of nested objects, 1,000 enum
//!   values.
//!
//! The result is one `to_strict_json_schema` leaves unchanged.

use serde_json::{Map, Value};

use super::Failure;
use super::compose::{self, RefSiblings};
use super::strict::{self, Optional};
use super::walk::{Label, MADE_REQUIRED, Slot, children, is_hidden, reference, resolve, walk};
use super::{Ctx, normal};

/// The keywords OpenAI's strict mode enforces.
const KEPT: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "$ref",
    "$defs",
    "enum",
    "const",
    "description",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// The string formats OpenAI's strict mode knows.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Constraints OpenAI does not enforce, said in the description instead.
const MOVED: &[&str] = &[
    "default",
    "minLength",
    "maxLength",
    "format",
    "propertyNames",
    "minProperties",
    "maxProperties",
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
    "unevaluatedItems",
    "additionalItems",
];

const MAX_PROPERTIES: usize = 5_000;
const MAX_DEPTH: usize = 10;
const MAX_ENUM_VALUES: usize = 1_000;

pub(super) fn lower(mut schema: Value, ctx: &mut Ctx<'_>) -> Result<Value, Failure> {
    compose::flatten(ctx, &mut schema, RefSiblings::Inline)?;
    super::strict_root(ctx, &mut schema)?;
    walk(
        &mut schema,
        None,
        &Label::root(),
        &mut |object, _, label| node(ctx, object, label),
    )?;
    compose::prune_definitions(&mut schema);
    limits(ctx, &schema)?;
    let mut paths = Vec::new();
    made_required(
        &schema,
        &schema,
        &mut Vec::new(),
        &mut vec!["#".to_owned()],
        &mut paths,
        &mut MAX_VISITS.clone(),
    );
    ctx.nullable_optional = paths;
    Ok(schema)
}

fn node(ctx: &mut Ctx<'_>, object: &mut Map<String, Value>, label: &Label) -> Result<(), Failure> {
    super::walk::rename(object, "oneOf", "anyOf");
    normal::normalize_null(object);
    strict::split_types(object);
    strict::drop_inapplicable(object);
    strict::tuple_to_items(ctx, object, label);
    if strict::is_object_schema(object) {
        strict::close(ctx, object, Optional::RequireNullable)?;
    }
    let keys: Vec<String> = object
        .keys()
        .filter(|key| !is_hidden(key))
        .cloned()
        .collect();
    for key in keys {
        let supported_format = key == "format"
            && object
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|format| FORMATS.contains(&format))
            && strict::is_string(object);
        if KEPT.contains(&key.as_str()) || supported_format {
            continue;
        }
        if MOVED.contains(&key.as_str()) {
            ctx.move_keyword(object, &key, label);
        } else {
            // Annotations (`examples`, `deprecated`, ...) and unknown keywords: nothing the
            // canonical validation enforces.
            object.shift_remove(&key);
        }
    }
    strict::refuse_untyped_items(ctx, object)?;
    strict::refuse_any(ctx, object)
}

fn limits(ctx: &Ctx<'_>, schema: &Value) -> Result<(), Failure> {
    let mut properties = 0;
    let mut enum_values = 0;
    count(schema, &mut properties, &mut enum_values);
    if properties > MAX_PROPERTIES {
        return Err(ctx.error(
            "properties",
            "",
            format!("list {properties} properties in all; OpenAI allows {MAX_PROPERTIES}"),
            "split the tool, or group parameters into fewer fields",
        ));
    }
    if enum_values > MAX_ENUM_VALUES {
        return Err(ctx.error(
            "enum",
            "",
            format!("list {enum_values} values in all; OpenAI allows {MAX_ENUM_VALUES}"),
            "take a free string and check it in the tool",
        ));
    }
    let depth = depth(
        schema,
        schema,
        &mut vec!["#".to_owned()],
        &mut std::collections::HashMap::new(),
    );
    if depth > MAX_DEPTH {
        return Err(ctx.error(
            "properties",
            "",
            format!("nest objects {depth} levels deep; OpenAI allows {MAX_DEPTH}"),
            "flatten the parameters' structure",
        ));
    }
    Ok(())
}

fn count(schema: &Value, properties: &mut usize, enum_values: &mut usize) {
    let Value::Object(object) = schema else {
        return;
    };
    if let Some(Value::Object(listed)) = object.get("properties") {
        *properties += listed.len();
    }
    if let Some(Value::Array(values)) = object.get("enum") {
        *enum_values += values.len();
    }
    for (_, child) in children(object) {
        count(child, properties, enum_values);
    }
}

/// How many object schemas nest inside each other, through references (a recursive
/// reference counted once). Each definition's depth is found once: definitions that each name
/// another twice would otherwise be walked once per path, twice as many at every level.
fn depth(
    root: &Value,
    schema: &Value,
    stack: &mut Vec<String>,
    known: &mut std::collections::HashMap<String, usize>,
) -> usize {
    let Value::Object(object) = schema else {
        return 0;
    };
    let own = usize::from(strict::is_object_schema(object));
    let mut deepest = 0;
    if let Some(target) = reference(object)
        && !stack.iter().any(|on| on == target)
    {
        if let Some(&found) = known.get(target) {
            deepest = found;
        } else if let Some(definition) = resolve(root, target) {
            stack.push(target.to_owned());
            deepest = depth(root, &definition, stack, known);
            stack.pop();
            known.insert(target.to_owned(), deepest);
        }
    }
    for (slot, child) in children(object) {
        if !matches!(slot, Slot::Definition(..)) {
            deepest = deepest.max(depth(root, child, stack, known));
        }
    }
    own + deepest
}

/// How many schemas the search for those paths visits: definitions that each name another
/// twice give paths that double with every level.
const MAX_VISITS: usize = 10_000;

/// The paths (property names from the root, `[]` for an array's items) of the properties
/// made required and nullable. A recursive reference is followed once; past
/// [`MAX_VISITS`] schemas, no more paths are looked for.
fn made_required(
    root: &Value,
    schema: &Value,
    path: &mut Vec<String>,
    stack: &mut Vec<String>,
    out: &mut Vec<Vec<String>>,
    visits: &mut usize,
) {
    let Value::Object(object) = schema else {
        return;
    };
    let Some(left) = visits.checked_sub(1) else {
        return;
    };
    *visits = left;
    if let Some(target) = reference(object)
        && !stack.iter().any(|on| on == target)
        && let Some(definition) = resolve(root, target)
    {
        stack.push(target.to_owned());
        made_required(root, &definition, path, stack, out, visits);
        stack.pop();
    }
    if let Some(Value::Array(names)) = object.get(MADE_REQUIRED) {
        for name in names.iter().filter_map(Value::as_str) {
            let mut found = path.clone();
            found.push(name.to_owned());
            if !out.contains(&found) {
                out.push(found);
            }
        }
    }
    for (slot, child) in children(object) {
        let segment = match &slot {
            Slot::Property(name) => Some(name.clone()),
            Slot::Items | Slot::PrefixItem(_) => Some("[]".to_owned()),
            Slot::Alternative(..) => None,
            _ => continue,
        };
        match segment {
            Some(segment) => {
                path.push(segment);
                made_required(root, child, path, stack, out, visits);
                path.pop();
            }
            None => made_required(root, child, path, stack, out, visits),
        }
    }
}
