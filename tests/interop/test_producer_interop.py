"""pulsarc writes, the official Python client reads: bytes, keys, properties, event
times, order, producer names, message ids and sequence ids must all agree."""

import re

import pulsar
import pytest

import pulsar_helpers as ph
from pulsarc_messages import gen_messages, read_ids


def run_producer(service_url, topic, count, mode, tmp_path, *extra, timeout_s=180, check=True):
    ids_file = tmp_path / "ids.txt"
    proc = ph.run_bin("interop_producer", service_url, topic, str(count), mode,
                      "--ids", str(ids_file), *extra, timeout_s=timeout_s, check=check)
    out = proc.stdout.decode()
    m = re.search(r"sent=(\d+) failed=(\d+) producer=(\S*) last_sequence_id=(-?\d+) "
                  r"rejected=(\d+) pending=(\d+) memory=(\d+)", out)
    assert m, out + proc.stderr.decode()[-3000:]
    summary = {"sent": int(m[1]), "failed": int(m[2]), "producer": m[3], "last_seq": int(m[4])}
    if not check:
        summary["pending"] = int(m[6])
        summary["memory"] = int(m[7])
    return summary, (read_ids(str(ids_file)) if count else [])


def assert_same_messages(expected, received, ids, producer_name):
    assert len(received) == len(expected)
    for i, (want, got) in enumerate(zip(expected, received)):
        assert got["data"] == want["data"], f"payload of message {i}"
        assert got["partition_key"] == want["partition_key"], f"key of message {i}"
        ok = got["ordering_key"] or None  # the Python client hands it back as str
        assert (ok.encode() if isinstance(ok, str) else ok) == want["ordering_key"], \
            f"ordering key of message {i}"
        assert got["properties"] == want["properties"], f"properties of message {i}"
        assert got["event_timestamp"] == want["event_timestamp"], f"event time of message {i}"
        assert got["producer_name"] == producer_name
        assert got["publish_timestamp"] > 0
        ledger, entry, _, batch_index = got["message_id"]
        assert (ledger, entry, batch_index) == (ids[i]["ledger"], ids[i]["entry"], ids[i]["batch_index"]), \
            f"id of message {i}"


@pytest.mark.parametrize("mode,count", [("sync", 300), ("async", 10000)])
def test_messages_read_back_identically(service_url, unique_topic, tmp_path, mode, count):
    topic = unique_topic()
    summary, ids = run_producer(service_url, topic, count, mode, tmp_path)
    assert summary == {"sent": count, "failed": 0, "producer": summary["producer"],
                       "last_seq": count - 1}
    assert summary["producer"], "broker-assigned producer name"
    received = ph.read_messages(topic, count, timeout_s=120, to_end=True)
    assert_same_messages(gen_messages(count), received, ids, summary["producer"])


def test_message_ids_deserialize_in_the_official_client(service_url, unique_topic, tmp_path):
    topic = unique_topic()
    _, ids = run_producer(service_url, topic, 5, "sync", tmp_path)
    received = ph.read_messages(topic, 5)
    for want, got in zip(ids, received):
        mid = pulsar.MessageId.deserialize(want["serialized"])
        assert (mid.ledger_id(), mid.entry_id(), mid.batch_index()) == \
            (got["message_id"][0], got["message_id"][1], got["message_id"][3])


def test_user_named_producer_and_sequence_ids_match_the_broker(service_url, dedup_topic, tmp_path):
    topic = dedup_topic()
    ph.create_topic(topic)
    ph.wait_deduplication_enabled(topic)
    name = "pulsarc-interop-" + topic.rsplit("-", 1)[-1]
    first, ids = run_producer(service_url, topic, 2000, "async", tmp_path, "--name", name)
    assert first["producer"] == name and first["last_seq"] == 1999
    # The broker recorded our sequence ids: the last entry starts at the id we gave it.
    headers, _ = ph.get_message_by_id(topic, ids[-1]["ledger"], ids[-1]["entry"])
    assert int(ph.header(headers, "X-Pulsar-sequence-id")) == 1999 - ids[-1]["batch_index"]
    assert ph.header(headers, "X-Pulsar-producer-name") == name
    # A restarted producer with the same name continues after the broker's last id.
    second, ids2 = run_producer(service_url, topic, 500, "async", tmp_path, "--name", name,
                                "--seed", "9")
    assert second["last_seq"] == 2499
    headers, _ = ph.get_message_by_id(topic, ids2[0]["ledger"], ids2[0]["entry"])
    assert int(ph.header(headers, "X-Pulsar-sequence-id")) == 2000
    # Re-sending the last 1,000 messages with their old ids stores nothing new, and every
    # send still reports success.
    retry, _ = run_producer(service_url, topic, 1000, "async", tmp_path, "--name", name,
                            "--start-seq", "1500", "--seed", "7")
    assert retry["sent"] == 1000 and retry["failed"] == 0 and retry["last_seq"] == 2499
    everything = ph.read_messages(topic, 2500, timeout_s=30, to_end=True)
    assert len(everything) == 2500
    assert {m["producer_name"] for m in everything} == {name}


def test_cli_produce_reads_back(service_url, unique_topic, tmp_path):
    topic = unique_topic()
    f = tmp_path / "blob.bin"
    f.write_bytes(bytes(range(256)) * 3)
    proc = ph.run_bin("pulsarc-produce", topic, "-u", service_url, "-m", "hello", "-m", "world",
                      "-f", str(f), "-n", "2", "-k", "cli-key", "-p", "a=1", "-p", "b=two",
                      "--producer-name", "cli-" + topic[-8:])
    out = proc.stdout.decode()
    assert re.search(r"sent=6 failed=0", out), out
    received = ph.read_messages(topic, 6, to_end=True)
    assert [m["data"] for m in received] == [b"hello", b"world", f.read_bytes()] * 2
    for m in received:
        assert m["partition_key"] == "cli-key"
        assert m["properties"] == {"a": "1", "b": "two"}
        assert m["producer_name"] == "cli-" + topic[-8:]


# Payloads on each side of the send blocks' edges (accept/block_pool.h): a message with no
# key or properties and a copied payload of about 150 to 1,700 bytes takes a recycled 2 KiB
# block, a smaller one a 512-byte block, a larger one its own allocation.
BLOCK_EDGE_SIZES = [0, 1, 150, 151, 152, 153, 154, 700, 1024, 1686, 1687, 1688, 1689, 1690,
                    2048, 5000]


def block_edge_files(tmp_path):
    import os
    files = []
    for size in BLOCK_EDGE_SIZES:
        f = tmp_path / f"p{size}.bin"
        f.write_bytes(os.urandom(size))
        files.append(f)
    return files


@pytest.mark.parametrize("batching", ["--batching", "--no-batching"])
def test_cli_payloads_around_the_block_sizes_arrive_exact(service_url, unique_topic, tmp_path,
                                                          batching):
    """Sent 30 times over, so that blocks of each size are given back and taken again
    while others are in flight: every payload arrives byte for byte, in order."""
    topic = unique_topic()
    files = block_edge_files(tmp_path)
    args = [topic, "-u", service_url, "-n", "30", batching]
    for f in files:
        args += ["-f", str(f)]
    out = ph.run_bin("pulsarc-produce", *args, timeout_s=120).stdout.decode()
    total = 30 * len(files)
    assert f"sent={total} failed=0" in out, out
    received = ph.read_messages(topic, total, to_end=True)
    assert [m["data"] for m in received] == [f.read_bytes() for f in files] * 30


def test_cli_stdin_lines(service_url, unique_topic):
    topic = unique_topic()
    proc = ph.run_bin("pulsarc-produce", topic, "-u", service_url, "--stdin",
                      input=b"line one\nline two\n\nline four\n")
    assert b"failed=0" in proc.stdout
    received = ph.read_messages(topic, 4, timeout_s=15, to_end=True)
    assert [m["data"] for m in received] == [b"line one", b"line two", b"", b"line four"]


def test_unreachable_service_url_fails_cleanly(unique_topic):
    # Nothing listens on port 1: the connection is refused and the CLI says so.
    proc = ph.run_bin("pulsarc-produce", unique_topic(), "-u", "pulsar://127.0.0.1:1",
                      "-m", "x", "--client-conf", "operationTimeoutMs=3000", check=False,
                      timeout_s=30)
    assert proc.returncode != 0
    err = proc.stderr.decode().lower()
    assert "connect" in err, err


def test_invalid_topic_and_url_are_rejected(service_url):
    for topic in ["", "a/b", "persistent://public/default/", "bogus://public/default/t"]:
        proc = ph.run_bin("pulsarc-produce", topic, "-u", service_url, "-m", "x",
                          check=False, timeout_s=30)
        assert proc.returncode != 0, topic
        assert b"topic" in proc.stderr.lower(), proc.stderr
    proc = ph.run_bin("pulsarc-produce", "t", "-u", "ftp://127.0.0.1:8080", "-m", "x",
                      check=False, timeout_s=30)
    assert proc.returncode != 0 and b"url" in proc.stderr.lower(), proc.stderr


def test_topic_in_missing_tenant_reports_the_broker_error(service_url):
    proc = ph.run_bin("pulsarc-produce", "persistent://no-such-tenant/ns/t", "-u", service_url,
                      "-m", "x", check=False, timeout_s=60)
    assert proc.returncode != 0
    assert proc.stderr, "an explanation on stderr"


def test_cli_chunking_compression_and_explicit_sequence_ids(service_url, dedup_topic, tmp_path):
    import os
    topic = dedup_topic()
    ph.create_topic(topic)
    ph.wait_deduplication_enabled(topic)
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(8 * 1024 * 1024))
    args = [topic, "-u", service_url, "-f", str(big), "-m", "small", "-c", "-z", "zstd",
            "--no-batching", "--producer-name", "cli-seq-" + topic[-8:], "--sequence-id-start", "500"]
    out = ph.run_bin("pulsarc-produce", *args, timeout_s=120).stdout.decode()
    assert "sent=2 failed=0" in out and "last-sequence-id=501" in out, out
    # The same ids again (a retried run) are dropped by the broker as duplicates.
    out = ph.run_bin("pulsarc-produce", *args, timeout_s=120).stdout.decode()
    assert "sent=2 failed=0" in out, out
    # The broker dedups a chunked message by its last chunk and stores the replay's first
    # chunk again (any client's replay does so); readers skip such an incomplete message,
    # so listen for what is delivered rather than read to the end of what is stored.
    received = ph.read_messages(topic, 2, timeout_s=60, extra_wait_s=1.0)
    assert [len(m["data"]) for m in received] == [8 * 1024 * 1024, 5]
    assert received[0]["data"] == big.read_bytes()
    headers, _ = ph.get_message_by_id(topic, *received[1]["message_id"][:2])
    assert int(ph.header(headers, "X-Pulsar-sequence-id")) == 501


def test_large_metadata_without_batching_is_stored(service_url, unique_topic):
    # The broker bounds a whole frame by its max message size plus 10 KiB of framing; the
    # metadata alone is not held to those 10 KiB. A 12,000-character key and a 16 KiB
    # property beside a one-byte payload are stored unbatched, as the official clients
    # store them.
    topic = unique_topic()
    key = "k" * 12000
    value = "v" * (16 * 1024)
    for extra in (["-k", key], ["-p", "big=" + value]):
        proc = ph.run_bin("pulsarc-produce", topic, "-u", service_url, "--no-batching", *extra,
                          "-m", "x", check=False, timeout_s=60)
        assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    received = ph.read_messages(topic, 2, timeout_s=30, to_end=True)
    assert [m["data"] for m in received] == [b"x", b"x"]
    assert received[0]["partition_key"] == key
    assert received[1]["properties"] == {"big": value}
    assert [m["message_id"][3] for m in received] == [-1, -1], "each an entry of its own"


def test_metadata_that_cannot_fit_a_frame_fails_with_message_too_big(service_url, unique_topic):
    # A key larger than the broker's whole frame (5 MiB + 10 KiB) leaves no room for any
    # payload: refused before it is sent, with a detail that says so.
    topic = unique_topic()
    key = b"k" * (5 * 1024 * 1024 + 10 * 1024)
    proc = ph.run_bin("pulsarc-produce", topic, "-u", service_url, "--no-batching", "--stdin",
                      "--key-separator", "|", input=key + b"|x\n", check=False, timeout_s=120)
    err = proc.stderr.decode()
    assert proc.returncode != 0, err[-2000:]
    assert "[MESSAGE_TOO_BIG]" in err and "no room for a payload" in err, err[-2000:]
    assert ph.read_messages(topic, 1, timeout_s=3) == []
