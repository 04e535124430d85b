//! The report as aligned text columns, one section per figure.

use std::fmt::Write as _;

use super::figures::Report;

/// A table of text cells: the first column left-aligned, the others right-aligned (numbers).
pub(crate) struct TextTable {
    pub(crate) headers: Vec<String>,
    pub(crate) left: Vec<bool>,
    pub(crate) rows: Vec<Vec<String>>,
}

impl TextTable {
    pub(crate) fn new(headers: &[&str]) -> Self {
        Self {
            headers: headers.iter().map(|&h| h.to_owned()).collect(),
            left: (0..headers.len()).map(|index| index == 0).collect(),
            rows: Vec::new(),
        }
    }

    /// Aligns a column of text (not figures) to the left.
    pub(crate) fn left(mut self, column: usize) -> Self {
        if let Some(left) = self.left.get_mut(column) {
            *left = true;
        }
        self
    }

    pub(crate) fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub(crate) fn render(&self, out: &mut String) {
        let columns = self.headers.len();
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let line = |out: &mut String, cells: &[String]| {
            let mut text = String::new();
            for (index, width) in widths.iter().enumerate().take(columns) {
                let cell = cells.get(index).map_or("", String::as_str);
                if index > 0 {
                    text.push_str("  ");
                }
                // Text left, figures right: the digits of a column line up.
                if self.left.get(index).copied().unwrap_or(false) {
                    let _ = write!(text, "{cell:<width$}");
                } else {
                    let _ = write!(text, "{cell:>width$}");
                }
            }
            out.push_str(text.trim_end());
            out.push('\n');
        };
        line(out, &self.headers);
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        line(out, &rule);
        if self.rows.is_empty() {
            out.push_str("(none)\n");
        }
        for row in &self.rows {
            line(out, row);
        }
    }
}

/// Means: two decimals.
pub(crate) fn decimal(value: f64) -> String {
    format!("{value:.2}")
}

/// Milliseconds with about three significant digits: most calls take microseconds
/// (`0.042`), a timeout seconds (`2005`).
pub(crate) fn millis(value: f64) -> String {
    let decimals = match value.abs() {
        m if m < 1.0 => 3,
        m if m < 10.0 => 2,
        m if m < 100.0 => 1,
        _ => 0,
    };
    format!("{value:.decimals$}")
}

/// A share: one decimal, in percent.
pub(crate) fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".to_owned()
    } else {
        format!("{:.1}%", part as f64 * 100.0 / whole as f64)
    }
}

/// One figure's tables, under a title; `id` names its chart and HTML section.
pub(crate) struct Section {
    pub(crate) id: &'static str,
    pub(crate) title: &'static str,
    pub(crate) tables: Vec<TextTable>,
}

impl Section {
    fn new(id: &'static str, title: &'static str) -> Self {
        Self {
            id,
            title,
            tables: Vec::new(),
        }
    }
}

fn add(sections: &mut [Section], table: TextTable) {
    if let Some(section) = sections.last_mut() {
        section.tables.push(table);
    }
}

impl Report {
    /// The figures as a terminal table: one section per figure, columns aligned.
    pub fn table(&self) -> String {
        let mut out = String::new();
        for section in self.sections() {
            if !out.is_empty() {
                out.push('\n');
            }
            let _ = writeln!(out, "== {}", section.title);
            for (index, table) in section.tables.iter().enumerate() {
                if index > 0 {
                    out.push('\n');
                }
                table.render(&mut out);
            }
        }
        out
    }

    /// The figures as sections of tables, for the terminal, the page and the comparison.
    pub(crate) fn sections(&self) -> Vec<Section> {
        let mut sections = Vec::new();
        sections.push(Section::new("traces", "Traces"));
        let mut table = TextTable::new(&["figure", "value"]);
        table.row(vec!["files".into(), self.files.to_string()]);
        table.row(vec!["events".into(), self.events.to_string()]);
        table.row(vec!["problems".into(), self.problems.to_string()]);
        table.row(vec!["runs".into(), self.runs.runs.to_string()]);
        table.row(vec!["resumed".into(), self.runs.resumed.to_string()]);
        for (end, count) in &self.runs.ends {
            table.row(vec![format!("ended {end}"), count.to_string()]);
        }
        table.row(vec!["unfinished".into(), self.runs.unfinished.to_string()]);
        add(&mut sections, table);

        sections.push(Section::new("gates", "Policy compliance (calls by gate)"));
        let mut table = TextTable::new(&["gate", "calls", "share"]);
        let total = self.gates.total();
        for (gate, count) in self.gates.named() {
            table.row(vec![gate.into(), count.to_string(), percent(count, total)]);
        }
        add(&mut sections, table);

        sections.push(Section::new(
            "routing",
            "Intent-tool match (runs per intent)",
        ));
        let mut table = TextTable::new(&["intent", "runs"]);
        for (intent, runs) in &self.routing.runs_per_intent {
            table.row(vec![intent.clone(), runs.to_string()]);
        }
        table.row(vec!["(unknown)".into(), self.routing.unknown.to_string()]);
        table.row(vec!["(clarify)".into(), self.routing.clarify.to_string()]);
        add(&mut sections, table);
        let mut table = TextTable::new(&["signal", "runs"]);
        for (signal, runs) in &self.routing.signals {
            table.row(vec![signal.clone(), runs.to_string()]);
        }
        add(&mut sections, table);
        let mut table = TextTable::new(&["out_of_scope: intent / tool", "refusals"]);
        for refusal in &self.routing.out_of_scope {
            table.row(vec![
                format!(
                    "{} / {}",
                    refusal.intent.as_deref().unwrap_or("(none)"),
                    refusal.tool
                ),
                refusal.refusals.to_string(),
            ]);
        }
        add(&mut sections, table);

        sections.push(Section::new("progress", "Duplicates and progress"));
        let mut table = TextTable::new(&["figure", "value"]);
        let progress = &self.progress;
        table.row(vec!["rounds ended".into(), progress.rounds.to_string()]);
        table.row(vec![
            "duplicate calls".into(),
            progress.duplicate_calls.to_string(),
        ]);
        table.row(vec![
            "rounds with duplicates".into(),
            progress.rounds_with_duplicates.to_string(),
        ]);
        table.row(vec![
            "rounds without progress".into(),
            progress.rounds_without_progress.to_string(),
        ]);
        add(&mut sections, table);

        sections.push(Section::new("arguments", "Argument validity per tool"));
        let mut table =
            TextTable::new(&["tool", "calls", "valid", "rate", "top invalid fields"]).left(4);
        for tool in &self.arguments {
            let fields: Vec<String> = tool
                .invalid_fields
                .iter()
                .map(|f| format!("{} ({})", f.field, f.count))
                .collect();
            table.row(vec![
                tool.tool.clone(),
                tool.calls.to_string(),
                tool.valid.to_string(),
                percent(tool.valid, tool.calls),
                fields.join(", "),
            ]);
        }
        add(&mut sections, table);

        sections.push(Section::new("budget-stops", "Budget stops by reason"));
        let mut table = TextTable::new(&["reason", "runs"]);
        for (reason, count) in &self.budget_stops {
            table.row(vec![reason.clone(), count.to_string()]);
        }
        add(&mut sections, table);

        sections.push(Section::new("calls-per-round", "Calls per round"));
        let rounds = &self.calls_per_round;
        let mut table = TextTable::new(&["figure", "value"]);
        table.row(vec!["rounds".into(), rounds.rounds.to_string()]);
        table.row(vec!["calls".into(), rounds.calls.to_string()]);
        table.row(vec!["mean".into(), decimal(rounds.mean)]);
        table.row(vec!["max".into(), rounds.max.to_string()]);
        add(&mut sections, table);
        let mut table = TextTable::new(&["calls in round", "rounds", "share"]);
        for bin in &rounds.histogram {
            table.row(vec![
                bin.calls.to_string(),
                bin.rounds.to_string(),
                percent(bin.rounds, rounds.rounds),
            ]);
        }
        add(&mut sections, table);

        sections.push(Section::new(
            "latency",
            "Latency per tool (ms, nearest rank)",
        ));
        let mut table = TextTable::new(&["tool", "calls", "p50", "p95", "p99", "max"]);
        for tool in &self.latency {
            table.row(vec![
                tool.tool.clone(),
                tool.calls.to_string(),
                millis(tool.p50),
                millis(tool.p95),
                millis(tool.p99),
                millis(tool.max),
            ]);
        }
        add(&mut sections, table);

        sections.push(Section::new("tokens", "Token cost per run"));
        let tokens = &self.tokens;
        let mut table = TextTable::new(&["tokens", "total", "mean per run"]);
        table.row(vec![
            "input".into(),
            tokens.input_total.to_string(),
            decimal(tokens.input_mean),
        ]);
        table.row(vec![
            "output".into(),
            tokens.output_total.to_string(),
            decimal(tokens.output_mean),
        ]);
        add(&mut sections, table);
        let mut table = TextTable::new(&["tool description", "tokens", "shown", "total"]);
        for tool in &self.catalog {
            table.row(vec![
                tool.tool.clone(),
                tool.tokens.to_string(),
                tool.shown.to_string(),
                tool.total.to_string(),
            ]);
        }
        add(&mut sections, table);

        sections.push(Section::new("errors", "Error kinds per tool"));
        let mut table = TextTable::new(&["tool", "error kind", "calls"]).left(1);
        for error in &self.errors {
            table.row(vec![
                error.tool.clone(),
                error.kind.clone(),
                error.count.to_string(),
            ]);
        }
        add(&mut sections, table);
        sections
    }
}
