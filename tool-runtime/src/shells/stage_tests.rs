//! The shells as a stage alone: driven around mock attempts, with paused time.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::Instant;
use tool_core::{ErrorKind, ToolError, ToolFuture, ToolOutput};

use super::{CallShells, Retry, RetryPolicy};

/// A mock attempt: what it does before it answers.
enum Attempt {
    Answer(Result<&'static str, ToolError>),
    After(Duration, Result<&'static str, ToolError>),
    Never,
    Panic,
}

fn future(attempt: Attempt) -> ToolFuture {
    let answer = |result: Result<&'static str, ToolError>| {
        result.map(|text| ToolOutput::from_text(text.to_owned()))
    };
    match attempt {
        Attempt::Answer(result) => Box::pin(std::future::ready(answer(result))),
        Attempt::After(wait, result) => Box::pin(async move {
            tokio::time::sleep(wait).await;
            answer(result)
        }),
        Attempt::Never => Box::pin(std::future::pending()),
        Attempt::Panic => Box::pin(async { panic!("the tool broke") }),
    }
}

/// Drives the shells around a list of attempts, the first one first.
struct Drive<'a> {
    retry: Retry<'a>,
    rest: Arc<Mutex<VecDeque<Attempt>>>,
}

impl Future for Drive<'_> {
    type Output = (Result<ToolOutput, ToolError>, u32);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let rest = Arc::clone(&self.rest);
        let result = std::task::ready!(self.retry.poll_attempts(cx, || {
            let next = rest.lock().ok().and_then(|mut rest| rest.pop_front());
            future(next.unwrap_or(Attempt::Never))
        }));
        Poll::Ready((result, self.retry.attempts()))
    }
}

async fn run(
    policy: &RetryPolicy,
    repeatable: bool,
    timeout: Option<Duration>,
    attempts: Vec<Attempt>,
) -> (Result<ToolOutput, ToolError>, u32, Duration) {
    let mut attempts: VecDeque<Attempt> = attempts.into();
    let first = future(attempts.pop_front().unwrap_or(Attempt::Never));
    let shells = CallShells {
        retry: policy,
        repeatable,
        timeout,
    };
    let started = Instant::now();
    let (result, count) = Drive {
        retry: Retry::new(&shells, first, started),
        rest: Arc::new(Mutex::new(attempts)),
    }
    .await;
    (result, count, started.elapsed())
}

fn no_jitter() -> RetryPolicy {
    RetryPolicy::attempts(3)
        .with_jitter(false)
        .with_initial_delay(Duration::from_millis(200))
}

#[tokio::test(start_paused = true)]
async fn an_attempt_that_never_ends_is_stopped_at_its_timeout() {
    let (result, attempts, elapsed) = run(
        &no_jitter(),
        true,
        Some(Duration::from_secs(5)),
        vec![Attempt::Never],
    )
    .await;
    assert_eq!(
        result.err().map(|error| error.kind().clone()),
        Some(ErrorKind::Timeout)
    );
    assert_eq!(attempts, 1);
    assert_eq!(elapsed, Duration::from_secs(5));
}

#[tokio::test(start_paused = true)]
async fn a_transient_failure_of_a_repeatable_call_is_tried_again_after_the_backoff() {
    let (result, attempts, elapsed) = run(
        &no_jitter(),
        true,
        None,
        vec![
            Attempt::Answer(Err(ToolError::transient("reset"))),
            Attempt::Answer(Ok("done")),
        ],
    )
    .await;
    assert_eq!(
        result.map(ToolOutput::into_text).ok().as_deref(),
        Some("done")
    );
    assert_eq!(attempts, 2);
    assert_eq!(elapsed, Duration::from_millis(200));
}

#[tokio::test(start_paused = true)]
async fn a_write_that_failed_transiently_is_answered_not_repeated() {
    let (result, attempts, _) = run(
        &no_jitter(),
        false,
        None,
        vec![
            Attempt::Answer(Err(ToolError::transient("reset"))),
            Attempt::Answer(Ok("done twice")),
        ],
    )
    .await;
    assert!(result.is_err());
    assert_eq!(attempts, 1);
}

#[tokio::test(start_paused = true)]
async fn each_attempt_has_its_own_time() {
    // Each attempt takes 4 s of a 5 s timeout: 8 s in all, and neither is stopped.
    let (result, attempts, elapsed) = run(
        &no_jitter(),
        true,
        Some(Duration::from_secs(5)),
        vec![
            Attempt::After(Duration::from_secs(4), Err(ToolError::transient("busy"))),
            Attempt::After(Duration::from_secs(4), Ok("done")),
        ],
    )
    .await;
    assert_eq!(
        result.map(ToolOutput::into_text).ok().as_deref(),
        Some("done")
    );
    assert_eq!(attempts, 2);
    assert_eq!(elapsed, Duration::from_millis(8_200));
}

#[tokio::test(start_paused = true)]
async fn a_panic_in_an_attempt_is_contained_and_never_repeated() {
    let (result, attempts, _) = run(&no_jitter(), true, None, vec![Attempt::Panic]).await;
    assert_eq!(
        result.err().map(|error| error.kind().clone()),
        Some(ErrorKind::Panicked)
    );
    assert_eq!(attempts, 1);
}
