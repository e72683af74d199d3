"""The chaos run's workload driver (tests/chaos/chaos_producer.c, issue 29) on its own:
each workload for a moment against the standalone broker, the topic read back with the
official Python client, and the driver's event log held to what was read, as the chaos
run's verifier (tests/chaos/chaos.py) holds it: every `ok` counter stored exactly once,
each payload exactly its counter's, in order per partition and key, a clean end.

A workload ends either at --count or at SIGTERM (which must still flush and end
cleanly); the spool workload is killed with SIGKILL once and restarted on its spool. The
txn case needs the broker with transactions (scripts/broker-txn, `-m txn`). The failover
case puts a private TCP proxy (tests/proxy/faultproxy.py) in front of the standalone as
the "primary" and the standalone itself as the "secondary": stopping the proxy makes the
client switch, starting it again makes it switch back, with every connection closed and
the pending messages resent each time; both are one cluster, so (deduplicated) each
message is still stored exactly once."""

from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import pulsar_helpers as ph
from crypto_helpers import KeyPair, read_topic
from proxy_helpers import FaultProxy

TXN_URL = os.environ.get("PULSAR_TXN_SERVICE_URL", "pulsar://127.0.0.1:6675")
TXN_ADMIN_URL = os.environ.get("PULSAR_TXN_ADMIN_URL", "http://127.0.0.1:8075")
KEYS = ph.REPO_ROOT / "tests" / "keys"
PARTITIONS = 6
RESULT = r"[A-Z][A-Z0-9_]*"  # a pulsarc_result_name()


@pytest.fixture
def broker(request):
    """Overrides conftest's: the txn case needs the transaction broker (scripts/broker-txn),
    the others the default standalone. Fails, never skips, when the one needed is down."""
    if request.node.get_closest_marker("txn"):
        admin, how = TXN_ADMIN_URL, "scripts/broker-txn start"
    else:
        admin, how = ph.admin_url(), "scripts/broker start"
    try:
        urllib.request.urlopen(f"{admin}/admin/v2/clusters", timeout=5).close()
    except OSError as e:
        pytest.fail(f"broker not reachable at {admin} ({e}; start it with {how})", pytrace=False)


# --------------------------------------------------------------------------------------
# The event log
# --------------------------------------------------------------------------------------

GRAMMAR = {
    "start": re.compile(r"start (\d+) (\S+) (\d+)"),
    "created": re.compile(r"created"),
    "sending": re.compile(r"sending (\d+)(?: txn=(\d+) topic=([01]))?"),
    "accepted": re.compile(r"accepted (\d+)"),
    "refused": re.compile(rf"refused (\d+) ({RESULT})"),
    "ok": re.compile(r"ok (\d+) (-?\d+):(-?\d+):(-?\d+):(-?\d+)"),
    "failed": re.compile(rf"failed (\d+) ({RESULT})"),
    "txn-begin": re.compile(r"txn-begin (\d+)"),
    "txn-commit": re.compile(rf"txn-commit (\d+) (ok|{RESULT})"),
    "txn-abort": re.compile(rf"txn-abort (\d+) (ok|{RESULT})"),
    "flush": re.compile(rf"flush (ok|{RESULT})"),
    "end": re.compile(r"end (\d+) (\d+) (\d+)"),
}


@dataclass
class Incarnation:
    """One process's lines of the log."""
    pid: int
    workload: str
    first: int
    lines: list[tuple[str, tuple]] = field(default_factory=list)

    def all(self, kind: str) -> list[tuple]:
        return [args for k, args in self.lines if k == kind]

    def counters(self, kind: str) -> list[int]:
        return [int(a[0]) for a in self.all(kind)]


def parse_log(path: Path) -> list[Incarnation]:
    """Every line must be one of the spec's, whole (a kill -9 may not cut one)."""
    text = path.read_text()
    assert text.endswith("\n"), f"{path}: the last line is not whole"
    out: list[Incarnation] = []
    for n, line in enumerate(text.splitlines(), 1):
        kind = line.split(" ", 1)[0]
        m = GRAMMAR.get(kind) and GRAMMAR[kind].fullmatch(line)
        assert m, f"{path}:{n}: not a log line: {line!r}"
        if kind == "start":
            out.append(Incarnation(int(m[1]), m[2], int(m[3])))
        else:
            assert out, f"{path}:{n}: {line!r} before any start line"
            out[-1].lines.append((kind, m.groups()))
    return out


def check_clean_incarnation(inc: Incarnation) -> None:
    """created first, flush ok and end last, end's figures the log's own; every send
    accepted and called back once, with success."""
    kinds = [k for k, _ in inc.lines]
    assert kinds[0] == "created" and kinds.count("created") == 1, kinds[:3]
    assert kinds[-2:] == ["flush", "end"], kinds[-3:]
    assert inc.all("flush") == [("ok",)]
    accepted, ok = inc.counters("accepted"), inc.counters("ok")
    assert inc.all("refused") == [] and inc.all("failed") == []
    assert sorted(accepted) == sorted(set(accepted)), "a counter accepted twice"
    assert sorted(ok) == sorted(accepted), "each accepted send has one ok callback"
    assert set(inc.counters("sending")) == set(accepted)
    assert inc.all("end") == [(str(len(accepted)), str(len(ok)), "0")]


def ok_ids(incs: list[Incarnation]) -> dict[int, tuple]:
    ids = {}
    for inc in incs:
        for c, *mid in inc.all("ok"):
            assert int(c) not in ids, f"counter {c}: two ok lines"
            ids[int(c)] = tuple(map(int, mid))
    return ids


# --------------------------------------------------------------------------------------
# Payloads and the seeded choices
# --------------------------------------------------------------------------------------

M64 = (1 << 64) - 1
KEY, SIZE, TXN_SIZE, TXN_END, TOPIC = 1, 2, 3, 4, 5  # what a choice is for, as in the C


def _scramble(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def choose(seed: int, what: int, i: int) -> int:
    """The driver's random choice for counter (or transaction) i: choose() in
    chaos_producer.c, so the test knows what each message's key, size, transaction and
    topic were meant to be."""
    return _scramble(_scramble(_scramble(seed) ^ what) ^ i)


def expected_payload(workload: str, c: int, size: int) -> bytes:
    """"<workload>-<c, 9 digits>", then byte k of the payload is (c * 31 + k) & 0xff."""
    prefix = f"{workload}-{c:09d}".encode()
    period = bytes((c * 31 + k) & 0xFF for k in range(256))
    filler = period * (size // 256 + 1)
    return prefix + filler[len(prefix):size]


def counter_of(workload: str, data: bytes) -> int:
    """The counter a payload names; asserts the whole payload is that counter's."""
    head = f"{workload}-".encode()
    assert data.startswith(head) and data[len(head):len(head) + 9].isdigit(), data[:40]
    c = int(data[len(head):len(head) + 9])
    if workload == "chunked":
        # Its size as the default seed (1) chose it: 6 to 20 MiB.
        assert len(data) == (6 << 20) + choose(1, SIZE, c) % ((14 << 20) + 1), len(data)
        want = hashlib.sha256(expected_payload(workload, c, len(data))).digest()
        assert hashlib.sha256(data).digest() == want, f"chunked {c}: SHA-256 differs"
    else:
        assert data == expected_payload(workload, c, 100), f"counter {c}: {data!r}"
    return c


def check_stored(workload: str, incs: list[Incarnation], read: list[dict],
                 compare_ids: bool = True) -> list[int]:
    """What was read is what the log promises: every ok counter exactly once, nothing
    else, each partition in increasing order; each message where its ok line said (the
    id the callback had is the one the reader gets). Returns the counters read."""
    got = [counter_of(workload, m["data"]) for m in read]
    assert len(got) == len(set(got)), f"stored twice: {sorted(c for c in set(got) if got.count(c) > 1)}"
    ids = ok_ids(incs)
    assert set(got) == set(ids), (f"ok but not stored: {sorted(set(ids) - set(got))[:20]}; "
                                  f"stored without ok: {sorted(set(got) - set(ids))[:20]}")
    by_partition: dict[int, list[int]] = {}
    for c, m in zip(got, read):
        by_partition.setdefault(m["message_id"][2], []).append(c)
        if compare_ids:
            assert ids[c] == tuple(m["message_id"]), f"counter {c}: ok {ids[c]}, read {m['message_id']}"
    for p, cs in by_partition.items():
        assert cs == sorted(cs), f"partition {p} out of order: {cs}"
    return got


# --------------------------------------------------------------------------------------
# Running the driver
# --------------------------------------------------------------------------------------

def cmd(workload: str, url: str, log: Path, *args: str) -> list[str]:
    return [ph.bin_path("chaos_producer"), workload, url, str(log), *args]


def run(workload: str, url: str, log: Path, *args: str, timeout_s: float = 120) -> None:
    proc = subprocess.run(cmd(workload, url, log, *args), capture_output=True, timeout=timeout_s)
    assert proc.returncode == 0, (f"chaos_producer {workload} exited with {proc.returncode}:\n"
                                  + proc.stderr.decode(errors="replace")[-3000:])


def wait_for_lines(log: Path, kind: str, n: int, proc: subprocess.Popen,
                   timeout_s: float = 60) -> None:
    """Until the log has n lines of kind; fails at once when the driver ends first."""
    deadline = time.monotonic() + timeout_s
    while True:
        text = log.read_text() if log.exists() else ""
        if sum(1 for line in text.splitlines() if line.startswith(kind + " ")) >= n:
            return
        assert proc.poll() is None, f"the driver ended early ({proc.returncode}):\n{errors(log)}"
        assert time.monotonic() < deadline, f"no {n} {kind} lines in {log} within {timeout_s} s"
        time.sleep(0.005)


def errors(log: Path) -> str:
    """The end of what the drivers writing log wrote on stderr (start() keeps it)."""
    err = log.with_suffix(".err")
    return err.read_text(errors="replace")[-3000:] if err.exists() else ""


def start(workload: str, url: str, log: Path, *args: str) -> subprocess.Popen:
    """The driver in the background, its stderr appended to <log>.err (a file, not a
    pipe: nobody reads a pipe while it runs, and a full one would stop it)."""
    with open(log.with_suffix(".err"), "ab") as err:
        return subprocess.Popen(cmd(workload, url, log, *args), stdout=subprocess.DEVNULL,
                                stderr=err)


def stop(proc: subprocess.Popen, log: Path, sig=signal.SIGTERM, timeout_s: float = 60) -> None:
    """Signal the driver and wait for it: after SIGTERM it must end with 0."""
    proc.send_signal(sig)
    proc.wait(timeout=timeout_s)
    if sig == signal.SIGTERM:
        assert proc.returncode == 0, f"exit {proc.returncode} after SIGTERM:\n{errors(log)}"


# --------------------------------------------------------------------------------------
# The workloads
# --------------------------------------------------------------------------------------

def test_keyed_partitions_keys_and_order(service_url, unique_topic, tmp_path):
    topic = unique_topic("chaos-keyed")
    ph.create_partitioned_topic(topic, PARTITIONS)
    log = tmp_path / "keyed.log"
    run("keyed", service_url, log, "--topic", topic, "--count", "80", "--rate", "100",
        "--from", "1000", "--seed", "7")
    incs = parse_log(log)
    assert [(i.workload, i.first) for i in incs] == [("keyed", 1000)]
    check_clean_incarnation(incs[0])
    read = ph.read_to_end(topic, partitions=PARTITIONS)
    got = check_stored("keyed", incs, read)
    assert sorted(got) == list(range(1000, 1080))
    by_key: dict[str, list[int]] = {}
    for c, m in zip(got, read):
        key = m["partition_key"]
        assert key == f"key-{choose(7, KEY, c) % 16}", (c, key)
        assert m["message_id"][2] == ph.java_partition(key, PARTITIONS), (key, m["message_id"])
        by_key.setdefault(key, []).append(c)
    assert all(cs == sorted(cs) for cs in by_key.values())
    assert len(by_key) > 8, "the seed spreads 80 messages over most of the 16 keys"


def test_chunked_messages_are_split_and_reassemble(service_url, unique_topic, tmp_path):
    topic = unique_topic("chaos-chunked")
    log = tmp_path / "chunked.log"
    run("chunked", service_url, log, "--topic", topic, "--count", "2", "--rate", "0")
    incs = parse_log(log)
    check_clean_incarnation(incs[0])
    read = ph.read_messages(topic, 2, timeout_s=60, to_end=True)
    assert sorted(check_stored("chunked", incs, read)) == [0, 1]
    # zstd shrinks a payload about 8000 times: chunks only because the workload makes
    # them small, which the entries show (each message more than one entry).
    entries = ph.internal_stats(topic)["entriesAddedCounter"]
    assert entries >= 2 * 3, f"{entries} entries for 2 chunked messages"


def test_encrypted_decrypts_with_the_private_key_and_stops_on_sigterm(service_url, unique_topic,
                                                                       tmp_path):
    topic = unique_topic("chaos-encrypted")
    log = tmp_path / "encrypted.log"
    proc = start("encrypted", service_url, log, "--topic", topic, "--rate", "50",
                 "--encrypt", f"rsa1={KEYS / 'test_rsa1_pub.pem'}")
    wait_for_lines(log, "ok", 30, proc)
    stop(proc, log)
    incs = parse_log(log)
    check_clean_incarnation(incs[0])
    read = read_topic(topic, KeyPair(str(KEYS / "test_rsa1_pub.pem"),
                                     str(KEYS / "test_rsa1_priv.pem")))
    assert len(check_stored("encrypted", incs, read)) >= 30
    for m in read:
        enc = m["encryption"]
        assert enc and enc["key_names"] == ["rsa1"] and not enc["decryption_failed"], enc


def test_own_loop_sends_from_its_timer_and_stops_on_sigterm(service_url, unique_topic, tmp_path):
    topic = unique_topic("chaos-own-loop")
    log = tmp_path / "own-loop.log"
    proc = start("own-loop", service_url, log, "--topic", topic, "--rate", "50", "--from", "5")
    wait_for_lines(log, "ok", 40, proc)
    stop(proc, log)
    incs = parse_log(log)
    check_clean_incarnation(incs[0])
    got = check_stored("own-loop", incs, ph.read_to_end(topic))
    assert got == list(range(5, 5 + len(got))) and len(got) >= 40


def proxied(service_url: str, tmp_path: Path, port: int = 0) -> tuple[FaultProxy, str]:
    """A private fault proxy in front of the standalone, and the service URL through it
    (the producer's connection goes through it too)."""
    host, broker_port = service_url.rsplit("//", 1)[1].rsplit(":", 1)
    proxy = FaultProxy.start([(f"127.0.0.1:{port}", f"{host}:{broker_port}")],
                             log_path=tmp_path / "proxy.log")
    listen = proxy.listen_addresses[0]
    return proxy, f"pulsar://{listen[0]}:{listen[1]}"


def test_spool_killed_then_restarted_stores_every_accepted_message_once(service_url, dedup_topic,
                                                                      tmp_path):
    """The first incarnation is killed while the proxy holds its traffic, so messages it
    had accepted never reached the broker or got no receipt: only the spool has them, and
    the second incarnation (straight to the broker) must deliver each once."""
    topic = dedup_topic("chaos-spool")
    ph.create_topic(topic)
    ph.wait_deduplication_enabled(topic)
    name, spool, log = "chaos-spool-" + topic[-12:], tmp_path / "spool", tmp_path / "spool.log"
    args = ("--topic", topic, "--name", name, "--spool", str(spool))
    proxy, url = proxied(service_url, tmp_path)
    try:
        first = start("spool", url, log, *args, "--rate", "200")
        wait_for_lines(log, "ok", 100, first)
        proxy.stall()
        held_from = len(parse_log(log)[0].counters("accepted"))
        wait_for_lines(log, "accepted", held_from + 50, first)
        stop(first, log, signal.SIGKILL)
    finally:
        proxy.stop()
    killed = parse_log(log)[0]
    after = max(killed.counters("sending")) + 1
    run("spool", service_url, log, *args, "--from", str(after), "--count", "50", "--rate", "200")

    incs = parse_log(log)
    assert [(i.workload, i.first) for i in incs] == [("spool", 0), ("spool", after)]
    assert killed.all("end") == [] and killed.all("failed") == [] and killed.all("refused") == []
    check_clean_incarnation(incs[1])
    read = ph.read_to_end(topic)
    stored = [counter_of("spool", m["data"]) for m in read]
    assert len(stored) == len(set(stored)), "a counter stored twice"
    assert stored == sorted(stored), "out of order"
    # Every ok counter once, where its callback said (ids compared for ok lines only: the
    # resends of the second incarnation have no callback, and no line).
    ids = ok_ids(incs)
    check_stored("spool", incs, [m for c, m in zip(stored, read) if c in ids])
    accepted = set(killed.counters("accepted")) | set(incs[1].counters("accepted"))
    assert accepted <= set(stored), f"accepted, never stored: {sorted(accepted - set(stored))[:20]}"
    mid_send = set(killed.counters("sending")) - accepted
    assert set(stored) <= accepted | mid_send, "stored but never sent"
    from_spool = set(killed.counters("accepted")) - set(killed.counters("ok"))
    assert len(from_spool) >= 50, f"only {len(from_spool)} accepted messages were left to the spool"
    assert not list(spool.glob("*.seg")), "the spool is empty once everything is stored"


def test_failover_switches_away_and_back_without_loss(service_url, dedup_topic, tmp_path):
    topic = dedup_topic("chaos-failover")
    ph.create_topic(topic)
    ph.wait_deduplication_enabled(topic)
    log = tmp_path / "failover.log"
    proxy, primary = proxied(service_url, tmp_path)
    port = int(primary.rsplit(":", 1)[1])

    def switches() -> int:
        return log.with_suffix(".err").read_text().count("cluster failover: switching")

    proc = start("failover", primary, log, "--topic", topic, "--rate", "50",
                 "--secondary", service_url, "--client-conf", "failoverDelayMs=1000",
                 "--client-conf", "switchBackDelayMs=2000",
                 "--client-conf", "failoverCheckIntervalMs=200")
    try:
        wait_for_lines(log, "ok", 20, proc)
        proxy.stop()  # the primary is unreachable: after 1 s the client switches
        ph.wait_for(lambda: switches() == 1, timeout_s=20, what="the switch to the secondary")
        wait_for_lines(log, "ok", 60, proc)
        proxy, _ = proxied(service_url, tmp_path, port)
        ph.wait_for(lambda: switches() == 2, timeout_s=20, what="the switch back to the primary")
        wait_for_lines(log, "ok", 120, proc)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        proxy.stop()
    assert proc.returncode == 0, errors(log)
    incs = parse_log(log)
    check_clean_incarnation(incs[0])
    # A message resent to the other cluster gets the id of its second store, which
    # deduplication (one cluster here) may name -1:-1: ids are not compared.
    got = check_stored("failover", incs, ph.read_to_end(topic), compare_ids=False)
    assert got == list(range(len(got))) and len(got) >= 120
    assert switches() == 2


# --------------------------------------------------------------------------------------
# Transactions (the broker with the coordinator on)
# --------------------------------------------------------------------------------------

@pytest.mark.txn
def test_txn_commits_are_visible_aborts_never(unique_topic, tmp_path):
    topics = [unique_topic(f"chaos-txn-{i}") for i in range(2)]
    log = tmp_path / "txn.log"
    proc = start("txn", TXN_URL, log, "--topic", topics[0], "--topic", topics[1],
                 "--rate", "40", "--seed", "3")
    wait_for_lines(log, "txn-commit", 2, proc)
    wait_for_lines(log, "txn-abort", 1, proc)

    def inside_a_long_transaction():
        """(t, its sends so far) when transaction t, of 8 messages or more, is open and
        has at most 2 of them sent (the signal then lands well inside it)."""
        inc = parse_log(log)[0]
        txn_lines = [(k, a) for k, a in inc.lines if k.startswith("txn-")]
        if txn_lines[-1][0] != "txn-begin":
            return None
        t = int(txn_lines[-1][1][0])
        sent = sum(1 for c, tt, _ in inc.all("sending") if int(tt) == t)
        return (t, sent) if 1 + choose(3, TXN_SIZE, t) % 20 >= 8 and sent <= 2 else None
    t_stopped, sent_before = ph.wait_for(inside_a_long_transaction, timeout_s=60, interval_s=0.005,
                                         what="a long transaction to begin")
    stop(proc, log)  # it must end as planned first
    incs = parse_log(log)
    check_clean_incarnation(incs[0])
    inc = incs[0]

    # Which transaction and topic each counter went to, and how each transaction ended.
    planned = {int(c): (int(t), int(topic)) for c, t, topic in inc.all("sending")}
    ended = {int(t): how for how in ("commit", "abort")
             for t, res in inc.all(f"txn-{how}") if res == "ok"}
    begun = [int(t) for (t,) in inc.all("txn-begin")]
    assert begun == list(range(len(begun))) and sorted(ended) == begun, \
        "every transaction begun ends, the last one too, and each end succeeded"
    kinds = [k for k, _ in inc.lines if k.startswith("txn-")]
    assert kinds[-1] in ("txn-commit", "txn-abort") and kinds[-2] == "txn-begin"
    # Each as planned, the one SIGTERM interrupted too: its size, its end, its topics.
    for t in begun:
        cs = sorted(c for c, (tt, _) in planned.items() if tt == t)
        assert len(cs) == 1 + choose(3, TXN_SIZE, t) % 20, f"transaction {t}: {len(cs)} messages"
        assert ended[t] == ("commit" if choose(3, TXN_END, t) % 100 < 70 else "abort"), t
    assert all(topic == choose(3, TOPIC, c) & 1 for c, (_, topic) in planned.items())
    assert begun[-1] == t_stopped and sent_before < 8, "the signal came inside the last one"

    client = ph.make_client(TXN_URL)
    try:
        read = [ph.read_messages(t, 0, timeout_s=0.1, to_end=True, client=client) for t in topics]
    finally:
        client.close()
    visible = {}
    for t, messages in enumerate(read):
        cs = [counter_of("txn", m["data"]) for m in messages]
        assert cs == sorted(cs), f"topic {t} out of order"
        for c in cs:
            assert c not in visible, f"counter {c} stored twice"
            assert planned.get(c, (None, t))[1] == t, f"counter {c} on topic {t}, sent elsewhere"
            visible[c] = t
    committed = {c for c, (t, _) in planned.items() if ended[t] == "commit"}
    assert set(ended.values()) == {"commit", "abort"}
    assert set(visible) == committed, (f"committed, not visible: {sorted(committed - set(visible))}; "
                                       f"visible, not committed: {sorted(set(visible) - committed)}")
