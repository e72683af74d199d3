"""Cluster failover between two real clusters: pulsarc-produce with failoverSecondaryUrls
(set through --client-conf, as a user would) sends to the rig, reached through a fault
proxy in front of its Pulsar proxy (the primary), and falls over to the standalone broker
(the secondary) when the fault proxy goes away, then back when it returns.

The fault proxy is the switch: stopped, nothing listens on its port any more, which is
what the client's TCP probe sees of a dead cluster (the rig itself keeps running, for the
other tests and the read-back). Each cluster has its own watcher (an official consumer)
that notes when each message arrives, for the failover figures; the verdict comes from
reading both topics back in full with the official client:

  * every message got its callback once (pulsarc-produce: sent=N failed=0);
  * every message is stored in one cluster or the other (the union is exactly what was
    sent), in order within each cluster;
  * a message may be stored in both: one in flight at a switch is resent to the new
    cluster, and deduplication does not span clusters (counted and printed, not an error).

Printed (pytest -s): the time from the cut to the first message stored by the secondary,
and from the primary's return to the first message stored by it again. Only the lower
bounds the client guarantees are asserted (it waits failoverDelayMs and switchBackDelayMs),
never a timing goal.
"""

from __future__ import annotations

import re
import subprocess
import threading
import time

import pulsar
import pytest

import cluster_helpers as ch
import pulsar_helpers as ph
from proxy_helpers import FaultProxy

FAILOVER_DELAY_MS = 2000
SWITCH_BACK_DELAY_MS = 4000
CHECK_INTERVAL_MS = 250
RATE = 400              # messages per second, written to pulsarc-produce's stdin
BEFORE_CUT = 800        # stored on the primary before it is cut
DURING_OUTAGE = 1200    # stored on the secondary before the primary comes back
AFTER_RETURN = 800      # stored on the primary again before sending stops

BROKER_SCRIPT = ph.REPO_ROOT / "scripts" / "broker"


@pytest.fixture(scope="module")
def standalone():
    """The standalone broker's service URL (the secondary cluster). scripts/test stops
    its own standalone before this layer; then this starts one, and stops only that."""
    started = False
    if subprocess.run([str(BROKER_SCRIPT), "status"], capture_output=True).returncode != 0:
        proc = subprocess.run([str(BROKER_SCRIPT), "start"], capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, f"scripts/broker start failed:\n{proc.stdout}\n{proc.stderr}"
        started = True
    yield ph.service_url()
    if started:
        subprocess.run([str(BROKER_SCRIPT), "stop"], capture_output=True, timeout=300)


class Watcher:
    """An official consumer that notes (message index, arrival time) as messages arrive."""

    def __init__(self, url: str, topic: str):
        self.client = ph.make_client(url)
        self.consumer = self.client.subscribe(
            topic, "failover-watch", consumer_type=pulsar.ConsumerType.Exclusive,
            initial_position=pulsar.InitialPosition.Earliest)
        self.arrivals: list[tuple[int, float]] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                msg = self.consumer.receive(timeout_millis=100)
            except pulsar.Timeout:
                continue
            now = time.monotonic()
            with self.lock:
                self.arrivals.append((int(msg.data().split(b"-")[1]), now))
            self.consumer.acknowledge(msg)

    def count(self) -> int:
        with self.lock:
            return len(self.arrivals)

    def first_after(self, t: float) -> float | None:
        with self.lock:
            return next((at for _, at in self.arrivals if at >= t), None)

    def wait_count(self, n: int, timeout_s: float, what: str) -> None:
        ph.wait_for(lambda: self.count() >= n, timeout_s=timeout_s, interval_s=0.02,
                    what=f"{n} messages on {what} ({self.count()} so far)")

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)
        self.client.close()


class Writer:
    """Feeds pulsarc-produce's stdin with "m-<index>" lines at RATE until stopped."""

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self.written = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        step = RATE // 20
        try:
            while not self.stop.is_set():
                lines = "".join(f"m-{self.written + i:07d}\n" for i in range(step))
                self.proc.stdin.write(lines.encode())
                self.proc.stdin.flush()
                self.written += step
                time.sleep(0.05)
        finally:
            self.proc.stdin.close()

    def finish(self) -> int:
        self.stop.set()
        self.thread.join(30)
        return self.written


def indices(messages: list[dict]) -> list[int]:
    return [int(m["data"].split(b"-")[1]) for m in messages]


def test_producer_fails_over_to_the_secondary_and_back(rig, client, standalone):
    topic = ph.unique_topic("failover")
    # The fault proxy sits in front of the rig's Pulsar proxy; its port is kept, so that
    # the same service URL works again when it is started anew.
    proxy = FaultProxy.start([("127.0.0.1:0", rig.proxy_url.split("://", 1)[1])])
    port = proxy.listen_addresses[0][1]
    primary_url = f"pulsar://127.0.0.1:{port}"
    on_primary = Watcher(rig.service_url, topic)
    on_secondary = Watcher(standalone, topic)
    args = [topic, "-u", primary_url, "--stdin",
            "--client-conf", f"failoverSecondaryUrls={standalone}",
            "--client-conf", f"failoverDelayMs={FAILOVER_DELAY_MS}",
            "--client-conf", f"switchBackDelayMs={SWITCH_BACK_DELAY_MS}",
            "--client-conf", f"failoverCheckIntervalMs={CHECK_INTERVAL_MS}",
            "--client-conf", "logLevel=info"]
    proc = subprocess.Popen([ph.bin_path("pulsarc-produce"), *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    writer = Writer(proc)
    try:
        on_primary.wait_count(BEFORE_CUT, 60, "the primary before the cut")
        t_cut = time.monotonic()
        proxy.stop()
        on_secondary.wait_count(1, 60, "the secondary after the cut")
        on_secondary.wait_count(DURING_OUTAGE, 60, "the secondary during the outage")
        stored_before_return = on_primary.count()
        proxy = FaultProxy.start([(f"127.0.0.1:{port}", rig.proxy_url.split("://", 1)[1])])
        t_up = time.monotonic()
        on_primary.wait_count(stored_before_return + AFTER_RETURN, 60,
                              "the primary after its return")
    finally:
        sent = writer.finish()
        proc.stdin = None  # closed by the writer: communicate() must not flush it
        try:
            out, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        proxy.stop()
        on_primary.close()
        on_secondary.close()
    log = err.decode(errors="replace")
    assert proc.returncode == 0, f"pulsarc-produce exited with {proc.returncode}\n{log[-4000:]}"
    m = re.search(rb"sent=(\d+) failed=(\d+)", out)
    assert m and (int(m[1]), int(m[2])) == (sent, 0), f"{out!r}\n{log[-4000:]}"
    assert log.count("cluster failover: switching from") == 2, log[-4000:]

    primary = indices(ph.read_to_end(topic, client=client))
    secondary_client = ph.make_client(standalone)
    try:
        secondary = indices(ph.read_to_end(topic, client=secondary_client))
    finally:
        secondary_client.close()
    assert set(primary) | set(secondary) == set(range(sent)), "a message is missing"
    for name, got in (("primary", primary), ("secondary", secondary)):
        assert got == sorted(set(got)), f"{name}: out of order or stored twice"
    in_both = sorted(set(primary) & set(secondary))

    failover_s = on_secondary.first_after(t_cut) - t_cut
    switch_back_s = on_primary.first_after(t_up) - t_up
    print(f"\nfailover figures: {sent} messages at {RATE}/s; failoverDelayMs={FAILOVER_DELAY_MS} "
          f"switchBackDelayMs={SWITCH_BACK_DELAY_MS} failoverCheckIntervalMs={CHECK_INTERVAL_MS}\n"
          f"  primary cut -> first message stored by the secondary: {failover_s:.2f} s\n"
          f"  primary back -> first message stored by it again:     {switch_back_s:.2f} s\n"
          f"  stored by the primary {len(primary)}, by the secondary {len(secondary)}, "
          f"by both {len(in_both)} {in_both[:20]}")
    # The client waits the delays out (from the first failed, or good, probe after them).
    assert failover_s >= FAILOVER_DELAY_MS / 1000
    assert switch_back_s >= SWITCH_BACK_DELAY_MS / 1000
