//! Speaking each model provider's format: the session's catalog lowered for a target, the
//! model's tool calls parsed into [`ToolCall`](crate::ToolCall)s, and a [`TurnReport`](crate::TurnReport)
//! rendered back in the provider's shape.
//!
//! Every tool has one canonical input schema (what `schemars` derives, what validation
//! checks). A provider accepts a subset of JSON Schema, different for each: a *lowering* is
//! that schema rewritten for one target, computed once per tool and target and cached. The
//! canonical schema is never edited. A keyword a target cannot enforce moves into the
//! description (the model still reads the constraint) and stays validated by the runtime; a
//! schema a target cannot express at all (a map for OpenAI's strict mode, a recursive type for
//! Gemini's `parameters`) is a [`LoweringError`] naming the tool, the keyword, the target and
//! what to change.

mod lower;

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
    pub const ALL: [Target; 6] = [
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
    /// Properties this lowering made required and nullable (OpenAI strict): a `null` the
    /// model sends for one of them means "left out" (the default, or `None`), and is removed
    /// before validation. Each is a path of property names from the root.
    pub nullable_optional: Vec<Vec<String>>,
}

/// Why a tool's schema cannot be lowered for a target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool `{tool}` cannot be lowered for {target}: `{keyword}` at `{pointer}` {problem}; {fix}")]
#[non_exhaustive]
pub struct LoweringError {
    /// The tool.
    pub tool: String,
    /// The target.
    pub target: Target,
    /// The keyword at fault (`additionalProperties`, `$ref`, ...).
    pub keyword: String,
    /// Where, as a JSON pointer into the canonical schema (`/properties/tags`).
    pub pointer: String,
    /// What the target cannot express.
    pub problem: String,
    /// What to change.
    pub fix: String,
}
