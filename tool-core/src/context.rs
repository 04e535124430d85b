//! [`RunContext`]: the read-only view of the current session that a tool receives.
//!
//! A tool declares a context parameter; the `#[tool]` macro keeps it out of the JSON Schema
//! and the runtime injects it at call time. The runtime itself passes an untyped
//! [`CallContext`]; [`FromCallContext`] turns it into the form the tool asked for.

use std::any::{Any, TypeId};
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use crate::client::{
    ClientError, ClientLink, Elicitation, Elicited, LogLevel, LogMessage, Progress, Sampled,
    SamplingRequest,
};
use crate::error::{ErrorKind, ToolError};
use crate::tool::{BoxFuture, ToolArgs, ToolOutput};

/// The deps of a context that is not typed: `RunContext` with no parameter.
pub type AnyDeps = dyn Any + Send + Sync;

/// Which deps type a tool needs, for matching tools to a runtime.
///
/// Deps shared as `Arc<D>` serve tools typed to `D`: a runtime built with
/// `Runtime::builder(Arc::new(deps))` runs the tools written for the deps themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DepsType {
    id: TypeId,
    /// The id of `Arc<D>`, which serves the same tools.
    shared_id: TypeId,
    name: &'static str,
}

impl DepsType {
    /// The deps type `D`.
    pub fn of<D: Any + ?Sized>() -> Self {
        Self {
            id: TypeId::of::<D>(),
            shared_id: TypeId::of::<Arc<D>>(),
            name: std::any::type_name::<D>(),
        }
    }

    /// Whether a context whose deps are `provided` can serve a tool that needs `self`: the
    /// same type, or the same type shared as `Arc<D>`.
    pub fn is_served_by(&self, provided: DepsType) -> bool {
        self.id == provided.id || self.shared_id == provided.id
    }

    /// The type's name, for messages.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The type's id.
    pub fn id(&self) -> TypeId {
        self.id
    }
}

/// Lets a tool call another tool of the same runtime (`RunContext::call_tool`).
///
/// Implemented by the runtime; a context built without one answers `call_tool` with an
/// `internal` error.
#[doc(hidden)]
pub trait ToolInvoker: Send + Sync {
    /// Plans and runs `tool` with `args` as a nested call of `parent`, through the same
    /// layers as a call the model makes.
    fn invoke(
        self: Arc<Self>,
        parent: &CallContext,
        tool: &str,
        args: serde_json::Value,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolError>>;
}

/// What every call of one session shares: the deps, the session id and the way back into the
/// runtime. Built once per turn (or session) and shared by each call's [`CallContext`].
#[doc(hidden)]
#[derive(Clone)]
pub struct SessionContext {
    inner: Arc<SessionInner>,
}

struct SessionInner {
    deps: Arc<AnyDeps>,
    deps_type: DepsType,
    session_id: Arc<str>,
    invoker: Option<Arc<dyn ToolInvoker>>,
    /// What the runtime keeps about the session for the calls tools make (its scope and
    /// principal); opaque here.
    data: Option<Arc<AnyDeps>>,
    /// The client that made the session's calls, when it can be asked things (MCP).
    client: Option<Arc<dyn ClientLink>>,
}

impl SessionContext {
    /// The shared part of the contexts of a session with these deps.
    pub fn new<D: Any + Send + Sync>(
        deps: Arc<D>,
        session_id: impl Into<Arc<str>>,
        invoker: Option<Arc<dyn ToolInvoker>>,
    ) -> Self {
        Self {
            inner: Arc::new(SessionInner {
                deps,
                deps_type: DepsType::of::<D>(),
                session_id: session_id.into(),
                invoker,
                data: None,
                client: None,
            }),
        }
    }

    /// The same session with a way back to the client that makes its calls.
    pub fn with_client(mut self, client: Arc<dyn ClientLink>) -> Self {
        match Arc::get_mut(&mut self.inner) {
            Some(inner) => inner.client = Some(client),
            None => {
                let inner = &*self.inner;
                self.inner = Arc::new(SessionInner {
                    deps: Arc::clone(&inner.deps),
                    deps_type: inner.deps_type,
                    session_id: Arc::clone(&inner.session_id),
                    invoker: inner.invoker.clone(),
                    data: inner.data.clone(),
                    client: Some(client),
                });
            }
        }
        self
    }

    /// The same session with the runtime's data about it, which nested calls read back
    /// through [`CallContext::session_data`].
    pub fn with_data(mut self, data: Arc<AnyDeps>) -> Self {
        // A session just made is set in place; one shared already is copied.
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.data = Some(data);
            return self;
        }
        let inner = &*self.inner;
        Self {
            inner: Arc::new(SessionInner {
                deps: Arc::clone(&inner.deps),
                deps_type: inner.deps_type,
                session_id: Arc::clone(&inner.session_id),
                invoker: inner.invoker.clone(),
                data: Some(data),
                client: inner.client.clone(),
            }),
        }
    }

    /// The context of one call of this session.
    pub fn call(&self, call_id: impl AsRef<str>, tool_name: impl AsRef<str>) -> CallContext {
        TurnContexts::build(self.clone(), 0, [(call_id, tool_name)]).first()
    }

    /// The contexts of a turn's calls, given as `(call id, tool name)` in call order: one
    /// shared allocation for them all, so handing a call its context costs one reference
    /// count. A call whose tool takes no context may be given empty strings.
    pub fn turn<I, C, N>(&self, calls: I) -> TurnContexts
    where
        I: IntoIterator<Item = (C, N)>,
        C: AsRef<str>,
        N: AsRef<str>,
    {
        TurnContexts::build(self.clone(), 0, calls)
    }
}

/// The contexts of the calls of one turn ([`SessionContext::turn`]).
#[doc(hidden)]
#[derive(Clone)]
pub struct TurnContexts {
    info: Arc<TurnInfo>,
}

/// What the contexts of one turn share.
struct TurnInfo {
    session: SessionContext,
    depth: u32,
    /// The calls' ids and tool names, back to back.
    text: String,
    /// Per call, where its id ends and where its tool name ends in `text`.
    ends: Vec<(usize, usize)>,
    /// Orders the nested calls these calls make. Costs nothing until a tool calls a tool.
    nested: NestedCalls,
}

/// What orders the nested calls of one turn's calls, by the scheduler's rule, which the
/// runtime applies: a call that must run alone takes `order` for writing, any other for
/// reading, and the lock of each resource it declares.
#[doc(hidden)]
#[derive(Default)]
pub struct NestedCalls {
    /// Held for writing by a call that must run alone, for reading by any other.
    pub order: tokio::sync::RwLock<()>,
    /// One lock per declared resource, made when a call first declares it.
    resources: std::sync::Mutex<Vec<(String, Arc<tokio::sync::Mutex<()>>)>>,
}

impl NestedCalls {
    /// The lock of one declared resource: calls holding the same one never overlap.
    pub fn resource(&self, name: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut resources = self
            .resources
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, lock)) = resources.iter().find(|(held, _)| held == name) {
            return Arc::clone(lock);
        }
        let lock = Arc::new(tokio::sync::Mutex::new(()));
        resources.push((name.to_owned(), Arc::clone(&lock)));
        lock
    }
}

impl TurnContexts {
    fn build<I, C, N>(session: SessionContext, depth: u32, calls: I) -> Self
    where
        I: IntoIterator<Item = (C, N)>,
        C: AsRef<str>,
        N: AsRef<str>,
    {
        let calls = calls.into_iter();
        let mut text = String::new();
        let mut ends = Vec::with_capacity(calls.size_hint().0);
        for (call_id, tool_name) in calls {
            text.push_str(call_id.as_ref());
            let id_end = text.len();
            text.push_str(tool_name.as_ref());
            ends.push((id_end, text.len()));
        }
        Self {
            info: Arc::new(TurnInfo {
                session,
                depth,
                text,
                ends,
                nested: NestedCalls::default(),
            }),
        }
    }

    /// The context of call `index` of the turn, or `None` past the turn's calls.
    pub fn call(&self, index: usize) -> Option<CallContext> {
        (index < self.info.ends.len()).then(|| CallContext {
            turn: Arc::clone(&self.info),
            index,
            idempotency_key: None,
        })
    }

    /// How many calls the turn has.
    pub fn len(&self) -> usize {
        self.info.ends.len()
    }

    /// Whether the turn has no calls.
    pub fn is_empty(&self) -> bool {
        self.info.ends.is_empty()
    }

    /// The context of the first call, for a turn built with exactly one.
    fn first(self) -> CallContext {
        CallContext {
            turn: self.info,
            index: 0,
            idempotency_key: None,
        }
    }
}

/// The untyped context the runtime hands to [`crate::Tool::prepare`]: the session's deps
/// (type erased) and the identity of the call.
///
/// A handle on what the calls of its turn share: a tool that keeps its context clones one
/// reference count.
#[derive(Clone)]
pub struct CallContext {
    turn: Arc<TurnInfo>,
    index: usize,
    /// The call's idempotency key, for a call the runtime runs exactly once.
    idempotency_key: Option<Arc<str>>,
}

impl CallContext {
    /// A context for one call, with `deps` shared across the session. To make many calls of
    /// one session, build a [`SessionContext`] once and use [`SessionContext::call`] or
    /// [`SessionContext::turn`].
    pub fn new<D: Any + Send + Sync>(
        deps: Arc<D>,
        session_id: impl Into<Arc<str>>,
        call_id: impl AsRef<str>,
        tool_name: impl AsRef<str>,
    ) -> Self {
        SessionContext::new(deps, session_id, None).call(call_id, tool_name)
    }

    /// The same call with `invoker` for nested calls.
    #[must_use]
    pub fn with_invoker(self, invoker: Arc<dyn ToolInvoker>) -> Self {
        let session = &self.session().inner;
        let session = SessionContext {
            inner: Arc::new(SessionInner {
                deps: Arc::clone(&session.deps),
                deps_type: session.deps_type,
                session_id: Arc::clone(&session.session_id),
                invoker: Some(invoker),
                data: session.data.clone(),
                client: session.client.clone(),
            }),
        };
        TurnContexts::build(session, self.depth(), [(self.call_id(), self.tool_name())]).first()
    }

    /// The same session and deps, for a nested call `call_id` of `tool_name`, one level deeper.
    #[must_use]
    pub fn nested(&self, call_id: impl AsRef<str>, tool_name: impl AsRef<str>) -> Self {
        TurnContexts::build(
            self.session().clone(),
            self.depth() + 1,
            [(call_id, tool_name)],
        )
        .first()
    }

    fn session(&self) -> &SessionContext {
        &self.turn.session
    }

    /// Where this call's id and tool name are in the turn's text.
    fn ids(&self) -> (&str, &str) {
        let turn = &*self.turn;
        let start = match self.index.checked_sub(1) {
            Some(previous) => turn.ends.get(previous).map_or(0, |&(_, end)| end),
            None => 0,
        };
        let (id_end, name_end) = turn.ends.get(self.index).copied().unwrap_or((start, start));
        (
            turn.text.get(start..id_end).unwrap_or_default(),
            turn.text.get(id_end..name_end).unwrap_or_default(),
        )
    }

    /// The runtime's data about the session ([`SessionContext::with_data`]).
    #[doc(hidden)]
    pub fn session_data(&self) -> Option<&Arc<AnyDeps>> {
        self.session().inner.data.as_ref()
    }

    /// The session this call belongs to.
    pub fn session_id(&self) -> &str {
        &self.session().inner.session_id
    }

    /// The client that made the call, when it can be asked things (a call over MCP).
    pub fn client(&self) -> Option<&Arc<dyn ClientLink>> {
        self.session().inner.client.as_ref()
    }

    /// The id the model gave this call.
    pub fn call_id(&self) -> &str {
        self.ids().0
    }

    /// The same call, run exactly once under `key` (set by the runtime's idempotency layer).
    #[doc(hidden)]
    #[must_use]
    pub fn with_idempotency_key(mut self, key: Arc<str>) -> Self {
        self.idempotency_key = Some(key);
        self
    }

    /// The key under which the runtime runs this call exactly once: the key the caller
    /// supplied, or the hex SHA-256 of the call's scope (its session, or a configured
    /// tenant), tool, version and canonical arguments. `None` when the idempotency layer does
    /// not apply to the tool.
    pub fn idempotency_key(&self) -> Option<&str> {
        self.idempotency_key.as_deref()
    }

    /// The tool being called.
    pub fn tool_name(&self) -> &str {
        self.ids().1
    }

    /// How many tool calls enclose this one (0 for a call the model made).
    pub fn depth(&self) -> u32 {
        self.turn.depth
    }

    /// The deps type this context carries.
    pub fn deps_type(&self) -> DepsType {
        self.session().inner.deps_type
    }

    /// The deps, untyped.
    pub fn deps_any(&self) -> &Arc<AnyDeps> {
        &self.session().inner.deps
    }

    /// The deps as `D`, when they are a `D` (or an `Arc<D>`).
    pub fn deps<D: Any + Send + Sync>(&self) -> Option<Arc<D>> {
        match Arc::clone(self.deps_any()).downcast::<D>() {
            Ok(deps) => Some(deps),
            Err(any) => any.downcast_ref::<Arc<D>>().map(Arc::clone),
        }
    }

    /// A reference to the deps as `D`, when they are a `D` (or an `Arc<D>`).
    fn deps_ref<D: Any + Send + Sync>(&self) -> Option<&D> {
        let any = self.deps_any();
        match any.downcast_ref::<D>() {
            Some(deps) => Some(deps),
            None => any.downcast_ref::<Arc<D>>().map(AsRef::as_ref),
        }
    }

    /// The invoker for nested calls, when the runtime provided one.
    #[doc(hidden)]
    pub fn invoker(&self) -> Option<&Arc<dyn ToolInvoker>> {
        self.session().inner.invoker.as_ref()
    }

    /// What orders the nested calls this call (and the other calls of its turn) make. Used by
    /// the runtime.
    #[doc(hidden)]
    pub fn nested_calls(&self) -> &NestedCalls {
        &self.turn.nested
    }
}

impl fmt::Debug for TurnContexts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TurnContexts")
            .field("session", &self.info.session)
            .field("calls", &self.len())
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for SessionContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionContext")
            .field("deps_type", &self.inner.deps_type.name)
            .field("session_id", &self.inner.session_id)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallContext")
            .field("deps_type", &self.deps_type().name)
            .field("session_id", &self.session_id())
            .field("call_id", &self.call_id())
            .field("tool_name", &self.tool_name())
            .field("depth", &self.depth())
            .finish_non_exhaustive()
    }
}

/// A read-only view of the current session, injected into a tool at call time.
///
/// `RunContext<D>` gives typed access to the session's deps `D`; bare `RunContext` is an
/// untyped view (session id, call id, tool name; deps as `dyn Any`), and a tool that takes it
/// works with a runtime of any deps type.
///
/// A context is never part of a tool's JSON Schema. It implements neither `Deserialize` nor
/// `JsonSchema`, so a context the `#[tool]` macro cannot recognise (behind a type alias) fails
/// to compile instead of leaking into the schema; mark such a parameter `#[ctx]`.
pub struct RunContext<D: ?Sized + Send + Sync + 'static = AnyDeps> {
    // The deps live in `call`, checked to be a `D` when the context was built; the context
    // itself is one pointer, so building and dropping it costs one reference count.
    call: CallContext,
    deps: PhantomData<fn() -> Arc<D>>,
}

impl<D: Any + Send + Sync> RunContext<D> {
    /// The session's deps.
    pub fn deps(&self) -> &D {
        match self.call.deps_ref::<D>() {
            Some(deps) => deps,
            None => unreachable!("a RunContext<D> is only built for a call whose deps are a D"),
        }
    }

    /// A shared handle to the session's deps.
    pub fn deps_arc(&self) -> Arc<D> {
        match self.call.deps::<D>() {
            Some(deps) => deps,
            None => unreachable!("a RunContext<D> is only built for a call whose deps are a D"),
        }
    }
}

impl RunContext<AnyDeps> {
    /// The session's deps, untyped.
    pub fn deps(&self) -> &AnyDeps {
        self.call.deps_any().as_ref()
    }

    /// A shared handle to the session's deps, untyped.
    pub fn deps_arc(&self) -> Arc<AnyDeps> {
        Arc::clone(self.call.deps_any())
    }
}

impl<D: ?Sized + Send + Sync + 'static> RunContext<D> {
    /// The session this call belongs to.
    pub fn session_id(&self) -> &str {
        self.call.session_id()
    }

    /// The id the model gave this call.
    pub fn call_id(&self) -> &str {
        self.call.call_id()
    }

    /// The key under which the runtime runs this call exactly once (the caller's explicit
    /// key, or the hex SHA-256 of the call's scope, tool, version and canonical arguments:
    /// another session or tool never shares it), or `None` when the idempotency layer does
    /// not apply to this tool. Forward it downstream (a payment API's idempotency key,
    /// a unique constraint) so a crash between the write and the stored result cannot cause
    /// a second write there either.
    pub fn idempotency_key(&self) -> Option<&str> {
        self.call.idempotency_key()
    }

    /// The tool being called.
    pub fn tool_name(&self) -> &str {
        self.call.tool_name()
    }

    /// The untyped context this view was made from.
    pub fn call_context(&self) -> &CallContext {
        &self.call
    }

    /// Calls another tool of the same runtime, with the same context injection, planning and
    /// limits as a call the model makes.
    pub async fn call_tool(
        &self,
        tool: &str,
        args: impl Into<ToolArgs<'_>>,
    ) -> Result<ToolOutput, ToolError> {
        let Some(invoker) = self.call.invoker() else {
            return Err(ToolError::new(
                ErrorKind::Internal,
                format!(
                    "tool `{}` tried to call `{tool}`, but this context has no runtime to call it through",
                    self.tool_name()
                ),
            ));
        };
        let args = args.into().into_value()?;
        Arc::clone(invoker).invoke(&self.call, tool, args).await
    }

    /// Tells the client how far the call has come. A no-op when the call has no client
    /// ([`client`](crate::client)) or the client asked for no progress.
    pub async fn report_progress(&self, progress: Progress) {
        if let Some(client) = self.call.client() {
            client.progress(progress).await;
        }
    }

    /// Sends the client a log message from this tool. A no-op when the call has no client
    /// or the message is below the level the client set.
    pub async fn log(&self, level: LogLevel, data: impl Into<serde_json::Value>) {
        if let Some(client) = self.call.client() {
            let message = LogMessage {
                level,
                logger: Some(self.tool_name().to_owned()),
                data: data.into(),
            };
            client.log(message).await;
        }
    }

    /// Asks the client's model for a completion (MCP sampling). [`ClientError::NoClient`]
    /// when the call has no client, [`ClientError::Unsupported`] when the client does not
    /// sample.
    pub async fn sample(&self, request: SamplingRequest) -> Result<Sampled, ClientError> {
        let client = self.call.client().ok_or(ClientError::NoClient)?;
        if !client.can_sample() {
            return Err(ClientError::Unsupported("sampling"));
        }
        client.sample(request).await
    }

    /// Asks the client's user for input (MCP elicitation). [`ClientError::NoClient`] when
    /// the call has no client, [`ClientError::Unsupported`] when the client does not elicit.
    pub async fn elicit(&self, request: Elicitation) -> Result<Elicited, ClientError> {
        let client = self.call.client().ok_or(ClientError::NoClient)?;
        if !client.can_elicit() {
            return Err(ClientError::Unsupported("elicitation"));
        }
        client.elicit(request).await
    }
}

impl<D: Any + Send + Sync> RunContext<D> {
    /// A typed context for `call`, when `call` carries deps of type `D`.
    pub fn from_call(call: &CallContext) -> Result<Self, ToolError> {
        Self::from_owned_call(call.clone())
    }

    fn from_owned_call(call: CallContext) -> Result<Self, ToolError> {
        if DepsType::of::<D>().is_served_by(call.deps_type()) {
            Ok(Self {
                call,
                deps: PhantomData,
            })
        } else {
            Err(deps_mismatch(&call, DepsType::of::<D>()))
        }
    }
}

impl RunContext<AnyDeps> {
    /// An untyped context for `call`.
    pub fn untyped(call: &CallContext) -> Self {
        Self {
            call: call.clone(),
            deps: PhantomData,
        }
    }
}

impl<D: ?Sized + Send + Sync + 'static> Clone for RunContext<D> {
    fn clone(&self) -> Self {
        Self {
            call: self.call.clone(),
            deps: PhantomData,
        }
    }
}

impl<D: ?Sized + Send + Sync + 'static> fmt::Debug for RunContext<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunContext")
            .field("deps", &std::any::type_name::<D>())
            .field("session_id", &self.session_id())
            .field("call_id", &self.call_id())
            .field("tool_name", &self.tool_name())
            .finish()
    }
}

fn deps_mismatch(call: &CallContext, wanted: DepsType) -> ToolError {
    ToolError::new(
        ErrorKind::Internal,
        format!(
            "tool `{}` needs deps of type `{}`, but the runtime provides `{}`",
            call.tool_name(),
            wanted.name(),
            call.deps_type().name()
        ),
    )
}

/// A type the `#[tool]` macro can inject as a context: `RunContext<D>`, bare `RunContext`, or
/// an alias of one marked `#[ctx]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool context",
    label = "not a `RunContext`",
    note = "`#[ctx]` marks a parameter whose type is `RunContext<D>` or a type alias of it; remove `#[ctx]` to make this a model-visible parameter"
)]
pub trait FromCallContext: Sized {
    /// The deps type this context needs, or `None` when it works with any.
    fn deps_type() -> Option<DepsType>;

    /// Builds the context for one call.
    fn from_call_context(call: CallContext) -> Result<Self, ToolError>;
}

impl<D: Any + Send + Sync> FromCallContext for RunContext<D> {
    fn deps_type() -> Option<DepsType> {
        Some(DepsType::of::<D>())
    }

    fn from_call_context(call: CallContext) -> Result<Self, ToolError> {
        RunContext::from_owned_call(call)
    }
}

impl FromCallContext for RunContext<AnyDeps> {
    fn deps_type() -> Option<DepsType> {
        None
    }

    fn from_call_context(call: CallContext) -> Result<Self, ToolError> {
        Ok(RunContext {
            call,
            deps: PhantomData,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_context_sees_its_deps_and_rejects_others() {
        let call = CallContext::new(Arc::new(41_u32), "s-1", "c-1", "probe");
        let typed = RunContext::<u32>::from_call(&call).map(|ctx| *ctx.deps());
        assert_eq!(typed.ok(), Some(41));
        let wrong = RunContext::<String>::from_call(&call);
        let message = wrong.err().map(|error| error.message().to_owned());
        assert_eq!(
            message.as_deref(),
            Some(
                "tool `probe` needs deps of type `alloc::string::String`, but the runtime provides `u32`"
            )
        );
    }

    #[test]
    fn a_turns_contexts_share_one_allocation_and_keep_each_calls_identity() {
        let session = SessionContext::new(Arc::new(7_u8), "s-3", None);
        let turn = session.turn([("call_a", "get_order"), ("", ""), ("call_c", "search")]);
        assert_eq!(turn.len(), 3);
        let ids = |index| {
            turn.call(index)
                .map(|call| (call.call_id().to_owned(), call.tool_name().to_owned()))
        };
        assert_eq!(ids(0), Some(("call_a".into(), "get_order".into())));
        assert_eq!(ids(1), Some((String::new(), String::new())));
        assert_eq!(ids(2), Some(("call_c".into(), "search".into())));
        assert_eq!(ids(3), None);
        let call = turn
            .call(2)
            .map(|call| call.nested("call_c/inner", "lookup"));
        let nested = call.map(|call| {
            (
                call.call_id().to_owned(),
                call.depth(),
                call.session_id().to_owned(),
            )
        });
        assert_eq!(nested, Some(("call_c/inner".into(), 1, "s-3".into())));
    }

    #[test]
    fn untyped_context_works_with_any_deps() {
        let call = CallContext::new(Arc::new("deps"), "s-2", "c-2", "probe");
        let ctx = RunContext::untyped(&call);
        assert_eq!(ctx.session_id(), "s-2");
        assert_eq!(ctx.deps().downcast_ref::<&str>(), Some(&"deps"));
        assert_eq!(<RunContext as FromCallContext>::deps_type(), None);
    }
}
