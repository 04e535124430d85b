//! The digest that names a call's arguments: in its idempotency key, its audit lines and the
//! decision that resumes it.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// SHA-256 (lowercase hex) of the canonical JSON of `arguments`: object keys sorted at every
/// level, no whitespace, numbers as serde_json writes them.
///
/// Keys sort by their UTF-8 bytes; arrays keep their order; strings and numbers are written
/// as serde_json writes them. The walk uses its own stack, so depth costs heap, not stack.
pub(crate) fn arguments_digest(arguments: &Value) -> String {
    let mut hasher = Sha256::new();
    write_canonical(arguments, &mut |bytes| hasher.update(bytes));
    crate::hex::encode(&hasher.finalize())
}

/// Writes the canonical JSON of `value` to `out`, piece by piece.
fn write_canonical(value: &Value, out: &mut impl FnMut(&[u8])) {
    enum Step<'a> {
        Value(&'a Value),
        Key(&'a str),
        Text(&'static [u8]),
    }

    let mut stack = vec![Step::Value(value)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Text(text) => out(text),
            Step::Key(key) => {
                out(Value::from(key).to_string().as_bytes());
                out(b":");
            }
            Step::Value(Value::Array(items)) => {
                stack.push(Step::Text(b"]"));
                for (index, item) in items.iter().enumerate().rev() {
                    stack.push(Step::Value(item));
                    if index > 0 {
                        stack.push(Step::Text(b","));
                    }
                }
                stack.push(Step::Text(b"["));
            }
            Step::Value(Value::Object(map)) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                stack.push(Step::Text(b"}"));
                for (index, (key, item)) in entries.into_iter().enumerate().rev() {
                    stack.push(Step::Value(item));
                    stack.push(Step::Key(key));
                    if index > 0 {
                        stack.push(Step::Text(b","));
                    }
                }
                stack.push(Step::Text(b"{"));
            }
            // Null, booleans, numbers and strings: serde_json's compact text.
            Step::Value(scalar) => out(scalar.to_string().as_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn digest_ignores_key_order_only() {
        let a = json!({"b": 1, "a": {"y": [1, {"q": true, "p": null}], "x": "s"}});
        let b = json!({"a": {"x": "s", "y": [1, {"p": null, "q": true}]}, "b": 1});
        assert_eq!(arguments_digest(&a), arguments_digest(&b));

        let digest = arguments_digest(&a);
        assert_eq!(digest.len(), 64);
        assert!(
            digest
                .bytes()
                .all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'))
        );

        for different in [
            json!({"b": 2, "a": {"y": [1, {"q": true, "p": null}], "x": "s"}}),
            json!({"b": 1, "a": {"y": [{"q": true, "p": null}, 1], "x": "s"}}),
            json!({"b": 1, "a": {"y": [1, {"q": false, "p": null}], "x": "s"}}),
            json!({"b": "1", "a": {"y": [1, {"q": true, "p": null}], "x": "s"}}),
            json!({"b": 1.0, "a": {"y": [1, {"q": true, "p": null}], "x": "s"}}),
            json!({"b": 1}),
        ] {
            assert_ne!(arguments_digest(&different), digest, "{different}");
        }
    }

    #[test]
    fn digest_is_sha256_of_canonical_text() {
        let value = json!({"z": [3, 1.5, "é\n\"", null], "a": {"d": false, "c": -7}, "B": {}});
        let mut text = Vec::new();
        write_canonical(&value, &mut |bytes| text.extend_from_slice(bytes));
        let canonical = r#"{"B":{},"a":{"c":-7,"d":false},"z":[3,1.5,"é\n\"",null]}"#;
        assert_eq!(String::from_utf8(text).expect("utf-8"), canonical);
        assert_eq!(
            arguments_digest(&value),
            crate::hex::sha256(canonical.as_bytes())
        );
        // A known vector: SHA-256 of `{}`.
        assert_eq!(
            arguments_digest(&json!({})),
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }

    #[test]
    fn digest_handles_deep_nesting() {
        let mut value = json!(1);
        for _ in 0..10_000 {
            value = Value::Array(vec![value]);
        }
        assert_eq!(arguments_digest(&value).len(), 64);
        // Dropping a deep `Value` recurses; unwind it by hand.
        while let Value::Array(mut items) = value {
            value = items.pop().unwrap_or(Value::Null);
        }
    }
}
