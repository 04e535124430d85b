//! Building a [`Runtime`]: which tools, which limits, which output policy.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use tool_core::{Registry, RegistryError, Tool, ToolList, inventory_tools};

use crate::artifact_tool;
use crate::dynamic::{DynamicTool, DynamicToolError};
use crate::limits::Limits;
use crate::output::artifacts::{ArtifactStore, MemoryArtifacts};
use crate::output::redact::Redactor;
use crate::runtime::{Runtime, Shared};
use crate::shells::RetryPolicy;

/// A runtime could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The tools do not form a valid registry (a duplicate name, a tool for other deps).
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// A dynamic tool is invalid.
    #[error(transparent)]
    DynamicTool(#[from] DynamicToolError),
}

/// Builds a [`Runtime`]. See [`Runtime::builder`].
#[must_use]
pub struct RuntimeBuilder<D> {
    deps: Arc<D>,
    inventory: Option<bool>,
    tools: Vec<Arc<dyn Tool>>,
    limits: Limits,
    retry: RetryPolicy,
    redactor: Redactor,
    artifacts: Arc<dyn ArtifactStore>,
    artifact_tool: bool,
}

impl<D: Any + Send + Sync> Runtime<D> {
    /// Starts a runtime for sessions with these deps.
    ///
    /// By default its tools are every `#[tool]` linked into the program that works with `D`
    /// (typed to `D` or deps-agnostic). Naming tools with [`RuntimeBuilder::tools`] replaces
    /// that with exactly the tools named, unless [`RuntimeBuilder::inventory`] asks for both.
    pub fn builder(deps: D) -> RuntimeBuilder<D> {
        Self::builder_shared(Arc::new(deps))
    }

    /// Like [`Runtime::builder`], with deps already shared.
    pub fn builder_shared(deps: Arc<D>) -> RuntimeBuilder<D> {
        RuntimeBuilder {
            deps,
            inventory: None,
            tools: Vec::new(),
            limits: Limits::default(),
            retry: RetryPolicy::default(),
            redactor: Redactor::default(),
            artifacts: Arc::new(MemoryArtifacts::default()),
            artifact_tool: true,
        }
    }
}

impl<D: Any + Send + Sync> RuntimeBuilder<D> {
    /// Adds the `#[tool]` functions of a [`tools!`](tool_core::tools) list.
    pub fn tools(mut self, list: ToolList) -> Self {
        self.tools.extend(Vec::<Arc<dyn Tool>>::from(list));
        self
    }

    /// Adds one tool (a dynamic tool, or your own [`Tool`] implementation).
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

    /// Whether the `#[tool]` functions of the program are included. Default: yes, unless
    /// tools were named with [`RuntimeBuilder::tools`].
    pub fn inventory(mut self, include: bool) -> Self {
        self.inventory = Some(include);
        self
    }

    /// Replaces all limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The timeout of tools that declare none (`None`: no timeout).
    pub fn default_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.limits.default_timeout = timeout;
        self
    }

    /// The most calls of one batch that run at the same time.
    pub fn max_concurrency(mut self, max: usize) -> Self {
        self.limits.max_concurrency = max.max(1);
        self
    }

    /// Output characters the model receives from a tool that declares no limit.
    pub fn max_output_chars(mut self, max: usize) -> Self {
        self.limits.max_output_chars = max;
        self
    }

    /// The largest arguments accepted, in bytes.
    pub fn max_argument_bytes(mut self, max: usize) -> Self {
        self.limits.max_argument_bytes = max;
        self
    }

    /// The deepest nesting accepted in arguments.
    pub fn max_argument_depth(mut self, max: usize) -> Self {
        self.limits.max_argument_depth = max;
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
    pub fn artifacts(mut self, store: impl ArtifactStore + 'static) -> Self {
        self.artifacts = Arc::new(store);
        self
    }

    /// Whether the built-in `read_artifact` tool, which reads the rest of a cut output, is
    /// offered to the model. Default: yes.
    pub fn artifact_tool(mut self, offer: bool) -> Self {
        self.artifact_tool = offer;
        self
    }

    /// Checks the tools and builds the runtime.
    pub fn build(self) -> Result<Runtime<D>, BuildError> {
        let mut tools = self.tools;
        if self.inventory.unwrap_or(tools.is_empty()) {
            tools.extend(inventory_tools::<D>());
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
        Ok(Runtime {
            shared: Arc::new(Shared {
                deps: self.deps,
                registry,
                limits: self.limits,
                retry: self.retry,
                redactor: self.redactor,
                artifacts: self.artifacts,
            }),
        })
    }
}
