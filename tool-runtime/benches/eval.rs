//! The evaluation report's reading: 100,000 `call` events (1,000 runs of 10 rounds of 10
//! calls, with their run, routing, model and round events) in a temporary file, read and
//! evaluated into a `Report`, next to reading the same file with serde_json alone into
//! `Value`s, in the same bench run.
//!
//! Before criterion runs, the peak resident memory of each (Linux's VmHWM, reset through
//! /proc/self/clear_refs before each) is printed: the workspace forbids unsafe code, so a
//! counting global allocator is not an option here.
#![allow(
    clippy::print_stderr,
    reason = "the bench prints its memory figures next to criterion's"
)]

use std::fs::File;
use std::hint::black_box;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use tool_runtime::eval::{Report, read_traces};

const RUNS: u32 = 1_000;
const ROUNDS: u32 = 10;
const CALLS: u32 = 10;

/// Writes the trace; returns its path and its number of lines.
fn write_trace() -> (PathBuf, u64) {
    let path = std::env::temp_dir().join(format!(
        "tool-runtime-bench-eval-{}.jsonl",
        std::process::id()
    ));
    let file = File::create(&path).unwrap_or_else(|e| panic!("the trace file opens: {e}"));
    let mut out = BufWriter::new(file);
    let tools = [
        "get_order_status",
        "refund_order",
        "search_faq",
        "send_email",
    ];
    let gates = ["auto", "auto", "auto", "approved", "denied"];
    let mut lines = 0_u64;
    let mut line = |value: Value, out: &mut BufWriter<File>| {
        lines += 1;
        writeln!(out, "{value}").unwrap_or_else(|e| panic!("the trace is written: {e}"));
    };
    for run in 0..RUNS {
        let r = format!("run-{run}");
        let catalog: Vec<Value> = tools
            .iter()
            .map(|t| json!({"name": t, "tokens": 60}))
            .collect();
        line(
            json!({"event":"run_started","run":r,"session":"s","at_ms":0,"input":"Where is my order A-1024?","resumed":false,"catalog":catalog}),
            &mut out,
        );
        line(
            json!({"event":"routed","run":r,"session":"s","at_ms":0,"intent":"order_status","confidence":0.9,"source":"rule","signals":[],"clarify":false}),
            &mut out,
        );
        for round in 1..=ROUNDS {
            line(
                json!({"event":"model_answered","run":r,"session":"s","at_ms":round,"round":round,"input_tokens":400,"output_tokens":40,"calls":CALLS,"elapsed_ms":0.4}),
                &mut out,
            );
            for call in 0..CALLS {
                let n = (run + round * CALLS + call) as usize;
                let invalid = n.is_multiple_of(17);
                line(
                    json!({"event":"call","run":r,"session":"s","at_ms":round,"round":round,"call_id":format!("c{round}-{call}"),
                    "tool":tools[n % tools.len()],
                    "arguments_digest": if invalid { Value::Null } else { json!("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08") },
                    "gate": if invalid { Value::Null } else { json!(gates[n % gates.len()]) },
                    "attempts":1,"elapsed_ms": (n % 97) as f64 * 0.13,
                    "error_kind": if invalid { json!("invalid_arguments") } else { Value::Null },
                    "invalid_field": if invalid { json!("order_id") } else { Value::Null },
                    "replayed":false,"truncated":false,"redactions":0,"nested":false}),
                    &mut out,
                );
            }
            line(
                json!({"event":"round_ended","run":r,"session":"s","at_ms":round,"round":round,"calls":CALLS,"duplicates":0,"progress":true}),
                &mut out,
            );
        }
        line(
            json!({"event":"run_ended","run":r,"session":"s","at_ms":20,"end":"answered","reason":null,"rounds":ROUNDS,"calls":ROUNDS * CALLS,"duplicates":0,"input_tokens":4000,"output_tokens":400,"elapsed_ms":20.0}),
            &mut out,
        );
    }
    out.flush()
        .unwrap_or_else(|e| panic!("the trace is written: {e}"));
    (path, lines)
}

fn evaluate(path: &Path) -> Report {
    let traces = read_traces([path]);
    Report::from(&traces)
}

fn values(path: &Path) -> Vec<Value> {
    let file = File::open(path).unwrap_or_else(|e| panic!("the trace opens: {e}"));
    BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str(&line).ok())
        .collect()
}

/// A line of /proc/self/status in KiB (`VmHWM`, `VmRSS`); 0 where there is none.
fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                let rest = line.strip_prefix(field)?.strip_prefix(':')?;
                rest.trim().trim_end_matches("kB").trim().parse().ok()
            })
        })
        .unwrap_or(0)
}

/// The peak resident memory `work` adds over what is resident before it, in MiB.
fn peak_mib<T>(work: impl FnOnce() -> T) -> f64 {
    // "5" resets the peak (VmHWM) to the current resident size.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let before = status_kib("VmRSS");
    let kept = work();
    let peak = status_kib("VmHWM");
    drop(black_box(kept));
    peak.saturating_sub(before) as f64 / 1024.0
}

fn eval(c: &mut Criterion) {
    let (path, lines) = write_trace();
    let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
    // The evaluation's peak first: memory freed by an earlier reading stays resident (the
    // allocator keeps it) and would hide part of the next one's peak.
    let evaluated = peak_mib(|| evaluate(&path));
    let parsed = peak_mib(|| values(&path));
    eprintln!(
        "eval bench: {lines} lines, {:.1} MiB; peak memory over the resident set: \
         read+evaluate {evaluated:.1} MiB, serde_json Values {parsed:.1} MiB",
        bytes as f64 / (1024.0 * 1024.0),
    );
    let report = evaluate(&path);
    assert_eq!(report.gates.total(), u64::from(RUNS * ROUNDS * CALLS));
    assert_eq!(report.problems, 0);

    let mut group = c.benchmark_group("eval");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(lines));
    group.bench_function("read and evaluate (100,000 calls)", |b| {
        b.iter(|| black_box(evaluate(&path)));
    });
    group.bench_function("serde_json into Values alone (100,000 calls)", |b| {
        b.iter(|| black_box(values(&path)));
    });
    group.finish();
    let _ = std::fs::remove_file(&path);
}

criterion_group!(benches, eval);
criterion_main!(benches);
