//! `blocking` runs a sync tool's body on tokio's blocking pool: a timeout can then answer the
//! call while the body still runs, and a panic in the body is a panic of the tool's future.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tool_runtime::{tool, RunContext};
use tool_runtime::core::{CallContext, Tool};

struct Deps {
    finished: AtomicBool,
}

/// Blocks its thread for a while, then records that it finished.
#[tool(read_only, blocking, timeout = "50ms")]
fn slow(ctx: RunContext<Deps>, millis: u64) -> u64 {
    std::thread::sleep(Duration::from_millis(millis));
    ctx.deps().finished.store(true, Ordering::SeqCst);
    millis
}

/// Panics on the blocking pool.
#[tool(read_only, blocking)]
fn explode() -> u32 {
    panic!("explode")
}

fn main() {
    assert_eq!(slow::spec().timeout(), Some(Duration::from_millis(50)));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let deps = Arc::new(Deps {
        finished: AtomicBool::new(false),
    });
    let call = CallContext::new(Arc::clone(&deps), "s-1", "c-1", "slow");
    runtime.block_on(async {
        // The body blocks a pool thread, not this (single) runtime thread: the timer fires.
        let future = slow::tool()
            .prepare(r#"{"millis": 400}"#.into(), &call)
            .expect("valid arguments");
        let outcome = tokio::time::timeout(Duration::from_millis(50), future).await;
        assert!(outcome.is_err(), "the timeout answers first");
        assert!(!deps.finished.load(Ordering::SeqCst));

        // Without a timeout the same call finishes.
        let future = slow::tool()
            .prepare(r#"{"millis": 1}"#.into(), &call)
            .expect("valid arguments");
        let output = future.await.expect("the call finishes");
        assert_eq!(output.json(), "1");

        // A panic in the body resumes in the future, where the runtime's guard sees it.
        let future = explode::tool()
            .prepare("{}".into(), &call)
            .expect("valid arguments");
        let joined = tokio::spawn(future).await;
        assert!(joined.is_err_and(|error| error.is_panic()));
    });
    // The function stays a plain function.
    assert_eq!(slow(RunContext::from_call(&call).expect("deps"), 0), 0);
}
