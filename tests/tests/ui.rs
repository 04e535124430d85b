//! Compile-time rules of `#[tool]` and `tools![]`.
//!
//! `tests/ui/pass/*.rs` must compile (and run); `tests/ui/fail/*.rs` must fail with the
//! committed `.stderr`. After an intended change of a message, regenerate with
//! `TRYBUILD=overwrite cargo test -p tests --test ui` and read every changed `.stderr`.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("ui/pass/*.rs");
    cases.compile_fail("ui/fail/*.rs");
}
