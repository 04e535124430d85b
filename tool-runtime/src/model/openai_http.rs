//! [`OpenAiChat`]: a client for OpenAI-compatible Chat Completions endpoints (OpenAI, and
//! servers that speak its API: vLLM, llama.cpp, Ollama, ...).

mod retry_after;
mod stream;
mod wire;

use std::fmt;
use std::time::{Duration, SystemTime};

use rand::Rng;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use reqwest::{Client, Response, StatusCode, Url};
use tool_core::BoxFuture;

use super::{Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse};
use crate::providers::{LoweredCatalog, Target};

/// The longest backoff between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The longest wait a `retry-after` is honoured with: a longer one is waited this long.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// How much of an error body is read (its message is at the start).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// A client for an OpenAI-compatible Chat Completions endpoint: `POST {base}/chat/completions`
/// with the conversation and the session's tools (lowered for OpenAI's strict mode), the
/// answer's text, tool calls and token usage read back.
///
/// Rate limits (HTTP 429), server failures (5xx) and connections that fail before an answer
/// arrives are retried, up to [`max_retries`](Self::max_retries) times, after the wait the
/// endpoint asks for (`retry-after-ms`, `retry-after`) or an exponential backoff with jitter.
/// Nothing else is retried: another 4xx is [`Refused`](ModelErrorKind::Refused), an answer
/// that arrived whole but is not a chat completion is
/// [`Malformed`](ModelErrorKind::Malformed), an attempt that outlasts the
/// [`timeout`](Self::timeout) is [`Timeout`](ModelErrorKind::Timeout). A model's answer is never
/// half returned: a stream cut short is an error, not the calls it had carried so far.
///
/// The key is sent as `Authorization: Bearer ...` and shown nowhere: not in errors, not in
/// [`Debug`](fmt::Debug). Requests need a Tokio runtime.
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::model::{Model, OpenAiChat};
///
/// // A local server (vLLM, llama.cpp, Ollama) takes no key.
/// let model = OpenAiChat::new("http://127.0.0.1:8000/v1", None, "qwen2.5-7b-instruct")
///     .timeout(Duration::from_secs(30))
///     .max_retries(2)
///     .streaming(true)
///     .temperature(0.2);
/// assert_eq!(model.endpoint(), "http://127.0.0.1:8000/v1/chat/completions");
/// assert_eq!(model.name(), "qwen2.5-7b-instruct");
/// ```
pub struct OpenAiChat {
    endpoint: String,
    model: String,
    has_key: bool,
    /// The client, the URL and the `Authorization` header; a configuration that cannot make
    /// them (a base URL that is no URL, no model name) is the error each request answers.
    setup: Result<Setup, ModelError>,
    timeout: Duration,
    max_retries: u32,
    backoff: Duration,
    streaming: bool,
    temperature: Option<f32>,
    max_tokens: Option<u32>,
}

/// What every request uses.
struct Setup {
    client: Client,
    url: Url,
    authorization: Option<HeaderValue>,
}

impl OpenAiChat {
    /// OpenAI's own endpoint, the base URL [`from_env`](Self::from_env) uses when
    /// `OPENAI_BASE_URL` is not set.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.openai.com/v1";

    /// A client asking `model` at `base_url` (`https://api.openai.com/v1`,
    /// `http://127.0.0.1:8000/v1`), with `api_key` if the endpoint wants one.
    ///
    /// Defaults: a timeout of 60 s per attempt, 3 retries, a backoff of 500 ms doubling up to
    /// 30 s, no streaming, the endpoint's own temperature and token limit. A base URL that is
    /// not an `http` or `https` URL, an empty model name or a key that cannot be sent in a
    /// header is answered by each request as a [`Config`](ModelErrorKind::Config) error.
    pub fn new(
        base_url: impl Into<String>,
        api_key: Option<String>,
        model: impl Into<String>,
    ) -> Self {
        let base_url = base_url.into();
        let endpoint = format!("{}/chat/completions", base_url.trim().trim_end_matches('/'));
        let model = model.into();
        let api_key = api_key.filter(|key| !key.trim().is_empty());
        let setup = Setup::new(&base_url, &endpoint, &model, api_key.as_deref());
        Self {
            endpoint,
            model,
            has_key: api_key.is_some(),
            setup,
            timeout: Duration::from_secs(60),
            max_retries: 3,
            backoff: Duration::from_millis(500),
            streaming: false,
            temperature: None,
            max_tokens: None,
        }
    }

    /// A client configured by the environment: `OPENAI_BASE_URL` (default
    /// [`DEFAULT_BASE_URL`](Self::DEFAULT_BASE_URL)), `OPENAI_API_KEY` (optional: local
    /// servers take none) and `OPENAI_MODEL` (required).
    ///
    /// # Errors
    ///
    /// [`Config`](ModelErrorKind::Config) when `OPENAI_MODEL` is not set, or a variable is
    /// not valid Unicode, or the base URL is not an `http` or `https` URL.
    pub fn from_env() -> Result<Self, ModelError> {
        Self::from_lookup(|name| match std::env::var(name) {
            Ok(value) => Ok(Some(value)),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(ModelError::new(
                ModelErrorKind::Config,
                format!("the environment variable {name} is not valid Unicode"),
            )),
        })
    }

    /// [`from_env`](Self::from_env), with the variables read by `lookup` (an empty value is
    /// taken as unset).
    fn from_lookup(
        lookup: impl Fn(&str) -> Result<Option<String>, ModelError>,
    ) -> Result<Self, ModelError> {
        let read = |name: &str| -> Result<Option<String>, ModelError> {
            Ok(lookup(name)?.filter(|value| !value.trim().is_empty()))
        };
        let base_url = read("OPENAI_BASE_URL")?.unwrap_or_else(|| Self::DEFAULT_BASE_URL.into());
        let api_key = read("OPENAI_API_KEY")?;
        let model = read("OPENAI_MODEL")?.ok_or_else(|| {
            ModelError::new(
                ModelErrorKind::Config,
                "OPENAI_MODEL is not set: name the model to ask (an OpenAI model, or the name \
                 a local server such as vLLM, llama.cpp or Ollama serves)",
            )
        })?;
        let chat = Self::new(base_url, api_key, model.trim());
        // The environment is read once, at start-up: say what is wrong now.
        if let Err(error) = &chat.setup {
            return Err(error.clone());
        }
        Ok(chat)
    }

    /// The URL requests are sent to: `{base}/chat/completions`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The longest one attempt may take, from sending the request to the answer's last
    /// byte (a stream included). Default: 60 s.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How many times a rate limit, a server failure or a failed connection is retried:
    /// `max_retries + 1` attempts in all. Default: 3.
    #[must_use]
    pub fn max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// The wait before the first retry when the endpoint asks for none; each further wait
    /// is twice the last, up to 30 s, each randomized to between half and all of it. Default:
    /// 500 ms.
    #[must_use]
    pub fn backoff(mut self, base: Duration) -> Self {
        self.backoff = base;
        self
    }

    /// Whether the answer is streamed (server-sent events). The result is the same either
    /// way; a stream keeps a slow answer's connection busy rather than silent. Default: no.
    #[must_use]
    pub fn streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// The sampling temperature sent with each request. Default: none sent (the
    /// endpoint's own).
    #[must_use]
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// The most tokens an answer may take, sent as `max_tokens` (what compatible servers
    /// read; OpenAI's reasoning models want `max_completion_tokens` and refuse it). Default:
    /// none sent.
    #[must_use]
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// The answer to `request`, retried as the type's docs say.
    async fn ask(&self, request: ModelRequest<'_>) -> Result<ModelResponse, ModelError> {
        let setup = self.setup.as_ref().map_err(Clone::clone)?;
        let body = wire::request_body(
            &request,
            &wire::BodyOptions {
                model: &self.model,
                temperature: self.temperature,
                max_tokens: self.max_tokens,
                stream: self.streaming,
            },
        );
        let body = serde_json::to_vec(&body).map_err(|error| {
            ModelError::new(
                ModelErrorKind::Other,
                format!(
                    "the request for {} could not be written: {error}",
                    self.endpoint
                ),
            )
        })?;
        let attempts = self.max_retries.saturating_add(1);
        let mut attempt = 1;
        loop {
            let failure =
                match tokio::time::timeout(self.timeout, self.attempt(setup, &body, request.tools))
                    .await
                {
                    Ok(Ok(response)) => return Ok(response),
                    Ok(Err(failure)) => failure,
                    Err(_) => Failure::new(
                        ModelErrorKind::Timeout,
                        format!("gave no complete answer within {:?}", self.timeout),
                    ),
                };
            if !failure.retryable || attempt >= attempts {
                return Err(self.error(failure, attempt));
            }
            let wait = match failure.retry_after {
                Some(asked) => asked.min(MAX_RETRY_AFTER),
                None => self.backoff_before(attempt + 1),
            };
            tracing::warn!(
                endpoint = %self.endpoint,
                attempt,
                status = failure.status,
                wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                detail = %failure.detail,
                "the model request failed; retrying"
            );
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// One attempt: the request sent, the answer read whole.
    async fn attempt(
        &self,
        setup: &Setup,
        body: &[u8],
        catalog: &LoweredCatalog,
    ) -> Result<ModelResponse, Failure> {
        let accept = if self.streaming {
            "text/event-stream"
        } else {
            "application/json"
        };
        let mut builder = setup
            .client
            .post(setup.url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, accept)
            .body(body.to_vec());
        if let Some(authorization) = &setup.authorization {
            builder = builder.header(AUTHORIZATION, authorization.clone());
        }
        let response = builder.send().await.map_err(Failure::unreachable)?;
        if !response.status().is_success() {
            return Err(Failure::status(response).await);
        }
        // A server that does not stream answers a whole completion, whatever was asked.
        let whole = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.trim_start().starts_with("application/json"));
        if self.streaming && !whole {
            return read_stream(response, catalog).await;
        }
        let body = response.bytes().await.map_err(|error| {
            Failure::new(
                ModelErrorKind::Connection,
                format!(
                    "dropped the connection while sending its answer: {}",
                    chain(error)
                ),
            )
        })?;
        wire::completion(&body, catalog)
    }

    /// The backoff before attempt `attempt` (the second is the first retry).
    fn backoff_before(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(2).min(31);
        let full = self
            .backoff
            .saturating_mul(1_u32 << doublings)
            .min(MAX_BACKOFF);
        // Clients failing together do not retry together.
        let share = rand::rng().random_range(0.5..=1.0);
        Duration::try_from_secs_f64(full.as_secs_f64() * share)
            .unwrap_or(full)
            .min(full)
    }

    /// The error a failure of attempt `attempts` (the last) is.
    fn error(&self, failure: Failure, attempts: u32) -> ModelError {
        let mut message = format!("POST {} {}", self.endpoint, failure.detail);
        if failure.retryable && attempts > 1 {
            message.push_str(&format!("; gave up after {attempts} attempts"));
        }
        if let Some(wait) = failure.retry_after {
            message.push_str(&format!(
                "; it asked to wait {wait:?} before the next request"
            ));
        }
        let mut error = ModelError::new(failure.kind, message);
        error.status = failure.status;
        error.retry_after = failure.retry_after;
        error
    }
}

impl Setup {
    fn new(
        base_url: &str,
        endpoint: &str,
        model: &str,
        api_key: Option<&str>,
    ) -> Result<Self, ModelError> {
        let config = |message: String| ModelError::new(ModelErrorKind::Config, message);
        if model.trim().is_empty() {
            return Err(config(format!(
                "no model name is set for {endpoint}: name the model to ask"
            )));
        }
        let url = Url::parse(endpoint).map_err(|error| {
            config(format!(
                "the base URL `{base_url}` is not a URL ({error}): give one such as {}",
                OpenAiChat::DEFAULT_BASE_URL
            ))
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(config(format!(
                "the base URL `{base_url}` is not an http or https URL"
            )));
        }
        let authorization = match api_key {
            Some(key) => {
                let mut value =
                    HeaderValue::from_str(&format!("Bearer {}", key.trim())).map_err(|_| {
                        config(format!(
                            "the API key for {endpoint} cannot be sent in a header: it has \
                             characters a header cannot carry"
                        ))
                    })?;
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };
        let client = Client::builder()
            // A redirected POST may come back a GET, to a host the key was not meant for.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("tool-runtime/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|error| {
                config(format!(
                    "no HTTP client could be made for {endpoint}: {}",
                    chain(error)
                ))
            })?;
        Ok(Self {
            client,
            url,
            authorization,
        })
    }
}

impl Model for OpenAiChat {
    fn target(&self) -> Target {
        Target::OpenAiStrict
    }

    fn name(&self) -> &str {
        &self.model
    }

    fn respond<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(self.ask(request))
    }
}

impl fmt::Debug for OpenAiChat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiChat")
            .field("endpoint", &self.endpoint)
            .field("model", &self.model)
            .field("api_key", &self.has_key.then_some("<redacted>"))
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("backoff", &self.backoff)
            .field("streaming", &self.streaming)
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .finish()
    }
}

/// Why one attempt gave no answer, before the endpoint is named.
#[derive(Debug)]
struct Failure {
    kind: ModelErrorKind,
    /// What happened, said of the endpoint ("refused the request with HTTP 400 ...").
    detail: String,
    status: Option<u16>,
    retry_after: Option<Duration>,
    /// Whether another attempt may get an answer.
    retryable: bool,
}

impl Failure {
    fn new(kind: ModelErrorKind, detail: String) -> Self {
        Self {
            kind,
            detail,
            status: None,
            retry_after: None,
            retryable: false,
        }
    }

    /// The answer arrived, but not in the documented shape: asking again would cost as much
    /// and most likely get the same.
    fn malformed(detail: String) -> Self {
        Self::new(ModelErrorKind::Malformed, detail)
    }

    /// The endpoint reported a failure in the middle of a stream.
    fn stream_error(said: String) -> Self {
        Self::new(
            ModelErrorKind::Server,
            format!("reported an error in the middle of the stream: {said}"),
        )
    }

    /// No answer arrived: the request may not have reached the endpoint, and nothing of an
    /// answer was read, so asking again is safe.
    fn unreachable(error: reqwest::Error) -> Self {
        if error.is_builder() {
            return Self::new(
                ModelErrorKind::Config,
                format!("could not be asked: {}", chain(error)),
            );
        }
        Self {
            retryable: true,
            ..Self::new(
                ModelErrorKind::Connection,
                format!("could not be reached: {}", chain(error)),
            )
        }
    }

    /// An answer with a status other than 2xx.
    async fn status(response: Response) -> Self {
        let status = response.status();
        let retry_after = retry_after::asked(response.headers(), SystemTime::now());
        let said = wire::error_message(&read_start(response, MAX_ERROR_BODY).await);
        let (kind, detail, retryable) = if status == StatusCode::TOO_MANY_REQUESTS {
            (
                ModelErrorKind::RateLimited,
                format!("answered HTTP {status} (rate limited): {said}"),
                true,
            )
        } else if status.is_server_error() {
            (
                ModelErrorKind::Server,
                format!("failed with HTTP {status}: {said}"),
                true,
            )
        } else if status.is_redirection() {
            (
                ModelErrorKind::Refused,
                format!(
                    "answered HTTP {status} (a redirect, which is not followed: give the base \
                     URL it points to): {said}"
                ),
                false,
            )
        } else {
            (
                ModelErrorKind::Refused,
                format!("refused the request with HTTP {status}: {said}"),
                false,
            )
        };
        Self {
            status: Some(status.as_u16()),
            retry_after,
            retryable,
            ..Self::new(kind, detail)
        }
    }
}

/// A streamed answer, read to its end.
async fn read_stream(
    mut response: Response,
    catalog: &LoweredCatalog,
) -> Result<ModelResponse, Failure> {
    let mut events = stream::Events::default();
    let mut answer = stream::Answer::default();
    while !answer.is_done() {
        match response.chunk().await {
            Ok(Some(bytes)) => {
                for data in events.feed(&bytes)? {
                    answer.event(&data)?;
                    if answer.is_done() {
                        break;
                    }
                }
            }
            Ok(None) => {
                if let Some(data) = events.end()? {
                    answer.event(&data)?;
                }
                break;
            }
            Err(error) => {
                return Err(Failure::new(
                    ModelErrorKind::Connection,
                    format!(
                        "dropped the connection in the middle of the stream: the answer was cut \
                         short, and none of it is returned: {}",
                        chain(error)
                    ),
                ));
            }
        }
    }
    answer.finish(catalog)
}

/// The first `limit` bytes of a body (an error's message is at its start), or what arrived
/// before the connection failed.
async fn read_start(mut response: Response, limit: usize) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < limit {
        match response.chunk().await {
            Ok(Some(bytes)) => body.extend_from_slice(&bytes),
            Ok(None) | Err(_) => break,
        }
    }
    body.truncate(limit);
    body
}

/// A reqwest error and its causes, without the URL (the message names the endpoint already).
fn chain(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn from(vars: &[(&str, &str)]) -> Result<OpenAiChat, ModelError> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect();
        OpenAiChat::from_lookup(|name| Ok(vars.get(name).cloned()))
    }

    #[test]
    fn the_environment_names_the_model() {
        let error = from(&[("OPENAI_API_KEY", "sk-secret")]).expect_err("no model");
        assert_eq!(error.kind, ModelErrorKind::Config);
        assert!(error.message.contains("OPENAI_MODEL"), "{error}");
        assert!(!error.message.contains("sk-secret"));
        let error = from(&[("OPENAI_MODEL", "  ")]).expect_err("an empty model");
        assert_eq!(error.kind, ModelErrorKind::Config);

        let chat = from(&[("OPENAI_MODEL", "gpt-4.1-mini"), ("OPENAI_BASE_URL", "")])
            .expect("a model is enough");
        assert_eq!(
            chat.endpoint(),
            "https://api.openai.com/v1/chat/completions"
        );
        assert!(!chat.has_key);
        let chat = from(&[
            ("OPENAI_MODEL", "llama3.2"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1/"),
            ("OPENAI_API_KEY", "sk-secret"),
        ])
        .expect("configured");
        assert_eq!(
            chat.endpoint(),
            "http://127.0.0.1:11434/v1/chat/completions"
        );
        assert_eq!(chat.name(), "llama3.2");
        let shown = format!("{chat:?}");
        assert!(!shown.contains("sk-secret"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");

        let error = from(&[("OPENAI_MODEL", "m"), ("OPENAI_BASE_URL", "localhost:8000")])
            .expect_err("no scheme");
        assert_eq!(error.kind, ModelErrorKind::Config);
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let chat =
            OpenAiChat::new("http://127.0.0.1:1/v1", None, "m").backoff(Duration::from_secs(1));
        for (attempt, full) in [(2, 1), (3, 2), (4, 4), (9, 30), (u32::MAX, 30)] {
            let wait = chat.backoff_before(attempt);
            let full = Duration::from_secs(full);
            assert!(
                wait <= full && wait >= full / 2,
                "attempt {attempt}: {wait:?}"
            );
        }
    }
}
