//! The policy: for each call whose arguments passed validation, `auto`, `ask` or `deny`.
//!
//! A decision is made from, in this order:
//! 1. the roles a tool requires (on the tool or in the policy): a principal without them is
//!    `not_permitted`, and the tool is left out of its catalog;
//! 2. the tool's own action if the policy names one, else the default for its risk level
//!    (without a policy: `read` and `write` auto, `destructive` ask);
//! 3. overrides for the principal's roles;
//! 4. rules over the validated arguments.
//!
//! Steps 3 and 4 can only make a decision stricter (`auto` < `ask` < `deny`): the strictest
//! answer wins, so no rule or role can turn a deny into an allow.
//!
//! When the runtime is built, every tool the policy names must exist, and every rule over a
//! field must be able to hold for its tool's input schema ([`fields`]): a typo is an error,
//! never a rule that silently never holds.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tool_core::{RiskLevel, ToolSpec};

use crate::arguments::{CallArguments, FieldPath};
use crate::build_error::BuildError;
pub use crate::build_error::Compare;
use crate::session::Principal;

mod fields;

/// What the policy says about a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Action {
    /// The call runs.
    Auto,
    /// A person decides, through the runtime's [`Approver`](crate::approvals::Approver).
    Ask,
    /// The call is refused with the policy's reason.
    Deny,
}

impl Action {
    /// `auto`, `ask` or `deny`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            Action::Auto => "auto",
            Action::Ask => "ask",
            Action::Deny => "deny",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// When a rule applies.
#[derive(Clone)]
pub(crate) enum Condition {
    /// An argument, by dotted path, compared with a value.
    Field {
        path: String,
        compare: Compare,
        value: Value,
        /// The path as its tool's schema reads it, once the runtime is built.
        read: Option<FieldPath>,
    },
    /// A predicate over the validated arguments.
    Predicate(Arc<dyn Fn(&Value) -> bool + Send + Sync>),
}

impl fmt::Debug for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Condition::Field {
                path,
                compare,
                value,
                ..
            } => write!(f, "{path} {compare:?} {value}"),
            Condition::Predicate(_) => f.write_str("<predicate>"),
        }
    }
}

/// A rule over a tool's validated arguments.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    pub(crate) tool: String,
    pub(crate) condition: Condition,
    pub(crate) action: Action,
    pub(crate) reason: String,
    /// Where the rule was written, for errors naming it.
    pub(crate) line: Option<usize>,
    /// The lines of its `field` and `value` in a file, for errors about either.
    pub(crate) field_line: Option<usize>,
    pub(crate) value_line: Option<usize>,
}

/// What the policy says about one tool.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolRule {
    pub(crate) action: Option<Action>,
    pub(crate) reason: Option<String>,
    pub(crate) roles: Vec<String>,
    pub(crate) line: Option<usize>,
}

/// An override for principals with a role.
#[derive(Debug, Clone)]
pub(crate) struct RoleRule {
    pub(crate) role: String,
    /// A tool's name, or `None` for every tool.
    pub(crate) tool: Option<String>,
    pub(crate) action: Action,
    pub(crate) line: Option<usize>,
}

/// Which calls run, which need a person's yes, and which are refused.
///
/// Built in code or read from a TOML file ([`Policy::from_toml_str`]). Both are checked
/// when the runtime is built ([`RuntimeBuilder::build`](crate::RuntimeBuilder::build)), so a
/// typo is an error, never a silent allow:
/// - every tool the policy names must exist ([`BuildError::UnknownTool`]);
/// - every rule over a field ([`Policy::rule_field`], `[[rules]]` in a file) must name a field
///   of the tool's input schema ([`BuildError::UnknownField`], with the nearest field's name),
///   and its value must be able to compare with that field ([`BuildError::RuleMismatch`]).
///
/// Errors name the rule by its line for a file, and by its position among the policy's rules
/// and its reason for a rule written in code. Rules written as closures ([`Policy::rule`]) are
/// not checked: nothing can see inside them.
///
/// ```
/// use tool_runtime::RiskLevel;
/// use tool_runtime::gates::{Action, Compare, Policy};
///
/// let policy = Policy::new()
///     .default_for(RiskLevel::Write, Action::Ask)
///     .tool("get_order", Action::Auto)
///     .require_roles("refund", ["billing"])
///     .rule_field("refund", "amount", Compare::Gt, 100, Action::Ask, "refunds over 100 need a person")
///     .role("admin", Some("refund"), Action::Auto);
/// # let _ = policy;
/// ```
#[derive(Debug, Clone)]
pub struct Policy {
    pub(crate) defaults: [Action; 3],
    pub(crate) tools: BTreeMap<String, ToolRule>,
    pub(crate) roles: Vec<RoleRule>,
    pub(crate) rules: Vec<Rule>,
    /// The file the policy was read from, for errors naming a line of it.
    pub(crate) file: Option<PathBuf>,
}

impl Default for Policy {
    /// `read` and `write` auto, `destructive` ask; no tool named.
    fn default() -> Self {
        Self {
            defaults: [Action::Auto, Action::Auto, Action::Ask],
            tools: BTreeMap::new(),
            roles: Vec::new(),
            rules: Vec::new(),
            file: None,
        }
    }
}

/// A decision about one call, and why: the reason the model or the approver is shown is
/// written out only when someone reads it (a read the policy lets run pays for no text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict<'p> {
    pub(crate) action: Action,
    why: Why<'p>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Why<'p> {
    /// A reason written in the policy.
    Written(&'p str),
    /// The policy names the tool without a reason.
    Tool,
    /// The default for the tool's risk level.
    Risk,
    /// An override for one of the principal's roles.
    Role(&'p str),
}

impl Verdict<'_> {
    /// Why, in words the model or a person can act on.
    pub(crate) fn reason(&self, spec: &ToolSpec) -> String {
        match self.why {
            Why::Written(reason) => reason.to_owned(),
            Why::Tool => format!("the policy says `{}` for `{}`", self.action, spec.name()),
            Why::Risk => format!("`{}` is a {} tool", spec.name(), spec.risk()),
            Why::Role(role) => format!("the policy says `{}` for the role `{role}`", self.action),
        }
    }
}

/// Why a principal may not call a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MissingRole {
    pub(crate) role: String,
}

const fn risk_index(risk: RiskLevel) -> usize {
    match risk {
        RiskLevel::Read => 0,
        RiskLevel::Write => 1,
        RiskLevel::Destructive => 2,
    }
}

impl Policy {
    /// The default policy: `read` and `write` auto, `destructive` ask.
    pub fn new() -> Self {
        Self::default()
    }

    /// The action for tools of `risk` that the policy does not name.
    #[must_use]
    pub fn default_for(mut self, risk: RiskLevel, action: Action) -> Self {
        self.defaults[risk_index(risk)] = action;
        self
    }

    /// The action for `tool`, whatever its risk.
    #[must_use]
    pub fn tool(mut self, tool: impl Into<String>, action: Action) -> Self {
        self.tools.entry(tool.into()).or_default().action = Some(action);
        self
    }

    /// The action for `tool`, with the reason shown when it asks or denies.
    #[must_use]
    pub fn tool_with_reason(
        mut self,
        tool: impl Into<String>,
        action: Action,
        reason: impl Into<String>,
    ) -> Self {
        let rule = self.tools.entry(tool.into()).or_default();
        rule.action = Some(action);
        rule.reason = Some(reason.into());
        self
    }

    /// Roles a principal needs to see and call `tool` (all of them), besides those the tool
    /// declares itself.
    #[must_use]
    pub fn require_roles<I, S>(mut self, tool: impl Into<String>, roles: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let rule = self.tools.entry(tool.into()).or_default();
        rule.roles.extend(roles.into_iter().map(Into::into));
        self
    }

    /// For principals with `role`: the action for `tool` (or for every tool when `None`).
    /// Like every override, it can only make a decision stricter.
    #[must_use]
    pub fn role(mut self, role: impl Into<String>, tool: Option<&str>, action: Action) -> Self {
        self.roles.push(RoleRule {
            role: role.into(),
            tool: tool.map(str::to_owned),
            action,
            line: None,
        });
        self
    }

    /// A rule: when the argument at `path` (dotted: `address.country`) compares with `value`,
    /// the call gets `action` with `reason`. Rules read the validated arguments as the tool
    /// does: a left-out field with a default has its default. Each step of the path is an
    /// object's key: a rule does not look inside arrays (`contains` tests an array's items).
    ///
    /// Checked when the runtime is built, against the tool's input schema (through `$ref`,
    /// `anyOf`, `oneOf`, `allOf`, so an `Option` of a struct has its fields):
    /// - the path must be there, or the build fails with [`BuildError::UnknownField`]
    ///   naming the nearest field (`amout`: "did you mean `amount`?");
    /// - the value must be able to compare with the field, or it fails with
    ///   [`BuildError::RuleMismatch`]: `gt`, `ge`, `lt` and `le` take a number for a number
    ///   and a string for a string; `eq` a value of the field's type, one of its values for an
    ///   enum (or `const`); `in` an array of such values (not empty); `contains` a string for a
    ///   string field, an item's value for an array field, and nothing for other fields.
    ///   `ne` and `present` take any value.
    ///
    /// Where the schema cannot tell (no type, a free-form `serde_json::Value`, a map of any
    /// keys, `patternProperties`, a reference outside the schema), the rule is accepted: only a
    /// rule that can never hold is refused.
    #[must_use]
    pub fn rule_field(
        mut self,
        tool: impl Into<String>,
        path: impl Into<String>,
        compare: Compare,
        value: impl Into<Value>,
        action: Action,
        reason: impl Into<String>,
    ) -> Self {
        self.rules.push(Rule {
            tool: tool.into(),
            condition: Condition::Field {
                path: path.into(),
                compare,
                value: value.into(),
                read: None,
            },
            action,
            reason: reason.into(),
            line: None,
            field_line: None,
            value_line: None,
        });
        self
    }

    /// A rule in code: when `predicate` holds for the validated arguments (defaults filled
    /// in), the call gets `action` with `reason`.
    #[must_use]
    pub fn rule(
        mut self,
        tool: impl Into<String>,
        predicate: impl Fn(&Value) -> bool + Send + Sync + 'static,
        action: Action,
        reason: impl Into<String>,
    ) -> Self {
        self.rules.push(Rule {
            tool: tool.into(),
            condition: Condition::Predicate(Arc::new(predicate)),
            action,
            reason: reason.into(),
            line: None,
            field_line: None,
            value_line: None,
        });
        self
    }

    /// Every tool name the policy mentions, with the line it was written on (for a file).
    pub(crate) fn named_tools(&self) -> impl Iterator<Item = (&str, Option<usize>)> {
        let tools = self
            .tools
            .iter()
            .map(|(name, rule)| (name.as_str(), rule.line));
        let roles = self
            .roles
            .iter()
            .filter_map(|rule| rule.tool.as_deref().map(|tool| (tool, rule.line)));
        let rules = self
            .rules
            .iter()
            .map(|rule| (rule.tool.as_str(), rule.line));
        tools.chain(roles).chain(rules)
    }

    /// Every rule over a field can hold for its tool's input schema (`schema_of` gives it, by
    /// tool name; a tool without one was already refused by name), and reads its path as that
    /// schema says, once.
    pub(crate) fn bind_rules<'s>(
        &mut self,
        schema_of: impl Fn(&str) -> Option<&'s Value>,
    ) -> Result<(), BuildError> {
        for index in 0..self.rules.len() {
            let rule = &self.rules[index];
            let Condition::Field {
                path,
                compare,
                value,
                ..
            } = &rule.condition
            else {
                continue;
            };
            let Some(schema) = schema_of(&rule.tool) else {
                continue;
            };
            let place = |line| self.place_of(index, rule, line);
            fields::check(schema, path, *compare, value).map_err(|problem| match problem {
                fields::Problem::UnknownField { problem, nearest } => BuildError::UnknownField {
                    place: place(rule.field_line),
                    tool: rule.tool.clone(),
                    field: path.clone(),
                    problem,
                    nearest,
                },
                fields::Problem::Mismatch(problem) => BuildError::RuleMismatch {
                    place: place(rule.value_line),
                    tool: rule.tool.clone(),
                    field: path.clone(),
                    compare: *compare,
                    problem,
                },
            })?;
            let bound = FieldPath::new(schema, path);
            if let Condition::Field { read, .. } = &mut self.rules[index].condition {
                *read = Some(bound);
            }
        }
        Ok(())
    }

    /// Where a rule is written: `policy.toml line 12`, `policy line 12` (TOML text), or
    /// `the policy's rule 2 ("reason")` (in code). `line` is the line of the part at fault.
    fn place_of(&self, index: usize, rule: &Rule, line: Option<usize>) -> String {
        match (line.or(rule.line), &self.file) {
            (Some(line), Some(file)) => format!("{} line {line}", file.display()),
            (Some(line), None) => format!("policy line {line}"),
            (None, _) => format!("the policy's rule {} ({:?})", index + 1, rule.reason),
        }
    }

    /// Whether deciding about `tool` reads its whole arguments as a value (a predicate does;
    /// a rule over a field reads that field only).
    pub(crate) fn reads_the_value(&self, tool: &str) -> bool {
        self.rules
            .iter()
            .any(|rule| rule.tool == tool && matches!(rule.condition, Condition::Predicate(_)))
    }

    /// The roles `principal` lacks for `tool` (declared on the tool, or by the policy).
    pub(crate) fn missing_role(
        &self,
        spec: &ToolSpec,
        principal: Option<&Principal>,
    ) -> Option<MissingRole> {
        let policy_roles = self
            .tools
            .get(spec.name())
            .map(|rule| rule.roles.as_slice())
            .unwrap_or_default();
        spec.roles()
            .chain(policy_roles.iter().map(String::as_str))
            .find(|role| !principal.is_some_and(|principal| principal.has_role(role)))
            .map(|role| MissingRole {
                role: role.to_owned(),
            })
    }

    /// The decision for a call of `spec` whose arguments (when the policy reads them) are
    /// `arguments`.
    pub(crate) fn decide(
        &self,
        spec: &ToolSpec,
        principal: Option<&Principal>,
        arguments: Option<&CallArguments<'_>>,
    ) -> Verdict<'_> {
        let own = self.tools.get(spec.name());
        let mut verdict = match own.and_then(|rule| rule.action) {
            Some(action) => Verdict {
                action,
                why: match own.and_then(|rule| rule.reason.as_deref()) {
                    Some(reason) => Why::Written(reason),
                    None => Why::Tool,
                },
            },
            None => Verdict {
                action: self.defaults[risk_index(spec.risk())],
                why: Why::Risk,
            },
        };
        if let Some(principal) = principal {
            for rule in &self.roles {
                let applies = principal.has_role(&rule.role)
                    && rule.tool.as_deref().is_none_or(|tool| tool == spec.name());
                if applies && rule.action > verdict.action {
                    verdict = Verdict {
                        action: rule.action,
                        why: Why::Role(&rule.role),
                    };
                }
            }
        }
        for rule in self.rules.iter().filter(|rule| rule.tool == spec.name()) {
            if rule.action > verdict.action
                && arguments.is_some_and(|arguments| rule.condition.holds(arguments))
            {
                verdict = Verdict {
                    action: rule.action,
                    why: Why::Written(&rule.reason),
                };
            }
        }
        verdict
    }
}

#[cfg(test)]
impl Policy {
    /// [`Policy::decide`] over arguments given as a value.
    pub(crate) fn decide_value(
        &self,
        spec: &ToolSpec,
        principal: Option<&Principal>,
        arguments: Option<&Value>,
    ) -> Verdict<'_> {
        let sent = arguments.map(|value| crate::Arguments::Value(value.clone()));
        let arguments = sent
            .as_ref()
            .map(|sent| CallArguments::new(std::borrow::Cow::Borrowed(sent), spec.input_schema()));
        self.decide(spec, principal, arguments.as_ref())
    }
}

impl Condition {
    fn holds(&self, arguments: &CallArguments<'_>) -> bool {
        match self {
            Condition::Predicate(predicate) => predicate(arguments.canonical()),
            Condition::Field {
                compare,
                value,
                read: Some(path),
                ..
            } => compare_values(arguments.field_at(path).as_deref(), *compare, value),
            // A policy not bound to a runtime's tools (its own tests) reads the path now.
            Condition::Field {
                path,
                compare,
                value,
                read: None,
            } => {
                let path = arguments.path(path);
                compare_values(arguments.field_at(&path).as_deref(), *compare, value)
            }
        }
    }
}

/// Equal as a rule compares: numbers by value (`1` is `1.0`), anything else as JSON.
pub(crate) fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y,
            _ => x == y,
        },
        _ => a == b,
    }
}

fn compare_values(found: Option<&Value>, compare: Compare, expected: &Value) -> bool {
    use std::cmp::Ordering;
    let found = match found {
        None | Some(Value::Null) => return false,
        Some(found) => found,
    };
    let order = || -> Option<Ordering> {
        match (found, expected) {
            (Value::Number(a), Value::Number(b)) => a.as_f64()?.partial_cmp(&b.as_f64()?),
            (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
            _ => None,
        }
    };
    let equal = || same_value(found, expected);
    match compare {
        Compare::Present => true,
        Compare::Eq => equal(),
        Compare::Ne => !equal(),
        Compare::Gt => order().is_some_and(Ordering::is_gt),
        Compare::Ge => order().is_some_and(Ordering::is_ge),
        Compare::Lt => order().is_some_and(Ordering::is_lt),
        Compare::Le => order().is_some_and(Ordering::is_le),
        Compare::In => expected
            .as_array()
            .is_some_and(|values| values.iter().any(|value| same_value(value, found))),
        Compare::Contains => match found {
            Value::String(text) => expected.as_str().is_some_and(|part| text.contains(part)),
            Value::Array(items) => items.iter().any(|item| same_value(item, expected)),
            _ => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn in_and_contains_compare_numbers_by_value_as_eq_does() {
        // The arguments a rule reads have integral floats as integers; a policy file may write
        // `100.0`.
        for (compare, expected, found) in [
            (Compare::Eq, json!(100.0), json!(100)),
            (Compare::In, json!([5, 100.0]), json!(100)),
            (Compare::In, json!([100]), json!(100.0)),
            (Compare::Contains, json!(2.0), json!([1, 2, 3])),
        ] {
            assert!(
                compare_values(Some(&found), compare, &expected),
                "{found} {compare} {expected}"
            );
        }
        assert!(!compare_values(
            Some(&json!(100)),
            Compare::In,
            &json!(["100"])
        ));
        assert!(!compare_values(
            Some(&json!(["a"])),
            Compare::Contains,
            &json!("b")
        ));
        assert!(!compare_values(None, Compare::Ne, &json!(1)));
    }

    #[test]
    fn a_rule_is_placed_by_its_line_in_a_file_and_by_its_position_in_code() {
        let policy = Policy::new()
            .rule("t", |_| true, Action::Ask, "a closure")
            .rule_field("t", "x", Compare::Gt, 1, Action::Deny, "over one");
        let rule = &policy.rules[1];
        assert_eq!(
            policy.place_of(1, rule, None),
            "the policy's rule 2 (\"over one\")"
        );
        let mut from_file = rule.clone();
        from_file.line = Some(4);
        assert_eq!(policy.place_of(1, &from_file, Some(6)), "policy line 6");
        assert_eq!(policy.place_of(1, &from_file, None), "policy line 4");
        let policy = Policy {
            file: Some(PathBuf::from("conf/policy.toml")),
            ..policy
        };
        assert_eq!(
            policy.place_of(1, &from_file, Some(6)),
            "conf/policy.toml line 6"
        );
    }
}
