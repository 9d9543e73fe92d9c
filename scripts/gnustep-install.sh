#!/usr/bin/env bash
# Installs what the GNUstep comparisons need when it is missing: gobjc, libgnustep-base-dev (for
# gnustep-config and Foundation) and GNU time, with apt-get as root or through sudo. Called by
# scripts/gnustep-bench.sh and scripts/gnustep-filter-bench.sh.
set -euo pipefail
if command -v gnustep-config >/dev/null 2>&1 && dpkg -s gobjc >/dev/null 2>&1 && [ -x /usr/bin/time ]; then exit 0; fi
echo "$(basename "$0"): installing gobjc, libgnustep-base-dev and GNU time" >&2
if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else
  echo "$(basename "$0"): need root or sudo to install gobjc libgnustep-base-dev" >&2; exit 1; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq gobjc libgnustep-base-dev time >/dev/null
