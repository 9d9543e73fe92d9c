#!/usr/bin/env bash
# Installs the C libraries Sift links against (SQLite and PCRE2 development files) when they are
# missing. A fresh machine has the Swift toolchain only; this script is the one place that knows
# how to fetch the rest: apt-get as root, sudo apt-get otherwise, Homebrew on macOS.
set -euo pipefail

have_pkg() { pkg-config --exists "$1" 2>/dev/null; }

missing=()
have_pkg sqlite3 || missing+=(sqlite3)
have_pkg libpcre2-8 || missing+=(libpcre2-8)
if ! command -v pkg-config >/dev/null 2>&1; then missing+=(pkg-config); fi
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: missing ${missing[*]}; installing" >&2
case "$(uname -s)" in
  Darwin)
    command -v brew >/dev/null || { echo "install-deps: Homebrew is required on macOS" >&2; exit 1; }
    brew install pkg-config sqlite pcre2
    ;;
  *)
    if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else
      echo "install-deps: need root or sudo to install libsqlite3-dev libpcre2-dev pkg-config" >&2; exit 1; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq pkg-config libsqlite3-dev libpcre2-dev >/dev/null
    ;;
esac
