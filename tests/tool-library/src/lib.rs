//! A library of tools that depends on `tool-core` alone, as a crate of tools shared by several
//! agents would.

use tool_core::tool;

/// Converts a temperature from Celsius to Fahrenheit.
#[tool(read_only)]
pub fn celsius_to_fahrenheit(
    /// Degrees Celsius.
    celsius: f64,
) -> f64 {
    celsius * 9.0 / 5.0 + 32.0
}
