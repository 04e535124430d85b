//! The MCP requests, answered by the runtime: `initialize`, `tools/list`, `tools/call`,
//! `logging/setLevel`.

// Logging, sampling and elicitation are marked deprecated in rmcp for the protocol's newest
// revision (SEP-2577); the revisions clients speak today (2025-06-18, 2025-11-25) have them.
#![allow(deprecated)]

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, SetLevelRequestParams, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::RwLock;

use super::client::{ElicitingApprover, McpClient};
use super::{McpServer, SessionRequest};
use crate::approvals::SignedDecision;
use crate::providers::mcp as lowered;
use crate::{Observation, Outcome, Runtime, Scope, Session, ToolCall};

/// What every MCP session of one server shares.
pub(crate) struct Shared<D> {
    server: McpServer<D>,
    /// Requests are served with no MCP session (stateless HTTP): a session id the client
    /// sends is not one rmcp checked, so it is not handed to the session hook.
    stateless: bool,
    /// Numbers the calls this server runs, so that two MCP sessions' JSON-RPC ids (which
    /// repeat) never make one call id.
    calls: AtomicU64,
    /// One lock per runtime session: calls that must run alone take it exclusively, reads
    /// shared, so that writes of one session never overlap across requests. Kept while some
    /// call holds it.
    locks: Mutex<HashMap<Arc<str>, Weak<RwLock<()>>>>,
}

impl<D> Shared<D> {
    pub(crate) fn new(server: McpServer<D>, stateless: bool) -> Self {
        Self {
            server,
            stateless,
            calls: AtomicU64::new(0),
            locks: Mutex::new(HashMap::new()),
        }
    }

    fn runtime(&self) -> &Runtime<D> {
        &self.server.runtime
    }

    /// The lock of `session`'s calls.
    fn lock_of(&self, session: &str) -> Arc<RwLock<()>> {
        let mut locks = self
            .locks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(lock) = locks.get(session).and_then(Weak::upgrade) {
            return lock;
        }
        // Sessions whose calls all ended leave dead entries; sweep them as new ones come.
        locks.retain(|_, lock| lock.strong_count() > 0);
        let lock = Arc::new(RwLock::new(()));
        locks.insert(Arc::from(session), Arc::downgrade(&lock));
        lock
    }
}

/// The handler of one MCP session (one per session over HTTP, one over stdio).
pub(crate) struct Handler<D> {
    shared: Arc<Shared<D>>,
    /// The scope this MCP session was last served with, to tell the client when it changes.
    scope: Mutex<Option<Scope>>,
    /// The least severe log level the client asked for (`logging/setLevel`); `u8::MAX` until
    /// it sets one, when every message is sent.
    log_level: Arc<AtomicU8>,
}

impl<D> Handler<D> {
    pub(crate) fn new(shared: Arc<Shared<D>>) -> Self {
        Self {
            shared,
            scope: Mutex::new(None),
            log_level: Arc::new(AtomicU8::new(u8::MAX)),
        }
    }
}

impl<D: Any + Send + Sync> Handler<D> {
    /// The runtime session `context`'s request is served in, from the application's hook.
    fn session(&self, context: &RequestContext<RoleServer>) -> Result<Session, ErrorData> {
        let parts = context.extensions.get::<http::request::Parts>();
        let headers = parts.map(|parts| &parts.headers);
        let request = SessionRequest {
            headers,
            mcp_session_id: headers
                .filter(|_| !self.shared.stateless)
                .and_then(|headers| headers.get("mcp-session-id"))
                .and_then(|id| id.to_str().ok()),
            stateless: self.shared.stateless,
        };
        let session = (self.shared.server.sessions)(&request)
            .map_err(|refused| ErrorData::invalid_request(refused.0, None))?;
        self.note_scope(session.scope(), context);
        Ok(session)
    }

    /// Remembers the scope the session is served with; tells the client its tool list
    /// changed when it differs from the last one.
    fn note_scope(&self, scope: &Scope, context: &RequestContext<RoleServer>) {
        let changed = {
            let mut last = self
                .scope
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let changed = last.as_ref().is_some_and(|last| last != scope);
            if last.as_ref() != Some(scope) {
                *last = Some(scope.clone());
            }
            changed
        };
        if changed {
            let peer = context.peer.clone();
            tokio::spawn(async move {
                if let Err(error) = peer.notify_tool_list_changed().await {
                    tracing::debug!(%error, "could not send notifications/tools/list_changed");
                }
            });
        }
    }

    /// The session with the client's link and, for the asks of the policy, the client's
    /// user as approver when the client can elicit.
    fn with_client(&self, session: Session, context: &RequestContext<RoleServer>) -> Session {
        let server = &self.shared.server;
        let client = Arc::new(McpClient::new(
            context,
            Arc::clone(&self.log_level),
            server.client_timeout,
        ));
        let session = session.with_client(Arc::clone(&client) as _);
        if !session.is_interactive() || session.approver().is_some() {
            // The hook decided who answers (or that nobody can).
            session
        } else if server.elicit_approvals && client.elicits() {
            session.with_approver(ElicitingApprover::new(client))
        } else if self.shared.runtime().shared.gates.approver.is_none() {
            // Nobody can be asked: an ask is answered as in a session nobody watches.
            session.non_interactive()
        } else {
            session
        }
    }

    async fn list(
        &self,
        cursor: Option<&str>,
        session: &Session,
    ) -> Result<ListToolsResult, ErrorData> {
        let runtime = self.shared.runtime();
        let entries = lowered::tools(runtime, session)
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        let start = match cursor {
            None => 0,
            Some(cursor) => {
                let after = read_cursor(cursor).ok_or_else(|| {
                    ErrorData::invalid_params(
                        format!("the cursor `{cursor}` is not one this server gave"),
                        None,
                    )
                })?;
                entries.partition_point(|entry| {
                    entry["name"]
                        .as_str()
                        .is_some_and(|name| name <= after.as_str())
                })
            }
        };
        let page_size = self.shared.server.page_size;
        let end = start.saturating_add(page_size).min(entries.len());
        let next_cursor = (end < entries.len())
            .then(|| entries.get(end - 1))
            .flatten()
            .and_then(|entry| entry["name"].as_str())
            .map(write_cursor);
        let tools = entries
            .get(start..end)
            .unwrap_or_default()
            .iter()
            .map(|entry| serde_json::from_value::<Tool>(entry.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        let mut result = ListToolsResult::with_all_items(tools);
        result.next_cursor = next_cursor;
        Ok(result)
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let session = self.session(&context)?;
        let session = self.with_client(session, &context);
        let runtime = self.shared.runtime();
        let name = request.name.as_ref();
        let arguments = match &request.arguments {
            Some(arguments) => serde_json::to_string(arguments)
                .map_err(|error| ErrorData::invalid_params(error.to_string(), None))?,
            None => "{}".to_owned(),
        };
        let number = self.shared.calls.fetch_add(1, Ordering::Relaxed);
        let call = ToolCall::new(
            format!("mcp-{number}-{}", request_id(&context)),
            name,
            arguments,
        );
        let decision = decision_of(&request, &context)?;
        let spec = runtime.registry().get(name).map(|tool| tool.spec());
        // Calls that must run alone wait for the session's other calls; reads share.
        let lock = self.shared.lock_of(session.id());
        if let Some(decision) = &decision
            && let Some(claimed) = decided_tool(runtime, decision)
            && claimed != name
        {
            return Err(ErrorData::invalid_params(
                format!("the decision is about a call of `{claimed}`, not of `{name}`"),
                None,
            ));
        }
        let report = if let Some(decision) = decision {
            // A person's signed decision about a call left pending: resumed, not run anew.
            let _alone = lock.write().await;
            runtime.resume(&session, [decision]).await
        } else if spec.is_some_and(|spec| spec.execution().parallel_safe()) {
            let _reading = lock.read().await;
            runtime
                .execute_with_cancel(&session, [call], context.ct.clone())
                .await
        } else {
            let _alone = lock.write().await;
            runtime
                .execute_with_cancel(&session, [call], context.ct.clone())
                .await
        };
        let Some(observation) = report.observations().first() else {
            return Err(ErrorData::internal_error(
                "the runtime gave no answer",
                None,
            ));
        };
        if observation.error_kind() == Some("unknown_tool") {
            let error = observation.error();
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {name}"),
                error.map(|error| json!({ "error": error })),
            ));
        }
        let structured = spec.is_some_and(|spec| {
            spec.output_schema()
                .and_then(|schema| schema.get("type"))
                .and_then(Value::as_str)
                == Some("object")
        });
        Ok(CallToolResponse::Complete(result_of(
            observation,
            structured,
        )))
    }
}

/// A call's answer as a `tools/call` result.
fn result_of(observation: &Observation, structured: bool) -> CallToolResult {
    match observation.outcome() {
        Outcome::Success { content } => {
            // The blocks' JSON is MCP's shape already: read once, into rmcp's blocks.
            if let Some(blocks) = observation
                .content_blocks
                .then(|| serde_json::from_str::<Vec<ContentBlock>>(content).ok())
                .flatten()
            {
                return CallToolResult::success(blocks);
            }
            let text = vec![ContentBlock::text(content.clone())];
            match structured
                .then(|| serde_json::from_str::<Value>(content).ok())
                .flatten()
                .filter(Value::is_object)
            {
                Some(value) => {
                    let mut result = CallToolResult::structured(value);
                    result.content = text;
                    result
                }
                None => CallToolResult::success(text),
            }
        }
        _ => CallToolResult::error(vec![ContentBlock::text(observation.text_for_model())]),
    }
}

/// The `_meta` key under which a `tools/call` carries a signed decision about a pending call.
pub(crate) const DECISION_META: &str = "io.tool-runtime/decision";

/// The signed decision the request carries, if any; one that is not a string is invalid
/// params (the call is not run anew in its stead).
fn decision_of(
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<Option<SignedDecision>, ErrorData> {
    let in_request = request
        .meta
        .as_ref()
        .and_then(|meta| meta.get(DECISION_META));
    let Some(token) = in_request.or_else(|| context.meta.get(DECISION_META)) else {
        return Ok(None);
    };
    match token.as_str() {
        Some(token) => Ok(Some(SignedDecision::from(token.to_owned()))),
        None => Err(ErrorData::invalid_params(
            format!("`_meta.{DECISION_META}` is the text of a signed decision, a string"),
            None,
        )),
    }
}

/// The tool a decision this runtime signed is about (`None` when it cannot read it: the
/// resume refuses it then, naming why).
fn decided_tool<D>(runtime: &Runtime<D>, decision: &SignedDecision) -> Option<String> {
    let keys = runtime.shared.gates.keys.as_ref()?;
    crate::gates::decision::verify(keys, decision, std::time::SystemTime::now())
        .ok()
        .map(|claims| claims.tool)
}

/// The request's JSON-RPC id, as text.
fn request_id(context: &RequestContext<RoleServer>) -> String {
    match serde_json::to_value(&context.id) {
        Ok(Value::String(id)) => id,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// A `tools/list` cursor: the last name of the page before, opaque to the client. A page
/// starts after that name, so a cursor stays valid while the tools around it change.
fn write_cursor(after: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("after:{after}"))
}

fn read_cursor(cursor: &str) -> Option<String> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    String::from_utf8(bytes)
        .ok()?
        .strip_prefix("after:")
        .map(str::to_owned)
}

impl<D: Any + Send + Sync> ServerHandler for Handler<D> {
    fn get_info(&self) -> ServerConfig {
        let server = &self.shared.server;
        let capabilities = if self.shared.stateless {
            // Without a session there is nobody to tell a list changed, nor a level to keep.
            ServerCapabilities::builder().enable_tools().build()
        } else {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_logging()
                .build()
        };
        let config = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(&server.name, &server.version));
        match &server.instructions {
            Some(instructions) => config.with_instructions(instructions.clone()),
            None => config,
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let session = self.session(&context)?;
        let cursor = request
            .as_ref()
            .and_then(|request| request.cursor.as_deref());
        self.list(cursor, &session).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, context).await
    }

    /// A request rmcp could not read as one it knows: a `tools/call` whose params do not fit
    /// (arguments that are not an object) is invalid params, not an unknown method.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let CustomRequest { method, .. } = request;
        Err(match method.as_str() {
            "tools/call" | "tools/list" => ErrorData::invalid_params(
                format!(
                    "the params of {method} do not fit: a tools/call takes `name` (a string) \
                     and `arguments` (an object); a tools/list an optional `cursor` (a string)"
                ),
                None,
            ),
            _ => ErrorData::new(rmcp::model::ErrorCode::METHOD_NOT_FOUND, method, None),
        })
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log_level
            .store(super::client::level_rank(request.level), Ordering::Relaxed);
        Ok(())
    }
}
