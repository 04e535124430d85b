//! Example tools and programs for the agent-tools workspace.
//!
//! [`support`] holds the support-desk tools of the design; the binaries print their catalog
//! (`catalog`) and run a scripted support session (`support_desk`).

pub mod support;
