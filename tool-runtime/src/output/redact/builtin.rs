//! The built-in secret patterns, matched by hand.
//!
//! The regexes in [`PATTERNS`] say what each pattern matches, and this module finds the same
//! matches (a test compares the two on generated text). It does so in three passes of `memchr`
//! over anchor bytes that every match of a pattern holds at a fixed offset (`-` of `sk-`, `_`
//! of `ghp_`, `J` of `eyJ`, ...), checking the few places they occur. A regex engine over
//! secret-dense text spends about what serde_json's parse of it does on one pass; these passes
//! cost a fraction of that.
//!
//! A match is looked for at every place one can start, not only after the previous match:
//! one starting inside another and ending beyond it must go too (the caller merges overlaps).
//! Starts that can only find what an earlier one found are skipped, and the search for the end
//! of a private key block is shared by the blocks before it, so the work stays linear in the
//! text whatever it holds.

use std::sync::LazyLock;

use memchr::{memchr3_iter, memmem};

// Built once: a searcher costs more to build than a short output costs to scan.
static SCHEME_END: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new(b"://"));
static PRIVATE_KEY_END: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new(b"-----END "));

/// A match: the byte range to replace (the `secret` group's, when the pattern has one) and the
/// index of the redactor's pattern.
pub(super) type Found = (usize, usize, usize);

/// The built-in patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Builtin {
    PrivateKey,
    AnthropicApiKey,
    StripeSecretKey,
    OpenaiApiKey,
    AwsAccessKeyId,
    AwsSecretAccessKey,
    GithubToken,
    GoogleApiKey,
    SlackToken,
    Jwt,
    BearerToken,
    UrlPassword,
}

const COUNT: usize = 12;

/// Where the skip point of `github_pat_` tokens is kept: they share a pattern with `ghp_`
/// tokens but not a run (a `ghp_` run can end with `github`, where a `github_pat_` starts).
const GITHUB_PAT_SLOT: usize = COUNT;

/// The built-in patterns, most specific first: name and the regex each one matches.
/// Case-insensitive parts are ASCII-only (`(?i-u:...)`): Unicode case folding would let `ſ`
/// stand for `s`, which no key contains. None looks behind its start, so a match depends only
/// on the text from where it starts.
pub(super) const PATTERNS: [(Builtin, &str, &str); COUNT] = [
    (
        Builtin::PrivateKey,
        "private_key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----",
    ),
    (
        Builtin::AnthropicApiKey,
        "anthropic_api_key",
        r"sk-ant-[A-Za-z0-9_-]{20,}",
    ),
    (
        Builtin::StripeSecretKey,
        "stripe_secret_key",
        r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",
    ),
    (
        Builtin::OpenaiApiKey,
        "openai_api_key",
        r"sk-[A-Za-z0-9_-]{20,}",
    ),
    (
        Builtin::AwsAccessKeyId,
        "aws_access_key_id",
        r"(?:AKIA|ASIA)[0-9A-Z]{16}",
    ),
    (
        Builtin::AwsSecretAccessKey,
        "aws_secret_access_key",
        r#"(?i-u:aws_secret_access_key)["']?\s*[:=]\s*["']?(?P<secret>[A-Za-z0-9/+=]{40})"#,
    ),
    (
        Builtin::GithubToken,
        "github_token",
        r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    (
        Builtin::GoogleApiKey,
        "google_api_key",
        r"AIza[0-9A-Za-z_-]{35}",
    ),
    (
        Builtin::SlackToken,
        "slack_token",
        r"xox[abposr]-[A-Za-z0-9-]{10,}",
    ),
    (
        Builtin::Jwt,
        "jwt",
        r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    ),
    (
        Builtin::BearerToken,
        "bearer_token",
        r"(?i-u:bearer)\s+(?P<secret>[A-Za-z0-9._~+/-]{8,}=*)",
    ),
    (
        Builtin::UrlPassword,
        "url_password",
        r#"://[^/\s:@"']+:(?P<secret>[^@\s/"']+)@"#,
    ),
];

/// Which built-ins a redactor applies, and the index of the pattern each stands for.
#[derive(Debug, Clone, Default)]
pub(super) struct Enabled([Option<usize>; COUNT]);

impl Enabled {
    /// Applies `builtin` as pattern `index` (the first listed, when it is listed twice: the
    /// same matches, named the same).
    pub(super) fn set(&mut self, builtin: Builtin, index: usize) {
        self.0[builtin as usize].get_or_insert(index);
    }

    fn get(&self, builtin: Builtin) -> Option<usize> {
        self.0[builtin as usize]
    }

    fn any(&self, builtins: &[Builtin]) -> bool {
        builtins.iter().any(|&builtin| self.get(builtin).is_some())
    }

    /// Whether no built-in is applied.
    pub(super) fn is_empty(&self) -> bool {
        self.0.iter().all(Option::is_none)
    }
}

/// Pushes onto `found` every match of the enabled built-ins in `text`, in no particular order.
/// Texts up to this long are scanned in one pass.
const SHORT: usize = 256;

/// The bytes a match can start at, for the one pass.
static STARTS: [bool; 256] = {
    let mut starts = [false; 256];
    let mut index = 0;
    let bytes = *b"-_AJbB:";
    while index < bytes.len() {
        starts[bytes[index] as usize] = true;
        index += 1;
    }
    starts
};

pub(super) fn scan(text: &str, enabled: &Enabled, found: &mut Vec<Found>) {
    let mut scanner = Scanner {
        text,
        bytes: text.as_bytes(),
        enabled,
        found,
        skip_until: [0; COUNT + 1],
        private_key_end: None,
    };
    scanner.run();
}

/// What the one pass and the three passes find in `text`, sorted.
#[cfg(test)]
pub(super) fn scan_each_way(text: &str, enabled: &Enabled) -> [Vec<Found>; 2] {
    let mut each = [Vec::new(), Vec::new()];
    for (way, found) in each.iter_mut().enumerate() {
        let mut scanner = Scanner {
            text,
            bytes: text.as_bytes(),
            enabled,
            found,
            skip_until: [0; COUNT + 1],
            private_key_end: None,
        };
        if way == 0 {
            scanner.run_short();
        } else {
            scanner.run_long();
        }
        found.sort_unstable();
    }
    each
}

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    enabled: &'a Enabled,
    found: &'a mut Vec<Found>,
    /// Per pattern (and `github_pat_`): a start before this can only find what an earlier
    /// start found.
    skip_until: [usize; COUNT + 1],
    /// The first complete `-----END ... PRIVATE KEY-----` at or after `.0`: its start and end
    /// (`None` when there is none).
    private_key_end: Option<(usize, Option<(usize, usize)>)>,
}

impl Scanner<'_> {
    fn run(&mut self) {
        if self.bytes.len() <= SHORT {
            self.run_short();
        } else {
            self.run_long();
        }
    }

    /// Which passes apply: the bytes starting the first group's, the second's, and `://`.
    fn passes(&self) -> (bool, bool, bool) {
        use Builtin::*;
        (
            self.enabled.any(&[
                PrivateKey,
                AnthropicApiKey,
                StripeSecretKey,
                OpenaiApiKey,
                AwsAccessKeyId,
                AwsSecretAccessKey,
                GithubToken,
                GoogleApiKey,
                SlackToken,
            ]),
            self.enabled.any(&[Jwt, BearerToken]),
            self.enabled.get(UrlPassword).is_some(),
        )
    }

    /// Three passes of `memchr`, each over the whole text.
    fn run_long(&mut self) {
        let bytes = self.bytes;
        let (first, second, urls) = self.passes();
        if first {
            for at in memchr3_iter(b'-', b'_', b'A', bytes) {
                match bytes[at] {
                    b'-' => self.at_dash(at),
                    b'_' => self.at_underscore(at),
                    _ => self.at_capital_a(at),
                }
            }
        }
        if second {
            for at in memchr3_iter(b'J', b'b', b'B', bytes) {
                if bytes[at] == b'J' {
                    self.at_capital_j(at);
                } else {
                    self.at_b(at);
                }
            }
        }
        if urls {
            for at in SCHEME_END.find_iter(bytes) {
                self.url_password(at);
            }
        }
    }

    /// One pass over a short text, which costs less than setting up three: the same starts,
    /// met in another order (each pass keeps its own state, and the matches are sorted).
    fn run_short(&mut self) {
        let bytes = self.bytes;
        let (first, second, urls) = self.passes();
        for (at, &byte) in bytes.iter().enumerate() {
            if !STARTS[usize::from(byte)] {
                continue;
            }
            match byte {
                b'-' if first => self.at_dash(at),
                b'_' if first => self.at_underscore(at),
                b'A' if first => self.at_capital_a(at),
                b'J' if second => self.at_capital_j(at),
                b'b' | b'B' if second => self.at_b(at),
                b':' if urls && bytes[at + 1..].starts_with(b"//") => self.url_password(at),
                _ => {}
            }
        }
    }

    /// Records a match of `builtin`, when it is applied.
    fn push(&mut self, builtin: Builtin, start: usize, end: usize) {
        if let Some(index) = self.enabled.get(builtin) {
            self.found.push((start, end, index));
        }
    }

    /// Whether `builtin` is applied and a match starting at `start` can find something new.
    fn worth_trying(&self, builtin: Builtin, slot: usize, start: usize) -> bool {
        self.enabled.get(builtin).is_some() && start >= self.skip_until[slot]
    }

    /// `literal` followed by a run of `class` at least `min` long, from `start`. When the
    /// literal is made of the run's bytes, later starts inside the run end where it ends, so
    /// they are skipped (otherwise, as in `sk_live_`, the run holds no other start).
    fn literal_then_run(
        &mut self,
        (builtin, slot): (Builtin, usize),
        start: usize,
        literal: &[u8],
        class: &Class,
        min: usize,
    ) {
        if !self.worth_trying(builtin, slot, start) || !starts_with_at(self.bytes, start, literal) {
            return;
        }
        let from = start + literal.len();
        let end = run(self.bytes, from, class);
        if literal.iter().all(|&byte| class.has(byte)) {
            self.skip_until[slot] = end;
        }
        if end - from >= min {
            self.push(builtin, start, end);
        }
    }

    fn at_dash(&mut self, at: usize) {
        let bytes = self.bytes;
        if self.enabled.get(Builtin::PrivateKey).is_some()
            && starts_with_at(bytes, at, b"-----BEGIN ")
        {
            self.private_key(at);
        }
        if ends_with_at(bytes, at, b"sk") {
            self.literal_then_run(own(Builtin::AnthropicApiKey), at - 2, b"sk-ant-", &KEY, 20);
            self.literal_then_run(own(Builtin::OpenaiApiKey), at - 2, b"sk-", &KEY, 20);
        }
        if at >= 4 && ends_with_at(bytes, at - 1, b"xox") && b"abposr".contains(&bytes[at - 1]) {
            let start = at - 4;
            let literal = &bytes[start..=at];
            self.literal_then_run(own(Builtin::SlackToken), start, literal, &SLACK, 10);
        }
    }

    fn at_underscore(&mut self, at: usize) {
        let bytes = self.bytes;
        if at >= 2
            && matches!(bytes[at - 2], b's' | b'r')
            && bytes[at - 1] == b'k'
            && (starts_with_at(bytes, at + 1, b"live_") || starts_with_at(bytes, at + 1, b"test_"))
        {
            let start = at - 2;
            let literal = &bytes[start..at + 6];
            self.literal_then_run(
                own(Builtin::StripeSecretKey),
                start,
                literal,
                &ALPHANUMERIC,
                16,
            );
        }
        if at >= 3
            && bytes[at - 3..at].eq_ignore_ascii_case(b"aws")
            && bytes
                .get(at..at + 18)
                .is_some_and(|rest| rest.eq_ignore_ascii_case(b"_secret_access_key"))
        {
            self.aws_secret_access_key(at + 18);
        }
        if at >= 3 && ends_with_at(bytes, at - 1, b"gh") && b"pousr".contains(&bytes[at - 1]) {
            let start = at - 3;
            let literal = &bytes[start..=at];
            self.literal_then_run(own(Builtin::GithubToken), start, literal, &ALPHANUMERIC, 36);
        }
        if at >= 6 && ends_with_at(bytes, at, b"github") {
            let github_pat = (Builtin::GithubToken, GITHUB_PAT_SLOT);
            self.literal_then_run(github_pat, at - 6, b"github_pat_", &PAT, 22);
        }
    }

    fn at_capital_a(&mut self, at: usize) {
        let bytes = self.bytes;
        let fixed = |literal: &[u8], length: usize, class: &Class| {
            starts_with_at(bytes, at, literal)
                && bytes
                    .get(at + literal.len()..at + literal.len() + length)
                    .is_some_and(|run| run.iter().all(|&byte| class.has(byte)))
        };
        if fixed(b"AKIA", 16, &UPPER_OR_DIGIT) || fixed(b"ASIA", 16, &UPPER_OR_DIGIT) {
            self.push(Builtin::AwsAccessKeyId, at, at + 20);
        }
        if fixed(b"AIza", 35, &KEY) {
            self.push(Builtin::GoogleApiKey, at, at + 39);
        }
    }

    fn at_capital_j(&mut self, at: usize) {
        if at < 2 || !ends_with_at(self.bytes, at, b"ey") {
            return;
        }
        let start = at - 2;
        if !self.worth_trying(Builtin::Jwt, Builtin::Jwt as usize, start) {
            return;
        }
        // Three runs joined by dots; starts inside the first run find the same three.
        let bytes = self.bytes;
        let first = run(bytes, at + 1, &KEY);
        self.skip_until[Builtin::Jwt as usize] = first;
        if first - (at + 1) < 8 || bytes.get(first) != Some(&b'.') {
            return;
        }
        let second = run(bytes, first + 1, &KEY);
        if second - (first + 1) < 8 || bytes.get(second) != Some(&b'.') {
            return;
        }
        let third = run(bytes, second + 1, &KEY);
        if third - (second + 1) >= 8 {
            self.push(Builtin::Jwt, start, third);
        }
    }

    fn at_b(&mut self, at: usize) {
        let bytes = self.bytes;
        if self.enabled.get(Builtin::BearerToken).is_none()
            || !bytes
                .get(at..at + 6)
                .is_some_and(|word| word.eq_ignore_ascii_case(b"bearer"))
        {
            return;
        }
        let token = whitespace_run(self.text, at + 6);
        if token == at + 6 {
            return;
        }
        let token_end = run(bytes, token, &BEARER);
        if token_end - token >= 8 {
            let end = run(bytes, token_end, &PADDING);
            self.push(Builtin::BearerToken, token, end);
        }
    }

    /// After `aws_secret_access_key` (ending at `from`): an optional quote, `:` or `=` between
    /// spaces, an optional quote, and 40 characters of the key.
    fn aws_secret_access_key(&mut self, mut from: usize) {
        let bytes = self.bytes;
        let quote = |at: usize| matches!(bytes.get(at), Some(b'"' | b'\''));
        if quote(from) {
            from += 1;
        }
        from = whitespace_run(self.text, from);
        if !matches!(bytes.get(from), Some(b':' | b'=')) {
            return;
        }
        from = whitespace_run(self.text, from + 1);
        if quote(from) {
            from += 1;
        }
        let secret = from..from + 40;
        if bytes
            .get(secret.clone())
            .is_some_and(|key| key.iter().all(|&byte| AWS_SECRET.has(byte)))
        {
            self.push(Builtin::AwsSecretAccessKey, secret.start, secret.end);
        }
    }

    /// `://user:password@`: the password.
    fn url_password(&mut self, at: usize) {
        let user_end = char_run(self.text, at + 3, |c| {
            !matches!(c, '/' | ':' | '@' | '"' | '\'') && !c.is_whitespace()
        });
        if user_end == at + 3 || self.bytes.get(user_end) != Some(&b':') {
            return;
        }
        let from = user_end + 1;
        let end = char_run(self.text, from, |c| {
            !matches!(c, '@' | '/' | '"' | '\'') && !c.is_whitespace()
        });
        if end > from && self.bytes.get(end) == Some(&b'@') {
            self.push(Builtin::UrlPassword, from, end);
        }
    }

    /// A private key block from its `-----BEGIN` at `start` to the first `-----END` line after
    /// its header.
    fn private_key(&mut self, start: usize) {
        let Some(header_end) = key_line_end(self.bytes, start + b"-----BEGIN ".len()) else {
            return;
        };
        if let Some((_, end)) = self.next_private_key_end(header_end) {
            self.push(Builtin::PrivateKey, start, end);
        }
    }

    /// The first complete `-----END ... PRIVATE KEY-----` starting at or after `from`.
    /// Blocks are met in order, so the answer for one serves the next ones until `from` passes
    /// it: the text after each block is searched once.
    fn next_private_key_end(&mut self, from: usize) -> Option<(usize, usize)> {
        if let Some((searched_from, found)) = self.private_key_end
            && searched_from <= from
            && found.is_none_or(|(start, _)| start >= from)
        {
            return found;
        }
        let found = PRIVATE_KEY_END
            .find_iter(&self.bytes[from..])
            .find_map(|offset| {
                let start = from + offset;
                key_line_end(self.bytes, start + b"-----END ".len()).map(|end| (start, end))
            });
        self.private_key_end = Some((from, found));
        found
    }
}

/// The end of `[A-Z0-9 ]*PRIVATE KEY-----` starting at `from`, if it is there. The letters and
/// spaces run as far as they go; since `PRIVATE KEY` is made of them and `-` is not, the run
/// must end with it and be followed by the dashes.
fn key_line_end(bytes: &[u8], from: usize) -> Option<usize> {
    let end = run(bytes, from, &KEY_LINE);
    let suffix = b"PRIVATE KEY";
    (end - from >= suffix.len()
        && ends_with_at(bytes, end, suffix)
        && starts_with_at(bytes, end, b"-----"))
    .then_some(end + 5)
}

fn starts_with_at(bytes: &[u8], at: usize, literal: &[u8]) -> bool {
    bytes
        .get(at..)
        .is_some_and(|rest| rest.starts_with(literal))
}

/// Whether the text before `end` ends with `literal`.
fn ends_with_at(bytes: &[u8], end: usize, literal: &[u8]) -> bool {
    bytes
        .get(..end)
        .is_some_and(|before| before.ends_with(literal))
}

/// The end of the run of `class` bytes starting at `from`.
fn run(bytes: &[u8], from: usize, class: &Class) -> usize {
    bytes.get(from..).map_or(from, |rest| {
        rest.iter()
            .position(|&byte| !class.has(byte))
            .map_or(bytes.len(), |length| from + length)
    })
}

/// The end of the run of `class` characters starting at `from` (a character boundary).
fn char_run(text: &str, from: usize, class: impl Fn(char) -> bool) -> usize {
    text.get(from..).map_or(from, |rest| {
        rest.char_indices()
            .find(|&(_, c)| !class(c))
            .map_or(text.len(), |(length, _)| from + length)
    })
}

/// The end of the whitespace (Unicode's, as the regex `\s`) starting at `from`.
fn whitespace_run(text: &str, from: usize) -> usize {
    char_run(text, from, char::is_whitespace)
}

/// A pattern with the skip point of its own.
fn own(builtin: Builtin) -> (Builtin, usize) {
    (builtin, builtin as usize)
}

/// A byte class of the patterns, as a table: a run costs one load per byte.
struct Class([bool; 256]);

impl Class {
    /// The bytes in these inclusive ranges.
    const fn new(ranges: &[(u8, u8)]) -> Self {
        let mut table = [false; 256];
        let mut index = 0;
        while index < ranges.len() {
            let (mut byte, last) = ranges[index];
            while byte <= last {
                table[byte as usize] = true;
                if byte == u8::MAX {
                    break;
                }
                byte += 1;
            }
            index += 1;
        }
        Self(table)
    }

    fn has(&self, byte: u8) -> bool {
        self.0[usize::from(byte)]
    }
}

const UPPER: (u8, u8) = (b'A', b'Z');
const LOWER: (u8, u8) = (b'a', b'z');
const DIGIT: (u8, u8) = (b'0', b'9');

const fn one(byte: u8) -> (u8, u8) {
    (byte, byte)
}

/// `[A-Za-z0-9_-]`
static KEY: Class = Class::new(&[UPPER, LOWER, DIGIT, one(b'_'), one(b'-')]);
/// `[A-Za-z0-9]`
static ALPHANUMERIC: Class = Class::new(&[UPPER, LOWER, DIGIT]);
/// `[A-Za-z0-9_]`
static PAT: Class = Class::new(&[UPPER, LOWER, DIGIT, one(b'_')]);
/// `[A-Za-z0-9-]`
static SLACK: Class = Class::new(&[UPPER, LOWER, DIGIT, one(b'-')]);
/// `[0-9A-Z]`
static UPPER_OR_DIGIT: Class = Class::new(&[UPPER, DIGIT]);
/// `[A-Za-z0-9/+=]`
static AWS_SECRET: Class = Class::new(&[UPPER, LOWER, DIGIT, one(b'/'), one(b'+'), one(b'=')]);
/// `[A-Za-z0-9._~+/-]`
static BEARER: Class = Class::new(&[
    UPPER,
    LOWER,
    DIGIT,
    one(b'.'),
    one(b'_'),
    one(b'~'),
    one(b'+'),
    one(b'/'),
    one(b'-'),
]);
/// `[A-Z0-9 ]`, of a key block's BEGIN and END lines.
static KEY_LINE: Class = Class::new(&[UPPER, DIGIT, one(b' ')]);
/// `=`, padding after a bearer token.
static PADDING: Class = Class::new(&[one(b'=')]);
