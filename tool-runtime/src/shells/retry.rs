//! The retry shell: a failure is retried, with exponential backoff and jitter, only when
//! repeating the call is safe. That is, the failure is transient ([`ToolError::transient`],
//! or an I/O error such as a reset connection) and the tool is read-only or declares
//! `idempotent`; or the tool itself marked the failure [safe to
//! repeat](ToolError::safe_to_repeat), because nothing was done. A write that failed with a
//! reset connection may have been carried out: it is answered, never repeated. Anything else
//! (invalid arguments, business errors, panics, timeouts unless configured) is answered at
//! once.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use rand::Rng;
use tokio::time::{Instant, Sleep};
use tool_core::{ErrorKind, ToolError, ToolFuture, ToolOutput};

use super::CallShells;
use super::timeout::{self, Timeout};

/// How transient failures are retried.
///
/// The default: 3 attempts in all, a first delay of 200 ms, each next one twice as long, none
/// over 5 s, with jitter; timeouts are not retried. Only calls that are safe to repeat are
/// retried (see the crate docs).
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

    /// The delay before attempt `attempt + 1`, without jitter: never more than
    /// [`RetryPolicy::max_delay`], whatever the multiplier (a huge or non-finite one included).
    pub fn base_delay(&self, attempt: u32) -> Duration {
        let exponent = i32::try_from(attempt.saturating_sub(1)).unwrap_or(i32::MAX);
        // `max` also turns a NaN multiplier into 1.
        let factor = self.multiplier.max(1.0).powi(exponent);
        let seconds = self.initial_delay.as_secs_f64() * factor;
        Duration::try_from_secs_f64(seconds)
            .unwrap_or(self.max_delay)
            .min(self.max_delay)
    }

    /// The longest a call whose attempts each take at most `timeout` can run under this
    /// policy: every attempt, and the longest delay between each two.
    pub(crate) fn running_at_most(&self, timeout: Duration) -> Duration {
        let attempts = self.max_attempts.max(1);
        let delays = self.max_delay.saturating_mul(attempts - 1);
        timeout.saturating_mul(attempts).saturating_add(delays)
    }

    fn delay(&self, attempt: u32) -> Duration {
        let base = self.base_delay(attempt);
        if !self.jitter || base.is_zero() {
            return base;
        }
        let share = rand::rng().random_range(0.5..=1.0);
        Duration::try_from_secs_f64(base.as_secs_f64() * share)
            .unwrap_or(base)
            .min(base)
    }

    /// Whether `error`, from a tool that is `repeatable` (read-only or `idempotent`) or not, is
    /// worth another attempt.
    pub(crate) fn should_retry(&self, error: &ToolError, repeatable: bool) -> bool {
        let safe = repeatable || error.is_safe_to_repeat();
        match error.kind() {
            // A write that timed out may have been carried out.
            ErrorKind::Timeout => self.retry_timeouts && repeatable,
            ErrorKind::ExecutionFailed | ErrorKind::Custom(_) => error.is_retryable() && safe,
            _ => false,
        }
    }
}

/// A call's attempts: each one through the timeout shell, and another one, after a backoff,
/// while the failure is worth it and attempts remain.
///
/// Polled with [`Retry::poll_attempts`], given the way to prepare a further attempt (which
/// borrows the planned call the caller keeps beside it).
pub(crate) struct Retry<'a> {
    policy: &'a RetryPolicy,
    repeatable: bool,
    limit: Option<Duration>,
    /// The attempt running, or `None` while backing off.
    attempt: Option<Timeout>,
    /// The backoff before the next attempt.
    backoff: Option<Pin<Box<Sleep>>>,
    number: u32,
}

impl<'a> Retry<'a> {
    /// Attempts of a call, the first one being `first`, started at `started`.
    pub(crate) fn new(shells: &CallShells<'a>, first: ToolFuture, started: Instant) -> Self {
        Self {
            policy: shells.retry,
            repeatable: shells.repeatable,
            limit: shells.timeout,
            attempt: Some(Timeout::new(first, started, shells.timeout)),
            backoff: None,
            number: 1,
        }
    }

    /// How many attempts started.
    pub(crate) fn attempts(&self) -> u32 {
        self.number
    }

    /// Stops the attempt running, if any.
    pub(crate) fn stop(&mut self) {
        if let Some(attempt) = &mut self.attempt {
            attempt.stop();
        }
        self.attempt = None;
        self.backoff = None;
    }

    /// Drives the attempts; `again()` prepares a fresh attempt. Ready with the last result.
    pub(crate) fn poll_attempts(
        &mut self,
        cx: &mut Context<'_>,
        mut again: impl FnMut() -> ToolFuture,
    ) -> Poll<Result<ToolOutput, ToolError>> {
        loop {
            if let Some(attempt) = &mut self.attempt {
                let result = match Pin::new(attempt).poll(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(result) => result,
                };
                self.attempt = None;
                let error = match result {
                    Err(error)
                        if self.number < self.policy.max_attempts
                            && self.policy.should_retry(&error, self.repeatable) =>
                    {
                        error
                    }
                    result => return Poll::Ready(result),
                };
                tracing::debug!(attempt = self.number, error = %error, "transient failure; retrying");
                let backoff = Instant::now()
                    .checked_add(self.policy.delay(self.number))
                    .ok_or(())
                    .and_then(|deadline| timeout::timer(deadline).map_err(|_| ()));
                match backoff {
                    Ok(timer) => self.backoff = Some(timer),
                    // No timer: the failure is the answer.
                    Err(()) => return Poll::Ready(Err(error)),
                }
            }
            if let Some(backoff) = &mut self.backoff {
                if backoff.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                self.backoff = None;
                self.number += 1;
                self.attempt = Some(Timeout::new(again(), Instant::now(), self.limit));
                continue;
            }
            // Neither running nor backing off: stopped.
            return Poll::Ready(Err(ToolError::new(
                ErrorKind::Internal,
                "the call was polled after it stopped",
            )));
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
        assert!(policy.should_retry(&ToolError::transient("overloaded"), true));
        assert!(!policy.should_retry(&ToolError::failed("order is closed"), true));
        assert!(!policy.should_retry(&ToolError::invalid_arguments("bad").retryable(true), true));
        assert!(!policy.should_retry(&ToolError::new(ErrorKind::Timeout, "slow"), true));
        assert!(
            policy
                .with_retry_timeouts(true)
                .should_retry(&ToolError::new(ErrorKind::Timeout, "slow"), true)
        );
    }

    #[test]
    fn a_write_is_retried_only_when_the_failure_is_safe_to_repeat() {
        let policy = RetryPolicy::default().with_retry_timeouts(true);
        let reset = ToolError::from(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert!(policy.should_retry(&reset, true));
        assert!(!policy.should_retry(&reset, false));
        assert!(!policy.should_retry(&ToolError::transient("overloaded"), false));
        assert!(policy.should_retry(&ToolError::transient("429").safe_to_repeat(), false));
        assert!(!policy.should_retry(&ToolError::new(ErrorKind::Timeout, "slow"), false));
    }

    #[test]
    fn delays_never_overflow() {
        for multiplier in [1e300, f64::INFINITY, f64::NAN, -3.0] {
            let policy = RetryPolicy::attempts(40)
                .with_multiplier(multiplier)
                .with_max_delay(Duration::from_secs(5))
                .with_jitter(false);
            for attempt in 1..40 {
                assert!(policy.delay(attempt) <= Duration::from_secs(5));
            }
        }
        let unbounded = RetryPolicy::attempts(3)
            .with_multiplier(1e300)
            .with_max_delay(Duration::MAX)
            .with_jitter(true);
        assert!(unbounded.delay(5) <= Duration::MAX);
    }
}
