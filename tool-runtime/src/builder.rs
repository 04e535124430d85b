//! Building a [`Runtime`]: which tools, which limits, which output policy.

use std::any::Any;
use std::sync::Arc;

use tool_core::{
    Location, Registry, Tool, ToolList, inventory_tools, inventory_tools_for_other_deps,
};

use crate::artifact_tool;
pub use crate::build_error::{BuildError, LeftOutTool};
use crate::dynamic::{DynamicTool, DynamicToolError};
use crate::gates::{
    ApprovalStore, Approver, AuditSink, Breaker, DecisionKeys, Gates, Policy, Preview,
};
use crate::idempotency::{Idempotency, Layer};
use crate::limits::Limits;
use crate::output::artifacts::{ArtifactStore, MemoryArtifacts};
use crate::output::redact::Redactor;
use crate::runtime::Runtime;
use crate::shells::RetryPolicy;
use crate::stack::Shared;
use crate::validate;

/// The deepest nesting of arguments a runtime accepts: the JSON parser's own limit, beyond
/// which parsing and dropping arguments would recurse deeper than a thread's stack allows.
pub const MAX_ARGUMENT_DEPTH: usize = 128;

/// The deepest tools may call tools: each level adds frames to the stack of the task that
/// runs the turn.
pub const MAX_CALL_DEPTH: u32 = 32;

/// Builds a [`Runtime`]. See [`Runtime::builder`].
#[must_use]
pub struct RuntimeBuilder<D> {
    deps: Arc<D>,
    inventory: bool,
    tools: Vec<Arc<dyn Tool>>,
    limits: Limits,
    retry: RetryPolicy,
    redactor: Redactor,
    artifacts: Arc<dyn ArtifactStore>,
    artifact_tool: bool,
    gates: Gates,
    idempotency: Layer,
}

impl<D: Any + Send + Sync> Runtime<D> {
    /// Starts a runtime for sessions with these deps.
    ///
    /// Its tools are every `#[tool]` linked into the program that works with `D` (typed to
    /// `D`, or deps-agnostic), plus the tools added with [`RuntimeBuilder::tools`] and
    /// [`RuntimeBuilder::tool`], plus the built-in `read_artifact`. Adding a tool never
    /// removes others: to run exactly the tools you name, turn the inventory off with
    /// [`RuntimeBuilder::inventory`]`(false)`. The `#[tool]`s left out because their
    /// context needs other deps are listed by [`Runtime::left_out_tools`].
    ///
    /// Deps already shared as `Arc<D>` may be passed as they are: tools typed to `D` work with
    /// them (or use [`Runtime::builder_shared`]).
    pub fn builder(deps: D) -> RuntimeBuilder<D> {
        Self::builder_shared(Arc::new(deps))
    }

    /// Like [`Runtime::builder`], with deps already shared.
    pub fn builder_shared(deps: Arc<D>) -> RuntimeBuilder<D> {
        RuntimeBuilder {
            deps,
            inventory: true,
            tools: Vec::new(),
            limits: Limits::default(),
            retry: RetryPolicy::default(),
            redactor: Redactor::default(),
            artifacts: Arc::new(MemoryArtifacts::default()),
            artifact_tool: true,
            gates: Gates::default(),
            idempotency: Layer::default(),
        }
    }
}

impl<D: Any + Send + Sync> RuntimeBuilder<D> {
    /// Adds the `#[tool]` functions of a [`tools!`](tool_core::tools) list.
    pub fn tools(mut self, list: ToolList) -> Self {
        self.tools.extend(Vec::<Arc<dyn Tool>>::from(list));
        self
    }

    /// Adds one tool: a `#[tool]` (`name::tool()`), a dynamic tool, or your own [`Tool`]
    /// implementation. Several `#[tool]`s at once: [`RuntimeBuilder::tools`]`(tools![a, b])`.
    pub fn tool(mut self, tool: impl Tool) -> Self {
        self.tools.push(Arc::new(tool));
        self
    }

    /// Builds and adds a dynamic tool.
    pub fn dynamic_tool(
        self,
        tool: Result<DynamicTool, DynamicToolError>,
    ) -> Result<Self, BuildError> {
        Ok(self.tool(tool?))
    }

    /// Whether the `#[tool]` functions linked into the program are included. Default: yes.
    /// With `false`, the runtime has exactly the tools added with [`RuntimeBuilder::tools`]
    /// and [`RuntimeBuilder::tool`] (and `read_artifact`, unless turned off).
    pub fn inventory(mut self, include: bool) -> Self {
        self.inventory = include;
        self
    }

    /// The runtime-wide limits (default: [`Limits::default`]), for example
    /// `limits(Limits::default().with_max_concurrency(8))`. Checked by
    /// [`build`](Self::build).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// How transient failures are retried.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Which secrets are redacted from outputs (default: [`Redactor::default`]).
    pub fn redactor(mut self, redactor: Redactor) -> Self {
        self.redactor = redactor;
        self
    }

    /// Where full outputs of cut results are kept (default: in memory).
    pub fn artifacts(mut self, store: impl ArtifactStore) -> Self {
        self.artifacts = Arc::new(store);
        self
    }

    /// Whether the built-in `read_artifact` tool, which reads the rest of a cut output, is
    /// offered to the model. Default: yes.
    pub fn artifact_tool(mut self, offer: bool) -> Self {
        self.artifact_tool = offer;
        self
    }

    /// The policy: which calls run (`auto`), need a person's yes (`ask`) or are refused
    /// (`deny`). Without one: `read` and `write` tools auto, `destructive` ask. Every tool the
    /// policy names must exist, or [`build`](Self::build) fails naming it (and its line, for a
    /// file); every rule over a field must name a field of the tool's arguments and compare it
    /// with a value of its type, or it fails with [`BuildError::UnknownField`] or
    /// [`BuildError::RuleMismatch`]: a typo never allows silently.
    pub fn policy(mut self, policy: Policy) -> Self {
        self.gates.policy = policy;
        self
    }

    /// Who answers the calls the policy asks about. Without an approver, `ask` is `deny`
    /// ("no approver configured").
    pub fn approver(mut self, approver: impl Approver) -> Self {
        self.gates.approver = Some(Arc::new(approver));
        self
    }

    /// Where every gate decision and every executed write's outcome is recorded. When it
    /// cannot be written, writes are refused (`audit_unavailable`); reads go on.
    pub fn audit(mut self, sink: impl AuditSink) -> Self {
        self.gates.audit = Some(Arc::new(sink));
        self
    }

    /// What a person is shown about a call of `tool` before deciding: built from the call's
    /// validated arguments. Checked at build: `tool` must exist.
    pub fn preview(
        mut self,
        tool: impl Into<String>,
        preview: impl Fn(&serde_json::Value) -> Preview + Send + Sync + 'static,
    ) -> Self {
        self.gates.previews.insert(tool.into(), Arc::new(preview));
        self
    }

    /// The keys that sign the decisions resuming a pending approval. Without keys an
    /// approver's `Pending` is a denial: nothing could resume the call safely.
    pub fn decision_keys(mut self, keys: DecisionKeys) -> Self {
        self.gates.keys = Some(keys);
        self
    }

    /// Where pending approvals wait and decisions are consumed once (in memory by default;
    /// share one store between the runtimes that resume each other's calls).
    /// (An `Arc` of a store is a store: pass `Arc::clone(&shared)`.)
    pub fn approval_store(mut self, store: impl ApprovalStore) -> Self {
        self.gates.store = Arc::new(store);
        self
    }

    /// How many consecutive denials in a session stop its further asks and writes
    /// (`too_many_denials`) until [`Runtime::reset_denials`]; 0 never stops. Default 3.
    pub fn max_consecutive_denials(mut self, limit: u32) -> Self {
        self.gates.breaker = Breaker::new(limit);
        self
    }

    /// The idempotency layer: its store (in memory by default) and settings, for example
    /// `idempotency(Idempotency::new(store).ttl(Duration::from_secs(3600)))`.
    pub fn idempotency(mut self, settings: Idempotency) -> Self {
        self.idempotency = settings.layer;
        self
    }

    /// Checks the limits and the tools and builds the runtime.
    pub fn build(mut self) -> Result<Runtime<D>, BuildError> {
        check_limits(&self.limits)?;
        let mut tools = self.tools;
        let mut left_out = Vec::new();
        if self.inventory {
            tools.extend(inventory_tools::<D>());
            for tool in inventory_tools_for_other_deps::<D>() {
                let spec = tool.spec();
                let needs = tool.deps_type().map_or("", |deps| deps.name());
                tracing::debug!(
                    tool = spec.name(),
                    needs,
                    "left out: its context needs other deps"
                );
                left_out.push(LeftOutTool {
                    name: spec.name().to_owned(),
                    location: Location(spec.location()),
                    needs,
                });
            }
            left_out.sort_by(|a, b| a.name.cmp(&b.name));
        }
        if self.artifact_tool {
            tools.push(Arc::new(artifact_tool::read_artifact(
                Arc::clone(&self.artifacts),
                self.limits.max_output_chars,
            )?));
        }
        // A tool listed and also collected from the inventory is one tool, not a duplicate.
        let mut unique: Vec<Arc<dyn Tool>> = Vec::with_capacity(tools.len());
        for tool in tools {
            if !unique
                .iter()
                .any(|seen| std::ptr::eq(seen.spec(), tool.spec()))
            {
                unique.push(tool);
            }
        }
        let registry = Registry::from_tools::<D>(unique)?;
        // Each tool's argument check is decided (and its validator compiled) now, not on its
        // first call: a schema that cannot be checked is a build error.
        for spec in registry.specs() {
            validate::prepare_check(spec).map_err(|reason| BuildError::InvalidSchema {
                tool: spec.name().to_owned(),
                reason,
            })?;
        }
        check_gates(&mut self.gates, &registry)?;
        Ok(Runtime {
            shared: Arc::new(Shared {
                deps: self.deps,
                lowerings: crate::providers::Lowerings::new(registry.len()),
                registry,
                limits: self.limits,
                retry: self.retry,
                redactor: Arc::new(self.redactor),
                artifacts: self.artifacts,
                left_out,
                artifact_tool: self.artifact_tool,
                gates: self.gates,
                idempotency: self.idempotency,
            }),
        })
    }
}

fn check_limits(limits: &Limits) -> Result<(), BuildError> {
    let at_least = |name, value: usize, min: usize| {
        if value < min {
            Err(BuildError::AtLeast { name, value, min })
        } else {
            Ok(())
        }
    };
    let within = |name, value: usize, min: usize, max: usize, why| {
        if (min..=max).contains(&value) {
            Ok(())
        } else {
            Err(BuildError::Limit {
                name,
                value,
                min,
                max,
                why,
            })
        }
    };
    at_least("max_concurrency", limits.max_concurrency, 1)?;
    at_least("max_output_chars", limits.max_output_chars, 1)?;
    within(
        "max_argument_depth",
        limits.max_argument_depth,
        1,
        MAX_ARGUMENT_DEPTH,
        "; deeper arguments would overflow the stack while they are parsed or dropped",
    )?;
    within(
        "max_call_depth",
        usize::try_from(limits.max_call_depth).unwrap_or(usize::MAX),
        0,
        usize::try_from(MAX_CALL_DEPTH).unwrap_or(usize::MAX),
        "; each level of tools calling tools adds to the stack of the task running the turn",
    )
}

/// Every tool the policy and the previews name exists, and every rule over a field can hold
/// for its tool: a typo never allows silently. The rules read their fields as those schemas say.
fn check_gates(gates: &mut Gates, registry: &Registry) -> Result<(), BuildError> {
    let names: Vec<&str> = registry.names().collect();
    let unknown = |tool: &str, place: String| {
        let nearest = tool_core::nearest_name(tool, &names)
            .map(|nearest| format!("; did you mean `{nearest}`?"))
            .unwrap_or_default();
        BuildError::UnknownTool {
            place,
            tool: tool.to_owned(),
            nearest,
        }
    };
    for (tool, line) in gates.policy.named_tools() {
        if registry.get(tool).is_none() {
            let place = match line {
                Some(line) => format!("the policy (line {line})"),
                None => "the policy".to_owned(),
            };
            return Err(unknown(tool, place));
        }
    }
    for tool in gates.previews.keys() {
        if registry.get(tool).is_none() {
            return Err(unknown(tool, "a preview".to_owned()));
        }
    }
    // Rules over fields, against the input schemas (dynamic tools' included).
    gates
        .policy
        .bind_rules(|tool| registry.get(tool).map(|tool| tool.spec().input_schema()))
}
