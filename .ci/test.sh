#!/usr/bin/env bash
# The whole test suite: formatting, lints, docs, then every test of the workspace
# (unit, integration, trybuild UI, doc tests). The README's test command runs this file,
# and so does CI (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

# A full run builds everything once: incremental caches would only double the target
# directory's size. A developer's own cargo commands keep their incremental builds.
export CARGO_INCREMENTAL=0

step() { printf '\n== %s\n' "$*"; }

step "cargo fmt --all --check"
cargo fmt --all --check

step "cargo clippy --workspace --all-targets --all-features -- -D warnings"
cargo clippy --workspace --all-targets --all-features -- -D warnings

step "cargo doc --workspace --no-deps (warnings denied)"
RUSTDOCFLAGS=-Dwarnings cargo doc --workspace --no-deps --quiet

step "cargo test --workspace"
cargo test --workspace
