#!/usr/bin/env bash
# Real consumers of `show -json`'s plan representation read fleetform's plan
# JSON as they read Terraform's, `configuration` section included.
#
# The consumers come from PyPI, pinned, installed into their own venv
# (.test-tools/consumers-venv, beside the test venv) when missing:
#   checkov               its terraform_plan framework: custom policies (YAML
#                         attribute and connection checks, a Python provider
#                         check) and its plan parser, which takes references
#                         from `configuration...expressions`, provider
#                         settings from `provider_config` and module resources'
#                         expressions from `module_calls`;
#   terraform-compliance  BDD features, and its plan parser, which links
#                         ("mounts") resources into each other through the
#                         references of `configuration` (module variables
#                         followed through `module_calls`).
# OPA/conftest and the Go terraform-json types are not run: no OPA engine or
# Go toolchain can be installed from the registries this project reaches
# (each is said on a `skipped:` line).
#
# One configuration (written below: resources referencing each other, count,
# for_each, a variable, an output, a provider block with settings, one local
# module called twice) is planned by fleetform (embedded mode) and by
# Terraform 1.11 (`terraform` on PATH; FLEETFORM_PLAN_JSON_TERRAFORM names
# another, e.g. 0.15 from tests/terraform_0_15.sh), both through our
# provider binaries (FLEETFORM_BIN_DIR, default
# target/debug) named by a CLI configuration's dev_overrides; `show -json` of
# each saved plan goes to each consumer, and tests/plan_json_consumers.py
# compares what they make of it: the same resources, the same findings, the
# same links between resources. Without Terraform, fleetform's results are
# checked against the findings that do not depend on a Terraform version.
#
# Exit 0 when everything matched, 1 otherwise with the evidence. When no
# consumer can be installed: one `SKIP: ...` line, exit 0; a part that cannot
# run says so on a `skipped: ...` line. FLEETFORM_KEEP_PLAN_JSON_CONSUMERS=1
# keeps the work directory.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
compare="$repo/tests/plan_json_consumers.py"
bin_dir=${FLEETFORM_BIN_DIR:-$repo/target/debug}
if [ -n "${FLEETFORM_TEST_TOOLS:-}" ]; then
  venv=$(dirname "${FLEETFORM_TEST_TOOLS%/}") # FLEETFORM_TEST_TOOLS is the venv's bin/
else
  venv="$repo/.test-tools/venv"
fi
cvenv="$(dirname "$venv")/consumers-venv"
# name==version, the distribution name as importlib.metadata knows it
consumers=(checkov==3.3.30 terraform-compliance==1.16.0)
providers=(null random local sim)
declare -A src=(
  [null]=hashicorp/null [random]=hashicorp/random [local]=hashicorp/local [sim]=fleetform/sim
)

skip() { echo "SKIP: plan-json consumers: $*"; exit 0; }
fail() { echo "FAIL: $*"; exit 1; }
step() { echo "-- $*"; }

command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
for b in fleetform "${providers[@]/#/terraform-provider-}"; do
  [ -x "$bin_dir/$b" ] || fail "$bin_dir/$b is missing: run \`cargo build --workspace --bins\` first"
done

echo "skipped: OPA/conftest: no opa or conftest binary on PyPI or npm (npm's @open-policy-agent/opa is a client of an OPA server; PyPI's opa-golib-python-bindings needs Python >= 3.14)"
echo "skipped: Go terraform-json types: no Go toolchain here, and none can be installed"

# --- the consumers (installed once, under a lock) -----------------------------

installed() { # NAME==VERSION
  [ -x "$cvenv/bin/python" ] && "$cvenv/bin/python" - "${1%%==*}" "${1#*==}" <<'EOF' 2>/dev/null
import importlib.metadata as md, sys
sys.exit(0 if md.version(sys.argv[1]) == sys.argv[2] else 1)
EOF
}

install_consumers() {
  local missing=() c pip_log reason start
  for c in "${consumers[@]}"; do installed "$c" || missing+=("$c"); done
  [ "${#missing[@]}" = 0 ] && return 0
  start=$(date +%s)
  echo "installing ${missing[*]} into $cvenv (once)"
  mkdir -p "$(dirname "$cvenv")"
  if [ ! -x "$cvenv/bin/python" ]; then
    python3 -m venv "$cvenv" >/dev/null 2>&1 || { echo "cannot create the venv $cvenv"; return 1; }
  fi
  for c in "${missing[@]}"; do
    pip_log=$(mktemp)
    local pip_cmd=("$cvenv/bin/python" -m pip install --quiet --disable-pip-version-check
      --timeout 20 --retries 1 "$c")
    if command -v flock >/dev/null 2>&1; then
      pip_cmd=(flock "$(dirname "$cvenv")/.consumers-install.lock" "${pip_cmd[@]}")
    fi
    if ! timeout 600 "${pip_cmd[@]}" >"$pip_log" 2>&1; then
      reason=$(grep -E 'ERROR|error' "$pip_log" | tail -n 1)
      echo "skipped: $c: pip cannot install it${reason:+: $reason}"
    fi
    rm -f "$pip_log"
  done
  echo "install took $(($(date +%s) - start)) s; $cvenv is $(du -sh "$cvenv" | cut -f1)"
}
install_consumers || true
available=()
for c in "${consumers[@]}"; do
  if installed "$c"; then available+=("${c%%==*}"); fi
done
[ "${#available[@]}" -gt 0 ] || skip "none of ${consumers[*]} could be installed into $cvenv"
echo "consumers: ${available[*]} ($cvenv)"

# --- Terraform 1.11 (`terraform` on PATH), the reference ----------------------

# FLEETFORM_PLAN_JSON_TERRAFORM=/path/to/terraform compares with another
# Terraform (0.15, from tests/terraform_0_15.sh, lists references in an older
# form: see plan_json_consumers.py).
terraform=
if [ -n "${FLEETFORM_PLAN_JSON_TERRAFORM:-}" ]; then
  tf_out=$FLEETFORM_PLAN_JSON_TERRAFORM
elif ! command -v terraform >/dev/null 2>&1; then
  tf_out="SKIP: no terraform on PATH (Terraform 1.11 is the reference)"
elif CHECKPOINT_DISABLE=1 timeout 30 terraform version 2>/dev/null | head -n 1 | grep -q '^Terraform v1\.11\.'; then
  tf_out=$(command -v terraform)
else
  tf_out="SKIP: terraform on PATH is not 1.11: $(CHECKPOINT_DISABLE=1 timeout 30 terraform version 2>/dev/null | head -n 1)"
fi
tf_out=$(printf '%s\n' "$tf_out" | tail -n 1)
case "$tf_out" in
  SKIP:*) echo "skipped: the comparison with Terraform: ${tf_out#SKIP: }" ;;
  *)
    terraform=$tf_out
    # This build prefixes every stdout line with "o:" and always logs to stderr.
    tf_version=$(CHECKPOINT_DISABLE=1 timeout 30 "$terraform" version 2>/dev/null | sed 's/^o://' | head -n 1)
    echo "terraform: $tf_version ($terraform)"
    ;;
esac
echo "providers: $bin_dir"

# --- the configuration --------------------------------------------------------

work=$(mktemp -d "${TMPDIR:-/tmp}/fleetform-plan-json-consumers.XXXXXX")
if [ "${FLEETFORM_KEEP_PLAN_JSON_CONSUMERS:-}" = 1 ]; then
  echo "work directory (kept): $work"
else
  trap 'rm -rf "$work"' EXIT
fi
logs="$work/logs"
mkdir -p "$logs" "$work/home" "$work/config/modules/child"

cat >"$work/config/main.tf" <<'EOF'
terraform {
  required_providers {
    null   = { source = "hashicorp/null" }
    random = { source = "hashicorp/random" }
    local  = { source = "hashicorp/local" }
    sim    = { source = "fleetform/sim" }
  }
}

variable "env" {
  type        = string
  default     = "test"
  description = "the environment the objects are for"
}

provider "sim" {
  store_dir = "sim-store"
}

resource "sim_object" "app" {
  name = "${var.env}-app"
  size = 3
  tags = { env = var.env, team = "fleet" }
}

resource "random_pet" "pet" {
  for_each = toset(["blue", "green"])
  prefix   = each.key
  length   = 2
}

resource "null_resource" "marker" {
  count = 2
  triggers = {
    app   = sim_object.app.id
    pet   = random_pet.pet["blue"].id
    index = tostring(count.index)
  }
}

resource "local_file" "out" {
  filename        = "out.txt"
  content         = "app ${sim_object.app.id}"
  file_permission = "0640"
}

module "child" {
  source = "./modules/child"
  app_id = sim_object.app.id
  names  = ["x", "y"]
  label  = "child"
}

# The same module a second time: its resources have the same addresses
# within the module as the first call's; only the module path differs.
module "second" {
  source = "./modules/child"
  app_id = random_pet.pet["green"].id
  names  = ["z"]
  label  = "second"
}

output "app_id" {
  value = sim_object.app.id
}

output "child_ids" {
  value = module.child.ids
}
EOF

cat >"$work/config/modules/child/main.tf" <<'EOF'
variable "app_id" {
  type = string
}

variable "names" {
  type = list(string)
}

variable "label" {
  type = string
}

resource "null_resource" "each" {
  for_each = toset(var.names)
  triggers = {
    app  = var.app_id
    name = each.key
  }
}

# Each call's integer has its own range, so the file it feeds tells which
# module's integer a consumer linked it to.
resource "random_integer" "n" {
  min = 1
  max = length(var.names) * 10
  keepers = {
    app = var.app_id
  }
}

resource "local_file" "child" {
  filename        = "${var.label}.txt"
  content         = random_integer.n.id
  file_permission = "0600"
}

output "ids" {
  value = [for r in null_resource.each : r.id]
}
EOF

{
  echo 'provider_installation {'
  echo '  dev_overrides {'
  for p in "${providers[@]}"; do
    printf '    "%s" = "%s"\n' "${src[$p]}" "$bin_dir"
  done
  echo '  }'
  echo '  direct {}'
  echo '}'
} >"$work/cli.tfrc"

# --- the plans ----------------------------------------------------------------

# run SIDE LOG EXE ARGS...: one command in the side's directory, in an
# environment of our own; stops the script with the logs when it fails.
run() {
  local side=$1 log=$2 exe=$3 rc=0
  shift 3
  (cd "$work/$side" && timeout 120 env -u TF_LOG -u TF_LOG_PATH -u TF_DATA_DIR -u TF_WORKSPACE \
    -u TF_PLUGIN_CACHE_DIR -u TF_CLI_ARGS -u FLEETFORM_COORDINATOR -u FLEETFORM_PLUGIN_DIR \
    HOME="$work/home" TF_CLI_CONFIG_FILE="$work/cli.tfrc" CHECKPOINT_DISABLE=1 \
    TF_IN_AUTOMATION=1 TF_INPUT=0 NO_COLOR=1 "$exe" "$@") >"$logs/$log.out" 2>"$logs/$log.err" || rc=$?
  if [ "$rc" != 0 ]; then
    echo "FAIL: $side: \`${*}\` exited $rc"
    echo "---- $log: stdout (last lines)"
    sed 's/^o://' "$logs/$log.out" | grep -v '^$' | tail -n 40 || true
    echo "---- $log: stderr (errors and warnings)"
    grep -vE '^\[(TRACE|DEBUG|INFO)\]|^[0-9T:.+-]+Z? \[(TRACE|DEBUG|INFO)\]|^  ' "$logs/$log.err" | tail -n 40 || true
    exit 1
  fi
}

step "fleetform: plan -out, show -json"
cp -r "$work/config" "$work/ff"
run ff ff-plan "$bin_dir/fleetform" plan -input=false -out=tfplan
run ff ff-show "$bin_dir/fleetform" show -json tfplan
cp "$logs/ff-show.out" "$work/ff-plan.json"
tf_json=-
if [ -n "$terraform" ]; then
  step "terraform: get, plan -out, show -json"
  cp -r "$work/config" "$work/tf"
  # `get` installs the local module; `init` would look the providers up.
  run tf tf-get "$terraform" get -no-color
  run tf tf-plan "$terraform" plan -input=false -no-color -out=tfplan
  run tf tf-show "$terraform" show -json -no-color tfplan
  sed 's/^o://' "$logs/tf-show.out" >"$work/tf-plan.json"
  tf_json="$work/tf-plan.json"
fi

# --- the consumers ------------------------------------------------------------

step "the consumers on the plan JSONs"
start=$(date +%s)
status=0
TERRAFORM_VERSION="${tf_version:-}" PATH="$cvenv/bin:$PATH" "$cvenv/bin/python" "$compare" "$work/consumers" "$tf_json" "$work/ff-plan.json" \
  "${available[@]}" || status=$?
echo "consumers done in $(($(date +%s) - start)) s"
[ "$status" = 0 ] || fail "the consumers read fleetform's plan JSON differently (MISMATCH lines above; plan JSONs: FLEETFORM_KEEP_PLAN_JSON_CONSUMERS=1 keeps them)"
if [ -n "$terraform" ]; then
  echo "PASS: plan-json consumers: ${available[*]} read fleetform's plan JSON as Terraform's ($tf_version)"
else
  echo "PASS: plan-json consumers: ${available[*]} read fleetform's plan JSON as expected (no Terraform to compare with)"
fi
