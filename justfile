# fleetform recipes. `just --list` shows them.

venv := ".test-tools/venv"
run := ".fleetform-dev"

# Run every test (installs nats-server and moto if missing).
test *args:
    tests/run.sh {{args}}

# The long chaos suite: 3 runs on 2,000 instances under coordinator, worker,
# NATS and object-store faults (about 2 minutes here); prints a line per run.
chaos:
    tests/run.sh --test chaos_long --run-ignored ignored-only --no-capture

# Build everything (CLI, coordinator, worker, providers).
build:
    cargo build --workspace --bins

# Start the whole local cluster from the built binaries: 3 NATS nodes
# (JetStream, 3 replicas), moto S3, an active and a standby coordinator
# (live view on http://127.0.0.1:7480/), 3 workers; pid files and logs in
# .fleetform-dev/ (deploy/local/up.sh says how to use it).
up: build
    deploy/local/up.sh

# Stop the local cluster started by `just up`, by its pid files.
down:
    deploy/local/down.sh

# The benchmark (bench/bench.py): fleetform beside Terraform 1.11 (the
# `terraform` on PATH; its rows say SKIP without it) on the same
# configurations and providers, release build; `just bench quick`
# runs the short form (1,000 and 10,000 instances, 2 shapes).
bench *mode:
    cargo build --release --workspace --bins
    bench/bench.py {{ if mode == "quick" { "--quick" } else { "" } }}

# Apply the quickstart in embedded mode, show it, destroy it.
demo: build
    target/debug/fleetform -chdir=examples/quickstart apply -auto-approve
    target/debug/fleetform -chdir=examples/quickstart state list
    target/debug/fleetform -chdir=examples/quickstart destroy -auto-approve
