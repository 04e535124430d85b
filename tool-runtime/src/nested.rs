//! Calls a tool makes through `RunContext::call_tool`: the same lookup, limits, preparation
//! and shells as a call the model makes, one level deeper.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tool_core::{CallContext, Tool, ToolError, ToolFuture, ToolInvoker, ToolOutput};

use crate::call::Arguments;
use crate::limits;
use crate::plan::with_schema_fragment;
use crate::runtime::Shared;
use crate::shells::{self, FirstAttempt, RetryPolicy, contain};

impl<D: Any + Send + Sync> ToolInvoker for Shared<D> {
    fn invoke(
        &self,
        parent: &CallContext,
        tool_name: &str,
        args: Value,
    ) -> tool_core::BoxFuture<'static, Result<ToolOutput, ToolError>> {
        let prepared = self.prepare_nested(parent, tool_name, args);
        Box::pin(async move {
            let (future_parts, policy) = prepared?;
            let NestedCall {
                tool,
                context,
                arguments,
                timeout,
                first,
            } = future_parts;
            let outcome = shells::run(&policy, timeout, FirstAttempt::Fresh(first), |_| {
                prepare_again(tool.as_ref(), &arguments, &context)
            })
            .await;
            outcome.result
        })
    }
}

struct NestedCall {
    tool: Arc<dyn Tool>,
    context: CallContext,
    arguments: Arguments,
    timeout: Option<Duration>,
    first: ToolFuture,
}

impl<D: Any + Send + Sync> Shared<D> {
    /// Plans a call a tool makes through `RunContext::call_tool`: the same lookup, limits and
    /// preparation as a call the model makes, one level deeper.
    fn prepare_nested(
        &self,
        parent: &CallContext,
        tool_name: &str,
        args: Value,
    ) -> Result<(NestedCall, RetryPolicy), ToolError> {
        if parent.depth() >= self.limits.max_call_depth {
            return Err(ToolError::custom(
                "call_depth_exceeded",
                format!(
                    "tool `{}` called `{tool_name}` {} levels deep; the limit is {}",
                    parent.tool_name(),
                    parent.depth() + 1,
                    self.limits.max_call_depth
                ),
            ));
        }
        let Some(tool) = self.registry.get(tool_name) else {
            return Err(self.registry.unknown_tool(tool_name));
        };
        let tool = Arc::clone(tool);
        let arguments = Arguments::Value(args);
        limits::check_arguments(&arguments, &self.limits)?;
        let context = parent.nested(format!("{}/{tool_name}", parent.call_id()), tool_name);
        let first = contain::prepare(|| tool.prepare(arguments.as_tool_args(), &context))
            .map_err(|error| with_schema_fragment(error, tool.spec().input_schema()))?;
        let timeout = tool.spec().timeout().or(self.limits.default_timeout);
        Ok((
            NestedCall {
                tool,
                context,
                arguments,
                timeout,
                first,
            },
            self.retry.clone(),
        ))
    }
}

/// A fresh attempt of a call whose arguments already passed once.
pub(crate) fn prepare_again(
    tool: &dyn Tool,
    arguments: &Arguments,
    context: &CallContext,
) -> ToolFuture {
    match contain::prepare(|| tool.prepare(arguments.as_tool_args(), context)) {
        Ok(future) => future,
        Err(error) => Box::pin(std::future::ready(Err(error))),
    }
}
