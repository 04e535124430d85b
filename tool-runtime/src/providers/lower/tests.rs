//! Unit tests of each target's lowering.
