#!/usr/bin/env bash
# Recomputes the vectors of tests/unit/test_hash_boost.c with the real Boost headers:
# Debian 12's libboost1.74-dev (Boost 1.74, the 1.56..1.80 algorithm), libboost1.81-dev
# unpacked beside it (Boost 1.81) and Boost's container_hash sources at the tag
# boost-1.90.0 laid over 1.81's other headers (the 1.82+ algorithm; 1.82, 1.83 and 1.90
# give the same), each compiled with g++ on x86-64; -funsigned-char stands in for Linux on
# arm64. Needs: g++, libboost1.74-dev, apt-get download, and a checkout of
# boostorg/container_hash (CONTAINER_HASH=/path/to/its/git/dir).
#   tests/support/boost_hash/make_vectors.sh KEYS_FILE OUT_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
keys="$1" out="$2"
mkdir -p "$out" && cd "$out"
[[ -d b181 ]] || { apt-get download libboost1.81-dev && dpkg -x libboost1.81-dev_*.deb b181; }
[[ -d ch190 ]] || { mkdir ch190 && git -C "$CONTAINER_HASH" archive boost-1.90.0 include | tar -x -C ch190; }
g++ -std=c++17 -O1 -o v174 "$here/vectors.cpp" && ./v174 <"$keys" >boost_1_80.txt
g++ -std=c++17 -O1 -funsigned-char -o v174u "$here/vectors.cpp" && ./v174u <"$keys" >boost_1_80_arm64.txt
g++ -std=c++17 -O1 -I b181/usr/include -o v181 "$here/vectors.cpp" && ./v181 <"$keys" >boost_1_81.txt
g++ -std=c++17 -O1 -I ch190/include -I b181/usr/include -o v190 "$here/vectors.cpp" &&
  ./v190 <"$keys" >boost.txt
