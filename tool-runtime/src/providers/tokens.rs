//! What a lowered catalog costs in tokens, per request and per tool.
//!
//! Each tool is counted as the JSON its target's request carries (OpenAI's Chat Completions
//! `tools` entry, Anthropic's `tools` entry, Gemini's function declaration, MCP's name,
//! description and `inputSchema`), compact, with OpenAI's `o200k_base` encoding. Providers
//! render tools into the prompt in their own way and other models use other encodings: the
//! figure is an estimate that ranks tools and compares targets, not the bill.

use serde_json::Value;

use super::{LoweredCatalog, Target, anthropic, gemini, openai};

/// The tokens of a lowered catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TokenCount {
    /// The target counted.
    pub target: Target,
    /// Every tool's tokens, in the catalog's order.
    pub per_tool: Vec<(String, usize)>,
    /// Their sum: an estimate of what the tool list adds to each request.
    pub total: usize,
}

/// The tokens `catalog` costs, per tool and in all.
pub fn count(catalog: &LoweredCatalog) -> TokenCount {
    let bpe = tiktoken_rs::o200k_base_singleton();
    let entries = request_entries(catalog);
    let per_tool: Vec<(String, usize)> = catalog
        .tools()
        .zip(&entries)
        .map(|(tool, entry)| (tool.name.clone(), bpe.count_ordinary(&entry.to_string())))
        .collect();
    let total = per_tool.iter().map(|(_, tokens)| tokens).sum();
    TokenCount {
        target: catalog.target(),
        per_tool,
        total,
    }
}

/// Each tool as its target's request carries it, in the catalog's order.
fn request_entries(catalog: &LoweredCatalog) -> Vec<Value> {
    match catalog.target() {
        Target::OpenAiStrict => openai::chat_tools(catalog),
        Target::Anthropic | Target::AnthropicStrict => anthropic::tools(catalog),
        Target::Gemini | Target::GeminiParameters => gemini::tools(catalog)
            .into_iter()
            .filter_map(|entry| match entry {
                Value::Object(mut entry) => entry.remove("functionDeclarations"),
                _ => None,
            })
            .flat_map(|declarations| match declarations {
                Value::Array(declarations) => declarations,
                _ => Vec::new(),
            })
            .collect(),
        Target::Mcp => catalog
            .tools()
            .map(|tool| {
                serde_json::json!({
                    "name": tool.name,
                    "description": tool.description,
                    "inputSchema": tool.parameters.clone().unwrap_or_else(super::no_parameters),
                })
            })
            .collect(),
    }
}
