//! The support desk as runs of a model: each request of the transcript is routed to an intent
//! and its tools, then the model's calls run through the runtime's gates, round after round,
//! until the model answers or the run's budget stops it. Each run prints its route, its
//! budget, each round's batches, observations and timings, what a person was asked and
//! answered, the answer, and what the run spent.
//!
//! ```text
//! cargo run -p examples --bin support_desk                          # the built-in transcript
//! cargo run -p examples --bin support_desk -- --transcript FILE     # another transcript
//! cargo run -p examples --bin support_desk -- --model openai        # a real model
//! cargo run -p examples --bin support_desk -- --json                # reports as JSON
//! cargo run -p examples --bin support_desk -- --audit FILE          # keep the audit trail
//! cargo run -p examples --bin support_desk -- --trace FILE          # write each run's trace
//! ```
//!
//! The runtime has the gates of a deployment: the policy `examples/policy.toml`, an approver
//! (scripted: it answers what the transcript says, so the run is deterministic), previews of
//! the calls it is asked about, decision keys and an approval store for calls decided later,
//! and an audit trail (`JsonlAudit`; a temporary file removed at the end, unless `--audit FILE`
//! names one to keep). The session acts for the transcript's principal; each run's route
//! (`examples::support::router`: strong rules over the request's words) narrows it to the scope of the
//! request's intent (`SupportIntent`). At the end the audit file is verified (`verify_audit`).
//!
//! The model is scripted by default: round `n` of a run answers with the calls of the run's
//! turn `n`, the round after the last turn with the run's answer. `--model openai` asks an
//! OpenAI-compatible Chat Completions endpoint instead (`OpenAiChat::from_env`:
//! `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `OPENAI_MODEL`), with the same requests, router, gates
//! and budgets, and the same model classifies a request no rule knows (`ModelClassifier`);
//! nobody is scripted to approve its calls then (an ask is denied), and nothing is resumed.
//!
//! A transcript is
//!
//! ```text
//! {"session": "...", "principal": {"id": "...", "roles": [...]},
//!  "runs": [{"id": "...", "request": "<what the user asks>", "note": "...",
//!            "budget": {<Budget, optional>}, "answer": "<the model's last text>",
//!            "turns": [{"note": "...", "calls": [{"id", "name", "arguments"}],
//!                       "approvals": {"<call id>": <answer>},
//!                       "resume": {"<call id>": <answer>}}]}]}
//! ```
//!
//! An answer is `"approve"`, `{"approve_with": {<arguments>}}`, `{"deny": "<reason>"}` or
//! `"pending"` (decide later). `approvals` answer the calls the policy asks about (a call
//! asked about without an answer is denied); `resume`, once the run has ended, decides calls
//! left pending: each decision is signed (`Runtime::sign_decision`) and resumed
//! (`Runtime::resume`) by a second runtime with the same keys and approval store, as another
//! process would. In arguments, `$artifact_of:<call id>` stands for the artifact id an earlier
//! observation named, which the scripted model copies from the truncation notice.
//!
//! The text output shows each call's own elapsed time and every error whole (message, hint,
//! details), as the model receives it. `--json` prints `{"session", "principal", "model",
//! "runs": [{"id", "request", "note", "route", "catalog", "budget", "turns": [{"round",
//! "note", "calls", "asked", "report"}], "end", "answer", "spent", "resumed"}], "tickets",
//! "audit"}`, where `route` is the router's decision, `catalog` the tools the model was shown,
//! `calls` the calls as sent (artifact ids filled in), `report` the runtime's `TurnReport`,
//! `asked` the requests the approver was shown with its answers, `end` how the run ended (and
//! `reason`, when a budget stopped it), and `resumed` the decisions and the report of the
//! resume.
//!
//! When the reader of stdout goes away (`support_desk | head`), the program stops quietly.
//!
//! # Over MCP
//!
//! `--mcp` (stdio) and `--mcp-http ADDRESS` serve the desk's tools to an MCP client instead,
//! with the same policy, previews and audit trail. Several processes can serve one client
//! from behind one address:
//!
//! ```text
//! export SUPPORT_DESK_DECISION_SECRET=...   # at least 32 bytes, the same for every process
//! support_desk --mcp-http 127.0.0.1:8001 --stateless --redis redis://127.0.0.1/ --defer-approvals
//! support_desk --mcp-http 127.0.0.1:8002 --stateless --redis redis://127.0.0.1/ --defer-approvals
//! support_desk --sign-decision REQUEST_ID approve --redis redis://127.0.0.1/
//! ```
//!
//! `--stateless` serves each request on its own (no MCP session: the client names its session
//! with `x-support-session`); `--redis URL` keeps the idempotency claims and the pending
//! approvals in Redis, so a write repeated on another process runs once; `--defer-approvals`
//! leaves each ask the client cannot put to its user (no elicitation; with `--stateless`, every
//! ask) pending, signed with the key `desk` from `SUPPORT_DESK_DECISION_SECRET`.
//! `--sign-decision` reads the pending request from the Redis store and prints the signed
//! decision, which the client sends back with the same tool call under `_meta`
//! `io.tool-runtime/decision`, to any of the processes.
#![allow(
    clippy::print_stderr,
    reason = "a command-line program reports its own failures"
)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use examples::support::{self, SupportDeps, SupportIntent, Ticket};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tool_runtime::approvals::{
    Approval, ApprovalRequest, ApprovalStore, Approver, DecisionKeys, MemoryApprovalStore, Preview,
    SignedDecision,
};
use tool_runtime::audit::{JsonlAudit, verify_audit};
use tool_runtime::gates::Policy;
use tool_runtime::idempotency::{Idempotency, RedisStore};
use tool_runtime::mcp_server::{HttpOptions, McpServer, Refused, SessionRequest};
use tool_runtime::model::{Message, Model, ModelError, ModelRequest, ModelResponse, OpenAiChat};
use tool_runtime::routing::{MemoryDecisionStore, ModelClassifier, RouteDecision};
use tool_runtime::run::{Agent, Budget, MemoryRunStore, RunEnd, RunReport, RunRequest, Spent};
use tool_runtime::trace::{JsonlTrace, TraceSink};
use tool_runtime::{
    Arguments, BoxFuture, Observation, Principal, Runtime, RuntimeBuilder, Session, ToolCall,
    TurnReport,
};

const BUILT_IN: &str = include_str!("../../transcripts/support_desk.json");

/// The policy, next to this crate's manifest.
const POLICY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/policy.toml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Transcript {
    session: String,
    principal: PrincipalSpec,
    runs: Vec<RunScript>,
}

/// One request of the user, and what the scripted model answers round by round.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunScript {
    id: String,
    /// What the user asks: the router decides its intent from it.
    request: String,
    #[serde(default)]
    note: String,
    /// The run's limits; the default budget otherwise.
    #[serde(default)]
    budget: Option<Budget>,
    /// The model's rounds of calls, in order.
    turns: Vec<Turn>,
    /// The model's text once its rounds are done.
    #[serde(default)]
    answer: Option<String>,
}

/// Who the session acts for.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PrincipalSpec {
    id: String,
    #[serde(default)]
    roles: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Turn {
    #[serde(default)]
    note: String,
    calls: Vec<ToolCall>,
    /// What the approver answers, by call id.
    #[serde(default)]
    approvals: BTreeMap<String, Answer>,
    /// Decisions about calls left pending, resumed when the run has ended.
    #[serde(default)]
    resume: BTreeMap<String, Answer>,
}

/// A person's answer, as a transcript writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Answer {
    Approve,
    ApproveWith(Value),
    Deny(String),
    Pending,
}

impl Answer {
    fn approval(&self) -> Approval {
        match self {
            Answer::Approve => Approval::Approve,
            Answer::ApproveWith(arguments) => Approval::ApproveWith(arguments.clone()),
            Answer::Deny(reason) => Approval::Deny(reason.clone()),
            Answer::Pending => Approval::Pending,
        }
    }
}

/// A request the approver was shown, and its answer.
#[derive(Debug, Clone, Serialize)]
struct Asked {
    request: ApprovalRequest,
    answer: Answer,
}

/// The approver: answers each call from the transcript's `approvals`, and keeps what it was
/// asked so the program can print it.
#[derive(Clone, Default)]
struct ScriptedApprover {
    answers: Arc<Mutex<BTreeMap<String, Answer>>>,
    asked: Arc<Mutex<Vec<Asked>>>,
}

impl ScriptedApprover {
    /// The answers for the next turn.
    fn script(&self, answers: BTreeMap<String, Answer>) {
        *self.answers.lock().unwrap_or_else(PoisonError::into_inner) = answers;
    }

    /// What was asked since the last call, and the answers the script had left over.
    fn take(&self) -> (Vec<Asked>, Vec<String>) {
        let asked = std::mem::take(&mut *self.asked.lock().unwrap_or_else(PoisonError::into_inner));
        let unused =
            std::mem::take(&mut *self.answers.lock().unwrap_or_else(PoisonError::into_inner));
        (asked, unused.into_keys().collect())
    }
}

impl Approver for ScriptedApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        let answer = self
            .answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&request.call_id)
            .unwrap_or_else(|| {
                Answer::Deny(format!(
                    "the transcript has no answer for `{}`",
                    request.call_id
                ))
            });
        let approval = answer.approval();
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Asked {
                request: request.clone(),
                answer,
            });
        Box::pin(async move { approval })
    }
}

/// The `--json` output: the session's runs, each with its route, its rounds and its end.
#[derive(Debug, Serialize)]
struct SessionRun {
    session: String,
    principal: PrincipalSpec,
    /// The model that answered: `scripted`, or the endpoint's model.
    model: String,
    runs: Vec<RunOutput>,
    tickets: Vec<Ticket>,
    audit: AuditRun,
}

/// One run as it went: the request, the route decision, the tools the model was shown, the
/// budget, each round of calls, the end, what it spent, and the resume after it.
#[derive(Debug, Serialize)]
struct RunOutput {
    id: String,
    request: String,
    note: String,
    route: Option<RouteDecision>,
    /// The tools the model is shown: the session's catalog in the route's scope.
    catalog: Vec<String>,
    budget: Budget,
    turns: Vec<TurnRun>,
    #[serde(flatten)]
    end: RunEnd,
    answer: Option<String>,
    spent: Spent,
    #[serde(skip_serializing_if = "Option::is_none")]
    resumed: Option<ResumeRun>,
}

/// One round of calls as it ran: its note, its calls as sent, what a person was asked, and
/// the report.
#[derive(Debug, Serialize)]
struct TurnRun {
    round: u32,
    note: String,
    calls: Vec<ToolCall>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    asked: Vec<Asked>,
    report: TurnReport,
}

/// Pending calls decided and resumed after a run.
#[derive(Debug, Serialize)]
struct ResumeRun {
    decisions: Vec<Decided>,
    /// The resumed calls, with the arguments they run with.
    calls: Vec<ToolCall>,
    report: TurnReport,
}

/// A decision about one pending call.
#[derive(Debug, Serialize)]
struct Decided {
    call_id: String,
    tool: String,
    request_id: String,
    decision: Answer,
}

/// The verified audit trail.
#[derive(Debug, Serialize)]
struct AuditRun {
    lines: usize,
    last_hash: String,
    /// The file, when `--audit` kept it.
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<PathBuf>,
}

struct Options {
    transcript: Option<String>,
    /// Where each run's trace is written (JSON lines).
    trace: Option<PathBuf>,
    /// The model that answers the transcript's requests.
    model: ModelChoice,
    json: bool,
    audit: Option<PathBuf>,
    /// Serve the desk over MCP instead of running a transcript.
    mcp: Option<Mcp>,
    /// Tools per `tools/list` page.
    page_size: Option<usize>,
    /// The Redis server that holds idempotency claims and pending approvals.
    redis: Option<String>,
    /// Serve HTTP requests each on its own, without MCP sessions.
    stateless: bool,
    /// Leave the asks nobody can answer now pending, for a signed decision later.
    defer_approvals: bool,
    /// Sign a decision about a pending call instead of serving or running anything.
    sign: Option<SignRequest>,
}

/// `--model scripted|openai`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ModelChoice {
    /// The transcript's rounds, answered at once.
    Scripted,
    /// An OpenAI-compatible Chat Completions endpoint, from the environment.
    OpenAi,
}

/// `--sign-decision REQUEST_ID approve|deny [--reason R]`.
struct SignRequest {
    request_id: String,
    approve: bool,
    reason: Option<String>,
}

/// How the desk is served over MCP.
enum Mcp {
    Stdio,
    Http(String),
}

const USAGE: &str =
    "usage: support_desk [--transcript FILE] [--model scripted|openai] [--json] [--audit FILE]
                    [--trace FILE]
       support_desk --mcp | --mcp-http ADDRESS [--stateless] [--redis URL] [--defer-approvals]
                    [--page-size N] [--audit FILE]
       support_desk --sign-decision REQUEST_ID approve|deny [--reason R] --redis URL

Runs the support desk's requests (the built-in transcript's by default) as runs of a model:
each request is routed to an intent and its tools, then the model's calls run through the
gates (the policy examples/policy.toml, a scripted approver, an audit trail verified at the
end) within the run's budget. --model scripted (the default) answers with the transcript's
rounds; --model openai asks an OpenAI-compatible Chat Completions endpoint: OPENAI_BASE_URL
(https://api.openai.com/v1 by default; a vLLM, llama.cpp or Ollama server's /v1),
OPENAI_API_KEY and OPENAI_MODEL. --audit FILE keeps the trail in FILE (appended to; a
temporary file otherwise). --trace FILE writes each run's trace to FILE (JSON lines, one
event per step, replacing what FILE held).

--mcp serves the desk's tools to an MCP client on stdin and stdout; --mcp-http ADDRESS
(127.0.0.1:8000, or a bare port for 127.0.0.1; port 0 for any free one) over Streamable
HTTP at /mcp, printing
`listening on http://ADDRESS/mcp` once it accepts connections. The same policy and audit
apply; a call the policy asks about is put to the client's user (elicitation), or denied
when the client cannot ask. A session acts for the user and roles of the x-support-user and
x-support-roles headers (desk-agent, agent by default) in the scope of x-support-intent
(complaint by default), in the session x-support-session names (the MCP session otherwise).
--page-size N: at most N tools per tools/list page.

Several processes behind one address can serve one client:
--stateless (with --mcp-http) serves each request on its own, without MCP sessions (the
client names its session with x-support-session). --redis URL keeps idempotency claims and
pending approvals in that Redis server, so a write repeated on another process runs once
and a call left pending on one is resumed on another. --defer-approvals leaves each ask the
client cannot put to its user pending (approval_pending, with a request id) instead of
denying it (with --stateless, every ask: a request served on its own does not carry the
client's capabilities, so nobody is asked by elicitation); the decision keys (id `desk`)
come from SUPPORT_DESK_DECISION_SECRET (at least 32 bytes, the same in every process). A
pending call resumes when the client calls the tool again with the signed decision in the
request's _meta under io.tool-runtime/decision.

--sign-decision REQUEST_ID approve|deny [--reason R] --redis URL finds the pending request
in the Redis store, shows it on stderr and prints the decision, signed with the same secret.";

fn options() -> Result<Options, String> {
    let mut options = Options {
        transcript: None,
        trace: None,
        model: ModelChoice::Scripted,
        json: false,
        audit: None,
        mcp: None,
        page_size: None,
        redis: None,
        stateless: false,
        defer_approvals: false,
        sign: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--transcript" => {
                options.transcript = Some(args.next().ok_or("--transcript needs a file")?);
            }
            "--audit" => {
                options.audit = Some(args.next().ok_or("--audit needs a file")?.into());
            }
            "--json" => options.json = true,
            "--trace" => {
                options.trace = Some(args.next().ok_or("--trace needs a file")?.into());
            }
            "--model" => {
                options.model = match args.next().as_deref() {
                    Some("scripted") => ModelChoice::Scripted,
                    Some("openai") => ModelChoice::OpenAi,
                    Some(other) => {
                        return Err(format!("--model is scripted or openai, not `{other}`"));
                    }
                    None => return Err("--model needs scripted or openai".into()),
                };
            }
            "--mcp" => options.mcp = Some(Mcp::Stdio),
            "--mcp-http" => {
                options.mcp = Some(Mcp::Http(args.next().ok_or("--mcp-http needs an address")?));
            }
            "--page-size" => {
                let size = args.next().ok_or("--page-size needs a number")?;
                options.page_size = Some(
                    size.parse()
                        .map_err(|_| format!("--page-size needs a number, not `{size}`"))?,
                );
            }
            "--redis" => options.redis = Some(args.next().ok_or("--redis needs a URL")?),
            "--stateless" => options.stateless = true,
            "--defer-approvals" => options.defer_approvals = true,
            "--sign-decision" => {
                let request_id = args
                    .next()
                    .ok_or("--sign-decision needs a request id and approve or deny")?;
                let approve = match args.next().as_deref() {
                    Some("approve") => true,
                    Some("deny") => false,
                    _ => return Err("--sign-decision REQUEST_ID needs approve or deny".into()),
                };
                options.sign = Some(SignRequest {
                    request_id,
                    approve,
                    reason: None,
                });
            }
            "--reason" => {
                let reason = args.next().ok_or("--reason needs a text")?;
                match &mut options.sign {
                    Some(sign) if !sign.approve => sign.reason = Some(reason),
                    _ => return Err("--reason goes after --sign-decision REQUEST_ID deny".into()),
                }
            }
            "--help" | "-h" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument `{other}`; try --help")),
        }
    }
    check_modes(&options)?;
    Ok(options)
}

/// Refuses flags that mean nothing in the mode asked for, so a typo never runs another mode.
fn check_modes(options: &Options) -> Result<(), String> {
    if options.sign.is_some() {
        if options.redis.is_none() {
            return Err("--sign-decision needs --redis URL: the store the request waits in".into());
        }
        let serving = options.mcp.is_some() || options.stateless || options.defer_approvals;
        let running = options.transcript.is_some()
            || options.trace.is_some()
            || options.model != ModelChoice::Scripted
            || options.json
            || options.audit.is_some()
            || options.page_size.is_some();
        if serving || running {
            return Err(
                "--sign-decision signs one decision; it takes only --reason and --redis".into(),
            );
        }
        return Ok(());
    }
    if options.mcp.is_some() && options.trace.is_some() {
        return Err("--trace goes with a transcript's runs, not with --mcp".into());
    }
    if options.mcp.is_some() && options.model != ModelChoice::Scripted {
        return Err("--model goes with a transcript's runs, not with --mcp: an MCP client brings its own model".into());
    }
    if options.mcp.is_none() {
        for (set, flag) in [
            (options.redis.is_some(), "--redis"),
            (options.stateless, "--stateless"),
            (options.defer_approvals, "--defer-approvals"),
        ] {
            if set {
                return Err(format!("{flag} goes with --mcp or --mcp-http; try --help"));
            }
        }
    }
    if options.stateless && !matches!(options.mcp, Some(Mcp::Http(_))) {
        return Err("--stateless goes with --mcp-http: a stdio server has one client".into());
    }
    Ok(())
}

/// Why the program stopped.
enum Failure {
    /// Writing to stdout failed.
    Io(io::Error),
    /// Anything else: a bad transcript, a runtime that does not build, an audit that fails.
    Other(String),
}

impl From<io::Error> for Failure {
    fn from(error: io::Error) -> Self {
        Failure::Io(error)
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(sign) = &options.sign {
        // `check_modes` made sure the store is named.
        let url = options.redis.as_deref().unwrap_or_default();
        return match sign_decision(sign, url).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("{message}");
                ExitCode::FAILURE
            }
        };
    }
    let (audit_path, keep_audit) = match &options.audit {
        Some(path) => (path.clone(), true),
        None => (temporary_audit_file(), false),
    };
    let result = match &options.mcp {
        Some(mcp) => serve_mcp(mcp, &options, &audit_path).await,
        None => run(&options, &audit_path, keep_audit).await,
    };
    if !keep_audit {
        let _ = std::fs::remove_file(&audit_path);
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`support_desk | head`): nothing left to say to anyone.
        Err(Failure::Io(error)) if error.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(Failure::Io(error)) => {
            eprintln!("cannot write to stdout: {error}");
            ExitCode::FAILURE
        }
        Err(Failure::Other(message)) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

/// A file name no other run uses, in the system's temporary directory.
fn temporary_audit_file() -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    std::env::temp_dir().join(format!(
        "support-desk-audit-{}-{nanos}.jsonl",
        std::process::id()
    ))
}

/// A signing secret for this run only: 32 bytes from the standard library's randomly keyed
/// hasher. A deployment loads 32 random bytes from where it keeps its secrets, the same in
/// every process that resumes calls.
fn run_secret() -> Vec<u8> {
    use std::hash::BuildHasher;
    let state = std::collections::hash_map::RandomState::new();
    (0..4_u8)
        .flat_map(|part| state.hash_one(part).to_le_bytes())
        .collect()
}

/// The two runtimes of the session: the desk, which asks a person, and a second one that
/// resumes calls decided later, as another process sharing the keys and the approval store
/// would.
struct Desk {
    runtime: Runtime<SupportDeps>,
    resumer: Runtime<SupportDeps>,
    approver: ScriptedApprover,
}

fn desk(audit_path: &Path) -> Result<Desk, String> {
    let policy = Policy::from_toml_file(POLICY).map_err(|error| error.to_string())?;
    let audit = Arc::new(JsonlAudit::open(audit_path).map_err(|error| {
        format!(
            "cannot open the audit file {}: {error}",
            audit_path.display()
        )
    })?);
    let keys = DecisionKeys::try_new("desk-1", run_secret()).map_err(|error| error.to_string())?;
    let store: Arc<dyn ApprovalStore> = Arc::new(MemoryApprovalStore::new());
    let deps = Arc::new(SupportDeps::demo());
    let gated = |deps: Arc<SupportDeps>| -> RuntimeBuilder<SupportDeps> {
        Runtime::builder_shared(deps)
            .policy(policy.clone())
            .audit(Arc::clone(&audit))
            .decision_keys(keys.clone())
            .approval_store(Arc::clone(&store))
    };
    let approver = ScriptedApprover::default();
    let runtime = with_previews(gated(Arc::clone(&deps)).approver(approver.clone()))
        .build()
        .map_err(|error| format!("cannot build the runtime: {error}"))?;
    let resumer = gated(deps)
        .build()
        .map_err(|error| format!("cannot build the second runtime: {error}"))?;
    Ok(Desk {
        runtime,
        resumer,
        approver,
    })
}

/// The previews a person is shown when the policy asks about a call.
fn with_previews(builder: RuntimeBuilder<SupportDeps>) -> RuntimeBuilder<SupportDeps> {
    builder
        .preview("create_ticket", |arguments| {
            let priority = arguments["priority"].as_str().unwrap_or("normal");
            let preview = Preview::new(format!(
                "open a ticket, priority {priority}: {}",
                arguments["subject"].as_str().unwrap_or_default()
            ));
            match arguments["order_id"].as_str() {
                Some(order) => preview.with_resource(order),
                None => preview,
            }
        })
        .preview("export_order_history", |_| {
            Preview::new("export the full history of every order")
                .with_summary("every customer's orders, kept whole as an artifact")
        })
        .preview("escalate_to_human", |arguments| {
            Preview::new("page the on-call agent")
                .with_summary(arguments["reason"].as_str().unwrap_or_default())
        })
        .preview("cancel_order", |arguments| {
            let order = arguments["order_id"].as_str().unwrap_or_default();
            Preview::new(format!("cancel order {order}"))
                .with_summary("cannot be undone")
                .with_resource(order)
        })
}

/// Serves the desk's tools over MCP until the client goes away (stdio) or the process is
/// stopped (HTTP), with the desk's policy, previews and audit trail. Nobody is scripted to
/// approve: the client's user is asked (elicitation); otherwise the ask is left pending
/// (`--defer-approvals`) or denied. With `--redis`, idempotency claims and pending approvals
/// live in Redis, shared with every process that names the same server.
async fn serve_mcp(mcp: &Mcp, options: &Options, audit_path: &Path) -> Result<(), Failure> {
    let policy =
        Policy::from_toml_file(POLICY).map_err(|error| Failure::Other(error.to_string()))?;
    let audit = JsonlAudit::open(audit_path).map_err(|error| {
        Failure::Other(format!(
            "cannot open the audit file {}: {error}",
            audit_path.display()
        ))
    })?;
    let mut deps = SupportDeps::demo();
    // The carrier answers within the label tool's timeout here, in four steps a client sees
    // as progress.
    deps.label_latency = Duration::from_millis(1200);
    let mut builder = with_previews(Runtime::builder(deps).policy(policy).audit(Arc::new(audit)));
    if let Some(url) = &options.redis {
        let store = connect_redis(url).await.map_err(Failure::Other)?;
        builder = builder
            .idempotency(Idempotency::new(store.clone()))
            .approval_store(store);
    }
    if options.defer_approvals {
        builder = builder
            .decision_keys(shared_keys().map_err(Failure::Other)?)
            .approver(DeferringApprover);
    }
    let runtime = builder
        .build()
        .map_err(|error| Failure::Other(format!("cannot build the runtime: {error}")))?;
    let mut server = McpServer::new(runtime)
        .named("support-desk", env!("CARGO_PKG_VERSION"))
        .instructions("Tools of a support desk: look orders up, open tickets, escalate.")
        .sessions(desk_session);
    if let Some(size) = options.page_size {
        server = server.page_size(size);
    }
    match mcp {
        Mcp::Stdio => server
            .serve_stdio()
            .await
            .map_err(|error| Failure::Other(error.to_string())),
        Mcp::Http(address) => {
            let http = if options.stateless {
                HttpOptions::default().stateless()
            } else {
                HttpOptions::default()
            };
            // A bare port listens on loopback only.
            let address = match address.parse::<u16>() {
                Ok(port) => format!("127.0.0.1:{port}"),
                Err(_) => address.clone(),
            };
            let listener = server
                .bind_with(address.as_str(), http)
                .await
                .map_err(|error| Failure::Other(error.to_string()))?;
            let url = listener
                .url()
                .map_err(|error| Failure::Other(error.to_string()))?;
            let mut stdout = io::stdout().lock();
            writeln!(stdout, "listening on {url}")?;
            stdout.flush()?;
            drop(stdout);
            listener
                .serve()
                .await
                .map_err(|error| Failure::Other(error.to_string()))
        }
    }
}

/// The environment variable holding the secret that signs decisions (`--defer-approvals`,
/// `--sign-decision`).
const SECRET_VARIABLE: &str = "SUPPORT_DESK_DECISION_SECRET";

/// The decision keys every desk process shares: key id `desk`, the secret from
/// [`SECRET_VARIABLE`] (its bytes as given, at least 32).
fn shared_keys() -> Result<DecisionKeys, String> {
    let secret = std::env::var(SECRET_VARIABLE).map_err(|_| {
        format!(
            "{SECRET_VARIABLE} is not set: decisions are signed with it (at least 32 bytes, \
             the same in every process that resumes calls)"
        )
    })?;
    DecisionKeys::try_new("desk", secret.into_bytes())
        .map_err(|error| format!("{SECRET_VARIABLE} cannot sign decisions: {error}"))
}

async fn connect_redis(url: &str) -> Result<RedisStore, String> {
    RedisStore::connect(url)
        .await
        .map_err(|error| format!("cannot use the Redis store at {url}: {error}"))
}

/// The approver of `--defer-approvals`: every ask the client's user cannot answer now
/// (elicitation answers it first when the client has it) waits for a signed decision.
struct DeferringApprover;

impl Approver for DeferringApprover {
    fn decide<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        Box::pin(async { Approval::Pending })
    }
}

/// `--sign-decision`: finds the pending request in the Redis store, shows it on stderr (what
/// the person decides about) and prints the signed decision on stdout.
async fn sign_decision(sign: &SignRequest, url: &str) -> Result<(), String> {
    let keys = shared_keys()?;
    let store = connect_redis(url).await?;
    let session = session_of_request(url, store.prefix(), &sign.request_id).await?;
    let pending = store
        .pending(&session)
        .await
        .map_err(|error| format!("cannot read the pending approvals: {error}"))?
        .into_iter()
        .find(|pending| pending.request_id == sign.request_id)
        .ok_or_else(|| {
            format!(
                "request {} was decided meanwhile: it waits no more",
                sign.request_id
            )
        })?;
    // Signing needs only the keys; the runtime is the desk's so the claims are the same.
    let runtime = Runtime::builder(SupportDeps::demo())
        .decision_keys(keys)
        .approval_store(store)
        .build()
        .map_err(|error| format!("cannot build the runtime: {error}"))?;
    let approval = if sign.approve {
        Approval::Approve
    } else {
        Approval::Deny(
            sign.reason
                .clone()
                .unwrap_or_else(|| "denied by the desk's supervisor".to_owned()),
        )
    };
    let decision = if sign.approve { "approve" } else { "deny" };
    eprintln!(
        "{decision} {} {} in session {} ({})",
        pending.tool, pending.arguments, pending.session, pending.reason
    );
    let signed = runtime
        .sign_decision(&pending, approval)
        .map_err(|error| format!("cannot sign the decision: {error}"))?;
    let mut stdout = io::stdout().lock();
    writeln!(stdout, "{}", signed.as_str())
        .and_then(|()| stdout.flush())
        .map_err(|error| format!("cannot write to stdout: {error}"))
}

/// The session a pending request waits in, found by its id alone: the store keeps it under
/// `<prefix>:approval:<session>:<request id>` (session and id escaped, `%` as `%25`, `:` as
/// `%3A`), so a key scan for that suffix names the session.
async fn session_of_request(url: &str, prefix: &str, request_id: &str) -> Result<String, String> {
    let key_start = format!("{prefix}:approval:");
    let key_end = format!(":{}", escape_segment(request_id));
    let pattern = format!("{}*{}", glob_literal(&key_start), glob_literal(&key_end));
    let scan = async {
        let client = redis::Client::open(url)?;
        let mut connection = client.get_multiplexed_async_connection().await?;
        let mut keys: Vec<String> = Vec::new();
        let mut cursor: u64 = 0;
        loop {
            let (next, found): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut connection)
                .await?;
            keys.extend(found);
            if next == 0 {
                return Ok::<_, redis::RedisError>(keys);
            }
            cursor = next;
        }
    };
    let keys = tokio::time::timeout(Duration::from_secs(10), scan)
        .await
        .map_err(|_| format!("the Redis server at {url} did not answer within 10 s"))?
        .map_err(|error| format!("cannot search the Redis server at {url}: {error}"))?;
    let mut sessions: Vec<String> = keys
        .iter()
        .filter_map(|key| key.strip_prefix(&key_start)?.strip_suffix(&key_end))
        .map(unescape_segment)
        .collect();
    // SCAN may name a key twice.
    sessions.sort_unstable();
    sessions.dedup();
    match sessions.as_slice() {
        [session] => Ok(session.clone()),
        [] => Err(format!(
            "no call waits under request {request_id} (decided already, expired, or another store)"
        )),
        _ => Err(format!(
            "request {request_id} waits in several sessions: {}",
            sessions.join(", ")
        )),
    }
}

/// A key segment as the Redis store writes it: `%` as `%25`, `:` as `%3A`.
fn escape_segment(text: &str) -> String {
    text.replace('%', "%25").replace(':', "%3A")
}

/// The segment [`escape_segment`] wrote, read back.
fn unescape_segment(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('%') {
        plain.push_str(&rest[..at]);
        let after = &rest[at..];
        if let Some(tail) = after.strip_prefix("%3A") {
            plain.push(':');
            rest = tail;
        } else if let Some(tail) = after.strip_prefix("%25") {
            plain.push('%');
            rest = tail;
        } else {
            plain.push('%');
            rest = &after[1..];
        }
    }
    plain.push_str(rest);
    plain
}

/// `text` matched literally in a `SCAN MATCH` pattern (its glob characters escaped).
fn glob_literal(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern
}

/// The session an MCP request is served in: the user and roles its headers name, in the
/// scope of its intent.
fn desk_session(request: &SessionRequest<'_>) -> Result<Session, Refused> {
    let user = request.header("x-support-user").unwrap_or("desk-agent");
    let roles = request.header("x-support-roles").unwrap_or("agent");
    let intent = match request.header("x-support-intent") {
        None => SupportIntent::Complaint,
        Some(label) => SupportIntent::from_label(label).ok_or_else(|| {
            Refused(format!(
                "x-support-intent `{label}` is not an intent: order_status, complaint or billing"
            ))
        })?,
    };
    let principal = roles
        .split(',')
        .map(str::trim)
        .filter(|role| !role.is_empty())
        .fold(Principal::new(user), Principal::with_role);
    // A stateless server has no MCP session id: the client names its session.
    let id = match (
        request.header("x-support-session"),
        request.mcp_session_id(),
    ) {
        (Some(session), _) => format!("desk-{session}"),
        (None, Some(id)) => format!("mcp-{id}"),
        (None, None) => format!("mcp-{user}"),
    };
    Ok(Session::new(id)
        .with_principal(principal)
        .with_scope(intent.scope()))
}

/// Runs each of the transcript's requests as a run of the model; the text output is written
/// run by run as each ends, the JSON output once at the end. Stops at the first write that
/// fails.
async fn run(options: &Options, audit_path: &Path, keep_audit: bool) -> Result<(), Failure> {
    let text = match &options.transcript {
        None => BUILT_IN.to_owned(),
        Some(path) => std::fs::read_to_string(path)
            .map_err(|error| Failure::Other(format!("cannot read {path}: {error}")))?,
    };
    let transcript: Transcript = serde_json::from_str(&text)
        .map_err(|error| Failure::Other(format!("the transcript is not valid: {error}")))?;
    for script in &transcript.runs {
        for (number, turn) in script.turns.iter().enumerate() {
            if let Some(call) = turn
                .resume
                .iter()
                .find_map(|(call, answer)| (*answer == Answer::Pending).then_some(call))
            {
                return Err(Failure::Other(format!(
                    "the transcript is not valid: run `{}` turn {} resumes `{call}` with \"pending\", which decides nothing",
                    script.id,
                    number + 1
                )));
            }
        }
    }
    let endpoint = match options.model {
        ModelChoice::Scripted => None,
        ModelChoice::OpenAi => Some(Arc::new(OpenAiChat::from_env().map_err(|error| {
            Failure::Other(format!(
                "--model openai: {error} (set OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL)"
            ))
        })?)),
    };
    let model_name = endpoint
        .as_ref()
        .map_or_else(|| "scripted".to_owned(), |chat| chat.name().to_owned());
    let desk = desk(audit_path).map_err(Failure::Other)?;
    let runtime = &desk.runtime;
    let mut principal = Principal::new(transcript.principal.id.as_str());
    for role in &transcript.principal.roles {
        principal = principal.with_role(role.as_str());
    }
    // The session may use every tool; each run's route narrows it to its intent's scope.
    let session = Session::new(transcript.session.as_str()).with_principal(principal);
    let json = options.json;
    if !json {
        let mut out = io::stdout().lock();
        print_header(
            &mut out,
            runtime,
            &transcript,
            endpoint.as_deref(),
            keep_audit.then_some(audit_path),
        )?;
        out.flush()?;
    }
    // One record and one decision per run, kept for the whole session.
    let runs_store = Arc::new(MemoryRunStore::default());
    let trace = match &options.trace {
        None => None,
        Some(path) => Some(Arc::new(JsonlTrace::create(path).map_err(|error| {
            Failure::Other(format!(
                "cannot write the trace {}: {error}",
                path.display()
            ))
        })?)),
    };
    let decisions = Arc::new(MemoryDecisionStore::default());
    let mut runs = Vec::new();
    for script in transcript.runs {
        if endpoint.is_none() {
            desk.approver.script(
                script
                    .turns
                    .iter()
                    .flat_map(|turn| turn.approvals.clone())
                    .collect(),
            );
        }
        let budget = script.budget.clone().unwrap_or_default();
        // A real model also classifies what no rule knows; the scripted one only answers.
        let router = match &endpoint {
            Some(chat) => support::router().classifier(ModelClassifier::new(Arc::clone(chat))),
            None => support::router(),
        };
        let mut agent = match &endpoint {
            Some(chat) => Agent::new(runtime.clone(), Arc::clone(chat)),
            None => Agent::new(runtime.clone(), TranscriptModel::new(&script)),
        }
        .router(router.store(Arc::clone(&decisions)))
        .budget(budget.clone())
        .store(Arc::clone(&runs_store))
        .instructions(INSTRUCTIONS);
        if let Some(trace) = &trace {
            agent = agent.trace(Arc::clone(trace));
        }
        let report = agent
            .run(RunRequest::new(
                script.id.as_str(),
                session.clone(),
                script.request.as_str(),
            ))
            .await
            .map_err(|error| Failure::Other(error.to_string()))?;
        // The calls the model made: a run stopped by its budget never reached the rest of its
        // script, whose answers and decisions are left unused.
        let made: HashSet<&str> = report
            .rounds
            .iter()
            .flat_map(|round| round.response.calls.iter().map(|call| &*call.id))
            .collect();
        let (asked, unused) = desk.approver.take();
        for call in unused.iter().filter(|call| made.contains(call.as_str())) {
            eprintln!(
                "support_desk: run `{}` answers `{call}`, which nobody asked about",
                script.id
            );
        }
        let resume_decisions: BTreeMap<String, Answer> = script
            .turns
            .iter()
            .flat_map(|turn| turn.resume.clone())
            .filter(|(call, _)| made.contains(call.as_str()))
            .collect();
        let resumed = if resume_decisions.is_empty() || endpoint.is_some() {
            None
        } else {
            Some(resume(&desk, &session, &script, &resume_decisions).await?)
        };
        drop(made);
        let output = run_output(runtime, &session, script, report, asked, budget, resumed);
        if json {
            runs.push(output);
        } else {
            let mut out = io::stdout().lock();
            print_run(&mut out, &output)?;
            out.flush()?;
        }
    }
    if let (Some(trace), Some(path)) = (&trace, &options.trace) {
        trace.flush().await.map_err(|error| {
            Failure::Other(format!(
                "the trace {} could not be written: {error}",
                path.display()
            ))
        })?;
    }
    let tickets = runtime.deps().tickets();
    // The last lines (outcomes) may still be on their way to the disk.
    runtime.flush_audit().await.map_err(|error| {
        Failure::Other(format!(
            "the audit trail {} could not be written: {error}",
            audit_path.display()
        ))
    })?;
    let summary = verify_audit(audit_path).map_err(|error| {
        Failure::Other(format!(
            "the audit trail {} does not verify: {error}",
            audit_path.display()
        ))
    })?;
    let mut out = io::stdout().lock();
    if json {
        let run = SessionRun {
            session: transcript.session,
            principal: transcript.principal,
            model: model_name,
            runs,
            tickets,
            audit: AuditRun {
                lines: summary.lines,
                last_hash: summary.last_hash,
                file: keep_audit.then(|| audit_path.to_owned()),
            },
        };
        let rendered = serde_json::to_string_pretty(&run).map_err(io::Error::other)?;
        writeln!(out, "{rendered}")?;
    } else {
        write!(out, "tickets created during the session: {}", tickets.len())?;
        for ticket in &tickets {
            let priority = serde_json::to_value(ticket.priority).unwrap_or_default();
            write!(
                out,
                "\n   {} ({}, {}): {}",
                ticket.id,
                priority.as_str().unwrap_or_default(),
                ticket.order_id.as_deref().unwrap_or("no order"),
                ticket.subject
            )?;
        }
        writeln!(out)?;
        if keep_audit {
            writeln!(
                out,
                "audit: ok, {} lines in {}, last hash {}\n   (check it again: cargo run -p examples --bin verify_audit -- {})",
                summary.lines,
                audit_path.display(),
                summary.last_hash,
                audit_path.display()
            )?;
        } else {
            writeln!(
                out,
                "audit: ok, {} lines, hash-chained (a temporary file, now removed; --audit FILE keeps it)",
                summary.lines
            )?;
        }
    }
    out.flush()?;
    Ok(())
}

/// What the model is told first in every request (a scripted model ignores it).
const INSTRUCTIONS: &str = "You are the support desk's agent. Use the tools you are given to \
    answer the customer; when a tool refuses a call, tell the customer what happens next.";

/// The scripted model of one run: round `n` answers with the calls of turn `n`, the round
/// after the last turn with the run's answer. It reads its round from the conversation, and
/// copies an artifact id from the truncation notice that named it (`$artifact_of:<call id>`),
/// as a model would.
struct TranscriptModel {
    turns: Vec<Vec<ToolCall>>,
    answer: String,
}

impl TranscriptModel {
    fn new(script: &RunScript) -> Self {
        Self {
            turns: script.turns.iter().map(|turn| turn.calls.clone()).collect(),
            answer: script
                .answer
                .clone()
                .unwrap_or_else(|| "That is all I can do for now.".to_owned()),
        }
    }
}

impl Model for TranscriptModel {
    fn name(&self) -> &str {
        "scripted"
    }

    fn respond<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let messages = request.messages;
        // The rounds answered since the user's request.
        let round = messages
            .iter()
            .rev()
            .take_while(|message| !matches!(message, Message::User { .. }))
            .filter(|message| matches!(message, Message::Assistant { .. }))
            .count();
        let response = match self.turns.get(round) {
            Some(calls) => {
                let artifacts = artifacts_named(messages);
                ModelResponse::calls(
                    calls
                        .iter()
                        .map(|call| substitute_artifacts(call.clone(), &artifacts)),
                )
            }
            None => ModelResponse::text(self.answer.as_str()),
        };
        Box::pin(std::future::ready(Ok(response)))
    }
}

/// The artifact id each call's answer named in its truncation notice, by call id.
fn artifacts_named(messages: &[Message]) -> HashMap<String, String> {
    const NOTICE: &str = "the full output is artifact ";
    messages
        .iter()
        .filter_map(|message| match message {
            Message::Tool {
                call_id, content, ..
            } => {
                let (_, after) = content.split_once(NOTICE)?;
                let id = after.split([';', ' ', ']']).next()?;
                Some((call_id.clone(), id.to_owned()))
            }
            _ => None,
        })
        .collect()
}

/// A run's report, as the program prints it: its rounds of calls with what a person was asked
/// about each.
fn run_output(
    runtime: &Runtime<SupportDeps>,
    session: &Session,
    script: RunScript,
    report: RunReport,
    mut asked: Vec<Asked>,
    budget: Budget,
    resumed: Option<ResumeRun>,
) -> RunOutput {
    let scope = SupportIntent::scope_for(
        report
            .route
            .as_ref()
            .filter(|decision| decision.is_routed())
            .and_then(|decision| decision.intent.as_deref()),
    );
    let catalog = runtime
        .catalog(&session.clone().with_scope(scope))
        .iter()
        .map(|spec| spec.name().to_owned())
        .collect();
    let answer = report.answer().map(str::to_owned);
    let mut turns: Vec<TurnRun> = report
        .rounds
        .into_iter()
        .filter_map(|round| {
            let report = round.report?;
            let note = script
                .turns
                .get(usize::try_from(round.number).ok()?.checked_sub(1)?)
                .map(|turn| turn.note.clone())
                .unwrap_or_default();
            let calls = round.response.calls;
            let (mine, others) = asked.drain(..).partition(|asked: &Asked| {
                calls.iter().any(|call| *call.id == *asked.request.call_id)
            });
            asked = others;
            Some(TurnRun {
                round: round.number,
                note,
                calls,
                asked: mine,
                report,
            })
        })
        .collect();
    // Calls the tools made themselves were asked about under their own ids: shown with the
    // last round.
    if let Some(last) = turns.last_mut() {
        last.asked.append(&mut asked);
    }
    RunOutput {
        id: script.id,
        request: script.request,
        note: script.note,
        route: report.route,
        catalog,
        budget,
        turns,
        end: report.end,
        answer,
        spent: report.spent,
        resumed,
    }
}

/// Decides the pending calls `decisions` names, once the run has ended: each decision is
/// signed by the desk and resumed by the second runtime.
async fn resume(
    desk: &Desk,
    session: &Session,
    script: &RunScript,
    decisions: &BTreeMap<String, Answer>,
) -> Result<ResumeRun, Failure> {
    let pending = desk
        .runtime
        .pending_approvals(session)
        .await
        .map_err(|error| Failure::Other(format!("cannot read the pending approvals: {error}")))?;
    let mut signed: Vec<SignedDecision> = Vec::new();
    let mut decided = Vec::new();
    let mut calls = Vec::new();
    for (call_id, answer) in decisions {
        let Some(waiting) = pending.iter().find(|waiting| &waiting.call_id == call_id) else {
            let turn = script
                .turns
                .iter()
                .position(|turn| turn.resume.contains_key(call_id))
                .map_or(0, |at| at + 1);
            return Err(Failure::Other(format!(
                "run `{}` turn {turn} resumes `{call_id}`, which waits for no decision",
                script.id
            )));
        };
        let decision = desk
            .runtime
            .sign_decision(waiting, answer.approval())
            .map_err(|error| {
                Failure::Other(format!("cannot sign the decision for `{call_id}`: {error}"))
            })?;
        signed.push(decision);
        let arguments = match answer {
            Answer::ApproveWith(edited) => edited.clone(),
            _ => waiting.arguments.clone(),
        };
        calls.push(ToolCall::new(
            call_id.as_str(),
            waiting.tool.as_str(),
            Arguments::Value(arguments),
        ));
        decided.push(Decided {
            call_id: call_id.clone(),
            tool: waiting.tool.clone(),
            request_id: waiting.request_id.clone(),
            decision: answer.clone(),
        });
    }
    let report = desk.resumer.resume(session, &signed).await;
    Ok(ResumeRun {
        decisions: decided,
        calls,
        report,
    })
}

fn print_header(
    out: &mut impl Write,
    runtime: &Runtime<SupportDeps>,
    transcript: &Transcript,
    endpoint: Option<&OpenAiChat>,
    audit: Option<&Path>,
) -> io::Result<()> {
    writeln!(
        out,
        "support desk: {} tools, session `{}`, {}",
        runtime.registry().len(),
        transcript.session,
        plural(transcript.runs.len(), "run")
    )?;
    writeln!(out, "   policy:    examples/policy.toml")?;
    writeln!(
        out,
        "   principal: {} ({})",
        transcript.principal.id,
        transcript.principal.roles.join(", ")
    )?;
    match endpoint {
        None => writeln!(
            out,
            "   model:     scripted: it answers each round with the transcript's calls"
        )?,
        Some(chat) => writeln!(out, "   model:     {} at {}", chat.name(), chat.endpoint())?,
    }
    match audit {
        Some(path) => writeln!(out, "   audit:     {}\n", path.display()),
        None => writeln!(out, "   audit:     a temporary file\n"),
    }
}

/// Replaces `$artifact_of:<call id>` in string arguments with that call's artifact id.
fn substitute_artifacts(mut call: ToolCall, artifacts: &HashMap<String, String>) -> ToolCall {
    if let Arguments::Json(text) = &mut call.arguments {
        for (call_id, artifact) in artifacts {
            *text = text.replace(&format!("$artifact_of:{call_id}"), artifact);
        }
    }
    call
}

/// One run: the request, the route and what it shows the model, the budget, each round, the
/// end with what it spent, and the resume after it.
fn print_run(out: &mut impl Write, run: &RunOutput) -> io::Result<()> {
    writeln!(out, "══ run `{}`: {}", run.id, run.request)?;
    if !run.note.is_empty() {
        print_field(out, "", &run.note)?;
    }
    let shown = if run.catalog.is_empty() {
        "the model is shown no tools".to_owned()
    } else {
        format!(
            "the model is shown {}: {}",
            plural(run.catalog.len(), "tool"),
            run.catalog.join(", ")
        )
    };
    match &run.route {
        None => writeln!(out, "   route:     none (the session's scope): {shown}")?,
        Some(decision) => writeln!(out, "   route:     {}: {shown}", route_text(decision))?,
    }
    writeln!(out, "   budget:    {}", budget_text(&run.budget))?;
    writeln!(out)?;
    for turn in &run.turns {
        if turn.note.is_empty() {
            writeln!(out, "━━ round {}", turn.round)?;
        } else {
            writeln!(out, "━━ round {}: {}", turn.round, turn.note)?;
        }
        print_report(out, &turn.calls, &turn.asked, &turn.report)?;
        writeln!(out, "   round took {}\n", millis(turn.report.elapsed()))?;
    }
    if let Some(answer) = &run.answer {
        let label = match run.end {
            RunEnd::Clarify { .. } => "asks:      ",
            _ => "answer:    ",
        };
        writeln!(
            out,
            "   {label}{}",
            answer.lines().next().unwrap_or_default()
        )?;
        for line in answer.lines().skip(1) {
            writeln!(out, "              {line}")?;
        }
    }
    writeln!(out, "   run ended: {}", end_text(&run.end, &run.spent))?;
    if let Some(resumed) = &run.resumed {
        writeln!(out, "   later, a person decides:")?;
        for decided in &resumed.decisions {
            writeln!(
                out,
                "   decide {} {} (request {}): {}",
                decided.call_id,
                decided.tool,
                decided.request_id,
                answer_text(&decided.decision, None)
            )?;
        }
        writeln!(
            out,
            "          signed (HMAC-SHA256) by the desk, resumed by a second runtime with the same keys and approval store"
        )?;
        print_report(out, &resumed.calls, &[], &resumed.report)?;
        writeln!(out, "   resume took {}", millis(resumed.report.elapsed()))?;
    }
    writeln!(out)
}

/// A route decision in words: `complaint (rule, confidence 0.90, order_id A-1008)`.
fn route_text(decision: &RouteDecision) -> String {
    let mut facts = vec![
        format!("{:?}", decision.source).to_lowercase(),
        format!("confidence {:.2}", decision.confidence),
    ];
    facts.extend(
        decision
            .entities
            .iter()
            .map(|(name, value)| format!("{name} {value}")),
    );
    facts.extend(decision.signals.iter().map(|signal| signal.to_string()));
    let intent = decision.intent.as_deref().unwrap_or("unknown");
    match decision.clarify {
        Some(_) => format!("{intent} ({}), to be clarified", facts.join(", ")),
        None => format!("{intent} ({})", facts.join(", ")),
    }
}

/// A budget's limits in words.
fn budget_text(budget: &Budget) -> String {
    let limits = serde_json::to_value(budget).unwrap_or_default();
    let number = |name: &str| limits[name].as_u64().unwrap_or_default();
    let mut text = format!(
        "{} rounds, {} tool calls, {} s, {} duplicate calls, {} rounds without progress",
        number("max_rounds"),
        number("max_tool_calls"),
        number("max_wall_time_ms") / 1000,
        number("max_duplicate_calls"),
        number("max_no_progress_rounds"),
    );
    for (name, label) in [
        ("max_input_tokens", "tokens in"),
        ("max_output_tokens", "tokens out"),
        ("max_total_tokens", "tokens"),
    ] {
        if let Some(tokens) = limits[name].as_u64() {
            text.push_str(&format!(", {tokens} {label}"));
        }
    }
    if let Some(per_tool) = limits["per_tool"].as_object() {
        for (tool, calls) in per_tool {
            text.push_str(&format!(", {tool} at most {calls}"));
        }
    }
    text
}

/// How a run ended, and what it spent.
fn end_text(end: &RunEnd, spent: &Spent) -> String {
    let how = match end {
        RunEnd::Answered => "answered".to_owned(),
        RunEnd::Clarify { .. } => "asks the user to clarify".to_owned(),
        RunEnd::Stopped { reason } => format!("stopped by the budget ({reason})"),
        _ => "ended".to_owned(),
    };
    format!(
        "{how} after {}; {} at the gate{}, {} tokens in, {} out, {}",
        plural(usize::try_from(spent.rounds).unwrap_or(usize::MAX), "round"),
        plural(
            usize::try_from(spent.calls).unwrap_or(usize::MAX),
            "tool call"
        ),
        if spent.duplicates > 0 {
            format!(" ({} repeated)", spent.duplicates)
        } else {
            String::new()
        },
        spent.usage.input_tokens,
        spent.usage.output_tokens,
        millis(Duration::from_millis(spent.elapsed_ms))
    )
}

/// The plan, the batches, and each call's observation, after what a person was asked about it.
fn print_report(
    out: &mut impl Write,
    calls: &[ToolCall],
    asked: &[Asked],
    report: &TurnReport,
) -> io::Result<()> {
    let unscheduled = report
        .observations()
        .iter()
        .filter(|observation| observation.batch().is_none())
        .count();
    writeln!(
        out,
        "   plan: {} -> {}{}",
        plural(calls.len(), "call"),
        plural(report.batches().len(), "batch"),
        if unscheduled > 0 {
            format!(", {unscheduled} answered without running")
        } else {
            String::new()
        }
    )?;
    for batch in report.batches() {
        writeln!(
            out,
            "   batch {} ({}): {}",
            batch.index(),
            if batch.concurrent() {
                "concurrent"
            } else {
                "alone"
            },
            report.batch_call_ids(batch).collect::<Vec<_>>().join(", ")
        )?;
    }
    for (call, observation) in calls.iter().zip(report.observations()) {
        for asked in asked
            .iter()
            .filter(|asked| asked.request.call_id == observation.call_id())
        {
            print_asked(out, asked)?;
        }
        print_observation(out, call, observation)?;
    }
    // Calls a tool made itself (`ctx.call_tool`) are asked about under their own ids.
    for asked in asked.iter().filter(|asked| {
        !report
            .observations()
            .iter()
            .any(|observation| observation.call_id() == asked.request.call_id)
    }) {
        print_asked(out, asked)?;
    }
    Ok(())
}

/// What the approver was shown (the policy's reason and the preview) and what it answered.
fn print_asked(out: &mut impl Write, asked: &Asked) -> io::Result<()> {
    let request = &asked.request;
    writeln!(
        out,
        "   ask   {} {}: {}",
        request.call_id, request.tool, request.reason
    )?;
    match &request.preview {
        Some(preview) => print_preview(out, preview)?,
        None => print_field(out, "shown:   ", &request.arguments.to_string())?,
    }
    print_field(
        out,
        "answer:  ",
        &answer_text(&asked.answer, Some(&request.arguments)),
    )
}

fn print_preview(out: &mut impl Write, preview: &Preview) -> io::Result<()> {
    let mut text = preview.title.clone();
    for part in [&preview.summary, &preview.command, &preview.diff]
        .into_iter()
        .flatten()
    {
        text.push('\n');
        text.push_str(part);
    }
    if !preview.resources.is_empty() {
        text.push_str(&format!("\ntouches {}", preview.resources.join(", ")));
    }
    print_field(out, "preview: ", &text)
}

/// An answer in words; an edit names the arguments it changed from `asked`.
fn answer_text(answer: &Answer, asked: Option<&Value>) -> String {
    match answer {
        Answer::Approve => "approve".to_owned(),
        Answer::ApproveWith(edited) => match asked {
            Some(asked) => format!("approve with edits: {}", changes(asked, edited)),
            None => format!("approve with edits: {edited}"),
        },
        Answer::Deny(reason) => format!("deny: {reason}"),
        Answer::Pending => "later (the call waits for a signed decision)".to_owned(),
    }
}

/// The fields of `edited` that differ from `asked`: `priority "urgent" -> "normal"`.
fn changes(asked: &Value, edited: &Value) -> String {
    let (Some(before), Some(after)) = (asked.as_object(), edited.as_object()) else {
        return edited.to_string();
    };
    let mut keys: Vec<&String> = before.keys().chain(after.keys()).collect();
    keys.sort();
    keys.dedup();
    let changed: Vec<String> = keys
        .into_iter()
        .filter_map(|key| match (before.get(key), after.get(key)) {
            (Some(old), Some(new)) if old != new => Some(format!("{key} {old} -> {new}")),
            (None, Some(new)) => Some(format!("{key} {new} added")),
            (Some(_), None) => Some(format!("{key} removed")),
            _ => None,
        })
        .collect();
    if changed.is_empty() {
        "none".to_owned()
    } else {
        changed.join(", ")
    }
}

fn print_observation(
    out: &mut impl Write,
    call: &ToolCall,
    observation: &Observation,
) -> io::Result<()> {
    let mut facts = vec![millis(observation.elapsed())];
    if observation.attempts() > 1 {
        facts.push(format!("{} attempts", observation.attempts()));
    }
    if observation.replayed() {
        facts.push("replayed: the first execution's result".to_owned());
    }
    if observation.truncated() {
        facts.push("truncated".to_owned());
    }
    if observation.redactions() > 0 {
        facts.push(format!("{} secrets redacted", observation.redactions()));
    }
    let id = observation.call_id();
    let tool = observation.tool();
    let facts = facts.join(", ");
    if let Some(error) = observation.error() {
        let retryable = if error.is_retryable() {
            ", retryable"
        } else {
            ""
        };
        writeln!(
            out,
            "   error {id} {tool} ({facts}) {}{retryable}",
            error.kind()
        )?;
        let arguments = match &call.arguments {
            Arguments::Json(text) => text.clone(),
            Arguments::Value(value) => value.to_string(),
        };
        print_field(out, "sent:    ", &arguments)?;
        print_field(out, "message: ", error.message())?;
        if let Some(hint) = error.hint() {
            print_field(out, "hint:    ", hint)?;
        }
        if let Some(details) = error.details() {
            print_field(out, "details: ", &details.to_string())?;
        }
        Ok(())
    } else {
        let label = if observation.is_success() {
            "ok   "
        } else {
            "other"
        };
        writeln!(out, "   {label} {id} {tool} ({facts})")?;
        for line in observation.text_for_model().lines() {
            writeln!(out, "         {line}")?;
        }
        Ok(())
    }
}

/// Writes `label` and `text` whole; the lines after the first are indented under the first.
fn print_field(out: &mut impl Write, label: &str, text: &str) -> io::Result<()> {
    let mut lines = text.lines();
    writeln!(out, "         {label}{}", lines.next().unwrap_or_default())?;
    for line in lines {
        writeln!(out, "         {:width$}{line}", "", width = label.len())?;
    }
    Ok(())
}

fn plural(count: usize, noun: &str) -> String {
    match (count, noun) {
        (1, _) => format!("1 {noun}"),
        (_, "batch") => format!("{count} batches"),
        _ => format!("{count} {noun}s"),
    }
}

/// Milliseconds with about three significant digits: most calls take microseconds
/// (`0.042 ms`), a timeout takes seconds (`2002 ms`).
fn millis(duration: Duration) -> String {
    let millis = duration.as_secs_f64() * 1000.0;
    let decimals = match millis {
        m if m < 1.0 => 3,
        m if m < 10.0 => 2,
        m if m < 100.0 => 1,
        _ => 0,
    };
    format!("{millis:.decimals$} ms")
}
