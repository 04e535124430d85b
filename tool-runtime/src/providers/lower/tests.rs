//! Unit tests of each target's lowering, on hand-written schemas (the schemas `schemars`
//! derives are in `tests/lowering_zoo.rs`).

use serde_json::{Value, json};
use tool_core::ToolSpec;

use super::lower;
use crate::providers::{LoweredTool, LoweringError, Target};

fn spec(schema: Value) -> ToolSpec {
    ToolSpec::new("t", "Does it.", schema)
}

fn lowered(schema: Value, target: Target) -> LoweredTool {
    match lower(&spec(schema), target) {
        Ok(lowered) => lowered,
        Err(error) => panic!("{target} failed: {error}"),
    }
}

fn parameters(schema: Value, target: Target) -> Value {
    lowered(schema, target).parameters.unwrap_or(Value::Null)
}

fn failure(schema: Value, target: Target) -> LoweringError {
    match lower(&spec(schema), target) {
        Ok(lowered) => panic!("{target} lowered what it should refuse: {lowered:?}"),
        Err(error) => error,
    }
}

/// `create_ticket` of the support-desk example, as its canonical schema stands.
fn create_ticket() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "subject": {"type": "string", "description": "One-line summary of the problem."},
            "order_id": {"type": ["string", "null"], "description": "The order concerned, when any."},
            "priority": {"$ref": "#/$defs/Priority", "description": "How urgent it is.", "default": "normal"}
        },
        "required": ["subject"],
        "$defs": {
            "Priority": {
                "oneOf": [
                    {"type": "string", "const": "low", "description": "Can wait."},
                    {"type": "string", "const": "normal", "description": "The default."},
                    {"type": "string", "const": "urgent", "description": "A customer is blocked."}
                ],
                "description": "How urgent a ticket is."
            }
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Common to every target

#[test]
fn a_raw_schema_is_put_in_one_form_first() {
    // What a dynamic tool may bring: booleans, titles, `definitions`, three spellings of null.
    let raw = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Args",
        "type": "object",
        "properties": {
            "a": {"type": ["integer", "null"], "title": "A", "minimum": 1, "default": null},
            "b": {"type": "string", "nullable": true},
            "c": {"enum": ["x", null]},
            "d": {"anyOf": [{"type": "null"}, {"$ref": "#/definitions/D"}]},
            "e": true,
            "f": {"type": ["string", "null"], "enum": ["only"]}
        },
        "additionalProperties": false,
        "definitions": {"D": {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": false}}
    });
    assert_eq!(
        parameters(raw, Target::Mcp),
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "a": {"description": "A", "default": null, "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]},
                "b": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "c": {"anyOf": [{"enum": ["x"]}, {"type": "null"}]},
                "d": {"anyOf": [{"$ref": "#/$defs/D"}, {"type": "null"}]},
                "e": {},
                "f": {"type": "string", "enum": ["only"]}
            },
            "additionalProperties": false,
            "$defs": {"D": {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": false}}
        })
    );
}

#[test]
fn a_tool_without_parameters_is_the_empty_object_or_nothing_for_gemini() {
    let empty = json!({"type": "object", "properties": {}, "additionalProperties": false});
    for &target in Target::ALL {
        let lowered = lowered(empty.clone(), target);
        let expected = match target {
            Target::Gemini | Target::GeminiParameters => None,
            Target::OpenAiStrict => Some(json!({
                "type": "object", "properties": {}, "additionalProperties": false, "required": []
            })),
            Target::Mcp => Some(json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object", "properties": {}, "additionalProperties": false
            })),
            _ => Some(empty.clone()),
        };
        assert_eq!(lowered.parameters, expected, "{target}");
        assert_eq!(lowered.description, "Does it.");
    }
}

#[test]
fn the_canonical_schema_is_left_as_it_was() {
    let spec = spec(create_ticket());
    for &target in Target::ALL {
        let _ = lower(&spec, target);
        assert_eq!(spec.input_schema(), &create_ticket(), "{target}");
    }
}

#[test]
fn each_target_checks_the_tool_name_by_its_own_rule() {
    let schema =
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
    let refused = |name: &str, target: Target| {
        let spec = ToolSpec::new(name.to_owned(), "", schema.clone());
        lower(&spec, target)
            .err()
            .map(|error| error.keyword().to_owned())
    };
    let long = "a".repeat(65);
    assert_eq!(
        refused(&long, Target::OpenAiStrict).as_deref(),
        Some("name")
    );
    assert_eq!(refused(&long, Target::Anthropic), None);
    assert_eq!(refused("1st", Target::Gemini).as_deref(), Some("name"));
    assert_eq!(refused("1st", Target::OpenAiStrict), None);
    assert_eq!(refused("ns.tool", Target::Mcp), None);
    assert_eq!(
        refused("ns.tool", Target::OpenAiStrict).as_deref(),
        Some("name")
    );
    assert_eq!(refused("", Target::Mcp).as_deref(), Some("name"));
}

#[test]
fn a_root_that_is_not_an_object_is_refused() {
    let error = failure(json!({"type": "string"}), Target::Mcp);
    assert_eq!((error.keyword(), error.pointer()), ("type", "/type"));
    // A root that names no type is an object: a tool's arguments always are.
    let untyped = json!({"properties": {"a": {"type": "string"}}, "additionalProperties": false});
    assert_eq!(parameters(untyped, Target::Anthropic)["type"], "object");
}

#[test]
fn the_description_lists_what_moved_in_the_order_met() {
    let schema = json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 200},
            "limit": {"type": "integer", "minimum": 1, "default": 10},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 1}, "uniqueItems": true}
        },
        "required": ["query"],
        "additionalProperties": false
    });
    let lowered = lowered(schema, Target::OpenAiStrict);
    assert_eq!(
        lowered.description,
        "Does it.\n\nConstraints: `query`: at least 1 character, at most 200 characters; \
         `limit`: default 10; `tags`: no duplicate items; `tags[]`: at most 1 character."
    );
    assert_eq!(
        lowered.moved,
        [
            "/properties/query/minLength",
            "/properties/query/maxLength",
            "/properties/limit/default",
            "/properties/tags/uniqueItems",
            "/properties/tags/items/maxLength",
        ]
    );
    let again = lower(&spec(lowered_schema_source()), Target::OpenAiStrict);
    assert_eq!(
        again.map(|again| again.description),
        Ok(lowered.description)
    );
}

/// The same schema as above, for the determinism check.
fn lowered_schema_source() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 200},
            "limit": {"type": "integer", "minimum": 1, "default": 10},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 1}, "uniqueItems": true}
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

// ---------------------------------------------------------------------------------------------
// OpenAI strict

#[test]
fn openai_closes_every_object_and_requires_every_property() {
    let lowered = lowered(create_ticket(), Target::OpenAiStrict);
    assert_eq!(
        lowered.parameters,
        Some(json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "subject": {"type": "string", "description": "One-line summary of the problem."},
                "order_id": {"description": "The order concerned, when any.", "anyOf": [{"type": "string"}, {"type": "null"}]},
                "priority": {
                    "description": "How urgent it is.",
                    "anyOf": [
                        {"type": "string", "const": "low", "description": "Can wait."},
                        {"type": "string", "const": "normal", "description": "The default."},
                        {"type": "string", "const": "urgent", "description": "A customer is blocked."},
                        {"type": "null"}
                    ]
                }
            },
            "required": ["subject", "order_id", "priority"]
        }))
    );
    assert_eq!(
        lowered.description,
        "Does it.\n\nConstraints: `priority`: default \"normal\"."
    );
    assert_eq!(lowered.moved, ["/properties/priority/default"]);
    // `order_id` took `null` already: a `null` for it stays one.
    assert_eq!(lowered.nullable_optional, [vec!["priority".to_owned()]]);
}

#[test]
fn openai_paths_of_optional_properties_go_through_references_and_arrays() {
    let schema = json!({
        "type": "object",
        "properties": {
            "filters": {"type": "array", "items": {"$ref": "#/$defs/Filter"}},
            "node": {"$ref": "#/$defs/Node"}
        },
        "required": ["filters", "node"],
        "additionalProperties": false,
        "$defs": {
            "Filter": {"type": "object", "properties": {"field": {"type": "string"}, "limit": {"type": "integer", "default": 5}}, "required": ["field"], "additionalProperties": false},
            "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}, "label": {"type": "string"}}, "additionalProperties": false}
        }
    });
    let lowered = lowered(schema, Target::OpenAiStrict);
    let paths: Vec<String> = lowered
        .nullable_optional
        .iter()
        .map(|path| path.join("/"))
        .collect();
    assert_eq!(paths, ["filters/[]/limit", "node/next", "node/label"]);
    let parameters = lowered.parameters.unwrap_or_default();
    assert_eq!(
        parameters["$defs"]["Node"]["properties"]["next"],
        json!({"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]})
    );
    assert_eq!(
        lowered.description,
        "Does it.\n\nConstraints: `Filter.limit`: default 5."
    );
    assert_eq!(lowered.moved, ["/$defs/Filter/properties/limit/default"]);
}

#[test]
fn openai_refuses_maps_and_says_what_to_use() {
    let map = |rest: Value| {
        json!({
            "type": "object",
            "properties": {"tags": rest},
            "required": ["tags"],
            "additionalProperties": false
        })
    };
    let error = failure(
        map(json!({"type": "object", "additionalProperties": {"type": "string"}})),
        Target::OpenAiStrict,
    );
    assert_eq!(error.tool(), "t");
    assert_eq!(error.target(), Target::OpenAiStrict);
    assert_eq!(error.keyword(), "additionalProperties");
    assert_eq!(error.pointer(), "/properties/tags/additionalProperties");
    assert_eq!(error.fix(), "use a Vec of {key, value} structs");
    let error = failure(
        map(json!({"type": "object", "patternProperties": {"^a": {"type": "string"}}})),
        Target::OpenAiStrict,
    );
    assert_eq!(error.keyword(), "patternProperties");
    // A free-form object is a map of anything.
    let error = failure(
        map(json!({"type": "object", "additionalProperties": {}})),
        Target::OpenAiStrict,
    );
    assert_eq!(error.pointer(), "/properties/tags/additionalProperties");
}

#[test]
fn openai_refuses_a_value_of_any_type() {
    let schema = json!({"type": "object", "properties": {"v": {}}, "required": ["v"], "additionalProperties": false});
    let error = failure(schema, Target::OpenAiStrict);
    assert_eq!(
        (error.keyword(), error.pointer()),
        ("type", "/properties/v")
    );
}

#[test]
fn openai_merges_compositions_into_closed_objects() {
    // An internally tagged variant over a struct, as schemars writes it, and an `allOf`.
    let schema = json!({
        "type": "object",
        "properties": {
            "shape": {"$ref": "#/$defs/Shape"},
            "both": {"allOf": [{"$ref": "#/$defs/Side"}, {"type": "object", "properties": {"z": {"type": "integer"}}, "required": ["z"]}], "unevaluatedProperties": false}
        },
        "required": ["shape", "both"],
        "additionalProperties": false,
        "$defs": {
            "Side": {"type": "object", "properties": {"side": {"type": "number"}}, "required": ["side"]},
            "Shape": {"oneOf": [
                {"$ref": "#/$defs/Side", "type": "object", "properties": {"kind": {"type": "string", "const": "Square"}}, "required": ["kind"], "unevaluatedProperties": false},
                {"type": "object", "properties": {"kind": {"type": "string", "const": "Dot"}}, "required": ["kind"], "additionalProperties": false}
            ]}
        }
    });
    let parameters = parameters(schema, Target::OpenAiStrict);
    assert_eq!(
        parameters["properties"]["both"],
        json!({
            "type": "object",
            "properties": {"side": {"type": "number"}, "z": {"type": "integer"}},
            "required": ["side", "z"],
            "additionalProperties": false
        })
    );
    assert_eq!(
        parameters["$defs"]["Shape"],
        json!({"anyOf": [
            {"type": "object", "properties": {"kind": {"type": "string", "const": "Square"}, "side": {"type": "number"}}, "required": ["kind", "side"], "additionalProperties": false},
            {"type": "object", "properties": {"kind": {"type": "string", "const": "Dot"}}, "required": ["kind"], "additionalProperties": false}
        ]})
    );
    // Side is inlined where it was composed, and nothing else uses it.
    assert_eq!(parameters["$defs"].get("Side"), None);
}

#[test]
fn openai_wraps_a_described_reference_back_into_its_own_type() {
    let schema = json!({
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node", "description": "The top."}},
        "required": ["root"],
        "additionalProperties": false,
        "$defs": {"Node": {"type": "object", "properties": {
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node", "description": "A child."}}
        }, "required": ["children"]}}
    });
    let parameters = parameters(schema, Target::OpenAiStrict);
    let root = &parameters["properties"]["root"];
    assert_eq!(root["description"], "The top.");
    assert_eq!(
        root["properties"]["children"]["items"],
        json!({"description": "A child.", "anyOf": [{"$ref": "#/$defs/Node"}]})
    );
    assert_eq!(
        parameters["$defs"]["Node"]["properties"]["children"]["items"],
        json!({"description": "A child.", "anyOf": [{"$ref": "#/$defs/Node"}]})
    );
}

#[test]
fn openai_refuses_a_union_at_the_root() {
    let schema = json!({
        "type": "object",
        "properties": {"x": {"type": "integer"}},
        "required": ["x"],
        "oneOf": [
            {"type": "object", "properties": {"mode": {"const": "a"}}, "required": ["mode"]},
            {"type": "object", "properties": {"mode": {"const": "b"}}, "required": ["mode"]}
        ],
        "unevaluatedProperties": false
    });
    let error = failure(schema.clone(), Target::OpenAiStrict);
    assert_eq!((error.keyword(), error.pointer()), ("oneOf", "/oneOf"));
    // The permissive targets take it as it is.
    assert_eq!(
        parameters(schema.clone(), Target::Mcp)["oneOf"],
        schema["oneOf"]
    );
}

#[test]
fn openai_refuses_more_than_ten_levels_of_objects() {
    let mut schema =
        json!({"type": "object", "properties": {"leaf": {"type": "string"}}, "required": ["leaf"]});
    for _ in 0..10 {
        schema = json!({"type": "object", "properties": {"x": schema}, "required": ["x"]});
    }
    let error = failure(schema.clone(), Target::OpenAiStrict);
    assert_eq!(error.keyword(), "properties");
    assert!(error.problem().contains("11 levels"), "{}", error.problem());
    // One level fewer is fine.
    let inner = schema["properties"]["x"].clone();
    assert!(lower(&spec(inner), Target::OpenAiStrict).is_ok());
}

#[test]
fn openai_refuses_more_than_a_thousand_enum_values() {
    let values: Vec<String> = (0..1001).map(|n| format!("v{n}")).collect();
    let schema = json!({"type": "object", "properties": {"e": {"type": "string", "enum": values}}, "required": ["e"]});
    assert_eq!(failure(schema, Target::OpenAiStrict).keyword(), "enum");
}

#[test]
fn openai_lowers_a_tuple_to_items_of_its_types() {
    let schema = json!({
        "type": "object",
        "properties": {"pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2}},
        "required": ["pair"]
    });
    let lowered = lowered(schema, Target::OpenAiStrict);
    assert_eq!(
        lowered.parameters.unwrap_or_default()["properties"]["pair"],
        json!({"type": "array", "minItems": 2, "maxItems": 2, "items": {"anyOf": [{"type": "integer"}, {"type": "string"}]}})
    );
    assert_eq!(
        lowered.description,
        "Does it.\n\nConstraints: `pair`: items in this order: integer, string."
    );
}

// ---------------------------------------------------------------------------------------------
// Anthropic

#[test]
fn anthropic_spells_what_its_sdk_cannot_read_another_way() {
    let schema = json!({
        "type": "object",
        "properties": {
            "either": {"type": ["string", "integer"], "minLength": 1, "minimum": 0},
            "any": {"description": "Anything."},
            "nullable": {"type": ["boolean", "null"]}
        },
        "additionalProperties": false
    });
    let every_type = json!([
        {"type": "string"}, {"type": "number"}, {"type": "boolean"},
        {"type": "object"}, {"type": "array"}, {"type": "null"}
    ]);
    assert_eq!(
        parameters(schema, Target::Anthropic)["properties"],
        json!({
            "either": {"anyOf": [{"type": "string", "minLength": 1}, {"type": "integer", "minimum": 0}]},
            "any": {"description": "Anything.", "anyOf": every_type},
            "nullable": {"anyOf": [{"type": "boolean"}, {"type": "null"}]}
        })
    );
}

#[test]
fn anthropic_strict_keeps_its_subset_and_says_the_rest() {
    let schema = json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "maxLength": 200, "pattern": "^[a-z]+$", "format": "uri"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50, "format": "uint32", "default": 10},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
            "many": {"type": "array", "items": {"type": "string"}, "minItems": 2},
            "priority": {"$ref": "#/$defs/Priority", "description": "How urgent.", "default": "low"}
        },
        "required": ["query"],
        "additionalProperties": false,
        "$defs": {"Priority": {"type": "string", "enum": ["low", "high"]}}
    });
    let lowered = lowered(schema, Target::AnthropicStrict);
    assert_eq!(
        lowered.parameters,
        Some(json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "format": "uri"},
                "limit": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "many": {"type": "array", "items": {"type": "string"}},
                "priority": {"$ref": "#/$defs/Priority", "description": "How urgent."}
            },
            "required": ["query"],
            "additionalProperties": false,
            "$defs": {"Priority": {"type": "string", "enum": ["low", "high"]}}
        }))
    );
    assert_eq!(
        lowered.description,
        "Does it.\n\nConstraints: `query`: at most 200 characters, matches the pattern \
         `^[a-z]+$`; `limit`: at least 1, at most 50, format uint32, default 10; `tags`: at \
         most 3 items; `many`: at least 2 items; `priority`: default \"low\"."
    );
    assert!(lowered.nullable_optional.is_empty());
}

#[test]
fn anthropic_strict_refuses_recursion_and_maps() {
    let recursive = json!({
        "type": "object",
        "properties": {"next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}},
        "additionalProperties": false
    });
    let error = failure(recursive.clone(), Target::AnthropicStrict);
    assert_eq!(
        (error.keyword(), error.pointer()),
        ("$ref", "/properties/next/anyOf/0/$ref")
    );
    assert_eq!(
        parameters(recursive, Target::Anthropic)["properties"]["next"]["anyOf"][0],
        json!({"$ref": "#"})
    );
    let map = json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "integer"}}}});
    assert_eq!(
        failure(map, Target::AnthropicStrict).keyword(),
        "additionalProperties"
    );
}

// ---------------------------------------------------------------------------------------------
// Gemini

#[test]
fn gemini_json_schema_drops_examples_and_exclusive_bounds_and_spells_const_as_enum() {
    let schema = json!({
        "type": "object",
        "properties": {
            "kind": {"type": "string", "const": "a", "examples": ["a"]},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}
        },
        "additionalProperties": false
    });
    let lowered = lowered(schema, Target::Gemini);
    assert_eq!(
        lowered.parameters,
        Some(json!({
            "type": "object",
            "properties": {"kind": {"type": "string", "enum": ["a"]}, "ratio": {"type": "number"}},
            "additionalProperties": false
        }))
    );
    assert_eq!(
        lowered.description,
        "Does it.\n\nConstraints: `ratio`: greater than 0, less than 1."
    );
}

#[test]
fn gemini_parameters_inline_references_and_spell_null_as_nullable() {
    let lowered = lowered(create_ticket(), Target::GeminiParameters);
    assert_eq!(
        lowered.parameters,
        Some(json!({
            "type": "object",
            "properties": {
                "subject": {"type": "string", "description": "One-line summary of the problem."},
                "order_id": {"description": "The order concerned, when any.", "type": "string", "nullable": true},
                "priority": {
                    "description": "How urgent it is.",
                    "default": "normal",
                    "anyOf": [
                        {"type": "string", "description": "Can wait.", "enum": ["low"]},
                        {"type": "string", "description": "The default.", "enum": ["normal"]},
                        {"type": "string", "description": "A customer is blocked.", "enum": ["urgent"]}
                    ]
                }
            },
            "required": ["subject"]
        }))
    );
    assert_eq!(lowered.description, "Does it.");
}

#[test]
fn gemini_parameters_map_formats_and_say_the_rest() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "integer", "format": "uint32", "minimum": 0},
            "b": {"type": "integer", "format": "int64"},
            "c": {"type": "number", "format": "double", "multipleOf": 0.5},
            "d": {"type": "string", "format": "uuid"},
            "e": {"type": "integer", "enum": [1, 2, 3]},
            "f": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}
        },
        "required": ["a"],
        "additionalProperties": false
    });
    let lowered = lowered(schema, Target::GeminiParameters);
    assert_eq!(
        lowered.parameters,
        Some(json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "minimum": 0, "format": "int64"},
                "b": {"type": "integer", "format": "int64"},
                "c": {"type": "number", "format": "double"},
                "d": {"type": "string"},
                "e": {"type": "integer"},
                "f": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["a"]
        }))
    );
    assert_eq!(
        lowered.description,
        "Does it.\n\nConstraints: `a`: format uint32; `c`: a multiple of 0.5; `d`: format \
         uuid; `e`: one of 1, 2, 3; `f`: no duplicate items."
    );
}

#[test]
fn gemini_parameters_refuse_what_they_cannot_express() {
    let recursive = json!({"type": "object", "properties": {"next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}}});
    let error = failure(recursive, Target::GeminiParameters);
    assert_eq!(
        (error.keyword(), error.pointer()),
        ("$ref", "/properties/next/anyOf/0/$ref")
    );
    assert!(
        error.fix().contains("parametersJsonSchema"),
        "{}",
        error.fix()
    );

    let map = json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "integer"}}}});
    assert_eq!(
        failure(map, Target::GeminiParameters).keyword(),
        "additionalProperties"
    );

    let empty = json!({"type": "object", "properties": {"e": {"type": "object", "properties": {}, "additionalProperties": false}}});
    let error = failure(empty, Target::GeminiParameters);
    assert_eq!(
        (error.keyword(), error.pointer()),
        ("properties", "/properties/e/properties")
    );

    let name = json!({"type": "object", "properties": {"two-words": {"type": "string"}}});
    for target in [Target::Gemini, Target::GeminiParameters] {
        let error = failure(name.clone(), target);
        assert_eq!(
            (error.keyword(), error.pointer()),
            ("properties", "/properties/two-words")
        );
    }
    assert!(lower(&spec(name), Target::OpenAiStrict).is_ok());
}

#[test]
fn gemini_parameters_split_a_type_array() {
    let schema = json!({"type": "object", "properties": {"v": {"type": ["string", "integer", "null"], "maxLength": 3, "maximum": 9}}});
    assert_eq!(
        parameters(schema, Target::GeminiParameters)["properties"]["v"],
        json!({"anyOf": [{"type": "string", "maxLength": 3}, {"type": "integer", "maximum": 9}], "nullable": true})
    );
}

// ---------------------------------------------------------------------------------------------
// MCP

#[test]
fn mcp_keeps_the_schema_as_written_in_the_internal_form() {
    let mut expected = json!({"$schema": "https://json-schema.org/draft/2020-12/schema"});
    if let (Some(expected), Value::Object(schema)) = (expected.as_object_mut(), create_ticket()) {
        expected.extend(schema);
    }
    expected["properties"]["order_id"] = json!({
        "description": "The order concerned, when any.",
        "anyOf": [{"type": "string"}, {"type": "null"}]
    });
    let lowered = lowered(create_ticket(), Target::Mcp);
    assert_eq!(lowered.parameters, Some(expected));
    assert!(lowered.moved.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Compositions

#[test]
fn a_union_alternative_that_cannot_hold_beside_its_siblings_is_left_out() {
    let schema = json!({
        "type": "object",
        "properties": {"v": {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "required": ["a"],
            "anyOf": [{"type": "string"}, {"type": "object", "properties": {"b": {"type": "integer"}}}],
            "unevaluatedProperties": false
        }},
        "required": ["v"]
    });
    assert_eq!(
        parameters(schema, Target::OpenAiStrict)["properties"]["v"],
        json!({"anyOf": [{
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
            "required": ["a", "b"],
            "additionalProperties": false
        }]})
    );
}

#[test]
fn parts_that_disagree_are_an_error_naming_the_composition() {
    let schema = json!({
        "type": "object",
        "properties": {"v": {"allOf": [{"type": "string", "pattern": "^a"}, {"type": "string", "pattern": "b$"}]}},
        "required": ["v"]
    });
    let error = failure(schema, Target::OpenAiStrict);
    assert_eq!(
        (error.keyword(), error.pointer()),
        ("allOf", "/properties/v/allOf")
    );
    assert!(error.problem().contains("`pattern`"), "{}", error.problem());
    let never = json!({
        "type": "object",
        "properties": {"v": {"allOf": [{"type": "string"}, {"type": "integer"}]}},
        "required": ["v"]
    });
    assert!(
        failure(never, Target::GeminiParameters)
            .problem()
            .contains("cannot be satisfied")
    );
}

#[test]
fn a_root_reference_is_inlined_for_the_strict_targets() {
    // What some generators write for the arguments type itself.
    let schema = json!({
        "$ref": "#/$defs/Args",
        "$defs": {"Args": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false}}
    });
    let expected = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false});
    for target in [Target::OpenAiStrict, Target::AnthropicStrict] {
        assert_eq!(parameters(schema.clone(), target), expected, "{target}");
    }
    let mut gemini = expected;
    gemini
        .as_object_mut()
        .map(|root| root.remove("additionalProperties"));
    assert_eq!(parameters(schema, Target::GeminiParameters), gemini);
}

#[test]
fn an_array_of_anything_is_refused_where_items_need_a_type() {
    let schema =
        json!({"type": "object", "properties": {"list": {"type": "array"}}, "required": ["list"]});
    for target in [Target::OpenAiStrict, Target::GeminiParameters] {
        let error = failure(schema.clone(), target);
        assert_eq!(
            (error.keyword(), error.pointer()),
            ("items", "/properties/list"),
            "{target}"
        );
    }
    assert_eq!(
        parameters(schema, Target::AnthropicStrict)["properties"]["list"],
        json!({"type": "array"})
    );
}

// ---------------------------------------------------------------------------------------------
// Any schema

mod generated {
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use super::spec;
    use crate::providers::{Target, lower};

    /// Schema-like JSON: the keywords the lowerings treat, nested, with references that may
    /// or may not resolve.
    fn schema() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(json!({"type": "string"})),
            Just(json!({"type": ["integer", "null"], "minimum": 0})),
            Just(json!({"type": "number", "format": "double", "exclusiveMaximum": 1})),
            Just(json!({"type": "string", "maxLength": 3, "pattern": "^a"})),
            Just(json!({"const": "k"})),
            Just(json!({"enum": [1, "a", null]})),
            Just(json!({"$ref": "#/$defs/D"})),
            Just(json!({"$ref": "#"})),
            Just(json!({"$ref": "#/$defs/Missing"})),
            Just(json!({})),
            Just(json!(true)),
            Just(json!(false)),
            Just(json!({"type": "boolean", "default": true, "title": "B"})),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 1..4).prop_map(|items| {
                    let properties: Map<String, Value> = items
                        .into_iter()
                        .enumerate()
                        .map(|(index, item)| (format!("p{index}"), item))
                        .collect();
                    json!({"type": "object", "properties": properties, "required": ["p0"]})
                }),
                inner
                    .clone()
                    .prop_map(|item| json!({"type": "array", "items": item})),
                prop::collection::vec(inner.clone(), 1..3)
                    .prop_map(|items| json!({"type": "array", "prefixItems": items})),
                prop::collection::vec(inner.clone(), 1..3)
                    .prop_map(|items| json!({"anyOf": items})),
                prop::collection::vec(inner.clone(), 1..3)
                    .prop_map(|items| json!({"oneOf": items})),
                prop::collection::vec(inner.clone(), 1..3)
                    .prop_map(|items| json!({"allOf": items})),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| json!({
                    "type": "object", "properties": {"x": a}, "anyOf": [b, {"type": "null"}],
                    "unevaluatedProperties": false
                })),
                inner
                    .clone()
                    .prop_map(|item| json!({"$ref": "#/$defs/D", "properties": {"y": item}})),
                inner
                    .clone()
                    .prop_map(|item| json!({"type": "object", "additionalProperties": item})),
                inner.prop_map(|item| json!({"not": item, "if": {"type": "string"}})),
            ]
        })
    }

    fn hidden_key(value: &Value) -> bool {
        match value {
            Value::Object(object) => object
                .iter()
                .any(|(key, value)| key.starts_with('\u{0}') || hidden_key(value)),
            Value::Array(items) => items.iter().any(hidden_key),
            _ => false,
        }
    }

    /// The first of the target's invariants `schema` breaks (every schema object is checked,
    /// `enum` and `default` data aside).
    fn broken_invariant(target: Target, schema: &Value) -> Option<String> {
        let Value::Object(object) = schema else {
            return None;
        };
        let has = |key: &str| object.contains_key(key);
        match target {
            Target::OpenAiStrict => {
                if has("$ref") && object.len() > 1 {
                    return Some("a $ref with siblings".into());
                }
                for key in [
                    "oneOf",
                    "allOf",
                    "default",
                    "minLength",
                    "prefixItems",
                    "not",
                ] {
                    if has(key) {
                        return Some(format!("`{key}`"));
                    }
                }
                if object.get("type") == Some(&json!("object")) {
                    let names: Vec<Value> = object
                        .get("properties")
                        .and_then(Value::as_object)
                        .map(|properties| properties.keys().map(|key| json!(key)).collect())
                        .unwrap_or_default();
                    let required = object.get("required").cloned().unwrap_or_else(|| json!([]));
                    if object.get("additionalProperties") != Some(&json!(false))
                        || required != Value::Array(names)
                    {
                        return Some("an object not closed or not all required".into());
                    }
                }
            }
            Target::GeminiParameters => {
                for key in [
                    "$ref",
                    "$defs",
                    "const",
                    "additionalProperties",
                    "oneOf",
                    "allOf",
                ] {
                    if has(key) {
                        return Some(format!("`{key}`"));
                    }
                }
                if object.get("type").is_some_and(Value::is_array) {
                    return Some("a type array".into());
                }
            }
            Target::Anthropic | Target::AnthropicStrict
                if object.get("type").is_some_and(Value::is_array) =>
            {
                return Some("a type array".into());
            }
            _ => {}
        }
        object
            .iter()
            .find_map(|(key, value)| match (key.as_str(), value) {
                ("enum" | "const" | "default" | "examples", _) => None,
                ("properties" | "$defs" | "patternProperties", Value::Object(entries)) => entries
                    .values()
                    .find_map(|entry| broken_invariant(target, entry)),
                (_, Value::Array(items)) => {
                    items.iter().find_map(|item| broken_invariant(target, item))
                }
                (_, Value::Object(_)) => broken_invariant(target, value),
                _ => None,
            })
    }

    /// Whether some schema Anthropic's `transform_schema` reads (the root, properties,
    /// items, union alternatives, definitions) names no type, union, reference or literals:
    /// the helper raises on those.
    fn unreadable_by_anthropic(schema: &Value) -> bool {
        let Value::Object(object) = schema else {
            return false;
        };
        let primitive = |value: &Value| !value.is_array() && !value.is_object();
        let names = object.get("type").is_some_and(Value::is_string)
            || ["anyOf", "oneOf", "allOf", "$ref"]
                .iter()
                .any(|key| object.contains_key(*key))
            || object
                .get("enum")
                .and_then(Value::as_array)
                .is_some_and(|values| !values.is_empty() && values.iter().all(primitive))
            || object.get("const").is_some_and(primitive);
        !names
            || object
                .iter()
                .any(|(key, value)| match (key.as_str(), value) {
                    ("properties" | "$defs", Value::Object(entries)) => {
                        entries.values().any(unreadable_by_anthropic)
                    }
                    ("items", value) => unreadable_by_anthropic(value),
                    ("anyOf" | "oneOf" | "allOf", Value::Array(items)) => {
                        items.iter().any(unreadable_by_anthropic)
                    }
                    _ => false,
                })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// No schema makes a lowering panic; the canonical value stays as it was; what
        /// lowers carries no hidden key and (but for Gemini's OpenAPI subset) is a valid
        /// 2020-12 schema; what fails names a keyword.
        #[test]
        fn every_schema_lowers_or_fails_cleanly(body in schema(), definition in schema()) {
            let root = json!({
                "type": "object",
                "properties": {"a": body},
                "$defs": {"D": definition}
            });
            let spec = spec(root.clone());
            for &target in Target::ALL {
                match lower(&spec, target) {
                    Ok(lowered) => {
                        let parameters = lowered.parameters.unwrap_or_else(|| json!({}));
                        prop_assert!(!hidden_key(&parameters), "{target}: {parameters}");
                        if target != Target::GeminiParameters {
                            prop_assert!(
                                jsonschema::draft202012::meta::is_valid(&parameters),
                                "{target}: {parameters}"
                            );
                        }
                        for pointer in &lowered.moved {
                            prop_assert!(root.pointer(pointer).is_some(), "{target}: {pointer}");
                        }
                        if matches!(target, Target::Anthropic | Target::AnthropicStrict) {
                            prop_assert!(!unreadable_by_anthropic(&parameters), "{target}: {parameters}");
                        }
                        if let Some(broken) = broken_invariant(target, &parameters) {
                            prop_assert!(false, "{target}: {broken} in {parameters}");
                        }
                    }
                    Err(error) => {
                        prop_assert!(!error.keyword().is_empty());
                        prop_assert!(
                            root.pointer(error.pointer()).is_some(),
                            "{target}: {} not in {root}", error.pointer()
                        );
                    }
                }
                prop_assert_eq!(spec.input_schema(), &root);
            }
        }
    }
}

#[test]
fn equal_bounds_are_said_once() {
    let schema = json!({
        "type": "object",
        "properties": {
            "code": {"type": "string", "minLength": 4, "maxLength": 4},
            "pick": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2, "uniqueItems": true}
        },
        "required": ["code", "pick"]
    });
    assert_eq!(
        lowered(schema, Target::AnthropicStrict).description,
        "Does it.\n\nConstraints: `code`: exactly 4 characters; `pick`: exactly 2 items, no \
         duplicate items."
    );
}

#[test]
fn definitions_that_double_at_every_level_are_refused_not_inlined_forever() {
    // L0 names L1 twice, L1 names L2 twice, ...: 2^30 copies once inlined.
    let mut defs = serde_json::Map::new();
    for level in 0..30 {
        let next = format!("#/$defs/L{}", level + 1);
        defs.insert(
            format!("L{level}"),
            json!({"type": "object", "properties": {
                "a": {"$ref": next}, "b": {"$ref": next}
            }}),
        );
    }
    defs.insert("L30".to_owned(), json!({"type": "string"}));
    let schema = json!({
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/L0"}},
        "$defs": defs,
    });
    let error = failure(schema.clone(), Target::GeminiParameters);
    assert_eq!(error.keyword(), "$ref");
    assert!(error.problem().contains("copies of definitions"), "{error}");
    // The targets that keep `$ref` lower it as it is.
    for target in [Target::Anthropic, Target::Gemini, Target::Mcp] {
        assert!(lower(&spec(schema.clone()), target).is_ok(), "{target}");
    }
    // The strict targets keep definitions as definitions: they end, whatever they answer.
    for target in [Target::OpenAiStrict, Target::AnthropicStrict] {
        let _ = lower(&spec(schema.clone()), target);
    }
}
