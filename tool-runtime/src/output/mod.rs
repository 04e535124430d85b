//! The output policy: what the model receives of a result.
//!
//! In order: secrets are [redacted](redact); output longer than the tool's limit keeps its
//! head and tail with a notice between them saying how much was left out and how to read it,
//! and the full (redacted) output is kept in an [artifact store](artifacts); a page of a
//! pagination tool ends with a notice of the total and the next cursor. Nothing is ever cut
//! silently.

pub(crate) mod artifacts;
pub(crate) mod redact;

use std::borrow::Cow;

use tool_core::{PageInfo, ToolOutput};

use artifacts::ArtifactStore;
use redact::Redactor;

/// The share of the character budget kept from the start of a cut output; the rest is kept
/// from its end, where results often summarize or fail.
const HEAD_SHARE: f64 = 0.7;

/// What the model receives of one result.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Shaped {
    pub(crate) content: String,
    pub(crate) truncated: bool,
    pub(crate) redactions: u32,
    pub(crate) artifact: Option<String>,
}

/// Applies the output policy to a tool's output.
pub(crate) fn shape(
    output: ToolOutput,
    max_chars: usize,
    redactor: &Redactor,
    artifacts: &dyn ArtifactStore,
) -> Shaped {
    let page = output.page().cloned();
    let text = output.into_text();
    let (redacted, redactions) = redactor.redact(&text);
    let redactions = u32::try_from(redactions).unwrap_or(u32::MAX);
    let text = match redacted {
        Cow::Borrowed(_) => text,
        Cow::Owned(redacted) => redacted,
    };
    // More bytes than the limit allows characters is the only case worth counting characters.
    let total = if text.len() > max_chars {
        text.chars().count()
    } else {
        text.len()
    };
    let mut shaped = if total > max_chars {
        let artifact = artifacts.put(&text);
        let (content, artifact) = cut(&text, total, max_chars, artifact.ok());
        Shaped {
            content,
            truncated: true,
            redactions,
            artifact,
        }
    } else {
        Shaped {
            content: text,
            truncated: false,
            redactions,
            artifact: None,
        }
    };
    if let Some(page) = &page {
        shaped.content.push_str(&page_notice(page));
    }
    shaped
}

/// Keeps the head and tail of `text` (`total` characters) within `max_chars`, with a notice.
fn cut(
    text: &str,
    total: usize,
    max_chars: usize,
    artifact: Option<String>,
) -> (String, Option<String>) {
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "a share of a character count, rounded down"
    )]
    let head_chars = (max_chars as f64 * HEAD_SHARE) as usize;
    let tail_chars = max_chars - head_chars;
    let head_end = byte_index(text, head_chars);
    let tail_start = byte_index(text, total - tail_chars);
    let omitted = total - head_chars - tail_chars;
    let how = match &artifact {
        Some(id) => format!(
            "the full output is artifact {id}; read the omitted part with read_artifact {{\"artifact_id\": \"{id}\", \"offset\": {head_chars}, \"limit\": {omitted}}}, or narrow the request"
        ),
        None => "the full output could not be kept; narrow the request to see the rest".to_owned(),
    };
    let notice = format!(
        "\n[... {omitted} of {total} characters omitted (characters {head_chars}..{}); {how} ...]\n",
        head_chars + omitted
    );
    let mut content = String::with_capacity(head_end + notice.len() + text.len() - tail_start);
    content.push_str(&text[..head_end]);
    content.push_str(&notice);
    content.push_str(&text[tail_start..]);
    (content, artifact)
}

/// The byte index of character `chars` of `text`.
fn byte_index(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(index, _)| index)
}

/// The line a page ends with: how many items there are and how to get the next page.
pub(crate) fn page_notice(page: &PageInfo) -> String {
    let of_total = page
        .total
        .map(|total| format!(" of {total}"))
        .unwrap_or_default();
    match &page.next_cursor {
        Some(cursor) => format!(
            "\n[page: {} items{of_total}; more remain: call again with \"cursor\": {}]",
            page.returned,
            serde_json::Value::String(cursor.clone())
        ),
        None => format!(
            "\n[page: {} items{of_total}; this is the last page]",
            page.returned
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use artifacts::MemoryArtifacts;

    fn shape_text(text: &str, max_chars: usize) -> Shaped {
        let output = ToolOutput::from_json(serde_json::Value::String(text.to_owned()).to_string());
        shape(
            output,
            max_chars,
            &Redactor::default(),
            &MemoryArtifacts::default(),
        )
    }

    #[test]
    fn short_output_passes_untouched() {
        let shaped = shape_text("order A-1024 shipped", 100);
        assert_eq!(shaped.content, "order A-1024 shipped");
        assert!(!shaped.truncated);
        assert_eq!(shaped.artifact, None);
    }

    #[test]
    fn long_output_keeps_head_and_tail_with_an_exact_notice() {
        let text: String = ('a'..='z').cycle().take(100).collect();
        let shaped = shape_text(&text, 20);
        let id = artifacts::artifact_id(&text);
        assert_eq!(
            shaped.content,
            format!(
                "abcdefghijklmn\n[... 80 of 100 characters omitted (characters 14..94); the full output is artifact {id}; read the omitted part with read_artifact {{\"artifact_id\": \"{id}\", \"offset\": 14, \"limit\": 80}}, or narrow the request ...]\nqrstuv"
            )
        );
        assert!(shaped.truncated);
        assert_eq!(shaped.artifact, Some(id));
    }

    #[test]
    fn cutting_respects_characters_not_bytes() {
        let text = "é".repeat(50);
        let shaped = shape_text(&text, 10);
        assert!(
            shaped
                .content
                .starts_with("ééééééé\n[... 40 of 50 characters omitted")
        );
        assert!(shaped.content.ends_with("...]\néééé") || shaped.content.ends_with("...]\nééé"));
    }

    #[test]
    fn secrets_are_redacted_before_cutting_and_in_the_artifact() {
        let secret = "sk-proj-abcdefghijklmnopqrstuvwx1234";
        let text = format!("{secret} {}", "x".repeat(200));
        let store = MemoryArtifacts::default();
        let output = ToolOutput::from_json(serde_json::Value::String(text).to_string());
        let shaped = shape(output, 50, &Redactor::default(), &store);
        assert_eq!(shaped.redactions, 1);
        assert!(shaped.content.starts_with("[REDACTED:openai_api_key] xxx"));
        let kept = shaped.artifact.and_then(|id| store.get(&id).ok().flatten());
        assert!(kept.is_some_and(|kept| !kept.contains(secret)));
    }

    #[test]
    fn page_notices_give_total_and_cursor() {
        let page = PageInfo {
            returned: 10,
            next_cursor: Some("offset:10".to_owned()),
            total: Some(40),
        };
        assert_eq!(
            page_notice(&page),
            "\n[page: 10 items of 40; more remain: call again with \"cursor\": \"offset:10\"]"
        );
        let last = PageInfo {
            returned: 3,
            next_cursor: None,
            total: None,
        };
        assert_eq!(
            page_notice(&last),
            "\n[page: 3 items; this is the last page]"
        );
    }
}
