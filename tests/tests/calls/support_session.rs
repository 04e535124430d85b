//! The main job's built-in transcript, its first run's turns executed one by one in virtual
//! time, without the desk's gates: each turn shows what it claims to.

use examples::support::SupportDeps;
use serde::Deserialize;
use tests::report::kinds;
use tool_runtime::{Runtime, Session, ToolCall, TurnReport};

#[derive(Deserialize)]
struct Transcript {
    session: String,
    runs: Vec<Run>,
}

#[derive(Deserialize)]
struct Run {
    turns: Vec<Turn>,
}

#[derive(Deserialize)]
struct Turn {
    calls: Vec<ToolCall>,
}

async fn run_transcript() -> Vec<TurnReport> {
    let text = include_str!("../../../examples/transcripts/support_desk.json");
    let transcript: Transcript = match serde_json::from_str(text) {
        Ok(transcript) => transcript,
        Err(error) => panic!("transcript: {error}"),
    };
    let runtime = match Runtime::builder(SupportDeps::demo()).build() {
        Ok(runtime) => runtime,
        Err(error) => panic!("runtime: {error}"),
    };
    let session = Session::new(transcript.session);
    let mut reports: Vec<TurnReport> = Vec::new();
    let Some(run) = transcript.runs.into_iter().next() else {
        panic!("the transcript has a run");
    };
    for turn in run.turns {
        let calls: Vec<ToolCall> = turn
            .calls
            .into_iter()
            .map(|mut call| {
                if let tool_runtime::Arguments::Json(text) = &mut call.arguments {
                    for observation in reports.iter().flat_map(|report| report.observations()) {
                        if let Some(artifact) = &observation.artifact() {
                            *text = text.replace(
                                &format!("$artifact_of:{}", observation.call_id()),
                                artifact,
                            );
                        }
                    }
                }
                call
            })
            .collect();
        reports.push(runtime.execute(&session, calls).await);
    }
    reports
}

#[tokio::test(start_paused = true)]
async fn the_built_in_session_shows_each_behaviour() {
    let reports = run_transcript().await;
    assert_eq!(reports.len(), 8);
    assert_eq!(
        reports[0].schedule(),
        [vec!["call_01", "call_02", "call_03"]]
    );
    assert_eq!(
        reports[1].schedule(),
        [
            vec!["call_04", "call_05"],
            vec!["call_06"],
            vec!["call_07", "call_08"]
        ]
    );
    assert_eq!(
        kinds(&reports[2]),
        [
            Some("unknown_tool"),
            Some("invalid_arguments"),
            None,
            Some("invalid_arguments"),
            Some("invalid_arguments")
        ]
    );
    assert_eq!(kinds(&reports[3]), [Some("timeout"), None]);
    assert!(reports[4].observations()[0].truncated());
    assert_eq!(kinds(&reports[5]), [None, None]);
    assert_eq!(reports[5].observations()[1].redactions(), 2);
    assert_eq!(reports[6].schedule(), [vec!["call_19"]]);
    assert!(!reports[6].batches()[0].concurrent());
    // The ticket opened again is answered from the idempotency layer.
    assert_eq!(kinds(&reports[7]), [None]);
    assert!(reports[7].observations()[0].replayed());
    assert_eq!(
        reports[7].observations()[0].content(),
        reports[1].observations()[2].content()
    );
}
