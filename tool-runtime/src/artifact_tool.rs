//! `read_artifact`: the built-in tool that reads the part of a cut output the model did not
//! see, so a truncation notice always says how to get the rest.

use std::sync::Arc;

use serde_json::{Value, json};
use tool_core::{RunContext, ToolError};

use crate::dynamic::{DynamicTool, DynamicToolError};
use crate::output::artifacts::{self, ArtifactStore};

/// The name of the built-in tool.
pub const READ_ARTIFACT: &str = "read_artifact";

pub(crate) fn read_artifact(
    store: Arc<dyn ArtifactStore>,
    max_chars: usize,
) -> Result<DynamicTool, DynamicToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "artifact_id": {"type": "string", "description": "The id a truncation notice named, e.g. \"art-0123456789abcdef0123456789abcdef\"."},
            "offset": {"type": "integer", "minimum": 0, "default": 0, "description": "The first character to read."},
            "limit": {"type": "integer", "minimum": 1, "maximum": max_chars, "description": format!("How many characters to read, at most {max_chars}.")}
        },
        "required": ["artifact_id"]
    });
    DynamicTool::builder(
        READ_ARTIFACT,
        "Read part of a tool output that was cut because it was too long.\n\nUse the artifact id, offset and limit given in the truncation notice.",
        schema,
    )
    .read_only()
    .max_output_chars(max_chars + 200)
    .handler(move |args: Value, ctx: RunContext| {
        let store = Arc::clone(&store);
        async move {
            let id = args["artifact_id"].as_str().unwrap_or_default().to_owned();
            let offset = usize::try_from(args["offset"].as_u64().unwrap_or(0)).unwrap_or(usize::MAX);
            let limit = args["limit"]
                .as_u64()
                .and_then(|limit| usize::try_from(limit).ok())
                .unwrap_or(max_chars)
                .min(max_chars);
            // A store that waits on I/O is read on the blocking pool, not on the turn's task.
            let found = if store.blocks() && tokio::runtime::Handle::try_current().is_ok() {
                // A long error's text may still be on its way to the store.
                artifacts::wait_for_puts(&store, ctx.session_id(), &id).await;
                let (session, id) = (ctx.session_id().to_owned(), id.clone());
                tokio::task::spawn_blocking(move || store.get(&session, &id))
                    .await
                    .map_err(ToolError::transient)?
            } else {
                store.get(ctx.session_id(), &id)
            };
            let content = found
                .map_err(ToolError::transient)?
                .ok_or_else(|| {
                    ToolError::failed(format!("there is no artifact `{id}`"))
                        .with_hint("use the id from the truncation notice; artifacts expire")
                })?;
            let total = content.chars().count();
            let text: String = content.chars().skip(offset).take(limit).collect();
            let end = offset.saturating_add(text.chars().count()).min(total);
            let more = if end < total {
                format!("; more from offset {end}")
            } else {
                "; this is the end".to_owned()
            };
            Ok(Value::String(format!(
                "[{id}: characters {}..{end} of {total}{more}]\n{text}",
                offset.min(total)
            )))
        }
    })
    .build()
}
