//! What the model gets back for a turn: every call answered once, in order; nested calls and
//! cancellation; results and errors redacted, cut to their limit, paged, read back from their
//! artifact.
//!
//! One binary for several files. A runtime built from the inventory holds every deps-agnostic
//! `#[tool]` of the binary: those names are unique across these modules, and no module here
//! asserts the whole set of a runtime's tools (see `calls/main.rs`).

pub mod model_sees;
pub mod output_policy;
pub mod properties;
pub mod turn_control;
