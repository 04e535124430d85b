//! Secret redaction: API keys of the common providers, bearer tokens, private key blocks and
//! passwords in URLs are replaced by `[REDACTED:<name>]` before the model sees a tool's output.
//!
//! The built-in patterns do not require a word boundary before a key: in JSON text a key often
//! follows an escape (`\nsk-...`) or a letter, and a missed key costs more than a redacted
//! look-alike. They are matched by hand ([`builtin`]); custom patterns each scan the text once
//! with their regex. The replacements are made in one pass, so redaction takes time linear in
//! the text, whatever its content.

mod builtin;

use std::borrow::Cow;

use regex::Regex;

use builtin::{Builtin, Enabled, Found, PATTERNS};

/// A named pattern of secrets. When the regex has a group named `secret`, only that group is
/// replaced (`https://user:[REDACTED:url_password]@host`); otherwise the whole match is.
#[derive(Debug, Clone)]
pub struct SecretPattern {
    name: String,
    regex: Regex,
    has_secret_group: bool,
    /// For a built-in pattern, the hand-written matcher that finds its matches.
    builtin: Option<Builtin>,
}

impl SecretPattern {
    /// A pattern; `name` appears in the replacement, `[REDACTED:name]`.
    pub fn new(name: impl Into<String>, regex: &str) -> Result<Self, regex::Error> {
        let regex = Regex::new(regex)?;
        let has_secret_group = regex.capture_names().any(|name| name == Some("secret"));
        Ok(Self {
            name: name.into(),
            regex,
            has_secret_group,
            builtin: None,
        })
    }

    /// The pattern's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Every match, as (start, end, `index`).
    fn find_all(&self, text: &str, index: usize, found: &mut Vec<Found>) {
        if self.has_secret_group {
            for captures in self.regex.captures_iter(text) {
                if let Some(secret) = captures.name("secret").or_else(|| captures.get(0)) {
                    found.push((secret.start(), secret.end(), index));
                }
            }
        } else {
            found.extend(
                self.regex
                    .find_iter(text)
                    .map(|found| (found.start(), found.end(), index)),
            );
        }
    }
}

/// Finds and replaces secrets.
#[derive(Debug, Clone)]
pub struct Redactor {
    patterns: Vec<SecretPattern>,
    /// The built-in patterns among them, matched by hand.
    builtins: Enabled,
    /// The indices of the others, each scanned with its regex.
    custom: Vec<usize>,
    /// The custom patterns in one alternation: a single pass answers "none of them here" for
    /// most outputs. Only a shortcut: when the alternation cannot be built (many large
    /// patterns), every pattern still runs.
    any_custom: Option<Regex>,
}

impl Default for Redactor {
    fn default() -> Self {
        let patterns = PATTERNS
            .iter()
            .filter_map(|&(builtin, name, regex)| {
                let mut pattern = SecretPattern::new(name, regex).ok()?;
                pattern.builtin = Some(builtin);
                Some(pattern)
            })
            .collect();
        Self::new(patterns)
    }
}

impl Redactor {
    /// A redactor for exactly these patterns.
    pub fn new(patterns: Vec<SecretPattern>) -> Self {
        let mut builtins = Enabled::default();
        let mut custom = Vec::new();
        for (index, pattern) in patterns.iter().enumerate() {
            match pattern.builtin {
                Some(builtin) => builtins.set(builtin, index),
                None => custom.push(index),
            }
        }
        let alternation = custom
            .iter()
            .map(|&index| {
                format!(
                    "(?:{})",
                    patterns[index].regex.as_str().replace("(?P<secret>", "(?:")
                )
            })
            .collect::<Vec<_>>()
            .join("|");
        let any_custom = (!custom.is_empty())
            .then(|| Regex::new(&alternation).ok())
            .flatten();
        Self {
            patterns,
            builtins,
            custom,
            any_custom,
        }
    }

    /// A redactor that redacts nothing.
    pub fn disabled() -> Self {
        Self::new(Vec::new())
    }

    /// The built-in patterns plus `extra`.
    pub fn with_patterns(extra: impl IntoIterator<Item = SecretPattern>) -> Self {
        let mut patterns = Self::default().patterns;
        patterns.extend(extra);
        Self::new(patterns)
    }

    /// The patterns, in the order they are applied.
    pub fn patterns(&self) -> &[SecretPattern] {
        &self.patterns
    }

    /// `text` with every secret replaced, and how many were.
    ///
    /// Matches that overlap are replaced as one, named after the pattern listed first among
    /// those that start there (the most specific), so no part of any match survives.
    pub fn redact<'a>(&self, text: &'a str) -> (Cow<'a, str>, usize) {
        let mut found: Vec<Found> = Vec::new();
        if !self.builtins.is_empty() {
            builtin::scan(text, &self.builtins, &mut found);
        }
        if !self.custom.is_empty()
            && self
                .any_custom
                .as_ref()
                .is_none_or(|any| any.is_match(text))
        {
            for &index in &self.custom {
                self.patterns[index].find_all(text, index, &mut found);
            }
        }
        self.replace(text, found)
    }

    /// Redacts every string and every key of a JSON value in place, without recursion (the
    /// one walk for arguments, error details and anything else held as a value); how many
    /// secrets it took out.
    pub(crate) fn redact_value(&self, value: &mut serde_json::Value) -> u32 {
        use serde_json::Value;
        let mut count: usize = 0;
        let mut redact = |text: &mut String| {
            let (redacted, found) = self.redact(text);
            if let Cow::Owned(redacted) = redacted {
                *text = redacted;
            }
            count = count.saturating_add(found);
        };
        let mut stack = vec![value];
        while let Some(value) = stack.pop() {
            match value {
                Value::String(text) => redact(text),
                Value::Array(items) => stack.extend(items.iter_mut()),
                Value::Object(entries) => {
                    if entries.keys().any(|key| self.redact(key).1 > 0) {
                        let old = std::mem::take(entries);
                        for (mut key, entry) in old {
                            redact(&mut key);
                            entries.insert(key, entry);
                        }
                    }
                    stack.extend(entries.values_mut());
                }
                _ => {}
            }
        }
        u32::try_from(count).unwrap_or(u32::MAX)
    }

    /// `text` with the ranges `found` replaced by their patterns' names, overlapping ranges as
    /// one.
    fn replace<'a>(&self, text: &'a str, mut found: Vec<Found>) -> (Cow<'a, str>, usize) {
        found.retain(|&(start, end, _)| start < end);
        if found.is_empty() {
            return (Cow::Borrowed(text), 0);
        }
        // By start, then the most specific pattern first.
        found.sort_unstable_by_key(|&(start, _, pattern)| (start, pattern));
        let mut redacted = String::with_capacity(text.len());
        let mut count = 0;
        let mut copied = 0;
        let mut position = 0;
        while position < found.len() {
            let (start, mut end, pattern) = found[position];
            position += 1;
            // Overlapping matches become one replacement.
            while let Some(&(next_start, next_end, _)) = found.get(position) {
                if next_start >= end {
                    break;
                }
                end = end.max(next_end);
                position += 1;
            }
            redacted.push_str(&text[copied..start]);
            redacted.push_str("[REDACTED:");
            redacted.push_str(&self.patterns[pattern].name);
            redacted.push(']');
            copied = end;
            count += 1;
        }
        redacted.push_str(&text[copied..]);
        (Cow::Owned(redacted), count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;

    static DEFAULT: std::sync::LazyLock<Redactor> = std::sync::LazyLock::new(Redactor::default);

    fn redact(text: &str) -> (String, usize) {
        let (text, count) = Redactor::default().redact(text);
        (text.into_owned(), count)
    }

    #[test]
    fn provider_keys_are_replaced_with_their_names() {
        assert_eq!(
            redact(
                "key=sk-proj-abcdefghijklmnopqrstuvwx1234 and sk-ant-api03-abcdefghijklmnopqrstuv"
            ),
            (
                "key=[REDACTED:openai_api_key] and [REDACTED:anthropic_api_key]".to_owned(),
                2
            )
        );
        assert_eq!(
            redact("AKIAIOSFODNN7EXAMPLE ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"),
            (
                "[REDACTED:aws_access_key_id] [REDACTED:github_token]".to_owned(),
                2
            )
        );
        assert_eq!(
            redact("AIzaSyA-0123456789abcdefghijklmnopqrstu"),
            ("[REDACTED:google_api_key]".to_owned(), 1)
        );
    }

    #[test]
    fn only_the_secret_part_of_urls_and_headers_goes() {
        assert_eq!(
            redact(r#"{"url":"https://deploy:hunter2@db.example/v1","auth":"Bearer abc.def.ghi-123"}"#),
            (
                r#"{"url":"https://deploy:[REDACTED:url_password]@db.example/v1","auth":"Bearer [REDACTED:bearer_token]"}"#
                    .to_owned(),
                2
            )
        );
    }

    #[test]
    fn private_key_blocks_go_whole_even_json_escaped() {
        let text = "before \"-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEA\\n-----END RSA PRIVATE KEY-----\" after";
        assert_eq!(
            redact(text),
            ("before \"[REDACTED:private_key]\" after".to_owned(), 1)
        );
    }

    #[test]
    fn every_builtin_secret_is_found() {
        let secrets = [
            "-----BEGIN PRIVATE KEY-----\nab\n-----END PRIVATE KEY-----",
            "sk-ant-api03-abcdefghijklmnopqrstuv",
            "sk_live_0123456789abcdef",
            "sk-0123456789abcdefghij",
            "AKIAIOSFODNN7EXAMPLE",
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
            "github_pat_0123456789abcdefghijkl",
            "AIzaSyA-0123456789abcdefghijklmnopqrstu",
            "xoxb-0123456789",
            "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.c2lnbmF0dXJlXyz",
            "Bearer abcdefgh",
            "BEARER abcdefgh",
            "https://u:p@h",
        ];
        let redactor = Redactor::default();
        for secret in secrets {
            let text = format!("{{\"value\": \"{secret}\"}}");
            assert_eq!(redactor.redact(&text).1, 1, "{secret}");
        }
        assert_eq!(
            redactor
                .redact(r#"{"order_id":"A-1024","status":"shipped"}"#)
                .1,
            0
        );
    }

    #[test]
    fn custom_patterns_are_not_prefiltered() {
        let Ok(pattern) = SecretPattern::new("ticket", r"TKT-[0-9]{3}") else {
            panic!("pattern");
        };
        let (text, count) = Redactor::with_patterns([pattern]).redact("TKT-123");
        assert_eq!((text.as_ref(), count), ("[REDACTED:ticket]", 1));
    }

    #[test]
    fn a_key_after_a_letter_or_an_escape_is_redacted() {
        let key = "sk-proj-abcdefghijklmnopqrstuvwx1234";
        let json = serde_json::json!({ "content": format!("first line\n{key}") }).to_string();
        assert!(json.contains("\\nsk-proj"), "{json}");
        let (redacted, count) = redact(&json);
        assert_eq!(count, 1);
        assert!(!redacted.contains(key), "{redacted}");
        for prefix in ["x", "_", "é", "token=", "9"] {
            let (redacted, count) = redact(&format!("{prefix}{key}"));
            assert_eq!(
                (redacted, count),
                (format!("{prefix}[REDACTED:openai_api_key]"), 1)
            );
        }
    }

    #[test]
    fn overlapping_matches_leave_nothing_of_either() {
        // A bearer token that is also a JWT: one replacement, nothing left over.
        let text = "Authorization: Bearer eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.c2lnbmF0dXJlXyz tail";
        let (redacted, count) = redact(text);
        assert_eq!(
            (redacted.as_str(), count),
            ("Authorization: Bearer [REDACTED:jwt] tail", 1)
        );
    }

    #[test]
    fn a_match_that_starts_inside_another_and_ends_beyond_it_goes_whole() {
        // Why each pattern scans on its own: one scan of the alternation would find `abc` and
        // resume after it, letting `def`, the rest of the second match, through.
        let patterns: Vec<SecretPattern> = [("first", "abc"), ("second", "bcdef")]
            .into_iter()
            .filter_map(|(name, regex)| SecretPattern::new(name, regex).ok())
            .collect();
        let (redacted, count) = Redactor::new(patterns).redact("xx abcdef yy");
        assert_eq!((redacted.as_ref(), count), ("xx [REDACTED:first] yy", 1));
    }

    #[test]
    fn many_secrets_are_replaced_in_one_pass() {
        let key = "sk-proj-abcdefghijklmnopqrstuvwx1234";
        let text: String = (0..2_000).map(|n| format!("{n} {key}\n")).collect();
        let (redacted, count) = redact(&text);
        assert_eq!(count, 2_000);
        assert!(!redacted.contains(key));
    }

    #[test]
    fn custom_patterns_too_large_together_still_redact() {
        let patterns: Vec<SecretPattern> = (0..10)
            .filter_map(|n| SecretPattern::new(format!("long{n}"), r"\w{200}").ok())
            .collect();
        assert_eq!(patterns.len(), 10);
        let redactor = Redactor::with_patterns(patterns);
        let (redacted, count) = redactor.redact("key sk-proj-abcdefghijklmnopqrstuvwx1234 end");
        assert_eq!(
            (redacted.as_ref(), count),
            ("key [REDACTED:openai_api_key] end", 1)
        );
        let long = "a".repeat(200);
        assert_eq!(redactor.redact(&long).1, 1);
    }

    /// The built-in patterns' matches found by their regexes, anchored at every character
    /// boundary: what the hand-written matcher must find.
    fn reference_redact(text: &str) -> (String, usize) {
        static ANCHORED: std::sync::LazyLock<Vec<Regex>> = std::sync::LazyLock::new(|| {
            PATTERNS
                .iter()
                .filter_map(|(_, _, regex)| Regex::new(&format!("^(?:{regex})")).ok())
                .collect()
        });
        assert_eq!(ANCHORED.len(), PATTERNS.len());
        let mut found = Vec::new();
        for (start, _) in text.char_indices() {
            for (index, regex) in ANCHORED.iter().enumerate() {
                if let Some(captures) = regex.captures(&text[start..])
                    && let Some(range) = captures.name("secret").or_else(|| captures.get(0))
                {
                    found.push((start + range.start(), start + range.end(), index));
                }
            }
        }
        let (text, count) = DEFAULT.replace(text, found);
        (text.into_owned(), count)
    }

    /// Text made of secrets, parts of secrets, separators and words.
    fn secret_like_text() -> impl Strategy<Value = String> {
        let secret = proptest::sample::select(PATTERNS.to_vec()).prop_flat_map(|(_, _, regex)| {
            proptest::string::string_regex(&regex.replace("(?P<secret>", "("))
                .unwrap_or_else(|_| unreachable!("built-in patterns are valid"))
        });
        let piece = proptest::sample::select(vec![
            "sk-",
            "sk-ant-",
            "sk_live_",
            "rk_test_",
            "-----BEGIN ",
            "-----END ",
            "RSA ",
            "PRIVATE KEY",
            "-----",
            "AKIA",
            "ASIA",
            "AIza",
            "aws_secret_access_key",
            "AWS_Secret_Access_KEY",
            "ghp_",
            "github_pat_",
            "github",
            "xoxb-",
            "eyJ",
            "Bearer",
            "bEaReR",
            "://",
            "user",
            ":",
            "@",
            "=",
            "\"",
            "'",
            ".",
            "/",
            " ",
            "\n",
            "\t",
            "\u{a0}",
            "\u{2003}",
            "é",
            "東",
            "_",
            "-",
        ])
        .prop_map(String::from);
        let fragment = proptest::prop_oneof![2 => secret, 5 => piece, 2 => "[A-Za-z0-9]{1,12}"];
        proptest::collection::vec(fragment, 0..16).prop_map(|fragments| fragments.concat())
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(2_000))]

        #[test]
        fn the_hand_written_matcher_finds_what_the_regexes_find(text in secret_like_text()) {
            let (redacted, count) = DEFAULT.redact(&text);
            let expected = reference_redact(&text);
            proptest::prop_assert_eq!((redacted.into_owned(), count), expected, "{:?}", text);
        }

        #[test]
        fn one_pass_over_a_short_text_finds_what_three_passes_find(text in secret_like_text()) {
            let [short, long] = builtin::scan_each_way(&text, &DEFAULT.builtins);
            proptest::prop_assert_eq!(short, long, "{:?}", text);
        }

        #[test]
        fn every_string_a_builtin_pattern_matches_is_redacted(
            (pattern, secret) in proptest::sample::select(PATTERNS.to_vec())
                .prop_flat_map(|(_, name, regex)| {
                    // Generate from the pattern itself (without its group name).
                    let generator = regex.replace("(?P<secret>", "(");
                    (proptest::strategy::Just(name), proptest::string::string_regex(&generator)
                        .unwrap_or_else(|_| unreachable!("built-in patterns are valid")))
                }),
            prefix in "[a-z_ \\n\"é]{0,4}",
            suffix in "[ ,\"}]{0,3}",
        ) {
            let text = format!("{prefix}{secret}{suffix}");
            let (redacted, count) = DEFAULT.redact(&text);
            proptest::prop_assert!(count >= 1, "{pattern}: {text:?}");
            proptest::prop_assert!(redacted.contains("[REDACTED:"), "{pattern}: {redacted:?}");
        }
    }

    /// Texts where nearly every position starts a match: the shapes the matcher skips starts
    /// in or shares a search across.
    fn crowded_texts(repeat: usize) -> Vec<String> {
        vec![
            "sk-".repeat(repeat),
            "xoxb-".repeat(repeat),
            "github_pat_".repeat(repeat),
            "ghp_0123456789abcdefghijklmnopqrstuvwxyzgithub".repeat(repeat),
            "eyJ".repeat(repeat) + ".abcdefgh.abcdefgh",
            "eyJabcdefgh.".repeat(repeat),
            "-----BEGIN PRIVATE KEY-----".repeat(repeat),
            "-----BEGIN PRIVATE KEY-----\n".repeat(repeat) + "-----END PRIVATE KEY-----",
            "Bearer ".repeat(repeat) + "abcdefgh",
            "https://u:p@".repeat(repeat),
            "aws_secret_access_key=".repeat(repeat) + &"A".repeat(40),
        ]
    }

    #[test]
    fn crowded_starts_find_what_the_regexes_find() {
        for text in crowded_texts(60) {
            let (redacted, count) = DEFAULT.redact(&text);
            assert_eq!(
                (redacted.into_owned(), count),
                reference_redact(&text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn clean_text_is_borrowed_untouched() {
        let (text, count) = Redactor::default().redact("order A-1024 shipped");
        assert!(matches!(text, Cow::Borrowed(_)));
        assert_eq!(count, 0);
    }
}
