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

import subprocess
import time

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

def test_producer_fails_over_to_the_secondary_and_back(rig, client, standalone):
    topic = ph.unique_topic("failover")
    # The fault proxy sits in front of the rig's Pulsar proxy; its port is kept, so that
    # the same service URL works again when it is started anew.
    proxy = FaultProxy.start([("127.0.0.1:0", rig.proxy_url.split("://", 1)[1])])
    port = proxy.listen_addresses[0][1]
    primary_url = f"pulsar://127.0.0.1:{port}"
    on_primary = ch.Watcher(rig.service_url, topic)
    on_secondary = ch.Watcher(standalone, topic)
    args = [topic, "-u", primary_url, "--stdin",
            "--client-conf", f"failoverSecondaryUrls={standalone}",
            "--client-conf", f"failoverDelayMs={FAILOVER_DELAY_MS}",
            "--client-conf", f"switchBackDelayMs={SWITCH_BACK_DELAY_MS}",
            "--client-conf", f"failoverCheckIntervalMs={CHECK_INTERVAL_MS}",
            "--client-conf", "logLevel=info"]
    proc = subprocess.Popen([ph.bin_path("pulsarc-produce"), *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    writer = ch.Writer(proc, RATE)
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
        sent, out, err = writer.finish()
        proxy.stop()
        on_primary.close()
        on_secondary.close()
    log = ch.assert_all_sent(proc, sent, out, err)
    assert log.count("cluster failover: switching from") == 2, log[-4000:]

    primary = ch.indices(ph.read_to_end(topic, client=client))
    secondary = ch.indices_on(standalone, topic)
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
