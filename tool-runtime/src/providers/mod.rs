//! Speaking each model provider's format: the session's catalog lowered for a target, the
//! model's tool calls parsed into [`ToolCall`](crate::ToolCall)s, and a [`TurnReport`](crate::TurnReport)
//! rendered back in the provider's shape (OpenAI, Anthropic, Gemini; for MCP, the `tools/list`
//! entries).
//!
//! Every tool has one canonical input schema (what `schemars` derives, what validation
//! checks). A provider accepts a subset of JSON Schema, different for each: a *lowering* is
//! that schema rewritten for one target, computed once per tool and target and cached. The
//! canonical schema is never edited. A keyword a target cannot enforce moves into the
//! description (the model still reads the constraint) and stays validated by the runtime; a
//! schema a target cannot express at all (a map for OpenAI's strict mode, a recursive type for
//! Gemini's `parameters`) is a [`LoweringError`] naming the tool, the keyword, the target and
//! what to change.

#[cfg(feature = "anthropic")]
pub mod anthropic;
mod catalog;
#[cfg(feature = "gemini")]
pub mod gemini;
mod lower;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "openai")]
pub mod openai;
#[cfg(feature = "tokens")]
pub mod tokens;

pub use catalog::LoweredCatalog;
pub(crate) use catalog::Lowerings;
pub use lower::lower;

use std::fmt;

use serde_json::Value;

/// The format a catalog is lowered for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Target {
    /// OpenAI's strict function calling (Chat Completions and Responses alike): every object
    /// closed, every property required (an optional one nullable), no `default`.
    OpenAiStrict,
    /// Anthropic's `input_schema`, as written (JSON Schema 2020-12).
    Anthropic,
    /// Anthropic's `input_schema` with `strict: true`: the subset Anthropic's structured
    /// tool use enforces.
    AnthropicStrict,
    /// Gemini's `parametersJsonSchema` (JSON Schema, permissive).
    Gemini,
    /// Gemini's `parameters` (the OpenAPI 3.0 subset; the Live API accepts only this one).
    GeminiParameters,
    /// MCP's `inputSchema` (JSON Schema 2020-12, object root).
    Mcp,
}

impl Target {
    /// Every target, in a stable order.
    pub const ALL: &'static [Target] = &[
        Target::OpenAiStrict,
        Target::Anthropic,
        Target::AnthropicStrict,
        Target::Gemini,
        Target::GeminiParameters,
        Target::Mcp,
    ];

    /// The target's stable name: `openai_strict`, `anthropic`, `anthropic_strict`, `gemini`,
    /// `gemini_parameters`, `mcp`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            Target::OpenAiStrict => "openai_strict",
            Target::Anthropic => "anthropic",
            Target::AnthropicStrict => "anthropic_strict",
            Target::Gemini => "gemini",
            Target::GeminiParameters => "gemini_parameters",
            Target::Mcp => "mcp",
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One tool's schema as a target accepts it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LoweredTool {
    /// The tool's name.
    pub name: String,
    /// The tool's description, with what the target cannot enforce said in words (after a
    /// blank line): `` `query`: at most 200 characters. ``
    pub description: String,
    /// The parameters' schema for the target; `None` for a tool without parameters where the
    /// target wants the field left out (Gemini).
    pub parameters: Option<Value>,
    /// The keywords moved into the description, by JSON pointer into the canonical schema
    /// (`/properties/query/maxLength`): the runtime still validates them.
    pub moved: Vec<String>,
    /// Optional properties this lowering made required and nullable (OpenAI strict): a `null`
    /// the model sends for one of them means "left out" (its default), and
    /// `openai::calls_from_chat` removes it before
    /// validation, reading the arguments with the canonical schema (so inside recursive types
    /// and the union variant the value names too). An optional property that took `null`
    /// already is not listed: its `null` stays (`None`). Each is a path of property names
    /// from the root, `[]` standing for every item of an array; the list stops where a type
    /// refers to itself.
    pub nullable_optional: Vec<Vec<String>>,
    /// The canonical input schema, which says where a strict `null` stands for a parameter
    /// left out (OpenAI strict only).
    pub(crate) canonical: Option<std::sync::Arc<Value>>,
}

/// Why a tool's schema cannot be lowered for a target: the tool, the keyword at fault and
/// where, what the target cannot express, and what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "tool `{}` cannot be lowered for {}: `{}` at `{}` {}; {}",
    .0.tool, .0.target, .0.keyword, .0.pointer, .0.problem, .0.fix
)]
pub struct LoweringError(Box<LoweringProblem>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct LoweringProblem {
    tool: String,
    target: Target,
    keyword: String,
    pointer: String,
    problem: String,
    fix: String,
}

impl LoweringError {
    /// `tool`'s schema has `keyword` at `pointer` (a JSON pointer into the canonical schema),
    /// which `target` cannot express (`problem`); `fix` says what to change.
    pub fn new(
        tool: impl Into<String>,
        target: Target,
        keyword: impl Into<String>,
        pointer: impl Into<String>,
        problem: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self(Box::new(LoweringProblem {
            tool: tool.into(),
            target,
            keyword: keyword.into(),
            pointer: pointer.into(),
            problem: problem.into(),
            fix: fix.into(),
        }))
    }

    /// The tool.
    pub fn tool(&self) -> &str {
        &self.0.tool
    }

    /// The target.
    pub fn target(&self) -> Target {
        self.0.target
    }

    /// The keyword at fault (`additionalProperties`, `$ref`, ...).
    pub fn keyword(&self) -> &str {
        &self.0.keyword
    }

    /// Where, as a JSON pointer into the canonical schema (`/properties/tags`).
    pub fn pointer(&self) -> &str {
        &self.0.pointer
    }

    /// What the target cannot express.
    pub fn problem(&self) -> &str {
        &self.0.problem
    }

    /// What to change.
    pub fn fix(&self) -> &str {
        &self.0.fix
    }
}

/// A provider's answer that is not in the shape its API documents.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the provider's answer is not in its documented shape: {what}")]
#[non_exhaustive]
pub struct ProviderError {
    /// What is wrong with it.
    pub what: String,
}

impl ProviderError {
    #[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
    fn shape(what: impl Into<String>) -> Self {
        Self { what: what.into() }
    }
}

/// What the id of a call Gemini gave none starts with.
#[cfg(feature = "gemini")]
const SYNTHESIZED_ID: &str = "synthesized_call_";

/// The parameters of a tool that takes none, for the targets that want the field.
#[cfg(any(feature = "openai", feature = "anthropic", feature = "mcp"))]
fn no_parameters() -> Value {
    serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false})
}
