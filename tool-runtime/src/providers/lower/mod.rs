//! Lowering a tool's canonical input schema for one target.

use tool_core::ToolSpec;

use super::{LoweredTool, LoweringError, Target};

/// `spec`'s input schema (and description) as `target` accepts it.
pub fn lower(spec: &ToolSpec, target: Target) -> Result<LoweredTool, LoweringError> {
    let _ = (spec, target);
    unimplemented!("the lowering of each target")
}
