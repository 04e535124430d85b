//! Support for the code the `#[tool]` macro generates. Not a public API: names here may
//! change in any release.

use std::borrow::Cow;
use std::marker::PhantomData;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

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

pub use crate::args::params::{
    FieldError, FieldInput, ParamSlots, ParamTable, fill_missing, fill_with, missing_param,
    params_incomplete, parse_params, read_param, read_value,
};
pub use crate::args::parse_args;
use crate::context::RunContext;
pub use crate::context::{CallContext, DepsType, FromCallContext};
use crate::error::ErrorKind;
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
pub trait ParamDeserialize: DeserializeOwned {}
#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned> ParamDeserialize for T {}

/// A type a tool parameter may have: the schema the model sees describes it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it does not implement `schemars::JsonSchema`",
    label = "the model cannot be told what this parameter looks like",
    note = "derive `schemars::JsonSchema` for it, or, if this is a context, mark the parameter `#[ctx]`"
)]
pub trait ParamSchema: JsonSchema {}
#[diagnostic::do_not_recommend]
impl<T: JsonSchema> ParamSchema for T {}

/// Checks, at compile time and spanned on the parameter's type, that `T` can be a parameter.
pub const fn assert_param<T: ParamDeserialize + ParamSchema>() {}

/// Checks, at compile time and spanned on the parameter's type, that `T` is a context.
pub const fn assert_context<'a, T: ContextParam<'a>>() {}

/// The error type of a tool's `Result`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's error type: `ToolError` has no `From<{Self}>`",
    label = "no conversion into `ToolError`",
    note = "implement `From<{Self}> for ToolError` (choose `ToolError::failed` or `ToolError::transient` per case), or return `Result<T, ToolError>`"
)]
pub trait IntoToolError {
    /// Converts the error.
    fn into_tool_error(self) -> ToolError;
}

#[diagnostic::do_not_recommend]
impl<E: Into<ToolError>> IntoToolError for E {
    fn into_tool_error(self) -> ToolError {
        self.into()
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

/// What a tool function returns, seen as `Result<Ok, Err>`. The macro implements it on a type
/// of its own, each associated type spanned where the function names it, so a result or error
/// type that does not fit is one error, there; the code that uses them is generic over this
/// trait and adds none.
pub trait Returns {
    /// The success type (`T` of `Result<T, E>`, or the plain return type).
    type Ok: ToolReturn;
    /// The error type (`Infallible` for a plain return type).
    type Err: IntoToolError;
}

/// The returns of a `pagination` tool: the success type is a page.
pub trait PageReturns: Returns<Ok: IsPage> {}

/// A value a tool may return: the model receives its JSON serialization.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned by a tool: it does not implement `serde::Serialize`",
    label = "the model receives the result as JSON",
    note = "derive `serde::Serialize` for it"
)]
pub trait ToolReturn {
    /// The value as the tool's output.
    fn to_output(&self) -> Result<ToolOutput, ToolError>;
}

#[diagnostic::do_not_recommend]
impl<T: Serialize> ToolReturn for T {
    #[inline(always)]
    fn to_output(&self) -> Result<ToolOutput, ToolError> {
        ToolOutput::from_serialize(self)
    }
}

pub use ::core::convert::Infallible;

/// Serializes a tool's result.
#[inline(always)]
pub fn finish<R: Returns>(result: Result<R::Ok, R::Err>) -> Result<ToolOutput, ToolError> {
    match result {
        Ok(value) => value.to_output(),
        Err(error) => Err(error.into_tool_error()),
    }
}

/// Serializes a pagination tool's result, keeping the page's metadata.
#[inline]
pub fn finish_page<R: PageReturns>(result: Result<R::Ok, R::Err>) -> Result<ToolOutput, ToolError> {
    let value = result.map_err(IntoToolError::into_tool_error)?;
    let page = value.page_info();
    value.to_output().map(|output| output.with_page(page))
}

/// A parameter the runtime injects: a context in any form `#[tool]` accepts, also behind a
/// type alias the macro cannot see through. Built in two steps so that a borrowed form
/// (`&RunContext<D>`) borrows from storage that lives in the tool's future: `storage` when
/// the call is prepared, `view` once when it runs.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool context",
    label = "not a `RunContext`",
    note = "`#[ctx]` marks a parameter whose type is `RunContext<D>`, `&RunContext<D>`, `&mut RunContext<D>`, `Arc<RunContext<D>>`, `Box<RunContext<D>>` or `Option<...>` of one of these, or a type alias of one of these; remove `#[ctx]` to make this a model-visible parameter"
)]
pub trait ContextParam<'a>: Sized {
    /// What the future keeps: the context itself, or what a borrowed form borrows.
    type Storage: Send + 'static;

    /// The deps type the context needs, or `None` when it works with any.
    fn deps_type() -> Option<DepsType>;

    /// Builds the storage for one call.
    fn storage(call: CallContext) -> Result<Self::Storage, ToolError>;

    /// The parameter, from its storage. Called once per storage.
    fn view(storage: &'a mut Self::Storage) -> Self;
}

/// A context built by value: `RunContext<D>`, or `Arc`, `Box` or `Option` of one. What a
/// borrowed form (`&T`, `&mut T`) borrows.
pub trait OwnedContext: Sized + Send + 'static {
    /// The deps type the context needs, or `None` when it works with any.
    fn deps_type() -> Option<DepsType>;

    /// Builds the context for one call.
    fn build(call: CallContext) -> Result<Self, ToolError>;
}

impl<D: ?Sized + Send + Sync + 'static> OwnedContext for RunContext<D>
where
    RunContext<D>: FromCallContext,
{
    fn deps_type() -> Option<DepsType> {
        <Self as FromCallContext>::deps_type()
    }

    fn build(call: CallContext) -> Result<Self, ToolError> {
        Self::from_call_context(call)
    }
}

impl<T: OwnedContext + Sync> OwnedContext for Arc<T> {
    fn deps_type() -> Option<DepsType> {
        T::deps_type()
    }

    fn build(call: CallContext) -> Result<Self, ToolError> {
        T::build(call).map(Arc::new)
    }
}

impl<T: OwnedContext> OwnedContext for Box<T> {
    fn deps_type() -> Option<DepsType> {
        T::deps_type()
    }

    fn build(call: CallContext) -> Result<Self, ToolError> {
        T::build(call).map(Box::new)
    }
}

impl<T: OwnedContext> OwnedContext for Option<T> {
    fn deps_type() -> Option<DepsType> {
        T::deps_type()
    }

    fn build(call: CallContext) -> Result<Self, ToolError> {
        T::build(call).map(Some)
    }
}

/// Takes an owned context out of its storage, which holds it until the one `view`.
fn take<T>(storage: &mut Option<T>) -> T {
    match storage.take() {
        Some(context) => context,
        None => unreachable!("a context parameter's storage is viewed once"),
    }
}

/// The owned forms: the storage holds the context until the function is called with it.
macro_rules! owned_context_param {
    ($(impl<$($param:ident),*> for $ty:ty where [$($bound:tt)*];)*) => {$(
        impl<'a, $($param),*> ContextParam<'a> for $ty
        where
            $($bound)*
        {
            type Storage = Option<Self>;

            fn deps_type() -> Option<DepsType> {
                <Self as OwnedContext>::deps_type()
            }

            fn storage(call: CallContext) -> Result<Option<Self>, ToolError> {
                <Self as OwnedContext>::build(call).map(Some)
            }

            fn view(storage: &'a mut Option<Self>) -> Self {
                take(storage)
            }
        }
    )*};
}

owned_context_param! {
    impl<D> for RunContext<D> where [D: ?Sized + Send + Sync + 'static, RunContext<D>: FromCallContext];
    impl<T> for Arc<T> where [T: OwnedContext + Sync];
    impl<T> for Box<T> where [T: OwnedContext];
}

impl<'a, T: ContextParam<'a>> ContextParam<'a> for Option<T> {
    type Storage = T::Storage;

    fn deps_type() -> Option<DepsType> {
        T::deps_type()
    }

    fn storage(call: CallContext) -> Result<T::Storage, ToolError> {
        T::storage(call)
    }

    fn view(storage: &'a mut T::Storage) -> Self {
        Some(T::view(storage))
    }
}

impl<'a, T: OwnedContext + Sync> ContextParam<'a> for &'a T {
    type Storage = T;

    fn deps_type() -> Option<DepsType> {
        T::deps_type()
    }

    fn storage(call: CallContext) -> Result<T, ToolError> {
        T::build(call)
    }

    fn view(storage: &'a mut T) -> Self {
        storage
    }
}

impl<'a, T: OwnedContext> ContextParam<'a> for &'a mut T {
    type Storage = T;

    fn deps_type() -> Option<DepsType> {
        T::deps_type()
    }

    fn storage(call: CallContext) -> Result<T, ToolError> {
        T::build(call)
    }

    fn view(storage: &'a mut T) -> Self {
        storage
    }
}

/// Runs a `#[tool(blocking)]` function's body on tokio's blocking pool and waits for it.
///
/// Dropping the returned future (a timeout, a cancelled turn) stops the wait, not the body:
/// the thread finishes on its own. A panic in the body resumes here, as a panic of the tool's
/// future, so the runtime reports the call as `panicked`.
pub async fn run_blocking<F, R>(body: F) -> Result<R, ToolError>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let Ok(runtime) = ::tokio::runtime::Handle::try_current() else {
        return Err(ToolError::new(
            ErrorKind::Internal,
            "a `blocking` tool runs on tokio's blocking pool, but its call was not polled inside a tokio runtime",
        ));
    };
    match runtime.spawn_blocking(body).await {
        Ok(value) => Ok(value),
        Err(error) => match error.try_into_panic() {
            Ok(payload) => ::std::panic::resume_unwind(payload),
            Err(_) => Err(ToolError::new(
                ErrorKind::Cancelled,
                "tokio's blocking pool shut down before the tool finished",
            )),
        },
    }
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

/// What a `#[tool]` declares, written out by the macro as a constant. The spec is built
/// from it (with the schemas) the first time it is asked for, by code shared by every tool.
pub struct ToolDecl {
    /// The name the model calls the tool by.
    pub name: &'static str,
    /// The description.
    pub description: &'static str,
    /// The title, when declared.
    pub title: Option<&'static str>,
    /// The version, when declared.
    pub version: Option<&'static str>,
    /// The execution semantics.
    pub execution: ToolExecution,
    /// The behaviour hints.
    pub hints: ToolHints,
    /// The risk level.
    pub risk: RiskLevel,
    /// The resources the tool touches.
    pub resources: &'static [&'static str],
    /// The roles a principal needs, all of them, to see and call the tool.
    pub roles: &'static [&'static str],
    /// The tool's own choice about the runtime's idempotency layer (`Some(true)` in,
    /// `Some(false)` out), when declared; `None` leaves the default rule.
    pub idempotency: Option<bool>,
    /// The tool's own timeout, when declared.
    pub timeout: Option<Duration>,
    /// The output policy.
    pub output: OutputPolicy,
    /// Example calls, as JSON the macro checked.
    pub examples: &'static [&'static str],
    /// Where the function is.
    pub location: SourceLocation,
}

impl ToolDecl {
    /// What the macro writes only when declared: no title, version, resources, roles,
    /// idempotency choice, timeout, output limit or examples. The base of each declaration
    /// (`..ToolDecl::UNSET`); the name, description, execution, hints, risk and location are
    /// always written.
    pub const UNSET: Self = Self {
        name: "",
        description: "",
        title: None,
        version: None,
        execution: ToolExecution::UNKNOWN,
        hints: ToolHints {
            idempotent: false,
            destructive: false,
            open_world: false,
        },
        risk: RiskLevel::Write,
        resources: &[],
        roles: &[],
        idempotency: None,
        timeout: None,
        output: OutputPolicy { max_chars: None },
        examples: &[],
        location: SourceLocation { file: "", line: 0 },
    };
}

/// A `#[tool]` function as a [`Tool`]: its declaration and the few functions the macro
/// generates for it (the schemas, the context's deps type, the call). One impl of [`Tool`]
/// serves every `#[tool]`; each is a `static` of this type.
pub struct FnTool {
    decl: ToolDecl,
    input_schema: fn() -> Value,
    output_schema: fn() -> Option<Value>,
    deps_type: fn() -> Option<DepsType>,
    takes_context: bool,
    prepare: fn(ToolArgs<'_>, &CallContext) -> Result<ToolFuture, ToolError>,
    spec: OnceLock<ToolSpec>,
}

impl FnTool {
    /// The tool `decl` declares, whose calls `prepare` prepares.
    pub const fn new(
        decl: ToolDecl,
        input_schema: fn() -> Value,
        output_schema: fn() -> Option<Value>,
        deps_type: fn() -> Option<DepsType>,
        takes_context: bool,
        prepare: fn(ToolArgs<'_>, &CallContext) -> Result<ToolFuture, ToolError>,
    ) -> Self {
        Self {
            decl,
            input_schema,
            output_schema,
            deps_type,
            takes_context,
            prepare,
            spec: OnceLock::new(),
        }
    }

    #[cold]
    fn build_spec(&self) -> ToolSpec {
        let decl = &self.decl;
        let mut spec = ToolSpec::new(decl.name, decl.description, (self.input_schema)())
            .with_output_schema((self.output_schema)())
            .with_execution(decl.execution)
            .with_hints(decl.hints)
            .with_risk(decl.risk)
            .with_idempotency(decl.idempotency)
            .with_timeout(decl.timeout)
            .with_output(decl.output)
            .with_location(decl.location);
        if let Some(title) = decl.title {
            spec = spec.with_title(title);
        }
        if let Some(version) = decl.version {
            spec = spec.with_version(version);
        }
        if !decl.resources.is_empty() {
            spec = spec.with_resources(decl.resources.iter().copied());
        }
        if !decl.roles.is_empty() {
            spec = spec.with_roles(decl.roles.iter().copied());
        }
        spec.with_examples(decl.examples.iter().copied().filter_map(example))
    }
}

impl Tool for FnTool {
    fn spec(&self) -> &ToolSpec {
        self.spec.get_or_init(|| self.build_spec())
    }

    fn deps_type(&self) -> Option<DepsType> {
        (self.deps_type)()
    }

    fn takes_context(&self) -> bool {
        self.takes_context
    }

    fn prepare(&self, args: ToolArgs<'_>, call: &CallContext) -> Result<ToolFuture, ToolError> {
        (self.prepare)(args, call)
    }
}

/// The deps type of a tool without a context: any deps serve it.
pub fn no_deps_type() -> Option<DepsType> {
    None
}

/// The output schema of a tool that returns nothing.
pub fn no_output_schema() -> Option<Value> {
    None
}

/// [`input_schema_for`] of the type whose `JsonSchema` functions these are: the same schema,
/// built by code compiled once for every `#[tool]` instead of once per parameters type. For a
/// type nothing refers back to, as a `#[tool]`'s parameters struct (private to its expansion):
/// a recursive type's reference to itself is `#` in `input_schema_for`'s schema, a definition
/// here.
pub fn input_schema_from(
    schema_name: fn() -> Cow<'static, str>,
    json_schema: fn(&mut SchemaGenerator) -> Schema,
) -> Value {
    let mut generator = crate::schema::settings().into_generator();
    // What `SchemaGenerator::into_root_schema_for` does (the settings have no meta schema
    // and no transforms); a parameters struct is private, so nothing refers back to it.
    let mut schema = json_schema(&mut generator);
    let object = schema.ensure_object();
    object
        .entry("title")
        .or_insert_with(|| schema_name().into());
    let mut definitions = generator.take_definitions(false);
    if !definitions.is_empty()
        && let Value::Object(target) = object
            .entry("$defs")
            .or_insert_with(|| Value::Object(Map::new()))
    {
        target.append(&mut definitions);
    }
    let mut schema = schema.to_value();
    crate::schema::canonicalize(&mut schema);
    crate::schema::close_root(&mut schema);
    schema
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
            ErrorKind::Internal,
            "this tool's declaration has errors",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parameters with definitions (`$defs`), a default, a rename and a title.
    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code, reason = "only its schema is read")]
    struct Params {
        /// The filter.
        filter: Option<Filter>,
        /// The shapes.
        shapes: Vec<Shape>,
        #[serde(rename = "q", default)]
        query: String,
        /// Counted.
        ///
        /// From 1.
        count: u32,
    }

    /// A filter.
    #[derive(JsonSchema)]
    #[allow(dead_code, reason = "only its schema is read")]
    struct Filter {
        status: String,
        next: Option<Box<Filter>>,
    }

    #[derive(JsonSchema)]
    #[serde(tag = "type")]
    #[allow(dead_code, reason = "only its schema is read")]
    enum Shape {
        Rect { width: u32 },
        Circle { radius: u32 },
    }

    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Nothing {}

    #[test]
    fn the_schema_from_a_types_functions_is_the_types_schema() {
        fn same<T: JsonSchema>() {
            let from = input_schema_from(T::schema_name, T::json_schema);
            let generic = input_schema_for::<T>();
            // The same text: the same keys in the same order.
            assert_eq!(from.to_string(), generic.to_string());
        }
        same::<Params>();
        same::<Shape>();
        same::<Nothing>();
        same::<String>();
    }
}
