//! The arguments of one call: what the provider sent ([`Arguments`]), and the one value every
//! stage of the call reads ([`CallArguments`]): validation, the policy's rules, the idempotency
//! key, the audit digest, the approver's request and the tool's own deserialization.
//!
//! The value is parsed at most once, and only when a stage reads it; its canonical form (the
//! arguments as the tool reads them: defaults filled in, an explicit `null` for an optional
//! field dropped) and the digest of that form are computed at most once, when a stage needs
//! them. `""`, `"null"`, `null` and `{}` are the same call everywhere: no arguments. A number
//! is read one way everywhere: an integer written as a float (`2.0`, `1e2`) is that integer,
//! judged on its digits in JSON text, and exact below 2^53 in a parsed value.

pub(crate) mod digest;

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use serde::Serialize;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use tool_core::ToolArgs;

/// The arguments of one call, as the provider delivered them.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum Arguments {
    /// JSON text (OpenAI sends arguments as a string, possibly malformed).
    Json(String),
    /// A parsed value (Anthropic, Gemini, MCP).
    Value(Value),
}

impl Arguments {
    /// The arguments as a tool reads them.
    pub fn as_tool_args(&self) -> ToolArgs<'_> {
        match self {
            Arguments::Json(text) => ToolArgs::Json(text),
            Arguments::Value(value) => ToolArgs::Parsed(value),
        }
    }
}

impl From<String> for Arguments {
    fn from(text: String) -> Self {
        Arguments::Json(text)
    }
}

impl From<&str> for Arguments {
    fn from(text: &str) -> Self {
        Arguments::Json(text.to_owned())
    }
}

impl From<Value> for Arguments {
    fn from(value: Value) -> Self {
        Arguments::Value(value)
    }
}

/// The arguments of one planned call, read by every stage from one value.
pub(crate) struct CallArguments<'a> {
    sent: Sent<'a>,
    /// The tool's canonical input schema.
    schema: &'a Value,
    // Boxed, each made when a stage first needs it: a planned call moves between the turn's
    // lists and its future, and most never parse, canonicalize or digest.
    parsed: OnceLock<Box<Parsed<'a>>>,
    canonical: OnceLock<Box<Value>>,
    digest: OnceLock<Box<str>>,
}

/// The arguments as sent, or as a person edited them (boxed: an edit is rare, and a planned
/// call is moved about).
enum Sent<'a> {
    Borrowed(&'a Arguments),
    Edited(Box<Arguments>),
}

impl std::ops::Deref for Sent<'_> {
    type Target = Arguments;

    fn deref(&self) -> &Arguments {
        match self {
            Sent::Borrowed(sent) => sent,
            Sent::Edited(edited) => edited,
        }
    }
}

/// The value, once parsed.
struct Parsed<'a> {
    /// `Null` when the text is not JSON (the tool's own parsing says why).
    value: Cow<'a, Value>,
    /// Whether the tool may read the value instead of the text: the text held nothing the
    /// value loses (a repeated key, which the tool refuses).
    for_the_tool: bool,
}

impl<'a> CallArguments<'a> {
    pub(crate) fn new(sent: Cow<'a, Arguments>, schema: &'a Value) -> Self {
        Self {
            sent: match sent {
                Cow::Borrowed(sent) => Sent::Borrowed(sent),
                Cow::Owned(edited) => Sent::Edited(Box::new(edited)),
            },
            schema,
            parsed: OnceLock::new(),
            canonical: OnceLock::new(),
            digest: OnceLock::new(),
        }
    }

    /// The arguments as a value: `{}` for none; `Null` when the text is not JSON (such a call
    /// never gets past validation).
    pub(crate) fn value(&self) -> &Value {
        &self.parsed().value
    }

    /// Parses the value now, so that the tool reads it rather than parsing the text again:
    /// for a call whose stages read the value anyway.
    pub(crate) fn parse(&self) {
        self.parsed();
    }

    /// What the tool parses its parameters from: the value when it was parsed already (and
    /// lost nothing), else what was sent.
    pub(crate) fn for_tool(&self) -> ToolArgs<'_> {
        match self.parsed.get() {
            Some(parsed) if parsed.for_the_tool => ToolArgs::Parsed(&parsed.value),
            _ => self.sent.as_tool_args(),
        }
    }

    /// The canonical form: the arguments as the tool reads them, defaults filled in, an
    /// explicit `null` for an optional field without a default dropped (absent and `null`
    /// mean the same), nested objects alike.
    pub(crate) fn canonical(&self) -> &Value {
        self.canonical
            .get_or_init(|| Box::new(canonical_at(self.schema, self.schema, self.value(), 0)))
    }

    /// The digest of the canonical form (SHA-256 of its canonical JSON, keys sorted): what
    /// the idempotency key, the audit trail and an approval request name the arguments by.
    pub(crate) fn digest(&self) -> &str {
        self.digest
            .get_or_init(|| digest::arguments_digest(self.canonical()).into_boxed_str())
    }

    /// The field at a dotted path, as the canonical form has it (see [`field_at`](Self::field_at)).
    /// `path` as this call's tool reads it.
    pub(crate) fn path(&self, path: &str) -> FieldPath {
        FieldPath::new(self.schema, path)
    }

    #[cfg(test)]
    pub(crate) fn field(&self, path: &str) -> Option<Value> {
        self.field_at(&FieldPath::new(self.schema, path))
            .map(Cow::into_owned)
    }

    /// The field at `path` (read against this tool's schema), as the canonical form has it:
    /// without building that form when the path leads to a plain value, and, for text not
    /// parsed yet, without parsing more than the objects on the path (a rule over one field of
    /// a read does not build the whole value).
    pub(crate) fn field_at<'s>(&'s self, path: &'s FieldPath) -> Option<Cow<'s, Value>> {
        if let Some(canonical) = self.canonical.get() {
            return lookup(canonical, &path.path).map(Cow::Borrowed);
        }
        if self.parsed.get().is_none()
            && let Some(text) = self.unparsed_text()
            && let Ok(found) = self.walk(Node::Text(text), path)
        {
            return found;
        }
        // Text the walk could not read (a repeated key on the path, not JSON) is read as the
        // parsed value has it.
        self.walk(Node::Value(self.value()), path).unwrap_or(None)
    }

    /// The text sent, when it is an object still to parse (no arguments parse at no cost).
    fn unparsed_text(&self) -> Option<&str> {
        match &*self.sent {
            Arguments::Json(text) => {
                let text = text.trim();
                (text.starts_with('{')).then_some(text)
            }
            Arguments::Value(_) => None,
        }
    }

    /// The walk of [`field_at`](Self::field_at) from `start`: `Err` when the text cannot
    /// answer as the parsed value would.
    fn walk<'s>(
        &'s self,
        start: Node<'s>,
        path: &'s FieldPath,
    ) -> Result<Option<Cow<'s, Value>>, Unread> {
        let mut current = start;
        // Inside a default, the value is as the schema wrote it (the canonical form does not
        // fill defaults into defaults).
        let mut in_default = false;
        for step in &path.steps {
            let entry = match current {
                Node::Value(value) => match value.as_object() {
                    Some(object) => object.get(&*step.name).map(Node::Value),
                    None => return Ok(None),
                },
                Node::Text(text) => entry_in_text(text, &step.name)?.map(Node::Text),
            };
            current = match entry {
                None if in_default => return Ok(None),
                Some(found) if in_default => found,
                Some(found) if found.is_null() && step.dropped_when_null => return Ok(None),
                Some(found) => found,
                None => match &step.default {
                    Some(default) => {
                        in_default = true;
                        Node::Value(default)
                    }
                    None => return Ok(None),
                },
            };
        }
        match current {
            // A whole object or array compares as its canonical form.
            Node::Value(Value::Object(_) | Value::Array(_)) if !in_default => {
                Ok(lookup(self.canonical(), &path.path).map(Cow::Borrowed))
            }
            Node::Text(text) if text.starts_with(['{', '[']) => {
                Ok(lookup(self.canonical(), &path.path).map(Cow::Borrowed))
            }
            Node::Value(found) => Ok(Some(Cow::Borrowed(found))),
            // Numbers as the whole text's parse reads them; the rest as JSON reads it.
            Node::Text(text) => match text.as_bytes().first() {
                // The text of a string the parser read already: without an escape, its
                // characters are the string's.
                Some(b'"') if !text.contains('\\') && text.len() >= 2 => {
                    Ok(Value::String(text[1..text.len() - 1].to_owned()))
                }
                Some(b'"' | b't' | b'f' | b'n') => serde_json::from_str(text),
                _ => tool_core::exact_value(text),
            }
            .map(|value| Some(Cow::Owned(value)))
            .map_err(|_| Unread),
        }
    }

    /// The digest of arguments given as a value (a person's edit), as a call of a tool with
    /// `schema` would name them.
    pub(crate) fn digest_of(schema: &Value, value: Value) -> String {
        CallArguments::new(Cow::Owned(Arguments::Value(value)), schema)
            .digest()
            .to_owned()
    }

    fn parsed(&self) -> &Parsed<'a> {
        self.parsed.get_or_init(|| {
            Box::new(match &self.sent {
                Sent::Borrowed(sent) => parse(sent),
                // Edited arguments: the value is its own.
                Sent::Edited(sent) => {
                    let Parsed {
                        value,
                        for_the_tool,
                    } = parse(sent);
                    Parsed {
                        value: Cow::Owned(value.into_owned()),
                        for_the_tool,
                    }
                }
            })
        })
    }
}

fn parse(sent: &Arguments) -> Parsed<'_> {
    match sent {
        Arguments::Value(Value::Null) => Parsed {
            value: Cow::Owned(Value::Object(Map::new())),
            for_the_tool: true,
        },
        Arguments::Value(value) => {
            let value = integers_of_integral_floats(value);
            // The tool reads what was sent: its own parsing reads an integral float where it
            // wants an integer, and keeps it a float where it wants one.
            let for_the_tool = matches!(value, Cow::Borrowed(_));
            Parsed {
                value,
                for_the_tool,
            }
        }
        Arguments::Json(text) => {
            let text = text.trim();
            if text.is_empty() || text == "null" {
                return Parsed {
                    value: Cow::Owned(Value::Object(Map::new())),
                    for_the_tool: true,
                };
            }
            // Text whose numbers serde_json reads exactly parses once, refusing a repeated
            // key as the tool would; other text is read with its numbers on their digits,
            // and the tool reads the text itself.
            if tool_core::inexact_numbers(text).is_empty() {
                let mut deserializer = serde_json::Deserializer::from_str(text);
                if let Ok(Strict(value)) = Strict::deserialize(&mut deserializer)
                    && deserializer.end().is_ok()
                {
                    return Parsed {
                        value: Cow::Owned(value),
                        for_the_tool: true,
                    };
                }
            }
            Parsed {
                value: Cow::Owned(match tool_core::exact_value(text) {
                    Ok(Value::Null) => Value::Object(Map::new()),
                    Ok(value) => value,
                    Err(_) => Value::Null,
                }),
                for_the_tool: false,
            }
        }
    }
}

/// `value` with every float that stands for an integer (no fraction, exact: below 2^53) made
/// that integer; borrowed when it has none.
fn integers_of_integral_floats(value: &Value) -> Cow<'_, Value> {
    fn integral(value: &Value) -> bool {
        match value {
            Value::Number(number) => {
                number.is_f64() && number.as_f64().and_then(tool_core::integer_of).is_some()
            }
            Value::Array(items) => items.iter().any(integral),
            Value::Object(fields) => fields.values().any(integral),
            _ => false,
        }
    }
    fn convert(value: &mut Value) {
        match value {
            Value::Number(number) => {
                if let Some(integer) = number
                    .as_f64()
                    .filter(|_| number.is_f64())
                    .and_then(tool_core::integer_of)
                {
                    *number = integer;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(convert),
            Value::Object(fields) => fields.values_mut().for_each(convert),
            _ => {}
        }
    }
    if integral(value) {
        let mut owned = value.clone();
        convert(&mut owned);
        Cow::Owned(owned)
    } else {
        Cow::Borrowed(value)
    }
}

/// A JSON value that refuses a repeated key (serde_json's `Value` keeps the last).
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        Strict::deserialize(deserializer).map(|Strict(value)| value)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Strict(value) = map.next_value()?;
            if fields.insert(key, value).is_some() {
                return Err(de::Error::custom("a repeated key"));
            }
        }
        Ok(Value::Object(fields))
    }
}

// ---------------------------------------------------------------------------------------------
// The canonical form

fn canonical_at(root: &Value, schema: &Value, value: &Value, depth: usize) -> Value {
    // Deep schemas are cut short: the rest is kept as sent.
    if depth > 64 {
        return value.clone();
    }
    let schema = follow(root, schema);
    match value {
        Value::Object(fields) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let mut canonical = Map::new();
            for (name, field) in fields {
                let field_schema = property_of(schema, name);
                if field.is_null() && dropped_when_null(root, schema, name, field_schema) {
                    continue;
                }
                canonical.insert(
                    name.clone(),
                    canonical_at(root, field_schema, field, depth + 1),
                );
            }
            if let Some(properties) = properties {
                for (name, field_schema) in properties {
                    if canonical.contains_key(name) {
                        continue;
                    }
                    if let Some(default) = default_of(root, field_schema) {
                        canonical.insert(name.clone(), default.clone());
                    }
                }
            }
            Value::Object(canonical)
        }
        Value::Array(items) => {
            let item_schema = schema.get("items").unwrap_or(&Value::Null);
            Value::Array(
                items
                    .iter()
                    .map(|item| canonical_at(root, item_schema, item, depth + 1))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

/// The schema of property `name` of an object schema (`Null`: none).
fn property_of<'s>(object: &'s Value, name: &str) -> &'s Value {
    object
        .get("properties")
        .and_then(|properties| properties.get(name))
        .unwrap_or(&Value::Null)
}

/// Whether an explicit `null` for `name` means what its absence means: the field is optional
/// and has no default (with one, absent is the default and `null` stays `null`, a `None`).
fn dropped_when_null(root: &Value, object: &Value, name: &str, field_schema: &Value) -> bool {
    let required = object
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|names| names.iter().any(|required| required == name));
    !required && default_of(root, field_schema).is_none()
}

/// A field's default, when it has one that is not `null`: the one written nearest the field
/// (beside a `$ref`, before the definition's own).
fn default_of<'s>(root: &'s Value, field_schema: &'s Value) -> Option<&'s Value> {
    let mut current = field_schema;
    for _ in 0..8 {
        if let Some(default) = current.get("default") {
            return Some(default).filter(|default| !default.is_null());
        }
        current = ref_target(root, current)?;
    }
    None
}

/// A schema with its local references followed, whatever else is written beside them: what
/// the canonical form reads (properties, required fields, defaults) is the definition's.
pub(crate) fn follow<'s>(root: &'s Value, schema: &'s Value) -> &'s Value {
    let mut current = schema;
    for _ in 0..8 {
        match ref_target(root, current) {
            Some(target) => current = target,
            None => break,
        }
    }
    current
}

/// A dotted path to a field, with what a tool's schema says at each step (read once, when the
/// runtime is built, for a policy's rule).
#[derive(Debug, Clone)]
pub(crate) struct FieldPath {
    path: Box<str>,
    steps: Box<[Step]>,
}

/// One step of a [`FieldPath`].
#[derive(Debug, Clone)]
struct Step {
    name: Box<str>,
    /// The field's default, filled in when it is absent.
    default: Option<Value>,
    /// An explicit `null` means what its absence means (optional, no default).
    dropped_when_null: bool,
}

impl FieldPath {
    /// `path` as a tool with the input schema `root` reads it.
    pub(crate) fn new(root: &Value, path: &str) -> Self {
        let mut schema = root;
        let mut steps = Vec::new();
        for name in path.split('.') {
            let object = follow(root, schema);
            let field_schema = property_of(object, name);
            steps.push(Step {
                name: name.into(),
                default: default_of(root, field_schema).cloned(),
                dropped_when_null: dropped_when_null(root, object, name, field_schema),
            });
            schema = field_schema;
        }
        Self {
            path: path.into(),
            steps: steps.into_boxed_slice(),
        }
    }
}

/// Where the walk to a field stands: in the parsed value, or in the text of a value not
/// parsed (as sent, without its surrounding space).
#[derive(Clone, Copy)]
enum Node<'v> {
    Value(&'v Value),
    Text(&'v str),
}

impl Node<'_> {
    fn is_null(&self) -> bool {
        match self {
            Node::Value(value) => value.is_null(),
            Node::Text(text) => *text == "null",
        }
    }
}

/// The text cannot say what the parsed value would: the walk reads the value instead.
struct Unread;

/// The text of the entry `name` of the object written in `text`, read without building the
/// object. `Err` when `text` is not one object or names `name` twice (the parsed value keeps
/// one of the two; the walk leaves that to it).
fn entry_in_text<'t>(text: &'t str, name: &str) -> Result<Option<&'t str>, Unread> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let found = de::DeserializeSeed::deserialize(FindEntry { name }, &mut deserializer)
        .map_err(|_| Unread)?;
    deserializer.end().map_err(|_| Unread)?;
    Ok(found)
}

/// Reads an object, keeping the text of one entry's value and skipping the others.
struct FindEntry<'n> {
    name: &'n str,
}

impl<'de> de::DeserializeSeed<'de> for FindEntry<'_> {
    type Value = Option<&'de str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for FindEntry<'_> {
    type Value = Option<&'de str>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(is_the_name) = map.next_key_seed(KeyIs(self.name))? {
            if !is_the_name {
                map.next_value::<de::IgnoredAny>()?;
                continue;
            }
            if found.is_some() {
                return Err(de::Error::custom("a repeated key"));
            }
            let value: &'de serde_json::value::RawValue = map.next_value()?;
            found = Some(value.get());
        }
        Ok(found)
    }
}

/// Whether a key is `name` (escaped or not).
struct KeyIs<'n>(&'n str);

impl<'de> de::DeserializeSeed<'de> for KeyIs<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyIs<'_> {
    type Value = bool;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a key")
    }

    fn visit_str<E>(self, key: &str) -> Result<bool, E> {
        Ok(key == self.0)
    }
}

/// The value at a dotted path of object keys.
fn lookup<'v>(value: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(value, |value, key| value.get(key))
}

// ---------------------------------------------------------------------------------------------
// References

/// Keywords that say nothing about what a value may be.
pub(crate) const ANNOTATIONS: &[&str] = &[
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "title",
];

/// The schema a local `$ref` (`#/$defs/Name`) points to in `root`.
pub(crate) fn ref_target<'s>(root: &'s Value, schema: &Value) -> Option<&'s Value> {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| reference.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer))
}

/// A schema with its local references followed while it is nothing but one (and annotations):
/// schemars' `{"$ref": "#/$defs/Name", "description": ...}`. What validation's messages
/// describe; the canonical form follows every reference ([`follow`]).
pub(crate) fn resolve<'s>(root: &'s Value, schema: &'s Value) -> &'s Value {
    let mut current = schema;
    for _ in 0..8 {
        let only_a_reference = current.as_object().is_some_and(|object| {
            object
                .keys()
                .all(|keyword| keyword == "$ref" || ANNOTATIONS.contains(&keyword.as_str()))
        });
        match ref_target(root, current) {
            Some(target) if only_a_reference => current = target,
            _ => break,
        }
    }
    current
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "subject": {"type": "string"},
                "priority": {"type": "integer", "default": 3},
                "cap": {"type": ["integer", "null"]},
                "tag": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": "none"},
                "address": {"$ref": "#/$defs/Address", "description": "where"},
            },
            "required": ["subject"],
            "$defs": {
                "Address": {
                    "type": "object",
                    "properties": {"city": {"type": "string", "default": "Paris"}},
                }
            }
        })
    }

    #[test]
    fn no_arguments_are_one_value_however_written() {
        let schema = schema();
        let forms = [
            Arguments::Json(String::new()),
            Arguments::Json(" null ".into()),
            Arguments::Json("{}".into()),
            Arguments::Value(Value::Null),
            Arguments::Value(json!({})),
        ];
        let digests: Vec<String> = forms
            .iter()
            .map(|sent| {
                CallArguments::new(Cow::Borrowed(sent), &schema)
                    .digest()
                    .to_owned()
            })
            .collect();
        assert!(digests.iter().all(|digest| *digest == digests[0]));
        let sent = Arguments::Json(String::new());
        let arguments = CallArguments::new(Cow::Borrowed(&sent), &schema);
        assert_eq!(arguments.canonical()["priority"], 3);
    }

    #[test]
    fn a_field_is_read_as_the_canonical_form_has_it_without_building_it() {
        let schema = schema();
        let sent = Arguments::Json(r#"{"subject": "s", "cap": null, "tag": null}"#.into());
        let arguments = CallArguments::new(Cow::Borrowed(&sent), &schema);
        assert_eq!(arguments.field("priority"), Some(json!(3)));
        assert_eq!(arguments.field("cap"), None);
        assert_eq!(arguments.field("tag"), Some(Value::Null));
        assert_eq!(arguments.field("address.city"), None);
        assert!(arguments.canonical.get().is_none());
        for path in [
            "priority",
            "cap",
            "tag",
            "subject",
            "address",
            "address.city",
        ] {
            assert_eq!(
                arguments.field(path),
                lookup(arguments.canonical(), path).cloned(),
                "{path}"
            );
        }
        let sent = Arguments::Value(json!({"subject": "s", "address": {}}));
        let arguments = CallArguments::new(Cow::Borrowed(&sent), &schema);
        assert_eq!(arguments.field("address.city"), Some(json!("Paris")));
        assert_eq!(arguments.field("address"), Some(json!({"city": "Paris"})));
    }

    #[test]
    fn a_field_of_text_is_read_without_parsing_the_whole_value_and_as_it_would_be() {
        let schema = schema();
        let texts = [
            r#"{"subject": "s", "cap": null, "tag": null}"#,
            r#" {"subject":"s","priority":7,"address":{"city":"Lyon"}} "#,
            r#"{"subject":"s","priority":2.0,"address":{}}"#,
            r#"{"sub\u006aect":"escaped key","address":null,"priority":123456789012345678901}"#,
            // A repeated key: the walk leaves it to the parsed value.
            r#"{"subject":"a","subject":"b","address":{"city":"X","city":"Y"}}"#,
            r#"{"subject":"s","address":"not an object","cap":[1,2]}"#,
            r#"{"subject":"s"} trailing"#,
            r#"{"subject": "\"quoted\" sk-proj-abcdefghijklmnopqrstuvwx1234"}"#,
        ];
        let paths = [
            "subject",
            "priority",
            "cap",
            "tag",
            "address",
            "address.city",
            "address.city.more",
            "missing",
        ];
        for text in texts {
            for path in paths {
                let sent = Arguments::Json(text.into());
                let unparsed = CallArguments::new(Cow::Borrowed(&sent), &schema);
                let read = unparsed.field(path);
                let parsed = CallArguments::new(Cow::Borrowed(&sent), &schema);
                parsed.parse();
                assert_eq!(read, parsed.field(path), "{text} at {path}");
            }
        }
        // A plain field of a well-formed text parses nothing else.
        let sent =
            Arguments::Json(r#"{"subject":"s","priority":7,"address":{"city":"Lyon"}}"#.into());
        let arguments = CallArguments::new(Cow::Borrowed(&sent), &schema);
        assert_eq!(arguments.field("priority"), Some(json!(7)));
        assert_eq!(arguments.field("address.city"), Some(json!("Lyon")));
        assert_eq!(arguments.field("cap"), None);
        assert!(arguments.parsed.get().is_none());
    }

    #[test]
    fn absent_null_defaults_and_key_order_do_not_change_the_canonical_form() {
        let schema = json!({
            "type": "object",
            "properties": {
                "subject": { "type": "string" },
                "priority": { "type": "string", "default": "normal" },
                "note": { "type": ["string", "null"] },
                "address": { "$ref": "#/$defs/Address" }
            },
            "required": ["subject"],
            "$defs": { "Address": { "type": "object", "properties": {
                "city": { "type": "string" }, "zip": { "type": ["string", "null"], "default": null }
            } } }
        });
        let digest = |value: Value| {
            CallArguments::new(Cow::Owned(Arguments::Value(value)), &schema)
                .digest()
                .to_owned()
        };
        let a = digest(json!({ "subject": "x", "address": { "city": "P" } }));
        let b = digest(
            json!({ "address": { "zip": null, "city": "P" }, "note": null, "priority": "normal", "subject": "x" }),
        );
        assert_eq!(a, b);
        assert_ne!(a, digest(json!({ "subject": "x", "priority": "high" })));
        let sent = Arguments::Value(json!({ "n": 1.0 }));
        assert_eq!(
            CallArguments::new(Cow::Borrowed(&sent), &json!({})).canonical(),
            &json!({ "n": 1 })
        );
    }

    #[test]
    fn a_null_for_a_field_with_a_default_is_kept_apart_from_its_absence() {
        // `#[default = Some(500)] cap: Option<u32>`: left out it is 500, `null` is `None`.
        let schema = json!({
            "type": "object",
            "properties": { "cap": { "type": ["integer", "null"], "default": 500 } }
        });
        let absent = Arguments::Value(json!({}));
        let null = Arguments::Value(json!({ "cap": null }));
        let absent = CallArguments::new(Cow::Borrowed(&absent), &schema);
        let null = CallArguments::new(Cow::Borrowed(&null), &schema);
        assert_eq!(absent.canonical(), &json!({ "cap": 500 }));
        assert_eq!(null.canonical(), &json!({ "cap": null }));
        assert_ne!(absent.digest(), null.digest());
        assert_eq!(absent.field("cap"), Some(json!(500)));
        assert_eq!(null.field("cap"), Some(Value::Null));
    }

    #[test]
    fn a_tool_reads_a_value_as_it_was_sent_when_its_numbers_were_changed_for_the_stages() {
        let sent = Arguments::Value(json!({"ratio": 2.0, "zero": -0.0}));
        let arguments = CallArguments::new(Cow::Borrowed(&sent), &Value::Null);
        arguments.parse();
        assert!(arguments.value()["ratio"].is_u64());
        match arguments.for_tool() {
            ToolArgs::Parsed(value) => {
                assert!(value["ratio"].is_f64());
                assert!(value["zero"].is_f64());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_reference_with_siblings_and_a_default_beside_a_reference_are_followed() {
        let schema = json!({
            "type": "object",
            "properties": {
                "home": {"$ref": "#/$defs/Addr", "unevaluatedProperties": false},
                "work": {"$ref": "#/$defs/Addr", "default": {"street": "main", "country": "DE"}},
            },
            "$defs": {"Addr": {"type": "object", "properties": {
                "street": {"type": "string"},
                "country": {"type": "string", "default": "FR"},
            }}}
        });
        let sent = Arguments::Value(json!({"home": {"street": "x"}}));
        let arguments = CallArguments::new(Cow::Borrowed(&sent), &schema);
        assert_eq!(arguments.field("home.country"), Some(json!("FR")));
        assert_eq!(arguments.field("work.country"), Some(json!("DE")));
        assert_eq!(arguments.canonical()["home"]["country"], "FR");
        assert_eq!(arguments.canonical()["work"]["country"], "DE");
    }

    #[test]
    fn numbers_are_read_one_way() {
        let schema = schema();
        let text = Arguments::Json(r#"{"subject": "s", "priority": 3.0}"#.into());
        let value = Arguments::Value(json!({"subject": "s", "priority": 3.0}));
        let plain = Arguments::Json(r#"{"subject": "s", "priority": 3}"#.into());
        let text = CallArguments::new(Cow::Borrowed(&text), &schema);
        let value = CallArguments::new(Cow::Borrowed(&value), &schema);
        let plain = CallArguments::new(Cow::Borrowed(&plain), &schema);
        assert_eq!(text.value()["priority"], json!(3));
        assert!(text.value()["priority"].is_u64());
        assert!(value.value()["priority"].is_u64());
        assert_eq!(text.digest(), plain.digest());
        assert_eq!(value.digest(), plain.digest());
    }

    #[test]
    fn the_tool_reads_the_value_only_when_it_lost_nothing() {
        let schema = schema();
        let repeated = Arguments::Json(r#"{"subject": "a", "subject": "b"}"#.into());
        let arguments = CallArguments::new(Cow::Borrowed(&repeated), &schema);
        arguments.parse();
        assert!(matches!(arguments.for_tool(), ToolArgs::Json(_)));
        assert_eq!(arguments.value()["subject"], "b");
        let plain = Arguments::Json(r#"{"subject": "a"}"#.into());
        let arguments = CallArguments::new(Cow::Borrowed(&plain), &schema);
        assert!(matches!(arguments.for_tool(), ToolArgs::Json(_)));
        arguments.parse();
        assert!(matches!(arguments.for_tool(), ToolArgs::Parsed(_)));
        let broken = Arguments::Json(r#"{"subject": "#.into());
        let arguments = CallArguments::new(Cow::Borrowed(&broken), &schema);
        assert_eq!(arguments.value(), &Value::Null);
        assert!(matches!(arguments.for_tool(), ToolArgs::Json(_)));
    }
}
