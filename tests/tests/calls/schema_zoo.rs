//! The canonical schema of realistic parameter types: composed schemas (tagged enums, flatten,
//! `allOf`) accept what the runtime accepts, explicit free-form objects stay open, and closing
//! refuses nothing but extra fields.
//!
//! The property: for every type of the zoo, sampled instances (the serialization of a random
//! value, then one random mutation of it) are accepted alike by the raw schemars schema and by
//! the canonical schema, except an added field, which the canonical schema may refuse; and
//! whatever serde accepts, the canonical schema accepts, except an added field.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tool_runtime::core::schema;

/// A postal address.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Address {
    /// Street and number.
    pub street: String,
    /// City.
    pub city: String,
    /// Postal code, renamed on the wire.
    #[serde(rename = "zip")]
    pub postal_code: Option<String>,
}

/// A unit enum.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Whenever.
    Low,
    /// Soon.
    Normal,
    /// Now.
    Urgent,
}

/// The body of a rectangle: a struct used both as a field and as an enum variant.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RectBody {
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

/// Internally tagged, with a struct variant, a newtype variant of a struct and a unit variant.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Shape {
    /// A circle.
    Circle {
        /// Radius.
        radius: f64,
    },
    /// A rectangle.
    Rect(RectBody),
    /// A point.
    Point,
}

/// Adjacently tagged.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "method", content = "details", rename_all = "snake_case")]
pub enum Payment {
    /// By card.
    Card {
        /// Last four digits.
        last4: String,
    },
    /// By transfer, in cents.
    Transfer(u64),
    /// In cash.
    Cash,
}

/// Untagged.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Amount {
    /// In cents.
    Cents(i64),
    /// As text.
    Text(String),
    /// Split in parts.
    Split {
        /// The parts.
        parts: Vec<u32>,
    },
}

/// Externally tagged (serde's default).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub enum Command {
    /// Stop.
    Stop,
    /// Move by.
    Move(i32),
    /// Go to.
    Goto(u8, u8),
    /// Set a key.
    Set {
        /// Key.
        key: String,
        /// Value.
        value: i64,
    },
}

/// A page, flattened into searches.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Page {
    /// Offset.
    pub offset: u32,
    /// Limit, 10 when absent.
    #[serde(default = "ten")]
    pub limit: u8,
}

fn ten() -> u8 {
    10
}

/// A struct with a flattened struct and a flattened internally tagged enum.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Search {
    /// What to look for.
    pub query: String,
    /// Which page.
    #[serde(flatten)]
    pub page: Page,
    /// Which shape.
    #[serde(flatten)]
    pub shape: Shape,
}

/// Nested structs, one of them also used as an enum variant.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Drawing {
    /// Title.
    pub title: String,
    /// The canvas.
    pub canvas: RectBody,
    /// Shapes on it.
    pub shapes: Vec<Shape>,
}

/// A recursive struct, through `Box`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Node {
    /// Label.
    pub label: String,
    /// The next node.
    pub next: Option<Box<Node>>,
}

/// A date as a plain string with a format.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Event {
    /// Name.
    pub name: String,
    /// The day, `YYYY-MM-DD`.
    #[schemars(extend("format" = "date"))]
    pub on: String,
}

/// Defaults and numbers.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Settings {
    /// Verbose output.
    #[serde(default)]
    pub verbose: bool,
    /// Retries, 3 when absent.
    #[serde(default = "three")]
    pub retries: u8,
    /// A ratio.
    pub ratio: f64,
    /// A big number.
    pub big: i64,
}

fn three() -> u8 {
    3
}

/// What a `#[tool]` makes of one parameter: a closed struct around it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params<T> {
    /// The parameter.
    pub value: T,
}

// ---------------------------------------------------------------------------------------------
// Strategies

fn text() -> impl Strategy<Value = String> {
    "[a-z]{0,6}"
}

fn ratio() -> impl Strategy<Value = f64> {
    -1.0e6..1.0e6_f64
}

fn address() -> impl Strategy<Value = Address> {
    (text(), text(), proptest::option::of(text())).prop_map(|(street, city, postal_code)| Address {
        street,
        city,
        postal_code,
    })
}

fn priority() -> impl Strategy<Value = Priority> {
    prop_oneof![
        Just(Priority::Low),
        Just(Priority::Normal),
        Just(Priority::Urgent)
    ]
}

fn rect() -> impl Strategy<Value = RectBody> {
    (any::<u32>(), any::<u32>()).prop_map(|(width, height)| RectBody { width, height })
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        ratio().prop_map(|radius| Shape::Circle { radius }),
        rect().prop_map(Shape::Rect),
        Just(Shape::Point),
    ]
}

fn payment() -> impl Strategy<Value = Payment> {
    prop_oneof![
        "[0-9]{4}".prop_map(|last4| Payment::Card { last4 }),
        any::<u64>().prop_map(Payment::Transfer),
        Just(Payment::Cash),
    ]
}

fn amount() -> impl Strategy<Value = Amount> {
    prop_oneof![
        any::<i64>().prop_map(Amount::Cents),
        text().prop_map(Amount::Text),
        proptest::collection::vec(any::<u32>(), 0..3).prop_map(|parts| Amount::Split { parts }),
    ]
}

fn command() -> impl Strategy<Value = Command> {
    prop_oneof![
        Just(Command::Stop),
        any::<i32>().prop_map(Command::Move),
        (any::<u8>(), any::<u8>()).prop_map(|(x, y)| Command::Goto(x, y)),
        (text(), any::<i64>()).prop_map(|(key, value)| Command::Set { key, value }),
    ]
}

fn search() -> impl Strategy<Value = Search> {
    (text(), any::<u32>(), any::<u8>(), shape()).prop_map(|(query, offset, limit, shape)| Search {
        query,
        page: Page { offset, limit },
        shape,
    })
}

fn drawing() -> impl Strategy<Value = Drawing> {
    (text(), rect(), proptest::collection::vec(shape(), 0..3)).prop_map(
        |(title, canvas, shapes)| Drawing {
            title,
            canvas,
            shapes,
        },
    )
}

fn node() -> impl Strategy<Value = Node> {
    let leaf = text().prop_map(|label| Node { label, next: None });
    leaf.prop_recursive(3, 4, 1, |inner| {
        (text(), inner).prop_map(|(label, next)| Node {
            label,
            next: Some(Box::new(next)),
        })
    })
}

fn event() -> impl Strategy<Value = Event> {
    (text(), 2000_u32..2030, 1_u32..13, 1_u32..29).prop_map(|(name, year, month, day)| Event {
        name,
        on: format!("{year:04}-{month:02}-{day:02}"),
    })
}

fn settings() -> impl Strategy<Value = Settings> {
    (any::<bool>(), any::<u8>(), ratio(), any::<i64>()).prop_map(
        |(verbose, retries, ratio, big)| Settings {
            verbose,
            retries,
            ratio,
            big,
        },
    )
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        ratio().prop_map(Value::from),
        text().prop_map(Value::from),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            proptest::collection::btree_map(text(), inner, 0..3)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

fn free_map() -> impl Strategy<Value = Map<String, Value>> {
    proptest::collection::btree_map(text(), json_value(), 0..4)
        .prop_map(|map| map.into_iter().collect())
}

// ---------------------------------------------------------------------------------------------
// Schemas and validators

fn raw_schema<T: JsonSchema>() -> Value {
    SchemaSettings::draft2020_12()
        .with(|settings| settings.meta_schema = None)
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

fn validator(schema: &Value) -> jsonschema::Validator {
    match jsonschema::draft202012::new(schema) {
        Ok(validator) => validator,
        Err(error) => panic!("not a valid schema: {error}\n{schema:#}"),
    }
}

fn accepts(validator: &jsonschema::Validator, instance: &Value) -> bool {
    validator.is_valid(instance)
}

/// A change to one node of an instance.
#[derive(Debug, Clone)]
enum Mutation {
    /// Adds a field no type of the zoo has.
    AddField,
    /// Removes one key of an object.
    RemoveKey,
    /// Replaces the node with another value.
    Replace(Value),
    /// Nothing.
    Keep,
}

fn mutation() -> impl Strategy<Value = (usize, usize, Mutation)> {
    let replacement = prop_oneof![
        Just(Value::Null),
        Just(json!(true)),
        Just(json!(0)),
        Just(json!(-1)),
        Just(json!(1.5)),
        Just(json!(2.0)),
        Just(json!(300)),
        Just(json!("x")),
        Just(json!("rect")),
        Just(json!([])),
        Just(json!({})),
    ];
    let change = prop_oneof![
        Just(Mutation::AddField),
        Just(Mutation::RemoveKey),
        replacement.prop_map(Mutation::Replace),
        Just(Mutation::Keep),
    ];
    (any::<usize>(), any::<usize>(), change)
}

/// Every node of `value`, as JSON pointers, parents before children.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            out.push(at.clone());
            for (key, child) in map {
                let key = key.replace('~', "~0").replace('/', "~1");
                pointers(child, format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => {
            out.push(at.clone());
            for (index, child) in items.iter().enumerate() {
                pointers(child, format!("{at}/{index}"), out);
            }
        }
        _ => out.push(at),
    }
}

/// Applies the mutation at the `node`th node; `AddField` and `RemoveKey` pick an object.
/// Returns whether a field was added.
fn apply(instance: &mut Value, node: usize, key: usize, mutation: &Mutation) -> bool {
    let mut all = Vec::new();
    pointers(instance, String::new(), &mut all);
    let objects: Vec<&String> = all
        .iter()
        .filter(|pointer| instance.pointer(pointer).is_some_and(Value::is_object))
        .collect();
    match mutation {
        Mutation::Keep => false,
        Mutation::Replace(replacement) => {
            let pointer = all[node % all.len()].clone();
            if let Some(target) = instance.pointer_mut(&pointer) {
                *target = replacement.clone();
            }
            false
        }
        Mutation::AddField => {
            let pointer = objects[node % objects.len()].clone();
            if let Some(Value::Object(map)) = instance.pointer_mut(&pointer) {
                map.insert("zz_extra".to_owned(), json!(1));
            }
            true
        }
        Mutation::RemoveKey => {
            let pointer = objects[node % objects.len()].clone();
            if let Some(Value::Object(map)) = instance.pointer_mut(&pointer)
                && !map.is_empty()
            {
                let name = map.keys().nth(key % map.len()).cloned().unwrap_or_default();
                map.shift_remove(&name);
            }
            false
        }
    }
}

/// What a lowering for a provider that closes objects only with `additionalProperties`
/// (OpenAI strict, Anthropic strict) can make of a canonical schema: each composition closed
/// with `unevaluatedProperties` merged into plain objects (one per alternative), each closed.
/// Written for the shapes schemars produces: it shows that the canonical form carries what
/// such a provider needs, not how a real lowering must be written.
fn closed_objects_only(schema: &Value) -> Value {
    let mut lowered = lower(schema, schema);
    if let (Some(Value::Object(definitions)), Value::Object(out)) =
        (schema.get("$defs"), &mut lowered)
    {
        let definitions = definitions
            .iter()
            .map(|(name, definition)| (name.clone(), lower(definition, schema)))
            .collect();
        out.insert("$defs".to_owned(), Value::Object(definitions));
    }
    lowered
}

fn lower(node: &Value, root: &Value) -> Value {
    let Value::Object(object) = node else {
        return node.clone();
    };
    if object.get("unevaluatedProperties") == Some(&Value::Bool(false)) {
        let mut variants: Vec<Value> = flatten(object, root)
            .into_iter()
            .map(|mut variant| {
                variant.insert("additionalProperties".to_owned(), Value::Bool(false));
                lower(&Value::Object(variant), root)
            })
            .collect();
        return if variants.len() == 1 {
            variants.remove(0)
        } else {
            json!({ "anyOf": variants })
        };
    }
    let mut out = Map::new();
    for (keyword, value) in object {
        let lowered = match (keyword.as_str(), value) {
            ("$defs", _) => continue,
            ("properties" | "patternProperties", Value::Object(entries)) => Value::Object(
                entries
                    .iter()
                    .map(|(name, entry)| (name.clone(), lower(entry, root)))
                    .collect(),
            ),
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(items)) => {
                Value::Array(items.iter().map(|item| lower(item, root)).collect())
            }
            ("items" | "additionalProperties", value) => lower(value, root),
            (_, value) => value.clone(),
        };
        out.insert(keyword.clone(), lowered);
    }
    Value::Object(out)
}

/// The plain objects a composed object schema stands for: its own keywords merged with those
/// of its `$ref`, its `allOf` parts, and each of its alternatives in turn.
fn flatten(object: &Map<String, Value>, root: &Value) -> Vec<Map<String, Value>> {
    let mut own = object.clone();
    let reference = own.shift_remove("$ref");
    let all = own.shift_remove("allOf");
    let union = own
        .shift_remove("oneOf")
        .or_else(|| own.shift_remove("anyOf"));
    own.shift_remove("unevaluatedProperties");
    let part = |schema: &Value| match schema.as_object() {
        Some(part) => flatten(part, root),
        None => vec![Map::new()],
    };
    let mut choices: Vec<Vec<Map<String, Value>>> = Vec::new();
    if let Some(target) = reference
        .as_ref()
        .and_then(Value::as_str)
        .and_then(|reference| root.pointer(reference.trim_start_matches('#')))
    {
        choices.push(part(target));
    }
    if let Some(Value::Array(parts)) = &all {
        choices.extend(parts.iter().map(part));
    }
    if let Some(Value::Array(alternatives)) = &union {
        choices.push(alternatives.iter().flat_map(part).collect());
    }
    let mut variants = vec![own];
    for options in choices {
        variants = variants
            .iter()
            .flat_map(|variant| options.iter().map(move |option| merge(variant, option)))
            .collect();
    }
    variants
}

fn merge(into: &Map<String, Value>, from: &Map<String, Value>) -> Map<String, Value> {
    let mut out = into.clone();
    for (keyword, value) in from {
        match (keyword.as_str(), out.get_mut(keyword)) {
            ("properties", Some(Value::Object(properties))) => {
                if let Value::Object(more) = value {
                    for (name, property) in more {
                        properties
                            .entry(name.clone())
                            .or_insert_with(|| property.clone());
                    }
                }
            }
            ("required", Some(Value::Array(required))) => {
                for name in value.as_array().into_iter().flatten() {
                    if !required.contains(name) {
                        required.push(name.clone());
                    }
                }
            }
            (_, Some(_)) => {}
            (_, None) => {
                out.insert(keyword.clone(), value.clone());
            }
        }
    }
    out
}

/// Whether the mutation put a number where the value had a string: serde reads a number as
/// the index of a variant (a tag `"type": 0`), which no schema says. The runtime refuses such
/// a call, by the schema.
fn names_a_variant_by_index(original: &Value, node: usize, change: &Mutation) -> bool {
    let mut all = Vec::new();
    pointers(original, String::new(), &mut all);
    matches!(change, Mutation::Replace(Value::Number(_)))
        && original
            .pointer(&all[node % all.len()])
            .is_some_and(Value::is_string)
}

/// Checks the property for one type, as a `#[tool]` parameter (inside `Params`) and, for a
/// struct, as the parameters themselves.
fn check<T, S>(strategy: S)
where
    T: JsonSchema + Serialize + DeserializeOwned + Debug,
    S: Strategy<Value = T>,
{
    check_root::<Params<T>, _>(strategy.prop_map(|value| Params { value }));
}

fn check_root<T, S>(strategy: S)
where
    T: JsonSchema + Serialize + DeserializeOwned + Debug,
    S: Strategy<Value = T>,
{
    let raw = raw_schema::<T>();
    let canonical = schema::input_schema_for::<T>();
    let mut again = canonical.clone();
    schema::canonicalize(&mut again);
    schema::close_root(&mut again);
    assert_eq!(again, canonical, "canonicalization is idempotent");
    let lowered = closed_objects_only(&canonical);
    assert!(
        !lowered.to_string().contains("unevaluatedProperties"),
        "{lowered:#}"
    );
    let (raw_validator, canonical_validator) = (validator(&raw), validator(&canonical));
    let lowered_validator = validator(&lowered);
    let mut runner = TestRunner::new(Config {
        cases: 128,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&(strategy, mutation()), |(value, (node, key, change))| {
        let original = match serde_json::to_value(&value) {
            Ok(instance) => instance,
            Err(error) => panic!("{value:?} does not serialize: {error}"),
        };
        prop_assert!(
            accepts(&canonical_validator, &original),
            "the canonical schema refuses a value of the type: {original}\n{canonical:#}"
        );
        prop_assert!(
            accepts(&raw_validator, &original),
            "the raw schema refuses a value of the type: {original}\n{raw:#}"
        );
        let mut instance = original.clone();
        let added = apply(&mut instance, node, key, &change);
        for sample in [&original, &instance] {
            prop_assert_eq!(
                accepts(&canonical_validator, sample),
                accepts(&lowered_validator, sample),
                "closed with additionalProperties only, the schema says otherwise on {}\ncanonical: {:#}\nlowered: {:#}",
                sample,
                canonical,
                lowered
            );
        }
        let (by_raw, by_canonical) = (
            accepts(&raw_validator, &instance),
            accepts(&canonical_validator, &instance),
        );
        let by_serde = serde_json::from_value::<T>(instance.clone()).is_ok();
        if added {
            prop_assert!(
                by_raw || !by_canonical,
                "the canonical schema accepts an added field the raw one refuses: {instance}\n{canonical:#}"
            );
        } else {
            prop_assert_eq!(
                by_raw,
                by_canonical,
                "raw and canonical disagree on {} ({:?})\nraw: {:#}\ncanonical: {:#}",
                instance,
                change,
                raw,
                canonical
            );
            prop_assert!(
                !by_serde || by_canonical || names_a_variant_by_index(&original, node, &change),
                "serde accepts what the canonical schema refuses: {instance}\n{canonical:#}"
            );
        }
        Ok(())
    });
    if let Err(error) = result {
        panic!("{}: {error}", std::any::type_name::<T>());
    }
}

#[test]
fn structs_options_and_renames() {
    check(address());
    check(proptest::option::of(address()));
    check(address().prop_map(Box::new));
    check(drawing());
    check(event());
    check(settings());
}

#[test]
fn enums_of_every_representation() {
    check(priority());
    check(shape());
    check(payment());
    check(amount());
    check(command());
    check(proptest::collection::vec(shape(), 0..3));
}

#[test]
fn flattened_structs_and_tagged_enums() {
    check(search());
    check_root(search());
}

#[test]
fn collections_maps_and_free_form_objects() {
    check(proptest::collection::hash_map(text(), any::<u32>(), 0..3));
    check(proptest::collection::hash_map(text(), address(), 0..3));
    check(proptest::collection::btree_map(text(), priority(), 0..3));
    check(proptest::collection::btree_set(text(), 0..4));
    check(free_map());
    check(free_map().prop_map(|map| map.into_iter().collect::<HashMap<String, Value>>()));
    check(json_value());
}

#[test]
fn numbers_tuples_and_recursion() {
    check(any::<u8>());
    check(any::<i64>());
    check(ratio());
    check((any::<u8>(), text(), any::<bool>()));
    check(node());
    check_root(node());
}

// ---------------------------------------------------------------------------------------------
// The reproduced cases, one by one.

fn canonical_accepts(schema: &Value, instance: Value) -> bool {
    validator(schema).is_valid(&instance)
}

#[test]
fn an_internally_tagged_struct_variant_is_accepted() {
    let schema = schema::input_schema_for::<Params<Shape>>();
    let call = json!({"value": {"type": "rect", "width": 2, "height": 3}});
    assert!(serde_json::from_value::<Params<Shape>>(call.clone()).is_ok());
    assert!(canonical_accepts(&schema, call), "{schema:#}");
    let extra = json!({"value": {"type": "rect", "width": 2, "height": 3, "depth": 1}});
    assert!(!canonical_accepts(&schema, extra), "{schema:#}");
}

#[test]
fn a_flattened_tagged_enum_is_accepted() {
    let schema = schema::input_schema_for::<Search>();
    let call = json!({"query": "q", "offset": 0, "type": "circle", "radius": 1.5});
    assert!(serde_json::from_value::<Search>(call.clone()).is_ok());
    assert!(canonical_accepts(&schema, call), "{schema:#}");
    let call =
        json!({"query": "q", "offset": 0, "limit": 5, "type": "rect", "width": 1, "height": 1});
    assert!(canonical_accepts(&schema, call), "{schema:#}");
    let extra = json!({"query": "q", "offset": 0, "type": "point", "radius": 1.5});
    assert!(!canonical_accepts(&schema, extra), "{schema:#}");
}

#[test]
fn all_of_object_schemas_is_closed_once_composed() {
    let mut composed = json!({
        "type": "object",
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"$ref": "#/$defs/B"}
        ],
        "$defs": {"B": {"type": "object", "properties": {"b": {"type": "integer"}}}}
    });
    schema::canonicalize(&mut composed);
    schema::close_root(&mut composed);
    assert!(
        canonical_accepts(&composed, json!({"a": "x", "b": 1})),
        "{composed:#}"
    );
    assert!(
        canonical_accepts(&composed, json!({"a": "x"})),
        "{composed:#}"
    );
    assert!(
        !canonical_accepts(&composed, json!({"a": "x", "c": 1})),
        "{composed:#}"
    );
    assert!(
        !canonical_accepts(&composed, json!({"b": 1})),
        "{composed:#}"
    );
}

#[test]
fn explicit_free_form_objects_stay_open() {
    let mut nested = json!({
        "type": "object",
        "properties": {"meta": {"type": "object"}, "point": {"type": "object", "properties": {"x": {"type": "number"}}}}
    });
    schema::canonicalize(&mut nested);
    schema::close_root(&mut nested);
    assert!(
        canonical_accepts(&nested, json!({"meta": {"anything": [1, 2]}})),
        "{nested:#}"
    );
    assert!(
        !canonical_accepts(&nested, json!({"point": {"x": 1, "y": 2}})),
        "{nested:#}"
    );
    assert!(
        !canonical_accepts(&nested, json!({"other": 1})),
        "{nested:#}"
    );

    let mut root = json!({"type": "object"});
    schema::canonicalize(&mut root);
    schema::close_root(&mut root);
    assert!(
        canonical_accepts(&root, json!({"any": "thing"})),
        "{root:#}"
    );
    assert_eq!(root["type"], "object");
    assert_eq!(root["properties"], json!({}));

    for schema in [
        schema::input_schema_for::<Params<Map<String, Value>>>(),
        schema::input_schema_for::<Params<HashMap<String, Value>>>(),
        schema::input_schema_for::<Params<BTreeMap<String, Value>>>(),
    ] {
        assert!(
            canonical_accepts(&schema, json!({"value": {"k": {"deep": true}}})),
            "{schema:#}"
        );
    }
}

#[test]
fn a_struct_used_whole_and_as_a_variant_is_closed_where_whole() {
    let schema = schema::input_schema_for::<Drawing>();
    let rect = json!({"title": "t", "canvas": {"width": 1, "height": 1}, "shapes": [{"type": "rect", "width": 1, "height": 2}]});
    assert!(canonical_accepts(&schema, rect.clone()), "{schema:#}");
    let mut extra = rect.clone();
    extra["canvas"]["depth"] = json!(1);
    assert!(!canonical_accepts(&schema, extra), "{schema:#}");
    let mut extra = rect;
    extra["shapes"][0]["depth"] = json!(1);
    assert!(!canonical_accepts(&schema, extra), "{schema:#}");
}
