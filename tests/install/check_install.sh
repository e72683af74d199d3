#!/usr/bin/env bash
# Install a build tree into a scratch prefix and build a program against it with
# pkg-config and with CMake's find_package, each against the shared library and against
# the static one (pulsarc statically, its dependencies as the system has them): every
# build must compile, link and run, and the static ones must not load libpulsarc.so.
# Then the own-loop example (examples/uv_echo_producer.c, which calls libuv itself) the
# same ways, through pkg-config's pulsarc-uv and CMake's pulsarc::pulsarc_uv and
# pulsarc::pulsarc_uv_static: it runs against an address where no broker listens, gives
# up on the producer and must leave nothing of pulsarc's on its loop.
#   tests/install/check_install.sh BUILD_DIR
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "$1" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null

# The names the installed libraries define for the linker: the shared library exports the
# public API only (pulsarc_*); the static one also carries its internals, all under pc_ or
# pulsarc_, and protobuf-c's code for the Pulsar protocol under its package's prefix
# (pulsar__proto__*: a program that compiles PulsarApi.proto with protobuf-c itself would
# clash with it; see docs/choices.md, "Names for the linker"). Any other name could collide with an application's.
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
# libcurl and the GSSAPI library are loaded when first needed (dlopen), never linked: a
# process that uses neither HTTP nor Kerberos does not map them and their dependencies.
needed="$(readelf -d "$(find "$prefix" -name 'libpulsarc.so' | head -n1)" |
          grep -E 'NEEDED.*\[lib(curl|gssapi_krb5|krb5)\.' || true)"
if [[ -n "$needed" ]]; then
  echo "install check failed: libpulsarc.so links what it should load when needed:" >&2
  echo "$needed" >&2
  exit 1
fi
# pulsarc-compat exports libpulsar's names (pulsar_*) and its own additions
# (pulsarc_compat_*); its static archive's internals are pc_compat_*.
stray="$( { nm -D --defined-only "$(find "$prefix" -name 'libpulsarc-compat.so' | head -n1)" |
            awk '{print $3}' | grep -Ev '^(pulsar_|pulsarc_compat_)' || true
          nm -g --defined-only "$(find "$prefix" -name 'libpulsarc-compat.a' | head -n1)" 2>/dev/null |
            awk 'NF == 3 {print $3}' | grep -Ev '^(pulsar_|pulsarc_compat_|pc_compat_)' || true; } |
          sort -u)"
if [[ -n "$stray" ]]; then
  echo "install check failed: pulsarc-compat defines names outside its prefixes:" >&2
  echo "$stray" >&2
  exit 1
fi
if find "$prefix/include" -path '*/pulsar/*' | grep -v '/include/pulsarc/compat/pulsar/' >/dev/null; then
  echo "install check failed: a pulsar/ header outside include/pulsarc/compat/ (it would clash" \
       "with libpulsar-dev's)" >&2
  exit 1
fi

cat >"$work/main.c" <<'C'
#include <pulsarc/pulsarc.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    pulsarc_client_config_t *conf = pulsarc_client_config_new();
    pulsarc_client_t *client = NULL;
    int ok = pulsarc_client_config_set(conf, "operationTimeoutMs", "1000") == PULSARC_OK &&
             pulsarc_client_new(NULL, NULL, &client) == PULSARC_ERR_INVALID_ARGUMENT &&
             strcmp(pulsarc_result_name(PULSARC_ERR_SEND_TIMEOUT), "SEND_TIMEOUT") == 0 &&
             pulsarc_version() == PULSARC_VERSION &&
             strcmp(pulsarc_version_string(), PULSARC_VERSION_STRING) == 0;
    pulsarc_client_config_free(conf);
    puts(ok ? "installed pulsarc works" : "installed pulsarc misbehaves");
    return ok ? 0 : 1;
}
C

# check_static PROGRAM [static]: a static build must not need libpulsarc.so at all.
check_static() {
  if [[ "${2:-}" == static ]] && readelf -d "$1" | grep 'NEEDED.*libpulsarc\.so' >/dev/null; then
    echo "install check failed: $(basename "$1") links libpulsarc.so, not libpulsarc.a" >&2
    exit 1
  fi
}
run() {  # PROGRAM [static]
  check_static "$@"
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

# The own-loop example: built with what pulsarc-uv and pulsarc::pulsarc_uv(_static) give,
# and nothing else. Without a broker it gives up on the producer (exit 1) and prints its
# summary once the loop closed; loop_close=0: nothing of pulsarc's was left on it.
run_uv() {  # PROGRAM [static]
  local out
  check_static "$@"
  out="$("$1" pulsar://127.0.0.1:1 persistent://public/default/pulsarc-install-check 0 2>&1)" && {
    echo "install check failed: $(basename "$1") ran without a broker: $out" >&2
    exit 1
  }
  if [[ "$out" != *"loop_close=0"* ]]; then
    echo "install check failed: $(basename "$1"): $out" >&2
    exit 1
  fi
  echo "own-loop example ($(basename "$1")): ${out##*$'\n'}"
}
uv_example="$repo/examples/uv_echo_producer.c"
cc -std=c11 -Wall -Werror "$uv_example" $(pkg-config --cflags --libs pulsarc-uv) \
  -Wl,-rpath,"$(pkg-config --variable=libdir pulsarc)" -o "$work/uv-with-pkg-config"
run_uv "$work/uv-with-pkg-config"

# pulsarc-compat: a program of libpulsar's C API builds with pkg-config's pulsarc-compat
# (shared, and --static) and starts (without a broker its producer creation fails with
# libpulsar's ConnectError or Timeout); one that needs a consumer compiles and then fails
# to link, naming the function.
compat_prog="$repo/tests/compat/programs/compat_sync_producer.c"
check_compat() {  # PROGRAM [static]
  local out
  check_static "$@"
  # libpulsarc-compat.so finds libpulsarc.so.0 through the loader's path: a program's
  # RUNPATH does not reach a library's own dependencies.
  out="$(LD_LIBRARY_PATH="$(pkg-config --variable=libdir pulsarc)" "$1" pulsar://127.0.0.1:1 \
         persistent://public/default/compat-install-check 1 2>&1)" && {
    echo "install check failed: $(basename "$1") ran without a broker: $out" >&2
    exit 1
  }
  if [[ "$out" != *"Failed to create producer"* ]]; then
    echo "install check failed: $(basename "$1"): $out" >&2
    exit 1
  fi
  echo "pulsarc-compat program ($(basename "$1")): ${out##*$'\n'}"
}
cc -std=c11 -Wall -Werror "$compat_prog" $(pkg-config --cflags --libs pulsarc-compat) -pthread \
  -Wl,-rpath,"$(pkg-config --variable=libdir pulsarc)" -o "$work/compat-with-pkg-config"
check_compat "$work/compat-with-pkg-config"
cc -std=c11 -Wall -Werror "$compat_prog" \
  $(pkg-config --cflags --static --libs pulsarc-compat |
    sed 's/-lpulsarc-compat\b/-l:libpulsarc-compat.a/; s/-lpulsarc\b/-l:libpulsarc.a/') -pthread \
  -o "$work/compat-with-pkg-config-static"
if readelf -d "$work/compat-with-pkg-config-static" | grep 'NEEDED.*libpulsarc' >/dev/null; then
  echo "install check failed: the static pulsarc-compat program links a shared pulsarc" >&2
  exit 1
fi
check_compat "$work/compat-with-pkg-config-static"
if cc -std=c11 -Wall -Werror "$repo/tests/compat/programs/compat_needs_consumer.c" \
     $(pkg-config --cflags --libs pulsarc-compat) -o "$work/needs-consumer" 2>"$work/link.log"; then
  echo "install check failed: a program needing pulsar_client_subscribe linked" >&2
  exit 1
fi
grep "undefined reference to .pulsar_client_subscribe" "$work/link.log" >/dev/null || {
  echo "install check failed: the link error does not name pulsar_client_subscribe:" >&2
  cat "$work/link.log" >&2
  exit 1
}
echo "pulsarc-compat: a program needing a consumer fails to link, naming pulsar_client_subscribe"

mkdir -p "$work/cmake"
cat >"$work/cmake/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.16)
project(uses_pulsarc C)
find_package(pulsarc REQUIRED)
add_executable(with-find-package "$work/main.c")
target_link_libraries(with-find-package PRIVATE pulsarc::pulsarc)
add_executable(with-find-package-static "$work/main.c")
target_link_libraries(with-find-package-static PRIVATE pulsarc::pulsarc_static)
add_executable(uv-with-find-package "$uv_example")
target_link_libraries(uv-with-find-package PRIVATE pulsarc::pulsarc_uv)
add_executable(uv-with-find-package-static "$uv_example")
target_link_libraries(uv-with-find-package-static PRIVATE pulsarc::pulsarc_uv_static)
add_executable(compat-with-find-package "$compat_prog")
target_link_libraries(compat-with-find-package PRIVATE pulsarc::compat)
add_executable(compat-with-find-package-static "$compat_prog")
target_link_libraries(compat-with-find-package-static PRIVATE pulsarc::compat_static)
CM
cmake -S "$work/cmake" -B "$work/cmake/b" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake/b" >/dev/null
run "$work/cmake/b/with-find-package"
run "$work/cmake/b/with-find-package-static" static
run_uv "$work/cmake/b/uv-with-find-package"
run_uv "$work/cmake/b/uv-with-find-package-static" static
check_compat "$work/cmake/b/compat-with-find-package"
check_compat "$work/cmake/b/compat-with-find-package-static" static
echo "install check passed: pkg-config (pulsarc, also --static; pulsarc-uv; pulsarc-compat, also --static) and find_package(pulsarc) (pulsarc::pulsarc, pulsarc::pulsarc_static, pulsarc::pulsarc_uv, pulsarc::pulsarc_uv_static, pulsarc::compat, pulsarc::compat_static)"
