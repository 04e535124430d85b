//! A turn has a span, and each call a span with its tool, call id, batch, outcome and elapsed
//! time, and the GenAI semantic conventions' attributes (`gen_ai.*`, `error.type` on failure). Alone in its binary: the subscriber is global, so no other test can race it.

use std::sync::{Arc, Mutex};

use tool_runtime::{Runtime, Session, ToolCall, ToolError, tool, tools};
use tracing::Subscriber;
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;
use tracing_subscriber::prelude::*;
use tracing_subscriber::registry::LookupSpan;

/// Deps of the tracing test.
pub struct Shop;

/// The price of one item.
#[tool(read_only)]
async fn price(item: String) -> Result<u32, ToolError> {
    if item == "tea" {
        Ok(3)
    } else {
        Err(ToolError::failed(format!("no item {item}")))
    }
}

/// The price of an item, asked of `price` through a nested call.
#[tool(read_only)]
async fn quote(ctx: tool_runtime::RunContext, item: String) -> Result<String, ToolError> {
    let price = ctx
        .call_tool("price", serde_json::json!({ "item": item }))
        .await?;
    Ok(format!("quote: {}", price.text()))
}

/// Records the spans opened and the fields recorded on them.
#[derive(Clone, Default)]
struct SpanLog(Arc<Mutex<Vec<String>>>);

impl SpanLog {
    fn push(&self, line: String) {
        if let Ok(mut log) = self.0.lock() {
            log.push(line);
        }
    }
}

fn describe(line: &mut String) -> impl FnMut(&tracing::field::Field, &dyn std::fmt::Debug) + '_ {
    move |field, value| {
        if field.name() == "elapsed_ms" {
            line.push_str(" elapsed_ms=_");
        } else {
            line.push_str(&format!(" {}={value:?}", field.name()));
        }
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for SpanLog {
    fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
        let mut line = attrs.metadata().name().to_owned();
        attrs.record(&mut describe(&mut line));
        self.push(line);
    }

    fn on_record(&self, _: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut line = "record".to_owned();
        values.record(&mut describe(&mut line));
        self.push(line);
    }
}

#[test]
fn a_turn_and_each_call_have_spans() {
    let log = SpanLog::default();
    if tracing::subscriber::set_global_default(tracing_subscriber::registry().with(log.clone()))
        .is_err()
    {
        panic!("another subscriber is installed");
    }
    let runtime = match Runtime::builder(Shop)
        .inventory(false)
        .tools(tools![price, quote])
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    };
    let Ok(executor) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        panic!("executor");
    };
    let report = executor.block_on(runtime.execute(
        &Session::new("s-7"),
        vec![
            ToolCall::new("a", "price", r#"{"item":"tea"}"#),
            ToolCall::new("b", "price", r#"{"item":"gold"}"#),
            ToolCall::new("c", "quote", r#"{"item":"tea"}"#),
        ],
    ));
    assert_eq!(report.observations().len(), 3);
    assert_eq!(report.observations()[2].content(), Some("quote: 3"));
    let log = log.0.lock().map(|log| log.clone()).unwrap_or_default();
    assert_eq!(
        log,
        [
            "tool_turn session=\"s-7\" calls=3",
            "tool_call tool=price call_id=a depth=0 batch=0 gen_ai.operation.name=\"execute_tool\" gen_ai.tool.name=price gen_ai.tool.call.id=a gen_ai.tool.type=\"function\"",
            "record outcome=\"success\"",
            "record elapsed_ms=_",
            "tool_call tool=price call_id=b depth=0 batch=0 gen_ai.operation.name=\"execute_tool\" gen_ai.tool.name=price gen_ai.tool.call.id=b gen_ai.tool.type=\"function\"",
            "record outcome=\"execution_failed\"",
            "record error.type=\"execution_failed\"",
            "record elapsed_ms=_",
            "tool_call tool=quote call_id=c depth=0 batch=0 gen_ai.operation.name=\"execute_tool\" gen_ai.tool.name=quote gen_ai.tool.call.id=c gen_ai.tool.type=\"function\"",
            "tool_call tool=price call_id=c/price depth=1 gen_ai.operation.name=\"execute_tool\" gen_ai.tool.name=price gen_ai.tool.call.id=c/price gen_ai.tool.type=\"function\"",
            "record outcome=\"success\"",
            "record elapsed_ms=_",
            "record outcome=\"success\"",
            "record elapsed_ms=_",
        ]
    );
}
