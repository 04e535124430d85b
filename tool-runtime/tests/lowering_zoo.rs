//! The schema zoo: parameter types as applications write them (enums, tagged and untagged
//! unions, maps, tuples, `#[serde(flatten)]`, recursion, constraints, options with and without
//! defaults, nested structs, formats), their canonical schemas lowered for every target.
//!
//! For each case and target the lowering either succeeds and keeps the target's invariants,
//! or fails with a [`LoweringError`] naming the keyword. Each case's results are kept in
//! `tests/schema_zoo/<case>.json` (the canonical schema, then each target's parameters,
//! description, moved keywords, or error): a change in a lowering shows there. After a change
//! that is meant, rewrite them with
//!
//! ```text
//! LOWERING_ZOO=overwrite cargo test -p tool-runtime --test lowering_zoo
//! ```
//!
//! and read the diff.

#![allow(dead_code, reason = "the zoo's types exist for their schemas")]

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tool_runtime::core::schema::input_schema_for;
use tool_runtime::core::{Registry, ToolSpec};
use tool_runtime::providers::{LoweredTool, LoweringError, Target, lower};
use tool_runtime::tool;

// ---------------------------------------------------------------------------------------------
// The types

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoParams {}

/// A colour.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Color {
    /// Warm.
    Red,
    /// Cool.
    DeepBlue,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Enums {
    /// The main colour.
    color: Color,
    colors: Vec<Color>,
    maybe: Option<Color>,
    /// A literal level.
    #[schemars(extend("enum" = [1, 2, 3]))]
    level: u8,
}

/// A side of a square.
#[derive(Deserialize, JsonSchema)]
struct Side {
    side: f64,
    label: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Internal {
    Circle { radius: f64 },
    Square(Side),
    Dot,
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "t", content = "c")]
enum Adjacent {
    Count(u32),
    Point { x: i64, y: i64 },
}

#[derive(Deserialize, JsonSchema)]
enum External {
    Plain,
    Number(u8),
    Pair(i32, String),
    Named { flag: bool },
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TaggedUnions {
    shape: Internal,
    adjacent: Adjacent,
    external: External,
}

#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum Untagged {
    Text(String),
    Number(i64),
    Object { a: u32 },
    Nothing,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Untaggeds {
    value: Untagged,
    values: Vec<Untagged>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Maps {
    counts: HashMap<String, i32>,
    sides: BTreeMap<String, Side>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AnyValue {
    /// Anything at all.
    payload: Value,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Tuples {
    pair: (i32, String),
    rgb: (u8, u8, u8),
    point: [f64; 3],
}

#[derive(Deserialize, JsonSchema)]
struct Paging {
    offset: u32,
    limit: Option<u32>,
}

// serde refuses `deny_unknown_fields` beside `flatten`.
#[derive(Deserialize, JsonSchema)]
struct FlattenStruct {
    query: String,
    #[serde(flatten)]
    paging: Paging,
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "mode", rename_all = "snake_case")]
enum Mode {
    Fast,
    Slow { delay_ms: u32 },
}

#[derive(Deserialize, JsonSchema)]
struct Job {
    name: String,
    #[serde(flatten)]
    mode: Mode,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FlattenEnumNested {
    job: Job,
}

// serde refuses `deny_unknown_fields` beside `flatten`.
#[derive(Deserialize, JsonSchema)]
struct FlattenEnumRoot {
    name: String,
    #[serde(flatten)]
    mode: Mode,
}

/// A node of a tree.
#[derive(Deserialize, JsonSchema)]
struct TreeNode {
    value: i32,
    children: Vec<TreeNode>,
    next: Option<Box<TreeNode>>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Recursion {
    /// The root of the tree.
    root: TreeNode,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RootRecursion {
    value: i32,
    children: Vec<RootRecursion>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Constraints {
    /// What to look for.
    #[schemars(length(min = 1, max = 200))]
    query: String,
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    #[schemars(regex(pattern = r"^[a-z][a-z0-9-]*$"))]
    slug: String,
    #[schemars(length(min = 1, max = 5))]
    tags: Vec<String>,
    #[schemars(range(min = -1.5, max = 1.5))]
    weight: f64,
    #[schemars(extend("exclusiveMinimum" = 0, "multipleOf" = 0.5))]
    ratio: f64,
}

fn ten() -> u32 {
    10
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Optionals {
    plain: Option<String>,
    #[serde(default)]
    defaulted: Option<String>,
    #[serde(default = "ten")]
    limit: u32,
    #[serde(default)]
    tags: Vec<String>,
    color: Option<Color>,
    side: Option<Side>,
}

/// An address.
#[derive(Deserialize, JsonSchema)]
struct Address {
    street: String,
    city: String,
    zip: Option<String>,
}

/// A person.
#[derive(Deserialize, JsonSchema)]
struct Person {
    name: String,
    /// Where they live.
    home: Address,
    previous: Vec<Address>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Nested {
    owner: Person,
    /// Everyone else.
    people: Vec<Person>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Formats {
    #[schemars(with = "String", extend("format" = "uuid"))]
    id: String,
    #[schemars(with = "String", extend("format" = "date-time"))]
    at: String,
    #[schemars(with = "String", extend("format" = "email"))]
    email: String,
    count: u32,
    offset: i64,
    ratio: f64,
    small: u8,
    float: f32,
    big: u64,
}

// ---------------------------------------------------------------------------------------------
// Tools written with the macro, as an application would

/// The zoo's deps.
pub struct ZooDeps;

/// Searches the catalog.
#[tool(read_only)]
fn zoo_search(
    /// What to look for.
    query: String,
    /// The colour to keep, when any.
    color: Option<Color>,
    /// Results per page.
    #[default = 10]
    limit: u32,
) -> String {
    let _ = (color, limit);
    query
}

/// How urgent a ticket is.
#[derive(Clone, Copy, serde::Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// Can wait.
    Low,
    /// The default.
    Normal,
    /// A customer is blocked.
    Urgent,
}

/// Opens a ticket (the support desk's `create_ticket`).
#[tool(mutates_workspace)]
fn zoo_open_ticket(
    /// One-line summary of the problem.
    subject: String,
    /// The order concerned, when any.
    order_id: Option<String>,
    /// How urgent it is.
    #[default = Priority::Normal]
    priority: Priority,
) -> String {
    let _ = (order_id, priority);
    subject
}

/// Tells the time.
#[tool(read_only)]
fn zoo_now() -> &'static str {
    "now"
}

// ---------------------------------------------------------------------------------------------
// The cases

struct Case {
    name: String,
    spec: ToolSpec,
    /// Valid arguments, checked against the canonical schema and the lowerings.
    instances: Vec<Value>,
}

fn case<T: JsonSchema + DeserializeOwned>(name: &str, instances: Vec<Value>) -> Case {
    for instance in &instances {
        if let Err(error) = serde_json::from_value::<T>(instance.clone()) {
            panic!("{name}: {instance} is not a valid value of the type: {error}");
        }
    }
    Case {
        name: name.to_owned(),
        spec: ToolSpec::new(
            format!("zoo_{name}"),
            "A tool of the zoo.",
            input_schema_for::<T>(),
        ),
        instances,
    }
}

fn cases() -> Vec<Case> {
    let mut cases = vec![
        case::<NoParams>("no_params", vec![json!({})]),
        case::<Enums>(
            "enums",
            vec![
                json!({"color": "red", "colors": ["deep_blue"], "maybe": null, "level": 2}),
                json!({"color": "deep_blue", "colors": [], "level": 1}),
            ],
        ),
        case::<TaggedUnions>(
            "tagged_unions",
            vec![
                json!({
                    "shape": {"kind": "circle", "radius": 1.5},
                    "adjacent": {"t": "Count", "c": 3},
                    "external": "Plain"
                }),
                json!({
                    "shape": {"kind": "square", "side": 2.0, "label": "a"},
                    "adjacent": {"t": "Point", "c": {"x": 1, "y": -1}},
                    "external": {"Pair": [1, "x"]}
                }),
                json!({
                    "shape": {"kind": "dot"},
                    "adjacent": {"t": "Count", "c": 0},
                    "external": {"Named": {"flag": true}}
                }),
            ],
        ),
        case::<Untaggeds>(
            "untagged",
            vec![
                json!({"value": "text", "values": [1, {"a": 2}, null]}),
                json!({"value": null, "values": []}),
            ],
        ),
        case::<Maps>(
            "maps",
            vec![json!({"counts": {"a": 1}, "sides": {"x": {"side": 1.0}}})],
        ),
        case::<AnyValue>(
            "any_value",
            vec![json!({"payload": [1, "two"]}), json!({"payload": null})],
        ),
        case::<Tuples>(
            "tuples",
            vec![json!({"pair": [1, "a"], "rgb": [1, 2, 3], "point": [0.0, 1.5, -2.0]})],
        ),
        case::<FlattenStruct>(
            "flatten_struct",
            vec![
                json!({"query": "q", "offset": 0}),
                json!({"query": "q", "offset": 5, "limit": 10}),
            ],
        ),
        case::<FlattenEnumNested>(
            "flatten_enum_nested",
            vec![
                json!({"job": {"name": "a", "mode": "fast"}}),
                json!({"job": {"name": "b", "mode": "slow", "delay_ms": 5}}),
            ],
        ),
        case::<FlattenEnumRoot>(
            "flatten_enum_root",
            vec![json!({"name": "a", "mode": "fast"})],
        ),
        case::<Recursion>(
            "recursion",
            // OpenAI's paths of left-out properties stop where the type recurses: deeper
            // down, the model sends every property itself.
            vec![json!({"root": {
                "value": 1,
                "children": [{"value": 2, "children": [], "next": null}],
                "next": null
            }})],
        ),
        case::<RootRecursion>(
            "root_recursion",
            vec![json!({"value": 1, "children": [{"value": 2, "children": []}]})],
        ),
        case::<Constraints>(
            "constraints",
            vec![json!({
                "query": "rust", "limit": 10, "slug": "a-b", "tags": ["x"],
                "weight": 0.5, "ratio": 1.5
            })],
        ),
        case::<Optionals>(
            "optionals",
            vec![
                json!({}),
                json!({
                    "plain": "p", "defaulted": null, "limit": 3, "tags": ["t"],
                    "color": "red", "side": {"side": 1.0, "label": null}
                }),
                json!({"side": {"side": 2.0}}),
            ],
        ),
        case::<Nested>(
            "nested",
            vec![json!({
                "owner": {"name": "Ada", "home": {"street": "s", "city": "c"}, "previous": []},
                "people": [{"name": "Bo", "home": {"street": "s", "city": "c", "zip": "1"},
                            "previous": [{"street": "t", "city": "d"}]}]
            })],
        ),
        case::<Formats>(
            "formats",
            vec![json!({
                "id": "67e55044-10b1-426f-9247-bb680e5fe0c8", "at": "2024-05-01T10:00:00Z",
                "email": "a@example.com", "count": 1, "offset": -5, "ratio": 0.5, "small": 255,
                "float": 1.0, "big": 7
            })],
        ),
    ];
    let registry = match Registry::from_inventory::<ZooDeps>() {
        Ok(registry) => registry,
        Err(error) => panic!("the zoo's tools: {error}"),
    };
    let instances = |name: &str| match name {
        "zoo_open_ticket" => vec![
            json!({"subject": "s"}),
            json!({"subject": "s", "order_id": null, "priority": "urgent"}),
        ],
        "zoo_search" => vec![
            json!({"query": "q"}),
            json!({"query": "q", "color": "red", "limit": 5}),
        ],
        _ => vec![json!({})],
    };
    for spec in registry.specs() {
        let name = spec
            .name()
            .strip_prefix("zoo_")
            .map_or_else(|| spec.name().to_owned(), |rest| format!("tool_{rest}"));
        cases.push(Case {
            instances: instances(spec.name()),
            name,
            spec: spec.clone(),
        });
    }
    cases
}

// ---------------------------------------------------------------------------------------------
// The run

/// Runs every case for every target, checks the invariants, compares the results with the
/// kept ones.
#[test]
fn every_case_lowers_for_every_target_or_fails_with_a_named_error() {
    let overwrite = std::env::var("LOWERING_ZOO").is_ok_and(|value| value == "overwrite");
    let mut stale = Vec::new();
    for case in cases() {
        let canonical = case.spec.input_schema().clone();
        let canonical_validator = compile(&canonical, &case.name, "canonical");
        for instance in &case.instances {
            assert!(
                canonical_validator.is_valid(instance),
                "{}: the canonical schema refuses {instance}",
                case.name
            );
        }
        let mut results = Map::new();
        results.insert("canonical".to_owned(), canonical.clone());
        for &target in Target::ALL {
            let outcome = lower(&case.spec, target);
            assert_eq!(
                case.spec.input_schema(),
                &canonical,
                "{}: lowering for {target} changed the canonical schema",
                case.name
            );
            let result = match &outcome {
                Ok(lowered) => {
                    check(&case, &canonical, target, lowered);
                    json!({
                        "description": lowered.description,
                        "parameters": lowered.parameters,
                        "moved": lowered.moved,
                        "nullable_optional": lowered.nullable_optional,
                    })
                }
                Err(error) => {
                    check_error(&case, &canonical, target, error);
                    json!({"error": {
                        "keyword": error.keyword(),
                        "pointer": error.pointer(),
                        "message": error.to_string(),
                    }})
                }
            };
            results.insert(target.as_str().to_owned(), result);
        }
        let results = Value::Object(results);
        let path = zoo_dir().join(format!("{}.json", case.name));
        let kept = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok());
        if kept.as_ref() != Some(&results) {
            if overwrite {
                let text = serde_json::to_string_pretty(&results).unwrap_or_default();
                if let Err(error) = std::fs::write(&path, text + "\n") {
                    panic!("writing {}: {error}", path.display());
                }
            } else {
                stale.push(case.name.clone());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "the lowerings of {stale:?} differ from tests/schema_zoo/ (LOWERING_ZOO=overwrite \
         rewrites them; read the diff)"
    );
}

/// Which targets each case must lower for: a failure anywhere else is a regression.
fn must_lower(case: &str, target: Target) -> bool {
    let strict = matches!(
        target,
        Target::OpenAiStrict | Target::AnthropicStrict | Target::GeminiParameters
    );
    match case {
        "maps" | "any_value" | "flatten_enum_root" => !strict,
        "recursion" | "root_recursion" => {
            !matches!(target, Target::AnthropicStrict | Target::GeminiParameters)
        }
        _ => true,
    }
}

fn check_error(case: &Case, canonical: &Value, target: Target, error: &LoweringError) {
    assert!(
        !must_lower(&case.name, target),
        "{}: {target} should lower: {error}",
        case.name
    );
    assert_eq!(error.tool(), case.spec.name());
    assert_eq!(error.target(), target);
    assert!(!error.keyword().is_empty() && !error.problem().is_empty() && !error.fix().is_empty());
    assert!(
        canonical.pointer(error.pointer()).is_some(),
        "{}: {target}: the error's pointer {} is not in the canonical schema",
        case.name,
        error.pointer()
    );
    let expected = match case.name.as_str() {
        "maps" => "additionalProperties",
        "any_value" => "type",
        "flatten_enum_root" => "oneOf",
        "recursion" | "root_recursion" => "$ref",
        other => panic!("{other}: no error expected for {target}"),
    };
    assert_eq!(error.keyword(), expected, "{}: {target}", case.name);
}

fn check(case: &Case, canonical: &Value, target: Target, lowered: &LoweredTool) {
    let what = format!("{}: {target}", case.name);
    assert!(
        must_lower(&case.name, target),
        "{what}: lowered, expected an error"
    );
    assert_eq!(lowered.name, case.spec.name());
    assert!(
        lowered.description.starts_with(case.spec.description()),
        "{what}: {}",
        lowered.description
    );
    assert_eq!(
        lowered.moved.is_empty(),
        lowered.description == case.spec.description()
    );
    for pointer in &lowered.moved {
        assert!(
            canonical.pointer(pointer).is_some(),
            "{what}: the moved keyword {pointer} is not in the canonical schema"
        );
    }
    let without = case.name == "no_params" || case.name == "tool_now";
    let Some(parameters) = &lowered.parameters else {
        assert!(
            without && matches!(target, Target::Gemini | Target::GeminiParameters),
            "{what}: no parameters"
        );
        return;
    };
    if without {
        let mut empty = json!({"type": "object", "properties": {}, "additionalProperties": false});
        if target == Target::OpenAiStrict {
            empty["required"] = json!([]);
        }
        if target == Target::Mcp {
            empty = json!({"$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object", "properties": {}, "additionalProperties": false});
        }
        assert_eq!(parameters, &empty, "{what}");
    }
    assert_eq!(parameters["type"], "object", "{what}: the root");
    every_schema(parameters, &mut |schema| {
        assert!(
            !schema.keys().any(|key| key.starts_with('\u{0}')),
            "{what}: a hidden key is left"
        );
    });
    if target != Target::OpenAiStrict {
        assert!(lowered.nullable_optional.is_empty(), "{what}");
    }
    match target {
        Target::OpenAiStrict => openai_invariants(&what, parameters),
        Target::Anthropic => anthropic_invariants(&what, parameters),
        Target::AnthropicStrict => anthropic_strict_invariants(&what, parameters),
        Target::Gemini => gemini_invariants(&what, parameters),
        Target::GeminiParameters => gemini_parameters_invariants(&what, parameters),
        Target::Mcp => {}
        _ => panic!("{what}: a target the zoo does not know"),
    }
    if target == Target::GeminiParameters {
        // OpenAPI 3.0, not JSON Schema: nothing below applies.
        return;
    }
    if let Err(error) = jsonschema::draft202012::meta::validate(parameters) {
        panic!("{what}: not a valid 2020-12 schema: {error}\n{parameters}");
    }
    let validator = compile(parameters, &case.name, target.as_str());
    let canonical_validator = compile(canonical, &case.name, "canonical");
    for instance in &case.instances {
        let mut sent = instance.clone();
        if target == Target::OpenAiStrict {
            // The model sends every property, `null` for one it leaves out; the runtime
            // removes those nulls before validating against the canonical schema.
            let mut filled = Vec::new();
            complete(
                parameters,
                parameters,
                &mut sent,
                &mut Vec::new(),
                &mut filled,
            );
            // A filled `null` is removed where the lowering made the property nullable; one
            // that took `null` already keeps it, and the canonical schema must take it too.
            let _ = filled;
            let received = without_nulls(&sent, &lowered.nullable_optional);
            assert!(
                canonical_validator.is_valid(&received),
                "{what}: the canonical schema refuses {received}, received as {sent}"
            );
        }
        assert!(
            validator.is_valid(&sent),
            "{what}: the lowering refuses {sent}\n{parameters}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Each target's invariants

fn openai_invariants(what: &str, parameters: &Value) {
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
    const ALLOWED: &[&str] = &[
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
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    ];
    assert!(
        parameters.get("anyOf").is_none(),
        "{what}: a union at the root"
    );
    every_schema(parameters, &mut |schema| {
        for key in schema.keys() {
            assert!(
                ALLOWED.contains(&key.as_str()),
                "{what}: `{key}` in {schema:?}"
            );
        }
        if schema.contains_key("$ref") {
            assert_eq!(schema.len(), 1, "{what}: a $ref with siblings: {schema:?}");
        }
        if let Some(format) = schema.get("format") {
            assert_eq!(schema.get("type"), Some(&json!("string")), "{what}");
            assert!(
                FORMATS.contains(&format.as_str().unwrap_or_default()),
                "{what}"
            );
        }
        assert!(
            ["type", "anyOf", "$ref", "enum", "const"]
                .iter()
                .any(|key| schema.contains_key(*key)),
            "{what}: a schema of any value: {schema:?}"
        );
        if is_object(schema) {
            assert_eq!(
                schema.get("additionalProperties"),
                Some(&json!(false)),
                "{what}: {schema:?}"
            );
            let names: Vec<Value> = schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|properties| properties.keys().map(|key| json!(key)).collect())
                .unwrap_or_else(|| panic!("{what}: an object without properties"));
            // The schema of a tool without parameters is the same for every target, without
            // `required` (OpenAI's `to_strict_json_schema` would add an empty one).
            let required = schema.get("required").cloned().unwrap_or_else(|| json!([]));
            assert_eq!(required, Value::Array(names), "{what}");
        }
    });
}

/// What Anthropic's `transform_schema` needs of each schema it reads: one type, a union, a
/// reference or literals.
fn names_its_values(schema: &Map<String, Value>) -> bool {
    let primitive = |value: &Value| !value.is_array() && !value.is_object();
    schema.get("type").is_some_and(Value::is_string)
        || ["anyOf", "oneOf", "allOf", "$ref"]
            .iter()
            .any(|key| schema.contains_key(*key))
        || schema
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|values| !values.is_empty() && values.iter().all(primitive))
        || schema.get("const").is_some_and(primitive)
}

fn anthropic_invariants(what: &str, parameters: &Value) {
    every_schema(parameters, &mut |schema| {
        assert!(
            !schema.get("type").is_some_and(Value::is_array),
            "{what}: a type array"
        );
        assert!(names_its_values(schema), "{what}: {schema:?}");
    });
}

fn anthropic_strict_invariants(what: &str, parameters: &Value) {
    const ALLOWED: &[&str] = &[
        "type",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "$defs",
        "description",
        "properties",
        "required",
        "items",
        "additionalProperties",
        "format",
        "minItems",
    ];
    anthropic_invariants(what, parameters);
    every_schema(parameters, &mut |schema| {
        for key in schema.keys() {
            assert!(ALLOWED.contains(&key.as_str()), "{what}: `{key}`");
        }
        if schema.contains_key("$ref") {
            assert!(
                schema
                    .keys()
                    .all(|key| key == "$ref" || key == "description"),
                "{what}"
            );
        }
        if let Some(min) = schema.get("minItems") {
            assert!(min.as_u64().is_some_and(|min| min <= 1), "{what}");
        }
        if is_object(schema) {
            assert_eq!(
                schema.get("additionalProperties"),
                Some(&json!(false)),
                "{what}"
            );
        }
    });
    assert!(!recursive(parameters), "{what}: recursive");
}

fn gemini_invariants(what: &str, parameters: &Value) {
    every_schema(parameters, &mut |schema| {
        for key in [
            "$schema",
            "title",
            "examples",
            "const",
            "exclusiveMinimum",
            "exclusiveMaximum",
        ] {
            assert!(!schema.contains_key(key), "{what}: `{key}`");
        }
    });
}

fn gemini_parameters_invariants(what: &str, parameters: &Value) {
    const ALLOWED: &[&str] = &[
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
    const FORMATS: &[&str] = &["int32", "int64", "float", "double", "date-time", "enum"];
    every_schema(parameters, &mut |schema| {
        for key in schema.keys() {
            assert!(
                ALLOWED.contains(&key.as_str()),
                "{what}: `{key}` in {schema:?}"
            );
        }
        if let Some(ty) = schema.get("type") {
            assert!(
                ty.as_str().is_some_and(|ty| ty != "null" && !ty.is_empty()),
                "{what}: type {ty}"
            );
        }
        if let Some(Value::Array(values)) = schema.get("enum") {
            assert!(
                values.iter().all(Value::is_string),
                "{what}: enum {values:?}"
            );
        }
        if let Some(format) = schema.get("format") {
            assert!(
                FORMATS.contains(&format.as_str().unwrap_or_default()),
                "{what}"
            );
        }
        if schema.get("type") == Some(&json!("object")) {
            assert!(
                schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .is_some_and(|properties| !properties.is_empty()),
                "{what}: an object without properties"
            );
        }
        assert!(
            schema.contains_key("type") || schema.contains_key("anyOf"),
            "{what}: {schema:?}"
        );
    });
}

// ---------------------------------------------------------------------------------------------
// Helpers

fn zoo_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/schema_zoo")
}

fn compile(schema: &Value, case: &str, what: &str) -> jsonschema::Validator {
    match jsonschema::draft202012::new(schema) {
        Ok(validator) => validator,
        Err(error) => panic!("{case}: {what}: the schema does not compile: {error}"),
    }
}

/// Whether `schema` describes an object.
fn is_object(schema: &Map<String, Value>) -> bool {
    schema.get("type") == Some(&json!("object"))
}

/// Calls `visit` on every schema object in `schema`: the values of the keywords that hold
/// schemas, not the data of `enum`, `const` or `default`.
fn every_schema(schema: &Value, visit: &mut dyn FnMut(&Map<String, Value>)) {
    let Value::Object(object) = schema else {
        return;
    };
    visit(object);
    for (key, value) in object {
        match (key.as_str(), value) {
            (
                "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas",
                Value::Object(entries),
            ) => {
                entries
                    .values()
                    .for_each(|entry| every_schema(entry, visit));
            }
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(items)) => {
                items.iter().for_each(|item| every_schema(item, visit));
            }
            (
                "items"
                | "additionalProperties"
                | "unevaluatedProperties"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "unevaluatedItems",
                value,
            ) => every_schema(value, visit),
            _ => {}
        }
    }
}

/// Whether some `$ref` leads back to a schema that contains it.
fn recursive(root: &Value) -> bool {
    fn visit(root: &Value, schema: &Value, stack: &mut Vec<String>) -> bool {
        let Value::Object(object) = schema else {
            return false;
        };
        if let Some(target) = object.get("$ref").and_then(Value::as_str) {
            if stack.iter().any(|on| on == target) {
                return true;
            }
            let pointer = target.strip_prefix('#').unwrap_or(target);
            if let Some(definition) = root.pointer(pointer) {
                stack.push(target.to_owned());
                let found = visit(root, definition, stack);
                stack.pop();
                if found {
                    return true;
                }
            }
        }
        object
            .iter()
            .any(|(key, value)| match (key.as_str(), value) {
                ("$defs", _) => false,
                (_, Value::Object(_)) => visit(root, value, stack),
                (_, Value::Array(items)) => items.iter().any(|item| visit(root, item, stack)),
                _ => false,
            })
    }
    visit(root, root, &mut vec!["#".to_owned()])
}

/// The schema `schema` names, its references followed.
fn target_of<'a>(root: &'a Value, mut schema: &'a Value) -> &'a Value {
    for _ in 0..32 {
        let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
            break;
        };
        let pointer = reference.strip_prefix('#').unwrap_or(reference);
        match root.pointer(pointer) {
            Some(next) => schema = next,
            None => break,
        }
    }
    schema
}

/// Whether `value` may be an instance of the union alternative `schema`: its type, its
/// literal, the properties it has and the literals among them (a tag).
fn fits(root: &Value, schema: &Value, value: &Value) -> bool {
    let schema = target_of(root, schema);
    if let Some(Value::Array(alternatives)) = schema.get("anyOf") {
        return alternatives
            .iter()
            .any(|alternative| fits(root, alternative, value));
    }
    if let Some(literal) = schema.get("const") {
        return literal == value;
    }
    if let Some(Value::Array(values)) = schema.get("enum") {
        return values.contains(value);
    }
    let ty = schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match value {
        Value::Null => ty == "null",
        Value::Bool(_) => ty == "boolean",
        Value::Number(number) => ty == "number" || (ty == "integer" && !number.is_f64()),
        Value::String(_) => ty == "string",
        Value::Array(_) => ty == "array",
        Value::Object(object) => {
            let Some(Value::Object(properties)) = schema.get("properties") else {
                return ty == "object";
            };
            ty == "object"
                && object.iter().all(|(name, inner)| {
                    properties.get(name).is_some_and(|property| {
                        let property = target_of(root, property);
                        property.get("const").is_none_or(|literal| literal == inner)
                    })
                })
        }
    }
}

/// `value` as the model sends it under OpenAI's strict mode: `null` for every property it
/// leaves out (each such path pushed on `filled`, `[]` for an array's items).
fn complete(
    root: &Value,
    schema: &Value,
    value: &mut Value,
    path: &mut Vec<String>,
    filled: &mut Vec<Vec<String>>,
) {
    let schema = target_of(root, schema);
    if let Some(Value::Array(alternatives)) = schema.get("anyOf") {
        if let Some(alternative) = alternatives
            .iter()
            .find(|alternative| fits(root, alternative, value))
        {
            complete(root, alternative, value, path, filled);
        }
        return;
    }
    match value {
        Value::Object(object) => {
            let Some(Value::Object(properties)) = schema.get("properties") else {
                return;
            };
            for (name, property) in properties {
                path.push(name.clone());
                match object.get_mut(name) {
                    Some(inner) => complete(root, property, inner, path, filled),
                    None => {
                        object.insert(name.clone(), Value::Null);
                        if !filled.contains(path) {
                            filled.push(path.clone());
                        }
                    }
                }
                path.pop();
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                path.push("[]".to_owned());
                for item in items {
                    complete(root, item_schema, item, path, filled);
                }
                path.pop();
            }
        }
        _ => {}
    }
}

/// `instance` as the runtime passes it on: without the `null` at each path (`[]`: every item
/// of an array).
fn without_nulls(instance: &Value, paths: &[Vec<String>]) -> Value {
    fn strip(value: &mut Value, path: &[String]) {
        match (path, value) {
            ([last], Value::Object(object)) if object.get(last).is_some_and(Value::is_null) => {
                object.remove(last);
            }
            ([first, rest @ ..], Value::Array(items)) if first == "[]" => {
                items.iter_mut().for_each(|item| strip(item, rest));
            }
            ([first, rest @ ..], Value::Object(object)) => {
                if let Some(inner) = object.get_mut(first) {
                    strip(inner, rest);
                }
            }
            _ => {}
        }
    }
    let mut stripped = instance.clone();
    for path in paths {
        strip(&mut stripped, path);
    }
    stripped
}

#[test]
fn the_zoo_helpers_fill_and_strip_left_out_properties() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "array", "items": {"$ref": "#/$defs/A"}},
            "e": {"anyOf": [{"type": "string"}, {"type": "null"}]}
        },
        "$defs": {"A": {"anyOf": [
            {"type": "object", "properties": {"k": {"const": "x"}, "c": {"type": "integer"}}},
            {"type": "object", "properties": {"k": {"const": "y"}, "d": {"type": "integer"}}}
        ]}}
    });
    let mut value = json!({"a": [{"k": "x"}, {"k": "y", "d": 1}]});
    let mut filled = Vec::new();
    complete(&schema, &schema, &mut value, &mut Vec::new(), &mut filled);
    assert_eq!(
        value,
        json!({"a": [{"k": "x", "c": null}, {"k": "y", "d": 1}], "e": null})
    );
    let path = |parts: &[&str]| {
        parts
            .iter()
            .map(|part| (*part).to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(filled, [path(&["a", "[]", "c"]), path(&["e"])]);
    assert_eq!(
        without_nulls(&value, &filled),
        json!({"a": [{"k": "x"}, {"k": "y", "d": 1}]})
    );
}
