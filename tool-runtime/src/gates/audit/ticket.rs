//! How a sink says when a line it was handed is durable: an [`AuditTicket`], resolved by the
//! [`AuditCompleter`] the sink keeps with the line.

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

/// The answer to one [`AuditSink::submit`](super::AuditSink::submit): a future that resolves
/// once the line is durable (`Ok`), or will never be (`Err`).
///
/// Dropping a ticket does not withdraw its line: the sink still writes it, in order. The
/// runtime waits for a call's decision line right before the call would start and drops the
/// tickets of refusals and outcomes.
#[must_use = "a ticket says whether its line was written; drop it only when that does not matter"]
pub struct AuditTicket {
    state: TicketState,
}

enum TicketState {
    /// Known at once; `None` once taken.
    Ready(Option<io::Result<()>>),
    /// Resolved by an [`AuditCompleter`].
    Waiting(Arc<Slot>),
}

/// Where a completer leaves the result for its ticket.
#[derive(Default)]
struct Slot {
    state: Mutex<SlotState>,
    /// Wakes a thread blocked in [`AuditTicket::wait`].
    done: Condvar,
}

#[derive(Default)]
struct SlotState {
    result: Option<io::Result<()>>,
    /// The task that polled the ticket last.
    waker: Option<Waker>,
}

/// The other half of a pending [`AuditTicket`]: resolves it once the sink knows whether the
/// line is durable. Dropped without [`complete`](AuditCompleter::complete), it resolves the
/// ticket with an error (the line will never be written).
pub struct AuditCompleter {
    slot: Option<Arc<Slot>>,
}

impl AuditTicket {
    /// A ticket whose answer is known now: a synchronous sink's.
    pub fn ready(result: io::Result<()>) -> Self {
        Self {
            state: TicketState::Ready(Some(result)),
        }
    }

    /// A ticket resolved later, by the completer returned with it: a batching sink keeps the
    /// completer with the line and completes it once the line is durable (or failed).
    pub fn pending() -> (Self, AuditCompleter) {
        let slot = Arc::new(Slot::default());
        let ticket = Self {
            state: TicketState::Waiting(Arc::clone(&slot)),
        };
        (ticket, AuditCompleter { slot: Some(slot) })
    }

    /// Blocks the thread until the line is durable (or failed): the synchronous form, for
    /// [`AuditSink::record`](super::AuditSink::record) of a batching sink. Never call it on
    /// an async task; await the ticket there.
    ///
    /// # Errors
    ///
    /// The line could not be made durable.
    pub fn wait(self) -> io::Result<()> {
        match self.state {
            TicketState::Ready(result) => result.unwrap_or_else(|| Err(taken())),
            TicketState::Waiting(slot) => {
                let mut state = slot.state.lock().unwrap_or_else(PoisonError::into_inner);
                loop {
                    if let Some(result) = state.result.take() {
                        return result;
                    }
                    state = slot
                        .done
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
        }
    }

    /// The answer, if it is known already (taken: later calls and polls answer an error).
    pub(crate) fn answer_now(&mut self) -> Option<io::Result<()>> {
        match &mut self.state {
            TicketState::Ready(result) => Some(result.take().unwrap_or_else(|| Err(taken()))),
            TicketState::Waiting(slot) => slot
                .state
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .result
                .take(),
        }
    }
}

impl Future for AuditTicket {
    type Output = io::Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.state {
            TicketState::Ready(result) => {
                Poll::Ready(result.take().unwrap_or_else(|| Err(taken())))
            }
            TicketState::Waiting(slot) => {
                let mut state = slot.state.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(result) = state.result.take() {
                    return Poll::Ready(result);
                }
                match &mut state.waker {
                    Some(waker) if waker.will_wake(cx.waker()) => {}
                    waker => *waker = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
        }
    }
}

impl fmt::Debug for AuditTicket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            TicketState::Ready(Some(Ok(()))) => "durable",
            TicketState::Ready(Some(Err(_))) => "failed",
            TicketState::Ready(None) => "taken",
            TicketState::Waiting(_) => "pending",
        };
        f.debug_struct("AuditTicket")
            .field("state", &state)
            .finish()
    }
}

impl AuditCompleter {
    /// Resolves the ticket: `Ok` once the line is durable, `Err` if it will never be.
    pub fn complete(mut self, result: io::Result<()>) {
        if let Some(slot) = self.slot.take() {
            slot.resolve(result);
        }
    }
}

impl Drop for AuditCompleter {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            slot.resolve(Err(io::Error::other(
                "the audit sink dropped the line before it was durable",
            )));
        }
    }
}

impl fmt::Debug for AuditCompleter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuditCompleter").finish_non_exhaustive()
    }
}

impl Slot {
    fn resolve(&self, result: io::Result<()>) {
        let waker = {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.result = Some(result);
            state.waker.take()
        };
        self.done.notify_all();
        // Woken outside the lock: the task may poll at once, on another thread.
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

fn taken() -> io::Error {
    io::Error::other("this audit ticket's answer was taken already")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_ticket_resolves_for_a_waiting_thread_and_a_dropped_completer_fails_it() {
        let (ticket, completer) = AuditTicket::pending();
        let waiter = std::thread::spawn(move || ticket.wait());
        completer.complete(Ok(()));
        assert!(waiter.join().expect("the waiting thread").is_ok());

        let (mut ticket, completer) = AuditTicket::pending();
        assert!(ticket.answer_now().is_none(), "not resolved yet");
        drop(completer);
        assert!(ticket.answer_now().is_some_and(|answer| answer.is_err()));
        assert!(
            AuditTicket::ready(Err(io::Error::other("full")))
                .wait()
                .is_err()
        );
    }

    #[tokio::test]
    async fn a_pending_ticket_wakes_the_task_awaiting_it() {
        let (ticket, completer) = AuditTicket::pending();
        let task = tokio::spawn(ticket);
        tokio::task::yield_now().await;
        std::thread::spawn(move || completer.complete(Ok(())))
            .join()
            .expect("the completing thread");
        assert!(task.await.expect("the awaiting task").is_ok());
    }
}
