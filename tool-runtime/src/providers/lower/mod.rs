//! Lowering a tool's canonical input schema for one target.
//!
//! Every lowering starts the same way ([`normal`]): the canonical schema is cloned and put in
//! one internal form (no `$schema` or titles, no boolean subschemas, one spelling of
//! nullability: `anyOf: [X, {"type":"null"}]`). Then each target rewrites it:
//!
//! - [`Target::Mcp`]: the internal form as it is (JSON Schema 2020-12, object root).
//! - [`Target::Anthropic`]: the same, with what Anthropic's own SDK helper (`transform_schema`)
//!   cannot read spelled another way with the same meaning: a `type` array becomes an `anyOf`
//!   of single types, a schema that names no type (`{}`) an `anyOf` of every type.
//! - [`Target::AnthropicStrict`], [`Target::OpenAiStrict`], [`Target::GeminiParameters`]:
//!   compositions merged into plain objects ([`compose`]), then each target's keyword rules:
//!   every object closed, the keywords the target does not enforce moved into the
//!   description, what it cannot express at all a [`LoweringError`].
//! - [`Target::Gemini`]: the internal form with `examples` removed, exclusive bounds moved into
//!   the description and `const` spelled as a one-value `enum`.
//!
//! A tool without parameters is `{"type":"object","properties":{},"additionalProperties":false}`
//! for every target but Gemini's two, where `parameters` is left out (`None`); OpenAI's strict
//! form also says `"required": []`, as OpenAI's own normaliser writes it.
//!
//! The keywords moved into the description are listed after it, in the order the lowering met
//! them: `` Constraints: `query`: at most 200 characters; `limit`: default 10. ``. A place
//! inside a definition that stays a definition is named after it (`` `Side.label` ``).

mod anthropic;
mod compose;
mod describe;
mod gemini;
mod mcp;
mod normal;
mod openai;
mod strict;
mod walk;

#[cfg(test)]
mod tests;

use serde_json::{Map, Value};
use tool_core::ToolSpec;
use tool_core::schema::empty_object_schema;

use super::{LoweredTool, LoweringError, Target};
use walk::{Label, is_nullable, origin, types};

/// `spec`'s input schema (and description) as `target` accepts it.
///
/// The canonical schema is not changed. An `Err` names the keyword, where it is and what to
/// change: the tool cannot be offered to that target as it is.
pub fn lower(spec: &ToolSpec, target: Target) -> Result<LoweredTool, LoweringError> {
    lower_boxed(spec, target).map_err(|failure| *failure)
}

/// A tool's output schema as MCP clients validate results against it: the internal form (one
/// spelling of nullability, `anyOf` with a `null` branch, where schemars writes
/// `"type": [T, "null"]`, which strict clients flag as unportable), without the numeric
/// formats schemars names (`uint64`, `int32`, `double`), which JSON Schema does not define and
/// validators warn about (the range they stand for is kept as `minimum`/`maximum`).
pub(crate) fn mcp_output_schema(schema: &Value) -> Value {
    let mut schema = normal::prepare(schema);
    walk::strip_hidden(&mut schema);
    drop_numeric_formats(&mut schema);
    schema
}

fn drop_numeric_formats(schema: &mut Value) {
    const NUMERIC: &[&str] = &[
        "int", "int8", "int16", "int32", "int64", "int128", "uint", "uint8", "uint16", "uint32",
        "uint64", "uint128", "float", "double",
    ];
    match schema {
        Value::Object(object) => {
            if object
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|format| NUMERIC.contains(&format))
            {
                object.shift_remove("format");
            }
            object.values_mut().for_each(drop_numeric_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_numeric_formats),
        _ => {}
    }
}

/// A [`LoweringError`], boxed while it travels up the lowering (it is large).
type Failure = Box<LoweringError>;

fn lower_boxed(spec: &ToolSpec, target: Target) -> Result<LoweredTool, Failure> {
    let mut ctx = Ctx::new(spec.name(), target, spec.input_schema());
    check_name(&ctx, spec.name())?;
    let schema = normal::prepare(spec.input_schema());
    let parameters = if normal::without_parameters(&schema) {
        match target {
            Target::Gemini | Target::GeminiParameters => None,
            // OpenAI's own strict normaliser writes the empty `required` out.
            Target::OpenAiStrict => Some(empty_object_schema()).map(|mut schema| {
                schema["required"] = Value::Array(Vec::new());
                schema
            }),
            Target::Mcp => Some(mcp::declared(empty_object_schema())),
            _ => Some(empty_object_schema()),
        }
    } else {
        let mut lowered = match target {
            Target::OpenAiStrict => openai::lower(schema, &mut ctx)?,
            Target::Anthropic => anthropic::lower(schema, &mut ctx)?,
            Target::AnthropicStrict => anthropic::lower_strict(schema, &mut ctx)?,
            Target::Gemini => gemini::lower_json(schema, &mut ctx)?,
            Target::GeminiParameters => gemini::lower_parameters(schema, &mut ctx)?,
            Target::Mcp => mcp::lower(schema, &mut ctx)?,
        };
        walk::strip_hidden(&mut lowered);
        Some(lowered)
    };
    Ok(LoweredTool {
        name: spec.name().to_owned(),
        description: ctx.describe(spec.description()),
        parameters,
        moved: ctx.moved,
        nullable_optional: ctx.nullable_optional,
        canonical: (target == Target::OpenAiStrict)
            .then(|| std::sync::Arc::new(spec.input_schema().clone())),
    })
}

/// What one lowering gathers on its way: the tool and target its errors name, the keywords it
/// moved into the description.
struct Ctx<'a> {
    tool: String,
    target: Target,
    /// The canonical schema, where every pointer reported must lead.
    canonical: &'a Value,
    /// What to say, by place, in the order the places were met.
    notes: Vec<(Label, Vec<String>)>,
    moved: Vec<String>,
    nullable_optional: Vec<Vec<String>>,
}

impl<'a> Ctx<'a> {
    fn new(tool: &str, target: Target, canonical: &'a Value) -> Self {
        Self {
            tool: tool.to_owned(),
            target,
            canonical,
            notes: Vec::new(),
            moved: Vec::new(),
            nullable_optional: Vec::new(),
        }
    }

    /// A [`LoweringError`] for this tool and target.
    fn error(
        &self,
        keyword: &str,
        pointer: impl Into<String>,
        problem: impl Into<String>,
        fix: impl Into<String>,
    ) -> Failure {
        Box::new(LoweringError::new(
            self.tool.clone(),
            self.target,
            keyword,
            self.anchored(pointer.into()),
            problem,
            fix,
        ))
    }

    /// Removes `keyword` from `object` and says it in the description, under `label`; a
    /// keyword with nothing worth saying (`default: null`) is only removed.
    fn move_keyword(&mut self, object: &mut Map<String, Value>, keyword: &str, label: &Label) {
        let pointer = origin(object, keyword);
        let Some(value) = object.shift_remove(keyword) else {
            return;
        };
        if let Some(text) = describe::text(keyword, &value) {
            self.note(label, pointer, text);
        }
    }

    /// `pointer`, or the nearest schema above it that the canonical schema has: a keyword the
    /// internal form wrote (the `anyOf` of a `type: [T, "null"]`, a tuple's `maxItems`) is
    /// reported where the author wrote what it says.
    fn anchored(&self, mut pointer: String) -> String {
        while !pointer.is_empty() && self.canonical.pointer(&pointer).is_none() {
            let cut = pointer.rfind('/').unwrap_or(0);
            pointer.truncate(cut);
        }
        pointer
    }

    /// Says `text` about `label` in the description; `pointer` is the canonical keyword.
    fn note(&mut self, label: &Label, pointer: String, text: String) {
        let pointer = self.anchored(pointer);
        if !self.moved.contains(&pointer) {
            self.moved.push(pointer);
        }
        match self.notes.iter_mut().find(|(known, _)| known == label) {
            Some((_, texts)) => {
                if !texts.contains(&text) {
                    texts.push(text);
                }
            }
            None => self.notes.push((label.clone(), vec![text])),
        }
    }

    fn describe(&self, base: &str) -> String {
        let base = base.trim_end();
        if self.notes.is_empty() {
            return base.to_owned();
        }
        let notes = self
            .notes
            .iter()
            .map(|(label, texts)| {
                format!(
                    "{}: {}",
                    label.render(),
                    describe::exactly(texts).join(", ")
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        if base.is_empty() {
            format!("Constraints: {notes}.")
        } else {
            format!("{base}\n\nConstraints: {notes}.")
        }
    }
}

/// The tool name rule of each target.
fn check_name(ctx: &Ctx<'_>, name: &str) -> Result<(), Failure> {
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let length = name.chars().count();
    let (valid, rule) = match ctx.target {
        Target::OpenAiStrict => (
            (1..=64).contains(&length) && name.chars().all(plain),
            "^[a-zA-Z0-9_-]{1,64}$",
        ),
        Target::Anthropic | Target::AnthropicStrict => (
            (1..=128).contains(&length) && name.chars().all(plain),
            "^[a-zA-Z0-9_-]{1,128}$",
        ),
        Target::Gemini | Target::GeminiParameters => (
            (1..=64).contains(&length)
                && name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| plain(c) || c == '.' || c == ':'),
            "^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$",
        ),
        Target::Mcp => (
            (1..=128).contains(&length) && name.chars().all(|c| plain(c) || c == '.'),
            "^[A-Za-z0-9_.-]{1,128}$",
        ),
    };
    if valid {
        Ok(())
    } else {
        Err(ctx.error(
            "name",
            "",
            format!("`{name}` does not match `{rule}`"),
            "rename the tool",
        ))
    }
}

/// The root of a JSON Schema target: an object schema, not nullable. A root that names no
/// type is given `object` (a tool's arguments are always an object).
fn json_root(ctx: &Ctx<'_>, schema: &mut Value) -> Result<(), Failure> {
    let Value::Object(root) = schema else {
        return Err(ctx.error(
            "type",
            "",
            "is not a schema object",
            "give the tool an object schema",
        ));
    };
    if is_nullable(root) {
        return Err(ctx.error(
            "anyOf",
            origin(root, "anyOf"),
            "makes the arguments nullable; a tool's arguments are always an object",
            "use a struct (an Option inside it for what may be left out)",
        ));
    }
    match root.get("type") {
        None => {
            root.insert("type".to_owned(), Value::String("object".to_owned()));
            Ok(())
        }
        Some(ty) if ty == "object" => Ok(()),
        Some(_) => Err(ctx.error(
            "type",
            origin(root, "type"),
            format!("is {:?}; a tool's arguments are an object", types(root)),
            "use a struct for the parameters",
        )),
    }
}

/// The root of a strict target, once compositions are merged: one object, not a union.
fn strict_root(ctx: &Ctx<'_>, schema: &mut Value) -> Result<(), Failure> {
    json_root(ctx, schema)?;
    if let Value::Object(root) = schema {
        for keyword in ["anyOf", "oneOf"] {
            if root.contains_key(keyword) {
                return Err(ctx.error(
                    keyword,
                    origin(root, keyword),
                    format!(
                        "makes the arguments a union, and {} wants one object at the root",
                        ctx.target
                    ),
                    "make the enum a named field of a struct instead of the parameters \
                     themselves (or of a `#[serde(flatten)]` field)",
                ));
            }
        }
    }
    Ok(())
}
