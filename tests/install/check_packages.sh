#!/usr/bin/env bash
# The Debian packages of a build tree, as a user gets them:
#   1. `cpack -G DEB` makes libpulsarc0, libpulsarc-dev, pulsarc-tools and
#      libpulsarc-compat-dev (libpulsar's C API on pulsarc);
#   2. their control fields say the right things: each package depends on the Debian
#      package of every library its binaries link (found with dpkg -S on this machine),
#      libpulsarc-dev on libpulsarc0 of its own version, libpulsarc0 carries a shlibs file;
#      and each holds its files and no other's;
#      libpulsarc-dev depends on the package of every module its .pc files require
#      (pulsarc.pc's, and pulsarc-uv.pc's libuv), found with dpkg -S on this machine;
#   3. unpacked with `dpkg -x` into a scratch root, examples/simple_producer.c builds with
#      `pkg-config --cflags --libs pulsarc` from that root and runs against the broker
#      with the packaged libpulsarc.so.0, as does the packaged pulsarc-produce, and the
#      own-loop example examples/uv_echo_producer.c builds with `pkg-config pulsarc-uv`
#      and publishes a line it echoes;
#   4. the official Python client reads every message they sent.
#
#   tests/install/check_packages.sh BUILD_DIR
# Needs the test broker (PULSAR_SERVICE_URL, default pulsar://127.0.0.1:6650).
set -euo pipefail
# Pipes end in `grep ... >/dev/null`, never `grep -q`: under pipefail, grep -q quitting at
# the first match can kill the writer with SIGPIPE and fail a check that matched.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="$(cd "$1" && pwd)"
url="${PULSAR_SERVICE_URL:-pulsar://127.0.0.1:6650}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

fail() { echo "check_packages: FAIL: $*" >&2; exit 1; }

# 1. The packages (cpack's preinstall step builds what is out of date first).
cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/debs" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log" >&2; fail "cpack -G DEB"; }
version="$(sed -n 's/^project(pulsarc VERSION \([0-9.]*\).*/\1/p' "$repo/CMakeLists.txt")"
major="${version%%.*}"
arch="$(dpkg --print-architecture)"
lib="$work/debs/libpulsarc${major}_${version}-1_$arch.deb"
dev="$work/debs/libpulsarc-dev_${version}-1_$arch.deb"
tools="$work/debs/pulsarc-tools_${version}-1_$arch.deb"
compat="$work/debs/libpulsarc-compat-dev_${version}-1_$arch.deb"
for deb in "$lib" "$dev" "$tools" "$compat"; do
  [[ -f "$deb" ]] || fail "no $(basename "$deb") among: $(ls "$work/debs")"
done

# 2. Control fields and contents.
field() { dpkg-deb --field "$1" "$2"; }
depends_on() {  # deb package: is package one of the deb's Depends alternatives?
  field "$1" Depends | tr ',|' '\n\n' | sed 's/^ *//; s/ .*//' | grep -x "$2" >/dev/null
}
owner_of() {  # soname -> the Debian package that holds it on this machine
  local path
  path="$(ldconfig -p | awk -v l="$1" '$1 == l { print $NF; exit }')"
  [[ -n "$path" ]] || return 1
  path="$(readlink -f "$path")"
  # usrmerge: dpkg may know the file under /lib rather than /usr/lib.
  { dpkg -S "$path" 2>/dev/null || dpkg -S "${path#/usr}" 2>/dev/null; } | head -n1 | cut -d: -f1
}
check_links() {  # deb file-in-deb: the deb depends on the package of each library it links
  local deb="$1" bin="$2" so pkg
  for so in $(readelf -d "$work/x/$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    pkg="$(owner_of "$so")" || fail "$so (linked by $bin): not found on this machine"
    [[ -n "$pkg" ]] || fail "$so (linked by $bin): no Debian package holds it"
    depends_on "$deb" "$pkg" || fail "$(basename "$deb") links $so ($pkg) but does not depend on $pkg"
    echo "  $(field "$deb" Package): $bin needs $so -> depends on $pkg"
  done
}
contents() { dpkg-deb --contents "$1" | awk '{ print $6 }' | sed 's|^\./|/|'; }
has_file() {  # deb regex
  contents "$1" | grep -E "$2" >/dev/null || fail "$(basename "$1") has no file matching $2"
}
lacks_file() {
  if contents "$1" | grep -E "$2" >/dev/null; then fail "$(basename "$1") should not hold $2"; fi
}

rm -rf "$work/x" && dpkg-deb -x "$lib" "$work/x"
libfile="$(cd "$work/x" && find . -name "libpulsarc.so.$major.*" -type f | sed 's|^\./||')"
[[ -n "$libfile" ]] || fail "libpulsarc${major} holds no libpulsarc.so.$major.*"
soname="$(readelf -d "$work/x/$libfile" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
[[ "$soname" == "libpulsarc.so.$major" ]] || fail "SONAME $soname, expected libpulsarc.so.$major"
check_links "$lib" "$libfile"
dpkg-deb --info "$lib" shlibs | grep "^libpulsarc $major libpulsarc$major " >/dev/null ||
  fail "libpulsarc${major} has no shlibs entry for libpulsarc $major"
lacks_file "$lib" '\.h$|\.a$|/libpulsarc\.so$|/bin/'

# libcurl and GSSAPI are loaded when needed (dlopen), not linked: the library must not
# link them, and its package (dpkg-shlibdeps cannot see them) must name them.
if readelf -d "$work/x/$libfile" | grep -E 'NEEDED.*\[lib(curl|gssapi_krb5)\.' >/dev/null; then
  fail "$libfile links libcurl or libgssapi_krb5, which it should load when needed"
fi
for d in libcurl4 libgssapi-krb5-2; do
  depends_on "$lib" "$d" || fail "libpulsarc${major} does not depend on $d: $(field "$lib" Depends)"
  depends_on "$tools" "$d" || fail "pulsarc-tools does not depend on $d: $(field "$tools" Depends)"
done

depends_on "$dev" "libpulsarc$major" || fail "libpulsarc-dev does not depend on libpulsarc$major"
field "$dev" Depends | grep "libpulsarc$major (= ${version}-1)" >/dev/null ||
  fail "libpulsarc-dev depends on another version of libpulsarc$major: $(field "$dev" Depends)"
for f in '/include/pulsarc/pulsarc\.h$' '/include/pulsarc/pulsarc_uv\.h$' \
         '/include/pulsarc/version\.h$' '/libpulsarc\.a$' '/libpulsarc\.so$' \
         '/pkgconfig/pulsarc\.pc$' '/pkgconfig/pulsarc-uv\.pc$' \
         '/cmake/pulsarc/pulsarcConfig\.cmake$'; do
  has_file "$dev" "$f"
done
# Every module a packaged .pc file requires (Requires and Requires.private: pkg-config
# reads both) comes from the Debian package that holds its .pc file here, which
# libpulsarc-dev must depend on; modules the package itself holds (pulsarc) excepted.
rm -rf "$work/x" && dpkg-deb -x "$dev" "$work/x"
for pc in $(find "$work/x" -name '*.pc'); do
  for module in $(PKG_CONFIG_PATH="$(dirname "$pc")" pkg-config --print-requires \
                    --print-requires-private "$pc" | awk '{ print $1 }' | sort -u); do
    [[ -f "$(dirname "$pc")/$module.pc" ]] && continue
    path="$(pkg-config --path "$module")" || fail "$(basename "$pc") requires $module: not found here"
    # The package holding the .pc where pkg-config finds it, which is what a user installs
    # (krb5.pc: libkrb5-dev's link into krb5-multidev), else the file it links to.
    pkg="$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(readlink -f "$path")")" ||
      fail "$(basename "$pc") requires $module: no Debian package holds $path"
    pkg="$(echo "$pkg" | head -n1 | cut -d: -f1)"
    depends_on "$dev" "$pkg" ||
      fail "libpulsarc-dev does not depend on $pkg ($(basename "$pc") requires $module)"
    echo "  libpulsarc-dev: $(basename "$pc") requires $module -> depends on $pkg"
  done
done
lacks_file "$dev" '/libpulsarc\.so\.|/bin/'

rm -rf "$work/x" && dpkg-deb -x "$tools" "$work/x"
has_file "$tools" '/bin/pulsarc-produce$'
has_file "$tools" '/bin/pulsarc-perf$'
check_links "$tools" usr/bin/pulsarc-produce
lacks_file "$tools" '/lib/'
# libpulsarc-compat-dev: libpulsar's C API on pulsarc, headers under pulsarc/compat/ only
# (never /usr/include/pulsar/, libpulsar-dev's), depending on pulsarc of its own version.
for f in '/libpulsarc-compat\.so\.'"$major"'$' '/libpulsarc-compat\.so$' '/libpulsarc-compat\.a$' \
         '/include/pulsarc/compat/pulsar/c/client\.h$' '/include/pulsarc/compat/pulsar/c/producer\.h$' \
         '/pkgconfig/pulsarc-compat\.pc$'; do
  has_file "$compat" "$f"
done
lacks_file "$compat" '^/usr/include/pulsar/|/bin/|/libpulsarc\.so|/pkgconfig/pulsarc\.pc$'
for d in "libpulsarc$major (= ${version}-1)" "libpulsarc-dev (= ${version}-1)"; do
  field "$compat" Depends | grep -F "$d" >/dev/null ||
    fail "libpulsarc-compat-dev does not depend on $d: $(field "$compat" Depends)"
done
lacks_file "$dev" '/pulsarc/compat/|pulsarc-compat'
echo "control fields and contents: ok"
for deb in "$lib" "$dev" "$tools" "$compat"; do
  echo "  $(field "$deb" Package) $(field "$deb" Version): Depends: $(field "$deb" Depends)"
done

# 3. A program built against the unpacked packages. The .pc file finds its prefix from
# where it lies (${pcfiledir}), so PKG_CONFIG_PATH is all it takes to use the scratch
# root: no sysroot, no edited prefix. The dependencies' .pc files are the system's.
root="$work/root"
for deb in "$lib" "$dev" "$tools" "$compat"; do dpkg -x "$deb" "$root"; done
pcdir="$(dirname "$(find "$root" -name pulsarc.pc)")"
export PKG_CONFIG_PATH="$pcdir"
[[ "$(pkg-config --modversion pulsarc)" == "$version" ]] || fail "pkg-config --modversion pulsarc"
libdir="$(pkg-config --variable=libdir pulsarc)"
[[ "$(readlink -f "$libdir")" == "$root"/* ]] || fail "pulsarc.pc's libdir $libdir is outside the root"
# -rpath: the packaged library, not one in the build tree or under /usr/local.
cc -std=c11 -Wall -Werror "$repo/examples/simple_producer.c" \
  $(pkg-config --cflags --libs pulsarc) -Wl,-rpath,"$libdir" -o "$work/simple_producer"
ldd "$work/simple_producer" | grep "libpulsarc.so.$major => $root/" >/dev/null ||
  fail "simple_producer does not load the packaged library: $(ldd "$work/simple_producer" | grep pulsarc)"

topic="persistent://public/default/pulsarc-packages-$(date +%s)-$$"
"$work/simple_producer" "$url" "$topic" >"$work/example.log" 2>&1 ||
  { cat "$work/example.log" >&2; fail "simple_producer against $url"; }
tail -n 2 "$work/example.log"
"$root/usr/bin/pulsarc-produce" -u "$url" -m "from the packaged pulsarc-produce" "$topic" ||
  fail "the packaged pulsarc-produce"

# The own-loop example with pulsarc-uv (pulsarc plus the libuv it calls itself): it
# echoes one line over TCP, publishes it, and on SIGTERM closes and reports.
cc -std=c11 -Wall -Werror "$repo/examples/uv_echo_producer.c" \
  $(pkg-config --cflags --libs pulsarc-uv) -Wl,-rpath,"$libdir" -o "$work/uv_echo_producer"
uv_topic="$topic-uv"
"$work/uv_echo_producer" "$url" "$uv_topic" 0 >"$work/uv.log" 2>&1 &
uv_pid=$!
port=""
for _ in $(seq 600); do  # up to a minute for the producer and the listening line
  port="$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$work/uv.log")"
  [[ -n "$port" ]] || ! kill -0 "$uv_pid" 2>/dev/null && break
  sleep 0.1
done
[[ -n "$port" ]] || { kill "$uv_pid" 2>/dev/null; cat "$work/uv.log" >&2; fail "uv_echo_producer did not listen"; }
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'echoed by the packaged pulsarc\n' >&3
IFS= read -r -t 30 echoed <&3 || true
exec 3<&-
[[ "$echoed" == "echoed by the packaged pulsarc" ]] || fail "uv_echo_producer echoed '$echoed'"
kill -TERM "$uv_pid"
wait "$uv_pid" || { cat "$work/uv.log" >&2; fail "uv_echo_producer exited $?"; }
uv_published="$(sed -n 's/^published=\([0-9]*\) failed=0 .* loop_close=0$/\1/p' "$work/uv.log")"
[[ -n "$uv_published" ]] || { cat "$work/uv.log" >&2; fail "uv_echo_producer's summary"; }
tail -n 1 "$work/uv.log"

# A program of libpulsar's C API built with the packaged pulsarc-compat.
compat_topic="$topic-compat"
cc -std=c11 -Wall -Werror "$repo/tests/compat/programs/compat_sync_producer.c" \
  $(pkg-config --cflags --libs pulsarc-compat) -Wl,-rpath,"$libdir" -o "$work/compat_sync_producer"
LD_LIBRARY_PATH="$libdir" "$work/compat_sync_producer" "$url" "$compat_topic" 5 >"$work/compat.log" 2>&1 ||
  { cat "$work/compat.log" >&2; fail "compat_sync_producer against $url"; }
tail -n 1 "$work/compat.log"

# 4. What arrived, read by the official client: simple_producer's 10 synchronous and
# 1000 asynchronous messages, then pulsarc-produce's one.
PYTHONPATH="$repo/tests/interop" python3 - "$topic" "$uv_topic" "$uv_published" "$compat_topic" <<'PY'
import sys
from pulsar_helpers import read_messages

topic, uv_topic, uv_published, compat_topic = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
got = [m["data"].decode() for m in read_messages(compat_topic, 5)]
if got != [f"sync-{i}" for i in range(5)]:
    sys.exit(f"compat_sync_producer's messages: {got}")
print("the official client read compat_sync_producer's 5 messages")
want = [f"hello from pulsarc, sync message {i}" for i in range(10)]
want += [f"hello from pulsarc, async message {i}" for i in range(1000)]
want += ["from the packaged pulsarc-produce"]
got = [m["data"].decode() for m in read_messages(topic, len(want), to_end=True)]
if got != want:
    missing = [w for w in want if w not in got]
    sys.exit(f"read {len(got)} messages, want {len(want)} in order; missing: {missing[:5]}")
print(f"the official client read all {len(got)} messages, in order")
# uv_echo_producer's: its timer's "tick N" and the line it echoed.
got = [m["data"].decode() for m in read_messages(uv_topic, uv_published, to_end=True)]
lines = [t for t in got if not t.startswith("tick ")]
if len(got) != uv_published or lines != ["echoed by the packaged pulsarc"]:
    sys.exit(f"uv_echo_producer published {uv_published}, read {len(got)}: {lines}")
print(f"the official client read uv_echo_producer's {len(got)} messages")
PY
echo "package check passed: libpulsarc${major}, libpulsarc-dev, pulsarc-tools, libpulsarc-compat-dev"
