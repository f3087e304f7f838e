#!/bin/sh
# Installs the Debian packages diagtop needs to build (and, with --test, to run its tests).
# As root it runs apt-get; otherwise it prints the exact command and fails, so nothing is installed behind a user's back.
# apt's own output goes to a log that is shown only when the installation fails.
set -eu

build_pkgs="gcc g++ make pkg-config libproc2-dev libncurses-dev libcjson-dev libdw-dev libelf-dev zlib1g-dev
libunwind-dev libdeflate-dev libbz2-dev liblzma-dev libmicrohttpd-dev libgnutls28-dev libcrypt-dev"
# The tests' real tools and targets: tmux for the screen, gdb and elfutils to check cores and stacks, libc6-dbg
# for names inside libc, Go and a JDK for runtime targets, sqlite3 and python3 run under the native agent (and
# libsqlite3-dev for a target that leaks through libsqlite3), curl,
# promtool (prometheus) and chromium for the HTTP API and its page; heaptrack, perf, wrk and sysstat (pidstat)
# for the benchmarks; clang (libFuzzer) for the HPROF reader's fuzzing; strace (which /proc files a refresh
# opens), iotop-c and nethogs (disk and network rates to compare with), htop (the refresh benchmark's other
# monitor).
# (g++ builds: libstdc++ demangles C++ names; a C++ target.)
test_pkgs="tmux gdb elfutils libc6-dbg procps util-linux python3 binutils golang-go openjdk-17-jdk-headless
sqlite3 libsqlite3-dev curl prometheus chromium heaptrack linux-perf wrk sysstat clang strace iotop-c
nethogs htop"

pkgs=$build_pkgs
why="to build diagtop"
if [ "${1:-}" = "--test" ]; then
    pkgs="$build_pkgs $test_pkgs"
    why="to build diagtop and run its tests"
fi

missing=""
for p in $(echo $pkgs); do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$status" in
        *"install ok installed"*) ;;
        *) missing="$missing $p" ;;
    esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "diagtop needs these Debian packages $why:$missing" >&2
    echo "run as root:  apt-get update && apt-get install -y$missing" >&2
    exit 1
fi
echo "installing$missing ($why)" >&2
log=$(mktemp /tmp/diagtop-apt.XXXXXX)
export DEBIAN_FRONTEND=noninteractive
# Under make -j the build and test stamps may install at once: the second waits for the first one's dpkg lock.
apt-get -o DPkg::Lock::Timeout=300 update -qq >"$log" 2>&1 || true
if ! apt-get -o DPkg::Lock::Timeout=300 install -y -qq $missing >>"$log" 2>&1; then
    echo "apt-get install failed:" >&2
    cat "$log" >&2
    rm -f "$log"
    exit 1
fi
rm -f "$log"
echo "installed$missing" >&2
