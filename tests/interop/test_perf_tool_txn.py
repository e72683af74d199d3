"""pulsarc-perf -txn against the broker with the transaction coordinator on
(scripts/broker-txn), as pulsar-perf produce -txn: every message in a transaction, one
transaction across every producer, committed (or with -abort aborted) after -nmt
messages. The official Python client reads what became visible: every message of a
committed run, none of an aborted one.

Run with `-m txn` after `eval "$(scripts/broker-txn env)"`; scripts/test does both."""

from __future__ import annotations

import os
import re
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


def perf(base: str, *flags: str) -> dict:
    """Runs pulsarc-perf with 100 messages as fast as it can; its RESULT line as a dict."""
    proc = ph.run_bin("pulsarc-perf", "produce", "-u", TXN_URL, "-m", "100", "-r", "0",
                      "--stats-interval", "0", *flags, base, timeout_s=120)
    m = re.search(rb"^RESULT (.*)$", proc.stdout, re.M)
    assert m, proc.stdout.decode(errors="replace")
    return dict(kv.split("=", 1) for kv in m[1].decode().split())


def visible(topic: str, expect: int) -> list[bytes]:
    """What a reader from the earliest message gets: expect messages, then whatever else is
    readable up to the end (the end stops before an open transaction's messages and skips
    an aborted one's, so the count is exact)."""
    client = ph.make_client(TXN_URL)
    try:
        return [m["data"] for m in ph.read_messages(topic, expect, timeout_s=30 if expect else 0.1,
                                                    to_end=True, client=client)]
    finally:
        client.close()


def test_committed_transactions_make_every_message_visible(unique_topic):
    # Two topics, one transaction across both producers at a time: 10 of 10 messages.
    base = unique_topic("perf-txn-commit")
    r = perf(base, "-t", "2", "-txn", "-nmt", "10")
    assert (r["msgs"], r["failed"], r["txn_committed"], r["txn_aborted"], r["txn_failed"]) == \
        ("100", "0", "10", "0", "0"), r
    assert len(visible(f"{base}-0", 50)) == 50
    assert len(visible(f"{base}-1", 50)) == 50


def test_aborted_transactions_leave_nothing_visible(unique_topic):
    topic = unique_topic("perf-txn-abort")
    r = perf(topic, "-txn", "-nmt", "10", "-abort")
    assert (r["msgs"], r["failed"], r["txn_committed"], r["txn_aborted"], r["txn_failed"]) == \
        ("100", "0", "0", "10", "0"), r
    assert visible(topic, 0) == []


def test_the_last_shorter_transaction_is_committed_too(unique_topic):
    # 30 + 30 + 30 + 10: pulsar-perf would leave the last 10 to the transaction timeout.
    topic = unique_topic("perf-txn-last")
    r = perf(topic, "--txn-enable", "--numMessage-perTransaction", "30", "--txn-timeout", "60")
    assert (r["msgs"], r["txn_committed"], r["txn_failed"]) == ("100", "4", "0"), r
    assert len(visible(topic, 100)) == 100
