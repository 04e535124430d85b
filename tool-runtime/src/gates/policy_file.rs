//! Policy files: a [`Policy`] read from TOML.
//!
//! A policy file has four parts, all optional; an empty file is the default policy.
//!
//! ```toml
//! # The action for tools the file does not name, per risk level. An omitted level keeps
//! # its default: read = "auto", write = "auto", destructive = "ask".
//! [defaults]
//! read = "auto"
//! write = "auto"
//! destructive = "ask"
//!
//! # One table per tool: its action whatever its risk (`auto`, `ask` or `deny`), the reason
//! # shown when it asks or denies (needs an action), and the roles a principal needs to see
//! # and call it (all of them). Every key is optional.
//! [tools.create_ticket]
//! action = "ask"
//! reason = "tickets reach a person"
//! roles = ["agent"]
//!
//! # Overrides for principals with a role, one `[[roles.NAME]]` table each (two brackets: a
//! # role may have several). Without `tool`, the override is for every tool.
//! [[roles.admin]]
//! tool = "issue_refund"
//! action = "auto"
//!
//! [[roles.trainee]]
//! action = "ask"
//!
//! # Rules over the validated arguments, one `[[rules]]` table each.
//! [[rules]]
//! tool = "issue_refund"
//! field = "amount"            # a dotted path: `address.country`
//! op = "gt"                   # eq ne gt ge lt le in contains present
//! value = 100                 # any TOML value; `in` takes an array, `present` none
//! action = "ask"
//! reason = "refunds over 100 need a person"   # optional
//! ```
//!
//! Role overrides and rules can only make a decision stricter (see [`Policy`]). `gt`, `ge`,
//! `lt` and `le` compare numbers or strings, so their value must be one; a datetime is
//! compared as the string it is written as (`1979-05-27T07:32:00Z`).
//!
//! Every table refuses keys it does not know, so a typo (`acton = "ask"`) is an error, never
//! an ignored line; every error names the line it is on when it has one. Whether the tools
//! the file names exist, and whether each rule's `field` is one of its tool's arguments and
//! its `value` can compare with it (`gt` of a string against a number, an `in` list of
//! another type, `contains` on a number), is checked when the runtime is built: a
//! [`BuildError`](crate::BuildError) names the file's line, and the nearest field for a
//! misspelt one.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::{Deserializer, SeqAccess, Visitor};
use serde_json::Value;
use toml::Spanned;

use super::policy::{Action, Compare, Condition, Policy, RoleRule, Rule, ToolRule};

/// Why a policy file was refused.
///
/// Displayed as `policy.toml line 7: unknown field `acton`, expected one of ...`: the file
/// when the policy was read from one, the line when the problem has one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct PolicyFileError {
    /// The file, when the policy was read with [`Policy::from_toml_file`].
    pub file: Option<PathBuf>,
    /// The line (1-based) the problem is on, when it has one.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for PolicyFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{} line {line}: ", file.display())?,
            (Some(file), None) => write!(f, "{}: ", file.display())?,
            (None, Some(line)) => write!(f, "policy line {line}: ")?,
            (None, None) => f.write_str("policy: ")?,
        }
        f.write_str(&self.message)
    }
}

impl PolicyFileError {
    fn at(line: Option<usize>, message: impl Into<String>) -> Self {
        Self {
            file: None,
            line,
            message: message.into(),
        }
    }
}

impl Policy {
    /// A policy from TOML text.
    ///
    /// Four parts, all optional (an empty text is the default policy):
    /// - `[defaults]`: the action for tools the file does not name, per risk level (`read`,
    ///   `write`, `destructive`); an omitted level keeps its default (`auto`, `auto`, `ask`);
    /// - `[tools.NAME]`: the tool's `action` whatever its risk, the `reason` shown when it
    ///   asks or denies (needs an `action`), the `roles` a principal needs to see and call it;
    /// - `[[roles.ROLE]]`: an override for principals with the role, for one `tool` or (without
    ///   it) for every tool, with its `action`;
    /// - `[[rules]]`: over the validated arguments: `tool`, `field` (a dotted path), `op`
    ///   (`eq ne gt ge lt le in contains present`), `value` (any TOML value; an array for `in`,
    ///   none for `present`), `action`, and an optional `reason`.
    ///
    /// Actions are `auto`, `ask` and `deny`. A key a table does not know is an error; every
    /// error names its line when it has one. `examples/policy.toml` is a whole file.
    ///
    /// ```
    /// use tool_runtime::gates::Policy;
    ///
    /// let policy = Policy::from_toml_str(
    ///     r#"
    ///     [defaults]
    ///     write = "ask"
    ///
    ///     [tools.create_ticket]
    ///     action = "auto"
    ///
    ///     [[roles.trainee]]
    ///     tool = "create_ticket"
    ///     action = "ask"
    ///
    ///     [[rules]]
    ///     tool = "create_ticket"
    ///     field = "priority"
    ///     op = "eq"
    ///     value = "urgent"
    ///     action = "ask"
    ///     reason = "urgent tickets page the on-call team"
    ///     "#,
    /// )?;
    /// # let _ = policy;
    /// let error = Policy::from_toml_str("[tools.create_ticket]\nacton = \"ask\"\n").unwrap_err();
    /// assert_eq!(error.line, Some(2));
    /// assert!(error.to_string().starts_with("policy line 2: unknown field `acton`"));
    /// # Ok::<(), tool_runtime::gates::PolicyFileError>(())
    /// ```
    pub fn from_toml_str(text: &str) -> Result<Self, PolicyFileError> {
        let lines = Lines(text);
        let file: PolicyFile = toml::from_str(text).map_err(|error| {
            PolicyFileError::at(error.span().map(|span| lines.of(&span)), error.message())
        })?;
        file.into_policy(lines)
    }

    /// A policy from a TOML file; errors name the file and the line, and so do the
    /// [`BuildError`](crate::BuildError)s of its rules when the runtime is built.
    pub fn from_toml_file(path: impl AsRef<Path>) -> Result<Self, PolicyFileError> {
        let path = path.as_ref();
        let in_file = |error: PolicyFileError| PolicyFileError {
            file: Some(path.to_owned()),
            ..error
        };
        let text = std::fs::read_to_string(path).map_err(|error| {
            in_file(PolicyFileError::at(
                None,
                format!("cannot be read: {error}"),
            ))
        })?;
        let mut policy = Self::from_toml_str(&text).map_err(in_file)?;
        policy.file = Some(path.to_owned());
        Ok(policy)
    }
}

/// Byte offsets of the text to 1-based lines.
#[derive(Clone, Copy)]
struct Lines<'a>(&'a str);

impl Lines<'_> {
    fn of(&self, span: &Range<usize>) -> usize {
        let bytes = self.0.as_bytes();
        let before = bytes.get(..span.start).unwrap_or(bytes);
        before.iter().filter(|byte| **byte == b'\n').count() + 1
    }
}

/// The file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    #[serde(default)]
    defaults: Defaults,
    #[serde(default)]
    tools: BTreeMap<Spanned<String>, ToolTable>,
    #[serde(default)]
    roles: BTreeMap<String, RoleTables>,
    #[serde(default)]
    rules: Vec<Spanned<RuleTable>>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Defaults {
    read: Option<Action>,
    write: Option<Action>,
    destructive: Option<Action>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolTable {
    action: Option<Action>,
    reason: Option<Spanned<String>>,
    #[serde(default)]
    roles: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoleTable {
    tool: Option<String>,
    action: Action,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleTable {
    tool: String,
    field: Spanned<String>,
    op: Spanned<Compare>,
    value: Option<Spanned<toml::Value>>,
    action: Action,
    reason: Option<String>,
}

/// A role's overrides: an array of tables (`[[roles.admin]]`), each with where it starts. A
/// single table (`[roles.admin]`) is refused with a message that says how to write it.
struct RoleTables(Vec<Spanned<RoleTable>>);

impl<'de> Deserialize<'de> for RoleTables {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Tables;

        impl<'de> Visitor<'de> for Tables {
            type Value = RoleTables;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of tables, each written `[[roles.NAME]]` (two brackets)")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut tables = Vec::new();
                while let Some(table) = seq.next_element()? {
                    tables.push(table);
                }
                Ok(RoleTables(tables))
            }
        }

        deserializer.deserialize_seq(Tables)
    }
}

impl PolicyFile {
    fn into_policy(self, lines: Lines<'_>) -> Result<Policy, PolicyFileError> {
        let mut policy = Policy::default();
        let levels = [
            self.defaults.read,
            self.defaults.write,
            self.defaults.destructive,
        ];
        for (default, level) in policy.defaults.iter_mut().zip(levels) {
            if let Some(action) = level {
                *default = action;
            }
        }

        for (name, table) in self.tools {
            let line = lines.of(&name.span());
            if let (None, Some(reason)) = (table.action, &table.reason) {
                return Err(PolicyFileError::at(
                    Some(lines.of(&reason.span())),
                    format!(
                        "`reason` for `{}` needs an `action` (the reason is shown when it asks or denies)",
                        name.get_ref()
                    ),
                ));
            }
            policy.tools.insert(
                name.into_inner(),
                ToolRule {
                    action: table.action,
                    reason: table.reason.map(Spanned::into_inner),
                    roles: table.roles,
                    line: Some(line),
                },
            );
        }

        for (role, RoleTables(tables)) in self.roles {
            for table in tables {
                let line = lines.of(&table.span());
                let table = table.into_inner();
                policy.roles.push(RoleRule {
                    role: role.clone(),
                    tool: table.tool,
                    action: table.action,
                    line: Some(line),
                });
            }
        }

        for rule in self.rules {
            let line = lines.of(&rule.span());
            policy.rules.push(rule.into_inner().into_rule(line, lines)?);
        }
        Ok(policy)
    }
}

impl RuleTable {
    fn into_rule(self, line: usize, lines: Lines<'_>) -> Result<Rule, PolicyFileError> {
        let compare = *self.op.get_ref();
        let op = compare.as_str();
        let path = self.field.get_ref();
        let field_line = lines.of(&self.field.span());
        let mut value_line = lines.of(&self.op.span());
        if path.split('.').any(str::is_empty) {
            return Err(PolicyFileError::at(
                Some(field_line),
                format!("`field` {path:?} is not a dotted path like `amount` or `address.country`"),
            ));
        }
        let value = match (compare, self.value) {
            (Compare::Present, None) => Value::Null,
            (Compare::Present, Some(value)) => {
                return Err(PolicyFileError::at(
                    Some(lines.of(&value.span())),
                    "`op = \"present\"` takes no `value`",
                ));
            }
            (_, None) => {
                return Err(PolicyFileError::at(
                    Some(lines.of(&self.op.span())),
                    format!("`op = \"{op}\"` needs a `value`"),
                ));
            }
            (_, Some(value)) => {
                value_line = lines.of(&value.span());
                let at = |message| PolicyFileError::at(Some(value_line), message);
                let value = json_of(value.into_inner()).map_err(at)?;
                check_value(compare, &value).map_err(at)?;
                value
            }
        };
        let reason = self.reason.unwrap_or_else(|| {
            let condition = match compare {
                Compare::Present => format!("`{path}` is present"),
                _ => format!("`{path}` {} {value}", op_symbol(compare)),
            };
            format!(
                "the policy says `{}` for `{}` when {condition}",
                self.action, self.tool
            )
        });
        Ok(Rule {
            tool: self.tool,
            condition: Condition::Field {
                path: self.field.into_inner(),
                compare,
                value,
                read: None,
            },
            action: self.action,
            reason,
            line: Some(line),
            field_line: Some(field_line),
            value_line: Some(value_line),
        })
    }
}

/// Refuses a value the comparison could never hold for.
fn check_value(compare: Compare, value: &Value) -> Result<(), String> {
    let op = compare.as_str();
    match compare {
        Compare::In if !value.is_array() => Err(format!(
            "`op = \"in\"` needs an array `value`, like `[\"a\", \"b\"]`; got {value}"
        )),
        Compare::Gt | Compare::Ge | Compare::Lt | Compare::Le
            if !(value.is_number() || value.is_string()) =>
        {
            Err(format!(
                "`op = \"{op}\"` compares numbers or strings; got {value}"
            ))
        }
        _ => Ok(()),
    }
}

/// A TOML value as JSON: datetimes become the string they are written as.
fn json_of(value: toml::Value) -> Result<Value, String> {
    Ok(match value {
        toml::Value::String(text) => Value::String(text),
        toml::Value::Integer(number) => Value::from(number),
        toml::Value::Float(number) => serde_json::Number::from_f64(number)
            .map(Value::Number)
            .ok_or_else(|| format!("`value` {number} is not a number JSON can hold"))?,
        toml::Value::Boolean(flag) => Value::Bool(flag),
        toml::Value::Datetime(datetime) => Value::String(datetime.to_string()),
        toml::Value::Array(items) => {
            Value::Array(items.into_iter().map(json_of).collect::<Result<_, _>>()?)
        }
        toml::Value::Table(table) => Value::Object(
            table
                .into_iter()
                .map(|(key, value)| Ok((key, json_of(value)?)))
                .collect::<Result<_, String>>()?,
        ),
    })
}

const fn op_symbol(compare: Compare) -> &'static str {
    match compare {
        Compare::Eq => "=",
        Compare::Ne => "!=",
        Compare::Gt => ">",
        Compare::Ge => ">=",
        Compare::Lt => "<",
        Compare::Le => "<=",
        Compare::In => "is one of",
        Compare::Contains => "contains",
        Compare::Present => "is present",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tool_core::{RiskLevel, ToolSpec};

    use super::*;
    use crate::session::Principal;

    fn parse(text: &str) -> Policy {
        match Policy::from_toml_str(text) {
            Ok(policy) => policy,
            Err(error) => panic!("{error}"),
        }
    }

    fn refused(text: &str) -> PolicyFileError {
        match Policy::from_toml_str(text) {
            Ok(policy) => panic!("accepted: {policy:?}"),
            Err(error) => error,
        }
    }

    fn field(rule: &Rule) -> (&str, Compare, &Value) {
        match &rule.condition {
            Condition::Field {
                path,
                compare,
                value,
                ..
            } => (path, *compare, value),
            Condition::Predicate(_) => panic!("a predicate from a file"),
        }
    }

    fn spec(name: &'static str, risk: RiskLevel) -> ToolSpec {
        ToolSpec::new(name, "", json!({"type": "object"})).with_risk(risk)
    }

    #[test]
    fn an_empty_file_is_the_default_policy() {
        let policy = parse("# nothing yet\n");
        assert_eq!(policy.defaults, Policy::default().defaults);
        assert!(policy.tools.is_empty() && policy.roles.is_empty() && policy.rules.is_empty());
    }

    #[test]
    fn defaults_per_risk_level_and_omitted_levels_keep_theirs() {
        let policy = parse("[defaults]\nwrite = \"ask\"\n");
        assert_eq!(policy.defaults, [Action::Auto, Action::Ask, Action::Ask]);
        let policy =
            parse("[defaults]\nread = \"ask\"\nwrite = \"deny\"\ndestructive = \"deny\"\n");
        assert_eq!(policy.defaults, [Action::Ask, Action::Deny, Action::Deny]);
        let verdict = policy.decide(&spec("x", RiskLevel::Write), None, None);
        assert_eq!(verdict.action, Action::Deny);
    }

    #[test]
    fn tools_with_action_reason_roles_and_line() {
        let policy = parse(
            "# tools\n\
             [tools.create_ticket]\n\
             action = \"ask\"\n\
             reason = \"tickets reach a person\"\n\
             roles = [\"agent\"]\n\
             \n\
             [tools.search_orders]\n\
             action = \"deny\"\n\
             \n\
             [tools.get_order_status]\n\
             roles = [\"agent\", \"billing\"]\n",
        );
        let ticket = &policy.tools["create_ticket"];
        assert_eq!(ticket.action, Some(Action::Ask));
        assert_eq!(ticket.reason.as_deref(), Some("tickets reach a person"));
        assert_eq!(ticket.roles, ["agent"]);
        assert_eq!(ticket.line, Some(2));
        let search = &policy.tools["search_orders"];
        assert_eq!(
            (search.action, search.reason.as_deref()),
            (Some(Action::Deny), None)
        );
        assert_eq!(search.line, Some(7));
        let status = &policy.tools["get_order_status"];
        assert_eq!((status.action, status.line), (None, Some(10)));
        assert_eq!(status.roles, ["agent", "billing"]);

        let ticket_spec = spec("create_ticket", RiskLevel::Write);
        let verdict = policy.decide(&ticket_spec, None, None);
        assert_eq!(verdict.action, Action::Ask);
        assert_eq!(verdict.reason(&ticket_spec), "tickets reach a person");
        let status_spec = spec("get_order_status", RiskLevel::Read);
        let agent = Principal::new("ada").with_role("agent");
        let missing = policy.missing_role(&status_spec, Some(&agent));
        assert_eq!(
            missing.map(|missing| missing.role).as_deref(),
            Some("billing")
        );
    }

    #[test]
    fn tools_written_as_dotted_keys_or_inline_tables() {
        let policy = parse(
            "tools.a.action = \"ask\"\n\
             tools.b = { action = \"deny\", reason = \"never\" }\n",
        );
        assert_eq!(policy.tools["a"].line, Some(1));
        assert_eq!(policy.tools["b"].line, Some(2));
        assert_eq!(policy.tools["b"].reason.as_deref(), Some("never"));
    }

    #[test]
    fn role_overrides_for_one_tool_or_every_tool() {
        let policy = parse(
            "[[roles.admin]]\n\
             tool = \"issue_refund\"\n\
             action = \"auto\"\n\
             \n\
             [[roles.admin]]\n\
             tool = \"create_ticket\"\n\
             action = \"ask\"\n\
             \n\
             [[roles.trainee]]\n\
             action = \"deny\"\n",
        );
        let roles: Vec<_> = policy
            .roles
            .iter()
            .map(|rule| {
                (
                    rule.role.as_str(),
                    rule.tool.as_deref(),
                    rule.action,
                    rule.line,
                )
            })
            .collect();
        assert_eq!(
            roles,
            [
                ("admin", Some("issue_refund"), Action::Auto, Some(1)),
                ("admin", Some("create_ticket"), Action::Ask, Some(5)),
                ("trainee", None, Action::Deny, Some(9)),
            ]
        );
        let trainee = Principal::new("bo").with_role("trainee");
        let verdict = policy.decide(&spec("anything", RiskLevel::Read), Some(&trainee), None);
        assert_eq!(verdict.action, Action::Deny);
    }

    #[test]
    fn a_role_written_as_a_single_table_says_how_to_write_it() {
        let error = refused("\n[roles.admin]\naction = \"ask\"\n");
        assert_eq!(error.line, Some(2));
        assert!(
            error.message.contains("[[roles.NAME]]"),
            "{}",
            error.message
        );
    }

    #[test]
    fn rules_read_every_op_with_its_value_and_line() {
        let ops = [
            ("eq", "\"FR\"", Compare::Eq, json!("FR")),
            ("ne", "\"FR\"", Compare::Ne, json!("FR")),
            ("gt", "100", Compare::Gt, json!(100)),
            ("ge", "100.5", Compare::Ge, json!(100.5)),
            ("lt", "\"m\"", Compare::Lt, json!("m")),
            ("le", "-3", Compare::Le, json!(-3)),
            (
                "in",
                "[\"FR\", 2, true]",
                Compare::In,
                json!(["FR", 2, true]),
            ),
            ("contains", "\"urgent\"", Compare::Contains, json!("urgent")),
            (
                "eq",
                "{ a = 1, b = [2] }",
                Compare::Eq,
                json!({"a": 1, "b": [2]}),
            ),
        ];
        for (op, value, compare, expected) in ops {
            let text = format!(
                "\n[[rules]]\ntool = \"t\"\nfield = \"a.b\"\nop = \"{op}\"\nvalue = {value}\naction = \"ask\"\n"
            );
            let policy = parse(&text);
            let [rule] = policy.rules.as_slice() else {
                panic!("one rule: {policy:?}")
            };
            assert_eq!(field(rule), ("a.b", compare, &expected), "{op}");
            assert_eq!(
                (rule.tool.as_str(), rule.action, rule.line),
                ("t", Action::Ask, Some(2))
            );
        }
        let policy = parse(
            "[[rules]]\ntool = \"t\"\nfield = \"note\"\nop = \"present\"\naction = \"deny\"\nreason = \"no notes\"\n",
        );
        assert_eq!(
            field(&policy.rules[0]),
            ("note", Compare::Present, &Value::Null)
        );
        assert_eq!(policy.rules[0].reason, "no notes");
    }

    #[test]
    fn rules_decide_as_written() {
        let policy = parse(
            "[[rules]]\n\
             tool = \"refund\"\n\
             field = \"amount\"\n\
             op = \"gt\"\n\
             value = 100\n\
             action = \"ask\"\n\
             reason = \"refunds over 100 need a person\"\n\
             \n\
             [[rules]]\n\
             tool = \"refund\"\n\
             field = \"address.country\"\n\
             op = \"in\"\n\
             value = [\"KP\", \"IR\"]\n\
             action = \"deny\"\n\
             \n\
             [[rules]]\n\
             tool = \"refund\"\n\
             field = \"note\"\n\
             op = \"present\"\n\
             action = \"ask\"\n",
        );
        let refund = spec("refund", RiskLevel::Write);
        let decide = |arguments: Value| policy.decide_value(&refund, None, Some(&arguments));
        assert_eq!(decide(json!({"amount": 50})).action, Action::Auto);
        let over = decide(json!({"amount": 150.5}));
        assert_eq!(over.action, Action::Ask);
        assert_eq!(over.reason(&refund), "refunds over 100 need a person");
        let embargo = decide(json!({"amount": 5, "address": {"country": "KP"}}));
        assert_eq!(embargo.action, Action::Deny);
        let noted = decide(json!({"amount": 5, "note": "hi"}));
        assert_eq!(noted.action, Action::Ask);
        assert_eq!(
            noted.reason(&refund),
            "the policy says `ask` for `refund` when `note` is present"
        );
        // Rules over fields read those fields, not the whole value.
        assert!(!policy.reads_the_value("refund"));
    }

    #[test]
    fn a_rule_without_reason_gets_one_naming_its_condition() {
        let policy = parse(
            "[[rules]]\ntool = \"refund\"\nfield = \"amount\"\nop = \"ge\"\nvalue = 1000\naction = \"deny\"\n",
        );
        assert_eq!(
            policy.rules[0].reason,
            "the policy says `deny` for `refund` when `amount` >= 1000"
        );
    }

    #[test]
    fn datetimes_are_compared_as_the_string_they_are_written_as() {
        let policy = parse(
            "[[rules]]\ntool = \"t\"\nfield = \"when\"\nop = \"lt\"\nvalue = 2024-01-01T00:00:00Z\naction = \"ask\"\n\n\
             [[rules]]\ntool = \"t\"\nfield = \"day\"\nop = \"eq\"\nvalue = 2024-01-01\naction = \"ask\"\n",
        );
        assert_eq!(field(&policy.rules[0]).2, &json!("2024-01-01T00:00:00Z"));
        assert_eq!(field(&policy.rules[1]).2, &json!("2024-01-01"));
        assert_eq!(policy.rules[1].line, Some(8));
    }

    #[test]
    fn every_tool_name_read_is_in_named_tools_with_its_line() {
        let policy = parse(
            "[tools.a]\naction = \"ask\"\n\n\
             [[roles.admin]]\ntool = \"b\"\naction = \"deny\"\n\n\
             [[roles.admin]]\naction = \"ask\"\n\n\
             [[rules]]\ntool = \"c\"\nfield = \"x\"\nop = \"present\"\naction = \"ask\"\n",
        );
        let named: Vec<_> = policy.named_tools().collect();
        assert_eq!(named, [("a", Some(1)), ("b", Some(4)), ("c", Some(11))]);
    }

    #[test]
    fn malformed_toml_names_its_line() {
        let error =
            refused("[defaults]\nread = \"auto\"\n\n[tools.create_ticket\naction = \"ask\"\n");
        assert_eq!(error.line, Some(4));
        assert!(
            error.message.contains("unclosed table"),
            "{}",
            error.message
        );
        let error = refused("[defaults]\nread = auto\n");
        assert_eq!(error.line, Some(2));
    }

    #[test]
    fn a_duplicate_tool_names_its_line() {
        let error = refused("[tools.a]\naction = \"ask\"\n\n[tools.a]\naction = \"deny\"\n");
        assert_eq!(error.line, Some(4));
    }

    #[test]
    fn an_unknown_field_names_its_line() {
        let error = refused(
            "[defaults]\nread = \"auto\"\n\n[tools.create_ticket]\nreason = \"x\"\n\nacton = \"ask\"\n",
        );
        assert_eq!(error.line, Some(7));
        assert!(
            error
                .message
                .starts_with("unknown field `acton`, expected one of `action`"),
            "{}",
            error.message
        );
        assert_eq!(
            error.to_string(),
            format!("policy line 7: {}", error.message)
        );

        for (text, line) in [
            ("[defualts]\nread = \"ask\"\n", 1),
            ("[defaults]\nreed = \"ask\"\n", 2),
            ("\n[[roles.admin]]\nactoin = \"ask\"\n", 3),
            (
                "[[rules]]\ntool = \"t\"\nfield = \"x\"\nop = \"present\"\naction = \"ask\"\nvalues = 1\n",
                6,
            ),
        ] {
            let error = refused(text);
            assert_eq!(error.line, Some(line), "{text}: {error}");
            assert!(error.message.starts_with("unknown field"), "{error}");
        }
    }

    #[test]
    fn an_unknown_action_or_op_names_its_line() {
        let error = refused("[tools.create_ticket]\n\naction = \"alow\"\n");
        assert_eq!(error.line, Some(3));
        assert_eq!(
            error.message,
            "unknown variant `alow`, expected one of `auto`, `ask`, `deny`"
        );
        let error = refused("[defaults]\ndestructive = \"yes\"\n");
        assert_eq!(error.line, Some(2));
        let error = refused(
            "[[rules]]\ntool = \"t\"\nfield = \"x\"\nop = \"gte\"\nvalue = 1\naction = \"ask\"\n",
        );
        assert_eq!(error.line, Some(4));
        assert!(
            error.message.starts_with("unknown variant `gte`"),
            "{error}"
        );
    }

    #[test]
    fn a_missing_value_names_the_line_of_its_op() {
        let error = refused(
            "[tools.t]\naction = \"auto\"\n\n[[rules]]\ntool = \"t\"\nfield = \"amount\"\nop = \"gt\"\naction = \"ask\"\n",
        );
        assert_eq!(error.line, Some(7));
        assert_eq!(error.message, "`op = \"gt\"` needs a `value`");
        assert_eq!(
            error.to_string(),
            "policy line 7: `op = \"gt\"` needs a `value`"
        );
    }

    #[test]
    fn values_an_op_cannot_use_name_their_line() {
        let rule = |op: &str, value: &str| {
            refused(&format!(
                "[[rules]]\ntool = \"t\"\nfield = \"x\"\nop = \"{op}\"\n{value}\naction = \"ask\"\n"
            ))
        };
        let error = rule("in", "value = \"FR\"");
        assert_eq!(error.line, Some(5));
        assert!(error.message.contains("needs an array"), "{error}");
        let error = rule("present", "value = 1");
        assert_eq!(error.line, Some(5));
        assert!(error.message.contains("takes no `value`"), "{error}");
        let error = rule("gt", "value = true");
        assert_eq!(error.line, Some(5));
        assert!(error.message.contains("numbers or strings"), "{error}");
        let error = rule("eq", "value = nan");
        assert_eq!(error.line, Some(5));
        let error = refused(
            "[[rules]]\ntool = \"t\"\nfield = \"a..b\"\nop = \"present\"\naction = \"ask\"\n",
        );
        assert_eq!(error.line, Some(3));
        let error = refused("\n[[rules]]\ntool = \"t\"\nfield = \"x\"\nop = \"present\"\n");
        assert_eq!(error.line, Some(2));
        assert_eq!(error.message, "missing field `action`");
    }

    #[test]
    fn a_reason_needs_an_action() {
        let error = refused("[tools.t]\nroles = [\"agent\"]\nreason = \"why\"\n");
        assert_eq!(error.line, Some(3));
        assert!(error.message.contains("needs an `action`"), "{error}");
    }

    #[test]
    fn a_file_names_itself_in_its_errors() {
        let dir = std::env::temp_dir().join(format!("policy-file-test-{}", std::process::id()));
        let created = std::fs::create_dir_all(&dir);
        assert!(created.is_ok(), "{created:?}");
        let path = dir.join("policy.toml");
        let written = std::fs::write(&path, "[tools.create_ticket]\nacton = \"ask\"\n");
        assert!(written.is_ok(), "{written:?}");
        let error = Policy::from_toml_file(&path).err();
        let _ = std::fs::remove_dir_all(&dir);
        let Some(error) = error else {
            panic!("accepted")
        };
        assert_eq!(error.file.as_deref(), Some(path.as_path()));
        assert_eq!(error.line, Some(2));
        assert_eq!(
            error.to_string(),
            format!("{} line 2: {}", path.display(), error.message)
        );

        let missing = dir.join("missing.toml");
        let Err(error) = Policy::from_toml_file(&missing) else {
            panic!("read a missing file")
        };
        assert_eq!(error.line, None);
        assert!(
            error
                .to_string()
                .starts_with(&format!("{}: cannot be read: ", missing.display()))
        );
    }

    #[test]
    fn the_support_desk_example_policy_parses() {
        let policy = parse(include_str!("../../../examples/policy.toml"));
        assert_eq!(policy.defaults, [Action::Auto, Action::Ask, Action::Ask]);
        let action = |tool: &str| policy.tools.get(tool).and_then(|rule| rule.action);
        for tool in ["get_order_status", "search_orders", "search_knowledge_base"] {
            assert_eq!(action(tool), Some(Action::Auto), "{tool}");
        }
        assert_eq!(action("create_ticket"), Some(Action::Auto));
        assert_eq!(action("escalate_to_human"), Some(Action::Ask));
        assert!(!policy.roles.is_empty() && !policy.rules.is_empty());
        let names: Vec<_> = policy.named_tools().map(|(name, _)| name).collect();
        let known = [
            "get_order_status",
            "search_orders",
            "search_knowledge_base",
            "create_ticket",
            "escalate_to_human",
            "fetch_shipping_label",
            "export_order_history",
            "get_integration_config",
            "cancel_order",
            "issue_refund",
        ];
        assert!(names.iter().all(|name| known.contains(name)), "{names:?}");
        assert!(policy.named_tools().all(|(_, line)| line.is_some()));

        let ticket = spec("create_ticket", RiskLevel::Write);
        let urgent = json!({"subject": "box crushed", "priority": "urgent"});
        assert_eq!(
            policy.decide_value(&ticket, None, Some(&urgent)).action,
            Action::Ask
        );
        let normal = json!({"subject": "box crushed", "priority": "normal"});
        assert_eq!(
            policy.decide_value(&ticket, None, Some(&normal)).action,
            Action::Auto
        );
        let refund = json!({"subject": "refund for A-1024", "priority": "normal"});
        assert_eq!(
            policy.decide_value(&ticket, None, Some(&refund)).action,
            Action::Ask
        );
        let trainee = Principal::new("bo").with_role("trainee");
        let verdict = policy.decide_value(&ticket, Some(&trainee), Some(&normal));
        assert_eq!(verdict.action, Action::Ask);
        let config = spec("get_integration_config", RiskLevel::Read);
        let missing = policy.missing_role(&config, Some(&trainee));
        assert_eq!(
            missing.map(|missing| missing.role).as_deref(),
            Some("supervisor")
        );
    }
}
