//! What a model emits in one turn: [`ToolCall`]s.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::arguments::Arguments;

/// One tool call a model emitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call; the observation answers it (sharing this string).
    pub id: Arc<str>,
    /// The tool the model named (which may not exist).
    pub name: String,
    /// The arguments the model sent.
    pub arguments: Arguments,
    /// A key the caller supplies so the call runs once under it (an HTTP `Idempotency-Key`
    /// that reached the agent, or a run id + call id that survives a retry through the model
    /// with changed arguments). Without one, a write's key is its fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<Arc<str>>,
}

impl ToolCall {
    /// A call of `name` with `arguments`, answered under `id`.
    pub fn new(
        id: impl Into<Arc<str>>,
        name: impl Into<String>,
        arguments: impl Into<Arguments>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
            idempotency_key: None,
        }
    }

    /// The call, run once under `key` (see [`ToolCall::idempotency_key`]). Reusing a key with
    /// other arguments is refused (`idempotency_key_reused`).
    #[must_use]
    pub fn with_idempotency_key(mut self, key: impl Into<Arc<str>>) -> Self {
        self.idempotency_key = Some(key.into());
        self
    }
}
