//! Provider formats, from outside: the examples' catalog lowered for each target (golden
//! files), and round trips of each provider's documented response shape: calls in, executed,
//! results rendered back.

mod properties;

use expect_test::expect_file;
use serde_json::{Value, json};
use tool_runtime::providers::{Target, anthropic, gemini, mcp, openai};
use tool_runtime::{Arguments, Runtime, Session};

use examples::support::SupportDeps;

fn runtime() -> Runtime<SupportDeps> {
    Runtime::builder(SupportDeps::demo())
        .build()
        .unwrap_or_else(|error| panic!("{error}"))
}

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/providers/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{path}: {error}"))
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// The arguments of a call, as a value.
fn arguments(arguments: &Arguments) -> Value {
    match arguments {
        Arguments::Json(text) => serde_json::from_str(text).unwrap_or(Value::Null),
        Arguments::Value(value) => value.clone(),
    }
}

#[test]
fn the_examples_catalog_lowers_for_every_target_as_the_golden_files_say() {
    let runtime = runtime();
    let session = Session::new("golden");
    let lowered = |target| {
        runtime
            .lowered_catalog(&session, target)
            .unwrap_or_else(|error| panic!("{error}"))
    };
    let openai = lowered(Target::OpenAiStrict);
    expect_file!["golden/openai.json"].assert_eq(&pretty(&json!(openai::chat_tools(&openai))));
    expect_file!["golden/openai-responses.json"]
        .assert_eq(&pretty(&json!(openai::responses_tools(&openai))));
    expect_file!["golden/anthropic.json"].assert_eq(&pretty(&json!(anthropic::tools(&lowered(
        Target::Anthropic
    )))));
    expect_file!["golden/anthropic-strict.json"].assert_eq(&pretty(&json!(anthropic::tools(
        &lowered(Target::AnthropicStrict)
    ))));
    expect_file!["golden/gemini.json"]
        .assert_eq(&pretty(&json!(gemini::tools(&lowered(Target::Gemini)))));
    expect_file!["golden/gemini-parameters.json"].assert_eq(&pretty(&json!(gemini::tools(
        &lowered(Target::GeminiParameters)
    ))));
    let mcp_tools = mcp::tools(&runtime, &session).unwrap_or_else(|error| panic!("{error}"));
    expect_file!["golden/mcp.json"].assert_eq(&pretty(&json!(mcp_tools)));
}

#[test]
fn the_catalog_order_is_the_sorted_one_for_every_target() {
    let runtime = runtime();
    let session = Session::new("order");
    let names: Vec<String> = runtime
        .catalog(&session)
        .iter()
        .map(|spec| spec.name().to_owned())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    for target in Target::ALL {
        let catalog = runtime
            .lowered_catalog(&session, target)
            .unwrap_or_else(|error| panic!("{target}: {error}"));
        let lowered: Vec<&str> = catalog.tools().map(|tool| tool.name.as_str()).collect();
        assert_eq!(lowered, names, "{target}");
    }
}

#[tokio::test]
async fn openai_chat_calls_run_and_answer_as_tool_messages_in_call_order() {
    let runtime = runtime();
    let session = Session::new("openai");
    let catalog = runtime
        .lowered_catalog(&session, Target::OpenAiStrict)
        .unwrap_or_else(|error| panic!("{error}"));
    let calls = openai::calls_from_chat(&fixture("openai_chat.json"), &catalog)
        .unwrap_or_else(|error| panic!("{error}"));
    let ids: Vec<&str> = calls.iter().map(|call| &*call.id).collect();
    assert_eq!(
        ids,
        ["call_status", "call_ticket", "call_broken", "call_unknown"]
    );
    // A strict `null` for a parameter left out is the parameter left out: the default applies.
    assert_eq!(
        arguments(&calls[1].arguments),
        json!({"subject": "Parcel late", "order_id": "A-1024"})
    );
    assert_eq!(arguments(&calls[0].arguments).get("include_items"), None);
    // Malformed arguments reach the runtime as they were sent.
    assert_eq!(
        calls[2].arguments,
        Arguments::Json(r#"{"order_id": "A-10"#.to_owned())
    );

    let report = runtime.execute(&session, &calls).await;
    let messages = openai::chat_messages(&report);
    assert_eq!(messages.len(), 4);
    for (message, id) in messages.iter().zip(ids) {
        assert_eq!(message["role"], "tool");
        assert_eq!(message["tool_call_id"], id);
        assert!(message["content"].is_string(), "{message}");
    }
    assert!(
        report.observations()[0].is_success(),
        "{:?}",
        report.observations()[0]
    );
    assert_ne!(
        report.observations()[1].error_kind(),
        Some("invalid_arguments")
    );
    let broken: Value = serde_json::from_str(messages[2]["content"].as_str().unwrap_or_default())
        .unwrap_or(Value::Null);
    assert_eq!(broken["error"]["kind"], "invalid_arguments", "{broken}");
    let unknown: Value = serde_json::from_str(messages[3]["content"].as_str().unwrap_or_default())
        .unwrap_or(Value::Null);
    assert_eq!(unknown["error"]["kind"], "unknown_tool", "{unknown}");
}

#[tokio::test]
async fn openai_responses_calls_run_and_answer_as_function_call_outputs() {
    let runtime = runtime();
    let session = Session::new("responses");
    let catalog = runtime
        .lowered_catalog(&session, Target::OpenAiStrict)
        .unwrap_or_else(|error| panic!("{error}"));
    let calls = openai::calls_from_responses(&fixture("openai_responses.json"), &catalog)
        .unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(calls.len(), 2);
    assert_eq!(arguments(&calls[0].arguments), json!({"customer": "ada"}));
    let report = runtime.execute(&session, &calls).await;
    let items = openai::responses_items(&report);
    assert_eq!(items[0]["type"], "function_call_output");
    assert_eq!(items[0]["call_id"], "call_search");
    assert_eq!(items[1]["call_id"], "call_kb");
    assert!(
        report
            .observations()
            .iter()
            .all(|observation| observation.is_success()),
        "{report:?}"
    );
}

#[tokio::test]
async fn anthropic_tool_use_blocks_run_and_answer_as_tool_results_with_is_error() {
    let runtime = runtime();
    let session = Session::new("anthropic");
    let calls = anthropic::calls_from_message(&fixture("anthropic_message.json"))
        .unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(calls.len(), 2);
    let report = runtime.execute(&session, &calls).await;
    let message = anthropic::tool_results(&report);
    assert_eq!(message["role"], "user");
    let blocks = message["content"].as_array().cloned().unwrap_or_default();
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[0]["type"], "tool_result");
    assert_eq!(blocks[0]["tool_use_id"], "toolu_01");
    assert_eq!(blocks[0]["is_error"], false);
    assert_eq!(blocks[1]["tool_use_id"], "toolu_02");
    assert_eq!(blocks[1]["is_error"], true);
    let error: Value = serde_json::from_str(blocks[1]["content"].as_str().unwrap_or_default())
        .unwrap_or(Value::Null);
    assert_eq!(error["error"]["kind"], "invalid_arguments", "{error}");
}

#[tokio::test]
async fn gemini_function_calls_get_stable_ids_and_answer_as_function_responses() {
    let runtime = runtime();
    let session = Session::new("gemini");
    let response = fixture("gemini_response.json");
    let calls = gemini::calls_from_response(&response).unwrap_or_else(|error| panic!("{error}"));
    let again = gemini::calls_from_response(&response).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(calls, again);
    assert_eq!(calls.len(), 2);
    assert_ne!(calls[0].id, calls[1].id);
    let report = runtime.execute(&session, &calls).await;
    let content = gemini::function_responses(&report);
    let parts = content["parts"].as_array().cloned().unwrap_or_default();
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0]["functionResponse"]["name"], "get_order_status");
    assert_eq!(
        parts[1]["functionResponse"]["name"],
        "search_knowledge_base"
    );
    // The ids were made here: Gemini is not sent ids it did not give.
    assert!(parts[0]["functionResponse"].get("id").is_none());
    assert!(
        parts[0]["functionResponse"]["response"]
            .get("output")
            .is_some(),
        "{content}"
    );
}

#[test]
fn a_response_not_in_the_documented_shape_is_an_error_not_a_panic() {
    let runtime = runtime();
    let catalog = runtime
        .lowered_catalog(&Session::new("bad"), Target::OpenAiStrict)
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(openai::calls_from_chat(&json!({"tool_calls": 3}), &catalog).is_err());
    assert!(
        openai::calls_from_chat(
            &json!({"tool_calls": [{"id": "c", "function": {}}]}),
            &catalog
        )
        .is_err()
    );
    assert!(anthropic::calls_from_message(&json!({"content": [{"type": "tool_use"}]})).is_err());
    assert!(gemini::calls_from_response(&json!({"candidates": "x"})).is_err());
    // No calls is no calls.
    assert_eq!(
        openai::calls_from_chat(&json!({"role": "assistant", "content": "hi"}), &catalog)
            .map(|calls| calls.len())
            .ok(),
        Some(0)
    );
}

#[test]
fn anthropic_strictness_is_chosen_per_tool() {
    let runtime = runtime();
    let session = Session::new("strict");
    let tools = anthropic::tools_with_strict(&runtime, &session, |name| name == "issue_refund")
        .unwrap_or_else(|error| panic!("{error}"));
    let strict: Vec<&str> = tools
        .iter()
        .filter(|tool| tool.get("strict") == Some(&Value::Bool(true)))
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(strict, ["issue_refund"]);
    let refund = tools
        .iter()
        .find(|tool| tool["name"] == "issue_refund")
        .cloned()
        .unwrap_or_default();
    let lowered = runtime
        .lowered_tool("issue_refund", Target::AnthropicStrict)
        .and_then(Result::ok)
        .map(|tool| tool.parameters.clone());
    assert_eq!(Some(refund.get("input_schema").cloned()), lowered);
    let plain = anthropic::tools(
        &runtime
            .lowered_catalog(&session, Target::Anthropic)
            .unwrap_or_else(|error| panic!("{error}")),
    );
    assert_eq!(plain.len(), tools.len());
    assert!(plain.iter().all(|tool| tool.get("strict").is_none()));
    assert!(runtime.lowered_tool("no_such_tool", Target::Mcp).is_none());
}
