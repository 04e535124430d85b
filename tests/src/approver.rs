//! An approver for tests: answers from a script, remembering what it was asked.

use std::sync::{Arc, Mutex};

use tool_runtime::BoxFuture;
use tool_runtime::approvals::{Approval, ApprovalRequest, Approver};

/// Answers each ask with the next answer of its script (a denial once the script ran out),
/// remembering every request. Clones share the script and the requests.
#[derive(Default, Clone)]
pub struct Scripted {
    answers: Arc<Mutex<Vec<Approval>>>,
    asked: Arc<Mutex<Vec<ApprovalRequest>>>,
}

impl Scripted {
    /// Answers with `answers`, in order.
    pub fn new(answers: impl IntoIterator<Item = Approval>) -> Self {
        let mut answers: Vec<Approval> = answers.into_iter().collect();
        answers.reverse();
        Self {
            answers: Arc::new(Mutex::new(answers)),
            asked: Arc::default(),
        }
    }

    /// What it was asked, in order.
    pub fn asked(&self) -> Vec<ApprovalRequest> {
        self.asked
            .lock()
            .map(|asked| asked.clone())
            .unwrap_or_default()
    }
}

impl Approver for Scripted {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(request.clone());
        }
        let answer = self
            .answers
            .lock()
            .ok()
            .and_then(|mut answers| answers.pop())
            .unwrap_or_else(|| Approval::Deny("the script ran out".into()));
        Box::pin(async move { answer })
    }
}

/// Answers every ask the same.
#[derive(Clone, Debug)]
pub struct Always(pub Approval);

impl Approver for Always {
    fn decide<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        let answer = self.0.clone();
        Box::pin(async move { answer })
    }
}
