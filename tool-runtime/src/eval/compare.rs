//! Two reports side by side: every figure before and after, the differences marked.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use serde::Serialize;

use super::charts::BarChart;
use super::figures::Report;
use super::html::{escape, figure, page};
use super::table::TextTable;

/// How a figure changed from before to after.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "change")]
pub enum Change {
    /// The same value.
    Same,
    /// A number that grew, by `by`.
    Increased {
        /// After minus before.
        by: f64,
    },
    /// A number that shrank, by `by` (negative).
    Decreased {
        /// After minus before.
        by: f64,
    },
    /// A text that differs.
    Changed,
    /// Only after has it.
    Added,
    /// Only before has it.
    Removed,
}

impl Change {
    /// Whether the figure differs.
    pub fn is_changed(&self) -> bool {
        *self != Self::Same
    }

    /// The mark shown in the change column: `+3`, `-0.25`, `new`, `gone`, `changed`, or empty.
    /// With `percent`, the figure is a share and a difference is in percentage points
    /// (`+1.5 pt`).
    pub fn mark(&self, percent: bool) -> String {
        let unit = if percent { " pt" } else { "" };
        match self {
            Self::Same => String::new(),
            Self::Increased { by } => format!("+{}{unit}", short(*by)),
            Self::Decreased { by } => format!("{}{unit}", short(*by)),
            Self::Changed => "changed".to_owned(),
            Self::Added => "new".to_owned(),
            Self::Removed => "gone".to_owned(),
        }
    }

    /// The CSS classes of a changed cell (`changed up`, `changed down`, `changed`), or none.
    fn class(&self) -> &'static str {
        match self {
            Self::Same => "",
            Self::Increased { .. } => "changed up",
            Self::Decreased { .. } => "changed down",
            Self::Changed | Self::Added | Self::Removed => "changed",
        }
    }
}

/// A number as short as it reads: no decimals for whole numbers, else at most two.
fn short(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        let text = format!("{value:.2}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// One figure before and after.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparisonRow {
    /// The section's title (as in [`Report::table`]).
    pub section: String,
    /// The figure: the row's name and its column's (`auto · calls`), or the name alone for a
    /// table of values.
    pub figure: String,
    /// Its value before (as the table shows it), if before has it.
    pub before: Option<String>,
    /// Its value after, if after has it.
    pub after: Option<String>,
    /// How it changed.
    pub change: Change,
}

/// Two reports side by side ([`Report::compare`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The report before.
    pub before: Report,
    /// The report after.
    pub after: Report,
    /// Every figure of either, in the table's order.
    pub rows: Vec<ComparisonRow>,
}

/// A report's figures as (section id, section title, figure, value), in table order.
fn cells(report: &Report) -> Vec<(&'static str, &'static str, String, String)> {
    let mut cells = Vec::new();
    for section in report.sections() {
        for table in &section.tables {
            for row in &table.rows {
                let name = row.first().cloned().unwrap_or_default();
                for (column, value) in row.iter().enumerate().skip(1) {
                    let header = table.headers.get(column).map_or("", String::as_str);
                    let figure = if header == "value" {
                        name.clone()
                    } else {
                        format!("{name} · {header}")
                    };
                    cells.push((section.id, section.title, figure, value.clone()));
                }
            }
        }
    }
    cells
}

fn number(text: &str) -> Option<f64> {
    text.trim_end_matches('%').parse().ok()
}

fn change(before: Option<&str>, after: Option<&str>) -> Change {
    match (before, after) {
        (Some(b), Some(a)) if a == b => Change::Same,
        (Some(b), Some(a)) => match (number(b), number(a)) {
            (Some(b), Some(a)) if a > b => Change::Increased { by: a - b },
            (Some(b), Some(a)) if a < b => Change::Decreased { by: a - b },
            (Some(_), Some(_)) => Change::Same,
            _ => Change::Changed,
        },
        (None, Some(_)) => Change::Added,
        (Some(_), None) => Change::Removed,
        (None, None) => Change::Same,
    }
}

impl Report {
    /// The figures of `before` and `after` side by side, each difference marked.
    pub fn compare(before: &Report, after: &Report) -> Comparison {
        let before_cells = cells(before);
        let after_cells = cells(after);
        let before_values: HashMap<(&str, &str), &str> = before_cells
            .iter()
            .map(|(id, _, figure, value)| ((*id, figure.as_str()), value.as_str()))
            .collect();
        let after_values: HashMap<(&str, &str), &str> = after_cells
            .iter()
            .map(|(id, _, figure, value)| ((*id, figure.as_str()), value.as_str()))
            .collect();
        let mut rows = Vec::new();
        let mut seen = BTreeSet::new();
        // Sections come in the same order from both; within one, before's figures first,
        // then those only after has.
        let sections: Vec<(&str, &str)> = {
            let mut ids = Vec::new();
            for (id, title, _, _) in before_cells.iter().chain(&after_cells) {
                if !ids.iter().any(|(known, _)| known == id) {
                    ids.push((*id, *title));
                }
            }
            ids
        };
        for (id, title) in sections {
            let figures = before_cells
                .iter()
                .chain(&after_cells)
                .filter(|cell| cell.0 == id);
            for (_, _, name, _) in figures {
                if !seen.insert((id, name.as_str())) {
                    continue;
                }
                let b = before_values.get(&(id, name.as_str())).copied();
                let a = after_values.get(&(id, name.as_str())).copied();
                rows.push(ComparisonRow {
                    section: title.to_owned(),
                    figure: name.clone(),
                    before: b.map(str::to_owned),
                    after: a.map(str::to_owned),
                    change: change(b, a),
                });
            }
        }
        Comparison {
            before: before.clone(),
            after: after.clone(),
            rows,
        }
    }
}

impl ComparisonRow {
    fn mark(&self) -> String {
        let percent = [&self.before, &self.after]
            .iter()
            .any(|v| v.as_deref().is_some_and(|v| v.ends_with('%')));
        self.change.mark(percent)
    }
}

impl Comparison {
    /// The figures that differ.
    pub fn changed(&self) -> impl Iterator<Item = &ComparisonRow> {
        self.rows.iter().filter(|row| row.change.is_changed())
    }

    fn sections(&self) -> Vec<(&str, Vec<&ComparisonRow>)> {
        let mut sections: Vec<(&str, Vec<&ComparisonRow>)> = Vec::new();
        for row in &self.rows {
            match sections.last_mut() {
                Some((title, rows)) if *title == row.section => rows.push(row),
                _ => sections.push((row.section.as_str(), vec![row])),
            }
        }
        sections
    }

    /// Before and after as a terminal table, one section per figure; the change column marks
    /// each difference (`+3`, `-0.25`, `+1.5 pt` for shares, `new`, `gone`).
    pub fn table(&self) -> String {
        let mut out = format!(
            "before: {}\nafter:  {}\nfigures changed: {} of {}\n",
            self.before.summary(),
            self.after.summary(),
            self.changed().count(),
            self.rows.len()
        );
        for (title, rows) in self.sections() {
            let _ = writeln!(out, "\n== {title}");
            let mut table = TextTable::new(&["figure", "before", "after", "change"]);
            for row in rows {
                table.row(vec![
                    row.figure.clone(),
                    row.before.clone().unwrap_or_else(|| "-".to_owned()),
                    row.after.clone().unwrap_or_else(|| "-".to_owned()),
                    row.mark(),
                ]);
            }
            table.render(&mut out);
        }
        out
    }

    /// Before and after as one self-contained HTML page: charts of both side by side, and a
    /// table per section whose changed cells carry the class `changed` (with `up` or `down`
    /// for numbers).
    pub fn html(&self) -> String {
        let mut body = String::new();
        let _ = writeln!(
            body,
            "<p class=\"summary\">before: {}<br>after: {}<br>figures changed: {} of {}</p>",
            escape(&self.before.summary()),
            escape(&self.after.summary()),
            self.changed().count(),
            self.rows.len()
        );
        body.push_str(
            "<section id=\"section-charts\">\n<h2>Before and after</h2>\n<div class=\"pair\">\n",
        );
        for (id, caption, chart) in self.charts() {
            figure(id, caption, &chart, &mut body);
        }
        body.push_str("</div>\n</section>\n");
        for (title, rows) in self.sections() {
            let _ = writeln!(body, "<section>\n<h2>{}</h2>\n<table>", escape(title));
            body.push_str(
                "<thead><tr><th>figure</th><th>before</th><th>after</th><th>change</th></tr></thead>\n<tbody>\n",
            );
            for row in rows {
                let class = row.change.class();
                let class = if class.is_empty() {
                    " class=\"num\"".to_owned()
                } else {
                    format!(" class=\"num {class}\"")
                };
                let _ = writeln!(
                    body,
                    "<tr><td>{}</td><td class=\"num\">{}</td><td{class}>{}</td><td{class}>{}</td></tr>",
                    escape(&row.figure),
                    escape(row.before.as_deref().unwrap_or("-")),
                    escape(row.after.as_deref().unwrap_or("-")),
                    escape(&row.mark()),
                );
            }
            body.push_str("</tbody>\n</table>\n</section>\n");
        }
        page("Evaluation comparison", "", &body)
    }

    fn charts(&self) -> Vec<(&'static str, &'static str, BarChart<'static>)> {
        let gates = |report: &Report| -> Vec<f64> {
            report
                .gates
                .named()
                .iter()
                .map(|(_, c)| *c as f64)
                .collect()
        };
        let tools: Vec<String> = self
            .before
            .latency
            .iter()
            .chain(&self.after.latency)
            .map(|l| l.tool.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let p95 = |report: &Report| -> Vec<f64> {
            tools
                .iter()
                .map(|tool| {
                    report
                        .latency
                        .iter()
                        .find(|l| &l.tool == tool)
                        .map_or(0.0, |l| l.p95)
                })
                .collect()
        };
        vec![
            (
                "chart-compare-gates",
                "Calls by gate, before and after.",
                BarChart {
                    title: "Calls by gate",
                    y_label: "calls",
                    categories: self
                        .after
                        .gates
                        .named()
                        .iter()
                        .map(|(n, _)| (*n).to_owned())
                        .collect(),
                    series: vec![
                        ("before", gates(&self.before)),
                        ("after", gates(&self.after)),
                    ],
                },
            ),
            (
                "chart-compare-latency",
                "p95 latency per tool in milliseconds, before and after.",
                BarChart {
                    title: "p95 latency per tool (ms)",
                    y_label: "ms",
                    series: vec![("before", p95(&self.before)), ("after", p95(&self.after))],
                    categories: tools,
                },
            ),
        ]
    }
}
