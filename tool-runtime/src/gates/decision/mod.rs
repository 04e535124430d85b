//! Deferred approvals: pending requests, and the signed decisions that resume them.
//!
//! When an [`Approver`](super::approval::Approver) answers [`Approval::Pending`], the runtime
//! keeps a [`PendingApproval`] in an [`ApprovalStore`] and answers the model
//! `approval_pending` with the request's id. Later, perhaps in another process sharing the
//! [`DecisionKeys`] and the store, the application signs a decision and hands it back; the
//! runtime verifies it and consumes the pending request once ([`ApprovalStore::take`]).
//!
//! A decision comes back through a browser, a queue or a client: it is attacker-controlled
//! input (the MCP specification's rule for resumable requests), so it is signed, bound to one
//! request, call, session, principal, tool and argument digest, and short-lived.
//!
//! [`Approval::Pending`]: super::approval::Approval::Pending

mod store;
mod token;

pub use store::{ApprovalStore, MemoryApprovalStore, PendingApproval, SealedArguments};
pub(crate) use token::{DecisionClaims, sign, verify};
pub use token::{DecisionError, DecisionKeys, SignedDecision};
