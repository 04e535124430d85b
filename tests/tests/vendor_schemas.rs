//! The providers' own code accepts the schemas the support desk's catalog is lowered to.
//!
//! Every tool is lowered for every target and the results go to `tests/vendor/check_schemas.py`,
//! which runs OpenAI's and openai-agents' strict normalisers, anthropic's `transform_schema`,
//! google-genai's `Schema` model and JSON Schema 2020-12 meta-validation on them (the versions
//! pinned in `tests/vendor/requirements.txt`). The script runs on the Python that
//! `VENDOR_PYTHON` names, the virtual environment `.ci/test.sh` makes; without it these tests
//! fail rather than pass unchecked.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use examples::support::SupportDeps;
use serde_json::{Value, json};
use tool_runtime::providers::{Target, lower};
use tool_runtime::{Runtime, Session};

/// The checking script, beside this crate's manifest.
fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("vendor/check_schemas.py")
}

/// The Python with the providers' packages; a relative path is read from the workspace root,
/// where `.ci/test.sh` runs.
fn vendor_python() -> PathBuf {
    let Some(python) = std::env::var_os("VENDOR_PYTHON") else {
        panic!(
            "VENDOR_PYTHON is not set: run `bash .ci/test.sh`, which installs the providers' \
             Python packages into target/vendor-venv and sets it, or set it to that \
             environment's python"
        );
    };
    let python = PathBuf::from(python);
    if python.is_absolute() {
        python
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(python)
    }
}

/// Runs the script on `python` with `args`, `input` on its standard input.
fn run_script(python: &Path, args: &[&str], input: &[u8]) -> Output {
    let mut child = match Command::new(python)
        .arg(script())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(error) => panic!(
            "cannot start VENDOR_PYTHON={}: {error}; run `bash .ci/test.sh` to make it",
            python.display()
        ),
    };
    if let Some(mut stdin) = child.stdin.take()
        && let Err(error) = stdin.write_all(input)
    {
        panic!("writing to check_schemas.py: {error}");
    }
    match child.wait_with_output() {
        Ok(output) => output,
        Err(error) => panic!("waiting for check_schemas.py: {error}"),
    }
}

/// What the script printed, as JSON; the panic names its exit status and standard error.
fn report(output: &Output) -> Value {
    match serde_json::from_slice(&output.stdout) {
        Ok(report) => report,
        Err(error) => panic!(
            "check_schemas.py printed no JSON report ({error}); {}, stderr:\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ),
    }
}

#[test]
fn every_check_fails_on_a_schema_made_to_fail_it() {
    let output = run_script(&vendor_python(), &["--self-test"], b"");
    let report = report(&output);
    let cases = report["cases"].as_u64().unwrap_or(0);
    assert!(cases > 0, "the self-test ran no case: {report:#}");
    assert!(
        report["problems"] == json!([]),
        "the self-test's problems: {report:#}"
    );
    assert!(
        output.status.success(),
        "self-test: {}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_providers_code_accepts_every_lowered_schema() {
    // Before any lowering: without the packages nothing here can be checked.
    let python = vendor_python();
    let runtime = match Runtime::builder(SupportDeps::demo()).build() {
        Ok(runtime) => runtime,
        Err(error) => panic!("runtime: {error}"),
    };
    let catalog = runtime.catalog(&Session::new("s"));
    assert!(!catalog.is_empty(), "the support desk's catalog is empty");

    let mut exports = Vec::new();
    // A strict target may refuse a schema it cannot express (the error names the fix); those
    // are shown beside a failure, not checked here.
    let mut refused = Vec::new();
    for spec in &catalog {
        for &target in Target::ALL {
            let lowered = match lower(spec, target) {
                Ok(lowered) => lowered,
                Err(error) => {
                    // These targets take any JSON Schema with an object root.
                    let permissive =
                        matches!(target, Target::Anthropic | Target::Gemini | Target::Mcp);
                    assert!(!permissive, "{error}");
                    refused.push(error.to_string());
                    continue;
                }
            };
            let Some(schema) = lowered.parameters else {
                assert!(
                    matches!(target, Target::Gemini | Target::GeminiParameters),
                    "`{}` lowered for {target} has no parameters schema",
                    spec.name()
                );
                continue;
            };
            exports
                .push(json!({ "tool": spec.name(), "target": target.as_str(), "schema": schema }));
        }
    }
    // Anthropic and MCP always have a schema, so each tool sent at least two.
    assert!(
        exports.len() >= 2 * catalog.len(),
        "{} exports",
        exports.len()
    );

    let input = json!({ "exports": exports }).to_string();
    let output = run_script(&python, &[], input.as_bytes());
    let report = report(&output);
    assert!(
        report["failures"] == json!([]),
        "the providers' code refuses lowered schemas: {report:#}\n(refused by lower(): {refused:#?})"
    );
    assert!(
        output.status.success(),
        "check_schemas.py: {}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The schema zoo's lowerings (kept current by `tool-runtime/tests/lowering_zoo.rs`, which
/// fails when one differs from what `lower` gives): none crashes or is changed by the
/// providers' code.
#[test]
fn the_providers_code_accepts_every_lowering_of_the_schema_zoo() {
    let python = vendor_python();
    let zoo = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tool-runtime/tests/schema_zoo"
    );
    let entries = match std::fs::read_dir(zoo) {
        Ok(entries) => entries,
        Err(error) => panic!("{zoo}: {error}"),
    };
    let mut exports = Vec::new();
    let mut cases = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|extension| extension.to_str()) != Some("json") {
            continue;
        }
        let case: Value = match std::fs::read_to_string(&path)
            .map_err(|error| error.to_string())
            .and_then(|text| serde_json::from_str(&text).map_err(|error| error.to_string()))
        {
            Ok(case) => case,
            Err(error) => panic!("{}: {error}", path.display()),
        };
        cases += 1;
        let tool = path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .unwrap_or("zoo")
            .to_owned();
        for &target in Target::ALL {
            // Gemini's tools without parameters have none (`null`).
            if let Some(schema) = case
                .pointer(&format!("/{}/parameters", target.as_str()))
                .filter(|schema| !schema.is_null())
            {
                exports.push(json!({ "tool": tool, "target": target.as_str(), "schema": schema }));
            }
        }
    }
    assert!(cases >= 15, "the zoo has {cases} cases");
    let output = run_script(
        &python,
        &[],
        json!({ "exports": exports }).to_string().as_bytes(),
    );
    let report = report(&output);
    assert!(
        report["failures"] == json!([]),
        "the providers' code refuses lowerings of the zoo: {report:#}"
    );
    assert!(
        output.status.success(),
        "check_schemas.py: {}",
        output.status
    );
}
