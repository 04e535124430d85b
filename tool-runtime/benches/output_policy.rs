//! What the model sends and sees, per byte: the output policy's redaction and the argument
//! checks of a `#[tool]`, next to serde_json's own parse and serialization of the same bytes,
//! over 1 kB, 10 kB and 1 MB of ASCII and non-ASCII text, with and without secrets; and
//! redaction of text crowded with would-be secrets, at two sizes.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde::Deserialize;
use tool_runtime::output::Redactor;
use tool_runtime::{RunContext, Runtime, Session, ToolCall, tool};

/// Takes a document.
#[tool(read_only)]
async fn take_document(
    /// The document.
    text: String,
) -> usize {
    text.len()
}

/// Deps: the document `emit_document` returns.
pub struct Document(Arc<str>);

/// Returns the document.
#[tool(read_only, max_output_chars = 2_000_000)]
async fn emit_document(ctx: RunContext<Document>) -> Arc<str> {
    Arc::clone(&ctx.deps().0)
}

#[derive(Deserialize)]
struct BaselineArgs {
    #[allow(dead_code, reason = "parsed, as the tool's parameter is")]
    text: String,
}

/// `size` bytes of text: words, or words with accents and CJK, with a key every KiB or none.
fn text(size: usize, non_ascii: bool, secrets: bool) -> String {
    let word = if non_ascii {
        "déjà 東京 "
    } else {
        "order shipped "
    };
    let mut text = String::with_capacity(size + 64);
    let mut next_secret = 1024;
    while text.len() < size {
        if secrets && text.len() >= next_secret {
            text.push_str("sk-proj-abcdefghijklmnopqrstuvwx1234 ");
            next_secret += 1024;
        } else {
            text.push_str(word);
        }
    }
    text
}

fn per_byte(c: &mut Criterion) {
    let redactor = Redactor::default();
    let session = Session::new("bench");
    let executor = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(executor) => executor,
        Err(error) => panic!("{error}"),
    };
    for size in [1_000, 10_000, 1_000_000] {
        let mut group = c.benchmark_group(format!("per_byte_{size}"));
        group.throughput(Throughput::Bytes(size as u64));
        if size >= 1_000_000 {
            group.sample_size(20);
        }
        for (non_ascii, secrets) in [(false, false), (true, false), (false, true), (true, true)] {
            let label = format!(
                "{}{}",
                if non_ascii { "non-ascii" } else { "ascii" },
                if secrets { ", secrets" } else { "" }
            );
            let text = text(size, non_ascii, secrets);
            let json = serde_json::json!({ "text": text }).to_string();
            group.bench_with_input(
                BenchmarkId::new("serde_json parse", &label),
                &json,
                |b, json| {
                    b.iter(|| black_box(serde_json::from_str::<BaselineArgs>(json).is_ok()));
                },
            );
            group.bench_with_input(
                BenchmarkId::new("serde_json serialize", &label),
                &text,
                |b, text| b.iter(|| black_box(serde_json::to_string(text).map(|json| json.len()))),
            );
            group.bench_with_input(BenchmarkId::new("redaction", &label), &text, |b, text| {
                b.iter(|| black_box(redactor.redact(text).1));
            });
            let runtime = match Runtime::builder(Document(Arc::from(text.as_str()))).build() {
                Ok(runtime) => runtime,
                Err(error) => panic!("{error}"),
            };
            let take = [ToolCall::new("c", "take_document", json.as_str())];
            group.bench_function(
                BenchmarkId::new("turn: arguments checked and parsed", &label),
                |b| b.iter(|| black_box(executor.block_on(runtime.execute(&session, &take)))),
            );
            let emit = [ToolCall::new("c", "emit_document", "{}")];
            group.bench_function(
                BenchmarkId::new("turn: output serialized and shaped", &label),
                |b| b.iter(|| black_box(executor.block_on(runtime.execute(&session, &emit)))),
            );
        }
        group.finish();
    }
}

/// Redaction of text where nearly every position could start a secret, at two sizes: the
/// cost per byte stays the same (linear time whatever the content).
fn crowded(c: &mut Criterion) {
    let redactor = Redactor::default();
    let shapes: [(&str, &str); 4] = [
        ("sk-", "sk-"),
        ("eyJ", "eyJabcdefgh."),
        ("-----BEGIN", "-----BEGIN PRIVATE KEY-----\n"),
        ("Bearer", "Bearer "),
    ];
    for size in [10_000, 1_000_000] {
        let mut group = c.benchmark_group(format!("crowded_{size}"));
        group.throughput(Throughput::Bytes(size as u64));
        if size >= 1_000_000 {
            group.sample_size(20);
        }
        for (label, unit) in shapes {
            let text = unit.repeat(size / unit.len());
            group.bench_with_input(BenchmarkId::new("redaction", label), &text, |b, text| {
                b.iter(|| black_box(redactor.redact(text).1));
            });
        }
        group.finish();
    }
}

criterion_group!(benches, per_byte, crowded);
criterion_main!(benches);
