//! [`verify_audit`]: checks an audit file line by line, and names the first line that fails.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use serde::Deserialize;

use super::chain::{GENESIS, LineProblem, check_line};

/// A verified audit file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuditSummary {
    /// How many lines the file has.
    pub lines: usize,
    /// The `hash` of the last line (64 zeros for an empty file): keep it elsewhere to detect
    /// a later rewrite of the file or the removal of its last lines.
    pub last_hash: String,
}

/// The first line of an audit file that fails verification, and why ([`verify_audit`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// The file cannot be opened.
    #[error("cannot open the audit file: {source}")]
    Open {
        /// Why.
        source: io::Error,
    },
    /// Reading the file failed at a line.
    #[error("line {line}: cannot read the audit file: {source}")]
    Io {
        /// The line being read (1-based).
        line: usize,
        /// Why.
        source: io::Error,
    },
    /// The line is not a line of the audit trail: not UTF-8 or not JSON, without `seq`,
    /// `prev` or `hash`, or incomplete.
    #[error("line {line}: malformed: {reason}")]
    Malformed {
        /// The line (1-based).
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// The line does not match its own hash: it was edited.
    #[error("line {line}: edited: its hash does not match its content")]
    Edited {
        /// The line (1-based).
        line: usize,
    },
    /// The line's `seq` is ahead of its line number and the missing `seq` is nowhere later in
    /// the file: lines before it were removed.
    #[error(
        "line {line}: removed: seq mismatch, expected seq {expected_seq}, found {found_seq} \
         (a line before this one is missing)"
    )]
    Removed {
        /// The line (1-based).
        line: usize,
        /// The line's number, the `seq` it should have.
        expected_seq: u64,
        /// The `seq` it has.
        found_seq: u64,
    },
    /// The line's `seq` is not its line number, and the line with that number is later in
    /// the file or this line's `seq` came earlier: lines were moved or repeated.
    #[error(
        "line {line}: reordered: seq mismatch, expected seq {expected_seq}, found {found_seq} \
         (lines are out of order or repeated)"
    )]
    Reordered {
        /// The line (1-based).
        line: usize,
        /// The line's number, the `seq` it should have.
        expected_seq: u64,
        /// The `seq` it has.
        found_seq: u64,
    },
    /// The line's `seq` is right but its `prev` is not the hash of the line before: the line
    /// before was removed or replaced (and the lines after it renumbered and rehashed).
    #[error(
        "line {line}: removed or replaced: prev mismatch, `prev` is not the hash of the line \
         before"
    )]
    PrevMismatch {
        /// The line (1-based).
        line: usize,
        /// The hash of the line before (64 zeros for the first line).
        expected: String,
        /// The line's `prev`.
        found: String,
    },
}

impl AuditError {
    /// The 1-based number of the first bad line (0 when the file cannot be opened).
    #[must_use]
    pub fn line(&self) -> usize {
        match self {
            AuditError::Open { .. } => 0,
            AuditError::Io { line, .. }
            | AuditError::Malformed { line, .. }
            | AuditError::Edited { line }
            | AuditError::Removed { line, .. }
            | AuditError::Reordered { line, .. }
            | AuditError::PrevMismatch { line, .. } => *line,
        }
    }
}

/// Verifies the audit file at `path` line by line: each line is valid JSON, matches its own
/// `hash`, has its line number as `seq` and the previous line's `hash` as `prev`.
///
/// # Errors
///
/// The first line that fails, with why; a line that does not match its hash is reported as
/// [`AuditError::Edited`] before its `seq` and `prev` are looked at.
pub fn verify_audit(path: impl AsRef<Path>) -> Result<AuditSummary, AuditError> {
    let file = File::open(path).map_err(|source| AuditError::Open { source })?;
    verify_lines(BufReader::new(file))
}

impl LineProblem {
    fn at(self, line: usize) -> AuditError {
        match self {
            LineProblem::Malformed(reason) => AuditError::Malformed { line, reason },
            LineProblem::Edited => AuditError::Edited { line },
        }
    }
}

pub(super) fn verify_lines(mut reader: impl BufRead) -> Result<AuditSummary, AuditError> {
    let mut prev = GENESIS.to_owned();
    let mut lines = 0;
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        let read = reader
            .read_until(b'\n', &mut buffer)
            .map_err(|source| AuditError::Io {
                line: lines + 1,
                source,
            })?;
        if read == 0 {
            break;
        }
        lines += 1;
        let line = lines;
        let Some(bytes) = buffer.strip_suffix(b"\n") else {
            return Err(AuditError::Malformed {
                line,
                reason: "no newline at the end: the line is incomplete".to_owned(),
            });
        };
        let checked = check_line(bytes).map_err(|problem| problem.at(line))?;
        let expected_seq = line as u64;
        if checked.seq > expected_seq {
            return Err(if seq_comes_later(&mut reader, expected_seq) {
                AuditError::Reordered {
                    line,
                    expected_seq,
                    found_seq: checked.seq,
                }
            } else {
                AuditError::Removed {
                    line,
                    expected_seq,
                    found_seq: checked.seq,
                }
            });
        }
        if checked.seq < expected_seq {
            return Err(AuditError::Reordered {
                line,
                expected_seq,
                found_seq: checked.seq,
            });
        }
        if checked.prev != prev {
            return Err(AuditError::PrevMismatch {
                line,
                expected: prev,
                found: checked.prev,
            });
        }
        prev = checked.hash;
    }
    Ok(AuditSummary {
        lines,
        last_hash: prev,
    })
}

/// Whether a line with `seq` comes later in `reader` (read to its end).
fn seq_comes_later(reader: &mut impl BufRead, seq: u64) -> bool {
    #[derive(Deserialize)]
    struct Seq {
        seq: u64,
    }
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        match reader.read_until(b'\n', &mut buffer) {
            Ok(0) | Err(_) => return false,
            Ok(_) => {
                if serde_json::from_slice::<Seq>(buffer.trim_ascii_end())
                    .is_ok_and(|found| found.seq == seq)
                {
                    return true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gates::audit::chain::Chain;
    use crate::gates::audit::sink::AuditDecision;
    use crate::gates::audit::testing::{record, verify_text, written};

    #[test]
    fn an_empty_file_verifies_as_the_start_of_a_chain() {
        assert_eq!(
            verify_text("").expect("empty"),
            AuditSummary {
                lines: 0,
                last_hash: GENESIS.to_owned()
            }
        );
    }

    #[test]
    fn an_edited_line_is_found() {
        let (path, mut lines) = written("edited", 4);
        lines[2] = lines[2].replace("\"decision\":\"auto\"", "\"decision\":\"deny\"");
        let error = verify_text(&lines.concat()).expect_err("edited");
        assert!(matches!(error, AuditError::Edited { line: 3 }), "{error}");
        assert_eq!(
            error.to_string(),
            "line 3: edited: its hash does not match its content"
        );
        // Even a change of whitespace is an edit.
        let (other, mut lines) = written("edited-space", 2);
        lines[1] = lines[1].replacen(',', ", ", 1);
        assert_eq!(verify_text(&lines.concat()).expect_err("edited").line(), 2);
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_file(other);
    }

    #[test]
    fn a_deleted_line_is_found() {
        let (path, mut lines) = written("deleted", 4);
        lines.remove(1);
        let error = verify_text(&lines.concat()).expect_err("deleted");
        assert!(
            matches!(
                error,
                AuditError::Removed {
                    line: 2,
                    expected_seq: 2,
                    found_seq: 3
                }
            ),
            "{error}"
        );
        assert!(
            error
                .to_string()
                .starts_with("line 2: removed: seq mismatch"),
            "{error}"
        );
        // The first line too.
        let (other, mut lines) = written("deleted-first", 2);
        lines.remove(0);
        assert!(matches!(
            verify_text(&lines.concat()),
            Err(AuditError::Removed { line: 1, .. })
        ));
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_file(other);
    }

    #[test]
    fn swapped_lines_are_found() {
        let (path, mut lines) = written("swapped", 4);
        lines.swap(1, 2);
        let error = verify_text(&lines.concat()).expect_err("swapped");
        assert!(
            matches!(
                error,
                AuditError::Reordered {
                    line: 2,
                    expected_seq: 2,
                    found_seq: 3
                }
            ),
            "{error}"
        );
        // A repeated line.
        let (other, mut lines) = written("repeated", 3);
        lines[2] = lines[1].clone();
        assert!(matches!(
            verify_text(&lines.concat()),
            Err(AuditError::Reordered {
                line: 3,
                expected_seq: 3,
                found_seq: 2
            })
        ));
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_file(other);
    }

    #[test]
    fn a_line_from_another_chain_is_found_by_its_prev() {
        let line = |chain: &Chain, call_id: &str, time: &str| {
            chain
                .next_line(&record(call_id, AuditDecision::Auto), false, time)
                .expect("a line")
        };
        let ours = line(&Chain::genesis(), "c1", "t1");
        let mut theirs = Chain::genesis();
        theirs.advance(line(&theirs, "c1", "t2").hash);
        let spliced = format!("{}{}", ours.text, line(&theirs, "c2", "t3").text);
        let error = verify_text(&spliced).expect_err("spliced");
        assert!(
            matches!(error, AuditError::PrevMismatch { line: 2, .. }),
            "{error}"
        );
        assert!(
            error.to_string().contains("prev mismatch"),
            "the message says which: {error}"
        );
        // A rehashed chain without its first line: seq and hash right, prev wrong.
        let mut rehashed = Chain::genesis();
        rehashed.prev = "1".repeat(64);
        let error = verify_text(&line(&rehashed, "c2", "t1").text).expect_err("prev");
        assert!(
            matches!(error, AuditError::PrevMismatch { line: 1, .. }),
            "{error}"
        );
    }

    #[test]
    fn malformed_and_incomplete_lines_are_found() {
        let (path, lines) = written("malformed", 2);
        for (text, line) in [
            (format!("{}not json\n", lines[0]), 2),
            (format!("{}{{\"seq\":2}}\n", lines[0]), 2),
            (lines[0].trim_end().to_owned(), 1),
            (format!("{}\n{}", lines[0], lines[1]), 2),
        ] {
            let error = verify_text(&text).expect_err("malformed");
            assert!(
                matches!(error, AuditError::Malformed { line: l, .. } if l == line),
                "{error}"
            );
        }
        let _ = std::fs::remove_file(path);
    }
}
