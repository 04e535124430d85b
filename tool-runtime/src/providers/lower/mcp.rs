//! MCP's `inputSchema`: the internal form as it is (JSON Schema 2020-12, an object root).

use serde_json::Value;

use super::Ctx;
use super::Failure;

pub(super) fn lower(mut schema: Value, ctx: &mut Ctx<'_>) -> Result<Value, Failure> {
    super::json_root(ctx, &mut schema)?;
    Ok(schema)
}
