//! Lowering a catalog for each provider: a runtime of 1,000 tools (each its own name, the
//! schema of a realistic argument struct: nested struct, enum, optional fields with and
//! without defaults, a list of structs, constraints), lowered for every target warm (from the
//! runtime's cache, as every request after the first is) and each tool's first lowering,
//! next to schemars generating the same schema in the same run.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use schemars::JsonSchema;
use serde::Deserialize;
use tool_runtime::dynamic::DynamicTool;
use tool_runtime::providers::{self, Target};
use tool_runtime::{Runtime, Session};

/// How urgent a request is.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code, reason = "only the schema is used")]
enum Priority {
    /// Can wait.
    Low,
    /// The default.
    Normal,
    /// A customer is blocked.
    Urgent,
}

/// A line of an order.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code, reason = "only the schema is used")]
struct Line {
    /// The product's id.
    sku: String,
    /// How many.
    #[schemars(range(min = 1, max = 99))]
    quantity: u32,
}

/// Where to ship.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code, reason = "only the schema is used")]
struct Address {
    /// The street and number.
    street: String,
    /// The city.
    city: String,
    /// The postcode, when the country has them.
    postcode: Option<String>,
}

/// The arguments every benchmark tool takes.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code, reason = "only the schema is used")]
struct Arguments {
    /// The customer's id.
    #[schemars(length(max = 64))]
    customer_id: String,
    /// How urgent it is.
    #[serde(default)]
    priority: Option<Priority>,
    /// The lines to order.
    lines: Vec<Line>,
    /// Where to ship.
    address: Address,
    /// A note for the warehouse.
    note: Option<String>,
    /// Results per page.
    #[serde(default = "ten")]
    limit: u32,
}

fn ten() -> u32 {
    10
}

const TOOLS: usize = 1_000;

fn runtime() -> Runtime<()> {
    let schema = serde_json::to_value(schemars::schema_for!(Arguments)).unwrap_or_default();
    let mut builder = Runtime::builder(()).inventory(false);
    for index in 0..TOOLS {
        let tool = DynamicTool::builder(
            format!("tool_{index:04}"),
            "Places an order for a customer.",
            schema.clone(),
        )
        .read_only()
        .handler(|_, _| async { Ok(serde_json::Value::Null) })
        .build();
        builder = match builder.dynamic_tool(tool) {
            Ok(builder) => builder,
            Err(error) => panic!("{error}"),
        };
    }
    match builder.build() {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    }
}

fn lowering(c: &mut Criterion) {
    let runtime = runtime();
    let session = Session::new("bench");
    let mut group = c.benchmark_group("lowering_1000_tools");
    group.sample_size(20);
    for &target in Target::ALL {
        // The first call lowers and caches every tool; the timed ones read the cache.
        if let Err(error) = runtime.lowered_catalog(&session, target) {
            panic!("{target}: {error}");
        }
        group.bench_function(format!("warm: {target}"), |b| {
            b.iter(|| black_box(runtime.lowered_catalog(&session, target)));
        });
    }
    group.finish();

    let mut group = c.benchmark_group("first_lowering_per_tool");
    let spec = runtime.catalog(&session)[0].clone();
    group.bench_function("baseline: schemars::schema_for! of the arguments", |b| {
        b.iter(|| black_box(serde_json::to_value(schemars::schema_for!(Arguments))));
    });
    for &target in Target::ALL {
        group.bench_function(format!("lower: {target}"), |b| {
            b.iter(|| black_box(providers::lower(black_box(&spec), target)));
        });
    }
    group.finish();
}

criterion_group!(benches, lowering);
criterion_main!(benches);
