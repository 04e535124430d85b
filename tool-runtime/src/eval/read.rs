//! Reading trace files: one JSON object per line, each line on its own.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::Deserialize;

/// A line of a trace that could not be read, or a file that could not be opened (line 0).
///
/// A problem is a warning: the other lines are still evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct TraceProblem {
    /// The file (or the name given to a reader).
    pub file: String,
    /// The line, counted from 1; 0 when the file itself could not be opened or read.
    pub line: usize,
    /// What was wrong with it.
    pub message: String,
}

/// The events read from one or more trace files, and the problems met on the way.
#[derive(Debug, Clone, Default)]
pub struct Traces {
    pub(crate) events: Vec<Envelope>,
    problems: Vec<TraceProblem>,
    files: usize,
}

/// Reads every file in `paths`, in order, into one [`Traces`].
///
/// A file that cannot be opened is a [`TraceProblem`] at line 0; the other files are still read.
pub fn read_traces<I, P>(paths: I) -> Traces
where
    I: IntoIterator<Item = P>,
    P: AsRef<Path>,
{
    let mut traces = Traces::new();
    for path in paths {
        traces.read_file(path);
    }
    traces
}

impl Traces {
    /// No events yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads one trace file; its problems name it as given.
    pub fn read_file(&mut self, path: impl AsRef<Path>) {
        let path = path.as_ref();
        match File::open(path) {
            Ok(file) => self.read_from(&path.display().to_string(), BufReader::new(file)),
            Err(error) => {
                self.files += 1;
                self.problems.push(TraceProblem {
                    file: path.display().to_string(),
                    line: 0,
                    message: format!("cannot open: {error}"),
                });
            }
        }
    }

    /// Reads the lines of `reader`, a trace named `file` in the problems it reports.
    ///
    /// Blank lines are skipped. A last line without a newline that does not parse is reported
    /// as a file cut short; one that parses is kept.
    pub fn read_from<R: BufRead>(&mut self, file: &str, mut reader: R) {
        self.files += 1;
        let mut buffer = Vec::new();
        let mut line = 0;
        loop {
            buffer.clear();
            line += 1;
            match reader.read_until(b'\n', &mut buffer) {
                Ok(0) => break,
                Ok(_) => {}
                Err(error) => {
                    self.problem(file, line, format!("cannot read: {error}"));
                    break;
                }
            }
            let complete = buffer.last() == Some(&b'\n');
            let text = buffer.trim_ascii();
            if text.is_empty() {
                continue;
            }
            match serde_json::from_slice::<Envelope>(text) {
                Ok(event) => self.events.push(event),
                Err(_) if !complete => self.problem(
                    file,
                    line,
                    "file cut short: the last line ends without a newline and does not parse"
                        .to_owned(),
                ),
                Err(error) => self.problem(file, line, describe(&error)),
            }
        }
    }

    fn problem(&mut self, file: &str, line: usize, message: String) {
        self.problems.push(TraceProblem {
            file: file.to_owned(),
            line,
            message,
        });
    }

    /// The lines and files that could not be read, in reading order.
    pub fn problems(&self) -> &[TraceProblem] {
        &self.problems
    }

    /// How many events were read.
    pub fn event_count(&self) -> usize {
        self.events.len()
    }

    /// How many files (or readers) were read, including those that could not be opened.
    pub fn file_count(&self) -> usize {
        self.files
    }

    /// Whether no event could be read.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

/// Words a parse error: "not JSON" for text that is not, else serde's own words (an unknown
/// event, a missing field, a field of the wrong type).
fn describe(error: &serde_json::Error) -> String {
    use serde_json::error::Category;
    match error.classify() {
        Category::Syntax | Category::Eof | Category::Io => format!("not JSON: {error}"),
        Category::Data => format!("not a trace event: {error}"),
    }
}

/// One line: its run and the event's own fields. Only the fields the figures need are required
/// (a line without one is a problem); the contract's others (`session`, `at_ms`, `round`,
/// `call_id`, ...) and unknown ones are ignored, so a writer's later fields break nothing.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Envelope {
    pub(crate) run: String,
    #[serde(flatten)]
    pub(crate) event: Event,
}

/// The events of the trace contract; unknown fields are ignored.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub(crate) enum Event {
    RunStarted {
        resumed: bool,
        catalog: Vec<CatalogEntry>,
    },
    Routed {
        intent: Option<String>,
        signals: Vec<String>,
        clarify: bool,
    },
    ModelAnswered {
        input_tokens: u64,
        output_tokens: u64,
        calls: u32,
    },
    Call {
        tool: String,
        arguments_digest: Option<String>,
        gate: Option<String>,
        elapsed_ms: f64,
        error_kind: Option<String>,
        invalid_field: Option<String>,
    },
    RoundEnded {
        duplicates: u32,
        progress: bool,
    },
    BudgetStopped {
        reason: String,
    },
    RunEnded {
        end: String,
        input_tokens: u64,
        output_tokens: u64,
    },
}

/// A tool the model was shown, and what its description costs.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct CatalogEntry {
    pub(crate) name: String,
    pub(crate) tokens: u64,
}
