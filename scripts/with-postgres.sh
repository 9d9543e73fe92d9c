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
# Until the command runs, a signal only exits (and the EXIT trap removes what was started).
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

url=$(bash "$here/postgres.sh" start "$dir") || exit 1
export SIFT_POSTGRES_URL=$url

# The command runs in the background so that a signal to this script is handled at once, not
# when the command happens to finish: the handler stops the command, and the EXIT trap then
# removes the server. (A background command would read /dev/null and ignore Ctrl-C; `<&0` keeps
# its standard input, and Ctrl-C reaches it as the TERM the handler sends.)
"$@" <&0 &
child=$!
stop_command() {
  kill -TERM "$child" 2>/dev/null
  wait "$child" 2>/dev/null
  exit "$1"
}
trap 'stop_command 130' INT
trap 'stop_command 143' TERM
trap 'stop_command 129' HUP
wait "$child"
