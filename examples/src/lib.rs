//! Support-desk example tools.
