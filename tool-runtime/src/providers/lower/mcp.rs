//! MCP's `inputSchema`: the internal form as it is (JSON Schema 2020-12, an object root),
//! naming its dialect (`$schema`), as a client that reads schemas of several dialects needs.

use serde_json::{Map, Value};

use super::Ctx;
use super::Failure;

/// The dialect every lowered MCP schema declares.
const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

pub(super) fn lower(mut schema: Value, ctx: &mut Ctx<'_>) -> Result<Value, Failure> {
    super::json_root(ctx, &mut schema)?;
    Ok(declared(schema))
}

/// `schema` with its dialect named first.
pub(super) fn declared(schema: Value) -> Value {
    let Value::Object(root) = schema else {
        return schema;
    };
    let mut declared = Map::with_capacity(root.len() + 1);
    declared.insert("$schema".to_owned(), Value::String(DIALECT.to_owned()));
    declared.extend(root.into_iter().filter(|(key, _)| key != "$schema"));
    Value::Object(declared)
}
