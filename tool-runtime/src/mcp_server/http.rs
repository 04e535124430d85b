//! Streamable HTTP: rmcp's service for the protocol, served by axum on a socket.

use std::any::Any;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::handler::{Handler, Shared};
use super::{McpServeError, McpServer};

/// How the HTTP server checks and keeps its clients.
///
/// By default it accepts requests whose `Host` is a loopback name (`localhost`, `127.0.0.1`,
/// `::1`) and whose `Origin`, when a browser sends one, is a loopback origin; any other is
/// refused with `403`, so a web page cannot reach a local server through DNS rebinding. It
/// keeps a session per client (`Mcp-Session-Id`, random and unguessable).
#[derive(Debug, Clone)]
pub struct HttpOptions {
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    stateless: bool,
    keep_alive: Option<Duration>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            allowed_hosts: ["localhost", "127.0.0.1", "::1", "[::1]"]
                .map(str::to_owned)
                .to_vec(),
            allowed_origins: ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]
                .map(str::to_owned)
                .to_vec(),
            stateless: false,
            keep_alive: Some(Duration::from_secs(15)),
        }
    }
}

impl HttpOptions {
    /// The `Host`s accepted (names, or `name:port`), instead of the loopback names: the
    /// public names of a server behind a proxy.
    #[must_use]
    pub fn allowed_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }

    /// The browser `Origin`s accepted (`https://app.example.com`, `http://localhost:*`),
    /// instead of the loopback origins. Requests without an `Origin` (not from a browser)
    /// are not affected.
    #[must_use]
    pub fn allowed_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// Serves each request on its own, keeping no MCP session: several server processes
    /// behind one address can then serve one client, each request reaching any of them. Give
    /// the runtime shared stores (Redis) so that a write repeated on another process still
    /// runs once and an approval left pending on one is resumed on another, and a session
    /// hook that finds the runtime session from the request (an `Mcp-Session-Id` is not sent).
    ///
    /// What needs a session does not work then: the client cannot be asked (no elicitation:
    /// the policy's asks go to the runtime's approver), `logging/setLevel` lasts one request,
    /// no `notifications/tools/list_changed` is sent, and a `notifications/cancelled` (which
    /// may reach another process) stops nothing; a client that closes its connection still
    /// cancels its call.
    #[must_use]
    pub fn stateless(mut self) -> Self {
        self.stateless = true;
        self
    }

    /// How often an open SSE stream gets a keep-alive comment (`None`: never).
    #[must_use]
    pub fn keep_alive(mut self, every: Option<Duration>) -> Self {
        self.keep_alive = every;
        self
    }

    fn config(&self, cancel: CancellationToken) -> StreamableHttpServerConfig {
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(self.allowed_hosts.clone())
            .with_allowed_origins(self.allowed_origins.clone())
            .enforce_origin_validation()
            .with_legacy_session_mode(!self.stateless)
            .with_sse_keep_alive(self.keep_alive)
            .with_cancellation_token(cancel);
        if self.stateless {
            config.with_json_response(true)
        } else {
            config
        }
    }
}

/// How many connections may wait to be accepted: a burst of clients connecting at once
/// (tokio's default is 1,024, past which a connection waits a second for its SYN to be sent
/// again). The system's own limit (`somaxconn`) still applies.
const BACKLOG: u32 = 4096;

/// A listening socket on the first of `address`'s addresses that binds.
async fn listen(
    address: impl tokio::net::ToSocketAddrs,
) -> std::io::Result<tokio::net::TcpListener> {
    let mut last = None;
    for address in tokio::net::lookup_host(address).await? {
        let socket = if address.is_ipv4() {
            tokio::net::TcpSocket::new_v4()?
        } else {
            tokio::net::TcpSocket::new_v6()?
        };
        // A restarted server rebinds its port at once; elsewhere than Unix the option would
        // let another process take a port in use.
        #[cfg(unix)]
        socket.set_reuseaddr(true)?;
        match socket.bind(address).and_then(|()| socket.listen(BACKLOG)) {
            Ok(listener) => return Ok(listener),
            Err(error) => last = Some(error),
        }
    }
    Err(last.unwrap_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the address names no socket address",
        )
    }))
}

/// A bound HTTP server, not yet serving: its address is known (bind port 0 for any free
/// port), so a program can print it before it serves.
pub struct HttpListener<D> {
    server: McpServer<D>,
    listener: tokio::net::TcpListener,
    options: HttpOptions,
}

impl<D> std::fmt::Debug for HttpListener<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpListener")
            .field("address", &self.listener.local_addr().ok())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl<D: Any + Send + Sync> HttpListener<D> {
    pub(crate) async fn bind(
        server: McpServer<D>,
        address: impl tokio::net::ToSocketAddrs,
        options: HttpOptions,
    ) -> Result<Self, McpServeError> {
        let listener = listen(address).await?;
        Ok(Self {
            server,
            listener,
            options,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> Result<SocketAddr, McpServeError> {
        Ok(self.listener.local_addr()?)
    }

    /// The MCP endpoint's URL: `http://<address>/mcp`.
    pub fn url(&self) -> Result<String, McpServeError> {
        Ok(format!("http://{}/mcp", self.local_addr()?))
    }

    /// Serves until the process ends.
    pub async fn serve(self) -> Result<(), McpServeError> {
        self.serve_until(CancellationToken::new()).await
    }

    /// Serves until `stop` is cancelled; open sessions are then closed.
    pub async fn serve_until(self, stop: CancellationToken) -> Result<(), McpServeError> {
        let shared = Arc::new(Shared::new(self.server, self.options.stateless));
        let service: StreamableHttpService<Handler<D>, LocalSessionManager> =
            StreamableHttpService::new(
                move || Ok(Handler::new(Arc::clone(&shared))),
                Arc::default(),
                self.options.config(stop.child_token()),
            );
        let router = axum::Router::new().nest_service("/mcp", service);
        axum::serve(self.listener, router)
            .with_graceful_shutdown(async move { stop.cancelled_owned().await })
            .await
            .map_err(|error| McpServeError::Stopped(error.to_string()))
    }
}
