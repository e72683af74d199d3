# Shared settings and helpers for the scripts in this directory. Sourced, not run.
# shellcheck shell=bash

PULSARC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Everything downloaded or generated at run time lives outside the repository, so a
# `git clean` never throws away a 250 MB broker and the tree stays clean.
PULSARC_CACHE="${PULSARC_CACHE:-$HOME/.cache/pulsarc}"

# The broker under test. 4.0.x is the current LTS line on Maven Central.
PULSAR_VERSION="${PULSAR_VERSION:-4.0.8}"
PULSAR_HOME_DIR="$PULSARC_CACHE/apache-pulsar-$PULSAR_VERSION"

# Broker state (pid file, generated config, data, logs). One directory per broker so a
# test can run a second one by pointing PULSARC_BROKER_DIR elsewhere.
PULSARC_BROKER_DIR="${PULSARC_BROKER_DIR:-$PULSARC_CACHE/broker}"

# Where the broker listens and what it tells clients to connect to. They differ when
# a proxy sits in front of the broker (fault-injection tests).
PULSAR_PORT="${PULSAR_PORT:-6650}"
PULSAR_HTTP_PORT="${PULSAR_HTTP_PORT:-8080}"
PULSAR_BIND_ADDRESS="${PULSAR_BIND_ADDRESS:-127.0.0.1}"
PULSAR_ADVERTISED_ADDRESS="${PULSAR_ADVERTISED_ADDRESS:-127.0.0.1}"

log() { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# The address to probe the broker on from this machine: a wildcard bind is reachable
# through loopback.
broker_probe_address() {
  case "$PULSAR_BIND_ADDRESS" in
    0.0.0.0 | "") echo 127.0.0.1 ;;
    *) echo "$PULSAR_BIND_ADDRESS" ;;
  esac
}

# Pulsar 4.x needs Java 17 or newer. Prefer an explicit JAVA_HOME, then Debian's JDK 17,
# then whatever `java` is on PATH; export JAVA_HOME so bin/pulsar uses the same one.
java_major() { "$1" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1; }
find_java17() {
  local candidates=() c
  [[ -n "${JAVA_HOME:-}" ]] && candidates+=("$JAVA_HOME")
  for c in /usr/lib/jvm/java-17-openjdk-* /usr/lib/jvm/java-2[0-9]-openjdk-*; do
    [[ -d "$c" ]] && candidates+=("$c")
  done
  if command -v java >/dev/null 2>&1; then
    candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")")
  fi
  for c in "${candidates[@]}"; do
    if [[ -x "$c/bin/java" ]] && (( $(java_major "$c/bin/java") >= 17 )); then
      export JAVA_HOME="$c"
      return 0
    fi
  done
  return 1
}

# Download (through Maven, from Maven Central) and unpack the official Pulsar server
# distribution into the cache. A no-op when it is already unpacked.
fetch_pulsar() {
  if [[ -x "$PULSAR_HOME_DIR/bin/pulsar" ]]; then
    return 0
  fi
  command -v mvn >/dev/null 2>&1 || die "mvn not found (run scripts/setup)"
  local artifact="org.apache.pulsar:pulsar-server-distribution:$PULSAR_VERSION:tar.gz:bin"
  local dl="$PULSARC_CACHE/download"
  local tarball="$dl/pulsar-server-distribution-$PULSAR_VERSION-bin.tar.gz"
  mkdir -p "$dl"
  log "fetching $artifact (~250 MB; reused from ~/.m2 when already there)"
  # Run from the download dir: dependency:copy needs no pom, and must not pick up one.
  # Maven's output goes to a file (it is noisy even with -q); shown only on failure.
  if ! (cd "$dl" && mvn -B -q dependency:copy \
      -Dartifact="$artifact" -DoutputDirectory="$dl") >"$dl/mvn.log" 2>&1; then
    tail -n 40 "$dl/mvn.log" >&2
    die "could not fetch $artifact from Maven Central (see $dl/mvn.log)"
  fi
  [[ -f "$tarball" ]] || die "maven did not produce $tarball"
  # Unpack beside the final location and rename at the end, so an interrupted unpack
  # never leaves a half-filled directory that looks complete.
  local tmp="$PULSARC_CACHE/.unpack.$$"
  rm -rf "$tmp" && mkdir -p "$tmp"
  tar -xzf "$tarball" -C "$tmp"
  [[ -x "$tmp/apache-pulsar-$PULSAR_VERSION/bin/pulsar" ]] || die "unexpected tarball layout in $tarball"
  rm -rf "$PULSAR_HOME_DIR"
  mv "$tmp/apache-pulsar-$PULSAR_VERSION" "$PULSAR_HOME_DIR"
  rm -rf "$tmp" "$tarball"  # the copy in ~/.m2 stays; no need to keep two
  log "pulsar $PULSAR_VERSION unpacked in $PULSAR_HOME_DIR"
}
