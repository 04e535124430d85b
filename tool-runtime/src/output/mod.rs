//! What the model receives of a result: which secrets are redacted, and where cut outputs
//! are kept.
//!
//! An application sets the [`Redactor`] (its own [`SecretPattern`]s beside the built-in
//! ones) with [`RuntimeBuilder::redactor`](crate::RuntimeBuilder::redactor), and the
//! [`ArtifactStore`] that keeps full outputs with
//! [`RuntimeBuilder::artifacts`](crate::RuntimeBuilder::artifacts): [`MemoryArtifacts`] by
//! default, [`DirectoryArtifacts`] on disk (both bounded by [`ArtifactLimits`]), or its own,
//! reporting an [`ArtifactError`]. The model reads the rest of a cut output with the built-in
//! [`READ_ARTIFACT`] tool.
//!
//! In order: secrets are redacted; output longer than the tool's limit keeps its head and
//! tail with a notice between them saying how much was left out and how to read it, and the
//! full (redacted) output is kept in an artifact store; a page of a pagination tool ends with
//! a notice of the total and the next cursor. Nothing is ever cut silently.

pub(crate) mod artifacts;
pub(crate) mod redact;
pub(crate) mod redact_client;

pub use crate::artifact_tool::READ_ARTIFACT;
pub use artifacts::{
    ArtifactError, ArtifactLimits, ArtifactStore, DirectoryArtifacts, MemoryArtifacts,
};
pub use redact::{Redactor, SecretPattern};

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;
use tool_core::{Content, Contents, PageInfo, ToolError, ToolOutput};

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
    /// The content is the JSON of content blocks ([`tool_core::Contents`]).
    pub(crate) blocks: bool,
}

/// How the output policy applies to one call.
#[derive(Clone, Copy)]
pub(crate) struct Policy<'a> {
    pub(crate) max_chars: usize,
    pub(crate) redactor: &'a Redactor,
    pub(crate) artifacts: &'a dyn ArtifactStore,
    /// The same store, shared, where an error is shaped on the turn's task: a long error's
    /// whole text can then be stored on the blocking pool without waiting ([`shape_error`]).
    pub(crate) shared_artifacts: Option<&'a Arc<dyn ArtifactStore>>,
    /// The session the output belongs to: its artifact is readable from it only.
    pub(crate) session: &'a str,
    /// The most characters one `read_artifact` call returns, for the notice's suggestion.
    pub(crate) read_limit: usize,
    /// The output was shaped already (a page of an artifact, kept redacted): it is returned
    /// exactly, only cut if over the limit.
    pub(crate) verbatim: bool,
}

impl Policy<'_> {
    fn redact(&self, text: String, redactions: &mut u32) -> String {
        if self.verbatim {
            return text;
        }
        let (redacted, count) = self.redactor.redact(&text);
        *redactions = redactions.saturating_add(u32::try_from(count).unwrap_or(u32::MAX));
        match redacted {
            Cow::Borrowed(_) => text,
            Cow::Owned(redacted) => redacted,
        }
    }

    /// `text` redacted, then cut to the limit (the whole kept as an artifact, before this
    /// returns unless `behind`: see [`Policy::keep`]).
    fn limit(
        &self,
        text: String,
        redactions: &mut u32,
        behind: bool,
    ) -> (String, bool, Option<String>) {
        let text = self.redact(text, redactions);
        // More bytes than the limit allows characters is the only case worth counting.
        let total = if text.len() > self.max_chars {
            text.chars().count()
        } else {
            text.len()
        };
        if total <= self.max_chars {
            return (text, false, None);
        }
        let artifact = self.keep(&text, behind);
        let (content, artifact) = cut(&text, total, self.max_chars, self.read_limit, artifact);
        (content, true, artifact)
    }

    /// Keeps `text` as an artifact; its id, `None` when it could not be kept. With `behind`,
    /// a store that blocks and knows the id beforehand ([`ArtifactStore::id_for`]) gets the
    /// text on tokio's blocking pool, and the id is answered without waiting for the `put`.
    fn keep(&self, text: &str, behind: bool) -> Option<String> {
        if behind
            && let Some(store) = self.shared_artifacts
            && store.blocks()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
            && let Some(id) = store.id_for(self.session, text)
        {
            artifacts::put_behind(&runtime, store, self.session, text, &id);
            return Some(id);
        }
        self.artifacts.put(self.session, text).ok()
    }
}

/// Outputs at least this long are shaped on the blocking pool, where their redaction and cut
/// do not hold up the other calls of the turn.
pub(crate) const LARGE_OUTPUT: usize = 256 << 10;

/// An output policy that owns what it needs, to shape an output on another thread.
pub(crate) struct OwnedPolicy {
    max_chars: usize,
    redactor: Arc<Redactor>,
    artifacts: Arc<dyn ArtifactStore>,
    session: String,
    read_limit: usize,
    verbatim: bool,
}

impl OwnedPolicy {
    pub(crate) fn new(
        policy: &Policy<'_>,
        redactor: &Arc<Redactor>,
        artifacts: &Arc<dyn ArtifactStore>,
    ) -> Self {
        Self {
            max_chars: policy.max_chars,
            redactor: Arc::clone(redactor),
            artifacts: Arc::clone(artifacts),
            session: policy.session.to_owned(),
            read_limit: policy.read_limit,
            verbatim: policy.verbatim,
        }
    }

    pub(crate) fn shape(&self, output: ToolOutput) -> Shaped {
        shape(
            output,
            &Policy {
                max_chars: self.max_chars,
                redactor: &self.redactor,
                artifacts: self.artifacts.as_ref(),
                shared_artifacts: None,
                session: &self.session,
                read_limit: self.read_limit,
                verbatim: self.verbatim,
            },
        )
    }
}

/// Applies the output policy to a tool's output: secrets redacted, cut to the limit with a
/// notice, the page notice added; then what the model receives is redacted once more as a
/// whole (a cursor in the page notice can be a token).
pub(crate) fn shape(output: ToolOutput, policy: &Policy<'_>) -> Shaped {
    if let Some(blocks) = output.content_blocks() {
        return shape_blocks(blocks, policy);
    }
    let page = output.page().cloned();
    let mut redactions = 0;
    let (mut content, truncated, artifact) =
        policy.limit(output.into_text(), &mut redactions, false);
    if let Some(page) = &page {
        content.push_str(&page_notice(page));
        content = policy.redact(content, &mut redactions);
    }
    Shaped {
        content,
        truncated,
        redactions,
        artifact,
        blocks: false,
    }
}

/// The output policy on content blocks: each text (a text block's, an embedded text
/// resource's) redacted and cut to the limit as a text output is; images, audio and binary
/// resources pass whole (their base64 is no text to redact, and a cut one is no image).
fn shape_blocks(mut blocks: Vec<Content>, policy: &Policy<'_>) -> Shaped {
    let mut redactions = 0;
    let mut truncated = false;
    let mut artifact = None;
    for text in blocks.iter_mut().filter_map(block_text) {
        let (content, cut, kept) = policy.limit(std::mem::take(text), &mut redactions, false);
        *text = content;
        truncated |= cut;
        artifact = artifact.or(kept);
    }
    Shaped {
        content: serde_json::to_string(&blocks).unwrap_or_default(),
        truncated,
        redactions,
        artifact,
        blocks: true,
    }
}

/// The text of a block, when it has one.
fn block_text(block: &mut Content) -> Option<&mut String> {
    match block {
        Content::Text { text } => Some(text),
        Content::Resource { resource } => resource.text.as_mut(),
        _ => None,
    }
}

/// `output` with its secrets redacted, as the model or a calling tool reads it, and how many
/// were: a string result (or a JSON string) as its text, anything else as its JSON. This is
/// what the idempotency store keeps, so a secret the model never sees rests nowhere in clear,
/// and a replay shaped again is what the first call's reader got (redacting it again finds
/// nothing).
pub(crate) fn redacted(output: ToolOutput, redactor: &Redactor) -> (ToolOutput, u32) {
    if let Some(mut blocks) = output.content_blocks() {
        let mut count = 0usize;
        for text in blocks.iter_mut().filter_map(block_text) {
            let (redacted, found) = redactor.redact(text);
            if found > 0 {
                *text = redacted.into_owned();
                count += found;
            }
        }
        let count = u32::try_from(count).unwrap_or(u32::MAX);
        if count == 0 {
            return (output, 0);
        }
        return match ToolOutput::from_serialize(&Contents::from(blocks)) {
            Ok(redacted) => (redacted, count),
            Err(_) => (output, count),
        };
    }
    let as_text = output.is_text() || output.json().starts_with('"');
    let (redacted, count) = if as_text {
        let source = output.text();
        let (text, count) = redactor.redact(&source);
        (
            (count > 0).then(|| ToolOutput::from_text(text.into_owned())),
            count,
        )
    } else {
        let (json, count) = redactor.redact(output.json());
        (
            (count > 0).then(|| ToolOutput::from_json(json.into_owned())),
            count,
        )
    };
    let mut count = u32::try_from(count).unwrap_or(u32::MAX);
    // A page's cursor can be a token, as the page notice can.
    let page = output.page().and_then(|page| {
        let cursor = page.next_cursor.as_deref()?;
        let (cursor, found) = redactor.redact(cursor);
        (found > 0).then(|| {
            count = count.saturating_add(u32::try_from(found).unwrap_or(u32::MAX));
            let mut page = page.clone();
            page.next_cursor = Some(cursor.into_owned());
            page
        })
    });
    match (redacted, page, output.page()) {
        (None, None, _) => (output, count),
        (None, Some(page), _) => (output.with_page(page), count),
        (Some(redacted), Some(page), _) => (redacted.with_page(page), count),
        (Some(redacted), None, Some(page)) => (redacted.with_page(page.clone()), count),
        (Some(redacted), None, None) => (redacted, count),
    }
}

/// Applies the output policy to an error: its message and hint redacted and cut to the limit
/// like an output, its details redacted (each string in them) and left out when over the
/// limit.
///
/// Errors are shaped where they are answered, on the turn's task (or a calling tool's), from
/// synchronous code: a long message or hint whose store blocks is kept without waiting when
/// the policy has the shared store and the store knows the id beforehand (`Policy::keep`).
/// Shaping errors on the blocking pool instead, as large outputs are, would have to make every
/// place that answers an error wait for it, refusals while a turn is planned included.
pub(crate) fn shape_error(error: ToolError, policy: &Policy<'_>) -> (ToolError, Shaped) {
    let mut redactions = 0;
    let (message, truncated, artifact) =
        policy.limit(error.message().to_owned(), &mut redactions, true);
    let mut error = error.with_message(message);
    if let Some(hint) = error.hint() {
        let (hint, _, _) = policy.limit(hint.to_owned(), &mut redactions, true);
        error = error.with_hint(hint);
    }
    if let Some(details) = error.details() {
        let mut details = details.clone();
        if !policy.verbatim {
            redactions = redactions.saturating_add(policy.redactor.redact_value(&mut details));
        }
        let size = details.to_string().chars().count();
        if size > policy.max_chars {
            details = serde_json::json!({
                "omitted": format!("the details ({size} characters) are over the output limit of {} characters", policy.max_chars)
            });
        }
        error = error.with_details(details);
    }
    let shaped = Shaped {
        content: String::new(),
        truncated,
        redactions,
        artifact,
        blocks: false,
    };
    (error, shaped)
}

/// Keeps the head and tail of `text` (`total` characters) within `max_chars`, with a notice.
fn cut(
    text: &str,
    total: usize,
    max_chars: usize,
    read_limit: usize,
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
    let read = omitted.min(read_limit.max(1));
    let pages = if read < omitted {
        format!(" (at most {read} characters per call: continue from where each page ends)")
    } else {
        String::new()
    };
    let how = match &artifact {
        Some(id) => format!(
            "the full output is artifact {id}; read the omitted part with read_artifact {{\"artifact_id\": \"{id}\", \"offset\": {head_chars}, \"limit\": {read}}}{pages}, or narrow the request"
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
            Value::String(cursor.clone())
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

    fn policy<'a>(
        max_chars: usize,
        redactor: &'a Redactor,
        store: &'a MemoryArtifacts,
    ) -> Policy<'a> {
        Policy {
            max_chars,
            redactor,
            artifacts: store,
            shared_artifacts: None,
            session: "s",
            read_limit: 1_000,
            verbatim: false,
        }
    }

    fn shape_text(text: &str, max_chars: usize) -> Shaped {
        let output = ToolOutput::from_json(Value::String(text.to_owned()).to_string());
        shape(
            output,
            &policy(max_chars, &Redactor::default(), &MemoryArtifacts::default()),
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
        let id = artifacts::artifact_id("s", &text);
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
        let output = ToolOutput::from_json(Value::String(text).to_string());
        let shaped = shape(output, &policy(50, &Redactor::default(), &store));
        assert_eq!(shaped.redactions, 1);
        assert!(shaped.content.starts_with("[REDACTED:openai_api_key] xxx"));
        let kept = shaped
            .artifact
            .and_then(|id| store.get("s", &id).ok().flatten());
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
