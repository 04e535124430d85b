//! A run's trace: one event per step of an [`Agent`](crate::run::Agent)'s run, as JSON lines.
//!
//! An agent given a [`TraceSink`] with [`Agent::trace`](crate::run::Agent::trace) records, for
//! each run, in order: `run_started` (the input, and the catalog the model is shown with each
//! tool's tokens), `routed` (when a router decided now), then per round `model_answered`, one
//! `call` per call of the model (its gate decision, digest, attempts, error kind...) and
//! `round_ended`; `budget_stopped` when a budget stops the run, and `run_ended`. A run
//! continued from its record starts with `run_started` (`resumed: true`) and records only the
//! steps it takes now. A run that fails with a [`RunError`](crate::run::RunError) (the model,
//! a store) has no `run_ended`.
//!
//! Calls that tools make through `ctx.call_tool` are in the trace too, after the model's
//! calls of their round, with `nested: true` and the id `<calling call's id>/<tool>`: the
//! stack hands each to the run's meter as it answers it (only when the run is traced), and the
//! agent writes them with the round.
//!
//! Sinks: [`JsonlTrace`] (a file, written by a thread of its own), [`MemoryTrace`] (tests), or
//! your own. The events are [`TraceEvent`]; each `call` names the [`Gate`]'s decision, which
//! each [`Observation`](crate::Observation) carries too ([`Observation::gate`](crate::Observation::gate)).
//!
//! ```
//! use std::sync::Arc;
//! use tool_runtime::model::{ModelResponse, ScriptedModel};
//! use tool_runtime::run::{Agent, RunRequest};
//! use tool_runtime::trace::{Gate, MemoryTrace, TraceEvent};
//! use tool_runtime::{Runtime, Session, ToolCall, tool, tools};
//!
//! pub struct Deps;
//!
//! /// Tells where a parcel is.
//! #[tool(read_only)]
//! fn traced_parcel(
//!     /// The parcel's id.
//!     parcel: String,
//! ) -> String {
//!     format!("{parcel}: in transit")
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let runtime = Runtime::builder(Deps).inventory(false).tools(tools![traced_parcel]).build()?;
//! let model = ScriptedModel::new([
//!     ModelResponse::calls([ToolCall::new("c1", "traced_parcel", r#"{"parcel":"P-1"}"#)]),
//!     ModelResponse::text("P-1 is in transit."),
//! ]);
//! let trace = Arc::new(MemoryTrace::default());
//! let agent = Agent::new(runtime, model).trace(Arc::clone(&trace));
//! agent.run(RunRequest::new("run-1", Session::new("s-1"), "Where is P-1?")).await?;
//! agent.flush_trace().await?;
//!
//! let events = trace.events();
//! let names: Vec<&str> = events.iter().map(TraceEvent::name).collect();
//! assert_eq!(
//!     names,
//!     ["run_started", "model_answered", "call", "round_ended", "model_answered", "run_ended"]
//! );
//! assert!(matches!(events[2], TraceEvent::Call { gate: Some(Gate::Auto), .. }));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! Each line of a JSON lines trace is one event serialized:
//!
//! ```text
//! {"event":"call","run":"r1","session":"s1","at_ms":1,"round":1,"call_id":"c1","tool":"get_order_status","arguments_digest":"5f…","gate":"auto","attempts":1,"elapsed_ms":0.05,"error_kind":null,"invalid_field":null,"replayed":false,"truncated":false,"redactions":0,"nested":false}
//! ```

mod event;
mod jsonl;
mod sink;
mod tracer;

pub use crate::observation::Gate;
pub use event::{CatalogTool, TraceEvent};
pub use jsonl::JsonlTrace;
pub use sink::{MemoryTrace, TraceSink};
pub(crate) use tracer::{NestedCall, Tracer};
