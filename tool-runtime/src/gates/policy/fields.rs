//! Whether a rule over a field can hold for its tool, from the tool's input schema.
//!
//! A rule reads its field as [`Policy::decide`](super::Policy) does: each step of the dotted
//! path is an object's key, so the path is followed through `properties` (across `$ref`,
//! `anyOf`, `oneOf` and `allOf`, as an `Option` of a struct is `anyOf [{$ref}, {type: null}]`),
//! and never into an array's items. The value is then compared with what the field may be:
//! its `type` (one or several), `enum`, `const`, and an array's `items`.
//!
//! Where the schema cannot tell (no type, a free-form `Value`, an object of any keys,
//! `patternProperties`, a reference outside the schema), the rule is accepted: only a rule
//! that can never hold is refused.

use serde_json::{Map, Value};

use super::{Compare, same_value};

/// How many schema nodes one rule's check looks at; past it (a recursive or very wide
/// schema), the rule is accepted.
const BUDGET: usize = 1024;

/// How deep one schema is followed through references and compositions.
const MAX_DEPTH: usize = 32;

/// Why a rule can never hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Problem {
    /// A step of the path is not a field of the arguments.
    UnknownField {
        /// What the arguments have instead.
        problem: String,
        /// The nearest field's whole path.
        nearest: Option<String>,
    },
    /// The value cannot compare with the field.
    Mismatch(String),
}

/// Checks a rule over `path` of arguments described by `schema`.
pub(crate) fn check(
    schema: &Value,
    path: &str,
    compare: Compare,
    value: &Value,
) -> Result<(), Problem> {
    let steps: Vec<&str> = path.split('.').collect();
    let mut budget = BUDGET;
    match walk(schema, vec![schema], &steps, &mut budget) {
        Walked::Open => Ok(()),
        Walked::Field(nodes) => {
            let shape = nodes.iter().fold(Shape::nothing(), |shape, node| {
                shape.join(shape_of(schema, node, 0, &mut budget))
            });
            if budget == 0 {
                return Ok(());
            }
            check_value(&shape, path, compare, value).map_err(Problem::Mismatch)
        }
        Walked::Missing { at, fields, parent } => {
            Err(missing(schema, &steps, at, &fields, &parent, &mut budget))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Following the path

enum Walked<'a> {
    /// The schema cannot tell what is there.
    Open,
    /// The schemas the field may have.
    Field(Vec<&'a Value>),
    /// Step `at` is not a field of `parent`, which has `fields`.
    Missing {
        at: usize,
        fields: Vec<&'a str>,
        parent: Vec<&'a Value>,
    },
}

enum Step<'a> {
    Open,
    Found(Vec<&'a Value>),
    Missing(Vec<&'a str>),
}

fn walk<'a>(
    root: &'a Value,
    mut nodes: Vec<&'a Value>,
    steps: &[&str],
    budget: &mut usize,
) -> Walked<'a> {
    for (at, key) in steps.iter().enumerate() {
        match child(root, &nodes, key, budget) {
            Step::Open => return Walked::Open,
            Step::Found(found) => nodes = found,
            Step::Missing(fields) => {
                return Walked::Missing {
                    at,
                    fields,
                    parent: nodes,
                };
            }
        }
    }
    Walked::Field(nodes)
}

/// The schemas of `key` in an object described by any of `nodes`.
fn child<'a>(root: &'a Value, nodes: &[&'a Value], key: &str, budget: &mut usize) -> Step<'a> {
    let Some(parts) = parts(root, nodes, budget) else {
        return Step::Open;
    };
    let mut found = Vec::new();
    let mut fields: Vec<&str> = Vec::new();
    for part in parts {
        // `true`, or something that is not a schema object: anything.
        let Some(object) = part.as_object() else {
            return Step::Open;
        };
        match may_be_object(object) {
            Some(true) => {}
            Some(false) => continue,
            None => return Step::Open,
        }
        let properties = object.get("properties").and_then(Value::as_object);
        if let Some(properties) = properties {
            for name in properties.keys() {
                if !fields.contains(&name.as_str()) {
                    fields.push(name);
                }
            }
            if let Some(schema) = properties.get(key) {
                found.push(schema);
                continue;
            }
        }
        if object.contains_key("patternProperties") {
            return Step::Open;
        }
        for keyword in ["additionalProperties", "unevaluatedProperties"] {
            match object.get(keyword) {
                None | Some(Value::Bool(false)) => {}
                // A map: any key, its values as the schema says.
                Some(schema @ Value::Object(_)) => found.push(schema),
                Some(_) => return Step::Open,
            }
        }
        if says_nothing_about_fields(object) {
            return Step::Open;
        }
    }
    if found.is_empty() {
        Step::Missing(fields)
    } else {
        Step::Found(found)
    }
}

/// Each of `nodes`, and every schema it is composed of (references followed), in order;
/// `None` when that is more than the budget or a reference leads outside the schema.
fn parts<'a>(root: &'a Value, nodes: &[&'a Value], budget: &mut usize) -> Option<Vec<&'a Value>> {
    let mut stack: Vec<(&Value, usize)> = nodes.iter().rev().map(|node| (*node, 0)).collect();
    let mut parts = Vec::new();
    while let Some((node, depth)) = stack.pop() {
        if *budget == 0 || depth > MAX_DEPTH {
            return None;
        }
        *budget -= 1;
        parts.push(node);
        let Some(object) = node.as_object() else {
            continue;
        };
        let mut inner: Vec<&Value> = Vec::new();
        if object.contains_key("$ref") {
            inner.push(local_target(root, object)?);
        }
        for keyword in ["allOf", "anyOf", "oneOf"] {
            if let Some(alternatives) = object.get(keyword).and_then(Value::as_array) {
                inner.extend(alternatives);
            }
        }
        for keyword in ["then", "else"] {
            inner.extend(object.get(keyword));
        }
        if let Some(dependent) = object.get("dependentSchemas").and_then(Value::as_object) {
            inner.extend(dependent.values());
        }
        stack.extend(inner.into_iter().rev().map(|part| (part, depth + 1)));
    }
    Some(parts)
}

/// Whether a schema part may describe an object: `None` when it allows objects it cannot
/// describe key by key (an `enum` or `const` of objects).
fn may_be_object(object: &Map<String, Value>) -> Option<bool> {
    if object
        .get("type")
        .is_some_and(|ty| !kinds_of_type(ty).has(Kinds::OBJECT))
    {
        return Some(false);
    }
    let constants: Vec<&Value> = match (object.get("const"), object.get("enum")) {
        (Some(constant), _) => vec![constant],
        (None, Some(Value::Array(values))) => values.iter().collect(),
        _ => return Some(true),
    };
    if constants.iter().any(|constant| constant.is_object()) {
        None
    } else {
        Some(false)
    }
}

/// Whether a part that may be an object says nothing about its keys: any object fits.
fn says_nothing_about_fields(object: &Map<String, Value>) -> bool {
    const ABOUT_FIELDS: &[&str] = &[
        "properties",
        "additionalProperties",
        "unevaluatedProperties",
        "patternProperties",
        "$ref",
        "allOf",
        "anyOf",
        "oneOf",
        "if",
        "then",
        "else",
        "dependentSchemas",
    ];
    !ABOUT_FIELDS
        .iter()
        .any(|keyword| object.contains_key(*keyword))
}

fn local_target<'a>(root: &'a Value, object: &Map<String, Value>) -> Option<&'a Value> {
    object
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| reference.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer))
}

/// Why step `at` of the path is not there, with the nearest field that is.
fn missing(
    root: &Value,
    steps: &[&str],
    at: usize,
    fields: &[&str],
    parent: &[&Value],
    budget: &mut usize,
) -> Problem {
    let prefix = steps[..at].join(".");
    let key = steps[at];
    let parent_shape = parent.iter().fold(Shape::nothing(), |shape, node| {
        shape.join(shape_of(root, node, 0, budget))
    });
    let kinds = parent_shape.kinds().without(Kinds::NULL);
    if !kinds.has(Kinds::OBJECT) && !kinds.is_empty() {
        let what = parent_shape.describe();
        let problem = if kinds.has(Kinds::ARRAY) {
            format!(
                "but `{prefix}` is {what}: a rule reads fields by name and never looks inside \
                 an array (`contains` tests its items)"
            )
        } else {
            format!("but `{prefix}` is {what}, which has no fields")
        };
        return Problem::UnknownField {
            problem,
            nearest: None,
        };
    }
    let listed = fields.join(", ");
    let problem = match (at, fields.is_empty()) {
        (0, true) => {
            "which the tool's arguments do not have (the tool takes no arguments)".to_owned()
        }
        (0, false) => format!("which the tool's arguments do not have (fields: {listed})"),
        (_, true) => format!("which the tool's arguments do not have (`{prefix}` has no fields)"),
        (_, false) => {
            format!("which the tool's arguments do not have (fields of `{prefix}`: {listed})")
        }
    };
    let nearest = tool_core::nearest_name(key, fields).map(|near| {
        let mut corrected: Vec<&str> = steps.to_vec();
        corrected[at] = near;
        // The whole path when the rest of it is there from the nearest field; else up to it.
        let whole = !matches!(
            walk(root, vec![root], &corrected, budget),
            Walked::Missing { .. }
        );
        let until = if whole { corrected.len() } else { at + 1 };
        corrected[..until].join(".")
    });
    Problem::UnknownField { problem, nearest }
}

// ---------------------------------------------------------------------------------------------
// What a field may be

/// JSON kinds, as bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Kinds(u8);

impl Kinds {
    const NONE: Self = Self(0);
    const NULL: Self = Self(1);
    const BOOLEAN: Self = Self(1 << 1);
    const NUMBER: Self = Self(1 << 2);
    const STRING: Self = Self(1 << 3);
    const ARRAY: Self = Self(1 << 4);
    const OBJECT: Self = Self(1 << 5);
    const ALL: Self = Self((1 << 6) - 1);

    fn of(value: &Value) -> Self {
        match value {
            Value::Null => Self::NULL,
            Value::Bool(_) => Self::BOOLEAN,
            Value::Number(_) => Self::NUMBER,
            Value::String(_) => Self::STRING,
            Value::Array(_) => Self::ARRAY,
            Value::Object(_) => Self::OBJECT,
        }
    }

    const fn has(self, other: Self) -> bool {
        self.0 & other.0 == other.0 && other.0 != 0
    }

    const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    const fn meet(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }

    const fn without(self, other: Self) -> Self {
        Self(self.0 & !other.0)
    }

    const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The kinds one at a time, in the order messages name them.
    fn each(self) -> impl Iterator<Item = Self> {
        [
            Self::NUMBER,
            Self::STRING,
            Self::BOOLEAN,
            Self::ARRAY,
            Self::OBJECT,
            Self::NULL,
        ]
        .into_iter()
        .filter(move |kind| self.has(*kind))
    }

    const fn name(self) -> &'static str {
        match self {
            Self::NULL => "null",
            Self::BOOLEAN => "a boolean",
            Self::NUMBER => "a number",
            Self::STRING => "a string",
            Self::ARRAY => "an array",
            Self::OBJECT => "an object",
            _ => "a value",
        }
    }

    const fn plural(self) -> &'static str {
        match self {
            Self::NULL => "nulls",
            Self::BOOLEAN => "booleans",
            Self::NUMBER => "numbers",
            Self::STRING => "strings",
            Self::ARRAY => "arrays",
            Self::OBJECT => "objects",
            _ => "values",
        }
    }
}

/// The kinds a `type` keyword allows (`"integer"` is a number); an unknown one says nothing.
fn kinds_of_type(ty: &Value) -> Kinds {
    let one = |name: &str| match name {
        "null" => Kinds::NULL,
        "boolean" => Kinds::BOOLEAN,
        "integer" | "number" => Kinds::NUMBER,
        "string" => Kinds::STRING,
        "array" => Kinds::ARRAY,
        "object" => Kinds::OBJECT,
        _ => Kinds::ALL,
    };
    match ty {
        Value::String(name) => one(name),
        Value::Array(names) => names
            .iter()
            .map(|name| name.as_str().map_or(Kinds::ALL, one))
            .fold(Kinds::NONE, Kinds::union),
        _ => Kinds::ALL,
    }
}

/// What a schema lets a value be.
#[derive(Debug, Clone, PartialEq)]
struct Shape {
    /// Kinds of which every value is allowed.
    open: Kinds,
    /// Further values allowed one by one (`enum`, `const`).
    values: Vec<Value>,
    /// What an array's items may be, when the schema says (`None`: anything).
    items: Option<Box<Shape>>,
}

impl Shape {
    /// Any value.
    const fn any() -> Self {
        Self {
            open: Kinds::ALL,
            values: Vec::new(),
            items: None,
        }
    }

    /// No value: what joining starts from.
    const fn nothing() -> Self {
        Self {
            open: Kinds::NONE,
            values: Vec::new(),
            items: None,
        }
    }

    fn kinds(&self) -> Kinds {
        self.values
            .iter()
            .fold(self.open, |kinds, value| kinds.union(Kinds::of(value)))
    }

    fn allows(&self, value: &Value) -> bool {
        self.open.has(Kinds::of(value)) || self.values.iter().any(|v| same_value(v, value))
    }

    /// A value that fits one or the other (`anyOf`, `oneOf`).
    fn join(self, other: Self) -> Self {
        let items = match (
            self.kinds().has(Kinds::ARRAY),
            other.kinds().has(Kinds::ARRAY),
        ) {
            (true, true) => match (self.items, other.items) {
                (Some(mine), Some(theirs)) => Some(Box::new(mine.join(*theirs))),
                _ => None,
            },
            (true, false) => self.items,
            (false, true) => other.items,
            (false, false) => None,
        };
        let mut values = self.values;
        values.extend(other.values);
        Self {
            open: self.open.union(other.open),
            values,
            items,
        }
    }

    /// A value that fits both (keywords side by side, `allOf`).
    fn meet(self, other: Self) -> Self {
        let mut values: Vec<Value> = self
            .values
            .iter()
            .filter(|value| other.allows(value))
            .cloned()
            .collect();
        for value in &other.values {
            if self.allows(value) && !values.iter().any(|kept| same_value(kept, value)) {
                values.push(value.clone());
            }
        }
        let items = match (self.items, other.items) {
            (Some(mine), Some(theirs)) => Some(Box::new(mine.meet(*theirs))),
            (mine, theirs) => mine.or(theirs),
        };
        Self {
            open: self.open.meet(other.open),
            values,
            items,
        }
    }

    /// `a number`, `a string or an array of strings`: the kinds a rule can match (null is
    /// matched by none).
    fn describe(&self) -> String {
        let kinds = self.kinds().without(Kinds::NULL);
        let names: Vec<String> = kinds
            .each()
            .map(|kind| {
                let items = self
                    .items
                    .as_ref()
                    .map(|items| items.kinds().without(Kinds::NULL));
                match items {
                    Some(items) if kind == Kinds::ARRAY && items.each().count() == 1 => {
                        format!("an array of {}", items.plural())
                    }
                    _ => kind.name().to_owned(),
                }
            })
            .collect();
        names.join(" or ")
    }
}

fn shape_of(root: &Value, node: &Value, depth: usize, budget: &mut usize) -> Shape {
    if *budget == 0 || depth > MAX_DEPTH {
        *budget = 0;
        return Shape::any();
    }
    *budget -= 1;
    let Some(object) = node.as_object() else {
        return Shape::any();
    };
    let mut shape = Shape::any();
    if let Some(ty) = object.get("type") {
        shape.open = kinds_of_type(ty);
    }
    if let Some(items) = object.get("items") {
        shape.items = Some(Box::new(shape_of(root, items, depth + 1, budget)));
    }
    if let Some(constant) = object.get("const") {
        shape = shape.meet(Shape {
            open: Kinds::NONE,
            values: vec![constant.clone()],
            items: None,
        });
    }
    if let Some(Value::Array(values)) = object.get("enum") {
        shape = shape.meet(Shape {
            open: Kinds::NONE,
            values: values.clone(),
            items: None,
        });
    }
    if let Some(target) = local_target(root, object) {
        shape = shape.meet(shape_of(root, target, depth + 1, budget));
    }
    for keyword in ["anyOf", "oneOf"] {
        if let Some(alternatives) = object.get(keyword).and_then(Value::as_array) {
            let either = alternatives
                .iter()
                .fold(Shape::nothing(), |either, alternative| {
                    either.join(shape_of(root, alternative, depth + 1, budget))
                });
            shape = shape.meet(either);
        }
    }
    if let Some(parts) = object.get("allOf").and_then(Value::as_array) {
        for part in parts {
            shape = shape.meet(shape_of(root, part, depth + 1, budget));
        }
    }
    shape
}

// ---------------------------------------------------------------------------------------------
// Comparing with the value

/// Why `value` cannot be the field, or `None` when it can.
enum Misfit {
    /// Not of a kind the field takes.
    Kind,
    /// Of its kind, but not one of the only values it takes.
    NotAmong(Vec<Value>),
}

fn misfit(shape: &Shape, value: &Value) -> Option<Misfit> {
    let kinds = shape.kinds();
    if !kinds.has(Kinds::of(value)) {
        Some(Misfit::Kind)
    } else if shape.allows(value) {
        None
    } else {
        let among = shape
            .values
            .iter()
            .filter(|allowed| Kinds::of(allowed) == Kinds::of(value))
            .cloned()
            .collect();
        Some(Misfit::NotAmong(among))
    }
}

fn check_value(shape: &Shape, path: &str, compare: Compare, value: &Value) -> Result<(), String> {
    let op = compare.as_str();
    let field_kinds = shape.kinds().without(Kinds::NULL);
    // Null only, or nothing the schema can say: accepted.
    if field_kinds.is_empty() {
        return Ok(());
    }
    let mismatch = |value: &Value, whole: &Shape, subject: &str| -> Result<(), String> {
        if value.is_null() {
            return Err(format!(
                "compares `{path}` with null using `{op}`, which never holds: a rule matches no \
                 null or absent argument (`present` tests whether one is given)"
            ));
        }
        match misfit(whole, value) {
            None => Ok(()),
            Some(Misfit::Kind) => Err(format!(
                "compares `{path}` ({}) with {value} ({}) using `{op}`",
                shape.describe(),
                Kinds::of(value).name()
            )),
            Some(Misfit::NotAmong(among)) => Err(not_among(path, op, value, subject, &among)),
        }
    };
    let subject = format!("`{path}` is");
    match compare {
        Compare::Present | Compare::Ne => Ok(()),
        Compare::Eq => mismatch(value, shape, &subject),
        Compare::Gt | Compare::Ge | Compare::Lt | Compare::Le => {
            if !(value.is_number() || value.is_string()) {
                return Err(format!(
                    "compares `{path}` with {value} using `{op}`, which orders numbers and \
                     strings only"
                ));
            }
            // An order holds within a kind, for any value of it: enums are not checked.
            let kinds_only = Shape {
                open: shape.kinds(),
                values: Vec::new(),
                items: None,
            };
            if misfit(&kinds_only, value).is_some() {
                return Err(format!(
                    "compares `{path}` ({}) with {value} ({}) using `{op}`",
                    shape.describe(),
                    Kinds::of(value).name()
                ));
            }
            Ok(())
        }
        Compare::In => {
            let Some(items) = value.as_array() else {
                return Err(format!(
                    "compares `{path}` with {value} using `in`, which needs an array of the \
                     values `{path}` may be"
                ));
            };
            if items.is_empty() {
                return Err(format!(
                    "compares `{path}` with [] using `in`: an empty list never holds"
                ));
            }
            items
                .iter()
                .try_for_each(|item| mismatch(item, shape, &subject))
        }
        Compare::Contains => {
            if !(field_kinds.has(Kinds::STRING) || field_kinds.has(Kinds::ARRAY)) {
                return Err(format!(
                    "uses `contains` on `{path}` ({}), which is neither a string nor an array",
                    shape.describe()
                ));
            }
            if field_kinds.has(Kinds::STRING) && value.is_string() {
                return Ok(());
            }
            if field_kinds.has(Kinds::ARRAY) {
                let Some(items) = &shape.items else {
                    return Ok(());
                };
                // An array may hold nulls: `contains` null can hold where its items can be null.
                return match misfit(items, value) {
                    None => Ok(()),
                    Some(Misfit::Kind) => Err(format!(
                        "compares `{path}` ({}) with {value} ({}) using `contains`",
                        shape.describe(),
                        Kinds::of(value).name()
                    )),
                    Some(Misfit::NotAmong(among)) => Err(not_among(
                        path,
                        op,
                        value,
                        &format!("each item of `{path}` is"),
                        &among,
                    )),
                };
            }
            Err(format!(
                "compares `{path}` ({}) with {value} ({}) using `contains`",
                shape.describe(),
                Kinds::of(value).name()
            ))
        }
    }
}

/// `compares `speed` with "instnat" using `eq`, but `speed` is one of "standard",
/// "instant"; did you mean "instant"?`
fn not_among(path: &str, op: &str, value: &Value, subject: &str, among: &[Value]) -> String {
    const SHOWN: usize = 12;
    let mut listed: Vec<String> = among.iter().take(SHOWN).map(Value::to_string).collect();
    if among.len() > SHOWN {
        listed.push(format!("and {} more", among.len() - SHOWN));
    }
    let names: Vec<&str> = among.iter().filter_map(Value::as_str).collect();
    let nearest = value
        .as_str()
        .and_then(|text| tool_core::nearest_name(text, &names))
        .map(|near| format!("; did you mean {}?", Value::from(near)))
        .unwrap_or_default();
    let choice = if among.len() == 1 { "" } else { "one of " };
    format!(
        "compares `{path}` with {value} using `{op}`, but {subject} {choice}{}{nearest}",
        listed.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "amount": {"type": "number"},
                "to": {"type": "string"},
                "address": {"$ref": "#/$defs/Address"},
                "maybe": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]},
                "count": {"type": ["integer", "null"]},
                "speed": {"$ref": "#/$defs/Speed"},
                "level": {"enum": ["low", "high"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "codes": {"type": "array", "items": {"$ref": "#/$defs/Speed"}},
                "map": {"type": "object", "additionalProperties": {"type": "integer"}},
                "free": {"type": "object", "additionalProperties": {}},
                "any": {"description": "anything"},
                "pattern": {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
                "flag": {"type": "boolean"},
                "fixed": {"const": 3},
                "shape": {
                    "oneOf": [
                        {"type": "object", "properties": {"kind": {"const": "circle"}, "radius": {"type": "number"}}},
                        {"type": "object", "properties": {"kind": {"const": "square"}, "side": {"type": "number"}}}
                    ]
                },
                "both": {"allOf": [
                    {"type": "object", "properties": {"a": {"type": "string"}}},
                    {"type": "object", "properties": {"b": {"type": "integer"}}}
                ]},
                "remote": {"$ref": "https://example.com/schema.json"},
                "tree": {"$ref": "#/$defs/Tree"}
            },
            "$defs": {
                "Address": {"type": "object", "additionalProperties": false, "properties": {"city": {"type": "string"}}},
                "Speed": {"oneOf": [{"type": "string", "const": "standard"}, {"type": "string", "const": "instant"}]},
                "Tree": {"type": "object", "properties": {"child": {"anyOf": [{"$ref": "#/$defs/Tree"}, {"type": "null"}]}, "name": {"type": "string"}}}
            }
        })
    }

    fn holds(path: &str, compare: Compare, value: Value) -> Result<(), Problem> {
        check(&schema(), path, compare, &value)
    }

    fn accepted(path: &str, compare: Compare, value: Value) {
        let checked = holds(path, compare, value.clone());
        assert_eq!(checked, Ok(()), "{path} {compare:?} {value}");
    }

    fn mismatch(path: &str, compare: Compare, value: Value) -> String {
        match holds(path, compare, value.clone()) {
            Err(Problem::Mismatch(message)) => message,
            other => panic!("{path} {compare:?} {value}: {other:?}"),
        }
    }

    fn unknown(path: &str) -> (String, Option<String>) {
        match holds(path, Compare::Present, Value::Null) {
            Err(Problem::UnknownField { problem, nearest }) => (problem, nearest),
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn fields_are_followed_through_refs_options_unions_and_compositions() {
        for path in [
            "amount",
            "address.city",
            "maybe.city",
            "shape.radius",
            "shape.side",
            "shape.kind",
            "both.a",
            "both.b",
            "tree.child.child.name",
        ] {
            accepted(path, Compare::Present, Value::Null);
        }
        assert_eq!(
            unknown("amout"),
            (
                "which the tool's arguments do not have (fields: amount, to, address, maybe, \
                 count, speed, level, tags, codes, map, free, any, pattern, flag, fixed, shape, \
                 both, remote, tree)"
                    .to_owned(),
                Some("amount".to_owned())
            )
        );
        assert_eq!(
            unknown("maybe.cty"),
            (
                "which the tool's arguments do not have (fields of `maybe`: city)".to_owned(),
                Some("maybe.city".to_owned())
            )
        );
        assert_eq!(unknown("shape.radios").1.as_deref(), Some("shape.radius"));
        assert_eq!(unknown("both.zzzz").1, None);
        assert_eq!(unknown("adress.city").1.as_deref(), Some("address.city"));
    }

    #[test]
    fn where_the_schema_cannot_tell_the_rule_is_accepted() {
        accepted("map.anything", Compare::Gt, json!(3));
        accepted("free.a.b.c", Compare::Eq, json!("x"));
        accepted("any.a", Compare::Contains, json!(1));
        accepted("any", Compare::Gt, json!("x"));
        accepted("pattern.xyz", Compare::Eq, json!(1));
        accepted("remote.whatever", Compare::Eq, json!(1));
        // The map's values are integers: that, it can tell.
        assert!(mismatch("map.anything", Compare::Gt, json!("3")).contains("(a number)"));
    }

    #[test]
    fn a_path_through_a_value_without_fields_says_what_the_value_is() {
        assert_eq!(
            unknown("amount.cents"),
            (
                "but `amount` is a number, which has no fields".to_owned(),
                None
            )
        );
        let (problem, _) = unknown("tags.0");
        assert!(
            problem.starts_with("but `tags` is an array of strings: a rule reads fields"),
            "{problem}"
        );
        // `null` has no fields either; an optional struct does.
        assert_eq!(
            unknown("count.x").0,
            "but `count` is a number, which has no fields"
        );
    }

    #[test]
    fn values_are_compared_with_the_fields_type() {
        accepted("amount", Compare::Gt, json!(100));
        accepted("amount", Compare::Eq, json!(1.5));
        accepted("count", Compare::Le, json!(3));
        accepted("to", Compare::Lt, json!("m"));
        accepted("to", Compare::In, json!(["a", "b"]));
        accepted("to", Compare::Contains, json!("x"));
        accepted("to", Compare::Ne, json!(5));
        accepted("flag", Compare::Eq, json!(true));
        accepted("fixed", Compare::Eq, json!(3.0));
        accepted("address", Compare::Eq, json!({"city": "Lyon"}));
        accepted("tags", Compare::Contains, json!("vip"));
        accepted("codes", Compare::Contains, json!("instant"));
        accepted("speed", Compare::In, json!(["instant", "standard"]));
        accepted("speed", Compare::Gt, json!("a"));
        accepted("level", Compare::Eq, json!("high"));

        assert_eq!(
            mismatch("amount", Compare::Gt, json!("1000")),
            "compares `amount` (a number) with \"1000\" (a string) using `gt`"
        );
        assert_eq!(
            mismatch("flag", Compare::Gt, json!(true)),
            "compares `flag` with true using `gt`, which orders numbers and strings only"
        );
        assert_eq!(
            mismatch("to", Compare::In, json!(["a", 1])),
            "compares `to` (a string) with 1 (a number) using `in`"
        );
        assert_eq!(
            mismatch("amount", Compare::Contains, json!(1)),
            "uses `contains` on `amount` (a number), which is neither a string nor an array"
        );
        assert_eq!(
            mismatch("tags", Compare::Contains, json!(1)),
            "compares `tags` (an array of strings) with 1 (a number) using `contains`"
        );
        assert_eq!(
            mismatch("codes", Compare::Contains, json!("fast")),
            "compares `codes` with \"fast\" using `contains`, but each item of `codes` is one \
             of \"standard\", \"instant\""
        );
        assert_eq!(
            mismatch("speed", Compare::Eq, json!("instnat")),
            "compares `speed` with \"instnat\" using `eq`, but `speed` is one of \"standard\", \
             \"instant\"; did you mean \"instant\"?"
        );
        assert_eq!(
            mismatch("fixed", Compare::Eq, json!(4)),
            "compares `fixed` with 4 using `eq`, but `fixed` is 3"
        );
        assert!(mismatch("count", Compare::Eq, Value::Null).contains("`present`"));
        assert!(mismatch("amount", Compare::In, json!(5)).contains("needs an array"));
        assert!(mismatch("amount", Compare::In, json!([])).contains("empty list"));
        assert!(
            mismatch("maybe", Compare::Eq, json!("Lyon")).contains("(an object) with \"Lyon\"")
        );
    }

    #[test]
    fn a_recursive_schema_is_checked_within_the_budget() {
        let schema = json!({
            "type": "object",
            "properties": {"list": {"$ref": "#/$defs/List"}},
            "$defs": {"List": {"type": "array", "items": {"anyOf": [{"$ref": "#/$defs/List"}, {"$ref": "#/$defs/List"}]}}}
        });
        assert_eq!(check(&schema, "list", Compare::Contains, &json!(1)), Ok(()));
        let looping = json!({"$ref": "#", "properties": {"a": {"type": "string"}}});
        assert_eq!(check(&looping, "b", Compare::Present, &Value::Null), Ok(()));
    }
}
