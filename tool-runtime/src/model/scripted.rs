//! A model whose answers are written in advance.

use tool_core::BoxFuture;

use super::{Message, Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse};

/// A model that answers from a script: round `n` of a request (the `n`th answer since the
/// user's last message) gets the script's `n`th response. The round is read from the
/// conversation, not counted by the model, so a run resumed in another process gets the
/// answers the first one would have.
///
/// ```
/// use tool_runtime::ToolCall;
/// use tool_runtime::model::{ModelResponse, ScriptedModel};
///
/// let model = ScriptedModel::new([
///     ModelResponse::calls([ToolCall::new("c1", "get_order_status", r#"{"order_id":"A-1008"}"#)]),
///     ModelResponse::text("A-1008 ships tomorrow."),
/// ]);
/// # let _ = model;
/// ```
#[derive(Debug, Clone)]
pub struct ScriptedModel {
    responses: Vec<ModelResponse>,
}

impl ScriptedModel {
    /// A model answering `responses`, one per round.
    pub fn new(responses: impl IntoIterator<Item = ModelResponse>) -> Self {
        Self {
            responses: responses.into_iter().collect(),
        }
    }

    /// The round a conversation is at: the answers since the user's last message.
    fn round(messages: &[Message]) -> usize {
        messages
            .iter()
            .rev()
            .take_while(|message| !matches!(message, Message::User { .. }))
            .filter(|message| matches!(message, Message::Assistant { .. }))
            .count()
    }
}

impl Model for ScriptedModel {
    fn name(&self) -> &str {
        "scripted"
    }

    fn respond<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let round = Self::round(request.messages);
        let answer = self.responses.get(round).cloned().ok_or_else(|| {
            ModelError::new(
                ModelErrorKind::Other,
                format!(
                    "the script has {} answers; round {} has none",
                    self.responses.len(),
                    round + 1
                ),
            )
        });
        Box::pin(std::future::ready(answer))
    }
}
