//! A streamed answer: server-sent events whose `data` are chat completion chunks, ending with
//! `data: [DONE]`. The deltas are gathered into one assistant message, read like an answer
//! that did not stream; a stream that stops early gives nothing of what it carried.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::Failure;
use super::wire::{self, excerpt};
use crate::model::ModelResponse;
use crate::providers::LoweredCatalog;

/// Splits the bytes of an event stream into events' data (the `data:` lines of each event,
/// joined by newlines). Other fields (`event`, `id`, `retry`) and comments are skipped.
#[derive(Debug, Default)]
pub(super) struct Events {
    /// Bytes after the last line end.
    pending: Vec<u8>,
    /// The data lines of the event being read.
    data: Option<String>,
}

impl Events {
    /// The events `bytes` complete.
    pub(super) fn feed(&mut self, bytes: &[u8]) -> Result<Vec<String>, Failure> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut start = 0;
        while let Some(end) = memchr::memchr(b'\n', &self.pending[start..]) {
            let line = &self.pending[start..start + end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let line = std::str::from_utf8(line).map_err(|_| {
                Failure::malformed("sent a stream line that is not UTF-8".to_owned())
            })?;
            if let Some(event) = Self::line(&mut self.data, line) {
                events.push(event);
            }
            start += end + 1;
        }
        self.pending.drain(..start);
        Ok(events)
    }

    /// The event left when the stream ends without the blank line that would end it.
    pub(super) fn end(&mut self) -> Result<Option<String>, Failure> {
        let rest = std::mem::take(&mut self.pending);
        let rest = std::str::from_utf8(&rest)
            .map_err(|_| Failure::malformed("sent a stream line that is not UTF-8".to_owned()))?;
        let rest = rest.strip_suffix('\r').unwrap_or(rest);
        if let Some(event) = Self::line(&mut self.data, rest) {
            return Ok(Some(event));
        }
        Ok(self.data.take())
    }

    /// Reads one line into `data`; a blank line ends the event.
    fn line(data: &mut Option<String>, line: &str) -> Option<String> {
        if line.is_empty() {
            return data.take();
        }
        // Other fields and comments carry nothing this reader needs.
        let value = line.strip_prefix("data")?;
        let value = match value.strip_prefix(':') {
            Some(value) => value.strip_prefix(' ').unwrap_or(value),
            // `data` alone is a data line with no value; `database: ...` is another field.
            None if value.is_empty() => "",
            None => return None,
        };
        match data {
            Some(joined) => {
                joined.push('\n');
                joined.push_str(value);
            }
            None => *data = Some(value.to_owned()),
        }
        None
    }
}

/// One tool call as its deltas built it.
#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// The answer the chunks have built so far.
#[derive(Debug, Default)]
pub(super) struct Answer {
    content: String,
    refusal: String,
    /// By the call's `index`.
    calls: BTreeMap<u64, PartialCall>,
    usage: Option<Value>,
    finished: bool,
    done: bool,
}

impl Answer {
    /// Whether `data: [DONE]` arrived: nothing after it is read.
    pub(super) fn is_done(&self) -> bool {
        self.done
    }

    /// Reads one event's data.
    pub(super) fn event(&mut self, data: &str) -> Result<(), Failure> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data).map_err(|error| {
            Failure::malformed(format!(
                "sent a stream event that is not JSON (expected a chat completion chunk): \
                 {error}; it begins `{}`",
                excerpt(data)
            ))
        })?;
        // vLLM and others report a failure in the middle of a stream this way.
        if let Some(error) = chunk.get("error").filter(|error| !error.is_null()) {
            return Err(Failure::stream_error(wire::error_text(error)));
        }
        if let Some(usage) = chunk.get("usage").filter(|usage| usage.is_object()) {
            self.usage = Some(usage.clone());
        }
        let choices = chunk.get("choices").and_then(Value::as_array);
        for choice in choices.into_iter().flatten() {
            // One answer is asked for; another choice would be another answer.
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            if choice
                .get("finish_reason")
                .is_some_and(|reason| !reason.is_null())
            {
                self.finished = true;
            }
            if let Some(delta) = choice.get("delta") {
                self.delta(delta);
            }
        }
        Ok(())
    }

    /// Adds a delta's text and tool call pieces: a call's id and name come with its first
    /// piece, its arguments in pieces after.
    fn delta(&mut self, delta: &Value) {
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            self.content.push_str(text);
        }
        if let Some(text) = delta.get("refusal").and_then(Value::as_str) {
            self.refusal.push_str(text);
        }
        let calls = delta.get("tool_calls").and_then(Value::as_array);
        for (position, piece) in calls.into_iter().flatten().enumerate() {
            // A server that numbers no call: the calls of one delta, in order.
            let index = piece
                .get("index")
                .and_then(Value::as_u64)
                .unwrap_or(position as u64);
            let call = self.calls.entry(index).or_default();
            let function = piece.get("function");
            let text = |value: Option<&Value>, key: &str| {
                value
                    .and_then(|value| value.get(key))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            };
            // Servers that repeat the id or the name on each piece repeat the same one.
            if call.id.is_empty() {
                call.id = text(Some(piece), "id").unwrap_or_default();
            }
            if call.name.is_empty() {
                call.name = text(function, "name").unwrap_or_default();
            }
            if let Some(arguments) = text(function, "arguments") {
                call.arguments.push_str(&arguments);
            }
        }
    }

    /// The whole answer, once the stream ended: after `[DONE]`, or after a finish reason
    /// (a server that sends no `[DONE]`). Otherwise the stream was cut short, and its calls
    /// may lack arguments: none is returned.
    pub(super) fn finish(self, catalog: &LoweredCatalog) -> Result<ModelResponse, Failure> {
        if !self.done && !self.finished {
            return Err(Failure::malformed(
                "ended the stream before `data: [DONE]` and before a finish reason: the answer \
                 was cut short, and none of it is returned"
                    .to_owned(),
            ));
        }
        let nonempty = |text: String| (!text.is_empty()).then_some(text);
        let mut message = json!({
            "role": "assistant",
            "content": nonempty(self.content),
            "refusal": nonempty(self.refusal),
        });
        if !self.calls.is_empty() {
            let calls = self.calls.into_values().map(|call| {
                // A call without an id or a name is refused by the reader, as in a whole answer.
                json!({
                    "id": nonempty(call.id),
                    "type": "function",
                    "function": {"name": nonempty(call.name), "arguments": call.arguments},
                })
            });
            message["tool_calls"] = calls.collect();
        }
        wire::response(&message, self.usage.as_ref(), catalog)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&str]) -> Vec<String> {
        let mut reader = Events::default();
        let mut all = Vec::new();
        for chunk in chunks {
            all.extend(reader.feed(chunk.as_bytes()).expect("UTF-8"));
        }
        all.extend(reader.end().expect("UTF-8"));
        all
    }

    #[test]
    fn events_split_across_chunks_and_line_ends() {
        assert_eq!(
            events(&[
                "data: {\"a\"",
                ":1}\r\n\r\n: keep-alive\n\nevent: x\ndata: 2\n",
                "\n"
            ]),
            ["{\"a\":1}", "2"]
        );
        assert_eq!(events(&["data:one\ndata: two\n\n"]), ["one\ntwo"]);
        assert_eq!(
            events(&["data: [DONE]"]),
            ["[DONE]"],
            "the last event needs no blank line"
        );
        assert_eq!(
            events(&["database: 1\n\n", "id: 3\n\n"]),
            Vec::<String>::new()
        );
    }

    #[test]
    fn cut_streams_give_nothing() {
        let catalog = crate::providers::Lowerings::new(0)
            .catalog(std::iter::empty(), crate::providers::Target::OpenAiStrict)
            .expect("an empty catalog lowers");
        let mut answer = Answer::default();
        answer
            .event(r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"t","arguments":"{\"a\""}}]}}]}"#)
            .expect("a chunk");
        let failure = answer.finish(&catalog).expect_err("cut short");
        assert!(failure.detail.contains("cut short"), "{}", failure.detail);
    }
}
