//! The gates: scopes, roles, policy and its rules, approvals now and deferred, resumes (in
//! this process and across processes on Redis), the breaker and the audit trail;
//! `approval_stores` runs the same scenarios against every approval store.
//!
//! One binary for several files. Runtimes here name their tools (`.inventory(false)`), except
//! the example desk's policy check (`policy_rules`), whose inventory-built runtime also holds
//! the deps-agnostic `order_status` of `gates`: it asserts only that the runtime builds.

pub mod approval_stores;
pub mod gate_doors;
pub mod gates;
pub mod policy_rules;
pub mod redis_resume;
pub mod resume_doors;
