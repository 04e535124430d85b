//! The subschemas of a schema, where each came from, and how a model reads its place.

use serde_json::{Map, Value};

/// A hidden key on every schema object while it is lowered: the JSON pointer (into the
/// canonical schema) of the schema it came from, or, for a schema merged from several, an
/// object naming the owner of each keyword (`""` for the rest). Keywords moved into the
/// description are reported by these pointers. Removed by [`strip_hidden`].
pub(super) const ORIGIN: &str = "\u{0}origin";

/// A hidden key on an object schema (OpenAI strict): the properties the lowering made
/// required (and nullable).
pub(super) const MADE_REQUIRED: &str = "\u{0}made_required";

/// Whether `key` is one of the lowering's own hidden keys.
pub(super) fn is_hidden(key: &str) -> bool {
    key.starts_with('\u{0}')
}

/// Keywords that describe a schema without constraining what it accepts: they stay on the
/// outside when a schema is wrapped (made nullable) and yield to the outer schema in a merge.
pub(super) const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
    "$id",
    "$anchor",
    "$defs",
    "definitions",
];

/// Whether `key` is an annotation or a hidden key.
pub(super) fn is_annotation(key: &str) -> bool {
    is_hidden(key) || ANNOTATIONS.contains(&key)
}

/// Moves the assertions of `object` into a new object, which it returns; the annotations
/// (hidden keys included) stay in `object`.
pub(super) fn take_assertions(object: &mut Map<String, Value>) -> Map<String, Value> {
    let entries = std::mem::take(object);
    let mut assertions = Map::new();
    for (key, value) in entries {
        if is_annotation(&key) {
            object.insert(key, value);
        } else {
            assertions.insert(key, value);
        }
    }
    assertions
}

/// Where a subschema sits in the schema that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Slot {
    /// `properties/<name>`.
    Property(String),
    /// `patternProperties/<pattern>`.
    PatternProperty(String),
    /// `additionalProperties` or `unevaluatedProperties`.
    Rest(&'static str),
    /// `items`.
    Items,
    /// `prefixItems/<index>`.
    PrefixItem(usize),
    /// `anyOf/<index>`, `oneOf/<index>` or `allOf/<index>`.
    Alternative(&'static str, usize),
    /// `$defs/<name>` or `definitions/<name>`.
    Definition(&'static str, String),
    /// `dependentSchemas/<name>`.
    Dependent(String),
    /// One of the keywords whose value is one schema that only tests the instance (`not`,
    /// `if`, `then`, `else`, `contains`, `propertyNames`, `unevaluatedItems`,
    /// `additionalItems`).
    Keyword(&'static str),
}

const ONE_SCHEMA: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "additionalItems",
];

impl Slot {
    /// The slot's JSON pointer segments, escaped.
    pub(super) fn pointer(&self) -> String {
        match self {
            Slot::Property(name) => format!("properties/{}", escape(name)),
            Slot::PatternProperty(name) => format!("patternProperties/{}", escape(name)),
            Slot::Rest(keyword) | Slot::Keyword(keyword) => (*keyword).to_owned(),
            Slot::Items => "items".to_owned(),
            Slot::PrefixItem(index) => format!("prefixItems/{index}"),
            Slot::Alternative(keyword, index) => format!("{keyword}/{index}"),
            Slot::Definition(keyword, name) => format!("{keyword}/{}", escape(name)),
            Slot::Dependent(name) => format!("dependentSchemas/{}", escape(name)),
        }
    }
}

/// Escapes one JSON pointer segment.
pub(super) fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Finds the keyword's `&'static str` among the known ones (the slot names are static).
fn known(keyword: &str, among: &[&'static str]) -> Option<&'static str> {
    among.iter().copied().find(|known| *known == keyword)
}

/// The subschemas of an object, each with its slot, in the object's key order: one body for
/// the shared and the mutable walk (`$iter` is `iter` or `iter_mut`).
macro_rules! children_of {
    ($object:expr, $iter:ident) => {{
        let mut out = Vec::new();
        for (keyword, value) in $object.$iter() {
            if is_hidden(keyword) {
                continue;
            }
            match (keyword.as_str(), value) {
                ("properties", Value::Object(entries)) => out.extend(
                    entries
                        .$iter()
                        .map(|(name, entry)| (Slot::Property(name.clone()), entry)),
                ),
                ("patternProperties", Value::Object(entries)) => out.extend(
                    entries
                        .$iter()
                        .map(|(name, entry)| (Slot::PatternProperty(name.clone()), entry)),
                ),
                ("dependentSchemas", Value::Object(entries)) => out.extend(
                    entries
                        .$iter()
                        .map(|(name, entry)| (Slot::Dependent(name.clone()), entry)),
                ),
                ("$defs" | "definitions", Value::Object(entries)) => {
                    let keyword = if keyword == "$defs" {
                        "$defs"
                    } else {
                        "definitions"
                    };
                    out.extend(
                        entries
                            .$iter()
                            .map(|(name, entry)| (Slot::Definition(keyword, name.clone()), entry)),
                    );
                }
                ("additionalProperties", value) => {
                    out.push((Slot::Rest("additionalProperties"), value));
                }
                ("unevaluatedProperties", value) => {
                    out.push((Slot::Rest("unevaluatedProperties"), value));
                }
                ("items", value) => out.push((Slot::Items, value)),
                ("prefixItems", Value::Array(items)) => out.extend(
                    items
                        .$iter()
                        .enumerate()
                        .map(|(index, item)| (Slot::PrefixItem(index), item)),
                ),
                (keyword @ ("anyOf" | "oneOf" | "allOf"), Value::Array(items)) => {
                    let keyword = known(keyword, &["anyOf", "oneOf", "allOf"]).unwrap_or("anyOf");
                    out.extend(
                        items
                            .$iter()
                            .enumerate()
                            .map(|(index, item)| (Slot::Alternative(keyword, index), item)),
                    );
                }
                (keyword, value) => {
                    if let Some(keyword) = known(keyword, ONE_SCHEMA) {
                        out.push((Slot::Keyword(keyword), value));
                    }
                }
            }
        }
        out
    }};
}

/// The subschemas of `object`, each with its slot, in the object's key order.
pub(super) fn children(object: &Map<String, Value>) -> Vec<(Slot, &Value)> {
    children_of!(object, iter)
}

/// [`children`], mutable.
pub(super) fn children_mut(object: &mut Map<String, Value>) -> Vec<(Slot, &mut Value)> {
    children_of!(object, iter_mut)
}

/// How a model reads a subschema's place: `filter.limit`, `tags[]`, `pair[0]`, `Side.label`
/// (inside the definition `Side`). Union alternatives add nothing: the property names inside
/// tell the variants apart.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Label(String);

impl Label {
    /// The label of the root: the arguments themselves.
    pub(super) fn root() -> Self {
        Self::default()
    }

    /// The label of the child in `slot`.
    pub(super) fn child(&self, slot: &Slot) -> Self {
        let base = &self.0;
        match slot {
            Slot::Property(name) if base.is_empty() => Self(name.clone()),
            Slot::Property(name) => Self(format!("{base}.{name}")),
            Slot::Items => Self(format!("{base}[]")),
            Slot::PrefixItem(index) => Self(format!("{base}[{index}]")),
            Slot::PatternProperty(_) | Slot::Rest(_) if base.is_empty() => Self("*".to_owned()),
            Slot::PatternProperty(_) | Slot::Rest(_) => Self(format!("{base}.*")),
            Slot::Definition(_, name) => Self(name.clone()),
            Slot::Alternative(..) | Slot::Dependent(_) | Slot::Keyword(_) => self.clone(),
        }
    }

    /// The label as shown in a description.
    pub(super) fn render(&self) -> String {
        if self.0.is_empty() {
            "the arguments".to_owned()
        } else {
            format!("`{}`", self.0)
        }
    }
}

/// What [`walk`] calls on each schema object: the object, its slot in its parent (`None`
/// for the root), its label.
pub(super) type Visit<'a, E> =
    dyn FnMut(&mut Map<String, Value>, Option<&Slot>, &Label) -> Result<(), E> + 'a;

/// Visits every schema object in `schema`, parent before children; `visit` may rewrite the
/// object it is given (its children are then read from what it left).
pub(super) fn walk<E>(
    schema: &mut Value,
    slot: Option<&Slot>,
    label: &Label,
    visit: &mut Visit<'_, E>,
) -> Result<(), E> {
    let Value::Object(object) = schema else {
        return Ok(());
    };
    visit(object, slot, label)?;
    for (child_slot, child) in children_mut(object) {
        let child_label = label.child(&child_slot);
        walk(child, Some(&child_slot), &child_label, visit)?;
    }
    Ok(())
}

/// Gives every schema object in `schema` its [`ORIGIN`], `pointer` being the schema's own.
pub(super) fn annotate(schema: &mut Value, pointer: &str) {
    let Value::Object(object) = schema else {
        return;
    };
    object.insert(ORIGIN.to_owned(), Value::String(pointer.to_owned()));
    for (slot, child) in children_mut(object) {
        annotate(child, &format!("{pointer}/{}", slot.pointer()));
    }
}

/// The pointer of the schema that owns `keyword` in `object`.
pub(super) fn owner(object: &Map<String, Value>, keyword: &str) -> String {
    match object.get(ORIGIN) {
        Some(Value::String(pointer)) => pointer.clone(),
        Some(Value::Object(owners)) => owners
            .get(keyword)
            .or_else(|| owners.get(""))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        _ => String::new(),
    }
}

/// The pointer (into the canonical schema) of `keyword` in `object`.
pub(super) fn origin(object: &Map<String, Value>, keyword: &str) -> String {
    format!("{}/{}", owner(object, keyword), escape(keyword))
}

/// The pointer of `object` itself.
pub(super) fn own_pointer(object: &Map<String, Value>) -> String {
    owner(object, "")
}

/// Removes the hidden keys from every schema object in `schema`.
pub(super) fn strip_hidden(schema: &mut Value) {
    let Value::Object(object) = schema else {
        return;
    };
    object.retain(|key, _| !is_hidden(key));
    for (_, child) in children_mut(object) {
        strip_hidden(child);
    }
}

/// `schema` without hidden keys, to show in a description.
pub(super) fn shown(schema: &Value) -> Value {
    let mut schema = schema.clone();
    strip_hidden(&mut schema);
    schema
}

/// Renames `from` to `to` in place (the key keeps its position).
pub(super) fn rename(object: &mut Map<String, Value>, from: &str, to: &str) {
    if !object.contains_key(from) {
        return;
    }
    let entries = std::mem::take(object);
    for (key, value) in entries {
        let key = if key == from { to.to_owned() } else { key };
        object.insert(key, value);
    }
}

/// The schema a local `$ref` names in `root`: `#` is the root itself (its definitions left
/// out), `#/...` a JSON pointer. `None` for a reference outside the schema or to nothing.
pub(super) fn resolve(root: &Value, reference: &str) -> Option<Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        let mut whole = root.clone();
        if let Value::Object(object) = &mut whole {
            object.shift_remove("$defs");
            object.shift_remove("definitions");
        }
        return Some(whole);
    }
    let pointer = percent_decode(pointer);
    root.pointer(&pointer).cloned()
}

/// Decodes `%XX` escapes of a URI fragment (a `$ref` is a URI).
fn percent_decode(text: &str) -> String {
    if !text.contains('%') {
        return text.to_owned();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let hex = bytes
            .get(index + 1..index + 3)
            .and_then(|pair| std::str::from_utf8(pair).ok())
            .and_then(|pair| u8::from_str_radix(pair, 16).ok());
        match (bytes[index], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                index += 3;
            }
            (byte, _) => {
                out.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The `$ref` of `object`, if it has one that is a string.
pub(super) fn reference(object: &Map<String, Value>) -> Option<&str> {
    object.get("$ref").and_then(Value::as_str)
}

/// The names in `object`'s `type` (one string or an array of them).
pub(super) fn types(object: &Map<String, Value>) -> Vec<String> {
    match object.get("type") {
        Some(Value::String(ty)) => vec![ty.clone()],
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether `object` is the schema of `null` alone (`{"type":"null"}`, `{"const":null}`,
/// `{"enum":[null]}`), annotations aside.
pub(super) fn is_null_schema(object: &Map<String, Value>) -> bool {
    let mut assertions = object.iter().filter(|(key, _)| !is_annotation(key));
    let first = assertions.next();
    if assertions.next().is_some() {
        return false;
    }
    match first {
        Some((key, value)) => match key.as_str() {
            "type" => value == "null",
            "const" => value.is_null(),
            "enum" => value
                .as_array()
                .is_some_and(|values| !values.is_empty() && values.iter().all(Value::is_null)),
            _ => false,
        },
        None => false,
    }
}

/// A fresh `{"type":"null"}` owned by `owner`'s schema.
pub(super) fn null_schema(owner_of: &Map<String, Value>) -> Value {
    let mut object = Map::new();
    object.insert("type".to_owned(), Value::String("null".to_owned()));
    if let Some(origin) = owner_of.get(ORIGIN) {
        object.insert(ORIGIN.to_owned(), origin.clone());
    }
    Value::Object(object)
}

/// Whether `object` is nullable in the internal form: an `anyOf` whose last alternative is
/// the null schema.
pub(super) fn is_nullable(object: &Map<String, Value>) -> bool {
    object
        .get("anyOf")
        .and_then(Value::as_array)
        .and_then(|alternatives| alternatives.last())
        .and_then(Value::as_object)
        .is_some_and(is_null_schema)
}
