use tool_runtime::tool;

/// Refunds an order; only for principals with both roles.
#[tool(stateful, idempotent, roles = ["billing", "org:admin"])]
async fn refund(order_id: String) -> String {
    order_id
}

/// Closes a ticket; the list form, as `resources` takes it.
#[tool(mutates_workspace, roles("support"))]
fn close_ticket(ticket_id: u64) -> u64 {
    ticket_id
}

/// Reads an order; any principal may.
#[tool(read_only)]
fn get_order(order_id: String) -> String {
    order_id
}

fn main() {
    let spec = refund::spec();
    assert_eq!(spec.roles().collect::<Vec<_>>(), ["billing", "org:admin"]);
    assert_eq!(spec.roles().len(), 2);
    assert_eq!(spec.role_list(), ["billing", "org:admin"]);
    assert_eq!(
        serde_json::to_value(spec).expect("a spec serializes")["roles"],
        serde_json::json!(["billing", "org:admin"])
    );

    assert_eq!(
        close_ticket::spec().roles().collect::<Vec<_>>(),
        ["support"]
    );

    assert_eq!(get_order::spec().roles().len(), 0);
    assert!(get_order::spec().role_list().is_empty());
}
