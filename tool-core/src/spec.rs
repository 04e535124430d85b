//! [`ToolSpec`]: one declaration, read by the model, the scheduler and the policy layer.

use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

/// Whether `name` is accepted as a tool name by every provider:
/// `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`.
pub fn is_portable_tool_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// How a tool behaves when it runs: what the scheduler decides parallelism from.
///
/// A tool that declares nothing is [`ToolExecution::UNKNOWN`]: treated as stateful, it never
/// runs concurrently with anything. Only a `read_only` tool that is neither `exclusive`,
/// `mutates_workspace` nor `stateful_action` is [parallel safe](ToolExecution::parallel_safe).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct ToolExecution {
    /// Reads only; changes nothing anywhere.
    pub read_only: bool,
    /// Changes the shared workspace (files, records) that other calls may read.
    pub mutates_workspace: bool,
    /// Must run alone, even among reads (holds a lock, drives a single device).
    pub exclusive: bool,
    /// Changes state outside the workspace, or its effect is unknown.
    pub stateful_action: bool,
    /// Returns one page of a larger result; takes a cursor.
    pub pagination: bool,
}

impl ToolExecution {
    /// Nothing declared: treated as stateful and run serially.
    pub const UNKNOWN: Self = Self {
        read_only: false,
        mutates_workspace: false,
        exclusive: false,
        stateful_action: true,
        pagination: false,
    };

    /// A plain read.
    pub const READ_ONLY: Self = Self {
        read_only: true,
        mutates_workspace: false,
        exclusive: false,
        stateful_action: false,
        pagination: false,
    };

    /// Whether calls of this tool may run concurrently with other parallel-safe calls.
    pub const fn parallel_safe(&self) -> bool {
        self.read_only && !self.exclusive && !self.mutates_workspace && !self.stateful_action
    }
}

impl Default for ToolExecution {
    fn default() -> Self {
        Self::UNKNOWN
    }
}

/// The MCP-style behaviour hints a client may show or act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub struct ToolHints {
    /// Calling it twice with the same arguments has the same effect as once.
    pub idempotent: bool,
    /// It may destroy or overwrite data.
    pub destructive: bool,
    /// It reaches outside the system (the web, third-party services).
    pub open_world: bool,
}

/// How much harm a call can do: what the policy layer decides approvals from.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum RiskLevel {
    /// Reads only.
    Read,
    /// Changes something that can be changed back.
    Write,
    /// Destroys or overwrites something.
    Destructive,
}

impl RiskLevel {
    /// The stable string form: `read`, `write` or `destructive`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            RiskLevel::Read => "read",
            RiskLevel::Write => "write",
            RiskLevel::Destructive => "destructive",
        }
    }
}

impl fmt::Display for RiskLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a tool was defined, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct SourceLocation {
    /// The source file.
    pub file: &'static str,
    /// The line of the definition.
    pub line: u32,
}

impl SourceLocation {
    /// The location of the caller (for tools built at run time).
    #[track_caller]
    pub fn caller() -> Self {
        let location = std::panic::Location::caller();
        Self {
            file: location.file(),
            line: location.line(),
        }
    }
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// What the model may see of a tool's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub struct OutputPolicy {
    /// The most characters of output the model receives; longer output is cut with a notice.
    /// `None` leaves the runtime's default.
    pub max_chars: Option<usize>,
}

/// An example call shown to the model or a client.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolExample {
    /// The arguments, as the model would send them.
    pub arguments: Value,
}

/// Everything there is to know about a tool, except how to run it.
#[derive(Debug, Clone, Serialize)]
pub struct ToolSpec {
    name: Cow<'static, str>,
    title: Option<Cow<'static, str>>,
    description: Cow<'static, str>,
    version: Option<Cow<'static, str>>,
    input_schema: Value,
    output_schema: Option<Value>,
    execution: ToolExecution,
    hints: ToolHints,
    risk: RiskLevel,
    resources: Vec<Cow<'static, str>>,
    roles: Vec<Cow<'static, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    idempotency: Option<bool>,
    #[serde(serialize_with = "serialize_timeout")]
    timeout: Option<Duration>,
    output: OutputPolicy,
    examples: Vec<ToolExample>,
    location: Option<SourceLocation>,
    #[serde(skip)]
    derived: Derived,
}

/// What a runtime derives from a spec once and keeps with it (how it checks a call's
/// arguments against the input schema; `None` when there is nothing to keep). Not part of the
/// spec's value: a clone starts empty.
#[derive(Default)]
struct Derived(OnceLock<Option<Box<dyn Any + Send + Sync>>>);

impl Clone for Derived {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl fmt::Debug for Derived {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("..")
    }
}

fn serialize_timeout<S: serde::Serializer>(
    timeout: &Option<Duration>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match timeout {
        Some(timeout) => serializer.serialize_some(&(timeout.as_millis() as u64)),
        None => serializer.serialize_none(),
    }
}

impl ToolSpec {
    /// A spec with the given name, description and input schema; execution
    /// [`ToolExecution::UNKNOWN`], risk `write`, no limits of its own.
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        description: impl Into<Cow<'static, str>>,
        input_schema: Value,
    ) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: description.into(),
            version: None,
            input_schema,
            output_schema: None,
            execution: ToolExecution::UNKNOWN,
            hints: ToolHints::default(),
            risk: RiskLevel::Write,
            resources: Vec::new(),
            roles: Vec::new(),
            idempotency: None,
            timeout: None,
            output: OutputPolicy::default(),
            examples: Vec::new(),
            location: None,
            derived: Derived::default(),
        }
    }

    /// Sets a human-readable title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<Cow<'static, str>>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the version, for traces and caches that must not mix versions.
    #[must_use]
    pub fn with_version(mut self, version: impl Into<Cow<'static, str>>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// Sets the output schema.
    #[must_use]
    pub fn with_output_schema(mut self, schema: Option<Value>) -> Self {
        self.output_schema = schema;
        self
    }

    /// Sets the execution semantics.
    #[must_use]
    pub fn with_execution(mut self, execution: ToolExecution) -> Self {
        self.execution = execution;
        self
    }

    /// Sets the behaviour hints.
    #[must_use]
    pub fn with_hints(mut self, hints: ToolHints) -> Self {
        self.hints = hints;
        self
    }

    /// Sets the risk level.
    #[must_use]
    pub fn with_risk(mut self, risk: RiskLevel) -> Self {
        self.risk = risk;
        self
    }

    /// Sets the resources the tool touches (two calls sharing one never run at once).
    #[must_use]
    pub fn with_resources<R: Into<Cow<'static, str>>>(
        mut self,
        resources: impl IntoIterator<Item = R>,
    ) -> Self {
        self.resources = resources.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the roles a principal needs to see and call the tool: all of them (a principal
    /// that lacks one is answered `not_permitted` and does not find the tool in its catalog).
    /// Empty, the default, requires none.
    #[must_use]
    pub fn with_roles<R: Into<Cow<'static, str>>>(
        mut self,
        roles: impl IntoIterator<Item = R>,
    ) -> Self {
        self.roles = roles.into_iter().map(Into::into).collect();
        self
    }

    /// Sets whether the runtime's idempotency layer (exactly once for writes) applies to the
    /// tool: `Some(true)` opts in (a read that starts a costly job, an `idempotent` tool whose
    /// backend should still see each call once), `Some(false)` opts out (a write that is safe
    /// to repeat, or deduplicates downstream itself). `None`, the default, leaves the rule:
    /// the layer applies to a tool that is neither read-only nor idempotent.
    #[must_use]
    pub fn with_idempotency(mut self, idempotency: Option<bool>) -> Self {
        self.idempotency = idempotency;
        self
    }

    /// Sets the tool's own timeout.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the output policy.
    #[must_use]
    pub fn with_output(mut self, output: OutputPolicy) -> Self {
        self.output = output;
        self
    }

    /// Adds example calls.
    #[must_use]
    pub fn with_examples(mut self, examples: impl IntoIterator<Item = ToolExample>) -> Self {
        self.examples.extend(examples);
        self
    }

    /// Records where the tool was defined.
    #[must_use]
    pub fn with_location(mut self, location: SourceLocation) -> Self {
        self.location = Some(location);
        self
    }

    /// The name the model calls the tool by.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The human-readable title, when set.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// What the tool does and when to use it: all the model has to choose by.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The version, when set.
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// The canonical JSON Schema of the model-visible parameters.
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// The JSON Schema of the result, when the result type provides one.
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }

    /// The execution semantics.
    pub fn execution(&self) -> ToolExecution {
        self.execution
    }

    /// The behaviour hints.
    pub fn hints(&self) -> ToolHints {
        self.hints
    }

    /// The risk level.
    pub fn risk(&self) -> RiskLevel {
        self.risk
    }

    /// The resources the tool touches.
    pub fn resources(&self) -> impl ExactSizeIterator<Item = &str> {
        self.resources.iter().map(|resource| resource.as_ref())
    }

    /// The resources the tool touches, as stored.
    pub fn resource_list(&self) -> &[Cow<'static, str>] {
        &self.resources
    }

    /// The roles a principal needs, every one of them, to see and call the tool; none when
    /// empty.
    pub fn roles(&self) -> impl ExactSizeIterator<Item = &str> {
        self.roles.iter().map(|role| role.as_ref())
    }

    /// The roles a principal needs, as stored.
    pub fn role_list(&self) -> &[Cow<'static, str>] {
        &self.roles
    }

    /// The tool's own choice about the runtime's idempotency layer: `Some(true)` in,
    /// `Some(false)` out, `None` when it leaves the default rule (the layer applies to a tool
    /// that is neither read-only nor idempotent). See [`ToolSpec::with_idempotency`].
    pub fn idempotency(&self) -> Option<bool> {
        self.idempotency
    }

    /// The tool's own timeout, when set.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// The output policy.
    pub fn output(&self) -> OutputPolicy {
        self.output
    }

    /// Example calls.
    pub fn examples(&self) -> &[ToolExample] {
        &self.examples
    }

    /// Where the tool was defined, when known.
    pub fn location(&self) -> Option<SourceLocation> {
        self.location
    }

    /// What a runtime derives from this spec once: see [`crate::__runtime::derived`].
    pub(crate) fn derived_cache(&self) -> &OnceLock<Option<Box<dyn Any + Send + Sync>>> {
        &self.derived.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_reads_are_parallel_safe() {
        assert!(ToolExecution::READ_ONLY.parallel_safe());
        assert!(!ToolExecution::UNKNOWN.parallel_safe());
        let exclusive_read = ToolExecution {
            exclusive: true,
            ..ToolExecution::READ_ONLY
        };
        assert!(!exclusive_read.parallel_safe());
        let paged_read = ToolExecution {
            pagination: true,
            ..ToolExecution::READ_ONLY
        };
        assert!(paged_read.parallel_safe());
    }

    #[test]
    fn roles_default_to_none_and_serialize_as_a_list() {
        let spec = ToolSpec::new("refund", "Refunds.", serde_json::json!({"type": "object"}));
        assert_eq!(spec.roles().len(), 0);
        assert!(spec.role_list().is_empty());
        assert_eq!(
            serde_json::to_value(&spec).expect("a spec serializes")["roles"],
            serde_json::json!([])
        );

        let spec = spec.with_roles(["billing", "admin"]);
        assert_eq!(spec.roles().collect::<Vec<_>>(), ["billing", "admin"]);
        assert_eq!(spec.role_list().len(), 2);
        assert_eq!(
            serde_json::to_value(&spec).expect("a spec serializes")["roles"],
            serde_json::json!(["billing", "admin"])
        );

        // Owned strings too, and setting replaces.
        let spec = spec.with_roles(vec![String::from("ops")]);
        assert_eq!(spec.roles().collect::<Vec<_>>(), ["ops"]);
    }

    #[test]
    fn idempotency_defaults_to_the_rule_and_serializes_only_when_chosen() {
        let spec = ToolSpec::new("refund", "Refunds.", serde_json::json!({"type": "object"}));
        assert_eq!(spec.idempotency(), None);
        let value = serde_json::to_value(&spec).expect("a spec serializes");
        assert!(value.get("idempotency").is_none(), "{value}");

        for choice in [true, false] {
            let spec = spec.clone().with_idempotency(Some(choice));
            assert_eq!(spec.idempotency(), Some(choice));
            assert_eq!(
                serde_json::to_value(&spec).expect("a spec serializes")["idempotency"],
                serde_json::json!(choice)
            );
        }

        // Setting replaces, back to the rule too.
        let spec = spec.with_idempotency(Some(false)).with_idempotency(None);
        assert_eq!(spec.idempotency(), None);
    }
}
