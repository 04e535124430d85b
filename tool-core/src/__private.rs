//! Support for the code the `#[tool]` macro generates. Not a public API: names here may
//! change in any release.

use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use ::inventory;
pub use ::schemars;
pub use ::serde;
pub use ::serde_json;
pub use ::std::boxed::Box;
pub use ::std::option::Option;
pub use ::std::result::Result;
pub use ::std::sync::{Arc, OnceLock};
pub use ::std::time::Duration;
pub use ::std::vec::Vec;

pub use crate::args::parse_args;
pub use crate::context::{CallContext, DepsType, FromCallContext};
pub use crate::error::ToolError;
pub use crate::page::{IsPage, Page};
pub use crate::registry::{ToolDef, ToolRegistration};
pub use crate::schema::{input_schema_for, output_schema_for};
pub use crate::spec::{
    OutputPolicy, RiskLevel, SourceLocation, ToolExample, ToolExecution, ToolHints, ToolSpec,
};
pub use crate::tool::{BoxFuture, Tool, ToolArgs, ToolFuture, ToolOutput};

/// A type a tool parameter may have: the model sends it as JSON and the schema describes it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it does not implement `serde::Deserialize`",
    label = "the model's JSON cannot be turned into this type",
    note = "derive `serde::Deserialize` for it, or, if this is a context, mark the parameter `#[ctx]`"
)]
pub trait ParamDeserialize {}
impl<T: DeserializeOwned> ParamDeserialize for T {}

/// A type a tool parameter may have: the schema the model sees describes it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it does not implement `schemars::JsonSchema`",
    label = "the model cannot be told what this parameter looks like",
    note = "derive `schemars::JsonSchema` for it, or, if this is a context, mark the parameter `#[ctx]`"
)]
pub trait ParamSchema {}
impl<T: JsonSchema> ParamSchema for T {}

/// Checks, at compile time and spanned on the parameter's type, that `T` can be a parameter.
pub const fn assert_param<T: ParamDeserialize + ParamSchema>() {}

/// Checks, at compile time and spanned on the parameter's type, that `T` is a context.
pub const fn assert_context<T: FromCallContext>() {}

/// Checks, at compile time and spanned on the return type, that a pagination tool returns a page.
pub const fn assert_page<T: IsPage>() {}

/// The error type of a tool's `Result`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned as a tool error",
    label = "no conversion into `ToolError`",
    note = "implement `From<{Self}> for ToolError` (choose `ToolError::failed` or `ToolError::transient` per case)"
)]
pub trait IntoToolError {
    /// Converts the error.
    fn into_tool_error(self) -> ToolError;
}
impl<E: Into<ToolError>> IntoToolError for E {
    fn into_tool_error(self) -> ToolError {
        self.into()
    }
}

/// What a tool function returns: `T` or `Result<T, E>`, seen as `Result<T, ToolError>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned by a tool",
    note = "a tool returns `T` or `Result<T, E>` where `T: Serialize` and `E: Into<ToolError>`"
)]
pub trait IntoToolResult {
    /// The success type.
    type Ok: ToolReturn;
    /// Converts the result.
    fn into_tool_result(self) -> Result<Self::Ok, ToolError>;
}

impl<T: ToolReturn, E: IntoToolError> IntoToolResult for Result<T, E> {
    type Ok = T;
    fn into_tool_result(self) -> Result<T, ToolError> {
        self.map_err(IntoToolError::into_tool_error)
    }
}

/// The two sides of a `Result` return type, however it is spelled (`io::Result<T>` too).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `Result`",
    note = "a tool returns `T` or `core::result::Result<T, E>`; a type of your own named `Result` counts as neither"
)]
pub trait ResultParts {
    /// The success type.
    type Ok;
    /// The error type.
    type Err;
}

impl<T, E> ResultParts for Result<T, E> {
    type Ok = T;
    type Err = E;
}

/// Checks, spanned on the return type, that the result can be sent to the model.
pub const fn assert_return<T: ToolReturn>() {}

/// Checks, spanned on the return type, that the error converts into a `ToolError`.
pub const fn assert_error<E: IntoToolError>() {}

/// Wraps a plain (non-`Result`) return value.
pub struct Plain<T>(pub T);

impl<T: ToolReturn> IntoToolResult for Plain<T> {
    type Ok = T;
    fn into_tool_result(self) -> Result<T, ToolError> {
        Ok(self.0)
    }
}

/// A value a tool may return: the model receives its JSON serialization.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned by a tool: it does not implement `serde::Serialize`",
    label = "the model receives the result as JSON",
    note = "derive `serde::Serialize` for it"
)]
pub trait ToolReturn: Serialize {}
impl<T: Serialize> ToolReturn for T {}

/// Serializes a tool's result.
#[inline(always)]
pub fn finish<R: IntoToolResult>(result: R) -> Result<ToolOutput, ToolError> {
    let value = result.into_tool_result()?;
    ToolOutput::from_serialize(&value)
}

/// Serializes a pagination tool's result, keeping the page's metadata.
#[inline]
pub fn finish_page<R>(result: R) -> Result<ToolOutput, ToolError>
where
    R: IntoToolResult,
    R::Ok: IsPage,
{
    let value = result.into_tool_result()?;
    let page = value.page_info();
    ToolOutput::from_serialize(&value).map(|output| output.with_page(page))
}

/// Boxes a tool's future. Spanned on the function, so a non-`Send` future is reported there.
#[inline]
pub fn box_future<F>(future: F) -> Result<ToolFuture, ToolError>
where
    F: ::std::future::Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
{
    Ok(Box::pin(future))
}

/// Parses an example call the macro already checked to be JSON.
pub fn example(json: &str) -> Option<ToolExample> {
    serde_json::from_str::<Value>(json)
        .ok()
        .map(|arguments| ToolExample { arguments })
}

/// Asks, without requiring it, whether a result type has a schema (autoref specialization:
/// called as `(&probe).output_schema()`, the impl on the probe itself is chosen when
/// `T: JsonSchema`, the one on `&probe` otherwise).
pub struct OutputSchemaProbe<T>(PhantomData<T>);

impl<T> OutputSchemaProbe<T> {
    /// A probe for `T`.
    pub const fn new() -> Self {
        Self(PhantomData)
    }
}

impl<T> Default for OutputSchemaProbe<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Chosen when the result type has a schema.
pub trait HasOutputSchema {
    /// The result's schema.
    fn output_schema(&self) -> Option<Value>;
}

impl<T: JsonSchema> HasOutputSchema for OutputSchemaProbe<T> {
    fn output_schema(&self) -> Option<Value> {
        Some(output_schema_for::<T>())
    }
}

/// Chosen when the result type has no schema.
pub trait NoOutputSchema {
    /// No schema.
    fn output_schema(&self) -> Option<Value>;
}

impl<T> NoOutputSchema for &OutputSchemaProbe<T> {
    fn output_schema(&self) -> Option<Value> {
        None
    }
}

/// The tool behind a `#[tool]` whose declaration has errors: the build fails anyway, this only
/// keeps the errors from cascading.
pub struct InvalidTool;

impl Tool for InvalidTool {
    fn spec(&self) -> &ToolSpec {
        static SPEC: OnceLock<ToolSpec> = OnceLock::new();
        SPEC.get_or_init(|| {
            ToolSpec::new(
                "invalid",
                "a tool whose declaration has errors",
                crate::schema::empty_object_schema(),
            )
        })
    }

    fn deps_type(&self) -> Option<DepsType> {
        None
    }

    fn prepare(&self, _args: ToolArgs<'_>, _call: &CallContext) -> Result<ToolFuture, ToolError> {
        Err(ToolError::new(
            crate::error::ErrorKind::Internal,
            "this tool's declaration has errors",
        ))
    }
}
