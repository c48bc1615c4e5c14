#!/usr/bin/env bash
# Helper of the corpus test (tests/tests/corpus.rs, see tests/corpus/README.md).
#
#   tests/corpus.sh mirrors     prints the `fetch` source of every corpus
#                               repository whose mirror is not on this machine
#
# The reference is Terraform 1.11 (`terraform` on PATH), which the test
# finds itself.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
missing_mirrors() {
  local mirrors=${FLEETFORM_CORPUS_MIRRORS:-/work/.mirror}
  python3 - "$repo/tests/corpus/manifest.json" "$mirrors" <<'EOF'
import json, os, sys
manifest, mirrors = json.load(open(sys.argv[1])), sys.argv[2]
seen = set()
for m in manifest["modules"]:
    if m["mirror"] in seen:
        continue
    seen.add(m["mirror"])
    if not os.path.isdir(os.path.join(mirrors, m["mirror"], "repo")):
        print("github:" + m["repository"].removeprefix("https://github.com/"))
EOF
}

case "${1:-}" in
  mirrors) missing_mirrors ;;
  *)
    echo "usage: $0 mirrors" >&2
    exit 2
    ;;
esac
