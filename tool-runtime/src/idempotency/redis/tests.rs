//! How values, key segments and expiries are encoded.

use std::time::Duration;

use super::codec::{Entry, EntryRef, MAX_TTL_MILLIS, escape, ttl_millis};
use crate::idempotency::store::StoredResult;

#[test]
fn escape_keeps_segments_apart() {
    assert_eq!(escape("s-1"), "s-1");
    assert_eq!(escape("a:b"), "a%3Ab");
    assert_eq!(escape("50%:x"), "50%25%3Ax");
    assert_ne!(
        format!("{}:{}", escape("a:b"), escape("c")),
        format!("{}:{}", escape("a"), escape("b:c"))
    );
}

#[test]
fn ttl_is_at_least_a_millisecond() {
    assert_eq!(ttl_millis(Duration::ZERO), 1);
    assert_eq!(ttl_millis(Duration::from_micros(1500)), 1);
    assert_eq!(ttl_millis(Duration::from_secs(3)), 3000);
    assert_eq!(ttl_millis(Duration::MAX), MAX_TTL_MILLIS);
}

#[test]
fn values_have_their_documented_shape() {
    let pending = serde_json::to_value(EntryRef::Pending {
        holder: "h",
        lease: "l",
        arguments_digest: "d",
        confirmed: false,
    })
    .expect("encodes");
    assert_eq!(
        pending,
        serde_json::json!({"state": "pending", "holder": "h", "lease": "l", "arguments_digest": "d", "confirmed": false})
    );
    let result = StoredResult {
        arguments_digest: "d".into(),
        output: "\"ok\"".into(),
        page: None,
        content_blocks: false,
    };
    let done = serde_json::to_string(&EntryRef::Done { result: &result }).expect("encodes");
    assert_eq!(
        done,
        r#"{"state":"done","result":{"arguments_digest":"d","output":"\"ok\""}}"#
    );
    // The claim script tells a result by this prefix, without decoding it.
    assert!(done.starts_with(r#"{"state":"done""#));
    assert!(matches!(
        serde_json::from_str(&done),
        Ok(Entry::Done { result: read }) if read == result
    ));
    assert!(matches!(
        serde_json::from_value(pending),
        Ok(Entry::Pending {})
    ));
}
