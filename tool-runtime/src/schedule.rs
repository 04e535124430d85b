//! The scheduler's rule (DESIGN.md decision 2): parallel-safe calls may run together, unless
//! their declared resources intersect (even when both are reads); every other call runs alone,
//! in order. One rule, applied two ways: to a turn's calls, known up front, as batches
//! ([`schedule`]: consecutive parallel-safe calls form one concurrent batch); to the calls
//! tools make, as they come, as locks ([`nested_turn`]).

use std::borrow::Cow;

use tokio::sync::{OwnedMutexGuard, RwLockReadGuard, RwLockWriteGuard};
use tool_core::__runtime::NestedCalls;

use crate::observation::Batch;

/// A nested call's turn to run: held while it runs.
pub(crate) enum NestedTurn<'a> {
    /// It runs alone: no other nested call of the turn runs meanwhile.
    #[allow(dead_code)] // held, not read
    Alone(RwLockWriteGuard<'a, ()>),
    /// It runs alongside the others, holding its declared resources.
    #[allow(dead_code)] // held, not read
    Alongside(RwLockReadGuard<'a, ()>, Vec<OwnedMutexGuard<()>>),
}

/// Waits for a nested call's turn, by the scheduler's rule.
pub(crate) async fn nested_turn<'a>(
    calls: &'a NestedCalls,
    parallel_safe: bool,
    resources: &[Cow<'static, str>],
) -> NestedTurn<'a> {
    if !parallel_safe {
        return NestedTurn::Alone(calls.order.write().await);
    }
    let order = calls.order.read().await;
    // In one order, so two calls declaring the same resources never wait for each other.
    let mut names: Vec<&str> = resources.iter().map(AsRef::as_ref).collect();
    names.sort_unstable();
    names.dedup();
    let mut held = Vec::with_capacity(names.len());
    for name in names {
        held.push(calls.resource(name).lock_owned().await);
    }
    NestedTurn::Alongside(order, held)
}

/// What the scheduler knows of one planned call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot<'a> {
    /// The call's position in the turn.
    pub(crate) index: usize,
    /// Whether the tool may run concurrently with other parallel-safe calls.
    pub(crate) parallel_safe: bool,
    /// The resources the tool declares.
    pub(crate) resources: &'a [Cow<'static, str>],
}

/// Splits planned calls (in call order) into the batches that run one after another.
pub(crate) fn schedule(slots: &[Slot<'_>]) -> Vec<Batch> {
    let mut batches: Vec<Batch> = Vec::new();
    // A batch is a run of consecutive slots: find where each run ends, then collect its
    // calls once, at their exact size.
    let batch = |index, run: &[Slot<'_>], concurrent| Batch {
        index,
        calls: run.iter().map(|slot| slot.index).collect(),
        concurrent,
    };
    let mut run_start = 0;
    let mut held: Vec<&str> = Vec::new();
    for (position, slot) in slots.iter().enumerate() {
        let conflicts = slot.parallel_safe
            && slot
                .resources
                .iter()
                .any(|resource| held.contains(&resource.as_ref()));
        if !slot.parallel_safe || conflicts {
            if run_start < position {
                batches.push(batch(batches.len(), &slots[run_start..position], true));
            }
            held.clear();
            run_start = position;
        }
        if slot.parallel_safe {
            held.extend(slot.resources.iter().map(|resource| resource.as_ref()));
        } else {
            batches.push(batch(batches.len(), &slots[position..=position], false));
            run_start = position + 1;
        }
    }
    if run_start < slots.len() {
        batches.push(batch(batches.len(), &slots[run_start..], true));
    }
    batches
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slots<'a>(spec: &[(bool, &'a [Cow<'static, str>])]) -> Vec<Slot<'a>> {
        spec.iter()
            .enumerate()
            .map(|(index, (parallel_safe, resources))| Slot {
                index,
                parallel_safe: *parallel_safe,
                resources,
            })
            .collect()
    }

    fn indices(batches: &[Batch]) -> Vec<Vec<usize>> {
        batches.iter().map(|batch| batch.calls.clone()).collect()
    }

    #[test]
    fn reads_around_a_write_form_three_batches() {
        let none: &[Cow<'static, str>] = &[];
        let batches = schedule(&slots(&[
            (true, none),
            (true, none),
            (false, none),
            (true, none),
            (true, none),
        ]));
        assert_eq!(indices(&batches), [vec![0, 1], vec![2], vec![3, 4]]);
        assert_eq!(
            batches
                .iter()
                .map(|batch| batch.concurrent)
                .collect::<Vec<_>>(),
            [true, false, true]
        );
    }

    #[test]
    fn shared_resources_split_a_batch_of_reads() {
        let disk = [Cow::Borrowed("fs:workspace")];
        let net = [Cow::Borrowed("net")];
        let batches = schedule(&slots(&[
            (true, &disk),
            (true, &net),
            (true, &disk),
            (true, &net),
        ]));
        assert_eq!(indices(&batches), [vec![0, 1], vec![2, 3]]);
    }

    #[test]
    fn serial_calls_stand_alone() {
        let none: &[Cow<'static, str>] = &[];
        let batches = schedule(&slots(&[(false, none), (false, none)]));
        assert_eq!(indices(&batches), [vec![0], vec![1]]);
    }
}
