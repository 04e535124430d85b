//! The runtime served to MCP clients (feature `mcp-server`), on rmcp, the protocol's official
//! Rust SDK: over stdio, or Streamable HTTP.
//!
//! Every `tools/call` is one more caller of [`Runtime::execute`]: the scope, the roles, the
//! policy and its approvals, exactly-once for writes, timeouts, retries and the output policy
//! apply to it as to a model's call. `tools/list` is the session's catalog lowered for MCP
//! ([`providers::mcp`](crate::providers::mcp)).
//!
//! ```no_run
//! use tool_runtime::mcp_server::McpServer;
//! use tool_runtime::{Runtime, tool};
//!
//! struct Deps;
//!
//! /// Adds two numbers.
//! #[tool(read_only)]
//! fn add_numbers(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let runtime = Runtime::builder(Deps).build()?;
//!     // An MCP client starts this program and speaks to it on stdin and stdout.
//!     McpServer::new(runtime).named("calculator", "1.0.0").serve_stdio().await?;
//!     Ok(())
//! }
//! ```
//!
//! Over HTTP, [`McpServer::bind_local`] listens on `127.0.0.1` ([`McpServer::bind`] where you
//! say), and every request's `Host` and browser `Origin` must be loopback ones (against DNS
//! rebinding) unless [`HttpOptions`] allows others. Session ids (`Mcp-Session-Id`) are random
//! version 4 UUIDs.
//!
//! # Sessions
//!
//! An MCP session maps to a runtime [`Session`] through the hook given to
//! [`McpServer::sessions`], which reads the request (its HTTP headers, the MCP session id) and
//! answers the session's id, principal and scope, or refuses the request. Without a hook, a
//! stdio server has one session (`"mcp-stdio"`) and an HTTP one a session per MCP session id;
//! a stateless server, which has no session id it could trust, refuses requests until it is
//! given a hook. When the scope a request is given differs from the
//! one the session had, the client is sent `notifications/tools/list_changed`.
//!
//! # What a call gets
//!
//! - A tool's failure, a gate's refusal, invalid arguments: a result with `isError: true`
//!   whose text is the error's JSON (`{"error": {"kind", "message", "hint", ...}}`). A tool the
//!   runtime does not have: the JSON-RPC error `-32602` (invalid params), naming it.
//! - Success: the output's text; a tool with an object output schema also gets it as
//!   `structuredContent`; a tool returning [`Contents`](crate::Contents) gets its blocks.
//! - Through its [`RunContext`](crate::RunContext), a tool can report progress (when the
//!   request carried a `progressToken`), log (at the level the client set), ask the client's
//!   model (sampling) and its user (elicitation): see [`client`](crate::client).
//! - `notifications/cancelled` cancels the call through the runtime's cancellation.
//! - A call the policy asks about is put to the client's user as an elicitation when the
//!   client supports it (approve, deny, or edit the arguments; [`McpServer::elicit_approvals`]
//!   turns this off); otherwise the runtime's approver answers, and without one the ask is
//!   denied as in a session nobody watches. An approver the session hook sets
//!   ([`Session::with_approver`]) answers before either. A question to the client waits at
//!   most [`McpServer::client_timeout`], and no longer than the call.
//! - What a tool sends the client (progress and log messages, its questions) is redacted as
//!   its output is. rmcp logs whole requests at `debug`: keep its target at `info` or above
//!   (`RUST_LOG=rmcp=info`) where arguments may hold secrets.
//! - A call the approver left pending (`approval_pending`, with its request id) is resumed
//!   by calling the same tool again with a person's signed decision
//!   ([`Runtime::sign_decision`]) in the request's `_meta`, under
//!   `"io.tool-runtime/decision"`: the call runs as [`Runtime::resume`] runs it (the kept
//!   arguments, once), on any server process that shares the approval store and the keys.
//! - Calls of one session that must run alone (writes, `exclusive` tools) wait for each other
//!   across requests, as within a turn; read-only calls run alongside each other.

mod client;
mod handler;
mod http;

use std::any::Any;
use std::sync::Arc;

use crate::{Runtime, Session};

pub use http::{HttpListener, HttpOptions};

/// What a request that opens or continues an MCP session carries: what the session hook reads.
pub struct SessionRequest<'a> {
    pub(crate) headers: Option<&'a ::http::HeaderMap>,
    pub(crate) mcp_session_id: Option<&'a str>,
    pub(crate) stateless: bool,
}

impl std::fmt::Debug for SessionRequest<'_> {
    /// The headers' names only: their values can be credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self
            .headers
            .map(|headers| headers.keys().map(::http::HeaderName::as_str).collect())
            .unwrap_or_default();
        f.debug_struct("SessionRequest")
            .field("headers", &names)
            .field("mcp_session_id", &self.mcp_session_id)
            .field("stateless", &self.stateless)
            .finish()
    }
}

impl SessionRequest<'_> {
    /// The value of an HTTP header of the request (`None` over stdio, or when absent or not
    /// text).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers?.get(name)?.to_str().ok()
    }

    /// The MCP session id of the request (`Mcp-Session-Id`, one the server gave and checked),
    /// over HTTP in session mode; `None` over stdio and on a stateless server, where a session
    /// id the client sends proves nothing.
    pub fn mcp_session_id(&self) -> Option<&str> {
        self.mcp_session_id
    }

    /// Whether the server keeps no MCP session ([`HttpOptions::stateless`]): the hook must
    /// find the session from what the request proves (a credential), not from a session id.
    pub fn is_stateless(&self) -> bool {
        self.stateless
    }

    /// Whether the request came over HTTP.
    pub fn is_http(&self) -> bool {
        self.headers.is_some()
    }
}

/// Why a request was refused by the session hook: the client is answered with this message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

type SessionHook = dyn Fn(&SessionRequest<'_>) -> Result<Session, Refused> + Send + Sync;

/// An MCP server for a [`Runtime`]: the runtime, how an MCP session maps to a [`Session`],
/// the server's name and version.
pub struct McpServer<D> {
    pub(crate) runtime: Runtime<D>,
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) instructions: Option<String>,
    pub(crate) page_size: usize,
    pub(crate) sessions: Arc<SessionHook>,
    pub(crate) elicit_approvals: bool,
    pub(crate) client_timeout: std::time::Duration,
}

impl<D> std::fmt::Debug for McpServer<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("page_size", &self.page_size)
            .finish_non_exhaustive()
    }
}

impl<D> Clone for McpServer<D> {
    fn clone(&self) -> Self {
        Self {
            runtime: self.runtime.clone(),
            name: self.name.clone(),
            version: self.version.clone(),
            instructions: self.instructions.clone(),
            page_size: self.page_size,
            sessions: Arc::clone(&self.sessions),
            elicit_approvals: self.elicit_approvals,
            client_timeout: self.client_timeout,
        }
    }
}

/// How long a tool's question to the client (sampling, elicitation, an approval) may wait
/// for its answer unless [`McpServer::client_timeout`] says otherwise.
pub const DEFAULT_CLIENT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// How many tools a `tools/list` page holds unless [`McpServer::page_size`] says otherwise.
pub const DEFAULT_PAGE_SIZE: usize = 100;

impl<D: Any + Send + Sync> McpServer<D> {
    /// A server for `runtime`, named `tool-runtime` with this crate's version until
    /// [`named`](Self::named).
    pub fn new(runtime: Runtime<D>) -> Self {
        Self {
            runtime,
            name: "tool-runtime".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            instructions: None,
            page_size: DEFAULT_PAGE_SIZE,
            sessions: Arc::new(default_session),
            elicit_approvals: true,
            client_timeout: DEFAULT_CLIENT_TIMEOUT,
        }
    }

    /// The name and version the server gives in `initialize`.
    #[must_use]
    pub fn named(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// Instructions for the client's model, given in `initialize`.
    #[must_use]
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// At most this many tools per `tools/list` page (at least 1).
    #[must_use]
    pub fn page_size(mut self, tools: usize) -> Self {
        self.page_size = tools.max(1);
        self
    }

    /// Whether a call the policy asks about is put to the client's user as an elicitation when
    /// the client supports it (the default). With `false`, the runtime's approver answers, as
    /// for any caller; so does an approver the session hook set, either way.
    #[must_use]
    pub fn elicit_approvals(mut self, elicit: bool) -> Self {
        self.elicit_approvals = elicit;
        self
    }

    /// How long a question to the client (sampling, elicitation, an approval) waits for its
    /// answer before it fails ([`DEFAULT_CLIENT_TIMEOUT`] by default). A call cancelled while
    /// it waits stops waiting at once.
    #[must_use]
    pub fn client_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.client_timeout = timeout;
        self
    }

    /// How a request maps to the runtime session it is served in: its id, principal and
    /// scope, read from the request's HTTP headers (an authenticated user, a tenant) or the
    /// MCP session id. An `Err` refuses the request with its message. Called for every
    /// request, so that a session's scope can change; keep it cheap.
    ///
    /// ```
    /// use tool_runtime::mcp_server::{McpServer, Refused};
    /// use tool_runtime::{Principal, Runtime, Scope, Session};
    ///
    /// # struct Deps;
    /// # let runtime = Runtime::builder(Deps).inventory(false).build().unwrap();
    /// let server = McpServer::new(runtime).sessions(|request| {
    ///     let user = request
    ///         .header("x-user")
    ///         .ok_or_else(|| Refused("who is calling? send x-user".into()))?;
    ///     let id = request.mcp_session_id().unwrap_or(user).to_owned();
    ///     Ok(Session::new(id)
    ///         .with_principal(Principal::new(user).with_role("agent"))
    ///         .with_scope(Scope::named(["lookup_order"])))
    /// });
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn sessions(
        mut self,
        hook: impl Fn(&SessionRequest<'_>) -> Result<Session, Refused> + Send + Sync + 'static,
    ) -> Self {
        self.sessions = Arc::new(hook);
        self
    }

    /// Serves one client on this process's stdin and stdout until the client closes them.
    pub async fn serve_stdio(self) -> Result<(), McpServeError> {
        let (stdin, stdout) = rmcp::transport::stdio();
        self.serve_io(stdin, stdout).await
    }

    /// Serves one client on any byte stream (a Unix socket, a pipe, an in-memory duplex):
    /// newline-delimited JSON-RPC, as over stdio, until the client closes it.
    pub async fn serve_io<R, W>(self, read: R, write: W) -> Result<(), McpServeError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        use rmcp::ServiceExt as _;
        let handler = handler::Handler::new(Arc::new(handler::Shared::new(self, false)));
        let running = handler
            .serve((read, write))
            .await
            .map_err(|error| McpServeError::Start(error.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|error| McpServeError::Stopped(error.to_string()))?;
        Ok(())
    }

    /// Listens on `127.0.0.1:port` (loopback only: nothing off this machine can connect; port
    /// 0 for any free one) for Streamable HTTP with the default [`HttpOptions`]. Serve with
    /// [`HttpListener::serve`].
    pub async fn bind_local(self, port: u16) -> Result<HttpListener<D>, McpServeError> {
        self.bind(("127.0.0.1", port)).await
    }

    /// Listens on `address` for Streamable HTTP with the default [`HttpOptions`] (loopback
    /// `Host`s and `Origin`s only, sessions). Serve with [`HttpListener::serve`].
    pub async fn bind(
        self,
        address: impl tokio::net::ToSocketAddrs,
    ) -> Result<HttpListener<D>, McpServeError> {
        self.bind_with(address, HttpOptions::default()).await
    }

    /// Listens on `address` for Streamable HTTP with `options`.
    pub async fn bind_with(
        self,
        address: impl tokio::net::ToSocketAddrs,
        options: HttpOptions,
    ) -> Result<HttpListener<D>, McpServeError> {
        HttpListener::bind(self, address, options).await
    }
}

/// The session of a request when the application gave no hook: the MCP session's, or the
/// stdio client's. A request with neither (stateless HTTP) is refused: one session for every
/// client would share their idempotent results, denials and pending approvals.
fn default_session(request: &SessionRequest<'_>) -> Result<Session, Refused> {
    match (request.is_http(), request.mcp_session_id()) {
        (_, Some(id)) => Ok(Session::new(format!("mcp-{id}"))),
        (false, None) => Ok(Session::new("mcp-stdio")),
        (true, None) => Err(Refused(
            "this server keeps no MCP session and has no session hook to tell its clients \
             apart: the application gives McpServer::sessions one"
                .to_owned(),
        )),
    }
}

/// Why a server could not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpServeError {
    /// The socket could not be bound.
    #[error("cannot listen: {0}")]
    Bind(#[from] std::io::Error),
    /// The protocol could not start (the client's `initialize` failed).
    #[error("the MCP session could not start: {0}")]
    Start(String),
    /// The server stopped with an error.
    #[error("the MCP server stopped: {0}")]
    Stopped(String),
}
