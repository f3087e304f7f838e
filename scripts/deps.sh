#!/bin/sh
# Installs the Debian packages diagtop needs to build (and, with --test, to run its tests).
# As root it runs apt-get; otherwise it prints the exact command and fails, so nothing is installed behind a user's back.
set -eu

build_pkgs="gcc make pkg-config libproc2-dev libncurses-dev libcjson-dev libunwind-dev libdw-dev libelf-dev"
test_pkgs="tmux gdb elfutils libc6-dbg procps util-linux python3 golang-go openjdk-17-jdk-headless"

pkgs=$build_pkgs
[ "${1:-}" = "--test" ] && pkgs="$build_pkgs $test_pkgs"

missing=""
for p in $pkgs; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$status" in
        *"install ok installed"*) ;;
        *) missing="$missing $p" ;;
    esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "diagtop needs these Debian packages:$missing" >&2
    echo "run as root:  apt-get update && apt-get install -y$missing" >&2
    exit 1
fi
echo "installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2 || true
apt-get install -y -qq $missing >&2
