"""The official libpulsar as an oracle: which partition it sends each keyed message to.

The pulsar-client wheel carries the C++ client it is built on (pulsar_client.libs/
libpulsar-*.so: the project's own release build, Boost 1.90 through vcpkg for 3.13.0),
and that library exports libpulsar's C API. This module drives it with ctypes: a
producer with a hashing scheme (pulsar_BoostHash by default) sends one message per key,
batching off, and the partition of each comes back in the message id its send callback
gets. tests/interop/test_compat.py compares pulsarc-compat's placements with these;
tests/unit/test_hash_boost.c records some as vectors."""

from __future__ import annotations

import ctypes
import glob
import os
import threading

import pulsar

BOOST_HASH = 1  # pulsar_hashing_scheme: Murmur3_32Hash 0, BoostHash 1, JavaStringHash 2


def library_path() -> str:
    libs = os.path.join(os.path.dirname(pulsar.__file__), os.pardir, "pulsar_client.libs")
    found = sorted(glob.glob(os.path.join(libs, "libpulsar-*.so")))
    if not found:
        raise FileNotFoundError(f"no libpulsar-*.so in {os.path.realpath(libs)} (the "
                                f"pulsar-client wheel carries one)")
    return os.path.realpath(found[0])


def _load() -> ctypes.CDLL:
    lib = ctypes.CDLL(library_path())
    vp, cp = ctypes.c_void_p, ctypes.c_char_p
    sig = {
        "pulsar_client_configuration_create": ([], vp),
        "pulsar_client_configuration_free": ([vp], None),
        "pulsar_client_create": ([cp, vp], vp),
        "pulsar_client_close": ([vp], ctypes.c_int),
        "pulsar_client_free": ([vp], None),
        "pulsar_producer_configuration_create": ([], vp),
        "pulsar_producer_configuration_free": ([vp], None),
        "pulsar_producer_configuration_set_hashing_scheme": ([vp, ctypes.c_int], None),
        "pulsar_producer_configuration_set_batching_enabled": ([vp, ctypes.c_int], None),
        "pulsar_client_create_producer": ([vp, cp, vp, ctypes.POINTER(vp)], ctypes.c_int),
        "pulsar_message_create": ([], vp),
        "pulsar_message_set_content": ([vp, cp, ctypes.c_size_t], None),
        "pulsar_message_set_partition_key": ([vp, cp], None),
        "pulsar_message_free": ([vp], None),
        "pulsar_message_id_str": ([vp], vp),
        "pulsar_message_id_free": ([vp], None),
        "pulsar_producer_send_async": ([vp, vp, vp, vp], None),
        "pulsar_producer_flush": ([vp], ctypes.c_int),
        "pulsar_producer_close": ([vp], ctypes.c_int),
        "pulsar_producer_free": ([vp], None),
    }
    for name, (args, res) in sig.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, res
    return lib


_SEND_CB = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)


def partitions_for(url: str, topic: str, keys: list[bytes], scheme: int = BOOST_HASH) -> list[int]:
    """The partition index libpulsar sent each key's message to (topic must exist with
    its partitions). Keys must be non-empty and hold no NUL byte (C strings)."""
    lib = _load()
    libc = ctypes.CDLL(None)
    libc.free.argtypes = [ctypes.c_void_p]
    conf = lib.pulsar_client_configuration_create()
    client = lib.pulsar_client_create(url.encode(), conf)
    pconf = lib.pulsar_producer_configuration_create()
    lib.pulsar_producer_configuration_set_hashing_scheme(pconf, scheme)
    lib.pulsar_producer_configuration_set_batching_enabled(pconf, 0)
    producer = ctypes.c_void_p()
    rc = lib.pulsar_client_create_producer(client, topic.encode(), pconf, ctypes.byref(producer))
    if rc != 0:
        raise RuntimeError(f"libpulsar could not create a producer on {topic}: result {rc}")
    got: dict[int, tuple[int, str]] = {}
    lock = threading.Lock()

    def on_sent(res, msg_id, ctx):
        text = ""
        if msg_id:
            p = lib.pulsar_message_id_str(msg_id)
            text = ctypes.string_at(p).decode()
            libc.free(p)
            lib.pulsar_message_id_free(msg_id)
        with lock:
            got[ctx] = (res, text)

    callback = _SEND_CB(on_sent)
    try:
        for i, key in enumerate(keys):
            msg = lib.pulsar_message_create()
            lib.pulsar_message_set_content(msg, b"oracle", 6)
            lib.pulsar_message_set_partition_key(msg, key)
            lib.pulsar_producer_send_async(producer, msg, callback, i + 1)  # ctx 0 is NULL
            lib.pulsar_message_free(msg)
        lib.pulsar_producer_flush(producer)
        lib.pulsar_producer_close(producer)
    finally:
        lib.pulsar_producer_free(producer)
        lib.pulsar_client_close(client)
        lib.pulsar_client_free(client)
        lib.pulsar_producer_configuration_free(pconf)
        lib.pulsar_client_configuration_free(conf)
    out = []
    for i in range(len(keys)):
        res, text = got.get(i + 1, (-1, ""))
        if res != 0:
            raise RuntimeError(f"libpulsar failed to send key {keys[i]!r}: result {res}")
        out.append(int(text.strip("()").split(",")[2]))
    return out
