#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests: `start DIR` creates a cluster in DIR/data whose
# server listens on a Unix socket in DIR only (no TCP port, so parallel runs and a system server
# never collide), with durability switched off for speed, a database `sift`, and its connection URL
# written to DIR/url; `stop DIR` kills the server and removes DIR, and succeeds even when the server
# is already gone. initdb and the server refuse to run as root, and CI runs as root, so as root both
# run as the system user sift-postgres, created when missing.
set -euo pipefail

PG_USER=sift-postgres

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
action=$1
dir=$2

# The directory holding initdb and pg_ctl: the newest Debian/Ubuntu server version, a Homebrew
# keg (postgresql@N is keg-only), or else whatever is on PATH.
find_bindir() {
  local candidate
  for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r) \
                   $(ls -d /opt/homebrew/opt/postgresql@*/bin /usr/local/opt/postgresql@*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$candidate/initdb" ] && [ -x "$candidate/pg_ctl" ]; then echo "$candidate"; return; fi
  done
  if command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; return; fi
  echo "postgres.sh: no PostgreSQL server found (initdb); run scripts/install-deps.sh" >&2
  exit 1
}

is_root() { [ "$(id -u)" = 0 ]; }

# Runs a command as the cluster's owner: sift-postgres when root, ourselves otherwise. From
# inside DIR, because initdb and pg_ctl complain when they cannot read the current directory.
as_owner() {
  if ! is_root; then (cd "$dir" && "$@"); return; fi
  if command -v runuser >/dev/null 2>&1; then
    (cd "$dir" && runuser -u "$PG_USER" -- "$@")
  else
    local quoted="" arg
    for arg in "$@"; do quoted+=" '${arg//\'/\'\\\'\'}'"; done
    (cd "$dir" && su -s /bin/sh "$PG_USER" -c "$quoted")
  fi
}

# A path as a URI query value: everything but unreserved characters and '/' percent-encoded.
uri_encode() {
  local s=$1 out="" c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case "$c" in [A-Za-z0-9/._~-]) out+=$c ;; *) out+=$(printf '%%%02X' "'$c") ;; esac
  done
  echo "$out"
}

start() {
  local bindir
  bindir=$(find_bindir)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  # The marker lets `stop` remove DIR knowing it made it a cluster directory.
  touch "$dir/.sift-postgres"
  # The socket's path must fit in sun_path (108 bytes on Linux, 104 on macOS).
  if [ $(( ${#dir} + 18 )) -gt 103 ]; then
    echo "postgres.sh: $dir is too long a path for a Unix socket; use a directory under /tmp" >&2; exit 1
  fi
  chmod 755 "$dir"
  if is_root; then
    [ "$(uname -s)" = Linux ] || { echo "postgres.sh: cannot run the server as root on $(uname -s)" >&2; exit 1; }
    # Two runs starting at once may both find the user missing: the loser's useradd fails.
    id -u "$PG_USER" >/dev/null 2>&1 \
      || useradd --system --no-create-home --shell /usr/sbin/nologin "$PG_USER" 2>/dev/null \
      || id -u "$PG_USER" >/dev/null
    chown "$PG_USER" "$dir"
    if ! as_owner test -w "$dir"; then
      echo "postgres.sh: $PG_USER cannot reach $dir (a parent directory is closed to it); use a directory under /tmp" >&2; exit 1
    fi
  fi
  if ! as_owner "$bindir/initdb" -D "$dir/data" -U sift --auth=trust -E UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1; then
    echo "postgres.sh: initdb failed:" >&2; cat "$dir/initdb.log" >&2; exit 1
  fi
  # Settings go in the configuration file rather than through `pg_ctl -o`, which hands its
  # options to a shell: a directory name would need a second layer of quoting there.
  local socket_dir=${dir//\'/\'\'}
  as_owner tee -a "$dir/data/postgresql.conf" >/dev/null <<EOF

# scripts/postgres.sh: a throwaway test server, reachable only through the socket in its directory.
listen_addresses = ''
unix_socket_directories = '$socket_dir'
fsync = off
full_page_writes = off
synchronous_commit = off
EOF
  if ! as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -s start; then
    echo "postgres.sh: the server did not start:" >&2; cat "$dir/server.log" >&2 2>/dev/null; exit 1
  fi
  if ! as_owner "$bindir/psql" -X -q -h "$dir" -U sift -d postgres -v ON_ERROR_STOP=1 -c "CREATE DATABASE sift" >/dev/null; then
    echo "postgres.sh: could not create the database sift" >&2; exit 1
  fi
  local url
  url="postgresql://sift@/sift?host=$(uri_encode "$dir")"
  echo "$url" >"$dir/url"
  echo "$url"
}

stop() {
  [ -d "$dir" ] || return 0
  dir=$(cd "$dir" && pwd)
  if [ ! -e "$dir/.sift-postgres" ]; then
    echo "postgres.sh: $dir is not a cluster directory made by postgres.sh start; not removing it" >&2; exit 1
  fi
  local pidfile=$dir/data/postmaster.pid pid=""
  if [ -f "$pidfile" ]; then
    pid=$(head -n 1 "$pidfile" 2>/dev/null || true)
    local bindir
    bindir=$(find_bindir)
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w -s stop >/dev/null 2>&1 || true
    # pg_ctl fails when the server is already gone (fine) or cannot be told to stop (then the
    # postmaster is killed: the directory goes anyway, so nothing it writes matters).
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && ps -p "$pid" -o comm= 2>/dev/null | grep -q postgres; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  # A killed server's last children may still be writing for a moment.
  rm -rf "$dir" 2>/dev/null || { sleep 1; rm -rf "$dir"; }
}

case "$action" in
  start) start ;;
  stop) stop ;;
  *) usage ;;
esac
