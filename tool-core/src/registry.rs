//! Collecting tools: the link-time registration, explicit [`tools!`](crate::tools) lists and
//! the [`Registry`] of one runtime.

use std::any::Any;

use rustc_hash::FxHashMap;
use std::fmt;
use std::sync::Arc;

use crate::context::{CallContext, DepsType};
use crate::error::{ErrorKind, ToolError};
use crate::spec::{SourceLocation, ToolSpec};
use crate::tool::{Tool, ToolArgs, ToolFuture};

/// One `#[tool]` function, collected at link time by `inventory`.
#[doc(hidden)]
pub struct ToolRegistration {
    tool: &'static dyn Tool,
}

impl ToolRegistration {
    /// Registers `tool`. Used by the code the `#[tool]` macro generates.
    pub const fn new(tool: &'static dyn Tool) -> Self {
        Self { tool }
    }

    /// The registered tool.
    pub fn tool(&self) -> &'static dyn Tool {
        self.tool
    }
}

inventory::collect!(ToolRegistration);

/// Every `#[tool]` function linked into the program, in no particular order.
#[doc(hidden)]
pub fn registered_tools() -> impl Iterator<Item = &'static dyn Tool> {
    inventory::iter::<ToolRegistration>
        .into_iter()
        .map(ToolRegistration::tool)
}

/// Every `#[tool]` linked into the program that works with deps `D` (typed to `D`, or
/// deps-agnostic), as shared handles.
#[doc(hidden)]
pub fn inventory_tools<D: Any + Send + Sync>() -> Vec<Arc<dyn Tool>> {
    let deps = DepsType::of::<D>();
    registered_tools()
        .filter(|tool| {
            tool.deps_type()
                .is_none_or(|needed| needed.is_served_by(deps))
        })
        .map(static_tool)
        .collect()
}

/// Every `#[tool]` linked into the program whose context needs deps other than `D`: the tools
/// a runtime for `D` leaves out.
#[doc(hidden)]
pub fn inventory_tools_for_other_deps<D: Any + Send + Sync>() -> Vec<&'static dyn Tool> {
    let deps = DepsType::of::<D>();
    registered_tools()
        .filter(|tool| {
            tool.deps_type()
                .is_some_and(|needed| !needed.is_served_by(deps))
        })
        .collect()
}

/// Implemented by the marker type the `#[tool]` macro generates next to each function, so a
/// tool can be named by its function's path in [`tools!`](crate::tools).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `#[tool]` function",
    label = "not a tool",
    note = "`tools![...]` takes the paths of functions annotated with `#[tool]`"
)]
pub trait ToolDef {
    /// The tool.
    const TOOL: &'static dyn Tool;
}

/// A list of tools fixed at compile time by [`tools!`](crate::tools).
#[derive(Clone, Copy)]
pub struct ToolList {
    tools: &'static [&'static dyn Tool],
}

impl ToolList {
    /// A list of `#[tool]` functions. Use [`tools!`](crate::tools) rather than this.
    pub const fn from_static(tools: &'static [&'static dyn Tool]) -> Self {
        Self { tools }
    }

    /// The tools, in the order they were listed.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &'static dyn Tool> + '_ {
        self.tools.iter().copied()
    }

    /// How many tools are listed.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

impl fmt::Debug for ToolList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|tool| tool.spec().name()))
            .finish()
    }
}

/// A list of `#[tool]` functions, checked at compile time: each path must name a function
/// annotated with `#[tool]`.
///
/// ```
/// use tool_core::{tool, tools, ToolError};
///
/// /// Adds two numbers.
/// #[tool(read_only)]
/// fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// mod more {
///     /// Says hello.
///     #[tool_core::tool(read_only)]
///     pub fn hello() -> &'static str {
///         "hello"
///     }
/// }
///
/// let list = tools![add, more::hello];
/// assert_eq!(list.len(), 2);
/// ```
#[macro_export]
macro_rules! tools {
    ($($tool:path),* $(,)?) => {
        $crate::ToolList::from_static(&[$(<$tool as $crate::ToolDef>::TOOL),*])
    };
}

/// Why a set of tools could not be made into a [`Registry`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// Two tools share a name.
    #[error(
        "tool name `{name}` is defined twice: at {first} and at {second}; give one of them another name with #[tool(name = \"...\")]"
    )]
    DuplicateName {
        /// The shared name.
        name: String,
        /// Where the first definition is.
        first: Location,
        /// Where the second definition is.
        second: Location,
    },
    /// A tool listed explicitly needs deps the runtime does not have.
    #[error(
        "tool `{name}` (at {location}) takes a context with deps `{needs}`, but this registry is for deps `{have}`"
    )]
    DepsMismatch {
        /// The tool.
        name: String,
        /// Where it is defined.
        location: Location,
        /// The deps type it needs.
        needs: &'static str,
        /// The deps type the registry is for.
        have: &'static str,
    },
}

/// A tool's definition site, or "unknown location" for a tool built without one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location(pub Option<SourceLocation>);

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(location) => location.fmt(f),
            None => f.write_str("an unknown location"),
        }
    }
}

/// A tool found by name ([`Registry::lookup`]).
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct Lookup<'a> {
    /// The tool.
    pub tool: &'a Arc<dyn Tool>,
    /// Its name, shared.
    pub name: &'a Arc<str>,
    /// Its version, shared, when it declares one.
    pub version: Option<&'a Arc<str>>,
}

/// The tools of one runtime: unique names, sorted by name, all usable with deps `D`.
#[derive(Clone)]
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
    /// Each tool's name, sorted, shared: a call can carry it without copying it.
    names: Vec<Arc<str>>,
    /// Each tool's version, when it declares one, shared the same way.
    versions: Vec<Option<Arc<str>>>,
    /// Name to position. FxHash: the keys are the registry's own names, so a model's strings
    /// are only looked up, never inserted, and a fast hash of a short name is what a call pays.
    by_name: FxHashMap<Arc<str>, usize>,
    deps: DepsType,
}

impl Registry {
    /// Every `#[tool]` linked into the program that works with deps `D`: tools whose context
    /// is typed to other deps are left out, deps-agnostic tools are included.
    pub fn from_inventory<D: Any + Send + Sync>() -> Result<Self, RegistryError> {
        Self::build(DepsType::of::<D>(), inventory_tools::<D>())
    }

    /// Exactly the given tools, for deps `D`. A tool typed to other deps is an error.
    pub fn from_tools<D: Any + Send + Sync>(
        tools: impl IntoIterator<Item = Arc<dyn Tool>>,
    ) -> Result<Self, RegistryError> {
        let deps = DepsType::of::<D>();
        let tools: Vec<_> = tools.into_iter().collect();
        for tool in &tools {
            if let Some(needs) = tool.deps_type().filter(|needs| !needs.is_served_by(deps)) {
                return Err(RegistryError::DepsMismatch {
                    name: tool.spec().name().to_owned(),
                    location: Location(tool.spec().location()),
                    needs: needs.name(),
                    have: deps.name(),
                });
            }
        }
        Self::build(deps, tools)
    }

    fn build(
        deps: DepsType,
        tools: impl IntoIterator<Item = Arc<dyn Tool>>,
    ) -> Result<Self, RegistryError> {
        let mut tools: Vec<Arc<dyn Tool>> = tools.into_iter().collect();
        // Sort by name, then by location, so a duplicate is reported the same way every run.
        tools.sort_by(|a, b| {
            (
                a.spec().name(),
                a.spec().location().map(|l| (l.file, l.line)),
            )
                .cmp(&(
                    b.spec().name(),
                    b.spec().location().map(|l| (l.file, l.line)),
                ))
        });
        // Sorted by name, so duplicates are neighbours.
        for pair in tools.windows(2) {
            let (first, second) = (&pair[0], &pair[1]);
            if first.spec().name() == second.spec().name() {
                return Err(RegistryError::DuplicateName {
                    name: first.spec().name().to_owned(),
                    first: Location(first.spec().location()),
                    second: Location(second.spec().location()),
                });
            }
        }
        let names: Vec<Arc<str>> = tools
            .iter()
            .map(|tool| Arc::from(tool.spec().name()))
            .collect();
        let versions = tools
            .iter()
            .map(|tool| tool.spec().version().map(Arc::from))
            .collect();
        let by_name = names
            .iter()
            .enumerate()
            .map(|(index, name)| (Arc::clone(name), index))
            .collect();
        Ok(Self {
            tools,
            names,
            versions,
            by_name,
            deps,
        })
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.position(name).map(|index| &self.tools[index])
    }

    /// The tool called `name`, with its name and version as shared strings.
    #[doc(hidden)]
    pub fn lookup(&self, name: &str) -> Option<Lookup<'_>> {
        self.position(name).map(|index| Lookup {
            tool: &self.tools[index],
            name: &self.names[index],
            version: self.versions[index].as_ref(),
        })
    }

    /// The tools, sorted by name.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Arc<dyn Tool>> {
        self.tools.iter()
    }

    /// The tools' specs, sorted by name.
    pub fn specs(&self) -> impl ExactSizeIterator<Item = &ToolSpec> {
        self.tools.iter().map(|tool| tool.spec())
    }

    /// The tools' names, sorted.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.specs().map(ToolSpec::name)
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The deps type this registry is for.
    pub fn deps_type(&self) -> DepsType {
        self.deps
    }

    /// The `unknown_tool` error for `name`: the available tools and the nearest match.
    #[doc(hidden)]
    pub fn unknown_tool(&self, name: &str) -> ToolError {
        self.unknown_tool_among(name, |_| true)
    }

    /// The `unknown_tool` error for `name` when only the tools `visible` keeps may be named:
    /// neither the list nor the suggestion mentions any other.
    #[doc(hidden)]
    pub fn unknown_tool_among(&self, name: &str, visible: impl Fn(&str) -> bool) -> ToolError {
        let available: Vec<&str> = self.names().filter(|name| visible(name)).collect();
        let nearest = nearest_name(name, &available);
        let mut message = format!("there is no tool named `{name}`");
        if let Some(nearest) = nearest {
            message.push_str(&format!("; did you mean `{nearest}`?"));
        }
        ToolError::new(ErrorKind::UnknownTool, message)
            .with_hint(format!("available tools: {}", available.join(", ")))
            .with_details(serde_json::json!({ "available": available, "nearest": nearest }))
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("deps", &self.deps.name())
            .field("tools", &self.names().collect::<Vec<_>>())
            .finish()
    }
}

/// The closest of `candidates` to `name`, when one is close enough to be a likely typo or a
/// longer or shorter form of the same name (`lookup_order` for `lookup`).
#[doc(hidden)]
pub fn nearest_name<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    // An empty name is near nothing: every name would "contain" it.
    if name.trim().is_empty() {
        return None;
    }
    let lowered = name.to_ascii_lowercase();
    candidates
        .iter()
        .filter_map(|candidate| {
            let other = candidate.to_ascii_lowercase();
            let distance = edit_distance(&lowered, &other);
            let typo = distance <= (candidate.len().max(name.len()) / 3).max(2);
            let contained =
                other.len() >= 3 && (lowered.contains(&other) || other.contains(&lowered));
            let same_words = words_within(&other, &lowered) || words_within(&lowered, &other);
            (typo || contained || same_words).then_some((distance, *candidate))
        })
        .min()
        .map(|(_, candidate)| candidate)
}

/// Whether every word of `few` (split at `_` and `-`) is a word of `many`.
fn words_within(few: &str, many: &str) -> bool {
    let many: Vec<&str> = many
        .split(['_', '-'])
        .filter(|word| !word.is_empty())
        .collect();
    let mut few = few
        .split(['_', '-'])
        .filter(|word| !word.is_empty())
        .peekable();
    few.peek().is_some() && few.all(|word| many.contains(&word))
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

/// Wraps a `'static` tool so registries can hold `#[tool]` functions and dynamic tools alike.
fn static_tool(tool: &'static dyn Tool) -> Arc<dyn Tool> {
    Arc::new(StaticTool(tool))
}

impl From<ToolList> for Vec<Arc<dyn Tool>> {
    fn from(list: ToolList) -> Self {
        list.iter().map(static_tool).collect()
    }
}

struct StaticTool(&'static dyn Tool);

impl Tool for StaticTool {
    fn spec(&self) -> &ToolSpec {
        self.0.spec()
    }

    fn deps_type(&self) -> Option<DepsType> {
        self.0.deps_type()
    }

    fn takes_context(&self) -> bool {
        self.0.takes_context()
    }

    fn prepare(&self, args: ToolArgs<'_>, call: &CallContext) -> Result<ToolFuture, ToolError> {
        self.0.prepare(args, call)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_name_finds_typos_and_ignores_strangers() {
        let names = ["get_order_status", "search_orders", "create_ticket"];
        assert_eq!(
            nearest_name("get_order_stats", &names),
            Some("get_order_status")
        );
        assert_eq!(nearest_name("searchOrders", &names), Some("search_orders"));
        assert_eq!(nearest_name("search", &names), Some("search_orders"));
        assert_eq!(
            nearest_name("create_support_ticket", &names),
            Some("create_ticket")
        );
        assert_eq!(nearest_name("launch_rocket", &names), None);
        assert_eq!(nearest_name("", &names), None);
        assert_eq!(nearest_name("  ", &names), None);
    }
}
