//! Policy rules over arguments are checked against the tool's input schema when the runtime
//! is built: a field the tool does not have, or a value that can never compare with the
//! field, is a build error naming the rule (its line in a file), never a rule that silently
//! never holds.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tests::report::kinds;
use tool_runtime::dynamic::DynamicTool;
use tool_runtime::gates::{Action, Compare, Policy};
use tool_runtime::{BuildError, RunContext, Runtime, Session, ToolCall, tool, tools};

/// What ran.
#[derive(Default)]
pub struct Bank {
    transfers: AtomicU32,
}

/// Where the money goes.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Address {
    /// The city.
    pub city: String,
    /// ISO country code.
    pub country: String,
}

/// Who receives the money.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Beneficiary {
    /// Their name.
    pub name: String,
    /// Their address.
    pub address: Address,
}

/// A note for the bank.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Memo {
    /// What the note says.
    pub text: String,
}

/// How fast the money moves.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Speed {
    /// A day or two.
    Standard,
    /// At once, for a fee.
    Instant,
}

/// Moves money.
#[tool(stateful)]
#[allow(clippy::too_many_arguments)]
async fn transfer(
    ctx: RunContext<Bank>,
    /// How much.
    amount: f64,
    /// The account.
    to: String,
    /// Who receives it.
    beneficiary: Beneficiary,
    /// A note, when any.
    memo: Option<Memo>,
    /// How fast.
    #[default = Speed::Standard]
    speed: Speed,
    /// Labels.
    #[default = Vec::new()]
    tags: Vec<String>,
    /// How many parts, when split.
    parts: Option<u32>,
    /// Anything the caller adds.
    #[default = BTreeMap::new()]
    labels: BTreeMap<String, u32>,
    /// Free-form data.
    #[default = Value::Null]
    extra: Value,
) -> String {
    ctx.deps().transfers.fetch_add(1, Ordering::SeqCst);
    let _ = (beneficiary, memo, speed, tags, parts, labels, extra);
    format!("sent {amount} to {to}")
}

fn built(policy: Policy) -> Result<(Runtime<Bank>, Arc<Bank>), BuildError> {
    let bank = Arc::new(Bank::default());
    Runtime::builder_shared(Arc::clone(&bank))
        .inventory(false)
        .tools(tools![transfer])
        .policy(policy)
        .build()
        .map(|runtime| (runtime, bank))
}

fn refused(policy: Policy) -> BuildError {
    match built(policy) {
        Ok(_) => panic!("a rule that can never hold built"),
        Err(error) => error,
    }
}

fn parse(text: &str) -> Policy {
    match Policy::from_toml_str(text) {
        Ok(policy) => policy,
        Err(error) => panic!("{error}"),
    }
}

/// One `[[rules]]` table after a `[defaults]` table: its `field` is on line 6, its `value`
/// on line 8.
fn file_rule(field: &str, op: &str, value: &str) -> String {
    format!(
        "[defaults]\nwrite = \"auto\"\n\n[[rules]]\ntool = \"transfer\"\nfield = \"{field}\"\nop = \"{op}\"\n{value}\naction = \"deny\"\n"
    )
}

fn arguments(amount: f64) -> Value {
    json!({
        "amount": amount,
        "to": "FR76 3000",
        "beneficiary": {"name": "Bo", "address": {"city": "Lyon", "country": "FR"}},
    })
}

fn with(mut arguments: Value, key: &str, value: Value) -> Value {
    if let Some(object) = arguments.as_object_mut() {
        object.insert(key.to_owned(), value);
    }
    arguments
}

// ---- fields the tool does not have ---------------------------------------------------------

#[test]
fn a_misspelt_field_in_a_policy_file_fails_the_build_with_its_line_and_the_nearest_field() {
    let policy = parse(&file_rule("amout", "gt", "value = 1000"));
    let error = refused(policy);
    let BuildError::UnknownField {
        tool,
        field,
        nearest,
        ..
    } = &error
    else {
        panic!("expected an unknown field, got {error}")
    };
    assert_eq!((tool.as_str(), field.as_str()), ("transfer", "amout"));
    assert_eq!(nearest.as_deref(), Some("amount"));
    assert_eq!(
        error.to_string(),
        "policy line 6: rule for `transfer` names field `amout`, which the tool's arguments do \
         not have (fields: amount, to, beneficiary, memo, speed, tags, parts, labels, extra); \
         did you mean `amount`?"
    );
}

#[test]
fn a_policy_read_from_a_file_names_the_file_in_the_build_error() {
    let dir = std::env::temp_dir().join(format!("policy-rules-test-{}", std::process::id()));
    let created = std::fs::create_dir_all(&dir);
    assert!(created.is_ok(), "{created:?}");
    let path = dir.join("policy.toml");
    let written = std::fs::write(&path, file_rule("amout", "gt", "value = 1000"));
    assert!(written.is_ok(), "{written:?}");
    let policy = Policy::from_toml_file(&path);
    let _ = std::fs::remove_dir_all(&dir);
    let policy = match policy {
        Ok(policy) => policy,
        Err(error) => panic!("{error}"),
    };
    let message = refused(policy).to_string();
    assert!(
        message.starts_with(&format!(
            "{} line 6: rule for `transfer` names field `amout`",
            path.display()
        )),
        "{message}"
    );
    assert!(message.ends_with("did you mean `amount`?"), "{message}");
}

#[test]
fn a_misspelt_field_in_a_rule_written_in_code_names_the_rule() {
    let policy = Policy::new()
        .rule_field(
            "transfer",
            "to",
            Compare::Eq,
            "X",
            Action::Ask,
            "one account is watched",
        )
        .rule_field(
            "transfer",
            "amout",
            Compare::Gt,
            1000,
            Action::Deny,
            "over 1000: a manager decides",
        );
    let error = refused(policy);
    assert!(
        matches!(&error, BuildError::UnknownField { field, .. } if field == "amout"),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        "the policy's rule 2 (\"over 1000: a manager decides\"): rule for `transfer` names \
         field `amout`, which the tool's arguments do not have (fields: amount, to, \
         beneficiary, memo, speed, tags, parts, labels, extra); did you mean `amount`?"
    );
}

#[test]
fn a_misspelt_nested_field_names_the_fields_where_the_path_breaks_off() {
    let policy = parse(&file_rule(
        "beneficiary.adress.country",
        "eq",
        "value = \"KP\"",
    ));
    let error = refused(policy);
    let message = error.to_string();
    assert!(
        message.contains("(fields of `beneficiary`: name, address)"),
        "{message}"
    );
    assert!(
        message.ends_with("did you mean `beneficiary.address.country`?"),
        "{message}"
    );

    let policy = parse(&file_rule("memo.txt", "contains", "value = \"urgent\""));
    let message = refused(policy).to_string();
    assert!(message.contains("did you mean `memo.text`?"), "{message}");
}

#[test]
fn a_path_through_a_value_without_fields_is_refused() {
    let message = refused(parse(&file_rule("amount.cents", "gt", "value = 5"))).to_string();
    assert!(
        message.contains("`amount` is a number, which has no fields"),
        "{message}"
    );
    // Rules read fields by name: they do not look inside arrays.
    let message = refused(parse(&file_rule("tags.first", "eq", "value = \"vip\""))).to_string();
    assert!(message.contains("`tags` is an array"), "{message}");
    assert!(message.contains("contains"), "{message}");
}

#[test]
fn a_misspelt_field_of_a_dynamic_tool_fails_the_build_too() {
    let dynamic = || {
        DynamicTool::builder(
            "pay",
            "Pays.",
            json!({
                "type": "object",
                "properties": {
                    "sum": {"type": "integer"},
                    "payee": {"type": "object", "properties": {"iban": {"type": "string"}}}
                },
                "required": ["sum"]
            }),
        )
        .handler(|_, _| async { Ok(json!("paid")) })
        .build()
    };
    let build = |policy: Policy| {
        Runtime::builder(Bank::default())
            .inventory(false)
            .dynamic_tool(dynamic())
            .and_then(|builder| builder.policy(policy).build())
            .map(|_| ())
    };
    let rule = |field: &str, compare: Compare, value: Value| {
        Policy::new().rule_field("pay", field, compare, value, Action::Deny, "no")
    };
    let error = build(rule("summ", Compare::Gt, json!(10)));
    assert!(
        matches!(&error, Err(BuildError::UnknownField { nearest: Some(nearest), .. }) if nearest == "sum"),
        "{error:?}"
    );
    let error = build(rule("payee.iban", Compare::Gt, json!(10)));
    assert!(
        matches!(&error, Err(BuildError::RuleMismatch { .. })),
        "{error:?}"
    );
    assert_eq!(build(rule("sum", Compare::Gt, json!(10))), Ok(()));
    assert_eq!(
        build(rule("payee.iban", Compare::Contains, json!("XX"))),
        Ok(())
    );
}

// ---- values that cannot compare with the field ---------------------------------------------

#[test]
fn a_value_of_another_type_than_the_field_fails_the_build() {
    let error = refused(parse(&file_rule("amount", "gt", "value = \"1000\"")));
    assert!(
        matches!(&error, BuildError::RuleMismatch { field, compare: Compare::Gt, .. } if field == "amount"),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        "policy line 8: rule for `transfer` compares `amount` (a number) with \"1000\" (a string) using `gt`"
    );

    for (field, op, value, says) in [
        (
            "amount",
            "lt",
            "value = \"5\"",
            "(a number) with \"5\" (a string) using `lt`",
        ),
        (
            "to",
            "ge",
            "value = 3",
            "(a string) with 3 (a number) using `ge`",
        ),
        (
            "amount",
            "eq",
            "value = \"1000\"",
            "(a number) with \"1000\" (a string) using `eq`",
        ),
        (
            "to",
            "eq",
            "value = true",
            "(a string) with true (a boolean) using `eq`",
        ),
        (
            "parts",
            "le",
            "value = \"2\"",
            "(a number) with \"2\" (a string) using `le`",
        ),
        (
            "amount",
            "in",
            "value = [100, \"200\"]",
            "(a number) with \"200\" (a string) using `in`",
        ),
        (
            "tags",
            "contains",
            "value = 3",
            "(an array of strings) with 3 (a number) using `contains`",
        ),
        (
            "beneficiary",
            "eq",
            "value = \"Bo\"",
            "(an object) with \"Bo\" (a string) using `eq`",
        ),
    ] {
        let message = refused(parse(&file_rule(field, op, value))).to_string();
        assert!(
            message.starts_with(&format!(
                "policy line 8: rule for `transfer` compares `{field}` "
            )),
            "{field} {op}: {message}"
        );
        assert!(message.contains(says), "{field} {op}: {message}");
    }
}

#[test]
fn contains_on_a_field_that_is_neither_a_string_nor_an_array_fails_the_build() {
    let message = refused(parse(&file_rule("amount", "contains", "value = 5"))).to_string();
    assert_eq!(
        message,
        "policy line 8: rule for `transfer` uses `contains` on `amount` (a number), which is \
         neither a string nor an array"
    );
    let message = refused(parse(&file_rule(
        "beneficiary",
        "contains",
        "value = \"Bo\"",
    )))
    .to_string();
    assert!(
        message.contains("neither a string nor an array"),
        "{message}"
    );
}

#[test]
fn a_value_an_enum_field_never_takes_fails_the_build() {
    let message = refused(parse(&file_rule("speed", "eq", "value = \"instnat\""))).to_string();
    assert!(
        message.contains("`speed` is one of \"standard\", \"instant\""),
        "{message}"
    );
    assert!(message.contains("did you mean \"instant\"?"), "{message}");
    let message = refused(parse(&file_rule(
        "speed",
        "in",
        "value = [\"instant\", \"express\"]",
    )))
    .to_string();
    assert!(message.contains("\"express\""), "{message}");
    let message = refused(parse(&file_rule("speed", "eq", "value = 1"))).to_string();
    assert!(message.contains("with 1 (a number)"), "{message}");
}

#[test]
fn rules_in_code_are_checked_as_rules_in_a_file() {
    let rule = |field: &str, compare: Compare, value: Value| {
        Policy::new().rule_field("transfer", field, compare, value, Action::Deny, "no")
    };
    for (field, compare, value) in [
        ("amount", Compare::Gt, json!("1000")),
        ("amount", Compare::Gt, json!(true)),
        ("amount", Compare::In, json!(1000)),
        ("amount", Compare::In, json!([])),
        ("amount", Compare::Contains, json!(1)),
        ("amount", Compare::Eq, json!(null)),
        ("to", Compare::Eq, json!(["a"])),
        ("speed", Compare::Eq, json!("fast")),
    ] {
        let error = refused(rule(field, compare, value.clone()));
        assert!(
            matches!(&error, BuildError::RuleMismatch { .. }),
            "{field} {compare:?} {value}: {error}"
        );
        assert!(
            error
                .to_string()
                .starts_with("the policy's rule 1 (\"no\"): rule for `transfer`"),
            "{error}"
        );
    }
}

// ---- rules that can hold still build and hold ----------------------------------------------

#[tokio::test]
async fn rules_over_nested_optional_enum_array_and_open_fields_build_and_hold() {
    let policy = parse(
        "[[rules]]\ntool = \"transfer\"\nfield = \"amount\"\nop = \"gt\"\nvalue = 1000\naction = \"deny\"\nreason = \"over 1000\"\n\n\
         [[rules]]\ntool = \"transfer\"\nfield = \"beneficiary.address.country\"\nop = \"in\"\nvalue = [\"KP\", \"IR\"]\naction = \"deny\"\nreason = \"embargo\"\n\n\
         [[rules]]\ntool = \"transfer\"\nfield = \"memo.text\"\nop = \"contains\"\nvalue = \"urgent\"\naction = \"deny\"\nreason = \"urgent memo\"\n\n\
         [[rules]]\ntool = \"transfer\"\nfield = \"speed\"\nop = \"eq\"\nvalue = \"instant\"\naction = \"deny\"\nreason = \"instant\"\n\n\
         [[rules]]\ntool = \"transfer\"\nfield = \"tags\"\nop = \"contains\"\nvalue = \"vip\"\naction = \"deny\"\nreason = \"vip\"\n\n\
         [[rules]]\ntool = \"transfer\"\nfield = \"parts\"\nop = \"ge\"\nvalue = 3\naction = \"deny\"\nreason = \"split\"\n\n\
         [[rules]]\ntool = \"transfer\"\nfield = \"labels.risk\"\nop = \"gt\"\nvalue = 7\naction = \"deny\"\nreason = \"risky\"\n\n\
         [[rules]]\ntool = \"transfer\"\nfield = \"extra.anything.deep\"\nop = \"eq\"\nvalue = \"x\"\naction = \"deny\"\nreason = \"extra\"\n\n\
         [[rules]]\ntool = \"transfer\"\nfield = \"memo\"\nop = \"present\"\naction = \"ask\"\n",
    )
    .rule(
        "transfer",
        |arguments| arguments["to"] == "closed",
        Action::Deny,
        "a predicate is not checked",
    );
    let (runtime, bank) = match built(policy) {
        Ok(built) => built,
        Err(error) => panic!("{error}"),
    };
    let base = arguments(50.0);
    let calls = [
        ("ok", base.clone()),
        ("over", arguments(1000.5)),
        (
            "embargo",
            with(
                base.clone(),
                "beneficiary",
                json!({"name": "Bo", "address": {"city": "X", "country": "KP"}}),
            ),
        ),
        (
            "memo",
            with(base.clone(), "memo", json!({"text": "very urgent"})),
        ),
        ("speed", with(base.clone(), "speed", json!("instant"))),
        ("tags", with(base.clone(), "tags", json!(["new", "vip"]))),
        ("parts", with(base.clone(), "parts", json!(3))),
        ("labels", with(base.clone(), "labels", json!({"risk": 8}))),
        (
            "extra",
            with(base.clone(), "extra", json!({"anything": {"deep": "x"}})),
        ),
        ("predicate", with(base.clone(), "to", json!("closed"))),
    ];
    let report = runtime
        .execute(
            &Session::new("s"),
            calls
                .iter()
                .map(|(id, arguments)| ToolCall::new(*id, "transfer", arguments.clone()))
                .collect::<Vec<_>>(),
        )
        .await;
    let mut expected = vec![Some("denied"); calls.len()];
    expected[0] = None;
    assert_eq!(kinds(&report), expected);
    assert_eq!(bank.transfers.load(Ordering::SeqCst), 1);
    let reason = report.observations()[1]
        .error()
        .map(|error| error.message().to_owned())
        .unwrap_or_default();
    assert!(reason.contains("over 1000"), "{reason}");
}

#[tokio::test]
async fn the_same_limit_written_in_code_builds_and_denies_a_transfer_over_it() {
    let policy = Policy::new().rule_field(
        "transfer",
        "amount",
        Compare::Gt,
        1000,
        Action::Deny,
        "over 1000: a manager decides",
    );
    let (runtime, bank) = match built(policy) {
        Ok(built) => built,
        Err(error) => panic!("{error}"),
    };
    let report = runtime
        .execute(
            &Session::new("s"),
            [
                ToolCall::new("1", "transfer", arguments(1000.0)),
                ToolCall::new("2", "transfer", arguments(1001.0)),
            ],
        )
        .await;
    assert_eq!(kinds(&report), [None, Some("denied")]);
    assert_eq!(bank.transfers.load(Ordering::SeqCst), 1);
}

#[test]
fn the_support_desk_policy_file_builds_against_its_tools() {
    let policy = Policy::from_toml_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/policy.toml"
    ));
    let policy = match policy {
        Ok(policy) => policy,
        Err(error) => panic!("{error}"),
    };
    let built = Runtime::builder(examples::support::SupportDeps::demo())
        .policy(policy)
        .build();
    assert!(built.is_ok(), "{:?}", built.err());
}
