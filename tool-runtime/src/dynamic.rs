//! Tools built at run time, from a raw JSON Schema and an async closure: an application wraps
//! remote or generated tools with [`DynamicTool::builder`] and adds them with
//! [`RuntimeBuilder::dynamic_tool`](crate::RuntimeBuilder::dynamic_tool); a definition that
//! cannot be a tool is a [`DynamicToolError`].
//!
//! Arguments are validated against the canonical form of the
//! schema by a JSON Schema validator, and a wrong call is answered as a `#[tool]`'s is: every
//! wrong field named by its dotted path, with its schema, without echoing the value sent.

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use tool_core::schema;
use tool_core::{
    CallContext, DepsType, OutputPolicy, RiskLevel, RunContext, SourceLocation, Tool, ToolArgs,
    ToolError, ToolExecution, ToolFuture, ToolHints, ToolOutput, ToolSpec, is_portable_tool_name,
};

use crate::validate;

type Handler = dyn Fn(Value, RunContext) -> ToolFuture + Send + Sync;

/// A dynamic tool could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DynamicToolError {
    /// The name is not accepted by every provider.
    #[error(
        "tool name `{0}` is not accepted by every provider: use letters, digits, `_` and `-`, start with a letter or `_`, at most 64 characters"
    )]
    InvalidName(String),
    /// The schema is not a valid JSON Schema.
    #[error("the schema of tool `{name}` is not a valid JSON Schema: {reason}")]
    InvalidSchema {
        /// The tool.
        name: String,
        /// What the validator said.
        reason: String,
    },
    /// The schema's root is not an object schema.
    #[error("the schema of tool `{0}` must describe an object (`\"type\": \"object\"`)")]
    NotAnObject(String),
    /// No handler was given.
    #[error("tool `{0}` has no handler")]
    NoHandler(String),
}

/// A tool defined at run time.
pub struct DynamicTool {
    spec: ToolSpec,
    validator: jsonschema::Validator,
    handler: Arc<Handler>,
}

impl std::fmt::Debug for DynamicTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicTool")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

impl DynamicTool {
    /// Starts a dynamic tool with its name, description and the JSON Schema of its arguments.
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_runtime::dynamic::DynamicTool;
    ///
    /// let weather = DynamicTool::builder(
    ///     "get_weather",
    ///     "Current weather of a city.",
    ///     json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    /// )
    /// .read_only()
    /// .handler(|args, _ctx| async move { Ok(json!({"city": args["city"], "sky": "clear"})) })
    /// .build();
    /// assert!(weather.is_ok());
    /// ```
    #[track_caller]
    pub fn builder(
        name: impl Into<Cow<'static, str>>,
        description: impl Into<Cow<'static, str>>,
        schema: Value,
    ) -> DynamicToolBuilder {
        DynamicToolBuilder {
            name: name.into(),
            description: description.into(),
            schema,
            location: SourceLocation::caller(),
            execution: ToolExecution::UNKNOWN,
            hints: ToolHints::default(),
            risk: None,
            resources: Vec::new(),
            timeout: None,
            max_output_chars: None,
            version: None,
            title: None,
            handler: None,
        }
    }
}

impl Tool for DynamicTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn deps_type(&self) -> Option<DepsType> {
        None
    }

    fn prepare(&self, args: ToolArgs<'_>, call: &CallContext) -> Result<ToolFuture, ToolError> {
        // Not JSON, or not an object: the same answers as a `#[tool]`'s.
        let text = match args {
            ToolArgs::Json(text) => Some(text),
            _ => None,
        };
        let mut arguments = match args {
            ToolArgs::Value(Value::Object(arguments)) => Value::Object(arguments),
            ToolArgs::Parsed(Value::Object(arguments)) => Value::Object(arguments.clone()),
            args => Value::Object(tool_core::parse_args::<Map<String, Value>>(args)?),
        };
        let schema = self.spec.input_schema();
        // Integers as written first: the validator checks the numbers the handler gets.
        validate::integers_where_declared(schema, &mut arguments, text)?;
        validate::validate(&self.validator, schema, &arguments)?;
        Ok((self.handler)(arguments, RunContext::untyped(call)))
    }
}

/// Builds a [`DynamicTool`].
#[must_use]
pub struct DynamicToolBuilder {
    name: Cow<'static, str>,
    description: Cow<'static, str>,
    schema: Value,
    location: SourceLocation,
    execution: ToolExecution,
    hints: ToolHints,
    risk: Option<RiskLevel>,
    resources: Vec<Cow<'static, str>>,
    timeout: Option<Duration>,
    max_output_chars: Option<usize>,
    version: Option<Cow<'static, str>>,
    title: Option<Cow<'static, str>>,
    handler: Option<Arc<Handler>>,
}

impl DynamicToolBuilder {
    /// Marks the tool read-only (parallel safe).
    pub fn read_only(mut self) -> Self {
        self.execution = ToolExecution::READ_ONLY;
        self.hints.idempotent = true;
        self
    }

    /// Sets the execution semantics.
    pub fn execution(mut self, execution: ToolExecution) -> Self {
        self.execution = execution;
        self
    }

    /// Sets the behaviour hints.
    pub fn hints(mut self, hints: ToolHints) -> Self {
        self.hints = hints;
        self
    }

    /// Sets the risk level (default: `read` for read-only tools, `write` otherwise).
    pub fn risk(mut self, risk: RiskLevel) -> Self {
        self.risk = Some(risk);
        self
    }

    /// Declares a resource the tool touches.
    pub fn resource(mut self, resource: impl Into<Cow<'static, str>>) -> Self {
        self.resources.push(resource.into());
        self
    }

    /// Sets the tool's own timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the most output characters the model receives.
    pub fn max_output_chars(mut self, max: usize) -> Self {
        self.max_output_chars = Some(max);
        self
    }

    /// Sets the version.
    pub fn version(mut self, version: impl Into<Cow<'static, str>>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// Sets the title.
    pub fn title(mut self, title: impl Into<Cow<'static, str>>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets what runs: the validated arguments and an untyped context in, a JSON value out.
    pub fn handler<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Value, RunContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.handler = Some(Arc::new(move |arguments, ctx| {
            let future = handler(arguments, ctx);
            Box::pin(async move {
                let value = future.await?;
                ToolOutput::from_serialize(&value)
            })
        }));
        self
    }

    /// Checks the name and the schema and builds the tool.
    pub fn build(self) -> Result<DynamicTool, DynamicToolError> {
        let name = self.name.to_string();
        if !is_portable_tool_name(&name) {
            return Err(DynamicToolError::InvalidName(name));
        }
        let mut input_schema = self.schema;
        if !input_schema.is_object() || input_schema.get("type").is_some_and(|ty| ty != "object") {
            return Err(DynamicToolError::NotAnObject(name));
        }
        schema::canonicalize(&mut input_schema);
        schema::close_root(&mut input_schema);
        let validator =
            validate::compile(&input_schema).map_err(|reason| DynamicToolError::InvalidSchema {
                name: name.clone(),
                reason,
            })?;
        let handler = self
            .handler
            .ok_or_else(|| DynamicToolError::NoHandler(name.clone()))?;
        let risk = self.risk.unwrap_or(if self.execution.read_only {
            RiskLevel::Read
        } else {
            RiskLevel::Write
        });
        let mut spec = ToolSpec::new(self.name, self.description, input_schema)
            .with_execution(self.execution)
            .with_hints(self.hints)
            .with_risk(risk)
            .with_resources(self.resources)
            .with_timeout(self.timeout)
            .with_output(OutputPolicy {
                max_chars: self.max_output_chars,
            })
            .with_location(self.location);
        if let Some(version) = self.version {
            spec = spec.with_version(version);
        }
        if let Some(title) = self.title {
            spec = spec.with_title(title);
        }
        validate::checked_by_the_tool(&spec);
        Ok(DynamicTool {
            spec,
            validator,
            handler,
        })
    }
}
