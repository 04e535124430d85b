//! # tool-runtime
//!
//! Runs the tool calls a model emits. An application depends on this one crate: it writes
//! tools with [`tool`] (their context [`RunContext`], their errors [`ToolError`]), builds a
//! [`Runtime`] with [`Runtime::builder`] (its [`Limits`], [`RetryPolicy`], policy and stores),
//! and hands each turn's [`ToolCall`]s to [`Runtime::execute`] for a [`Session`]; the
//! [`TurnReport`] holds one [`Observation`] per call, to send back to the model.
//!
//! ```
//! use tool_runtime::{Runtime, Session, ToolCall, tool};
//!
//! pub struct Deps;
//!
//! /// Adds two numbers.
//! #[tool(read_only)]
//! fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let runtime = Runtime::builder(Deps).build()?;
//! let report = runtime
//!     .execute(
//!         &Session::new("s-1"),
//!         vec![
//!             ToolCall::new("c1", "add", r#"{"a": 2, "b": 3}"#),
//!             ToolCall::new("c2", "ad", "{}"),
//!         ],
//!     )
//!     .await;
//! assert_eq!(report.observations()[0].content(), Some("5"));
//! assert_eq!(report.observations()[1].error_kind(), Some("unknown_tool"));
//! # Ok::<(), tool_runtime::BuildError>(())
//! # }).unwrap();
//! ```
//!
//! The crate root holds what an application writes. The rest lives in modules named for what
//! they are:
//!
//! - [`gates`]: the policy that decides which calls run, need a person's yes, or are refused.
//! - [`approvals`]: who answers the calls the policy asks about, and where pending approvals wait.
//! - [`audit`]: where every gate decision and every executed write is recorded, and checking
//!   the trail.
//! - [`idempotency`]: how a write runs once per key, and the store that remembers it.
//! - [`output`]: what the model receives of a result: redacted secrets, cut outputs kept as
//!   artifacts.
//! - [`dynamic`]: tools built at run time from a JSON Schema and a closure.
//! - [`providers`]: the catalog lowered for OpenAI, Anthropic, Gemini and MCP, the model's
//!   calls parsed from OpenAI's, Anthropic's and Gemini's answers, and the report rendered
//!   back ([`Runtime::lowered_catalog`]).
//! - [`model`]: the [`Model`](model::Model) trait a run asks (messages and the lowered catalog
//!   in; text, calls and usage out), a scripted model, a closure model, and `OpenAiChat` for
//!   OpenAI-compatible Chat Completions endpoints (feature `openai-http`).
//! - [`routing`]: a request routed to an intent and its scope before the model sees a tool
//!   (strong rules, a classifier, evidence for entities), each decision kept once per request.
//! - [`run`]: the [`Agent`](run::Agent) that carries a request through many turns between a
//!   model and the tools, within a [`Budget`](run::Budget), recorded as it goes so a run
//!   started again after a crash continues from its record.
//! - [`trace`]: a run's trace, one JSON line per step (the route, each answer of the model,
//!   each call with its gate decision, each round, the end), to a file or in memory.
//! - [`eval`] (feature `eval`): run traces read into figures (gates, routing, duplicates,
//!   argument validity, budgets, latency, tokens, errors), a terminal table, one HTML page with
//!   inline SVG charts, and a comparison of two sets of traces.
//! - [`core`]: the rest of `tool-core`'s vocabulary (the [`Tool`](core::Tool) trait, the
//!   parts of a [`ToolSpec`]), for code that implements tools by hand.
//!
//! What the macros' generated code needs stays out of sight; the runtime's root does not
//! re-export tool-core's hidden names:
//!
//! ```compile_fail
//! use tool_runtime::parse_args; // tool-core's, for generated code only
//! ```
//!
//! # The path of one call
//!
//! Every call takes one path, built in one place: the calls the model makes, the calls a tool
//! makes through [`RunContext::call_tool`], resumed and replayed calls, first attempts and
//! retries.
//!
//! 1. **Admit**: look the tool up; the session's scope and the principal's roles.
//! 2. **Validate**: check the argument limits (size, depth), parse the arguments once into
//!    the value every later stage reads, and validate them. A call that fails here is
//!    answered at once and runs in no batch.
//! 3. **Gate**: a run's budget counts the call (past a limit it is refused,
//!    `budget_exceeded`); the policy decides (auto, ask, deny); a person answers an ask
//!    (approve, edit, deny, later); the decision's audit line is durable before anything runs.
//! 4. **Schedule**: consecutive parallel-safe calls (`read_only`, not `exclusive`) form one
//!    concurrent batch, at most [`Limits::max_concurrency`] at a time; every other call runs
//!    alone, in order; calls sharing a declared resource never run at the same time. A
//!    parallel-safe tool (one that may run alongside other calls) may only call parallel-safe
//!    tools, whether or not other calls run at that moment: a call of any other tool is
//!    answered `nested_call_refused`. The nested calls of a tool that runs alone are ordered
//!    by the same rule among themselves.
//! 5. **Run**: cancellation is checked before the call starts; a write claims its key in
//!    the idempotency store (or is answered with the first execution's result); then the
//!    shells, outermost first: retry, timeout, contain.
//!    - *Retry* repeats a failure only when repeating is safe: the failure is transient and
//!      the tool is read-only or declares `idempotent`, or the tool marked the failure
//!      [`ToolError::safe_to_repeat`] (nothing was done). A write that failed with a reset
//!      connection may have been carried out, so it is never repeated. Backoff is
//!      exponential with jitter, capped by [`RetryPolicy::max_delay`].
//!    - *Timeout* gives each attempt its own time, counted from its start, and drops the
//!      attempt's future when it is up.
//!    - *Contain* turns a panic in the tool, while it runs or while it is dropped, into a
//!      `panicked` error for that call only.
//! 6. **Shape** the output: redact secrets, cut what is over the limit (head and tail with a
//!    notice; the whole kept as an artifact that `read_artifact` reads, from the same session
//!    only), add the page notice, and redact the whole once more. Errors get the same: their
//!    message, hint and details redacted, the message cut to the limit. A nested call's
//!    result is redacted before the calling tool reads it; cutting and page notices apply
//!    when the calling tool's own output reaches the model.
//! 7. **Audit** an executed write's outcome, and **answer**: one [`Observation`] per call id, in call order, in a [`TurnReport`] that also
//!    records the batches.
//!
//! # Executors and blocking
//!
//! The futures of [`Runtime::execute`] and [`Runtime::execute_with_cancel`] are `Send`. They
//! run on a tokio runtime with timers enabled (`#[tokio::main]`, or `enable_time()` /
//! `enable_all()` on a runtime builder). A call that finishes without waiting needs no timer;
//! a call that waits and has a timeout, or is retried after a backoff, does: without one it is
//! answered `internal` with a message that says so, never with a panic.
//!
//! An `async fn` tool must not block its thread. A sync `fn` tool runs inline on the turn's
//! task, so it suits quick work only; a sync tool that blocks (a blocking client, heavy
//! computation) takes `#[tool(blocking)]` and runs on tokio's blocking pool, where its
//! timeout can fire and the other calls of the turn go on.
//!
//! # Limits
//!
//! [`Limits`] holds the runtime-wide limits and their defaults: a timeout of 60 s for tools
//! that declare none, 128 concurrent calls per batch, 16,000 output characters, 1 MiB and 64
//! levels of arguments, 4 levels of tools calling tools. Limits that would let a model or a
//! setting overflow the stack are bounded: [`MAX_ARGUMENT_DEPTH`], [`MAX_CALL_DEPTH`];
//! [`RuntimeBuilder::build`] refuses values beyond them.
//!
//! # Error kinds
//!
//! Every failed call is an observation whose error has a stable `kind`:
//!
//! | kind | meaning | retryable |
//! |---|---|---|
//! | `unknown_tool` | the model named a tool that does not exist; the error lists the available tools and the nearest name | no |
//! | `invalid_arguments` | malformed JSON (with the position), a wrong, missing or unknown field (named by its path, with what was expected and what came, and the field's schema), arguments over the size or nesting limit | no |
//! | `execution_failed` | the tool failed; `retryable` is true when the tool marked the failure transient and repeating the call is safe (a read-only or `idempotent` tool, or a failure marked `safe_to_repeat`); it was already retried | per error |
//! | `timeout` | the tool did not finish within its timeout (the details give it); it was stopped | no |
//! | `panicked` | the tool panicked; the panic was contained | no |
//! | `cancelled` | the turn was cancelled before the call finished (or before it started) | no |
//! | `internal` | the runtime could not provide what the tool needs (a context for other deps, a timer) | no |
//! | `call_depth_exceeded` | tools called tools deeper than [`Limits::max_call_depth`] | no |
//! | `nested_call_refused` | a tool that runs alongside other calls called a tool that must run alone | no |

mod arguments;
mod artifact_tool;
mod build_error;
mod builder;
mod call;
mod call_path;
pub mod dynamic;
#[cfg(feature = "eval")]
pub mod eval;
pub mod gates;
mod hex;
pub mod idempotency;
mod limits;
#[cfg(feature = "mcp-server")]
pub mod mcp_server;
pub mod model;
mod nested;
mod observation;
pub mod output;
mod plan;
pub mod providers;
mod resume;
pub mod routing;
pub mod run;
mod runtime;
mod schedule;
mod session;
mod shells;
mod stack;
pub mod trace;
mod validate;

pub use arguments::Arguments;
pub use builder::{BuildError, LeftOutTool, MAX_ARGUMENT_DEPTH, MAX_CALL_DEPTH, RuntimeBuilder};
pub use call::ToolCall;
pub use limits::Limits;
pub use observation::{Batch, Observation, Outcome, TurnReport};
pub use runtime::Runtime;
pub use session::{Principal, Scope, Session};
pub use shells::RetryPolicy;
pub use tokio_util::sync::CancellationToken;
// The vocabulary a tool's author names: its context, its errors, its output, its spec.
pub use tool_core::{
    BoxFuture, Content, Contents, EmbeddedResource, ErrorKind, Page, PageInfo, Registry, RiskLevel,
    RunContext, ToolError, ToolList, ToolOutput, ToolSpec, tools,
};

// Internal paths name it at the root; the public path is `output::READ_ARTIFACT`.
use artifact_tool::READ_ARTIFACT;

#[doc(hidden)]
pub use session::__labels_unique;
#[doc(hidden)]
pub use tool_core::__private;

/// Turns a function into a tool. The same attribute as [`tool_core::tool`], whose
/// documentation lists every key and context form; generated code names `::tool_runtime`, so
/// an application needs no other dependency.
pub use tool_macros::runtime_tool as tool;

pub mod client {
    //! What a tool can ask of the client that made its call: progress, log messages, a
    //! completion from the client's model (sampling), input from its user (elicitation).
    //!
    //! A tool reaches the client through its [`RunContext`](crate::RunContext):
    //! [`report_progress`](crate::RunContext::report_progress),
    //! [`log`](crate::RunContext::log), [`sample`](crate::RunContext::sample),
    //! [`elicit`](crate::RunContext::elicit). A call made over MCP has a client; any other
    //! call has none, and then progress and log messages go nowhere while sampling and
    //! elicitation answer [`ClientError::NoClient`]. A server for another protocol
    //! implements [`ClientLink`] and sets it with [`Session::with_client`](crate::Session::with_client).

    pub use tool_core::client::{
        ClientError, ClientLink, Elicitation, Elicited, LogLevel, LogMessage, Progress, Role,
        Sampled, SamplingMessage, SamplingRequest,
    };
}

pub mod approvals {
    //! Who answers the calls the policy asks about, and where the calls waiting for an answer are
    //! kept.
    //!
    //! An application implements [`Approver`] (or uses a channel to a person), passes it to
    //! [`RuntimeBuilder::approver`](crate::RuntimeBuilder::approver), and shows each [`ApprovalRequest`] (with the [`Preview`] set by
    //! [`RuntimeBuilder::preview`](crate::RuntimeBuilder::preview)). An approver that answers later returns
    //! [`Approval::Pending`]: the call waits in the [`ApprovalStore`] ([`MemoryApprovalStore`] by
    //! default) until a [`SignedDecision`], signed with the runtime's [`DecisionKeys`], resumes it
    //! through [`Runtime::resume`](crate::Runtime::resume).
    //!
    //! An approval store reports a [`std::io::Error`]: its kind says what happened
    //! (`AlreadyExists` for a request kept twice, `TimedOut`, `ConnectionRefused`), and the
    //! client's own error is its inner error ([`std::io::Error::other`],
    //! [`get_ref`](std::io::Error::get_ref)).

    pub use crate::gates::approval::{Approval, ApprovalRequest, Approver, Preview};
    pub use crate::gates::decision::{
        ApprovalStore, DecisionError, DecisionKeys, MemoryApprovalStore, PendingApproval,
        SealedArguments, SignedDecision,
    };
}

pub mod audit {
    //! Where every gate decision and every executed write's outcome is recorded, and how the trail
    //! is checked.
    //!
    //! An application passes a sink to [`RuntimeBuilder::audit`](crate::RuntimeBuilder::audit): [`JsonlAudit`] (a hash-chained
    //! JSON Lines file, checked later with [`verify_audit`]), [`MemoryAudit`] (tests), or its own
    //! [`AuditSink`], which receives each [`AuditRecord`].

    pub use crate::gates::audit::{
        AuditCompleter, AuditDecision, AuditError, AuditRecord, AuditSink, AuditSummary,
        AuditTicket, JsonlAudit, MemoryAudit, verify_audit,
    };
}

pub mod core {
    //! The rest of `tool-core`'s vocabulary: what code that implements [`Tool`] by hand, inspects
    //! a [`ToolSpec`] or reads a [`Registry`] names. The crate root re-exports the part an
    //! application writes.

    pub use tool_core::schema;
    pub use tool_core::{
        AnyDeps, BoxFuture, CallContext, DepsType, ErrorKind, FromCallContext, IsPage, Location,
        OutputPolicy, Page, PageInfo, Registry, RegistryError, RiskLevel, RunContext,
        SourceLocation, Tool, ToolArgs, ToolDef, ToolError, ToolExample, ToolExecution, ToolFuture,
        ToolHints, ToolList, ToolOutput, ToolSpec, is_portable_tool_name,
    };
}
