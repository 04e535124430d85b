//! Generated code must not depend on what the user's scope calls `Result`, `Option`, `Box`,
//! `String`, `Vec` or `serde`, and no name the user picks for a tool or a parameter may
//! collide with one the expansion introduces: a parameter named like its tool, tools named
//! `call` or `args` (with and without a context), and parameters named like every local,
//! argument and item of the expansion.
#![allow(dead_code, non_camel_case_types)]

mod serde {}

struct Result;
struct Option;
struct Box;
struct String;
struct Vec;
struct ToolError;

/// Counts to a limit.
#[tool_runtime::tool(read_only)]
async fn count(
    ctx: core::option::Option<&tool_runtime::RunContext>,
    /// The limit.
    #[default = 3]
    limit: u32,
    /// A label.
    label: std::string::String,
) -> core::result::Result<std::vec::Vec<u32>, tool_runtime::ToolError> {
    let _ = (ctx, label);
    core::result::Result::Ok((0..limit).collect())
}

/// Runs a query: the parameter is named like the tool.
#[tool_runtime::tool(read_only)]
async fn query(query: std::string::String) -> std::string::String {
    query
}

/// A sync tool whose parameter is named like it.
#[tool_runtime::tool(read_only)]
fn lookup(lookup: u32) -> u32 {
    lookup + 1
}

/// A tool named like `prepare`'s call context, with a parameter named like its arguments.
#[tool_runtime::tool(read_only)]
fn call(call: u32, args: u32) -> u32 {
    call * 10 + args
}

/// A tool named like `prepare`'s arguments, with a parameter named like its call context.
#[tool_runtime::tool(read_only)]
async fn args(args: u32, call: u32) -> u32 {
    args * 10 + call
}

mod with_context {
    use tool_runtime::RunContext;

    pub struct Deps {
        pub base: u32,
    }

    /// `call` again, taking its context.
    #[tool_runtime::tool(read_only)]
    pub fn call(ctx: &RunContext<Deps>, call: u32) -> u32 {
        ctx.deps().base + call
    }

    /// `args` again, taking its context.
    #[tool_runtime::tool(read_only)]
    pub async fn args(args: u32, ctx: RunContext<Deps>) -> u32 {
        ctx.deps().base + args
    }

    /// Parameters named like everything the expansion uses inside.
    #[allow(clippy::too_many_arguments)]
    #[tool_runtime::tool(read_only)]
    pub async fn internals(
        context: std::sync::Arc<RunContext<Deps>>,
        spec: u32,
        tool: u32,
        future: u32,
        deps: u32,
        cx: u32,
        self_: u32,
        __args: u32,
        __call: u32,
        __parsed: u32,
        __context: u32,
        __result: u32,
        __value: u32,
        __error: u32,
        __arg0: u32,
        __self: u32,
        prepare: u32,
        finish: u32,
        internals: u32,
    ) -> u32 {
        context.deps().base
            + spec
            + tool
            + future
            + deps
            + cx
            + self_
            + __args
            + __call
            + __parsed
            + __context
            + __result
            + __value
            + __error
            + __arg0
            + __self
            + prepare
            + finish
            + internals
    }

    /// A blocking tool with the same names.
    #[tool_runtime::tool(read_only, blocking)]
    pub fn blocking_internals(
        ctx: &RunContext<Deps>,
        blocking_internals: u32,
        __context: u32,
        __arg0: u32,
        body: u32,
    ) -> u32 {
        ctx.deps().base + blocking_internals + __context + __arg0 + body
    }
}

/// Runs `tool` with `args` (JSON) and returns the output's JSON.
async fn run(tool: &dyn tool_runtime::core::Tool, args: &str) -> std::string::String {
    let deps = std::sync::Arc::new(with_context::Deps { base: 1000 });
    let call = tool_runtime::core::CallContext::new(deps, "session", "call-1", tool.spec().name());
    match tool.prepare(args.into(), &call) {
        core::result::Result::Ok(future) => match future.await {
            core::result::Result::Ok(output) => output.json().to_owned(),
            core::result::Result::Err(error) => panic!("{}", error.message()),
        },
        core::result::Result::Err(error) => panic!("{}", error.message()),
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        assert_eq!(run(count::tool(), r#"{"label":"x"}"#).await, "[0,1,2]");
        assert_eq!(run(query::tool(), r#"{"query":"q"}"#).await, r#""q""#);
        assert_eq!(run(lookup::tool(), r#"{"lookup":1}"#).await, "2");
        assert_eq!(run(call::tool(), r#"{"call":1,"args":2}"#).await, "12");
        assert_eq!(run(args::tool(), r#"{"args":1,"call":2}"#).await, "12");
        assert_eq!(run(with_context::call::tool(), r#"{"call":1}"#).await, "1001");
        assert_eq!(run(with_context::args::tool(), r#"{"args":2}"#).await, "1002");
        let names = [
            "spec", "tool", "future", "deps", "cx", "self_", "__args", "__call", "__parsed",
            "__context", "__result", "__value", "__error", "__arg0", "__self", "prepare",
            "finish", "internals",
        ];
        let args: std::vec::Vec<std::string::String> = names
            .iter()
            .map(|name| format!(r#""{name}":1"#))
            .collect();
        let args = format!("{{{}}}", args.join(","));
        assert_eq!(run(with_context::internals::tool(), &args).await, "1018");
        assert_eq!(
            run(
                with_context::blocking_internals::tool(),
                r#"{"blocking_internals":1,"__context":1,"__arg0":1,"body":1}"#
            )
            .await,
            "1004"
        );
    });
    // The functions stay plain functions.
    assert_eq!(call(1, 2), 12);
    assert_eq!(lookup(1), 2);
}
