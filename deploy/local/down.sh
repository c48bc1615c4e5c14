#!/usr/bin/env bash
# Stops the fleet deploy/local/up.sh started, or the one README.md's
# "Running it distributed" started (FLEETFORM_DEV_DIR=$FLEET_DIR), by its
# pid files (nothing else is touched): workers first, then coordinators
# (SIGINT, their clean stop), then S3 and NATS; a process still there
# after 10 s is killed.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=${FLEETFORM_DEV_DIR:-$repo/.fleetform-dev}
pids=$dir/pids
[ -d "$pids" ] || { echo "down.sh: nothing to stop ($pids does not exist)"; exit 0; }

# running PID: the process is there and not a zombie (an exited child
# that its new parent has not reaped yet counts as stopped).
running() {
  [ -r "/proc/$1/stat" ] && ! grep -q ') Z ' "/proc/$1/stat" 2>/dev/null
}

# stop SIGNAL NAME...: signals every process of pids/NAME.pid that is
# still the one up.sh started (a reused pid is left alone), waits for
# them together, kills what is left after 10 s, removes the pid files.
stop() {
  local sig=$1 name file pid
  shift
  local waiting=()
  for name in "$@"; do
    file=$pids/$name.pid
    [ -f "$file" ] || continue
    pid=$(cat "$file")
    if [ -n "$pid" ] && running "$pid" && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qE 'nats-server|moto_server|fleetform-'; then
      kill "-$sig" "$pid" 2>/dev/null && waiting+=("$name:$pid")
    fi
  done
  for _ in $(seq 100); do
    local left=()
    for w in "${waiting[@]}"; do running "${w#*:}" && left+=("$w"); done
    waiting=("${left[@]}")
    [ ${#waiting[@]} = 0 ] && break
    sleep 0.1
  done
  for w in "${waiting[@]}"; do
    echo "down.sh: ${w%%:*} (pid ${w#*:}) did not stop within 10 s: killed" >&2
    kill -KILL "${w#*:}" 2>/dev/null
  done
  for name in "$@"; do rm -f "$pids/$name.pid"; done
}

stop INT worker-1 worker-2 worker-3
stop INT coordinator coordinator-1 coordinator-2
stop TERM s3 nats nats-1 nats-2 nats-3
# Anything else up.sh may have been given a pid file for.
for f in "$pids"/*.pid; do
  [ -e "$f" ] || continue
  stop TERM "$(basename "$f" .pid)"
done
echo "fleet in $dir stopped"
