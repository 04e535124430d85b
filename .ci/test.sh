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

# The Redis store's tests (tests/tests/exactly_once/redis_store.rs) start their own redis-server on a free
# loopback port; a machine without one gets Debian's package, quietly (its log is shown only if
# the install fails). Nothing is started here.
if ! command -v redis-server >/dev/null 2>&1; then
    step "apt-get install redis-server (the Redis store's tests start their own)"
    as_root=()
    if [ "$(id -u)" -ne 0 ]; then as_root=(sudo -n); fi
    apt_log="$(mktemp)"
    if ! "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$apt_log" 2>&1; then
        echo "apt-get update failed; installing from the package lists at hand"
    fi
    if ! "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends redis-server >>"$apt_log" 2>&1; then
        cat "$apt_log"
        echo "could not install redis-server: install it (apt-get install redis-server) and re-run"
        exit 1
    fi
    rm -f "$apt_log"
    redis-server --version
fi

step "cargo fmt --all --check"
cargo fmt --all --check

step "cargo clippy --workspace --all-targets --all-features -- -D warnings"
cargo clippy --workspace --all-targets --all-features -- -D warnings

step "cargo doc --workspace --no-deps (warnings denied)"
RUSTDOCFLAGS=-Dwarnings cargo doc --workspace --no-deps --quiet

step "cargo test --workspace"
cargo test --workspace
