//! What a tool sends its client (progress messages, log messages, the questions of sampling
//! and elicitation), redacted as its output is: a secret the model must not see must not reach
//! the client's logs or screens either.

use std::sync::Arc;

use tool_core::BoxFuture;
use tool_core::client::{
    ClientError, ClientLink, Elicitation, Elicited, LogMessage, Progress, Sampled, SamplingRequest,
};

use super::redact::Redactor;

/// A [`ClientLink`] whose outgoing texts are redacted first.
pub(crate) struct RedactingClient {
    pub(crate) inner: Arc<dyn ClientLink>,
    pub(crate) redactor: Arc<Redactor>,
}

impl RedactingClient {
    fn text(&self, text: &mut String) {
        let (redacted, found) = self.redactor.redact(text);
        if found > 0 {
            *text = redacted.into_owned();
        }
    }
}

impl ClientLink for RedactingClient {
    fn progress(&self, mut progress: Progress) -> BoxFuture<'_, ()> {
        if let Some(message) = &mut progress.message {
            self.text(message);
        }
        self.inner.progress(progress)
    }

    fn log(&self, mut message: LogMessage) -> BoxFuture<'_, ()> {
        self.redactor.redact_value(&mut message.data);
        self.inner.log(message)
    }

    fn sample(&self, mut request: SamplingRequest) -> BoxFuture<'_, Result<Sampled, ClientError>> {
        for message in &mut request.messages {
            self.text(&mut message.text);
        }
        if let Some(system) = &mut request.system_prompt {
            self.text(system);
        }
        self.inner.sample(request)
    }

    fn elicit(&self, mut request: Elicitation) -> BoxFuture<'_, Result<Elicited, ClientError>> {
        self.text(&mut request.message);
        self.redactor.redact_value(&mut request.schema);
        self.inner.elicit(request)
    }

    fn can_sample(&self) -> bool {
        self.inner.can_sample()
    }

    fn can_elicit(&self) -> bool {
        self.inner.can_elicit()
    }
}
