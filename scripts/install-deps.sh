#!/usr/bin/env bash
# Installs what Sift builds and tests against when it is missing: the SQLite, PCRE2 and libpq
# (PostgreSQL client) development files, and a PostgreSQL server, which the tests start as a
# throwaway cluster of their own (scripts/with-postgres.sh). A fresh machine has the Swift
# toolchain only; this script is the one place that knows how to fetch the rest: apt-get as root,
# sudo apt-get otherwise, Homebrew on macOS.
set -euo pipefail

# Homebrew's libpq is keg-only: its pkg-config file is not on the default search path.
if [ "$(uname -s)" = Darwin ] && command -v brew >/dev/null 2>&1; then
  export PKG_CONFIG_PATH="$(brew --prefix)/opt/libpq/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
fi

have_pkg() { pkg-config --exists "$1" 2>/dev/null; }
# The same places scripts/postgres.sh looks for the server.
have_initdb() {
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null \
    || compgen -G '/opt/homebrew/opt/postgresql@*/bin/initdb' >/dev/null \
    || compgen -G '/usr/local/opt/postgresql@*/bin/initdb' >/dev/null \
    || command -v initdb >/dev/null 2>&1
}

missing=()
have_pkg sqlite3 || missing+=(sqlite3)
have_pkg libpcre2-8 || missing+=(libpcre2-8)
have_pkg libpq || missing+=(libpq)
have_initdb || missing+=(initdb)
if ! command -v pkg-config >/dev/null 2>&1; then missing+=(pkg-config); fi
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: missing ${missing[*]}; installing" >&2
case "$(uname -s)" in
  Darwin)
    command -v brew >/dev/null || { echo "install-deps: Homebrew is required on macOS" >&2; exit 1; }
    brew install pkg-config sqlite pcre2 libpq postgresql@16
    ;;
  *)
    if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else
      echo "install-deps: need root or sudo to install libsqlite3-dev libpcre2-dev libpq-dev postgresql pkg-config" >&2; exit 1; fi
    # Debian's server package creates and starts a system cluster unless told not to; the tests
    # never use one. A createcluster.conf already there is the administrator's and stays as it
    # is (ucf is told to keep it when the package would install its own).
    if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
      $SUDO mkdir -p /etc/postgresql-common
      echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.conf >/dev/null
    fi
    # Through env, because sudo resets the environment.
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive UCF_FORCE_CONFFOLD=1 \
      apt-get install -y -qq pkg-config libsqlite3-dev libpcre2-dev libpq-dev postgresql >/dev/null
    ;;
esac
