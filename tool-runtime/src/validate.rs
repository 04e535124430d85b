//! What the schema declares, the runtime enforces: checking a call's arguments against its
//! tool's canonical input schema, and the one shape of an `invalid_arguments` error.
//!
//! A `#[tool]` parses its arguments with serde. Where serde alone enforces everything the
//! canonical schema says (types, required fields and the closed root: a flat tool), parsing is
//! the check. Where the schema says more (bounds, lengths, patterns, unique items, closed
//! nested objects, compositions), the call is also validated against the schema by a compiled
//! validator. Which of the two a tool needs is decided once, on its first call, and kept with
//! its spec. A dynamic tool validates its arguments itself, with the same validator and the
//! same errors.
//!
//! # The error
//!
//! One shape for every tool: the message is `` `path`: what is wrong `` (no path for the
//! arguments as a whole; for a missing or unknown field, the path of the object it belongs
//! in), several problems joined by `; `. `details.field` is the dotted path of the field the
//! first problem is about (the wrong value, the missing field, the unknown field), and
//! `details.schema` is that field's schema (for an unknown field, which has none, the schema of
//! the object it is in; at the root, the whole schema). With several problems,
//! `details.errors` lists each one's `field` and `message`. A message the validator's check
//! writes never repeats the value the model sent (it may be a secret): it says what kind of
//! value came and what was expected.

use std::any::Any;
use std::collections::HashMap;

use jsonschema::Validator;
use jsonschema::error::{ValidationError, ValidationErrorKind};
use jsonschema::paths::{Location, LocationSegment};
use serde_json::{Map, Value};
use tool_core::{ErrorKind, ToolError, ToolSpec, WrittenNumber, integer_of};

use crate::arguments::{ANNOTATIONS, CallArguments, ref_target as local_target, resolve};

/// How the runtime checks a tool's arguments beyond what the tool's own `prepare` checks.
/// Kept in the tool's spec ([`ToolSpec::derived`]); a tool whose `prepare` checks everything
/// its schema says (serde is exact for the schema, or the tool validates its arguments itself,
/// as a dynamic tool does) keeps `None` there.
pub(crate) enum Check {
    /// The validator of the tool's canonical input schema.
    Schema(Validator),
    /// The schema does not compile: no call can be checked, so none runs.
    Broken(String),
}

impl Check {
    fn for_schema(schema: &Value) -> Option<Box<dyn Any + Send + Sync>> {
        if serde_is_exact(schema) {
            return None;
        }
        Some(Box::new(match compile(schema) {
            Ok(validator) => Check::Schema(validator),
            Err(reason) => Check::Broken(reason),
        }))
    }
}

/// Compiles the validator of a canonical schema (JSON Schema 2020-12; `format` is an
/// annotation, as the draft says).
pub(crate) fn compile(schema: &Value) -> Result<Validator, String> {
    jsonschema::draft202012::new(schema).map_err(|error| error.to_string())
}

/// Marks a spec whose tool validates its arguments itself.
pub(crate) fn checked_by_the_tool(spec: &ToolSpec) {
    // A spec is new when its tool is built: nothing can be there yet.
    let _ = tool_core::__runtime::derived(spec).set(None);
}

/// Decides, once, how a tool's arguments are checked, compiling its schema's validator when
/// serde alone is not exact for it; the reason when the schema cannot be compiled.
pub(crate) fn prepare_check(spec: &ToolSpec) -> Result<(), String> {
    let check =
        tool_core::__runtime::derived(spec).get_or_init(|| Check::for_schema(spec.input_schema()));
    match check
        .as_ref()
        .and_then(|check| check.downcast_ref::<Check>())
    {
        Some(Check::Broken(reason)) => Err(reason.clone()),
        _ => Ok(()),
    }
}

/// Checks the arguments of a call its tool has prepared (parsed) against the tool's schema,
/// when parsing does not check all the schema says. For a flat tool: one look at its spec.
#[inline]
pub(crate) fn check_prepared(
    spec: &ToolSpec,
    arguments: &CallArguments<'_>,
) -> Result<(), ToolError> {
    match tool_core::__runtime::derived(spec).get_or_init(|| Check::for_schema(spec.input_schema()))
    {
        None => Ok(()),
        Some(check) => check_against_schema(check.as_ref(), spec.input_schema(), arguments),
    }
}

#[inline(never)]
fn check_against_schema(
    check: &(dyn Any + Send + Sync),
    schema: &Value,
    arguments: &CallArguments<'_>,
) -> Result<(), ToolError> {
    let validator = match check.downcast_ref::<Check>() {
        Some(Check::Schema(validator)) => validator,
        Some(Check::Broken(reason)) => {
            return Err(ToolError::new(
                ErrorKind::Internal,
                format!("the tool's input schema cannot be checked: {reason}"),
            ));
        }
        // Only this module fills the slot.
        None => return Ok(()),
    };
    match arguments.value() {
        // The tool parsed it: it is JSON.
        Value::Null => Ok(()),
        // The numbers as the tool read them: an integer written as a float is that integer,
        // exactly (not the f64 it rounds to).
        value => validate(validator, schema, value),
    }
}

/// Whether checking a call of `spec` reads its arguments as a value (its schema says more than
/// serde checks).
pub(crate) fn reads_the_value(spec: &ToolSpec) -> bool {
    tool_core::__runtime::derived(spec)
        .get_or_init(|| Check::for_schema(spec.input_schema()))
        .is_some()
}

// ---------------------------------------------------------------------------------------------
// Whether serde alone is exact

/// Whether parsing the arguments with serde checks everything the canonical schema of a
/// `#[tool]` says: an object root closed with `additionalProperties: false` (serde's
/// `deny_unknown_fields`), each property of a type serde checks exactly by itself. Anything
/// else (bounds of its own, lengths, patterns, unique items, nested structs, which serde
/// leaves open, compositions) is not.
fn serde_is_exact(schema: &Value) -> bool {
    let Some(root) = schema.as_object() else {
        return false;
    };
    root.get("type").and_then(Value::as_str) == Some("object")
        && root.get("additionalProperties") == Some(&Value::Bool(false))
        && root.keys().all(|keyword| {
            matches!(
                keyword.as_str(),
                "type"
                    | "properties"
                    | "required"
                    | "additionalProperties"
                    | "description"
                    | "$defs"
            )
        })
        && root
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|properties| {
                properties
                    .values()
                    .all(|property| serde_checks(property, schema, 0))
            })
}

/// Whether serde checks exactly what `schema` says, for the type schemars describes so.
fn serde_checks(schema: &Value, root: &Value, depth: usize) -> bool {
    let Some(object) = schema.as_object() else {
        return false;
    };
    if depth > 8 {
        return false;
    }
    let only = |allowed: &[&str]| {
        object.keys().all(|keyword| {
            allowed.contains(&keyword.as_str()) || ANNOTATIONS.contains(&keyword.as_str())
        })
    };
    if let Some(reference) = object.get("$ref") {
        let target = reference
            .as_str()
            .and_then(|reference| reference.strip_prefix('#'))
            .and_then(|pointer| root.pointer(pointer));
        return only(&["$ref"])
            && target.is_some_and(|target| serde_checks(target, root, depth + 1));
    }
    for union in ["anyOf", "oneOf"] {
        if let Some(alternatives) = object.get(union) {
            let Some(alternatives) = alternatives.as_array() else {
                return false;
            };
            // A unit enum with documented variants: one string constant each.
            let unit_variants = alternatives.iter().all(is_string_constant);
            // An `Option`: the value or null.
            let option = alternatives.len() == 2
                && alternatives
                    .iter()
                    .any(|alternative| alternative == &serde_json::json!({"type": "null"}))
                && alternatives.iter().all(|alternative| {
                    alternative == &serde_json::json!({"type": "null"})
                        || serde_checks(alternative, root, depth + 1)
                });
            return only(&[union]) && (unit_variants || option);
        }
    }
    if !only(&[
        "type",
        "format",
        "minimum",
        "maximum",
        "enum",
        "items",
        "additionalProperties",
    ]) {
        return false;
    }
    if object.is_empty()
        || object
            .keys()
            .all(|keyword| ANNOTATIONS.contains(&keyword.as_str()))
    {
        // Any value: `serde_json::Value`.
        return true;
    }
    let types: Vec<&str> = match object.get("type") {
        Some(Value::String(ty)) => vec![ty.as_str()],
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).collect(),
        _ => return false,
    };
    let bounds_are_the_formats = || integer_bounds_are_the_formats(object);
    types.iter().all(|ty| match *ty {
        "null" | "boolean" => true,
        "string" => object.get("enum").is_none_or(|values| {
            values
                .as_array()
                .is_some_and(|values| values.iter().all(Value::is_string))
        }),
        "integer" => bounds_are_the_formats(),
        "number" => {
            matches!(
                object.get("format").and_then(Value::as_str),
                Some("double" | "float")
            ) && !object.contains_key("minimum")
                && !object.contains_key("maximum")
        }
        "array" => object
            .get("items")
            .is_some_and(|items| serde_checks(items, root, depth + 1)),
        "object" => object
            .get("additionalProperties")
            .is_some_and(|values| values.is_object() && serde_checks(values, root, depth + 1)),
        _ => false,
    }) && (object.get("enum").is_none() || types == ["string"])
}

fn is_string_constant(schema: &Value) -> bool {
    let Some(object) = schema.as_object() else {
        return false;
    };
    let constant = object.get("const").is_some_and(Value::is_string)
        || object
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|values| values.iter().all(Value::is_string));
    constant
        && object.keys().all(|keyword| {
            matches!(keyword.as_str(), "type" | "const" | "enum")
                || ANNOTATIONS.contains(&keyword.as_str())
        })
        && object.get("type").is_none_or(|ty| ty == "string")
}

/// Whether an integer schema's bounds are those of its Rust type (its `format`), which serde
/// checks when it parses that type.
fn integer_bounds_are_the_formats(object: &Map<String, Value>) -> bool {
    let (min, max): (Option<i128>, Option<i128>) =
        match object.get("format").and_then(Value::as_str) {
            Some("int8") => (Some(i8::MIN.into()), Some(i8::MAX.into())),
            Some("int16") => (Some(i16::MIN.into()), Some(i16::MAX.into())),
            Some("int32") => (Some(i32::MIN.into()), Some(i32::MAX.into())),
            Some("int64" | "int") => (None, None),
            Some("uint8") => (Some(0), Some(u8::MAX.into())),
            Some("uint16") => (Some(0), Some(u16::MAX.into())),
            Some("uint32" | "uint64" | "uint") => (Some(0), None),
            _ => return false,
        };
    let bound = |keyword: &str| {
        object.get(keyword).map(|value| {
            value
                .as_i64()
                .map(i128::from)
                .or_else(|| value.as_u64().map(i128::from))
        })
    };
    let matches = |keyword: &str, expected: Option<i128>| match bound(keyword) {
        None => true,
        Some(found) => found.is_some() && found == expected,
    };
    matches("minimum", min) && matches("maximum", max)
}

// ---------------------------------------------------------------------------------------------
// Validating, and the error

/// One thing wrong with the arguments.
struct Problem {
    /// Where the message says it is: the value's path, or for a missing or unknown field the
    /// object's.
    at: String,
    /// The field it is about.
    field: String,
    /// What is wrong, without the value.
    message: String,
    /// An unknown field found by `unevaluatedProperties`, which also names the fields of a
    /// part that failed: left out when another problem is about that field.
    unevaluated: bool,
}

/// Validates `value` against `schema`: every problem, in one `invalid_arguments` error.
pub(crate) fn validate(
    validator: &Validator,
    schema: &Value,
    value: &Value,
) -> Result<(), ToolError> {
    if validator.is_valid(value) {
        return Ok(());
    }
    let mut problems = Vec::new();
    for error in validator.iter_errors(value) {
        describe(&error, schema, &mut problems);
    }
    let others: Vec<String> = problems
        .iter()
        .filter(|problem| !problem.unevaluated)
        .map(|problem| problem.field.clone())
        .collect();
    problems.retain(|problem| {
        !problem.unevaluated
            || !others.iter().any(|other| {
                other == &problem.field
                    || other
                        .strip_prefix(problem.field.as_str())
                        .is_some_and(|rest| rest.starts_with(['.', '[']))
            })
    });
    if problems.is_empty() {
        // The validator's own words, without the value.
        let message = validator
            .iter_errors(value)
            .map(|error| error.masked().to_string())
            .collect::<Vec<_>>()
            .join("; ");
        return Err(ToolError::invalid_arguments(message));
    }
    Err(invalid_arguments(&problems, schema))
}

fn invalid_arguments(problems: &[Problem], schema: &Value) -> ToolError {
    let message = problems
        .iter()
        .map(|problem| {
            if problem.at.is_empty() {
                problem.message.clone()
            } else {
                format!("`{}`: {}", problem.at, problem.message)
            }
        })
        .collect::<Vec<_>>()
        .join("; ");
    let first = &problems[0];
    let mut details = Map::new();
    if !first.field.is_empty() {
        details.insert("field".to_owned(), Value::String(first.field.clone()));
    }
    details.insert("schema".to_owned(), fragment_for(schema, &first.field));
    if problems.len() > 1 {
        let errors = problems
            .iter()
            .map(
                |problem| serde_json::json!({ "field": problem.field, "message": problem.message }),
            )
            .collect();
        details.insert("errors".to_owned(), Value::Array(errors));
    }
    ToolError::invalid_arguments(message).with_details(Value::Object(details))
}

/// Adds, to an `invalid_arguments` error about one field that has none yet, that field's
/// schema: what the model needs to correct the call.
pub(crate) fn with_schema_fragment(error: ToolError, schema: &Value) -> ToolError {
    if error.kind() != &ErrorKind::InvalidArguments {
        return error;
    }
    let mut details = match error.details() {
        Some(Value::Object(details)) if details.contains_key("schema") => return error,
        Some(Value::Object(details)) => details.clone(),
        Some(_) => return error,
        None => Map::new(),
    };
    let field = details
        .get("field")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    details.insert("schema".to_owned(), fragment_for(schema, &field));
    error.with_details(Value::Object(details))
}

fn push(out: &mut Vec<Problem>, at: &str, field: String, message: String) {
    out.push(Problem {
        at: at.to_owned(),
        field,
        message,
        unevaluated: false,
    });
}

/// The problems one validation error stands for.
fn describe(error: &ValidationError<'_>, schema: &Value, out: &mut Vec<Problem>) {
    let at = dotted(error.instance_path());
    let keyword_at = error.schema_path().as_str();
    let node = parent_pointer(keyword_at).and_then(|pointer| schema.pointer(pointer));
    let instance = error.instance();
    let message = match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            let field = join(&at, name);
            push(out, &at, field, format!("missing field `{name}`"));
            return;
        }
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            let unevaluated = matches!(
                error.kind(),
                ValidationErrorKind::UnevaluatedProperties { .. }
            );
            let expected = node
                .map(|node| property_names(node, schema, instance.as_ref(), unevaluated))
                .unwrap_or_default();
            for name in unexpected {
                out.push(Problem {
                    at: at.clone(),
                    field: join(&at, name),
                    message: unknown_field(name, &expected),
                    unevaluated,
                });
            }
            return;
        }
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            describe_union(error, context, schema, out);
            return;
        }
        ValidationErrorKind::Type { .. } => format!(
            "invalid type: {}, expected {}",
            found(instance.as_ref()),
            node.map_or_else(|| "another type".to_owned(), expected_type)
        ),
        ValidationErrorKind::Minimum { limit } => {
            format!("invalid value, expected at least {limit}")
        }
        ValidationErrorKind::Maximum { limit } => {
            format!("invalid value, expected at most {limit}")
        }
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            format!("invalid value, expected more than {limit}")
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            format!("invalid value, expected less than {limit}")
        }
        ValidationErrorKind::MultipleOf { multiple_of } => {
            format!("invalid value, expected a multiple of {multiple_of}")
        }
        ValidationErrorKind::MinLength { limit } => {
            format!(
                "invalid length, expected at least {}",
                count(*limit, "character")
            )
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!(
                "invalid length, expected at most {}",
                count(*limit, "character")
            )
        }
        ValidationErrorKind::MinItems { limit } => {
            format!(
                "invalid length, expected at least {}",
                count(*limit, "item")
            )
        }
        ValidationErrorKind::MaxItems { limit } => {
            format!("invalid length, expected at most {}", count(*limit, "item"))
        }
        ValidationErrorKind::MinProperties { limit } => {
            format!(
                "invalid length, expected at least {}",
                count(*limit, "field")
            )
        }
        ValidationErrorKind::MaxProperties { limit } => {
            format!(
                "invalid length, expected at most {}",
                count(*limit, "field")
            )
        }
        ValidationErrorKind::Pattern { pattern } => {
            format!("invalid value, expected a string matching `{pattern}`")
        }
        ValidationErrorKind::Format { format } => {
            format!("invalid value, expected a string in the format `{format}`")
        }
        ValidationErrorKind::UniqueItems => match first_repeat(instance.as_ref()) {
            Some((first, second)) => format!(
                "invalid value, expected unique items (items {first} and {second} are equal)"
            ),
            None => "invalid value, expected unique items".to_owned(),
        },
        ValidationErrorKind::Enum { options } => {
            let options: Vec<String> = options
                .as_array()
                .map(|options| options.iter().map(shown).collect())
                .unwrap_or_default();
            format!("invalid value, expected {}", one_of(&options))
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("invalid value, expected {}", shown(expected_value))
        }
        ValidationErrorKind::OneOfMultipleValid { .. } => {
            "invalid value, it matches more than one of the forms the schema allows".to_owned()
        }
        ValidationErrorKind::Not { .. } | ValidationErrorKind::FalseSchema => {
            "invalid value, the schema allows no such value here".to_owned()
        }
        _ => error.masked().to_string(),
    };
    push(out, &at, at.clone(), message);
}

/// The problems of a value no alternative of a union accepts: those of the alternative the
/// value was meant for, when that can be told (by a tag every alternative declares, or as the
/// one alternative that fails the least and not on the value's kind or tag).
fn describe_union(
    error: &ValidationError<'_>,
    context: &[Vec<ValidationError<'static>>],
    schema: &Value,
    out: &mut Vec<Problem>,
) {
    let at = dotted(error.instance_path());
    let alternatives: Vec<&Value> = schema
        .pointer(error.schema_path().as_str())
        .and_then(Value::as_array)
        .map(|alternatives| {
            alternatives
                .iter()
                .map(|alternative| resolve(schema, alternative))
                .collect()
        })
        .unwrap_or_default();
    let instance = error.instance();
    if let (Some(tag), Some(object)) = (tag_of(&alternatives, schema), instance.as_object()) {
        let Some(sent) = object.get(&tag) else {
            push(out, &at, join(&at, &tag), format!("missing field `{tag}`"));
            return;
        };
        let chosen = alternatives
            .iter()
            .position(|alternative| constants(alternative, schema).get(&tag) == Some(sent));
        match chosen.and_then(|index| context.get(index)) {
            Some(errors) => errors.iter().for_each(|error| describe(error, schema, out)),
            None => {
                let tags: Vec<String> = alternatives
                    .iter()
                    .filter_map(|alternative| constants(alternative, schema).get(&tag).map(shown))
                    .collect();
                let field = join(&at, &tag);
                push(
                    out,
                    &field,
                    field.clone(),
                    format!("invalid value, expected {}", one_of(&tags)),
                );
            }
        }
        return;
    }
    let wrong_kind = |errors: &Vec<ValidationError<'static>>| {
        errors.iter().any(|error| {
            matches!(
                error.kind(),
                ValidationErrorKind::Constant { .. } | ValidationErrorKind::Enum { .. }
            ) || (matches!(error.kind(), ValidationErrorKind::Type { .. })
                && dotted(error.instance_path()) == at)
        })
    };
    let candidates: Vec<&Vec<ValidationError<'static>>> = context
        .iter()
        .filter(|errors| !wrong_kind(errors))
        .collect();
    let fewest = candidates.iter().map(|errors| errors.len()).min();
    let best: Vec<&&Vec<ValidationError<'static>>> = candidates
        .iter()
        .filter(|errors| Some(errors.len()) == fewest)
        .collect();
    if let [errors] = best.as_slice() {
        errors.iter().for_each(|error| describe(error, schema, out));
        return;
    }
    push(
        out,
        &at,
        at.clone(),
        "invalid value, it matches none of the forms the schema allows".to_owned(),
    );
}

/// The property every alternative gives a constant to (an enum's tag), when there is one.
fn tag_of(alternatives: &[&Value], schema: &Value) -> Option<String> {
    let first = constants(alternatives.first()?, schema);
    first
        .keys()
        .find(|name| {
            alternatives
                .iter()
                .all(|alternative| constants(alternative, schema).contains_key(*name))
        })
        .cloned()
}

/// The properties an object schema fixes to one value (`const`, or an `enum` of one), its
/// parts' included.
fn constants(schema: &Value, root: &Value) -> Map<String, Value> {
    let mut found = Map::new();
    for part in parts(schema, root) {
        let Some(properties) = part.get("properties").and_then(Value::as_object) else {
            continue;
        };
        for (name, property) in properties {
            let property = resolve(root, property);
            let value = property.get("const").cloned().or_else(|| {
                property
                    .get("enum")
                    .and_then(Value::as_array)
                    .filter(|values| values.len() == 1)
                    .map(|values| values[0].clone())
            });
            if let Some(value) = value {
                found.insert(name.clone(), value);
            }
        }
    }
    found
}

/// A schema and the parts it is composed of (`$ref`, `allOf`), resolved, in document order.
fn parts<'a>(schema: &'a Value, root: &'a Value) -> Vec<&'a Value> {
    let mut out = vec![schema];
    let mut next = 0;
    while next < out.len() && out.len() <= 32 {
        let schema = out[next];
        next += 1;
        if let Some(target) = local_target(root, schema) {
            out.push(target);
        }
        if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
            out.extend(all.iter());
        }
    }
    out
}

/// The names of the properties an object schema takes: its own; with `through_parts`, also
/// those of its parts and of the alternatives whose constants the instance matches.
fn property_names(
    node: &Value,
    root: &Value,
    instance: &Value,
    through_parts: bool,
) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut add = |schema: &Value| {
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for name in properties.keys() {
                if !names.contains(name) {
                    names.push(name.clone());
                }
            }
        }
    };
    if !through_parts {
        add(node);
        return names;
    }
    for part in parts(node, root) {
        add(part);
        for union in ["anyOf", "oneOf"] {
            let Some(alternatives) = part.get(union).and_then(Value::as_array) else {
                continue;
            };
            for alternative in alternatives {
                let alternative = resolve(root, alternative);
                let fits = constants(alternative, root)
                    .iter()
                    .all(|(name, value)| instance.get(name) == Some(value));
                if fits {
                    parts(alternative, root).into_iter().for_each(&mut add);
                }
            }
        }
    }
    names
}

/// serde's words for an unknown field.
fn unknown_field(name: &str, expected: &[String]) -> String {
    if expected.is_empty() {
        format!("unknown field `{name}`, there are no fields")
    } else {
        let expected: Vec<String> = expected.iter().map(|name| format!("`{name}`")).collect();
        format!("unknown field `{name}`, expected {}", one_of(&expected))
    }
}

/// serde's list of what was expected: `` `a` ``, `` `a` or `b` ``,
/// `` one of `a`, `b`, `c` ``.
fn one_of(shown: &[String]) -> String {
    match shown {
        [] => "nothing".to_owned(),
        [one] => one.clone(),
        [first, second] => format!("{first} or {second}"),
        many => format!("one of {}", many.join(", ")),
    }
}

/// A value of the schema (never of the arguments), as a message shows it.
fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => format!("`{text}`"),
        other => format!("`{other}`"),
    }
}

fn count(limit: u64, noun: &str) -> String {
    if limit == 1 {
        format!("1 {noun}")
    } else {
        format!("{limit} {noun}s")
    }
}

/// What kind of value came, in serde's words, without the value.
fn found(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if number.is_f64() => "floating point",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// What a schema's `type` expects, in serde's words (a Rust integer type by its `format`).
fn expected_type(schema: &Value) -> String {
    let format = schema.get("format").and_then(Value::as_str);
    let one = |ty: &str| -> String {
        let rust = match (ty, format) {
            ("integer", Some("int8")) => "i8",
            ("integer", Some("int16")) => "i16",
            ("integer", Some("int32")) => "i32",
            ("integer", Some("int64")) => "i64",
            ("integer", Some("int")) => "isize",
            ("integer", Some("uint8")) => "u8",
            ("integer", Some("uint16")) => "u16",
            ("integer", Some("uint32")) => "u32",
            ("integer", Some("uint64")) => "u64",
            ("integer", Some("uint")) => "usize",
            ("number", Some("double")) => "f64",
            ("number", Some("float")) => "f32",
            ("integer", _) => "an integer",
            ("number", _) => "a number",
            ("string", _) => "a string",
            ("boolean", _) => "a boolean",
            ("array", _) => "an array",
            ("object", _) => "an object",
            ("null", _) => "null",
            (other, _) => other,
        };
        rust.to_owned()
    };
    match schema.get("type") {
        Some(Value::String(ty)) => one(ty),
        Some(Value::Array(types)) => {
            let types: Vec<String> = types.iter().filter_map(Value::as_str).map(one).collect();
            types.join(" or ")
        }
        _ => "another type".to_owned(),
    }
}

/// The first two equal items of an array.
fn first_repeat(value: &Value) -> Option<(usize, usize)> {
    let items = value.as_array()?;
    items.iter().enumerate().find_map(|(second, item)| {
        items[..second]
            .iter()
            .position(|earlier| earlier == item)
            .map(|first| (first, second))
    })
}

// ---------------------------------------------------------------------------------------------
// Paths and fragments

/// An instance location as a dotted path: `address.city`, `items[2].sku`.
fn dotted(location: &Location) -> String {
    let mut path = String::new();
    for segment in location.segments() {
        match segment {
            LocationSegment::Property(name) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&name);
            }
            LocationSegment::Index(index) => {
                path.push('[');
                path.push_str(&index.to_string());
                path.push(']');
            }
        }
    }
    path
}

fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}.{name}")
    }
}

/// The pointer of the schema a keyword's pointer is in.
fn parent_pointer(pointer: &str) -> Option<&str> {
    pointer.rsplit_once('/').map(|(parent, _)| parent)
}

/// The schema of the field at a dotted `path`, or of the nearest object around it that has
/// one (for an unknown field, the object it is in); the whole schema at the root.
fn fragment_for(schema: &Value, path: &str) -> Value {
    let mut path = path;
    loop {
        if path.is_empty() {
            return schema.clone();
        }
        if let Some(fragment) = fragment_at(schema, path) {
            return fragment;
        }
        path = match path.rfind(['.', '[']) {
            Some(end) => &path[..end],
            None => "",
        };
    }
}

/// The schema of the property at `path` (`filter.status`, `items[2].sku`), following local
/// `$ref`s and the parts and alternatives of compositions.
fn fragment_at(schema: &Value, path: &str) -> Option<Value> {
    let mut current = schema;
    for segment in path.split('.') {
        let mut pieces = segment.split('[');
        let name = pieces.next().unwrap_or(segment);
        if !name.is_empty() {
            current = property(schema, current, name)?;
        }
        for index in pieces {
            let index: usize = index.trim_end_matches(']').parse().ok()?;
            let array = resolve(schema, current);
            current = array
                .get("prefixItems")
                .and_then(|items| items.get(index))
                .or_else(|| array.get("items"))?;
        }
    }
    Some(resolve(schema, current).clone())
}

/// The schema of property `name` of the object schema `object`: its own, a part's or an
/// alternative's, or the schema of a map's values.
fn property<'a>(root: &'a Value, object: &'a Value, name: &str) -> Option<&'a Value> {
    let object = resolve(root, object);
    let mut stack = vec![object];
    let mut seen = 0;
    while let Some(schema) = stack.pop() {
        seen += 1;
        if seen > 64 {
            break;
        }
        let schema = resolve(root, schema);
        if let Some(found) = schema
            .get("properties")
            .and_then(|properties| properties.get(name))
        {
            return Some(found);
        }
        for keyword in ["oneOf", "anyOf", "allOf"] {
            if let Some(parts) = schema.get(keyword).and_then(Value::as_array) {
                stack.extend(parts.iter().rev());
            }
        }
        if let Some(target) = local_target(root, schema) {
            stack.push(target);
        }
    }
    object
        .get("additionalProperties")
        .filter(|values| values.is_object())
}

// ---------------------------------------------------------------------------------------------
// Integral floats, for dynamic tools

/// Turns each float with no fraction that sits where the schema says `integer` into that
/// integer (`3.0` becomes `3`), as JSON Schema reads it: the handler of a dynamic tool gets the
/// integer its schema promises, and the validator checks it. From JSON text (`text`, the text
/// `value` was parsed from) a number is read on its digits, not on the `f64` it rounds to:
/// where only an integer is allowed, a number that merely rounds to one (`1e-400`,
/// `0.99999999999999999`) is refused, and so is an integer beyond 64 bits. A float in a value
/// from code is an integer while it is exact (below 2^53); beyond, it is refused there too. A
/// float with a fraction is left to the validator, whose words it gets. Called before the
/// validator, which then checks the numbers the handler gets; a problem found here is the
/// error on its own.
pub(crate) fn integers_where_declared(
    schema: &Value,
    value: &mut Value,
    text: Option<&str>,
) -> Result<(), ToolError> {
    // Each later number of a repeated key replaces the earlier, as in the parsed value.
    let written: Option<HashMap<String, &str>> =
        text.map(|text| tool_core::inexact_numbers(text).into_iter().collect());
    match &written {
        // Every number of the text was an exact integer: there is no float.
        Some(written) if written.is_empty() => return Ok(()),
        None if !has_integral_float(value) => return Ok(()),
        _ => {}
    }
    let mut walk = Walk {
        root: schema,
        written: written.as_ref(),
        path: Vec::new(),
        problems: Vec::new(),
    };
    walk.integers_under(schema, value, 0);
    if walk.problems.is_empty() {
        Ok(())
    } else {
        Err(invalid_arguments(&walk.problems, schema))
    }
}

fn has_integral_float(value: &Value) -> bool {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Number(number)
                if number
                    .as_f64()
                    .is_some_and(|float| number.is_f64() && float.fract() == 0.0) =>
            {
                return true;
            }
            Value::Array(items) => stack.extend(items),
            Value::Object(entries) => stack.extend(entries.values()),
            _ => {}
        }
    }
    false
}

/// One step of the path to a value, to find its number as written and to name it.
enum Step {
    Key(String),
    Index(usize),
}

struct Walk<'a> {
    root: &'a Value,
    /// The numbers of the text serde_json does not read exactly, by JSON pointer.
    written: Option<&'a HashMap<String, &'a str>>,
    path: Vec<Step>,
    problems: Vec<Problem>,
}

impl Walk<'_> {
    fn integers_under(&mut self, schema: &Value, value: &mut Value, depth: usize) {
        if depth > 64 {
            return;
        }
        let root = self.root;
        let schemas = applicable(root, schema);
        match value {
            Value::Number(number) if number.is_f64() => {
                let integer_only = schemas.iter().any(|schema| match schema.get("type") {
                    Some(Value::String(ty)) => ty == "integer",
                    Some(Value::Array(types)) => {
                        types.iter().any(|ty| ty == "integer")
                            && !types.iter().any(|ty| ty == "number")
                    }
                    _ => false,
                });
                if !integer_only {
                    return;
                }
                // Refused only where no alternative takes any number.
                let refusable = !schemas.iter().any(|schema| match schema.get("type") {
                    Some(Value::String(ty)) => ty == "number",
                    Some(Value::Array(types)) => types.iter().any(|ty| ty == "number"),
                    _ => false,
                });
                let float = number.as_f64().unwrap_or_default();
                let literal = self
                    .written
                    .and_then(|written| written.get(&self.pointer()));
                match literal.map(|literal| WrittenNumber::read(literal)) {
                    Some(WrittenNumber::Integer(integer)) => *number = integer,
                    // A fraction its f64 shows is the validator's to refuse.
                    Some(WrittenNumber::Fraction) if refusable && float.fract() == 0.0 => {
                        self.problem("invalid value: the number written is not an integer, expected an integer");
                    }
                    Some(WrittenNumber::OutOfRange) if refusable => self.problem(
                        "invalid value: the integer written is out of range, expected an integer of at most 64 bits",
                    ),
                    Some(_) => {}
                    None => match integer_of(float) {
                        Some(integer) => *number = integer,
                        None if refusable && float.fract() == 0.0 => self.problem(
                            "invalid value: a float beyond 2^53, where a float no longer stands for one integer, expected an integer",
                        ),
                        None => {}
                    },
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter_mut().enumerate() {
                    self.path.push(Step::Index(index));
                    for schema in &schemas {
                        let item_schema = schema
                            .get("prefixItems")
                            .and_then(|prefix| prefix.get(index))
                            .or_else(|| schema.get("items"));
                        if let Some(item_schema) = item_schema {
                            self.integers_under(item_schema, item, depth + 1);
                        }
                    }
                    self.path.pop();
                }
            }
            Value::Object(entries) => {
                for (name, entry) in entries.iter_mut() {
                    self.path.push(Step::Key(name.clone()));
                    for schema in &schemas {
                        let entry_schema = schema
                            .get("properties")
                            .and_then(|properties| properties.get(name))
                            .or_else(|| schema.get("additionalProperties"));
                        if let Some(entry_schema) = entry_schema {
                            self.integers_under(entry_schema, entry, depth + 1);
                        }
                    }
                    self.path.pop();
                }
            }
            _ => {}
        }
    }

    /// The JSON pointer of the value at hand.
    fn pointer(&self) -> String {
        let mut pointer = String::new();
        for step in &self.path {
            pointer.push('/');
            match step {
                Step::Key(key) => pointer.push_str(&key.replace('~', "~0").replace('/', "~1")),
                Step::Index(index) => pointer.push_str(&index.to_string()),
            }
        }
        pointer
    }

    fn problem(&mut self, message: &str) {
        let mut field = String::new();
        for step in &self.path {
            match step {
                Step::Key(key) => {
                    if !field.is_empty() {
                        field.push('.');
                    }
                    field.push_str(key);
                }
                Step::Index(index) => {
                    field.push('[');
                    field.push_str(&index.to_string());
                    field.push(']');
                }
            }
        }
        // A value reached through several alternatives is one problem.
        if !self.problems.iter().any(|problem| problem.field == field) {
            let at = field.clone();
            push(&mut self.problems, &at, field, message.to_owned());
        }
    }
}

/// A schema with its parts and alternatives, resolved: every schema that may apply to the
/// same value.
fn applicable<'a>(root: &'a Value, schema: &'a Value) -> Vec<&'a Value> {
    let mut out = Vec::new();
    let mut stack = vec![schema];
    while let Some(schema) = stack.pop() {
        if out.len() > 64 {
            break;
        }
        out.push(schema);
        if let Some(target) = local_target(root, schema) {
            stack.push(target);
        }
        for keyword in ["allOf", "anyOf", "oneOf"] {
            if let Some(parts) = schema.get(keyword).and_then(Value::as_array) {
                stack.extend(parts);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fragments_follow_paths_refs_and_compositions() {
        let schema = json!({
            "type": "object",
            "properties": {
                "filter": {"$ref": "#/$defs/Filter"},
                "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
                "shape": {"oneOf": [{"properties": {"type": {"const": "a"}, "r": {"type": "integer"}}}]},
                "counts": {"type": "object", "additionalProperties": {"type": "integer"}}
            },
            "$defs": {
                "Filter": {"type": "object", "properties": {"status": {"enum": ["open", "closed"]}}},
                "Item": {"type": "object", "properties": {"sku": {"type": "string"}}}
            }
        });
        assert_eq!(
            fragment_at(&schema, "filter.status"),
            Some(json!({"enum": ["open", "closed"]}))
        );
        assert_eq!(
            fragment_at(&schema, "items[2].sku"),
            Some(json!({"type": "string"}))
        );
        assert_eq!(
            fragment_at(&schema, "shape.r"),
            Some(json!({"type": "integer"}))
        );
        assert_eq!(
            fragment_at(&schema, "counts.apples"),
            Some(json!({"type": "integer"}))
        );
        assert_eq!(fragment_at(&schema, "nope"), None);
        assert_eq!(
            fragment_for(&schema, "filter.nope"),
            json!({"type": "object", "properties": {"status": {"enum": ["open", "closed"]}}})
        );
        assert_eq!(fragment_for(&schema, "nope"), schema);
    }

    #[test]
    fn serde_is_exact_for_flat_tools_only() {
        let flat = json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "id": {"type": "string", "description": "The id."},
                "limit": {"type": ["integer", "null"], "format": "uint32", "minimum": 0},
                "small": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255},
                "ratio": {"type": "number", "format": "double"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "counts": {"type": "object", "additionalProperties": {"type": "integer", "format": "int64"}},
                "anything": {},
                "priority": {"$ref": "#/$defs/Priority"},
                "documented": {"oneOf": [{"type": "string", "const": "a", "description": "A."}, {"type": "string", "const": "b"}]},
                "maybe": {"anyOf": [{"$ref": "#/$defs/Priority"}, {"type": "null"}]}
            },
            "required": ["id"],
            "$defs": {"Priority": {"type": "string", "enum": ["low", "high"]}}
        });
        assert!(serde_is_exact(&flat));
        for (name, property) in [
            (
                "bounded",
                json!({"type": "integer", "format": "uint32", "minimum": 1}),
            ),
            ("long", json!({"type": "string", "maxLength": 3})),
            ("coded", json!({"type": "string", "pattern": "^A"})),
            (
                "set",
                json!({"type": "array", "uniqueItems": true, "items": {"type": "string"}}),
            ),
            (
                "nested",
                json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}),
            ),
            (
                "shape",
                json!({"oneOf": [{"type": "object", "properties": {"type": {"const": "a"}}}]}),
            ),
            ("unknown_integer", json!({"type": "integer"})),
        ] {
            let mut schema = flat.clone();
            schema["properties"][name] = property;
            assert!(!serde_is_exact(&schema), "{name}");
        }
        let mut open = flat;
        open["additionalProperties"] = json!({});
        assert!(!serde_is_exact(&open));
    }

    fn message(schema: &Value, value: Value) -> String {
        let validator = match compile(schema) {
            Ok(validator) => validator,
            Err(reason) => panic!("{reason}"),
        };
        match validate(&validator, schema, &value) {
            Ok(()) => "valid".to_owned(),
            Err(error) => error.message().to_owned(),
        }
    }

    #[test]
    fn a_union_is_answered_for_the_alternative_the_value_was_meant_for() {
        let schema = json!({
            "type": "object",
            "properties": {
                "address": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]},
                "command": {"oneOf": [
                    {"type": "string", "enum": ["Stop"]},
                    {"type": "object", "properties": {"Move": {"type": "integer", "format": "int32"}}, "required": ["Move"], "additionalProperties": false},
                    {"type": "object", "properties": {"Goto": {"type": "array"}}, "required": ["Goto"], "additionalProperties": false}
                ]},
                "amount": {"anyOf": [
                    {"type": "integer"},
                    {"type": "object", "properties": {"parts": {"type": "array", "items": {"type": "integer", "format": "uint32", "minimum": 0}}}, "required": ["parts"], "additionalProperties": false}
                ]},
                "payment": {"oneOf": [
                    {"type": "object", "properties": {"method": {"const": "card"}, "details": {"type": "string", "minLength": 4}}, "required": ["method", "details"], "additionalProperties": false},
                    {"type": "object", "properties": {"method": {"const": "cash"}}, "required": ["method"], "additionalProperties": false}
                ]}
            },
            "additionalProperties": false,
            "$defs": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": false}}
        });
        assert_eq!(
            message(&schema, json!({"address": {"city": "Oslo", "zip": "0150"}})),
            "`address`: unknown field `zip`, expected `city`"
        );
        assert_eq!(
            message(&schema, json!({"command": {"Move": "north"}})),
            "`command.Move`: invalid type: string, expected i32"
        );
        assert_eq!(
            message(&schema, json!({"amount": {"parts": [1, -2]}})),
            "`amount.parts[1]`: invalid value, expected at least 0"
        );
        assert_eq!(
            message(
                &schema,
                json!({"payment": {"method": "card", "details": "12"}})
            ),
            "`payment.details`: invalid length, expected at least 4 characters"
        );
        assert_eq!(
            message(&schema, json!({"payment": {"method": "cheque"}})),
            "`payment.method`: invalid value, expected `card` or `cash`"
        );
        assert_eq!(
            message(&schema, json!({"payment": {"details": "1234"}})),
            "`payment`: missing field `method`"
        );
        assert_eq!(
            message(&schema, json!({"command": "Go"})),
            "`command`: invalid value, it matches none of the forms the schema allows"
        );
    }

    #[test]
    fn integral_floats_become_integers_where_the_schema_says_integer() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer"},
                "x": {"type": "number"},
                "list": {"type": "array", "items": {"$ref": "#/$defs/Int"}},
                "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                "free": {}
            },
            "$defs": {"Int": {"type": ["integer", "null"]}}
        });
        let mut value =
            json!({"n": 2.0, "x": 2.0, "list": [1.0, null, 3], "either": 4.0, "free": 5.0});
        assert!(integers_where_declared(&schema, &mut value, None).is_ok());
        assert_eq!(
            value.to_string(),
            r#"{"n":2,"x":2.0,"list":[1,null,3],"either":4,"free":5.0}"#
        );
    }
}
