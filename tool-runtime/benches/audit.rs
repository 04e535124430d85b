//! What the audit trail costs a turn: 64 writes (each with its `auto` line and its `outcome`
//! line) in one turn, without an audit sink, against a `JsonlAudit` on a file (a group commit:
//! the lines queued together share one `sync_data`), and against a sink that writes and syncs
//! each line before it returns (what `JsonlAudit` did before: the planning task waited for 128
//! syncs in a row). Every turn's calls have arguments of their own, so none is answered from
//! the idempotency store.

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use tool_runtime::audit::{AuditRecord, AuditSink, JsonlAudit};
use tool_runtime::dynamic::DynamicTool;
use tool_runtime::{Runtime, RuntimeBuilder, Session, ToolCall};

/// A sink that writes and syncs each line before it returns.
struct SyncEachLine(Mutex<File>);

impl AuditSink for SyncEachLine {
    fn record(&self, record: &AuditRecord<'_>) -> io::Result<()> {
        let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
        line.push(b'\n');
        let mut file = self.0.lock().map_err(|_| io::Error::other("poisoned"))?;
        file.write_all(&line)?;
        file.sync_data()
    }
}

fn builder() -> RuntimeBuilder<()> {
    let note = DynamicTool::builder(
        "note",
        "Writes a note.",
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
    )
    .handler(|_args: Value, _ctx| async { Ok(json!("noted")) })
    .build();
    match note {
        Ok(note) => Runtime::builder(()).tool(note),
        Err(error) => panic!("{error}"),
    }
}

fn build(builder: RuntimeBuilder<()>) -> Runtime<()> {
    match builder.build() {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    }
}

fn temp_file(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "tool-runtime-bench-audit-{name}-{}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    path
}

/// 64 writes whose arguments no earlier turn had.
fn calls(next: &AtomicU64) -> Vec<ToolCall> {
    (0..64)
        .map(|n| {
            let unique = next.fetch_add(1, Ordering::Relaxed);
            ToolCall::new(format!("call_{n}"), "note", json!({ "n": unique }))
        })
        .collect()
}

fn audited_writes(c: &mut Criterion) {
    let executor = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(executor) => executor,
        Err(error) => panic!("{error}"),
    };
    let session = Session::new("s-1");
    let next = AtomicU64::new(0);
    let jsonl_path = temp_file("jsonl");
    let each_path = temp_file("each");
    let jsonl = match JsonlAudit::open(&jsonl_path) {
        Ok(audit) => audit,
        Err(error) => panic!("{error}"),
    };
    let each = match File::create(&each_path) {
        Ok(file) => SyncEachLine(Mutex::new(file)),
        Err(error) => panic!("{error}"),
    };
    let plain = build(builder());
    let group_commit = build(builder().audit(jsonl));
    let line_by_line = build(builder().audit(each));

    let mut group = c.benchmark_group("audited_64_writes");
    group.throughput(Throughput::Elements(64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(6));
    group.bench_function("no audit", |b| {
        b.iter(|| executor.block_on(plain.execute(&session, calls(&next))));
    });
    group.bench_function("JsonlAudit, group commit", |b| {
        b.iter(|| executor.block_on(group_commit.execute(&session, calls(&next))));
    });
    group.bench_function("a sink that syncs each line", |b| {
        b.iter(|| executor.block_on(line_by_line.execute(&session, calls(&next))));
    });
    group.finish();
    drop((plain, group_commit, line_by_line));
    let _ = std::fs::remove_file(jsonl_path);
    let _ = std::fs::remove_file(each_path);
}

criterion_group!(benches, audited_writes);
criterion_main!(benches);
