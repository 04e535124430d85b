//! Deferred approvals: the keys the tests sign with, a runtime whose asks wait for a person,
//! a call left pending, a decision signed.

use std::any::Any;
use std::sync::Arc;

use tool_runtime::approvals::{
    Approval, ApprovalStore, DecisionKeys, PendingApproval, SignedDecision,
};
use tool_runtime::{Runtime, RuntimeBuilder, Session, ToolCall};

use crate::approver::Always;
use crate::report::{only, request_id};

/// Key `k1`, the secret 32 sevens: what every runtime of a test shares.
pub fn keys() -> DecisionKeys {
    DecisionKeys::new("k1", [7_u8; 32].to_vec())
}

/// `builder` with an approver that leaves every ask pending, `store` for the pending requests
/// and `keys` to sign and verify decisions.
pub fn deferring<D: Any + Send + Sync>(
    builder: RuntimeBuilder<D>,
    store: Arc<dyn ApprovalStore>,
    keys: DecisionKeys,
) -> RuntimeBuilder<D> {
    builder
        .approver(Always(Approval::Pending))
        .approval_store(store)
        .decision_keys(keys)
}

/// Executes `call` alone, which must wait for a person, and answers its pending request as
/// the store lists it.
///
/// # Panics
///
/// If the call is answered otherwise, or the store does not list its request (under the id
/// the observation names, for the call).
pub async fn pend<D: Any + Send + Sync>(
    runtime: &Runtime<D>,
    session: &Session,
    call: ToolCall,
) -> PendingApproval {
    let call_id = call.id.to_string();
    let report = runtime.execute(session, [call]).await;
    let observation = only(&report);
    assert_eq!(
        observation.error_kind(),
        Some("approval_pending"),
        "{observation:?}"
    );
    let Some(request_id) = request_id(observation) else {
        panic!("a pending call names its request: {observation:?}");
    };
    let pending = match runtime.pending_approvals(session).await {
        Ok(pending) => pending,
        Err(error) => panic!("the approval store does not answer: {error}"),
    };
    let Some(pending) = pending
        .into_iter()
        .find(|pending| pending.request_id == request_id)
    else {
        panic!("request {request_id} is not listed");
    };
    assert_eq!(pending.call_id, call_id);
    pending
}

/// The runtime's signed `approval` of `pending`.
///
/// # Panics
///
/// If the runtime cannot sign it (no keys).
pub fn signed<D: Any + Send + Sync>(
    runtime: &Runtime<D>,
    pending: &PendingApproval,
    approval: Approval,
) -> SignedDecision {
    match runtime.sign_decision(pending, approval) {
        Ok(decision) => decision,
        Err(error) => panic!("{error}"),
    }
}
