#!/bin/sh
# Checks that the repository stands alone: no citation of documents outside
# it, and every docs/ path that code, scripts or Markdown cite exists.
# Run from anywhere: docs/check.sh
cd "$(dirname "$0")/.." || exit 2
status=0
outside=$(grep -rn 'seeds/\|shared/DESIGN' --include='*.rs' --include='*.md' \
  --include='*.py' --include='*.sh' --exclude-dir=target --exclude-dir=.git \
  --exclude=check.sh .)
if [ -n "$outside" ]; then
  echo "citations of documents outside the repository:"
  echo "$outside"
  status=1
fi
for p in $(grep -rhoE 'docs/[A-Za-z0-9_./-]*[A-Za-z0-9_]' --include='*.rs' \
  --include='*.md' --include='*.py' --include='*.sh' --exclude-dir=target \
  --exclude-dir=.git . | sort -u); do
  if [ ! -e "$p" ]; then
    echo "cited but missing: $p"
    status=1
  fi
done
[ "$status" = 0 ] && echo "docs check: ok"
exit "$status"
