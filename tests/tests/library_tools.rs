//! The `#[tool]`s of a library crate reach a runtime when the binary names the crate, with one
//! line, even though it never calls into it.
//!
//! A binary of its own: which tools the binary links is what it tests; the runtime built from the
//! inventory must hold the library's tool and no other file's.

use tool_library as _;
use tool_runtime::{Runtime, Session, ToolCall};

#[tokio::test]
async fn a_named_library_crate_keeps_its_tools() {
    let runtime = match Runtime::builder(()).build() {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    };
    let names: Vec<&str> = runtime.registry().names().collect();
    assert_eq!(names, ["celsius_to_fahrenheit", "read_artifact"]);
    let report = runtime
        .execute(
            &Session::new("s"),
            [ToolCall::new(
                "c",
                "celsius_to_fahrenheit",
                r#"{"celsius": 100}"#,
            )],
        )
        .await;
    assert_eq!(report.observations()[0].content(), Some("212.0"));
}
