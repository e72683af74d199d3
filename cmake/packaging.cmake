# Debian packages with CPack: `cpack -G DEB` in a build tree makes one package per install
# component (CMakeLists.txt):
#   libpulsarc0     lib    the shared library, libpulsarc.so.0 (the package name carries
#                          the SONAME's number, as Debian's policy for libraries wants)
#   libpulsarc-dev  dev    headers, static library, libpulsarc.so, pkg-config (pulsarc.pc,
#                          pulsarc-uv.pc) and CMake package files; depends on libpulsarc0
#                          of the same version and on the -dev packages that the .pc files
#                          (libuv1-dev: pulsarc-uv.pc requires libuv) and the static
#                          library need
#   pulsarc-tools   tools  pulsarc-produce and pulsarc-perf (linked statically with pulsarc)
# The runtime dependencies (libuv1, libssl3, ...) come from dpkg-shlibdeps, which reads
# what the binaries link and names the Debian packages that provide it. libcurl and the
# GSSAPI library are not linked but loaded when first needed (dlopen of libcurl.so.4 and
# libgssapi_krb5.so.2: net/curl_lib.c, auth/gss_lib.c), which dpkg-shlibdeps cannot see:
# the packages of the library and of the tools name them (CPack adds what dpkg-shlibdeps
# finds to these).
set(CPACK_PACKAGE_NAME pulsarc)
set(CPACK_PACKAGE_VENDOR "pulsarc")
set(CPACK_PACKAGE_CONTACT "pulsarc developers")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "C producer library for Apache Pulsar")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL lib dev tools compat)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(PULSARC_DEB_VERSION "${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")

set(CPACK_DEBIAN_LIB_PACKAGE_NAME "libpulsarc${PROJECT_VERSION_MAJOR}")
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(PULSARC_LOADED_DEPENDS "libcurl4, libgssapi-krb5-2")
set(CPACK_DEBIAN_LIB_PACKAGE_DEPENDS "${PULSARC_LOADED_DEPENDS}")
# A shlibs file (for the one package with a shared library), so packages built against
# libpulsarc0 depend on it through dpkg-shlibdeps in turn.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_COMPONENT_LIB_DESCRIPTION "C producer library for Apache Pulsar - shared library
 pulsarc publishes messages to Apache Pulsar over its binary protocol: batching,
 compression, TLS and authentication, schemas, end-to-end encryption.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libpulsarc-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(PULSARC_DEV_DEPENDS "${CPACK_DEBIAN_LIB_PACKAGE_NAME} (= ${PULSARC_DEB_VERSION})"
    libuv1-dev libprotobuf-c-dev libssl-dev libjansson-dev liblz4-dev libzstd-dev zlib1g-dev
    libsnappy-dev)
if(AVRO_FOUND)
  list(APPEND PULSARC_DEV_DEPENDS libavro-dev)
endif()
list(JOIN PULSARC_DEV_DEPENDS ", " CPACK_DEBIAN_DEV_PACKAGE_DEPENDS)
set(CPACK_COMPONENT_DEV_DESCRIPTION "C producer library for Apache Pulsar - development files
 Headers, the static library, pkg-config (pulsarc.pc, and pulsarc-uv.pc for programs on
 their own libuv loop) and CMake (find_package(pulsarc)) files for building programs
 with pulsarc.")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME pulsarc-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION net)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "${PULSARC_LOADED_DEPENDS}") # linked statically
set(CPACK_COMPONENT_TOOLS_DESCRIPTION "Command-line producer and benchmark for Apache Pulsar
 pulsarc-produce sends messages from its arguments or standard input; pulsarc-perf
 measures publish throughput and latency.")

# pulsarc-compat (libpulsar's C API on pulsarc): the shared and static library, its headers
# under include/pulsarc/compat/ and pulsarc-compat.pc, in one package. Its library links
# libpulsarc.so.0, which dpkg-shlibdeps cannot place before libpulsarc0 is installed: the
# dependencies are named here instead (libpulsarc-dev for pulsarc.pc, which
# pulsarc-compat.pc requires).
set(CPACK_DEBIAN_COMPAT_PACKAGE_NAME libpulsarc-compat-dev)
set(CPACK_DEBIAN_COMPAT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_COMPAT_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_COMPAT_PACKAGE_DEPENDS
    "${CPACK_DEBIAN_LIB_PACKAGE_NAME} (= ${PULSARC_DEB_VERSION}), libpulsarc-dev (= ${PULSARC_DEB_VERSION}), libc6")
set(CPACK_COMPONENT_COMPAT_DESCRIPTION "libpulsar's C API (producer side) on pulsarc
 pulsarc-compat builds programs written against libpulsar's C API (pulsar/c/*.h) on
 pulsarc: libpulsarc-compat.so, its headers (under /usr/include/pulsarc/compat, so that
 they never clash with libpulsar's) and pulsarc-compat.pc. Producers only.")

include(CPack)
