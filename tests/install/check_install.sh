#!/usr/bin/env bash
# Install a build tree into a scratch prefix and build a program against it with
# pkg-config and with CMake's find_package, each against the shared library and against
# the static one (pulsarc statically, its dependencies as the system has them): every
# build must compile, link and run, and the static ones must not load libpulsarc.so.
#   tests/install/check_install.sh BUILD_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null

# The names the installed libraries define for the linker: the shared library exports the
# public API only (pulsarc_*); the static one also carries its internals, all under pc_ or
# pulsarc_, and protobuf-c's code for the Pulsar protocol under its package's prefix
# (pulsar__proto__*: a program that compiles PulsarApi.proto with protobuf-c itself would
# clash with it; see the README). Any other name could collide with an application's.
stray="$( { nm -D --defined-only "$(find "$prefix" -name 'libpulsarc.so' | head -n1)" |
            awk '{print $3}' | grep -v '^pulsarc_' || true
          nm -g --defined-only "$(find "$prefix" -name 'libpulsarc.a' | head -n1)" 2>/dev/null |
            awk 'NF == 3 {print $3}' | grep -Ev '^(pulsarc_|pc_|pulsar__proto__)' || true; } |
          sort -u)"
if [[ -n "$stray" ]]; then
  echo "install check failed: symbols outside pulsarc's prefixes:" >&2
  echo "$stray" >&2
  exit 1
fi

cat >"$work/main.c" <<'C'
#define _POSIX_C_SOURCE 200809L /* uv.h (pulsarc_uv.h's) wants POSIX's types under -std=c11 */
#include <pulsarc/pulsarc.h>
#include <pulsarc/pulsarc_uv.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    pulsarc_client_config_t *conf = pulsarc_client_config_new();
    pulsarc_client_t *client = NULL;
    int ok = pulsarc_client_config_set(conf, "operationTimeoutMs", "1000") == PULSARC_OK &&
             /* the libuv header is found, and its function exported */
             pulsarc_client_new_on_loop(NULL, "pulsar://localhost", NULL, &client) ==
                 PULSARC_ERR_INVALID_ARGUMENT &&
             strcmp(pulsarc_result_name(PULSARC_ERR_SEND_TIMEOUT), "SEND_TIMEOUT") == 0 &&
             pulsarc_version() == PULSARC_VERSION &&
             strcmp(pulsarc_version_string(), PULSARC_VERSION_STRING) == 0;
    pulsarc_client_config_free(conf);
    puts(ok ? "installed pulsarc works" : "installed pulsarc misbehaves");
    return ok ? 0 : 1;
}
C

# run PROGRAM [static]: runs it; a static build must not need libpulsarc.so at all.
run() {
  if [[ "${2:-}" == static ]] && readelf -d "$1" | grep 'NEEDED.*libpulsarc\.so' >/dev/null; then
    echo "install check failed: $(basename "$1") links libpulsarc.so, not libpulsarc.a" >&2
    exit 1
  fi
  "$1"
}

libdir="$(find "$prefix" -name pulsarc.pc -printf '%h\n' | head -n1)"
export PKG_CONFIG_PATH="$libdir"
cc -std=c11 -Wall -Werror "$work/main.c" $(pkg-config --cflags --libs pulsarc) \
  -Wl,-rpath,"$(pkg-config --variable=libdir pulsarc)" -o "$work/with-pkg-config"
run "$work/with-pkg-config"
# pkg-config --static: pulsarc's private dependencies too. -l:libpulsarc.a picks the
# archive where -lpulsarc would pick the shared library beside it.
cc -std=c11 -Wall -Werror "$work/main.c" \
  $(pkg-config --cflags --static --libs pulsarc | sed 's/-lpulsarc\b/-l:libpulsarc.a/') \
  -o "$work/with-pkg-config-static"
run "$work/with-pkg-config-static" static

mkdir -p "$work/cmake"
cat >"$work/cmake/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(uses_pulsarc C)
find_package(pulsarc REQUIRED)
add_executable(with-find-package ../main.c)
target_link_libraries(with-find-package PRIVATE pulsarc::pulsarc)
add_executable(with-find-package-static ../main.c)
target_link_libraries(with-find-package-static PRIVATE pulsarc::pulsarc_static)
CM
cmake -S "$work/cmake" -B "$work/cmake/b" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake/b" >/dev/null
run "$work/cmake/b/with-find-package"
run "$work/cmake/b/with-find-package-static" static
echo "install check passed: pkg-config (also --static) and find_package(pulsarc) (pulsarc::pulsarc, pulsarc::pulsarc_static)"
