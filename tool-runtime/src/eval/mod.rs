//! The evaluation report: run traces (JSON lines, one event per step of a run) read into
//! figures, printed as a terminal table, drawn as one self-contained HTML page, and compared
//! between two sets of traces (before and after a change).
//!
//! ```
//! use tool_runtime::eval::{Report, Traces};
//!
//! let trace = concat!(
//!     r#"{"event":"run_started","run":"r1","session":"s1","at_ms":0,"input":"Where is A-1024?","resumed":false,"catalog":[{"name":"get_order_status","tokens":61}]}"#, "\n",
//!     r#"{"event":"call","run":"r1","session":"s1","at_ms":1,"round":1,"call_id":"c1","tool":"get_order_status","arguments_digest":"5f","gate":"auto","attempts":1,"elapsed_ms":0.05,"error_kind":null,"invalid_field":null,"replayed":false,"truncated":false,"redactions":0,"nested":false}"#, "\n",
//!     "not json\n",
//! );
//! let mut traces = Traces::new();
//! traces.read_from("trace.jsonl", trace.as_bytes());
//! assert_eq!(traces.problems()[0].line, 3);
//! let report = Report::from(&traces);
//! assert_eq!(report.gates.auto, 1);
//! assert!(report.table().contains("get_order_status"));
//! assert!(report.html().contains("<svg"));
//! ```
//!
//! - [`read_traces`] and [`Traces`]: every line parsed on its own; a bad line (not JSON, an
//!   unknown event, a missing field) or a file cut short is a [`TraceProblem`] naming its file
//!   and line, and the rest is still evaluated. Unknown fields are ignored.
//! - [`Report`]: the figures ([`Report::from`]), [`Report::table`], [`Report::html`].
//! - [`Comparison`]: two reports side by side ([`Report::compare`]), differences marked.

mod charts;
mod compare;
mod figures;
mod html;
mod read;
mod table;

pub use compare::{Change, Comparison, ComparisonRow};
pub use figures::{
    ArgumentFigures, CatalogFigures, ErrorFigures, FieldCount, GateFigures, HistogramBin,
    LatencyFigures, OutOfScope, ProgressFigures, Report, RoundFigures, RoutingFigures, RunFigures,
    TokenFigures,
};
pub use read::{TraceProblem, Traces, read_traces};
