//! A call from its arguments to its answer: argument checks (typed, dynamic, integral numbers,
//! the schema zoo), context injection, the scheduler, timeouts and retries, the one path every
//! call takes, and the example desk's transcript.
//!
//! One binary for several files, so the suite links once instead of once per file. Every
//! module's `#[tool]`s are linked into it: a runtime built from the inventory (without
//! `.inventory(false)`) holds its own deps' tools and every deps-agnostic `#[tool]` of the
//! binary. So deps-agnostic tool names are unique across these modules (and unlike the
//! inventory-built runtimes' own tool names), and no module here asserts the whole set of a
//! runtime's tools; a file that does is a binary of its own (see its first lines).

pub mod context_injection;
pub mod dynamic_tools;
pub mod integral_numbers;
pub mod one_path;
pub mod scheduling;
pub mod schema_zoo;
pub mod strict_lints;
pub mod support_session;
pub mod timeouts_retries;
pub mod validation;
