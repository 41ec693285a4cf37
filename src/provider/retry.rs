//! When a failed request is worth another try, and how long to wait.
//!
//! Retried: connect failures, 408/409/429/5xx and streams cut before their
//! terminal event. Never retried: any other 4xx (a bad key or a malformed
//! request will not get better). Waits grow exponentially with jitter, and a
//! `Retry-After` (or `retry-after-ms`) from the server wins, within a cap.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Further attempts after the first.
    pub max_retries: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { max_retries: 4, base_delay: Duration::from_millis(500), max_delay: Duration::from_secs(60) }
    }
}

impl RetryPolicy {
    /// The wait before retry number `attempt` (1-based): base·2^(attempt-1),
    /// scaled by a random factor in [0.5, 1.0] so clients do not retry in step.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let exp = self.base_delay.saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
        let capped = exp.min(self.max_delay);
        capped.mul_f64(0.5 + 0.5 * jitter_unit())
    }

    /// The server's requested wait, if it gave one, capped at `max_delay`.
    pub fn server_delay(&self, headers: &HeaderMap) -> Option<Duration> {
        retry_after(headers).map(|d| d.min(self.max_delay))
    }
}

pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || (500..600).contains(&status)
}

/// Reads `retry-after-ms`, then `Retry-After` as seconds or an HTTP date.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return (ms.is_finite() && ms >= 0.0).then(|| Duration::from_secs_f64(ms / 1000.0));
    }
    let value = text("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = httpdate(value)?;
    Some(when.duration_since(SystemTime::now()).unwrap_or(Duration::ZERO))
}

/// Parses the IMF-fixdate form `Sun, 06 Nov 1994 08:49:37 GMT`, the only one
/// servers send today.
fn httpdate(value: &str) -> Option<SystemTime> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else { return None };
    let day: u64 = day.parse().ok()?;
    let month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        .iter()
        .position(|m| m == month)? as u64
        + 1;
    let year: u64 = year.parse().ok()?;
    let mut hms = time.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    if year < 1970 || !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(days * 86_400 + h * 3600 + m * 60 + s))
}

/// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's method).
fn days_from_civil(year: u64, month: u64, day: u64) -> u64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A number in [0, 1) that differs between calls and processes; good enough
/// to spread retries, with no need for a random number crate.
fn jitter_unit() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default().as_nanos());
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn statuses_that_are_retried() {
        for status in [408, 409, 429, 500, 502, 503, 529] {
            assert!(is_retryable_status(status), "{status}");
        }
        for status in [400, 401, 403, 404, 413, 422] {
            assert!(!is_retryable_status(status), "{status}");
        }
    }

    #[test]
    fn backoff_grows_and_stays_within_jitter_bounds() {
        let policy =
            RetryPolicy { max_retries: 5, base_delay: Duration::from_millis(100), max_delay: Duration::from_secs(1) };
        for attempt in 1..=6 {
            let full = Duration::from_millis(100 * (1 << (attempt - 1))).min(Duration::from_secs(1));
            let d = policy.backoff(attempt);
            assert!(d >= full / 2 && d <= full, "attempt {attempt}: {d:?}");
        }
    }

    #[test]
    fn retry_after_seconds_ms_and_dates() {
        assert_eq!(retry_after(&headers(&[("retry-after", "3")])), Some(Duration::from_secs(3)));
        assert_eq!(retry_after(&headers(&[("retry-after-ms", "250")])), Some(Duration::from_millis(250)));
        assert_eq!(retry_after(&headers(&[("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT")])), Some(Duration::ZERO));
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")])), None);
        assert_eq!(retry_after(&headers(&[("retry-after", "-1")])), None);
        assert_eq!(retry_after(&HeaderMap::new()), None);
    }

    #[test]
    fn http_dates_convert_exactly() {
        let t = httpdate("Thu, 01 Jan 2026 00:00:10 GMT").unwrap();
        assert_eq!(t.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs(), 1_767_225_610);
        assert_eq!(httpdate("Thu, 32 Jan 2026 00:00:10 GMT"), None);
    }

    #[test]
    fn server_delay_is_capped() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.server_delay(&headers(&[("retry-after", "86400")])), Some(policy.max_delay));
    }
}
