#!/usr/bin/env python3
"""Generates the compile-cost measurement described in compile_cost.md.

    python3 tool-macros/tests/gen_compile_cost.py /tmp/compile_cost [N]
    python3 tool-macros/tests/gen_compile_cost.py --measure /tmp/compile_cost [RUNS]

writes a small workspace with two library crates of N (default 200) tools each:

- `with_macro`: every tool a `#[tool]` function;
- `baseline`: the same functions, each with a hand-written argument struct
  (`#[derive(Deserialize, JsonSchema)]`) and a plain function taking it.

`--measure` builds both, then times RUNS (default 9) incremental rebuilds of each after
touching its `lib.rs` (debug profile, `cargo build -p <crate>`), alternating the two crates
so that load on the machine weighs on both alike, and prints the median wall time and the
median CPU time (user + system of cargo and rustc) of each and their ratios.

Both depend on tool-core by path (the checkout this script lives in). The functions have the
shapes real tools have: two to four parameters among `String`, `Option<u32>`, a small enum
and `Vec<String>`, doc comments on the function and each parameter, a third taking
`RunContext<Deps>`, some sync, returning `Result<String, ToolError>`, a plain `String` or a
`Serialize` struct.
"""

import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(HERE))

PARAMS = [
    ("order_id", "String", "The order id, for example \"A-1024\"."),
    ("limit", "Option<u32>", "How many results at most; all when omitted."),
    ("priority", "Priority", "How urgent the request is."),
    ("tags", "Vec<String>", "Tags to filter by; none filters nothing."),
    ("note", "String", "A note for the log."),
    ("page", "Option<u32>", "The page to read, from 1."),
]

RETURNS = [
    ("Result<String, ToolError>", "Ok(format!(\"{summary}\"))"),
    ("String", "format!(\"{summary}\")"),
    ("Result<Summary, ToolError>", "Ok(Summary { text: format!(\"{summary}\"), count: COUNT })"),
]


def shape(i):
    """The parameters, return type, context and asyncness of tool `i`."""
    count = 2 + i % 3
    start = i % len(PARAMS)
    params = [PARAMS[(start + k) % len(PARAMS)] for k in range(count)]
    # Distinct names: a name seen twice gets a suffix.
    seen = {}
    named = []
    for name, ty, doc in params:
        seen[name] = seen.get(name, 0) + 1
        named.append((name if seen[name] == 1 else f"{name}_{seen[name]}", ty, doc))
    ret, body = RETURNS[i % len(RETURNS)]
    context = i % 3 == 0
    is_async = i % 5 != 4
    return named, ret, body, context, is_async


def summary(params):
    return " ".join(f"{name}={{{name}:?}}" for name, _, _ in params)


COMMON = """\
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::{RunContext, ToolError};

/// The deps the tools read.
pub struct Deps {
    /// Where the tools run.
    pub region: String,
}

/// How urgent a request is.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// Whenever.
    Low,
    /// Today.
    Normal,
    /// Now.
    High,
}

/// What some tools return.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Summary {
    /// The summary.
    pub text: String,
    /// How many things it counts.
    pub count: u32,
}
"""


def with_macro(n):
    out = ["//! N `#[tool]` functions.\n", COMMON, "use tool_core::tool;\n"]
    for i in range(n):
        params, ret, body, context, is_async = shape(i)
        body = body.replace("{summary}", summary(params)).replace("COUNT", str(i))
        keys = "read_only" if i % 2 == 0 else "mutates_workspace, timeout = \"5s\""
        if not is_async:
            keys = "read_only" if i % 2 == 0 else "mutates_workspace"
        out.append(f"/// Tool number {i}: looks something up and says what it found.\n")
        out.append("///\n/// Use it when the user asks about it.\n")
        out.append(f"#[tool({keys})]\n")
        asyncness = "async " if is_async else ""
        out.append(f"pub {asyncness}fn tool_{i:03}(\n")
        if context:
            out.append("    ctx: RunContext<Deps>,\n")
        for name, ty, doc in params:
            out.append(f"    /// {doc}\n    {name}: {ty},\n")
        out.append(f") -> {ret} {{\n")
        if context:
            out.append("    let _ = &ctx.deps().region;\n")
        out.append(f"    {body}\n}}\n\n")
    return "".join(out)


def baseline(n):
    out = ["//! N functions with hand-written argument structs.\n", COMMON]
    for i in range(n):
        params, ret, body, context, is_async = shape(i)
        body = body.replace("{summary}", summary(params)).replace("COUNT", str(i))
        out.append(f"/// The arguments of tool {i}.\n")
        out.append("#[derive(Deserialize, JsonSchema)]\n#[serde(deny_unknown_fields)]\n")
        out.append(f"pub struct Tool{i:03}Args {{\n")
        for name, ty, doc in params:
            out.append(f"    /// {doc}\n    pub {name}: {ty},\n")
        out.append("}\n\n")
        out.append(f"/// Tool number {i}: looks something up and says what it found.\n")
        out.append("///\n/// Use it when the user asks about it.\n")
        asyncness = "async " if is_async else ""
        ctx = "ctx: RunContext<Deps>, " if context else ""
        out.append(f"pub {asyncness}fn tool_{i:03}({ctx}args: Tool{i:03}Args) -> {ret} {{\n")
        if context:
            out.append("    let _ = &ctx.deps().region;\n")
        names = ", ".join(name for name, _, _ in params)
        out.append(f"    let Tool{i:03}Args {{ {names} }} = args;\n")
        out.append(f"    {body}\n}}\n\n")
    return "".join(out)


def manifest(name):
    return f"""[package]
name = "{name}"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
tool-core = {{ path = "{CHECKOUT}/tool-core" }}
serde = {{ version = "1", features = ["derive"] }}
schemars = "1"
"""


def rebuild(root, crate):
    """One incremental rebuild of `crate` after touching its lib.rs: (wall, cpu) seconds."""
    os.utime(os.path.join(root, crate, "src", "lib.rs"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(["cargo", "build", "--offline", "-q", "-p", crate], cwd=root, check=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(root, runs):
    crates = ["with_macro", "baseline"]
    subprocess.run(["cargo", "build", "--offline", "-q"], cwd=root, check=True)
    for crate in crates:  # warm-up
        rebuild(root, crate)
    times = {crate: [] for crate in crates}
    for _ in range(runs):
        for crate in crates:
            times[crate].append(rebuild(root, crate))
    medians = {}
    for crate in crates:
        wall = statistics.median(t[0] for t in times[crate])
        cpu = statistics.median(t[1] for t in times[crate])
        medians[crate] = (wall, cpu)
        walls = " ".join(f"{t[0]:.2f}" for t in times[crate])
        print(f"{crate:>10}: wall {wall:.2f} s, cpu {cpu:.2f} s  (walls: {walls})")
    (wall_a, cpu_a), (wall_b, cpu_b) = medians["with_macro"], medians["baseline"]
    print(f"     ratio: wall {wall_a / wall_b:.2f}x, cpu {cpu_a / cpu_b:.2f}x")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--measure":
        root = sys.argv[2] if len(sys.argv) > 2 else "/tmp/compile_cost"
        runs = int(sys.argv[3]) if len(sys.argv) > 3 else 9
        measure(root, runs)
        return
    root = sys.argv[1] if len(sys.argv) > 1 else "/tmp/compile_cost"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "Cargo.toml"), "w") as f:
        f.write('[workspace]\nresolver = "3"\nmembers = ["with_macro", "baseline"]\n')
    # The checkout's lock file, so both crates build against the versions the workspace uses.
    shutil.copy(os.path.join(CHECKOUT, "Cargo.lock"), os.path.join(root, "Cargo.lock"))
    for name, text in [("with_macro", with_macro(n)), ("baseline", baseline(n))]:
        src = os.path.join(root, name, "src")
        os.makedirs(src, exist_ok=True)
        with open(os.path.join(root, name, "Cargo.toml"), "w") as f:
            f.write(manifest(name))
        with open(os.path.join(src, "lib.rs"), "w") as f:
            f.write(text.replace("N ", f"{n} ", 1))


if __name__ == "__main__":
    main()
