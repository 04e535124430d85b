//! The evaluation page in a real browser: the `eval` program writes it, headless Chromium
//! loads it, and every chart figure is in the rendered DOM with an `<svg>` that draws, the
//! console stays free of errors, and a screenshot holds more than a blank page's.
//!
//! Needs `chromium` on PATH (or its path in `CHROMIUM`): `apt-get install chromium`
//! (.ci/test.sh installs it when missing). Without it the test fails and says so.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;

/// The browser to run: `CHROMIUM`, else `chromium` on PATH; a missing browser fails the test.
fn chromium() -> String {
    let browser = std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".to_owned());
    let found = Command::new(&browser)
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    assert!(
        found,
        "`{browser}` is not there: install Debian's chromium (as root: apt-get install -y \
         chromium; .ci/test.sh does it when missing) or set CHROMIUM to a Chromium binary"
    );
    browser
}

/// Runs headless Chromium on `url` with `args`, its profile in `dir`.
fn headless(browser: &str, dir: &Path, args: &[&str], url: &str) -> Output {
    Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .args(args)
        .arg(url)
        .output()
        .expect("chromium runs")
}

fn console_errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("Uncaught") || l.contains("ERROR:CONSOLE"))
        .collect()
}

/// Four tools over five runs: every chart has bars to draw.
fn trace() -> String {
    let mut lines = Vec::new();
    let tools = [
        "get_order_status",
        "refund_order",
        "search_faq",
        "send_email",
    ];
    let gates = ["auto", "approved", "denied", "edited", "pending"];
    let mut at = 0;
    for run in 0..5_u32 {
        let r = format!("r{run}");
        lines.push(json!({"event":"run_started","run":r,"session":"s","at_ms":at,"input":"hi","resumed":false,"catalog":tools.iter().map(|t| json!({"name":t,"tokens":40 + t.len()})).collect::<Vec<_>>()}));
        lines.push(json!({"event":"routed","run":r,"session":"s","at_ms":at,"intent":"order_status","confidence":0.9,"source":"rule","signals":[],"clarify":false}));
        for round in 1..=3_u32 {
            let calls = (run + round) % 4;
            lines.push(json!({"event":"model_answered","run":r,"session":"s","at_ms":at,"round":round,"input_tokens":100,"output_tokens":10,"calls":calls,"elapsed_ms":0.4}));
            for call in 0..calls {
                at += 1;
                let index = (run + call) as usize;
                let invalid = (run + round + call) % 5 == 0;
                lines.push(json!({"event":"call","run":r,"session":"s","at_ms":at,"round":round,"call_id":format!("c{at}"),
                    "tool":tools[index % tools.len()],
                    "arguments_digest": if invalid { None } else { Some("ab") },
                    "gate": if invalid { None } else { Some(gates[index % gates.len()]) },
                    "attempts":1,"elapsed_ms": f64::from(at) * 0.7,
                    "error_kind": if invalid { Some("invalid_arguments") } else { None },
                    "invalid_field": if invalid { Some("order_id") } else { None },
                    "replayed":false,"truncated":false,"redactions":0,"nested":false}));
            }
            lines.push(json!({"event":"round_ended","run":r,"session":"s","at_ms":at,"round":round,"calls":calls,"duplicates":u32::from(call_repeats(run, round)),"progress":true}));
        }
        let reason = ["max_rounds", "no_progress", "token_budget"][run as usize % 3];
        lines.push(
            json!({"event":"budget_stopped","run":r,"session":"s","at_ms":at,"reason":reason}),
        );
        lines.push(json!({"event":"run_ended","run":r,"session":"s","at_ms":at,"end":"stopped","reason":reason,"rounds":3,"calls":4,"duplicates":0,"input_tokens":300,"output_tokens":30,"elapsed_ms":9.0}));
    }
    lines.iter().map(|l| l.to_string() + "\n").collect()
}

fn call_repeats(run: u32, round: u32) -> bool {
    run == round
}

/// The rendered element of one chart figure, from `<figure class="chart" id="id">` to its
/// `</figure>`.
fn figure<'a>(dom: &'a str, id: &str) -> &'a str {
    let start = dom
        .find(&format!("<figure class=\"chart\" id=\"{id}\">"))
        .unwrap_or_else(|| panic!("figure {id} is not in the rendered DOM"));
    let rest = &dom[start..];
    &rest[..rest.find("</figure>").expect("the figure closes")]
}

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("examples-eval-page-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

#[test]
fn the_page_renders_every_chart_in_headless_chromium() {
    let browser = chromium();
    let dir = temp_dir();
    let trace_path = dir.join("runs.jsonl");
    std::fs::write(&trace_path, trace()).expect("the trace is written");
    let page = dir.join("report.html");
    let written = Command::new(env!("CARGO_BIN_EXE_eval"))
        .arg(&trace_path)
        .arg("--html")
        .arg(&page)
        .output()
        .expect("the eval program runs");
    assert_eq!(written.status.code(), Some(0), "{written:?}");
    let url = format!("file://{}", page.display());

    let dumped = headless(&browser, &dir, &["--dump-dom"], &url);
    let dom = String::from_utf8_lossy(&dumped.stdout);
    let stderr = String::from_utf8_lossy(&dumped.stderr);
    assert!(dumped.status.success(), "chromium failed: {stderr}");
    assert!(dom.contains("<h1>Evaluation report</h1>"), "{dom}");
    for id in [
        "chart-latency",
        "chart-gates",
        "chart-arguments",
        "chart-budget-stops",
        "chart-calls-per-round",
    ] {
        let figure = figure(&dom, id);
        assert!(figure.contains("<svg"), "{id} has no svg in the DOM");
        assert!(figure.contains("<figcaption>"), "{id} has no caption");
        let drawn = ["<rect", "<path", "<line", "<polyline"]
            .iter()
            .map(|element| figure.matches(element).count())
            .sum::<usize>();
        assert!(drawn > 12, "{id} draws only {drawn} elements");
        // Bars of the first series (its color), beyond the axes and the mesh.
        let bars = figure.matches("fill=\"#0072B2\"").count();
        assert!(bars >= 3, "{id} draws only {bars} bars");
    }
    assert!(
        console_errors(&stderr).is_empty(),
        "console errors: {stderr}"
    );

    let shot = dir.join("report.png");
    let shot_arg = format!("--screenshot={}", shot.display());
    let taken = headless(
        &browser,
        &dir,
        &[&shot_arg, "--window-size=1200,2000"],
        &url,
    );
    let stderr = String::from_utf8_lossy(&taken.stderr);
    assert!(taken.status.success(), "chromium failed: {stderr}");
    assert!(
        console_errors(&stderr).is_empty(),
        "console errors: {stderr}"
    );
    let blank_page = dir.join("blank.html");
    std::fs::write(&blank_page, "<!DOCTYPE html><html><body></body></html>").expect("written");
    let blank = dir.join("blank.png");
    let blank_arg = format!("--screenshot={}", blank.display());
    let blank_url = format!("file://{}", blank_page.display());
    let taken = headless(
        &browser,
        &dir,
        &[&blank_arg, "--window-size=1200,2000"],
        &blank_url,
    );
    assert!(taken.status.success(), "chromium failed: {taken:?}");

    let size = |path: &Path| std::fs::metadata(path).map_or(0, |m| m.len());
    let (page_bytes, blank_bytes) = (size(&shot), size(&blank));
    assert!(blank_bytes > 0, "no blank screenshot");
    assert!(
        page_bytes > blank_bytes * 5,
        "the screenshot ({page_bytes} bytes) is barely more than a blank page's ({blank_bytes})"
    );
    let png = std::fs::read(&shot).expect("the screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let _ = std::fs::remove_dir_all(&dir);
}
