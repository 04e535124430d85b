//! Two tools with one name: the registry refuses them and names both definitions.
//!
//! A binary of its own: `Registry::from_inventory::<()>()` must report this file's duplicate (the
//! deps-agnostic `#[tool]`s of any file linked with it could bring another, reported first), and
//! the message names this file's path.

use tool_runtime::core::RegistryError;
use tool_runtime::{Registry, tool};

/// Looks up an order.
#[tool(read_only, name = "lookup")]
fn lookup_order() -> u32 {
    1
}

mod customers {
    use tool_runtime::tool;

    /// Looks up a customer.
    #[tool(read_only, name = "lookup")]
    pub(super) fn lookup_customer() -> u32 {
        2
    }
}

#[test]
fn duplicate_name_is_reported_with_both_locations() {
    let error = Registry::from_inventory::<()>().err();
    let first = lookup_order::spec().location().map(|l| l.line);
    let second = customers::lookup_customer::spec()
        .location()
        .map(|l| l.line);
    let (Some(first), Some(second)) = (first, second) else {
        panic!("both tools have locations");
    };
    let Some(RegistryError::DuplicateName { name, .. }) = &error else {
        panic!("expected a duplicate name error, got {error:?}");
    };
    assert_eq!(name, "lookup");
    assert_eq!(
        error.map(|error| error.to_string()),
        Some(format!(
            "tool name `lookup` is defined twice: at tests/tests/duplicate_names.rs:{first} and at tests/tests/duplicate_names.rs:{second}; give one of them another name with #[tool(name = \"...\")]"
        ))
    );
}
