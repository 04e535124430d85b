//! Running one call, and reading a turn's report: each call's error kind, content, replay
//! flag.

use std::any::Any;

use tool_runtime::{Observation, Runtime, Session, ToolCall, ToolError, TurnReport};

/// Executes one call of `name` with `arguments` (JSON text), as call `c` in session
/// `session`, and answers its observation.
///
/// # Panics
///
/// If the turn answers another number of observations.
pub async fn one_call<D: Any + Send + Sync>(
    runtime: &Runtime<D>,
    session: &str,
    name: &str,
    arguments: &str,
) -> Observation {
    let report = runtime
        .execute(
            &Session::new(session),
            [ToolCall::new("c", name, arguments)],
        )
        .await;
    only(&report).clone()
}

/// Each call's error kind (`None` for a success), in call order.
pub fn kinds(report: &TurnReport) -> Vec<Option<&str>> {
    report
        .observations()
        .iter()
        .map(Observation::error_kind)
        .collect()
}

/// Each call's content (`None` for an error), in call order.
pub fn contents(report: &TurnReport) -> Vec<Option<&str>> {
    report
        .observations()
        .iter()
        .map(Observation::content)
        .collect()
}

/// Whether each call was answered from the idempotency layer, in call order.
pub fn replayed(report: &TurnReport) -> Vec<bool> {
    report
        .observations()
        .iter()
        .map(Observation::replayed)
        .collect()
}

/// The report's one observation.
///
/// # Panics
///
/// If the report holds another number of observations.
pub fn only(report: &TurnReport) -> &Observation {
    match report.observations() {
        [observation] => observation,
        other => panic!("expected one observation, found {other:?}"),
    }
}

/// The id of the pending request an `approval_pending` observation names.
pub fn request_id(observation: &Observation) -> Option<&str> {
    observation
        .error()
        .and_then(ToolError::details)
        .and_then(|details| details["request_id"].as_str())
}
