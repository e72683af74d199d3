"""Transactions against a broker with the transaction coordinator on (scripts/broker-txn):
pulsarc sends in transactions (tests/interop/interop_txn.c), the official Python client
reads, and it only ever sees committed messages.

Run with `-m txn` after `eval "$(scripts/broker-txn env)"`; scripts/test does both."""

from __future__ import annotations

import os
import subprocess
import time
import urllib.request

import pytest

import pulsar_helpers as ph

pytestmark = pytest.mark.txn

TXN_URL = os.environ.get("PULSAR_TXN_SERVICE_URL", "pulsar://127.0.0.1:6675")
TXN_ADMIN_URL = os.environ.get("PULSAR_TXN_ADMIN_URL", "http://127.0.0.1:8075")


@pytest.fixture(scope="session")
def broker():
    """Overrides conftest's autouse `broker`: these tests need the transaction broker only
    (the default one may be stopped while they run)."""
    try:
        urllib.request.urlopen(f"{TXN_ADMIN_URL}/admin/v2/clusters", timeout=5).close()
    except OSError as e:
        pytest.fail(f"transaction broker not reachable at {TXN_ADMIN_URL} ({e}; start it with "
                    "scripts/broker-txn start)", pytrace=False)
    return TXN_ADMIN_URL


def read_all(topic: str, expect: int) -> list[bytes]:
    """Everything a reader from the earliest message gets: expect messages, then whatever
    else is readable up to the end (the broker's last message id stops before an open
    transaction's messages and skips an aborted one's, so the end is exact)."""
    client = ph.make_client(TXN_URL)
    try:
        return [m["data"] for m in ph.read_messages(topic, expect, timeout_s=30 if expect else 0.1,
                                                    to_end=True, client=client)]
    finally:
        client.close()


def run_txn(mode: str, n: int, topics: list[str], timeout_s: float = 120) -> str:
    proc = ph.run_bin("interop_txn", TXN_URL, mode, str(n), *topics, timeout_s=timeout_s)
    return proc.stdout.decode().strip().splitlines()[-1]


def expected(t: int, n: int) -> list[bytes]:
    return [f"{t}-{i}".encode() for i in range(n)]


def test_commit_makes_three_topics_visible(unique_topic):
    topics = [unique_topic(f"txn-commit-{i}") for i in range(3)]
    assert run_txn("commit", 10, topics) == "end=OK state=3 sends_failed=0"
    for t, topic in enumerate(topics):
        assert read_all(topic, 10) == expected(t, 10)


def test_abort_is_never_visible(unique_topic):
    topics = [unique_topic(f"txn-abort-{i}") for i in range(3)]
    assert run_txn("abort", 10, topics) == "end=OK state=4 sends_failed=0"
    for topic in topics:
        assert read_all(topic, 0) == []


def test_open_transaction_is_visible_only_after_commit(unique_topic):
    topics = [unique_topic(f"txn-open-{i}") for i in range(2)]
    proc = subprocess.Popen([ph.bin_path("interop_txn"), TXN_URL, "hold", "5", *topics],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "sent"  # every send has its receipt
        for topic in topics:
            assert read_all(topic, 0) == []
        proc.stdin.write("go\n")
        proc.stdin.flush()
        out, _ = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert out.strip().splitlines()[-1] == "end=OK state=3 sends_failed=0"
    for t, topic in enumerate(topics):
        assert read_all(topic, 5) == expected(t, 5)


def test_interleaved_transactions_on_one_batching_producer(unique_topic):
    topic = unique_topic("txn-interleave")
    n = 6
    out = ph.run_bin("interop_txn", TXN_URL, "interleave", str(n), topic,
                     timeout_s=120).stdout.decode().split()
    assert out == [f"txn={i}" if k == 0 else "end=OK" for i in range(n) for k in range(2)]
    got = read_all(topic, 5 * (n // 2))
    # The committed (even) transactions' messages, each whole, in the order sent.
    assert sorted(got) == sorted(f"{i}-{r}".encode() for i in range(0, n, 2) for r in range(5))
    for i in range(0, n, 2):
        assert [m for m in got if m.startswith(f"{i}-".encode())] == \
            [f"{i}-{r}".encode() for r in range(5)]


def test_broker_timeout_fails_sends_and_commit_with_named_errors(unique_topic):
    topic, new_topic = unique_topic("txn-expire"), unique_topic("txn-expire-new")
    proc = subprocess.Popen([ph.bin_path("interop_txn"), TXN_URL, "expire", "3", topic,
                             new_topic],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "sent"
        # The broker's timeout is 1 s; its timeout tracker runs about once a second.
        time.sleep(5)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        out, _ = proc.communicate(timeout=120)
    finally:
        proc.kill()
    lines = out.strip().splitlines()
    # A send to a partition the transaction had: the broker refuses it once its low water
    # mark passed the transaction, which other open transactions hold back; before that
    # it stores it in the aborted transaction, where no consumer ever gets it.
    assert lines[-3] in ("late=OK", "late=BROKER_NOT_ALLOWED"), lines
    # A partition it did not have: its registration with the coordinator fails.
    assert lines[-2] == "late_new=BROKER_TXN_NOT_FOUND", lines
    last = lines[-1]
    assert last.split()[0] in ("end=BROKER_INVALID_TXN_STATUS", "end=BROKER_TXN_NOT_FOUND"), last
    assert "state=5" in last
    assert read_all(topic, 0) == []
    assert read_all(new_topic, 0) == []


def produce_txn(topic: str, prefix: str, n: int, *flags: str) -> list[str]:
    """pulsarc-produce --stdin of lines <prefix>-0 .. <prefix>-(n-1) with the flags; its
    stdout lines."""
    lines = "".join(f"{prefix}-{i}\n" for i in range(n)).encode()
    proc = ph.run_bin("pulsarc-produce", topic, "-u", TXN_URL, "--stdin", *flags, input=lines,
                      timeout_s=120)
    return proc.stdout.decode().splitlines()


def test_cli_txn_batch_commits_and_txn_abort_aborts(unique_topic):
    topic = unique_topic("txn-cli")
    out = produce_txn(topic, "a", 25, "--txn-batch", "10")
    assert out[0].startswith("sent=25 failed=0 "), out
    assert out[2] == "transactions committed=3 aborted=0 failed=0", out
    out = produce_txn(topic, "b", 12, "--txn-batch", "5", "--txn-abort")
    assert out[0].startswith("sent=12 failed=0 "), out  # stored, in aborted transactions
    assert out[2] == "transactions committed=0 aborted=3 failed=0", out
    out = produce_txn(topic, "c", 4, "--txn-batch", "10")
    assert out[2] == "transactions committed=1 aborted=0 failed=0", out
    # The committed batches in order, the aborted ones nowhere.
    assert read_all(topic, 29) == [f"a-{i}".encode() for i in range(25)] + \
        [f"c-{i}".encode() for i in range(4)]

PERF_TXN_SIZE = 10


def perf_produce(topic: str, payload_file, *flags: str) -> None:
    """The Java peer: the tarball's pulsar-perf sends 30 messages (each payload_file's one
    line) in transactions of PERF_TXN_SIZE, committed (or aborted with -abort) as each
    fills."""
    home = os.environ.get("PULSAR_HOME_DIR")
    assert home, "PULSAR_HOME_DIR is not set: eval \"$(scripts/broker-txn env)\""
    perf = os.path.join(home, "bin", "pulsar-perf")
    env = dict(os.environ, PULSAR_MEM="-Xms64m -Xmx256m")
    proc = subprocess.run([perf, "produce", "-u", TXN_URL, "-au", TXN_ADMIN_URL, "-txn",
                           "-nmt", str(PERF_TXN_SIZE), "-m", "30", "-r", "100", "-i", "0",
                           "-f", str(payload_file), *flags, topic],
                          capture_output=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stdout.decode(errors="replace")[-4000:]


def test_java_peer_commit_and_abort_read_back_the_same(unique_topic, tmp_path):
    """The scenario of test_cli_txn_batch_commits_and_txn_abort_aborts with pulsar-perf
    -txn as the producer: what it committed is visible, in whole transactions; what it
    aborted never is."""
    topic = unique_topic("txn-java")
    commit_file, abort_file = tmp_path / "commit.txt", tmp_path / "abort.txt"
    commit_file.write_text("java-commit\n")
    abort_file.write_text("java-abort\n")
    perf_produce(topic, commit_file)
    perf_produce(topic, abort_file, "-abort")
    got = read_all(topic, 30)
    assert set(got) == {b"java-commit"}, sorted(set(got))
    # pulsar-perf may leave its last transaction open at exit (the broker then aborts it):
    # whole transactions only, and at least the ones it filled before that.
    assert len(got) % PERF_TXN_SIZE == 0 and len(got) >= 2 * PERF_TXN_SIZE, len(got)
