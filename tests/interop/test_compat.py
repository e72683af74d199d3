"""pulsarc-compat: programs written against libpulsar's C API (tests/compat/programs/),
built with pulsarc-compat, against the real broker; the official Python client reads back
what they sent: synchronous and asynchronous sends, batching, every compression codec,
end-to-end encryption, and keys on the partitions the official libpulsar puts them on
(libpulsar_oracle.py drives the libpulsar the pulsar-client wheel carries, with the same
keys, on a topic with as many partitions)."""

from __future__ import annotations

import re

import pytest

import libpulsar_oracle
import pulsar_helpers as ph
from crypto_helpers import make_rsa_key_pair, read_topic

SENT = re.compile(r"^sent (\d+) \((-?\d+),(-?\d+),(-?\d+),(-?\d+)\)$", re.M)


def sent_ids(stdout: str) -> dict[int, tuple[int, int, int, int]]:
    """Message index -> (ledger, entry, partition, batch index), from the callbacks."""
    return {int(m[1]): tuple(int(x) for x in m.groups()[1:]) for m in SENT.finditer(stdout)}


def run(name: str, *args: str, timeout_s: float = 120) -> str:
    """The program's standard output, as text."""
    return ph.run_bin(name, *args, timeout_s=timeout_s).stdout.decode(errors="replace")


def run_async(bin_path, url, topic, count, *args, timeout_s=120):
    bin_path("compat_async_producer")
    out = run("compat_async_producer", url, topic, str(count), *args, timeout_s=timeout_s)
    assert f"done ok={count} failed=0" in out, out
    ids = sent_ids(out)
    assert sorted(ids) == list(range(count)), out
    return ids


def test_sync_program(service_url, unique_topic, bin_path):
    topic = unique_topic("compat-sync")
    bin_path("compat_sync_producer")
    out = run("compat_sync_producer", service_url, topic, "20")
    assert "sent 20 failed 0" in out, out
    got = ph.read_messages(topic, 20)
    assert [m["data"] for m in got] == [f"sync-{i}".encode() for i in range(20)]


@pytest.mark.parametrize("codec", ["none", "lz4", "zlib", "zstd", "snappy"])
def test_async_batched_and_compressed(service_url, unique_topic, bin_path, codec):
    topic = unique_topic(f"compat-async-{codec}")
    ids = run_async(bin_path, service_url, topic, 60, "--compression", codec)
    assert any(i[3] > 0 for i in ids.values()), "batched: some ids carry a batch index"
    got = ph.read_messages(topic, 60)
    assert [m["data"] for m in got] == [f"async-{i}".encode() for i in range(60)]
    assert [m["properties"]["i"] for m in got] == [str(i) for i in range(60)]
    # The ids the callbacks got are where the messages are.
    assert {m["message_id"] for m in got} == set(ids.values())


def test_async_unbatched(service_url, unique_topic, bin_path):
    topic = unique_topic("compat-unbatched")
    ids = run_async(bin_path, service_url, topic, 10, "--no-batching")
    assert all(i[3] == -1 for i in ids.values())
    assert len({(i[0], i[1]) for i in ids.values()}) == 10, "one entry each"
    assert [m["data"] for m in ph.read_messages(topic, 10)] == \
        [f"async-{i}".encode() for i in range(10)]


@pytest.mark.parametrize("partitions", [7, 16])
def test_keys_land_where_libpulsar_puts_them(service_url, unique_topic, bin_path, partitions):
    topic = unique_topic(f"compat-keyed-{partitions}")
    oracle_topic = topic + "-libpulsar"
    ph.create_partitioned_topic(topic, partitions)
    ph.create_partitioned_topic(oracle_topic, partitions)
    count = 80
    keys = [f"compat-key-{i}" for i in range(count)]
    ids = run_async(bin_path, service_url, topic, count, "--key-prefix", "compat-key-")
    expected = libpulsar_oracle.partitions_for(service_url, oracle_topic,
                                               [k.encode() for k in keys])
    assert len(set(expected)) > 1
    got = ph.read_partitioned(topic, count)
    assert len(got) == count
    where = {m["partition_key"]: m["message_id"][2] for m in got}
    wrong = {k: (where.get(k), e) for k, e in zip(keys, expected) if where.get(k) != e}
    assert not wrong, f"key: (pulsarc-compat's partition, libpulsar's): {wrong}"
    # The callbacks' ids name the same partitions.
    assert [ids[i][2] for i in range(count)] == expected


def test_encrypted(service_url, unique_topic, bin_path, tmp_path):
    topic = unique_topic("compat-encrypted")
    pair = make_rsa_key_pair(tmp_path, "compat")
    run_async(bin_path, service_url, topic, 30, "--encrypt", "compat", "--public-key", pair.public)
    plain = read_topic(topic, keys=pair)
    assert sorted(m["data"] for m in plain) == sorted(f"async-{i}".encode() for i in range(30))
    stored = read_topic(topic)  # without the key: ciphertext and its metadata
    assert stored and all(m["encryption"] for m in stored)
    assert all(b"async-" not in m["data"] for m in stored)
