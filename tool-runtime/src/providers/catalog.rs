//! A session's catalog lowered for one target, and the cache of lowerings a runtime keeps.

use std::sync::{Arc, OnceLock};

use tool_core::ToolSpec;

use super::{LoweredTool, LoweringError, Target, lower};

/// The tools a session is shown, lowered for one target, in the catalog's order (sorted by
/// name, stable: providers cache prompts by prefix).
#[derive(Debug, Clone)]
pub struct LoweredCatalog {
    target: Target,
    tools: Vec<Arc<LoweredTool>>,
}

impl LoweredCatalog {
    /// A catalog of no tool for `target`: what the router's classifier is shown.
    pub(crate) fn empty(target: Target) -> Self {
        Self {
            target,
            tools: Vec::new(),
        }
    }

    /// The target the tools are lowered for.
    pub fn target(&self) -> Target {
        self.target
    }

    /// The lowered tools, in the catalog's order.
    pub fn tools(&self) -> impl ExactSizeIterator<Item = &LoweredTool> {
        self.tools.iter().map(|tool| &**tool)
    }

    /// The lowered tool named `name`.
    pub fn get(&self, name: &str) -> Option<&LoweredTool> {
        self.tools
            .binary_search_by(|tool| tool.name.as_str().cmp(name))
            .ok()
            .and_then(|index| self.tools.get(index))
            .map(|tool| &**tool)
    }

    /// The number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the session is shown no tool.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

/// Each tool's lowering per target, made when first asked for and kept: a tool's schema never
/// changes once the runtime is built.
pub(crate) struct Lowerings {
    /// By the tool's position in the registry (sorted by name), then by target.
    per_tool: Vec<[Cached; Target::ALL.len()]>,
}

/// One tool's lowering for one target, once made.
type Cached = OnceLock<Result<Arc<LoweredTool>, LoweringError>>;

impl Lowerings {
    /// Room for `tools` tools.
    pub(crate) fn new(tools: usize) -> Self {
        Self {
            per_tool: (0..tools)
                .map(|_| std::array::from_fn(|_| OnceLock::new()))
                .collect(),
        }
    }

    /// The lowering of the tool at `position` in the registry (`spec`) for `target`.
    pub(crate) fn tool(
        &self,
        position: usize,
        spec: &ToolSpec,
        target: Target,
    ) -> Result<Arc<LoweredTool>, LoweringError> {
        let slot = Target::ALL
            .iter()
            .position(|each| *each == target)
            .unwrap_or_default();
        match self.per_tool.get(position) {
            Some(cached) => cached[slot]
                .get_or_init(|| lower(spec, target).map(Arc::new))
                .clone(),
            // A tool the cache has no room for (none: it is sized to the registry) is
            // lowered each time rather than refused.
            None => lower(spec, target).map(Arc::new),
        }
    }

    /// The catalog of `specs` (each with its registry position, in registry order) for
    /// `target`; the first tool that cannot be lowered is the error.
    pub(crate) fn catalog<'a>(
        &self,
        specs: impl Iterator<Item = (usize, &'a ToolSpec)>,
        target: Target,
    ) -> Result<LoweredCatalog, LoweringError> {
        let tools = specs
            .map(|(position, spec)| self.tool(position, spec, target))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(LoweredCatalog { target, tools })
    }
}
