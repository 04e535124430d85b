//! Who a turn is for and what it may touch: the [`Session`], the [`Principal`] acting in it,
//! and its [`Scope`]. A leaf: the drivers and the stages read it, it reads none of them.

mod scope;

use std::sync::Arc;

use tool_core::client::ClientLink;

use crate::gates::approval::Approver;
use crate::run::Meter;

pub use scope::{__labels_unique, Scope};

/// The conversation a turn belongs to, and what it may do: its [`Scope`], the [`Principal`]
/// acting in it, and whether a person can be asked to approve a call.
///
/// ```
/// use tool_runtime::{Principal, Scope, Session};
///
/// let session = Session::new("s-1")
///     .with_principal(Principal::new("ada").with_role("agent"))
///     .with_scope(Scope::none());
/// assert_eq!(session.id(), "s-1");
/// assert!(session.scope().is_empty());
/// ```
#[derive(Clone)]
pub struct Session {
    id: Arc<str>,
    scope: Scope,
    principal: Option<Arc<Principal>>,
    interactive: bool,
    /// Who answers this session's asks instead of the runtime's approver.
    approver: Option<Arc<dyn Approver>>,
    /// The client that makes this session's calls, when tools can ask it things.
    client: Option<Arc<dyn ClientLink>>,
    /// The budget of the run the session's calls belong to, counted at the gate.
    meter: Option<Arc<Meter>>,
}

impl PartialEq for Session {
    /// Sessions are equal when their id, scope, principal and interactivity are, and they
    /// have the same approver and client (the same values, not equal ones).
    fn eq(&self, other: &Self) -> bool {
        fn same<T: ?Sized>(a: &Option<Arc<T>>, b: &Option<Arc<T>>) -> bool {
            match (a, b) {
                (Some(a), Some(b)) => std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b)),
                (None, None) => true,
                _ => false,
            }
        }
        self.id == other.id
            && self.scope == other.scope
            && self.principal == other.principal
            && self.interactive == other.interactive
            && same(&self.approver, &other.approver)
            && same(&self.client, &other.client)
            && same(&self.meter, &other.meter)
    }
}

impl Eq for Session {}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("scope", &self.scope)
            .field("principal", &self.principal)
            .field("interactive", &self.interactive)
            .field("approver", &self.approver.is_some())
            .field("client", &self.client.is_some())
            .field("run", &self.meter.is_some())
            .finish()
    }
}

impl Session {
    /// A session with the given id: every tool in scope, no principal, interactive.
    pub fn new(id: impl Into<Arc<str>>) -> Self {
        Self {
            id: id.into(),
            scope: Scope::all(),
            principal: None,
            interactive: true,
            approver: None,
            client: None,
            meter: None,
        }
    }

    /// The session with this scope: the tools it may see and call.
    #[must_use]
    pub fn with_scope(mut self, scope: Scope) -> Self {
        self.scope = scope;
        self
    }

    /// The session acting for this principal, whose roles the gates check.
    #[must_use]
    pub fn with_principal(mut self, principal: Principal) -> Self {
        self.principal = Some(Arc::new(principal));
        self
    }

    /// A session no person watches (a batch job, a scheduled run): a call the policy would
    /// ask about is denied with the policy's reason instead.
    #[must_use]
    pub fn non_interactive(mut self) -> Self {
        self.interactive = false;
        self
    }

    /// The session with its own approver: it answers this session's asks instead of the
    /// runtime's ([`RuntimeBuilder::approver`](crate::RuntimeBuilder::approver)), as the MCP
    /// server does by asking the client's user.
    #[must_use]
    pub fn with_approver(mut self, approver: impl Approver) -> Self {
        self.approver = Some(Arc::new(approver));
        self
    }

    /// The session with a way back to the client that makes its calls: tools reach it
    /// through [`RunContext::report_progress`](crate::RunContext::report_progress),
    /// [`log`](crate::RunContext::log), [`sample`](crate::RunContext::sample) and
    /// [`elicit`](crate::RunContext::elicit). The MCP server sets it.
    #[must_use]
    pub fn with_client(mut self, client: Arc<dyn ClientLink>) -> Self {
        self.client = Some(client);
        self
    }

    /// The session, its calls counted against a run's budget.
    pub(crate) fn with_meter(mut self, meter: Arc<Meter>) -> Self {
        self.meter = Some(meter);
        self
    }

    /// The budget meter of the run the session's calls belong to.
    pub(crate) fn meter(&self) -> Option<&Arc<Meter>> {
        self.meter.as_ref()
    }

    /// The session's own approver, when it has one.
    pub(crate) fn approver(&self) -> Option<&Arc<dyn Approver>> {
        self.approver.as_ref()
    }

    /// The client that makes the session's calls, when it has one.
    pub(crate) fn client(&self) -> Option<&Arc<dyn ClientLink>> {
        self.client.as_ref()
    }

    /// The session id, as tools see it in their context.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The session's scope.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// The principal acting in the session, if one was given.
    pub fn principal(&self) -> Option<&Principal> {
        self.principal.as_deref()
    }

    /// Whether a person can be asked to approve a call.
    pub fn is_interactive(&self) -> bool {
        self.interactive
    }

    /// Whether the session is as [`Session::new`] made it: every tool, no principal,
    /// interactive.
    pub(crate) fn is_plain(&self) -> bool {
        self.scope.is_all()
            && self.principal.is_none()
            && self.interactive
            && self.approver.is_none()
            && self.client.is_none()
            && self.meter.is_none()
    }

    /// The session a nested call belongs to, as its parent's context kept it.
    pub(crate) fn of_context(context: &tool_core::CallContext) -> Self {
        context
            .session_data()
            .and_then(|data| data.downcast_ref::<Session>())
            .cloned()
            .unwrap_or_else(|| Session::new(context.session_id()))
    }

    pub(crate) fn shared_id(&self) -> Arc<str> {
        Arc::clone(&self.id)
    }
}

/// Who acts in a session: an id and the roles the gates check tools' required roles against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    id: String,
    roles: Vec<String>,
}

impl Principal {
    /// A principal with no roles.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            roles: Vec::new(),
        }
    }

    /// The principal with one more role.
    #[must_use]
    pub fn with_role(mut self, role: impl Into<String>) -> Self {
        let role = role.into();
        if !self.roles.contains(&role) {
            self.roles.push(role);
        }
        self
    }

    /// The principal's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The principal's roles.
    pub fn roles(&self) -> &[String] {
        &self.roles
    }

    /// Whether the principal has `role`.
    pub fn has_role(&self, role: &str) -> bool {
        self.roles.iter().any(|own| own == role)
    }
}
