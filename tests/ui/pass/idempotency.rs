use tool_runtime::tool;

/// Starts a costly report: a read, but each start is kept once.
#[tool(read_only, idempotency = "on")]
async fn start_report(month: String) -> String {
    month
}

/// Charges through a backend that should see each charge once, though repeating is harmless.
#[tool(stateful, idempotent, idempotency = "on")]
async fn charge(order_id: String) -> String {
    order_id
}

/// Sets a flag: a write that is safe to repeat.
#[tool(mutates_workspace, idempotency = "off")]
fn set_flag(name: String, value: bool) -> bool {
    let _ = name;
    value
}

/// Refunds an order: the default rule decides.
#[tool(stateful)]
async fn refund(order_id: String) -> String {
    order_id
}

fn main() {
    assert_eq!(start_report::spec().idempotency(), Some(true));
    assert_eq!(charge::spec().idempotency(), Some(true));
    assert_eq!(set_flag::spec().idempotency(), Some(false));
    assert_eq!(refund::spec().idempotency(), None);

    let serialized = |spec| serde_json::to_value(spec).expect("a spec serializes");
    assert_eq!(
        serialized(set_flag::spec())["idempotency"],
        serde_json::json!(false)
    );
    assert_eq!(
        serialized(start_report::spec())["idempotency"],
        serde_json::json!(true)
    );
    assert!(serialized(refund::spec()).get("idempotency").is_none());
}
