"""Blue-green migration (PIP-188) between two real clusters: pulsarc-produce sends to a
topic on the rig (the old, "blue" cluster) while the test marks it migrated to the
standalone broker (the new, "green" cluster) through the rig's admin API; the brokers tell
the producer TOPIC_MIGRATED, and it moves to the standalone with its pending messages and
sequence ids. The topic exists on both clusters, with deduplication on.

What marks it migrated: the rig's cluster gets the green cluster's URLs
(POST /admin/v2/clusters/{cluster}/migrate?migrated=false, body ClusterUrl) and only this
test's namespace is marked migrated (POST /admin/v2/namespaces/{ns}/migration, true). A
broker migrates a topic when its cluster is migrated or its namespace is (Pulsar 4.0's
AbstractTopic.getMigratedClusterUrlAsync); marking the whole rig migrated would migrate
every topic it has loaded, for good (each one's managed ledger is marked migrated), and
the rig is shared with the tests and the chaos run after this one. The brokers look for
migrated topics every clusterMigrationCheckDurationSeconds (conf/cluster/broker.conf: 1;
Pulsar's default, 0, never looks). Afterwards the namespace is marked not migrated and
the cluster's migration policy is put back as it was (or left unmigrated).

Checked, reading both clusters back in full with the official client:
  * every message got its callback once (pulsarc-produce: sent=N failed=0);
  * the green cluster stored every message that was not stored by the blue one, each
    once, in order, and the blue cluster a prefix of the messages: the union is exactly
    what was sent, nothing is stored twice, by one cluster or by both;
  * pulsarc logged the move once (INFO) and followed it to the standalone.
Printed (pytest -s): how many messages each cluster stored, the time from marking the
namespace migrated to the first message stored by the green cluster.
"""

from __future__ import annotations

import subprocess
import time

import cluster_helpers as ch
import pulsar_helpers as ph

RATE = 200          # messages per second, written to pulsarc-produce's stdin
BEFORE = 300        # stored on the blue cluster before it is marked migrated
AFTER = 300         # stored on the green cluster before sending stops


def _migration_policy(rig: ch.Cluster):
    """The rig's cluster migration policy ({'migrated': bool, 'migratedClusterUrl': ...}),
    or None when it has none."""
    try:
        return ch.admin(rig.admin_url, "GET", f"/admin/v2/clusters/{rig.name}/migrate")
    except ph.AdminError as e:
        if e.status == 404:
            return None
        raise


def stored_on_blue(rig: ch.Cluster, ns: str) -> int:
    stats = ch.admin(rig.admin_url, "GET", f"/admin/v2/persistent/{ns}/t/stats")
    return int(stats.get("msgInCounter", 0))


def _check_interval_s(rig: ch.Cluster) -> int:
    conf = ch.admin(rig.brokers[0].admin_url, "GET", "/admin/v2/brokers/configuration/runtime")
    return int(conf.get("clusterMigrationCheckDurationSeconds", "0"))


def test_producer_follows_a_topic_migrated_to_another_cluster(rig, client, standalone_broker):
    green_url, green_admin = standalone_broker
    interval = _check_interval_s(rig)
    assert interval > 0, (
        "the rig's brokers run with clusterMigrationCheckDurationSeconds=0 (never look for "
        "migrated topics): it was started from an older conf/cluster/broker.conf; restart "
        "it (scripts/cluster stop; scripts/cluster start)")
    ns = ch.create_namespace(rig, bundles=1, prefix="migrate", dedup=True)
    topic = f"persistent://{ns}/t"
    # The same namespace and topic on the green cluster, deduplication on there too.
    ch.admin(green_admin, "PUT", f"/admin/v2/namespaces/{ns}")
    ch.admin(green_admin, "POST", f"/admin/v2/namespaces/{ns}/deduplication", True)
    ch.admin(green_admin, "PUT", f"/admin/v2/persistent/{ns}/t")
    ch.admin(rig.admin_url, "PUT", f"/admin/v2/persistent/{ns}/t")

    before = _migration_policy(rig)
    green = {"serviceUrl": green_admin, "brokerServiceUrl": green_url}
    on_green = ch.Watcher(green_url, topic)
    args = [topic, "-u", rig.service_url, "--stdin", "--client-conf", "logLevel=info"]
    proc = subprocess.Popen([ph.bin_path("pulsarc-produce"), *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    writer = ch.Writer(proc, RATE)
    t0 = time.monotonic()
    try:
        # No subscription on blue while it migrates: the brokers would move its consumer
        # to green too (the official client follows), where the watcher has one.
        ph.wait_for(lambda: stored_on_blue(rig, ns) >= BEFORE, timeout_s=60, interval_s=0.05,
                    what=f"{BEFORE} messages on the blue cluster before the migration")
        ch.admin(rig.admin_url, "POST",
                    f"/admin/v2/clusters/{rig.name}/migrate?migrated=false", green)
        t_mark = time.monotonic()
        ch.admin(rig.admin_url, "POST", f"/admin/v2/namespaces/{ns}/migration", True)
        on_green.wait_count(1, 30, "the green cluster after the migration")
        on_green.wait_count(AFTER, 30, "the green cluster")
    finally:
        sent, out, err = writer.finish(60)
        on_green.close()
        # Put the rig back: the namespace, then the cluster's policy.
        ch.admin(rig.admin_url, "POST", f"/admin/v2/namespaces/{ns}/migration", False)
        restore = (before or {}).get("migratedClusterUrl") or green
        ch.admin(rig.admin_url, "POST",
                    f"/admin/v2/clusters/{rig.name}/migrate?migrated="
                    f"{'true' if before and before.get('migrated') else 'false'}", restore)
    log = ch.assert_all_sent(proc, sent, out, err)
    moves = log.count("the topic moved to another cluster (TOPIC_MIGRATED)")
    assert moves == 1, f"{moves} moves logged\n{log[-4000:]}"
    assert green_url.split("://", 1)[1] in log, f"the log does not name {green_url}\n{log[-4000:]}"
    assert "handled as CLOSE_PRODUCER" not in log, log[-4000:]

    blue = ch.indices(ph.read_to_end(topic, client=client))
    greens = ch.indices_on(green_url, topic)
    in_both = sorted(set(blue) & set(greens))
    first_green = on_green.first_after(t_mark)
    print(f"\nmigration figures: {sent} messages at {RATE}/s in {time.monotonic() - t0:.1f} s; "
          f"clusterMigrationCheckDurationSeconds={interval}\n"
          f"  stored by the blue cluster (the rig) {len(blue)}, by the green one (the "
          f"standalone) {len(greens)}, by both {len(in_both)}\n"
          f"  namespace marked migrated -> first message stored by the green cluster: "
          f"{first_green - t_mark:.2f} s")
    assert blue == list(range(len(blue))), "the blue cluster did not store a prefix, in order"
    assert greens == list(range(len(blue), sent)), (
        f"the green cluster stored {len(greens)} messages, not {len(blue)}..{sent - 1} once "
        f"each in order (by both: {in_both[:20]})")
