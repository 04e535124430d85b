//! The retry shell: a failure the tool marked transient is retried with exponential backoff
//! and jitter; anything else (invalid arguments, business errors, panics, timeouts unless
//! configured) is answered at once.

use std::future::Future;
use std::time::Duration;

use rand::Rng;
use tool_core::{ErrorKind, ToolError, ToolOutput};

use super::ShellResult;

/// How transient failures are retried.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Attempts in all, the first included; 1 disables retries.
    pub max_attempts: u32,
    /// The delay before the second attempt.
    pub initial_delay: Duration,
    /// Each further delay is the previous one times this.
    pub multiplier: f64,
    /// No delay is longer than this.
    pub max_delay: Duration,
    /// Randomizes each delay to between half and all of it, so that many clients failing at
    /// once do not retry in lockstep.
    pub jitter: bool,
    /// Whether a timeout counts as transient.
    pub retry_timeouts: bool,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            initial_delay: Duration::from_millis(200),
            multiplier: 2.0,
            max_delay: Duration::from_secs(5),
            jitter: true,
            retry_timeouts: false,
        }
    }
}

impl RetryPolicy {
    /// No retries.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// Up to `max_attempts` attempts, with the other settings at their defaults.
    pub fn attempts(max_attempts: u32) -> Self {
        Self {
            max_attempts: max_attempts.max(1),
            ..Self::default()
        }
    }

    /// Sets the first delay.
    #[must_use]
    pub fn with_initial_delay(mut self, delay: Duration) -> Self {
        self.initial_delay = delay;
        self
    }

    /// Sets the growth factor of the delays.
    #[must_use]
    pub fn with_multiplier(mut self, multiplier: f64) -> Self {
        self.multiplier = multiplier;
        self
    }

    /// Caps the delays.
    #[must_use]
    pub fn with_max_delay(mut self, delay: Duration) -> Self {
        self.max_delay = delay;
        self
    }

    /// Turns jitter on or off (off gives exact, testable delays).
    #[must_use]
    pub fn with_jitter(mut self, jitter: bool) -> Self {
        self.jitter = jitter;
        self
    }

    /// Treats timeouts as transient.
    #[must_use]
    pub fn with_retry_timeouts(mut self, retry: bool) -> Self {
        self.retry_timeouts = retry;
        self
    }

    /// The delay before attempt `attempt + 1`, without jitter.
    pub fn base_delay(&self, attempt: u32) -> Duration {
        let exponent = i32::try_from(attempt.saturating_sub(1)).unwrap_or(i32::MAX);
        let factor = self.multiplier.max(1.0).powi(exponent);
        let millis = self.initial_delay.as_secs_f64() * factor;
        Duration::from_secs_f64(millis.min(self.max_delay.as_secs_f64()))
    }

    fn delay(&self, attempt: u32) -> Duration {
        let base = self.base_delay(attempt);
        if !self.jitter || base.is_zero() {
            return base;
        }
        base.mul_f64(rand::rng().random_range(0.5..=1.0))
    }

    /// Whether `error` is worth another attempt.
    pub fn should_retry(&self, error: &ToolError) -> bool {
        match error.kind() {
            ErrorKind::Timeout => self.retry_timeouts,
            ErrorKind::ExecutionFailed | ErrorKind::Custom(_) => error.is_retryable(),
            _ => false,
        }
    }
}

/// Runs `attempt(1)`, `attempt(2)`, ... while the failure is transient and attempts remain.
pub async fn run<F, Fut>(policy: &RetryPolicy, mut attempt: F) -> ShellResult
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<ToolOutput, ToolError>>,
{
    let mut number = 1;
    loop {
        let result = attempt(number).await;
        match result {
            Err(error) if number < policy.max_attempts && policy.should_retry(&error) => {
                tracing::debug!(attempt = number, error = %error, "transient failure; retrying");
                tokio::time::sleep(policy.delay(number)).await;
                number += 1;
            }
            result => {
                return ShellResult {
                    result,
                    attempts: number,
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_and_cap() {
        let policy = RetryPolicy::attempts(6)
            .with_initial_delay(Duration::from_millis(100))
            .with_max_delay(Duration::from_millis(500))
            .with_jitter(false);
        let delays: Vec<u128> = (1..=5).map(|n| policy.delay(n).as_millis()).collect();
        assert_eq!(delays, [100, 200, 400, 500, 500]);
    }

    #[test]
    fn jitter_stays_within_half_and_all() {
        let policy = RetryPolicy::default();
        for _ in 0..100 {
            let delay = policy.delay(2);
            assert!(delay >= Duration::from_millis(200) && delay <= Duration::from_millis(400));
        }
    }

    #[test]
    fn only_transient_failures_are_retried() {
        let policy = RetryPolicy::default();
        assert!(policy.should_retry(&ToolError::transient("overloaded")));
        assert!(!policy.should_retry(&ToolError::failed("order is closed")));
        assert!(!policy.should_retry(&ToolError::invalid_arguments("bad").retryable(true)));
        assert!(!policy.should_retry(&ToolError::new(ErrorKind::Timeout, "slow")));
        assert!(
            policy
                .with_retry_timeouts(true)
                .should_retry(&ToolError::new(ErrorKind::Timeout, "slow"))
        );
    }
}
