//! The evaluation report from run traces: a hand-written trace of three runs whose every
//! figure is known, bad lines and a file cut short reported by line while the rest is
//! evaluated, the table, the page, and a comparison that marks what changed.

use serde_json::{Value, json};
use tool_runtime::eval::{
    ArgumentFigures, CatalogFigures, Change, ErrorFigures, FieldCount, GateFigures, HistogramBin,
    LatencyFigures, OutOfScope, ProgressFigures, Report, Traces, read_traces,
};

/// One event line of run `run`: the shared fields and the event's own.
fn event(name: &str, run: &str, fields: Value) -> String {
    let mut line = json!({"event": name, "run": run, "session": "s1", "at_ms": 0});
    if let (Some(line), Value::Object(fields)) = (line.as_object_mut(), fields) {
        line.extend(fields);
    }
    line.to_string()
}

fn started(run: &str, resumed: bool, catalog: &[(&str, u64)]) -> String {
    let catalog: Vec<Value> = catalog
        .iter()
        .map(|(name, tokens)| json!({"name": name, "tokens": tokens}))
        .collect();
    event(
        "run_started",
        run,
        json!({"input": "a request", "resumed": resumed, "catalog": catalog}),
    )
}

fn routed(run: &str, intent: Option<&str>, signals: &[&str], clarify: bool) -> String {
    event(
        "routed",
        run,
        json!({"intent": intent, "confidence": 0.8, "source": "rule", "signals": signals, "clarify": clarify}),
    )
}

fn answered(run: &str, round: u32, tokens: (u64, u64), calls: u32) -> String {
    event(
        "model_answered",
        run,
        json!({"round": round, "input_tokens": tokens.0, "output_tokens": tokens.1, "calls": calls, "elapsed_ms": 0.4}),
    )
}

/// A call: `digest` null for arguments that did not validate, `gate` null for a call that
/// never reached the gate.
fn call(
    run: &str,
    tool: &str,
    digest: Option<&str>,
    gate: Option<&str>,
    elapsed_ms: f64,
    error: Option<(&str, Option<&str>)>,
) -> String {
    event(
        "call",
        run,
        json!({
            "round": 1, "call_id": "c", "tool": tool, "arguments_digest": digest, "gate": gate,
            "attempts": 1, "elapsed_ms": elapsed_ms,
            "error_kind": error.map(|(kind, _)| kind),
            "invalid_field": error.and_then(|(_, field)| field),
            "replayed": false, "truncated": false, "redactions": 0, "nested": false,
            "a_field_from_a_later_writer": [1, 2, 3]
        }),
    )
}

fn round_ended(run: &str, duplicates: u32, progress: bool) -> String {
    event(
        "round_ended",
        run,
        json!({"round": 1, "calls": 1, "duplicates": duplicates, "progress": progress}),
    )
}

fn budget_stopped(run: &str, reason: &str) -> String {
    event("budget_stopped", run, json!({"reason": reason}))
}

fn run_ended(run: &str, end: &str, tokens: (u64, u64)) -> String {
    event(
        "run_ended",
        run,
        json!({"end": end, "reason": null, "rounds": 2, "calls": 5, "duplicates": 1,
               "input_tokens": tokens.0, "output_tokens": tokens.1, "elapsed_ms": 9.0}),
    )
}

const INVALID: &str = "invalid_arguments";

/// Runs r1 (answered) and r2 (stopped for no progress), with three bad lines among them:
/// line 4 is not JSON, line 9 an unknown event, line 15 a call without its tool.
fn first_file() -> Vec<String> {
    vec![
        started(
            "r1",
            false,
            &[("get_order_status", 61), ("refund_order", 80)],
        ),
        routed("r1", Some("order_status"), &[], false),
        answered("r1", 1, (100, 10), 2),
        "{not json".to_owned(),
        call(
            "r1",
            "get_order_status",
            Some("a1"),
            Some("auto"),
            1.0,
            None,
        ),
        call(
            "r1",
            "refund_order",
            None,
            None,
            0.5,
            Some((INVALID, Some("amount"))),
        ),
        round_ended("r1", 0, true),
        answered("r1", 2, (150, 20), 3),
        r#"{"event":"tool_exploded","run":"r1","session":"s1","at_ms":3}"#.to_owned(),
        call(
            "r1",
            "get_order_status",
            Some("a1"),
            Some("auto"),
            2.0,
            None,
        ),
        call(
            "r1",
            "refund_order",
            Some("b2"),
            Some("approved"),
            3.0,
            None,
        ),
        call(
            "r1",
            "refund_order",
            Some("b3"),
            Some("denied"),
            4.0,
            Some(("denied", None)),
        ),
        round_ended("r1", 1, true),
        answered("r1", 3, (200, 30), 0),
        r#"{"event":"call","run":"r1","session":"s1","at_ms":3,"round":3,"gate":"auto"}"#
            .to_owned(),
        run_ended("r1", "answered", (450, 60)),
        String::new(),
        started("r2", false, &[("refund_order", 80)]),
        routed("r2", Some("refund"), &["weak_rule"], false),
        answered("r2", 1, (50, 5), 7),
        call(
            "r2",
            "get_order_status",
            None,
            None,
            0.1,
            Some(("out_of_scope", None)),
        ),
        call(
            "r2",
            "refund_order",
            None,
            None,
            0.2,
            Some((INVALID, Some("amount"))),
        ),
        call(
            "r2",
            "refund_order",
            None,
            None,
            0.3,
            Some((INVALID, Some("order_id"))),
        ),
        call(
            "r2",
            "refund_order",
            None,
            None,
            0.4,
            Some((INVALID, Some("reason"))),
        ),
        call(
            "r2",
            "refund_order",
            None,
            None,
            0.6,
            Some((INVALID, Some("currency"))),
        ),
        call(
            "r2",
            "refund_order",
            None,
            None,
            0.8,
            Some((INVALID, Some("amount"))),
        ),
        call("r2", "refund_order", Some("c1"), Some("edited"), 5.0, None),
        round_ended("r2", 0, true),
        answered("r2", 2, (60, 6), 1),
        call("r2", "refund_order", Some("c2"), Some("pending"), 6.0, None),
        round_ended("r2", 1, false),
        budget_stopped("r2", "no_progress"),
        run_ended("r2", "stopped", (110, 11)),
    ]
}

/// Run r3, resumed, routed to no intent and asked to clarify, never ended; its file is cut
/// short in the middle of line 7.
fn second_file() -> String {
    let lines = [
        started("r3", true, &[("get_order_status", 61)]),
        routed("r3", None, &["weak_rule", "low_confidence"], true),
        answered("r3", 1, (30, 3), 1),
        call(
            "r3",
            "lookup_faq",
            None,
            None,
            0.7,
            Some(("unknown_tool", None)),
        ),
        round_ended("r3", 0, false),
        budget_stopped("r3", "max_rounds"),
    ];
    let mut text = lines.join("\n");
    text.push('\n');
    text.push_str(r#"{"event":"call","run":"r3","session":"s1","at_"#);
    text
}

fn traces() -> Traces {
    let mut traces = Traces::new();
    traces.read_from("first.jsonl", first_file().join("\n").as_bytes());
    traces.read_from("second.jsonl", second_file().as_bytes());
    traces
}

#[test]
fn bad_lines_and_a_file_cut_short_are_reported_by_line_and_the_rest_is_evaluated() {
    let traces = traces();
    let problems: Vec<(&str, usize)> = traces
        .problems()
        .iter()
        .map(|p| (p.file.as_str(), p.line))
        .collect();
    assert_eq!(
        problems,
        [
            ("first.jsonl", 4),
            ("first.jsonl", 9),
            ("first.jsonl", 15),
            ("second.jsonl", 7)
        ]
    );
    let messages: Vec<&str> = traces
        .problems()
        .iter()
        .map(|p| p.message.as_str())
        .collect();
    assert!(messages[0].starts_with("not JSON"), "{}", messages[0]);
    assert!(
        messages[1].contains("unknown variant `tool_exploded`"),
        "{}",
        messages[1]
    );
    assert!(
        messages[2].contains("missing field `tool`"),
        "{}",
        messages[2]
    );
    assert!(messages[3].starts_with("file cut short"), "{}", messages[3]);
    assert_eq!(
        traces.problems()[0].to_string(),
        format!("first.jsonl:4: {}", messages[0])
    );
    // 13 events of r1, 16 of r2, 6 of r3: every good line, the blank one skipped.
    assert_eq!(traces.event_count(), 35);
    assert_eq!(traces.file_count(), 2);
}

#[test]
fn a_last_line_without_newline_that_parses_is_kept_and_a_missing_file_is_line_zero() {
    let dir = std::env::temp_dir().join(format!("tests-eval-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join("whole.jsonl");
    std::fs::write(&path, budget_stopped("r9", "token_budget")).expect("the trace is written");
    let missing = dir.join("missing.jsonl");
    let traces = read_traces([&path, &missing]);
    assert_eq!(traces.event_count(), 1);
    assert_eq!(traces.problems().len(), 1);
    assert_eq!(traces.problems()[0].line, 0);
    assert_eq!(traces.problems()[0].file, missing.display().to_string());
    assert!(traces.problems()[0].message.starts_with("cannot open"));
    let report = Report::from(&traces);
    assert_eq!(report.budget_stops.get("token_budget"), Some(&1));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_figure_of_the_known_trace() {
    let report = Report::from(&traces());
    assert_eq!((report.files, report.events, report.problems), (2, 35, 4));

    assert_eq!(report.runs.runs, 3);
    assert_eq!(report.runs.resumed, 1);
    assert_eq!(
        report
            .runs
            .ends
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect::<Vec<_>>(),
        [("answered", 1), ("stopped", 1)]
    );
    assert_eq!(report.runs.unfinished, 1);

    assert_eq!(
        report.gates,
        GateFigures {
            auto: 2,
            approved: 1,
            edited: 1,
            denied: 1,
            pending: 1,
            not_reached: 8,
            other: 0,
        }
    );
    assert_eq!(report.gates.total(), 14);

    let routing = &report.routing;
    assert_eq!(
        routing
            .runs_per_intent
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect::<Vec<_>>(),
        [("order_status", 1), ("refund", 1)]
    );
    assert_eq!((routing.unknown, routing.clarify), (1, 1));
    assert_eq!(
        routing
            .signals
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect::<Vec<_>>(),
        [("low_confidence", 1), ("weak_rule", 2)]
    );
    assert_eq!(
        routing.out_of_scope,
        [OutOfScope {
            intent: Some("refund".to_owned()),
            tool: "get_order_status".to_owned(),
            refusals: 1,
        }]
    );

    assert_eq!(
        report.progress,
        ProgressFigures {
            rounds: 5,
            duplicate_calls: 2,
            rounds_with_duplicates: 2,
            rounds_without_progress: 2,
        }
    );

    let field = |field: &str, count| FieldCount {
        field: field.to_owned(),
        count,
    };
    assert_eq!(
        report.arguments,
        [
            // Its out_of_scope call was refused unread, as was lookup_faq's only call (an
            // unknown tool, so no row): neither counts as valid or invalid.
            ArgumentFigures {
                tool: "get_order_status".to_owned(),
                calls: 2,
                valid: 2,
                rate: 1.0,
                invalid_fields: vec![],
            },
            ArgumentFigures {
                tool: "refund_order".to_owned(),
                calls: 10,
                valid: 4,
                rate: 0.4,
                // amount 3 times; currency, order_id and reason once each: the first two by name.
                invalid_fields: vec![
                    field("amount", 3),
                    field("currency", 1),
                    field("order_id", 1)
                ],
            },
        ]
    );

    assert_eq!(
        report
            .budget_stops
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect::<Vec<_>>(),
        [("max_rounds", 1), ("no_progress", 1)]
    );

    let rounds = &report.calls_per_round;
    assert_eq!((rounds.rounds, rounds.calls, rounds.max), (6, 14, 7));
    assert_eq!(rounds.mean, 14.0 / 6.0);
    let bin = |calls, rounds| HistogramBin { calls, rounds };
    assert_eq!(
        rounds.histogram,
        [bin(0, 1), bin(1, 2), bin(2, 1), bin(3, 1), bin(7, 1)]
    );

    let latency = |tool: &str, calls, p50, p95, p99, max| LatencyFigures {
        tool: tool.to_owned(),
        calls,
        p50,
        p95,
        p99,
        max,
    };
    assert_eq!(
        report.latency,
        [
            latency("get_order_status", 3, 1.0, 2.0, 2.0, 2.0),
            latency("lookup_faq", 1, 0.7, 0.7, 0.7, 0.7),
            // Sorted: 0.2 0.3 0.4 0.5 0.6 0.8 3 4 5 6; rank 5 for p50, 10 for p95 and p99.
            latency("refund_order", 10, 0.6, 6.0, 6.0, 6.0),
        ]
    );

    // r1 and r2 from run_ended; r3, unfinished, from its model_answered.
    let tokens = &report.tokens;
    assert_eq!(
        (tokens.runs, tokens.input_total, tokens.output_total),
        (3, 590, 74)
    );
    assert_eq!(tokens.input_mean, 590.0 / 3.0);
    assert_eq!(tokens.output_mean, 74.0 / 3.0);
    assert_eq!(
        report.catalog,
        [
            CatalogFigures {
                tool: "get_order_status".to_owned(),
                tokens: 61,
                shown: 2,
                total: 122,
            },
            CatalogFigures {
                tool: "refund_order".to_owned(),
                tokens: 80,
                shown: 2,
                total: 160,
            },
        ]
    );

    let error = |tool: &str, kind: &str, count| ErrorFigures {
        tool: tool.to_owned(),
        kind: kind.to_owned(),
        count,
    };
    assert_eq!(
        report.errors,
        [
            error("get_order_status", "out_of_scope", 1),
            error("lookup_faq", "unknown_tool", 1),
            error("refund_order", "denied", 1),
            error("refund_order", INVALID, 6),
        ]
    );

    // The JSON form carries the same figures.
    let json = serde_json::to_value(&report).expect("the report serializes");
    assert_eq!(json["gates"]["not_reached"], 8);
    assert_eq!(json["latency"][2]["p50"], 0.6);
}

#[test]
fn the_table_has_a_section_per_figure_with_aligned_columns() {
    let table = Report::from(&traces()).table();
    for title in [
        "== Policy compliance (calls by gate)",
        "== Intent-tool match (runs per intent)",
        "== Duplicates and progress",
        "== Argument validity per tool",
        "== Budget stops by reason",
        "== Calls per round",
        "== Latency per tool (ms, nearest rank)",
        "== Token cost per run",
        "== Error kinds per tool",
    ] {
        assert!(table.contains(title), "{title} missing from\n{table}");
    }
    let lines: Vec<&str> = table.lines().collect();
    let has = |line: &str| lines.contains(&line);
    assert!(
        has("tool              calls  valid    rate  top invalid fields"),
        "{table}"
    );
    assert!(
        has("refund_order         10      4   40.0%  amount (3), currency (1), order_id (1)"),
        "{table}"
    );
    assert!(
        has("refund_order         10  0.600   6.00   6.00   6.00"),
        "{table}"
    );
    assert!(has("not_reached      8  57.1%"), "{table}");
    assert!(has("refund / get_order_status           1"), "{table}");
    assert!(has("input     590        196.67"), "{table}");
}

#[test]
fn the_page_holds_a_chart_per_figure_drawn_as_svg() {
    let html = Report::from(&traces()).html();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("<script"), "the page has no script");
    for id in [
        "chart-latency",
        "chart-gates",
        "chart-arguments",
        "chart-budget-stops",
        "chart-calls-per-round",
    ] {
        let start = html
            .find(&format!("<figure class=\"chart\" id=\"{id}\">"))
            .unwrap_or_else(|| panic!("no figure {id}"));
        let figure = &html[start..];
        let figure = &figure[..figure.find("</figure>").expect("the figure closes")];
        assert!(figure.contains("<svg"), "{id} has no svg");
        assert!(figure.contains("<figcaption>"), "{id} has no caption");
        assert!(
            figure.matches("<rect").count() >= 3,
            "{id} draws too little"
        );
    }
    // Tables beside the charts: the latency figures as cells.
    assert!(
        html.contains("<td>refund_order</td><td class=\"num\">10</td><td class=\"num\">0.600</td>")
    );
}

#[test]
fn names_from_a_trace_are_escaped_in_the_page() {
    let mut traces = Traces::new();
    let line = call("r1", "<b>x&y</b>", Some("d"), Some("auto"), 1.0, None);
    traces.read_from("t.jsonl", line.as_bytes());
    let html = Report::from(&traces).html();
    assert!(!html.contains("<b>x"), "a tool name became markup");
    assert!(html.contains("&lt;b&gt;x&amp;y&lt;/b&gt;"));
}

#[test]
fn a_comparison_marks_what_changed() {
    let before = Report::from(&traces());
    // After: the first file alone (r3 and its lookup_faq call gone), one more auto call.
    let mut lines = first_file();
    lines.push(call(
        "r2",
        "get_order_status",
        Some("a9"),
        Some("auto"),
        9.0,
        None,
    ));
    let mut after_traces = Traces::new();
    after_traces.read_from("after.jsonl", lines.join("\n").as_bytes());
    let after = Report::from(&after_traces);
    let comparison = Report::compare(&before, &after);

    let row = |section: &str, figure: &str| {
        comparison
            .rows
            .iter()
            .find(|r| r.section.starts_with(section) && r.figure == figure)
            .unwrap_or_else(|| panic!("no row {section} / {figure}"))
    };
    let auto = row("Policy compliance", "auto · calls");
    assert_eq!(
        (auto.before.as_deref(), auto.after.as_deref()),
        (Some("2"), Some("3"))
    );
    assert_eq!(auto.change, Change::Increased { by: 1.0 });
    assert_eq!(
        row("Policy compliance", "not_reached · calls").change,
        Change::Decreased { by: -1.0 }
    );
    assert_eq!(
        row("Policy compliance", "approved · calls").change,
        Change::Same
    );
    let faq = row("Latency", "lookup_faq · p50");
    assert_eq!(
        (faq.before.as_deref(), faq.after.as_deref()),
        (Some("0.700"), None)
    );
    assert_eq!(faq.change, Change::Removed);
    assert_eq!(
        row("Latency", "get_order_status · max").change,
        Change::Increased { by: 7.0 }
    );
    assert!(comparison.changed().count() > 5);

    let table = comparison.table();
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("auto · calls") && l.ends_with("+1")),
        "{table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("lookup_faq · p50") && l.ends_with("gone")),
        "{table}"
    );
    assert!(table.contains("not_reached · share"), "{table}");

    let html = comparison.html();
    assert!(html.contains(
        "<tr><td>auto · calls</td><td class=\"num\">2</td><td class=\"num changed up\">3</td><td class=\"num changed up\">+1</td></tr>"
    ));
    assert!(html.contains("class=\"num changed down\""));
    assert!(html.contains("<tr><td>approved · calls</td><td class=\"num\">1</td><td class=\"num\">1</td><td class=\"num\"></td></tr>"));
    assert!(html.contains("<figure class=\"chart\" id=\"chart-compare-latency\">"));

    // The same report twice: nothing changed.
    let same = Report::compare(&before, &before);
    assert_eq!(same.changed().count(), 0);
}
