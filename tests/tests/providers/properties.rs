//! For random schemas built from the keywords every target supports, each lowering either
//! fails with a named reason or accepts exactly the instances the canonical schema accepts
//! (sampled), modulo the keywords it moved into the description and, for OpenAI's strict
//! mode, the `null`s the runtime reads as a parameter left out.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tool_runtime::dynamic::DynamicTool;
use tool_runtime::providers::{LoweredCatalog, Target, openai};
use tool_runtime::{Arguments, Runtime, Session};

/// A property's schema: a scalar (maybe constrained), maybe nullable, maybe a list or an
/// object of them.
fn field_schema(depth: u32) -> BoxedStrategy<Value> {
    let scalar = prop_oneof![
        Just(json!({"type": "string"})),
        (1u64..8).prop_map(|max| json!({"type": "string", "maxLength": max})),
        Just(json!({"type": "string", "enum": ["a", "b", "c"]})),
        Just(json!({"type": "integer"})),
        (0i64..5, 5i64..20)
            .prop_map(|(min, max)| json!({"type": "integer", "minimum": min, "maximum": max})),
        Just(json!({"type": "number"})),
        Just(json!({"type": "boolean"})),
    ];
    let scalar = (scalar, any::<bool>()).prop_map(|(mut schema, nullable)| {
        if nullable && let Some(ty) = schema.get("type").cloned() {
            schema["type"] = json!([ty, "null"]);
            if let Some(Value::Array(values)) = schema.get_mut("enum") {
                values.push(Value::Null);
            }
        }
        schema
    });
    if depth == 0 {
        return scalar.boxed();
    }
    prop_oneof![
        3 => scalar.clone(),
        1 => scalar.prop_map(|items| json!({"type": "array", "items": items})),
        1 => object_schema(depth - 1),
    ]
    .boxed()
}

/// A closed object of up to four properties, some required, some with a default.
fn object_schema(depth: u32) -> BoxedStrategy<Value> {
    proptest::collection::vec((field_schema(depth), any::<bool>(), any::<bool>()), 0..4)
        .prop_map(|fields| {
            let mut properties = Map::new();
            let mut required = Vec::new();
            for (index, (mut schema, is_required, has_default)) in fields.into_iter().enumerate() {
                let name = format!("f{index}");
                if is_required {
                    required.push(Value::String(name.clone()));
                } else if has_default && let Some(default) = default_for(&schema) {
                    schema["default"] = default;
                }
                properties.insert(name, schema);
            }
            json!({
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false,
            })
        })
        .boxed()
}

/// A default valid for `schema`, when a simple one is at hand.
fn default_for(schema: &Value) -> Option<Value> {
    let ty = match schema.get("type")? {
        Value::Array(types) => types.first()?.clone(),
        ty => ty.clone(),
    };
    if schema.get("enum").is_some() {
        return Some(json!("a"));
    }
    match ty.as_str()? {
        "string" => Some(json!("")),
        "integer" => Some(schema.get("minimum").cloned().unwrap_or(json!(0))),
        "number" => Some(json!(0.5)),
        "boolean" => Some(json!(false)),
        _ => None,
    }
}

/// A value that may or may not fit `schema`.
fn instance() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..25).prop_map(|n| json!(n)),
        Just(json!(2.5)),
        "[a-d]{0,9}".prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            proptest::collection::vec((0usize..4, inner), 0..4).prop_map(|entries| {
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(index, value)| (format!("f{index}"), value))
                        .collect(),
                )
            }),
        ]
    })
    .boxed()
}

fn runtime(schema: Value) -> Option<Runtime<()>> {
    let tool = DynamicTool::builder("probe", "A generated tool.", schema)
        .read_only()
        .handler(|_, _| async { Ok(Value::Null) })
        .build()
        .ok()?;
    Runtime::builder(())
        .inventory(false)
        .dynamic_tool(Ok(tool))
        .ok()?
        .build()
        .ok()
}

/// `schema` without the keywords at `pointers`.
fn without(schema: &Value, pointers: &[String]) -> Value {
    let mut schema = schema.clone();
    for pointer in pointers {
        let Some((parent, key)) = pointer.rsplit_once('/') else {
            continue;
        };
        let key = key.replace("~1", "/").replace("~0", "~");
        if let Some(Value::Object(object)) = schema.pointer_mut(parent) {
            object.remove(&key);
        }
    }
    schema
}

/// `schema` with every `additionalProperties: false` removed.
fn open_objects(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if object.get("additionalProperties") == Some(&Value::Bool(false)) {
                object.remove("additionalProperties");
            }
            object.values_mut().for_each(open_objects);
        }
        Value::Array(items) => items.iter_mut().for_each(open_objects),
        _ => {}
    }
}

/// OpenAPI's `nullable: true` as JSON Schema, for checking Gemini's `parameters`.
fn as_json_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(object) => {
            let mut object: Map<String, Value> = object
                .iter()
                .map(|(key, value)| (key.clone(), as_json_schema(value)))
                .collect();
            if object.remove("nullable") == Some(Value::Bool(true)) {
                match object.get("type").cloned() {
                    Some(Value::String(ty)) => {
                        object.insert("type".into(), json!([ty, "null"]));
                        if let Some(Value::Array(values)) = object.get_mut("enum") {
                            values.push(Value::Null);
                        }
                    }
                    _ => {
                        let inner = Value::Object(std::mem::take(&mut object));
                        object.insert("anyOf".into(), json!([inner, {"type": "null"}]));
                    }
                }
            }
            Value::Object(object)
        }
        Value::Array(items) => Value::Array(items.iter().map(as_json_schema).collect()),
        other => other.clone(),
    }
}

/// `instance` as a model in strict mode must send it: a `null` for every property `schema`
/// requires that is left out and may be `null` (every optional one, in OpenAI's strict form).
fn strict_form(instance: &Value, schema: &Value) -> Value {
    let mut instance = instance.clone();
    fill_nulls(&mut instance, schema);
    instance
}

fn fill_nulls(value: &mut Value, schema: &Value) {
    let accepts_null = |schema: &Value| {
        schema["anyOf"].as_array().is_some_and(|alternatives| {
            alternatives
                .iter()
                .any(|alternative| alternative["type"] == "null")
        }) || schema["type"] == "null"
            || schema["type"]
                .as_array()
                .is_some_and(|types| types.iter().any(|ty| ty == "null"))
    };
    match value {
        Value::Object(object) => {
            // The object alternative of a nullable object.
            let schema = schema["anyOf"]
                .as_array()
                .and_then(|alternatives| {
                    alternatives
                        .iter()
                        .find(|alternative| alternative["type"] == "object")
                })
                .unwrap_or(schema);
            let Some(properties) = schema["properties"].as_object() else {
                return;
            };
            for name in schema["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if let Some(property) = properties.get(name)
                    && !object.contains_key(name)
                    && accepts_null(property)
                {
                    object.insert(name.to_owned(), Value::Null);
                }
            }
            for (name, inner) in object.iter_mut() {
                if let Some(property) = properties.get(name) {
                    fill_nulls(inner, property);
                }
            }
        }
        Value::Array(items) => {
            let schema = schema["anyOf"]
                .as_array()
                .and_then(|alternatives| {
                    alternatives
                        .iter()
                        .find(|alternative| alternative["type"] == "array")
                })
                .unwrap_or(schema);
            for item in items {
                fill_nulls(item, &schema["items"]);
            }
        }
        _ => {}
    }
}

/// The arguments the runtime validates for `sent`, as an OpenAI chat answer carries them.
fn mapped_back(sent: &Value, catalog: &LoweredCatalog) -> Value {
    let message = json!({"tool_calls": [{"id": "c", "type": "function",
        "function": {"name": "probe", "arguments": sent.to_string()}}]});
    let calls = openai::calls_from_chat(&message, catalog).unwrap_or_default();
    match calls.first().map(|call| &call.arguments) {
        Some(Arguments::Value(value)) => value.clone(),
        Some(Arguments::Json(text)) => serde_json::from_str(text).unwrap_or(Value::Null),
        None => Value::Null,
    }
}

fn valid(schema: &Value, instance: &Value) -> Result<bool, String> {
    let validator =
        jsonschema::validator_for(schema).map_err(|error| format!("{error}: {schema}"))?;
    Ok(validator.is_valid(instance))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn a_lowering_fails_by_name_or_accepts_what_the_canonical_schema_accepts(
        schema in object_schema(2),
        instances in proptest::collection::vec(instance(), 1..8),
    ) {
        // Every generated schema is one a tool may declare.
        let Some(runtime) = runtime(schema.clone()) else {
            return Err(TestCaseError::fail(format!("no runtime for {schema}")));
        };
        let session = Session::new("p");
        let canonical = runtime.catalog(&session)[0].input_schema().clone();
        for &target in Target::ALL {
            let catalog = match runtime.lowered_catalog(&session, target) {
                Ok(catalog) => catalog,
                Err(error) => {
                    // Closed objects of typed scalars, lists and objects: every target but
                    // Gemini's `parameters` (which refuses an object without properties) can
                    // express them.
                    prop_assert!(
                        target == Target::GeminiParameters,
                        "{target} refused a schema of the supported keywords: {error}"
                    );
                    prop_assert!(!error.keyword().is_empty() && !error.fix().is_empty(), "{error}");
                    continue;
                }
            };
            let Some(lowered) = catalog.get("probe") else {
                return Err(TestCaseError::fail(format!("{target}: the tool is missing")));
            };
            let Some(parameters) = &lowered.parameters else {
                continue;
            };
            let parameters = if target == Target::GeminiParameters {
                as_json_schema(parameters)
            } else {
                parameters.clone()
            };
            let mut relaxed = without(&canonical, &lowered.moved);
            if target == Target::GeminiParameters {
                // Gemini's subset cannot close an object: the runtime refuses unknown fields.
                open_objects(&mut relaxed);
            }
            for instance in &instances {
                let sent = if target == Target::OpenAiStrict {
                    strict_form(instance, &parameters)
                } else {
                    instance.clone()
                };
                let read = if target == Target::OpenAiStrict {
                    mapped_back(&sent, &catalog)
                } else {
                    sent.clone()
                };
                let by_target = valid(&parameters, &sent).map_err(TestCaseError::fail)?;
                let by_canonical = valid(&relaxed, &read).map_err(TestCaseError::fail)?;
                prop_assert_eq!(
                    by_target, by_canonical,
                    "{}: sent {} (read as {}) against\n lowered {}\n canonical {}",
                    target, sent, read, parameters, relaxed
                );
            }
        }
    }
}
