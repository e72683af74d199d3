"""The producer's accessors (name, last sequence id, pending count, topic) are called in a
tight loop from another thread while partitions are added to the topic. scripts/test runs
this against the ThreadSanitizer build too, where a race with the partition updates makes
the program exit non-zero."""

from __future__ import annotations

import subprocess
import threading

import pulsar_helpers as ph

COUNTS = (2, 4, 6)
HANG_GUARD_S = 300


def test_accessors_while_partitions_are_added(service_url, unique_topic, bin_path):
    topic = unique_topic()
    ph.create_partitioned_topic(topic, COUNTS[0])
    proc = subprocess.Popen([bin_path("interop_accessors"), service_url, topic,
                             *map(str, COUNTS)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    guard = threading.Timer(HANG_GUARD_S, proc.kill)
    guard.start()
    try:
        reached = []
        last_line = ""
        # The driver prints each partition count as its router first sees it; raise the
        # count to the next one each time.
        for line in proc.stdout:
            if line.startswith("partitions="):
                reached.append(int(line.split("=", 1)[1]))
                following = [c for c in COUNTS if c > reached[-1]]
                if following:
                    ph.update_partitions(topic, following[0])
            last_line = line
        err = proc.stderr.read()
        rc = proc.wait()
    finally:
        guard.cancel()
        if proc.poll() is None:
            proc.kill()
    assert rc == 0, f"interop_accessors exited with {rc}\n--- stderr ---\n{err}"
    assert reached == list(COUNTS), reached
    assert "failed=0" in last_line, last_line
    # Every partition, the added ones included, got messages.
    stats = ph.partitioned_stats(topic)
    per_partition = stats.get("partitions", {})
    assert len(per_partition) == COUNTS[-1], sorted(per_partition)
    for name, s in per_partition.items():
        assert s.get("msgInCounter", 0) > 0, f"{name} got no messages"
