#!/usr/bin/env bash
# The whole test suite: formatting, lints, docs, then every test of the workspace
# (unit, integration, trybuild UI, doc tests). The README's test command runs this file,
# and so does CI (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

# A full run builds everything once and reads no debugger output, so it keeps neither
# incremental caches nor debug info: the target directory stays near 2 GiB (a CI machine's
# disk is small). Panics still name their file and line. The variables reach the cargo that
# trybuild starts, whose project does not inherit the workspace's profile. A developer's own
# cargo commands keep the workspace's settings.
export CARGO_INCREMENTAL=0
export CARGO_PROFILE_DEV_DEBUG=0

step() { printf '\n== %s\n' "$*"; }

step "cargo fmt --all --check"
cargo fmt --all --check

step "cargo clippy --workspace --all-targets --all-features -- -D warnings"
cargo clippy --workspace --all-targets --all-features -- -D warnings

step "cargo doc --workspace --no-deps (warnings denied)"
RUSTDOCFLAGS=-Dwarnings cargo doc --workspace --no-deps --quiet

step "cargo test --workspace"
cargo test --workspace
