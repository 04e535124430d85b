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
    for &target in Target::ALL {
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
    // `include_items` took `null` already (`Option<bool>`): its `null` stays, the same as absent.
    assert_eq!(
        arguments(&calls[0].arguments).get("include_items"),
        Some(&Value::Null)
    );
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
    // `limit` (a default, not nullable) is left out; the `Option`s keep their `null`s.
    assert_eq!(
        arguments(&calls[0].arguments),
        json!({"customer": "ada", "status": null, "cursor": null})
    );
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
    let ids: Vec<&str> = calls.iter().map(|call| &*call.id).collect();
    // Made from the response's id and each call's position.
    assert_eq!(
        ids,
        [
            "synthesized_call_resp-7f3a_0",
            "synthesized_call_resp-7f3a_1"
        ]
    );
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

#[test]
fn a_strict_null_is_left_out_only_where_the_lowering_made_the_parameter_nullable() {
    let schema = json!({
        "type": "object",
        "properties": {
            "limit": {"type": "integer", "default": 10},
            "cap": {"type": ["integer", "null"], "default": 500},
            "note": {"type": ["string", "null"]}
        },
        "additionalProperties": false
    });
    let (_runtime, catalog) = probe(schema);
    // `limit` was made nullable: its `null` is the default. `cap` took `null` already: `None`,
    // where absent would be 500. `note`'s `null` and absence mean the same.
    assert_eq!(
        mapped(&catalog, json!({"limit": null, "cap": null, "note": null})),
        json!({"cap": null, "note": null})
    );
}

#[test]
fn gemini_ids_it_gave_are_kept_and_answers_without_calls_are_none() {
    let given = json!({"candidates": [{"content": {"parts": [
        {"functionCall": {"id": "fc-9", "name": "get_order_status", "args": {"order_id": "A-1024"}}}
    ]}}]});
    let calls = gemini::calls_from_response(&given).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(&*calls[0].id, "fc-9");
    for empty in [
        json!({"candidates": [{"content": {"role": "model"}, "finishReason": "SAFETY"}]}),
        json!({"promptFeedback": {"blockReason": "SAFETY"}}),
        json!({"candidates": []}),
    ] {
        let calls = gemini::calls_from_response(&empty).map(|calls| calls.len());
        assert_eq!(calls.ok(), Some(0), "{empty}");
    }
}

#[test]
fn a_call_without_the_id_its_provider_always_gives_is_an_error() {
    let runtime = runtime();
    let catalog = runtime
        .lowered_catalog(&Session::new("ids"), Target::OpenAiStrict)
        .unwrap_or_else(|error| panic!("{error}"));
    let chat = json!({"tool_calls": [{"type": "function",
        "function": {"name": "get_order_status", "arguments": "{}"}}]});
    assert!(openai::calls_from_chat(&chat, &catalog).is_err());
    let responses = json!({"output": [{"type": "function_call", "name": "x", "arguments": "{}"}]});
    assert!(openai::calls_from_responses(&responses, &catalog).is_err());
    let message = json!({"content": [{"type": "tool_use", "name": "x", "input": {}}]});
    assert!(anthropic::calls_from_message(&message).is_err());
}

#[test]
fn each_tool_is_lowered_once_per_target_and_a_scoped_session_sees_its_own() {
    let runtime = runtime();
    let session = Session::new("cache");
    let first = runtime
        .lowered_catalog(&session, Target::OpenAiStrict)
        .unwrap_or_else(|error| panic!("{error}"));
    let again = runtime
        .lowered_catalog(&session, Target::OpenAiStrict)
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(
        first
            .tools()
            .zip(again.tools())
            .all(|(a, b)| std::ptr::eq(a, b))
    );
    let scoped = Session::new("scoped").with_scope(tool_runtime::Scope::of(tool_runtime::tools![
        examples::support::get_order_status,
        examples::support::search_orders
    ]));
    let narrow = runtime
        .lowered_catalog(&scoped, Target::OpenAiStrict)
        .unwrap_or_else(|error| panic!("{error}"));
    let names: Vec<&str> = narrow.tools().map(|tool| tool.name.as_str()).collect();
    // The scope's tools, and the built-in `read_artifact` every session has.
    assert_eq!(
        names,
        ["get_order_status", "read_artifact", "search_orders"]
    );
    // The same lowering, shared with the whole catalog's.
    let whole = first.get("search_orders");
    assert!(whole.is_some_and(|whole| {
        narrow
            .get("search_orders")
            .is_some_and(|narrow| std::ptr::eq(whole, narrow))
    }));
}

/// A runtime of one dynamic tool with `schema`, and its OpenAI strict catalog.
fn probe(schema: Value) -> (Runtime<()>, tool_runtime::providers::LoweredCatalog) {
    let tool = tool_runtime::dynamic::DynamicTool::builder("probe", "A probe.", schema)
        .read_only()
        .handler(|arguments, _| async move { Ok(arguments) })
        .build();
    let runtime = Runtime::builder(())
        .inventory(false)
        .dynamic_tool(tool)
        .and_then(|builder| builder.build())
        .unwrap_or_else(|error| panic!("{error}"));
    let catalog = runtime
        .lowered_catalog(&Session::new("probe"), Target::OpenAiStrict)
        .unwrap_or_else(|error| panic!("{error}"));
    (runtime, catalog)
}

fn mapped(catalog: &tool_runtime::providers::LoweredCatalog, arguments: Value) -> Value {
    let message = json!({"tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "probe", "arguments": arguments.to_string()}}]});
    let calls =
        openai::calls_from_chat(&message, catalog).unwrap_or_else(|error| panic!("{error}"));
    crate::arguments(&calls[0].arguments)
}

#[tokio::test]
async fn strict_nulls_are_read_as_left_out_inside_recursive_types_and_the_union_variant_named() {
    let (runtime, catalog) = probe(json!({
        "type": "object",
        "properties": {
            "root": {"$ref": "#/$defs/Node"},
            "shape": {"oneOf": [
                {"type": "object", "properties": {
                    "kind": {"type": "string", "const": "a"},
                    "note": {"type": "string", "default": "none"}
                }, "required": ["kind"], "additionalProperties": false},
                {"type": "object", "properties": {
                    "kind": {"type": "string", "const": "b"},
                    "note": {"type": ["string", "null"]}
                }, "required": ["kind", "note"], "additionalProperties": false}
            ]}
        },
        "required": ["root", "shape"],
        "additionalProperties": false,
        "$defs": {"Node": {
            "type": "object",
            "properties": {
                "depth": {"type": "integer", "default": 1},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}, "default": []}
            },
            "additionalProperties": false
        }}
    }));
    let sent = json!({
        "root": {"depth": null, "children": [{"depth": null, "children": [{"depth": 3, "children": null}]}]},
        "shape": {"kind": "a", "note": null}
    });
    assert_eq!(
        mapped(&catalog, sent),
        json!({"root": {"children": [{"children": [{"depth": 3}]}]}, "shape": {"kind": "a"}})
    );
    // Variant `b` takes `null` for `note`, and requires it: the `null` stays.
    let variant_b = mapped(
        &catalog,
        json!({"root": {"depth": 2, "children": []}, "shape": {"kind": "b", "note": null}}),
    );
    assert_eq!(variant_b["shape"], json!({"kind": "b", "note": null}));
    let message = json!({"tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "probe", "arguments": json!({"root": {"depth": null, "children": [{"depth": null, "children": null}]},
            "shape": {"kind": "b", "note": null}}).to_string()}}]});
    let calls =
        openai::calls_from_chat(&message, &catalog).unwrap_or_else(|error| panic!("{error}"));
    let report = runtime.execute(&Session::new("probe"), &calls).await;
    assert!(
        report.observations()[0].is_success(),
        "{:?}",
        report.observations()[0]
    );
}
