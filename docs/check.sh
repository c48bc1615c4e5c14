#!/bin/sh
# Checks that the repository stands alone: no citation of documents outside
# it, and every docs/ path that code, scripts or Markdown of the repository
# cite exists. Only files git tracks are read (not .test-tools/, target/);
# a docs/ inside a URL (https://example.org/docs/...) is not ours.
# Run from anywhere: docs/check.sh
cd "$(dirname "$0")/.." || exit 2
status=0
files=$(git ls-files '*.rs' '*.md' '*.py' '*.sh' | grep -v '^docs/check.sh$')
# shellcheck disable=SC2086
outside=$(grep -n 'seeds/\|shared/DESIGN' $files)
if [ -n "$outside" ]; then
  echo "citations of documents outside the repository:"
  echo "$outside"
  status=1
fi
# shellcheck disable=SC2086
for p in $(grep -hoE '(^|[^/A-Za-z0-9_.-])docs/[A-Za-z0-9_./-]*[A-Za-z0-9_]' $files |
  sed -E 's#^[^d]*docs/#docs/#' | sort -u); do
  if [ ! -e "$p" ]; then
    echo "cited but missing: $p"
    status=1
  fi
done
[ "$status" = 0 ] && echo "docs check: ok"
exit "$status"
