//! The catalog a runtime builds: which tools it holds, in which order, with which schema bytes.
//!
//! A binary of its own: the registries `Registry::from_inventory` builds are asserted whole (the
//! deps-agnostic `#[tool]`s of any file linked with it would join them), and a message names this
//! file's path.

use expect_test::expect;
use tool_runtime::{Registry, RunContext, tool, tools};

/// Deps of the desk under test.
pub struct DeskDeps;
/// Deps of another application.
pub struct OtherDeps;

/// Zebra crossing status.
#[tool(read_only)]
fn zebra(_: RunContext<DeskDeps>) -> bool {
    true
}

/// Apple count.
#[tool(read_only)]
fn apple(
    /// How many apples, at most.
    #[default = 3]
    max: u8,
) -> u8 {
    max
}

/// Mango stock, for another application.
#[tool(read_only)]
fn mango(_: RunContext<OtherDeps>) -> u32 {
    7
}

/// Kiwi weight.
#[tool]
fn kiwi(
    /// Grams.
    grams: Option<u16>,
    /// A label for the scale.
    label: String,
) -> String {
    format!("{label}: {grams:?}")
}

fn names(registry: &Registry) -> Vec<&str> {
    registry.names().collect()
}

#[test]
fn inventory_catalog_is_sorted_and_filtered_by_deps() {
    let Ok(desk) = Registry::from_inventory::<DeskDeps>() else {
        panic!("desk registry");
    };
    assert_eq!(names(&desk), ["apple", "kiwi", "zebra"]);
    let Ok(other) = Registry::from_inventory::<OtherDeps>() else {
        panic!("other registry");
    };
    assert_eq!(names(&other), ["apple", "kiwi", "mango"]);
}

#[test]
fn explicit_lists_are_sorted_and_checked_for_deps() {
    let list = tools![zebra, kiwi, apple];
    let Ok(desk) = Registry::from_tools::<DeskDeps>(Vec::from(list)) else {
        panic!("desk registry");
    };
    assert_eq!(names(&desk), ["apple", "kiwi", "zebra"]);
    let mismatch = Registry::from_tools::<DeskDeps>(Vec::from(tools![apple, mango]));
    let message = mismatch.err().map(|error| error.to_string());
    let expected = format!(
        "tool `mango` (at tests/tests/catalog.rs:{}) takes a context with deps `{}`, but this registry is for deps `{}`",
        mango::spec().location().map_or(0, |location| location.line),
        std::any::type_name::<OtherDeps>(),
        std::any::type_name::<DeskDeps>(),
    );
    assert_eq!(message, Some(expected));
}

#[test]
fn schema_bytes_are_stable() {
    expect![[r#"{"type":"object","additionalProperties":false,"properties":{"grams":{"type":["integer","null"],"format":"uint16","minimum":0,"maximum":65535,"description":"Grams."},"label":{"type":"string","description":"A label for the scale."}},"required":["label"]}"#]]
    .assert_eq(&kiwi::spec().input_schema().to_string());
    expect![[r#"{"type":"object","additionalProperties":false,"properties":{"max":{"type":"integer","format":"uint8","minimum":0,"maximum":255,"description":"How many apples, at most.","default":3}}}"#]]
    .assert_eq(&apple::spec().input_schema().to_string());
    expect![[r#"{"type":"object","additionalProperties":false,"properties":{}}"#]]
        .assert_eq(&zebra::spec().input_schema().to_string());
}

#[test]
fn a_tool_that_declares_nothing_is_serial() {
    let execution = kiwi::spec().execution();
    assert!(execution.stateful_action);
    assert!(!execution.parallel_safe());
    assert!(apple::spec().execution().parallel_safe());
}
