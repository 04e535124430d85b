//! One line of the trail: its fixed format, the hash chain that links it to the line before,
//! its time, and the checks of a line alone.

use std::io;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::sink::{AuditDecision, AuditRecord};

/// The `prev` of the first line: 64 zeros.
pub(super) const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The last field of every line, up to its value.
const HASH_FIELD: &str = ",\"hash\":\"";

/// A line's content as it is serialized (and hashed): the fields in this order.
#[derive(Serialize)]
pub(super) struct LineContent<'a> {
    seq: u64,
    time: &'a str,
    session: &'a str,
    principal: Option<&'a str>,
    call_id: &'a str,
    tool: &'a str,
    version: Option<&'a str>,
    arguments_digest: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments: Option<&'a Value>,
    decision: AuditDecision,
    reason: Option<&'a str>,
    approval_id: Option<&'a str>,
    outcome: Option<&'a str>,
    prev: &'a str,
}

/// Where a chain stands: the `seq` of the next line and the `hash` of the last one.
#[derive(Debug, Clone)]
pub(super) struct Chain {
    pub(super) next_seq: u64,
    pub(super) prev: String,
}

/// The next line of a chain, not yet written.
pub(super) struct NextLine {
    /// The whole line, `\n` included.
    pub(super) text: String,
    pub(super) hash: String,
}

impl Chain {
    pub(super) fn genesis() -> Self {
        Chain {
            next_seq: 1,
            prev: GENESIS.to_owned(),
        }
    }

    /// The content of the line that records `record` next in this chain.
    pub(super) fn content<'a>(
        &'a self,
        record: &AuditRecord<'a>,
        with_arguments: bool,
        time: &'a str,
    ) -> LineContent<'a> {
        LineContent {
            seq: self.next_seq,
            time,
            session: record.session,
            principal: record.principal,
            call_id: record.call_id,
            tool: record.tool,
            version: record.version,
            arguments_digest: record.arguments_digest,
            arguments: record.arguments.filter(|_| with_arguments),
            decision: record.decision,
            reason: record.reason,
            approval_id: record.approval_id,
            outcome: record.outcome,
            prev: &self.prev,
        }
    }

    /// The line that records `record` next in this chain (the chain does not move).
    pub(super) fn next_line(
        &self,
        record: &AuditRecord<'_>,
        with_arguments: bool,
        time: &str,
    ) -> io::Result<NextLine> {
        line_of(&self.content(record, with_arguments, time))
    }

    pub(super) fn advance(&mut self, hash: String) {
        self.next_seq += 1;
        self.prev = hash;
    }
}

/// The line of `content`: its JSON text with the `hash` field added last.
pub(super) fn line_of(content: &LineContent<'_>) -> io::Result<NextLine> {
    let content = serde_json::to_string(content).map_err(io::Error::other)?;
    let hash = crate::hex::sha256(content.as_bytes());
    let Some(open) = content.strip_suffix('}') else {
        return Err(io::Error::other(
            "an audit line did not serialize as a JSON object",
        ));
    };
    let mut text = String::with_capacity(content.len() + HASH_FIELD.len() + 68);
    text.push_str(open);
    text.push_str(HASH_FIELD);
    text.push_str(&hash);
    text.push_str("\"}\n");
    Ok(NextLine { text, hash })
}

fn is_hash(text: &str) -> bool {
    text.len() == 64
        && text
            .bytes()
            .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
}

/// The current time as the audit trail writes it (see [`rfc3339_millis`]); a clock before
/// 1970 reads as the epoch.
pub(super) fn now_rfc3339() -> String {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        });
    rfc3339_millis(millis)
}

/// `unix_millis` (milliseconds since 1970-01-01T00:00:00Z) as RFC 3339 UTC with
/// milliseconds: `YYYY-MM-DDTHH:MM:SS.mmmZ`.
fn rfc3339_millis(unix_millis: u64) -> String {
    const MILLIS_PER_DAY: u64 = 86_400_000;
    let (year, month, day) = civil_from_days(unix_millis / MILLIS_PER_DAY);
    let of_day = unix_millis % MILLIS_PER_DAY;
    let (seconds, millis) = (of_day / 1000, of_day % 1000);
    let (hour, minute, second) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{millis:03}Z")
}

/// The proleptic Gregorian (year, month, day) of the day `days` after 1970-01-01 (Howard
/// Hinnant's `civil_from_days`, for days on or after the epoch). Eras are 400-year cycles of
/// 146 097 days that start on March 1st, so the leap day is the last day of an era's year.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    // Days since 0000-03-01.
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097; // [0, 146096]
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365; // [0, 399]
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100); // [0, 365]
    let month_from_march = (5 * day_of_year + 2) / 153; // [0, 11]
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1; // [1, 31]
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = era * 400 + year_of_era + u64::from(month <= 2);
    (year, month, day)
}

/// What the checks of one line found wrong with it alone.
pub(super) enum LineProblem {
    Malformed(String),
    Edited,
}

/// The fields a line's checks read; serde skips the others without building them (and
/// without a depth limit, so deeply nested arguments are no problem).
#[derive(Deserialize)]
struct LineHead {
    seq: u64,
    prev: String,
    hash: String,
}

/// A line that is well formed and matches its own hash.
pub(super) struct CheckedLine {
    pub(super) seq: u64,
    pub(super) prev: String,
    pub(super) hash: String,
}

/// Checks one line alone (without its `\n`): valid JSON with `seq`, `prev` and `hash`, the
/// `hash` field last, and `hash` the SHA-256 of the rest.
pub(super) fn check_line(bytes: &[u8]) -> Result<CheckedLine, LineProblem> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| LineProblem::Malformed("the line is not UTF-8".to_owned()))?;
    let head: LineHead = serde_json::from_str(text).map_err(|error| {
        LineProblem::Malformed(format!(
            "not a JSON object with `seq`, `prev` and `hash`: {error}"
        ))
    })?;
    if !is_hash(&head.hash) {
        return Err(LineProblem::Malformed(
            "`hash` is not 64 lowercase hex digits".to_owned(),
        ));
    }
    if !is_hash(&head.prev) {
        return Err(LineProblem::Malformed(
            "`prev` is not 64 lowercase hex digits".to_owned(),
        ));
    }
    let content = text
        .strip_suffix("\"}")
        .and_then(|rest| rest.strip_suffix(head.hash.as_str()))
        .and_then(|rest| rest.strip_suffix(HASH_FIELD));
    let Some(content) = content else {
        return Err(LineProblem::Malformed(
            "`hash` is not the line's last field, as the audit trail writes it".to_owned(),
        ));
    };
    let mut hasher = Sha256::new();
    hasher.update(content.as_bytes());
    hasher.update(b"}");
    if crate::hex::encode(&hasher.finalize()) != head.hash {
        return Err(LineProblem::Edited);
    }
    Ok(CheckedLine {
        seq: head.seq,
        prev: head.prev,
        hash: head.hash,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::gates::audit::jsonl::JsonlAudit;
    use crate::gates::audit::memory::MemoryAudit;
    use crate::gates::audit::sink::AuditSink;
    use crate::gates::audit::testing::{parsed, record, temp_file};

    #[test]
    fn the_line_format_is_fixed() {
        let arguments = json!({"order_id": "A-1024", "amount": 12.5});
        let line = Chain::genesis()
            .next_line(
                &AuditRecord {
                    arguments: Some(&arguments),
                    reason: Some("over\nlimit"),
                    ..record("call_1", AuditDecision::OutOfScope)
                },
                true,
                "2026-12-01T14:05:10.123Z",
            )
            .expect("a line");
        let content = format!(
            "{{\"seq\":1,\"time\":\"2026-12-01T14:05:10.123Z\",\"session\":\"s-1\",\
             \"principal\":\"ada\",\"call_id\":\"call_1\",\"tool\":\"refund_order\",\
             \"version\":\"2\",\"arguments_digest\":\"abc\",\
             \"arguments\":{{\"order_id\":\"A-1024\",\"amount\":12.5}},\
             \"decision\":\"out_of_scope\",\"reason\":\"over\\nlimit\",\"approval_id\":null,\
             \"outcome\":null,\"prev\":\"{GENESIS}\"}}"
        );
        let hash = crate::hex::sha256(content.as_bytes());
        let expected = format!(
            "{},\"hash\":\"{hash}\"}}\n",
            content.strip_suffix('}').expect("an object")
        );
        assert_eq!(line.text, expected);
        assert_eq!(line.hash, hash);
        assert_eq!(line.text.matches('\n').count(), 1, "one line");
    }

    #[test]
    fn arguments_are_written_only_when_asked_for_and_present() {
        let arguments = json!({"order_id": "A-1024"});
        let with = AuditRecord {
            arguments: Some(&arguments),
            ..record("c1", AuditDecision::Auto)
        };
        let line = |with_arguments, record: &AuditRecord<'_>| {
            parsed(
                &Chain::genesis()
                    .next_line(record, with_arguments, "t")
                    .expect("a line")
                    .text,
            )
        };
        assert_eq!(line(true, &with)["arguments"], arguments);
        assert!(line(false, &with).get("arguments").is_none());
        assert!(
            line(true, &record("c1", AuditDecision::Auto))
                .get("arguments")
                .is_none()
        );
        let path = temp_file("wants");
        let audit = JsonlAudit::open(&path).expect("open");
        assert!(!audit.wants_arguments());
        assert!(audit.with_arguments(true).wants_arguments());
        assert!(!MemoryAudit::new().wants_arguments());
        assert!(MemoryAudit::new().with_arguments(true).wants_arguments());
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn times_are_rfc3339_utc_with_milliseconds() {
        assert_eq!(rfc3339_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_millis(951_825_600_000), "2000-02-29T12:00:00.000Z");
        assert_eq!(
            rfc3339_millis(1_709_251_199_999),
            "2024-02-29T23:59:59.999Z"
        );
        assert_eq!(
            rfc3339_millis(1_709_251_200_000),
            "2024-03-01T00:00:00.000Z"
        );
        assert_eq!(rfc3339_millis(946_684_799_000), "1999-12-31T23:59:59.000Z");
        assert_eq!(
            rfc3339_millis(4_107_542_400_000),
            "2100-03-01T00:00:00.000Z"
        );
        assert_eq!(
            rfc3339_millis(1_796_133_910_123),
            "2026-12-01T14:05:10.123Z"
        );
        let now = now_rfc3339();
        assert_eq!(now.len(), "2026-12-01T14:05:10.123Z".len(), "{now}");
    }

    #[test]
    fn civil_from_days_counts_every_day() {
        // Day by day from the epoch for about 550 years, against a plain calendar.
        let (mut year, mut month, mut day) = (1970, 1, 1);
        for days in 0..200_000 {
            assert_eq!(civil_from_days(days), (year, month, day), "day {days}");
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
            let length = match month {
                2 if leap => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            day += 1;
            if day > length {
                day = 1;
                month += 1;
                if month > 12 {
                    month = 1;
                    year += 1;
                }
            }
        }
    }
}
