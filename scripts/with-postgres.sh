#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL server: starts a cluster in a fresh directory under
# /tmp (scripts/postgres.sh), exports its URL as SIFT_POSTGRES_URL, runs the command, and stops the
# server and removes the directory however the command ends (success, failure, Ctrl-C, TERM),
# exiting with the command's status. `make test` runs the test suites through it.
#   bash scripts/with-postgres.sh swift test --filter SiftPostgresTests
set -uo pipefail

[ $# -ge 1 ] || { echo "usage: $0 COMMAND [ARGS...]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)

# Under /tmp rather than $TMPDIR: the socket path must stay short, and a root run hands the
# directory to another user, who must be able to reach it.
dir=$(mktemp -d /tmp/sift-pg.XXXXXX) || exit 1

cleanup() {
  bash "$here/postgres.sh" stop "$dir" || echo "with-postgres.sh: could not remove the test server in $dir" >&2
}
trap cleanup EXIT
# The signal handlers only exit; the EXIT trap then cleans up, once. The command, in the
# foreground, gets Ctrl-C itself, and bash runs a handler once the command has returned.
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

url=$(bash "$here/postgres.sh" start "$dir") || exit 1
export SIFT_POSTGRES_URL=$url

status=0
"$@" || status=$?
exit "$status"
