//! Tokens counted when a model reports none: with the feature `tokens`, OpenAI's `o200k_base`
//! encoding; without it, one token per four characters. Either is an estimate that keeps a
//! token budget meaningful for a model that reports no usage, not the bill.

use crate::Arguments;
use crate::model::{Message, ModelResponse, Usage};
use crate::providers::{LoweredCatalog, LoweredTool};

/// Counts a run's requests: the catalog once, each message once.
pub(super) struct Counter {
    /// The tokens of the catalog, sent with every request.
    catalog: u64,
    /// The tokens of the messages counted so far, and how many they are.
    counted: u64,
    messages: usize,
}

impl Counter {
    pub(super) fn new(catalog: &LoweredCatalog, messages: &[Message]) -> Self {
        let catalog = catalog.tools().map(of_tool).sum();
        let mut counter = Self {
            catalog,
            counted: 0,
            messages: 0,
        };
        counter.catch_up(messages);
        counter
    }

    fn catch_up(&mut self, messages: &[Message]) {
        for message in messages.iter().skip(self.messages) {
            self.counted += of_message(message);
        }
        self.messages = messages.len();
    }

    /// The usage of one request over `messages` answered with `response`.
    pub(super) fn estimate(&mut self, messages: &[Message], response: &ModelResponse) -> Usage {
        self.catch_up(messages);
        let output = response.text.as_deref().map_or(0, count)
            + response
                .calls
                .iter()
                .map(|call| count(&call.name) + of_arguments(&call.arguments))
                .sum::<u64>();
        Usage::new(self.catalog + self.counted, output)
    }
}

/// The tokens of one tool of a catalog: its name, its description and its schema.
pub(super) fn of_tool(tool: &LoweredTool) -> u64 {
    count(&tool.name)
        + count(&tool.description)
        + tool
            .parameters
            .as_ref()
            .map_or(0, |parameters| count(&parameters.to_string()))
}

fn of_message(message: &Message) -> u64 {
    match message {
        Message::System { text } | Message::User { text } => count(text),
        Message::Assistant { text, calls } => {
            text.as_deref().map_or(0, count)
                + calls
                    .iter()
                    .map(|call| count(&call.name) + of_arguments(&call.arguments))
                    .sum::<u64>()
        }
        Message::Tool { content, .. } => count(content),
    }
}

fn of_arguments(arguments: &Arguments) -> u64 {
    match arguments {
        Arguments::Json(text) => count(text),
        Arguments::Value(value) => count(&value.to_string()),
    }
}

#[cfg(feature = "tokens")]
fn count(text: &str) -> u64 {
    let tokens = tiktoken_rs::o200k_base_singleton().count_ordinary(text);
    u64::try_from(tokens).unwrap_or(u64::MAX)
}

#[cfg(not(feature = "tokens"))]
fn count(text: &str) -> u64 {
    u64::try_from(text.chars().count().div_ceil(4)).unwrap_or(u64::MAX)
}
