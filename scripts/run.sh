#!/usr/bin/env bash
# Installs what is missing, builds, and launches TileScope. Arguments go to tilescope (e.g. --backend cpu).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec build/app/tilescope "$@"
