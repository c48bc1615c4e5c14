#!/usr/bin/env bash
# The cost of modules: `fleetform plan` of N null_resource instances (default
# 5,000) written flat, and the same instances spread over M module instances
# (default 50, count on the module call, count inside), in embedded mode.
# Prints the wall time and peak RSS of each (best of RUNS, default 3) and the
# ratio. Uses the fleetform binary of FLEETFORM_BIN_DIR (default
# target/release if built, else target/debug): build it first.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
n=${N:-5000}
m=${M:-50}
runs=${RUNS:-3}
bin_dir=${FLEETFORM_BIN_DIR:-}
if [ -z "$bin_dir" ]; then
  if [ -x "$repo/target/release/fleetform" ]; then bin_dir=$repo/target/release; else bin_dir=$repo/target/debug; fi
fi
ff=$bin_dir/fleetform
[ -x "$ff" ] || { echo "build fleetform first (cargo build --workspace --bins)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/flat" "$work/modules/m"
cat > "$work/flat/main.tf" <<TF
resource "null_resource" "x" {
  count = $n
  triggers = { i = count.index }
}
TF
cat > "$work/modules/main.tf" <<TF
module "m" {
  source = "./m"
  count  = $m
  base   = count.index * $((n / m))
}
TF
cat > "$work/modules/m/main.tf" <<TF
variable "base" {}
resource "null_resource" "x" {
  count = $((n / m))
  triggers = { i = var.base + count.index }
}
TF
best() {
  local dir=$1 best_t="" best_rss=""
  for _ in $(seq "$runs"); do
    rm -rf "$dir/.fleetform"
    /usr/bin/time -o "$work/time" -f '%e %M' "$ff" -chdir="$dir" plan >/dev/null 2>&1
    local out t rss
    out=$(tail -1 "$work/time")
    t=${out% *}
    rss=${out#* }
    if [ -z "$best_t" ] || awk "BEGIN{exit !($t < $best_t)}"; then best_t=$t; best_rss=$rss; fi
  done
  echo "$best_t $best_rss"
}
read -r tf rf < <(best "$work/flat")
read -r tm rm_ < <(best "$work/modules")
echo "binary: $ff"
echo "flat:    $n instances                      plan ${tf} s, peak RSS $((rf / 1024)) MB"
echo "modules: $n instances in $m module instances plan ${tm} s, peak RSS $((rm_ / 1024)) MB"
awk "BEGIN{printf \"ratio modules/flat: %.2f\n\", $tm / $tf}"
