//! Example tools and programs for the agent-tools workspace.
//!
//! [`support`] holds the support-desk tools of the design and the intents that scope them; the
//! binaries print their catalog (`catalog`), run a scripted support session through the gates
//! (`support_desk`) and verify an audit trail (`verify_audit`).

pub mod support;
