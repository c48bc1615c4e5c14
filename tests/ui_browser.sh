#!/usr/bin/env bash
# Drives fleetform's live view in a real headless Chromium (Debian's
# package, /usr/bin/chromium or $FLEETFORM_CHROMIUM) through Playwright for
# Python (PyPI, pinned, installed into .test-tools/ui-venv when missing; it
# uses that Chromium, it downloads no browser of its own).
#   tests/ui_browser.sh URL GOOD_TOKEN BAD_TOKEN SCREENSHOT_DIR
# Prints one JSON object of what the page showed (tests/ui_browser.py);
# exit 1 with the reason when a step fails.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=$repo/.test-tools/ui-venv
chromium=${FLEETFORM_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
  echo "no Chromium at $chromium: install Debian's chromium package (tests/run.sh does, as root)" >&2
  exit 1
fi
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import playwright' 2>/dev/null; then
  echo "ui_browser.sh: installing playwright into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'playwright==1.65.*' >&2
fi
export FLEETFORM_CHROMIUM=$chromium
exec "$venv/bin/python" "$repo/tests/ui_browser.py" "$@"
