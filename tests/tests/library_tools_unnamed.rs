//! Why the line is needed: a binary that depends on a library of tools but never names it
//! does not link it, and the library's `#[tool]`s are not collected.
//!
//! A binary of its own: which crates the binary links is what it tests; linked with a file that
//! names `tool_library`, the library's tools would be collected.

use tool_runtime::Runtime;

#[test]
fn an_unnamed_library_crate_is_not_linked() {
    let runtime = match Runtime::builder(()).build() {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    };
    let names: Vec<&str> = runtime.registry().names().collect();
    assert_eq!(names, ["read_artifact"]);
}
