"""The crash-safe spool (issue 21, part 2) against a real broker with deduplication on:
kill -9 the producing process at random points while it sends 50,000 messages, restart
it on the same spool directory with the same producer name, and the official client
reads each message exactly once, in order.

The producer (interop_spool_producer) reports each message it got accepted, and each run
goes on from the message after the last one reported: what was accepted but not yet
stored when the process died comes back only from the spool (a run never sends a
reported message again), and a message accepted in the instant between its acceptance
and its report is sent twice with one sequence id, which the broker drops. A restart
with no input at all must deliver what the spool held.

The second test stalls the broker's side first (tests/proxy/faultproxy.py between the
client and the broker, the shared broker behind it: `-m proxy`, as scripts/test runs it),
so the messages accepted before the kill never reached the broker: they can only come
from the spool. (SIGSTOP of the broker would do the same, but the broker is shared.)"""

from __future__ import annotations

import os
import random
import select
import signal
import subprocess
import time

import pytest

import pulsar_helpers as ph
from proxy_helpers import fault_proxy, fault_proxy_session  # noqa: F401

N = 50_000


class Producer:
    """One run of interop_spool_producer; its stdout read as it goes."""

    def __init__(self, service_url, topic, name, spool, fsync, first, end, log, *extra):
        self.cmd = [ph.bin_path("interop_spool_producer"), service_url, topic, name,
                    str(spool), fsync, str(first), str(end), *extra]
        self.log = log
        with open(log, "ab") as err:
            err.write(f"--- {' '.join(self.cmd)}\n".encode())
            self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=err,
                                         bufsize=0)
        self.last = first - 1  # the last message reported accepted
        self.done = False
        self._buf = b""

    def _take(self, data: bytes) -> None:
        self._buf += data
        *lines, self._buf = self._buf.split(b"\n")
        for line in lines:
            if line == b"done":
                self.done = True
            elif line:
                self.last = int(line)

    def read_until(self, index: int, quiet_s: float | None = None) -> None:
        """Read reports until message `index` was accepted, the process ended, or (with
        quiet_s) no report came for that long."""
        fd = self.proc.stdout.fileno()
        while self.last < index:
            ready, _, _ = select.select([fd], [], [], quiet_s if quiet_s else 60)
            if not ready:
                if quiet_s:
                    return
                raise AssertionError(f"no report for 60 s; see {self.log}")
            data = os.read(fd, 65536)
            if not data:
                return
            self._take(data)

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self._take(self.proc.stdout.read())  # what it reported before it died

    def finish(self, timeout_s: float = 120) -> None:
        out, _ = self.proc.communicate(timeout=timeout_s)
        self._take(out)
        assert self.proc.returncode == 0 and self.done, (
            f"{' '.join(self.cmd)} exited with {self.proc.returncode}; see {self.log}:\n"
            + open(self.log, errors="replace").read()[-3000:])


def indexes(received) -> list[int]:
    return [int(m["properties"]["index"]) for m in received]


def assert_prefix(got: list[int], at_least: int, what: str) -> None:
    """got is 0, 1, ..., len-1 exactly: in order, no gap, no duplicate; and holds at least
    0..at_least."""
    bad = next((k for k, v in enumerate(got) if v != k), None)
    assert bad is None, (f"{what}: position {bad} holds message {got[bad]} "
                         f"(around it: {got[max(0, bad - 3):bad + 4]}); {len(got)} read")
    assert len(got) > at_least, f"{what}: {len(got)} messages read, want at least {at_least + 1}"


def restart_without_input_then_send_the_rest(args, log, next_index: int, seed: int,
                                             *extra: str) -> None:
    """args: (service_url, topic, name, spool, fsync); extra: the producers' options. A
    run with no input delivers what the spool holds: at least every message up to
    next_index - 1 (those reported accepted), in order, none twice; then a run sends the
    rest, and the topic holds 0..N-1 exactly."""
    topic = args[1]
    Producer(*args, next_index, next_index, log, *extra).finish()
    assert_prefix(indexes(ph.read_to_end(topic)), next_index - 1,
                  f"after the restart without input (seed {seed})")
    Producer(*args, next_index, N, log, *extra).finish()
    got = indexes(ph.read_to_end(topic))
    assert_prefix(got, N - 1, f"at the end (seed {seed})")
    assert len(got) == N, f"{len(got)} messages read, want {N} (seed {seed})"


def make_dedup_topic(dedup_topic) -> str:
    topic = dedup_topic()
    ph.create_topic(topic)
    ph.wait_deduplication_enabled(topic)
    return topic


@pytest.mark.parametrize("fsync", ["interval", "never"])
def test_kill9_at_random_points_then_restarts_deliver_each_message_once_in_order(
        service_url, dedup_topic, tmp_path, fsync):
    topic = make_dedup_topic(dedup_topic)
    name = "spool-" + topic[-12:]
    spool, log = tmp_path / "spool", tmp_path / "producer.log"
    seed = random.randrange(1 << 30)
    kills = sorted(random.Random(seed).sample(range(500, N - 500), 3))
    print(f"seed {seed}: kills after messages {kills}")
    next_index = 0
    for k in kills:
        run = Producer(service_url, topic, name, spool, fsync, next_index, N, log)
        run.read_until(k)
        run.kill9()
        assert run.last >= k or run.done, f"killed before message {k}; see {log}"
        next_index = run.last + 1
    restart_without_input_then_send_the_rest(
        (service_url, topic, name, spool, fsync), log, next_index, seed)
    assert not list(spool.glob("*.seg")), "everything is stored: the spool holds nothing"


@pytest.mark.proxy
@pytest.mark.parametrize("create", ["sync", "async"])
def test_kill9_while_the_broker_stores_nothing_then_the_spool_delivers(
        service_url, dedup_topic, tmp_path, fault_proxy, create):
    """Either create (the async one used to skip the spool: its sends were accepted with
    no record, and a kill -9 lost them)."""
    topic = make_dedup_topic(dedup_topic)
    name = "spool-" + topic[-12:]
    spool, log = tmp_path / "spool", tmp_path / "producer.log"
    seed = random.randrange(1 << 30)
    k = random.Random(seed).randrange(1000, N // 2)
    extra = ("--async-create",) if create == "async" else ()
    # A window larger than what is in flight when the stall begins: sends go on being
    # accepted (into the spool) after it, and none of those reaches the broker.
    run = Producer(service_url, topic, name, spool, "interval", 0, N, log,
                   "--conf", "maxPendingMessages=20000", *extra)
    run.read_until(k)
    fault_proxy.stall()
    stalled_at = run.last
    run.read_until(N, quiet_s=1.0)  # until the window is full and sends wait for room
    run.kill9()
    accepted = run.last
    fault_proxy.cut()      # what the proxy held for the broker goes with the connections
    fault_proxy.resume()
    stored = indexes(ph.read_to_end(topic))
    print(f"seed {seed}: stalled after {stalled_at}, {accepted + 1} accepted, "
          f"{len(stored)} stored when the producer died")
    assert_prefix(stored, -1, "stored before the restart")
    assert len(stored) <= accepted, "every accepted message was stored: the stall did not hold"
    restart_without_input_then_send_the_rest(
        (service_url, topic, name, spool, "interval"), log, accepted + 1, seed, *extra)


def big_payload(i: int, size: int) -> bytes:
    """What `interop_spool_producer --size` sends as message i."""
    head = f"m-{i}".encode()
    return head + bytes((i * 31 + k) & 0xFF for k in range(len(head), size))


@pytest.mark.proxy
def test_kill9_in_the_middle_of_a_chunked_message_then_the_replay_is_read_once(
        service_url, dedup_topic, tmp_path, fault_proxy):
    """kill -9 while a chunked message is half stored (the proxy slowed down so that the
    broker holds some of its chunks), then the spool resends it: under a new uuid, so the
    official Python client (whose C++ core dropped a message whose chunk ids start over
    under the same uuid) reads each message exactly once, whole."""
    topic = make_dedup_topic(dedup_topic)
    name = "spool-" + topic[-12:]
    spool, log = tmp_path / "spool", tmp_path / "producer.log"
    size, count = 600_000, 4
    args = (service_url, topic, name, spool, "interval")
    opts = ("--size", str(size), "--conf", "chunkingEnabled=true",
            "--conf", "chunkMaxMessageSize=50000", "--conf", "batchingEnabled=false")
    fault_proxy.throttle(400_000)
    run = Producer(*args, 0, count, log, *opts)
    run.read_until(count - 1)  # all four in the spool
    # Somewhere inside a message: some chunks stored, not a whole number of messages.
    chunks = -(-(size + 16) // 50_000)
    ph.wait_for(lambda: 2 < ph.topic_stats(topic)["msgInCounter"] % chunks,
                timeout_s=60, interval_s=0.05)
    run.kill9()
    fault_proxy.cut()  # the dead producer's connection goes, and its name with it
    fault_proxy.reset()
    stored_before = ph.topic_stats(topic)["msgInCounter"]
    Producer(*args, count, count, log, *opts).finish()
    got = ph.read_to_end(topic)
    print(f"{stored_before} chunks stored before the kill; {len(got)} messages read")
    assert [int(m["properties"]["index"]) for m in got] == list(range(count))
    for m in got:
        i = int(m["properties"]["index"])
        assert m["data"] == big_payload(i, size), f"message {i} differs"


def spool_holds(spool, needles: list[bytes]) -> list[bytes]:
    """Those of needles that some file of the spool directory holds."""
    blobs = [p.read_bytes() for p in spool.iterdir() if p.is_file()]
    return [n for n in needles if any(n in b for b in blobs)]


@pytest.mark.proxy
def test_kill9_of_an_encrypted_spooled_producer_leaves_no_plaintext_and_decrypts_once(
        service_url, dedup_topic, tmp_path, fault_proxy):
    """spoolDir with encryptionKeys: the broker stalled, kill -9, and no payload is in the
    spool in clear; a restart that has the public key only resends every message, which
    the official Python client decrypts with the private key, each exactly once."""
    import crypto_helpers as ch
    topic = make_dedup_topic(dedup_topic)
    name = "spool-" + topic[-12:]
    spool, log = tmp_path / "spool", tmp_path / "producer.log"
    keys = ch.make_rsa_key_pair(tmp_path, "spool")
    size, count = 200, 3000
    opts = ("--size", str(size), "--encrypt", f"k1={keys.public}", "--conf",
            "compressionType=lz4", "--conf", "maxPendingMessages=5000")
    args = (service_url, topic, name, spool, "interval")
    run = Producer(*args, 0, count, log, *opts)
    run.read_until(50)
    fault_proxy.stall()
    run.read_until(count - 1, quiet_s=2.0)
    run.kill9()
    accepted = run.last + 1
    assert accepted > 500, f"only {accepted} accepted; see {log}"
    assert list(spool.glob("*.seg")), "nothing was spooled"
    leaked = spool_holds(spool, [big_payload(i, size) for i in range(0, accepted, 7)])
    assert not leaked, f"{len(leaked)} payload(s) in the spool in clear"
    fault_proxy.cut()
    fault_proxy.resume()
    stored = ch.read_topic(topic)  # as stored: each sealed message is an entry of its own
    assert len(stored) < accepted, "every accepted message was stored: the stall did not hold"
    assert all(m["encryption"] for m in stored), "a message was stored unencrypted"
    Producer(*args, accepted, accepted, log, *opts).finish()
    got = ch.read_topic(topic, keys)
    assert [int(m["properties"]["index"]) for m in got] == list(range(accepted))
    for m in got:
        i = int(m["properties"]["index"])
        assert m["data"] == big_payload(i, size), f"message {i} differs"
        assert m["encryption"] and m["encryption"]["key_names"] == ["k1"]


def test_the_rerunnable_cli_recipe_stores_each_line_once_on_a_partitioned_topic(
        service_url, dedup_topic, tmp_path):
    """docs/cli.md's recipe (--spool-dir, --producer-name, --sequence-id-start 0, the same
    input fed again after a crash) on a topic of 4 partitions: killed twice with kill -9,
    then run to its end, and every line is stored exactly once. Deduplication is per
    partition, so a rerun must put line i where the first run did: --sequence-id-start
    routes keyless lines by their id (messageRoutingMode=sequence_id); round robin by time
    sent them elsewhere and stored them twice."""
    topic = dedup_topic()
    ph.create_partitioned_topic(topic, 4)
    ph.wait_deduplication_enabled(topic, partitions=4)
    n = 20_000
    lines = tmp_path / "lines.txt"
    lines.write_bytes(b"".join(b"line-%06d\n" % i for i in range(n)))
    cmd = [ph.bin_path("pulsarc-produce"), "-u", service_url, "--stdin", "--producer-name",
           "importer-" + topic[-12:], "--spool-dir", str(tmp_path / "spool"),
           "--sequence-id-start", "0", "-r", "6000", topic]
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    for _ in range(2):
        with open(lines, "rb") as stdin:
            proc = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.8, 2.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    with open(lines, "rb") as stdin:
        done = subprocess.run(cmd, stdin=stdin, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    stored = ph.read_to_end(topic, partitions=4)
    got = sorted(m["data"] for m in stored)
    dups = len(got) - len(set(got))
    assert dups == 0, f"{dups} lines stored twice (seed {seed})"
    assert got == [b"line-%06d" % i for i in range(n)], f"lines missing (seed {seed})"
    # Where every run puts line i: its run of batchingMaxMessages (1000) ids, in turn.
    moved = [m["data"] for m in stored
             if m["message_id"][2] != (int(m["data"][5:]) // 1000) % 4]
    assert not moved, f"{len(moved)} lines on another partition, e.g. {moved[:3]} (seed {seed})"
