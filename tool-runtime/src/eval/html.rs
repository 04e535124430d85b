//! The report as one self-contained HTML page: inline CSS, charts as inline SVG, no script.

use std::fmt::Write as _;

use super::charts::BarChart;
use super::figures::Report;
use super::table::TextTable;

/// The page's style: tables beside their chart, figures right-aligned, changed cells marked.
const STYLE: &str = "\
body{font-family:system-ui,sans-serif;margin:2rem;color:#222;max-width:1400px}\
h1{margin-bottom:.2rem}h2{margin-top:2.2rem;border-bottom:1px solid #ccc}\
.summary{color:#555}\
.pair{display:flex;flex-wrap:wrap;gap:1.5rem;align-items:flex-start}\
.tables{display:flex;flex-direction:column;gap:1rem}\
figure.chart{margin:0;border:1px solid #ddd;padding:.4rem;background:#fff}\
figure.chart svg{display:block;max-width:100%;height:auto}\
figcaption{font-size:.9rem;color:#444;margin-top:.3rem}\
table{border-collapse:collapse;font-size:.9rem}\
th,td{border:1px solid #ddd;padding:.25rem .6rem;text-align:left}\
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}\
td.changed{background:#fff2c2;font-weight:600}td.changed.up{color:#8a3b00}\
td.changed.down{color:#00508a}td.none{color:#888;font-style:italic}";

/// Escapes text for HTML content and attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A whole page around `body`, under its title and a summary line (none when empty).
pub(crate) fn page(title: &str, summary: &str, body: &str) -> String {
    let summary = if summary.is_empty() {
        String::new()
    } else {
        format!("<p class=\"summary\">{}</p>\n", escape(summary))
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n\
         {summary}{body}</body>\n</html>\n",
        title = escape(title),
    )
}

/// A text table as an HTML table (the same cells; figures right-aligned).
pub(crate) fn html_table(table: &TextTable, out: &mut String) {
    out.push_str("<table>\n<thead><tr>");
    for header in &table.headers {
        let _ = write!(out, "<th>{}</th>", escape(header));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    if table.rows.is_empty() {
        let _ = writeln!(
            out,
            "<tr><td class=\"none\" colspan=\"{}\">(none)</td></tr>",
            table.headers.len()
        );
    }
    for row in &table.rows {
        out.push_str("<tr>");
        for (index, cell) in row.iter().enumerate() {
            let left = table.left.get(index).copied().unwrap_or(false);
            let class = if left { "" } else { " class=\"num\"" };
            let _ = write!(out, "<td{class}>{}</td>", escape(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
}

/// A chart in its `<figure class="chart">`, captioned; a chart that could not be drawn says why.
pub(crate) fn figure(id: &str, caption: &str, chart: &BarChart<'_>, out: &mut String) {
    let _ = writeln!(out, "<figure class=\"chart\" id=\"{}\">", escape(id));
    match chart.svg() {
        Ok(svg) => out.push_str(&svg),
        Err(error) => {
            let _ = write!(
                out,
                "<p>the chart could not be drawn: {}</p>",
                escape(&error)
            );
        }
    }
    let _ = writeln!(
        out,
        "\n<figcaption>{}</figcaption>\n</figure>",
        escape(caption)
    );
}

impl Report {
    /// The charts of the page, by the id of the section they belong to: (chart id, caption,
    /// chart).
    pub(crate) fn charts(&self) -> Vec<(&'static str, &'static str, String, BarChart<'static>)> {
        let mut charts = Vec::new();
        charts.push((
            "gates",
            "chart-gates",
            "Calls by gate decision (not_reached: the call never reached the gate).".to_owned(),
            BarChart {
                title: "Calls by gate",
                y_label: "calls",
                categories: self
                    .gates
                    .named()
                    .iter()
                    .map(|(n, _)| (*n).to_owned())
                    .collect(),
                series: vec![(
                    "calls",
                    self.gates.named().iter().map(|(_, c)| *c as f64).collect(),
                )],
            },
        ));
        charts.push((
            "arguments",
            "chart-arguments",
            "Calls per tool with valid and invalid arguments.".to_owned(),
            BarChart {
                title: "Argument validity per tool",
                y_label: "calls",
                categories: self.arguments.iter().map(|a| a.tool.clone()).collect(),
                series: vec![
                    (
                        "valid",
                        self.arguments.iter().map(|a| a.valid as f64).collect(),
                    ),
                    (
                        "invalid",
                        self.arguments
                            .iter()
                            .map(|a| (a.calls - a.valid) as f64)
                            .collect(),
                    ),
                ],
            },
        ));
        charts.push((
            "budget-stops",
            "chart-budget-stops",
            "Runs stopped by a budget, by the budget's reason.".to_owned(),
            BarChart {
                title: "Budget stops by reason",
                y_label: "runs",
                categories: self.budget_stops.keys().cloned().collect(),
                series: vec![(
                    "runs",
                    self.budget_stops.values().map(|&c| c as f64).collect(),
                )],
            },
        ));
        charts.push((
            "calls-per-round",
            "chart-calls-per-round",
            format!(
                "Rounds by the number of calls the model made in them (mean {:.2}, max {}).",
                self.calls_per_round.mean, self.calls_per_round.max
            ),
            BarChart {
                title: "Calls per round",
                y_label: "rounds",
                categories: self
                    .calls_per_round
                    .histogram
                    .iter()
                    .map(|bin| bin.calls.to_string())
                    .collect(),
                series: vec![(
                    "rounds",
                    self.calls_per_round
                        .histogram
                        .iter()
                        .map(|bin| bin.rounds as f64)
                        .collect(),
                )],
            },
        ));
        charts.push((
            "latency",
            "chart-latency",
            "Latency per tool in milliseconds: p50, p95 and p99 (nearest rank).".to_owned(),
            BarChart {
                title: "Latency per tool (ms)",
                y_label: "ms",
                categories: self.latency.iter().map(|l| l.tool.clone()).collect(),
                series: vec![
                    ("p50", self.latency.iter().map(|l| l.p50).collect()),
                    ("p95", self.latency.iter().map(|l| l.p95).collect()),
                    ("p99", self.latency.iter().map(|l| l.p99).collect()),
                ],
            },
        ));
        charts.push((
            "tokens",
            "chart-catalog",
            "Tokens each tool's description costs over all the catalogs that showed it.".to_owned(),
            BarChart {
                title: "Catalog tokens per tool",
                y_label: "tokens",
                categories: self.catalog.iter().map(|c| c.tool.clone()).collect(),
                series: vec![(
                    "tokens",
                    self.catalog.iter().map(|c| c.total as f64).collect(),
                )],
            },
        ));
        charts
    }

    /// The figures as one self-contained HTML page: each section's chart (inline SVG drawn by
    /// plotters, in a `<figure class="chart">` with a caption) beside its tables. The page
    /// needs no script, font file or network to be viewed.
    pub fn html(&self) -> String {
        let charts = self.charts();
        let mut body = String::new();
        for section in self.sections() {
            let _ = writeln!(
                body,
                "<section id=\"section-{}\">\n<h2>{}</h2>\n<div class=\"pair\">",
                section.id,
                escape(section.title)
            );
            for (_, id, caption, chart) in charts.iter().filter(|c| c.0 == section.id) {
                figure(id, caption, chart, &mut body);
            }
            body.push_str("<div class=\"tables\">\n");
            for table in &section.tables {
                html_table(table, &mut body);
            }
            body.push_str("</div>\n</div>\n</section>\n");
        }
        page("Evaluation report", &self.summary(), &body)
    }

    /// One line: what was read.
    pub(crate) fn summary(&self) -> String {
        format!(
            "{} file(s), {} event(s), {} problem(s), {} run(s)",
            self.files, self.events, self.problems, self.runs.runs
        )
    }
}
