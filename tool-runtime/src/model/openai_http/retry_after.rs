//! How long an endpoint asked to wait before the next request: `retry-after-ms` (OpenAI's
//! own, in milliseconds), else `retry-after` in seconds or as an HTTP date.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::HeaderMap;

/// The wait the headers ask for, read at `now` (an HTTP date in the past asks for none).
pub(super) fn asked(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let text = |name: &str| headers.get(name)?.to_str().ok().map(str::trim);
    if let Some(wait) = text("retry-after-ms").and_then(|ms| seconds(ms, 1e-3)) {
        return Some(wait);
    }
    let value = text("retry-after")?;
    seconds(value, 1.0).or_else(|| {
        let at = http_date(value)?;
        Some(at.duration_since(now).unwrap_or(Duration::ZERO))
    })
}

/// `text` as a non-negative number of units of `scale` seconds (a fraction is taken, though
/// the header's grammar has none: some servers send one).
fn seconds(text: &str, scale: f64) -> Option<Duration> {
    let number: f64 = text.parse().ok()?;
    if !number.is_finite() || number < 0.0 {
        return None;
    }
    Duration::try_from_secs_f64(number * scale).ok()
}

/// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form RFC 9110 says senders use.
fn http_date(text: &str) -> Option<SystemTime> {
    let mut parts = text.split_ascii_whitespace();
    let _weekday = parts.next()?.strip_suffix(',')?;
    let day: u32 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut clock = parts
        .next()?
        .split(':')
        .map(|part| part.parse::<u64>().ok());
    let (hour, minute, second) = (clock.next()??, clock.next()??, clock.next()??);
    if parts.next()? != "GMT" || parts.next().is_some() || clock.next().is_some() {
        return None;
    }
    if !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 || year < 1970 {
        return None;
    }
    let days = u64::try_from(days_from_civil(year, month, day)).ok()?;
    let since_epoch = days * 86_400 + hour * 3_600 + minute * 60 + second;
    UNIX_EPOCH.checked_add(Duration::from_secs(since_epoch))
}

/// Days from 1970-01-01 to the date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn seconds_milliseconds_and_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_767); // Sun, 06 Nov 1994 08:49:27 GMT
        type Case<'a> = (&'a [(&'a str, &'a str)], Option<Duration>);
        let cases: &[Case<'_>] = &[
            (&[("retry-after", "1")], Some(Duration::from_secs(1))),
            (
                &[("retry-after", " 2.5 ")],
                Some(Duration::from_millis(2_500)),
            ),
            (
                &[("retry-after", "1"), ("retry-after-ms", "150")],
                Some(Duration::from_millis(150)),
            ),
            (
                &[("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT")],
                Some(Duration::from_secs(10)),
            ),
            (
                &[("retry-after", "Sat, 05 Nov 1994 08:49:37 GMT")],
                Some(Duration::ZERO),
            ),
            (&[("retry-after", "-3")], None),
            (&[("retry-after", "soon")], None),
            (&[("retry-after", "Sun, 06 Nov 1994 08:49:37 PST")], None),
            (&[], None),
        ];
        for (pairs, expected) in cases {
            assert_eq!(asked(&headers(pairs), now), *expected, "{pairs:?}");
        }
    }

    #[test]
    fn civil_days() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(2024, 2, 29), 19_782);
    }
}
