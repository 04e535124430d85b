//! Why a runtime could not be built (and the comparisons a policy rule may make, which its
//! errors name), and the tools it left out: a leaf, read by the builder and by the stages
//! that check their settings when it builds.

use std::fmt;

use serde::{Deserialize, Serialize};
use tool_core::{Location, RegistryError};

use crate::dynamic::DynamicToolError;

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
    /// A tool's input schema cannot be compiled into a validator.
    #[error("the input schema of tool `{tool}` cannot be compiled: {reason}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// What the validator said.
        reason: String,
    },
    /// The policy or a preview names a tool the runtime does not have.
    #[error("{place} names the tool `{tool}`, which does not exist{nearest}")]
    UnknownTool {
        /// Where: `the policy (line 7)`, `a preview`.
        place: String,
        /// The name.
        tool: String,
        /// `; did you mean `x`?`, or empty.
        nearest: String,
    },
    /// A policy rule names a field its tool's arguments do not have, so it could never hold:
    /// a misspelt `amout` for `amount`, a path through a value without fields. Displayed as
    /// ``policy.toml line 12: rule for `transfer` names field `amout`, which the tool's
    /// arguments do not have (fields: amount, to); did you mean `amount`?``.
    #[error(
        "{place}: rule for `{tool}` names field `{field}`, {problem}{}",
        nearest.as_ref().map(|nearest| format!("; did you mean `{nearest}`?")).unwrap_or_default()
    )]
    UnknownField {
        /// Where the rule is written: `policy.toml line 12` for a policy file,
        /// `policy line 12` for TOML text, `the policy's rule 2 ("reason")` for a rule in code
        /// (its position among the policy's rules, and its reason).
        place: String,
        /// The tool the rule is for.
        tool: String,
        /// The field path the rule names, as written (`address.cty`).
        field: String,
        /// What the arguments have instead: `which the tool's arguments do not have (fields:
        /// amount, to)`, or ``but `amount` is a number, which has no fields``.
        problem: String,
        /// The whole path of the nearest field, when one is close (`address.city`).
        nearest: Option<String>,
    },
    /// A policy rule compares a field with a value it can never match: a value of another
    /// type (`gt` of a string against a number, an `in` list item of another type, `eq` with
    /// a value the field cannot take), or `contains` on a field that is neither a string nor
    /// an array. Displayed as ``policy.toml line 14: rule for `transfer` compares `amount` (a
    /// number) with "1000" (a string) using `gt` ``.
    #[error("{place}: rule for `{tool}` {problem}")]
    RuleMismatch {
        /// Where the rule is written, as for [`BuildError::UnknownField`].
        place: String,
        /// The tool the rule is for.
        tool: String,
        /// The field path the rule names.
        field: String,
        /// How the rule compares.
        compare: Compare,
        /// What cannot compare, in words: ``compares `amount` (a number) with "1000" (a
        /// string) using `gt` ``.
        problem: String,
    },
    /// A limit is set below its least useful value.
    #[error("limit `{name}` is {value}; it must be at least {min}")]
    AtLeast {
        /// The limit, as named in [`Limits`](crate::Limits).
        name: &'static str,
        /// The value it was given.
        value: usize,
        /// The smallest value allowed.
        min: usize,
    },
    /// A limit is set beyond what the runtime can honour safely.
    #[error("limit `{name}` is {value}; it must be between {min} and {max}{why}")]
    Limit {
        /// The limit, as named in [`Limits`](crate::Limits).
        name: &'static str,
        /// The value it was given.
        value: usize,
        /// The smallest value allowed.
        min: usize,
        /// The largest value allowed.
        max: usize,
        /// Why the bound exists, starting with "; ", or empty.
        why: &'static str,
    },
}

/// A `#[tool]` linked into the program that a runtime left out, because its context needs
/// other deps than the runtime's ([`Runtime::left_out_tools`](crate::Runtime::left_out_tools)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeftOutTool {
    /// The tool's name.
    pub name: String,
    /// Where it is defined.
    pub location: Location,
    /// The deps type its context needs.
    pub needs: &'static str,
}

/// How a rule compares an argument with its value.
///
/// No comparison, `ne` included, matches an argument that is absent or `null`. When the
/// runtime is built, the value must be able to compare with the field as the tool's input
/// schema describes it (see [`Policy::rule_field`](crate::gates::Policy::rule_field)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Compare {
    /// Equal (numbers by value: `1` equals `1.0`; anything else as JSON).
    Eq,
    /// Not equal.
    Ne,
    /// Greater than (numbers), or after (strings).
    Gt,
    /// Greater than or equal.
    Ge,
    /// Less than.
    Lt,
    /// Less than or equal.
    Le,
    /// The argument is one of the values of an array (equal as with `Eq`).
    In,
    /// The argument (a string or an array) contains the value: a part of the string, or an
    /// item of the array (equal as with `Eq`).
    Contains,
    /// The argument is present and not null.
    Present,
}

impl Compare {
    /// The name a policy file gives it: `eq`, `ne`, `gt`, `ge`, `lt`, `le`, `in`, `contains`,
    /// `present`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            Compare::Eq => "eq",
            Compare::Ne => "ne",
            Compare::Gt => "gt",
            Compare::Ge => "ge",
            Compare::Lt => "lt",
            Compare::Le => "le",
            Compare::In => "in",
            Compare::Contains => "contains",
            Compare::Present => "present",
        }
    }
}

impl fmt::Display for Compare {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
