"""pulsarc-perf against the real broker (issue 20, item 8): --partitions creates the
partitioned topics through the admin REST API before producing, --topics names them as
pulsar-perf does (TOPIC-0 .. TOPIC-(N-1)), and every message the tool counts as acked is
in the broker's stats. A topic that exists with another partition count is refused.
pulsar-perf produce's command lines (issue 31) mean what they mean to pulsar-perf, and a
wrong argument is named."""

import re

import pytest

import pulsar_helpers as ph

MESSAGES = 3000  # at 3000 msg/s: about a second, and a count the broker must show


def result(stdout: bytes) -> dict:
    m = re.search(rb"^RESULT (.*)$", stdout, re.M)
    assert m, stdout.decode(errors="replace")
    return dict(kv.split("=", 1) for kv in m[1].decode().split())


def run_perf(service_url, admin_url, base, *extra, check=True):
    return ph.run_bin("pulsarc-perf", "-u", service_url, "--admin-url", admin_url, base,
                      "-m", str(MESSAGES), "-r", str(MESSAGES), "--stats-interval", "0",
                      *extra, timeout_s=120, check=check)


def test_partitions_and_topics_are_created_and_filled(service_url, admin_url, unique_topic):
    base = unique_topic("perf-tool")
    proc = run_perf(service_url, admin_url, base, "--partitions", "3", "--topics", "2")
    r = result(proc.stdout)
    assert int(r["msgs"]) == MESSAGES and r["failed"] == "0" and r["producers"] == "2", r
    assert b"2 created, 0 already there" in proc.stdout, proc.stdout

    stored = 0
    for name in (f"{base}-0", f"{base}-1"):
        assert ph.partitioned_metadata(name)["partitions"] == 3, name
        stats = ph.partitioned_stats(name)
        per_partition = [stats["partitions"][ph.partition_name(name, i)]["msgInCounter"]
                         for i in range(3)]
        assert all(n > 0 for n in per_partition), (name, per_partition)
        stored += stats["msgInCounter"]
    assert stored == MESSAGES
    # Exactly those two: with more than one topic the base name itself is not used.
    partitioned = ph.admin_request("GET", "/admin/v2/persistent/public/default/partitioned")
    assert sorted(t for t in partitioned if t.startswith(base)) == [f"{base}-0", f"{base}-1"]


def test_existing_topic_is_reused_only_with_its_partition_count(service_url, admin_url,
                                                               unique_topic):
    base = unique_topic("perf-tool-existing")
    ph.create_partitioned_topic(base, 2)

    proc = run_perf(service_url, admin_url, base, "--partitions", "2")
    assert b"0 created, 1 already there" in proc.stdout, proc.stdout
    assert ph.partitioned_stats(base)["msgInCounter"] == MESSAGES

    proc = run_perf(service_url, admin_url, base, "--partitions", "4", check=False)
    assert proc.returncode == 2
    assert b"exists with 2 partitions, not 4" in proc.stderr, proc.stderr
    assert ph.partitioned_metadata(base)["partitions"] == 2


def test_histogram_file_has_the_percentile_distribution(service_url, admin_url, unique_topic,
                                                        tmp_path):
    path = tmp_path / "latency.hgrm"
    proc = run_perf(service_url, admin_url, unique_topic("perf-tool-hist"),
                    "--histogram-file", str(path))
    r = result(proc.stdout)
    lines = path.read_text().splitlines()
    assert lines[0].split() == ["Value", "Percentile", "TotalCount", "1/(1-Percentile)"]
    rows = [line.split() for line in lines[2:] if line and not line.startswith("#")]
    percentiles = [float(row[1]) for row in rows]
    counts = [int(row[2]) for row in rows]
    assert percentiles == sorted(percentiles) and percentiles[-1] == 1.0
    assert counts == sorted(counts)
    # Every message is timed below 100,000 msg/s (-r), each exactly once.
    assert counts[-1] == int(r["msgs"]) == MESSAGES
    assert f"Total count    = {MESSAGES:12d}]" in lines[-2]
    assert float(rows[-1][0]) == pytest.approx(float(r["max_ms"]), abs=0.001)


def test_pulsar_perf_command_lines(service_url, unique_topic):
    # The habit that once sent millions of messages to a topic named "1": -m is the count
    # and -t the number of topics.
    topic = unique_topic("perf-tool-habit")
    proc = ph.run_bin("pulsarc-perf", "produce", "-u", service_url, "-m", "200", "-t", "1",
                      "-r", "2000", "--stats-interval", "0", topic, timeout_s=120)
    assert result(proc.stdout)["msgs"] == "200"
    assert ph.topic_stats(topic)["msgInCounter"] == 200
    # -t 2 -n 2 with one topic: TOPIC-0 and TOPIC-1, two producers each; -m=N, -mk, -pn,
    # -am, -db, -z as pulsar-perf spells them.
    base = unique_topic("perf-tool-two")
    proc = ph.run_bin("pulsarc-perf", "produce", "-u", service_url, "-t", "2", "-n", "2",
                      "-m=400", "-r=0", "-s", "64", "-mk", "autoIncrement", "-pn", "perfname",
                      "-am", "Shared", "-db", "-z", "LZ4", "--stats-interval", "0", base,
                      timeout_s=120)
    r = result(proc.stdout)
    assert r["msgs"] == "400" and r["producers"] == "4" and r["size"] == "64", r
    got = ph.read_messages(f"{base}-0", 200) + ph.read_messages(f"{base}-1", 200)
    assert sorted(int(m["partition_key"]) for m in got) == list(range(400))
    names = {m["producer_name"] for m in got}
    assert names == {f"perfname-{i}" for i in range(4)}, names


def test_many_topics_batches_are_stored_whole_and_in_order(service_url, unique_topic):
    # 20 producers take turns and each batch of 200 waits (-b 50) among the others', so a
    # batch is spread over 4,000 messages: past what the library takes to be in the
    # caches, its records are fetched ahead of its walks (src/producer/records.h). The
    # official client reads every message back, each topic's in the order it was sent.
    topics, per_topic = 20, 1000
    base = unique_topic("perf-tool-many")
    proc = ph.run_bin("pulsarc-perf", "produce", "-u", service_url, "-t", str(topics),
                      "-m", str(topics * per_topic), "-r", "0", "-s", "100", "-bm", "200",
                      "-b", "50", "-mk", "autoIncrement", "--stats-interval", "0", base,
                      timeout_s=120)
    r = result(proc.stdout)
    assert r["msgs"] == str(topics * per_topic) and r["failed"] == "0", r
    every = []
    client = ph.make_client()
    try:
        for t in range(topics):
            got = ph.read_messages(f"{base}-{t}", per_topic, to_end=True, client=client)
            keys = [int(m["partition_key"]) for m in got]
            assert len(keys) == per_topic, (t, len(keys))
            assert keys == sorted(keys), f"topic {t} out of order"
            assert all(len(m["data"]) == 100 for m in got)
            every += keys
    finally:
        client.close()
    assert sorted(every) == list(range(topics * per_topic))


@pytest.mark.parametrize("args,message", [
    (["-r", "fast"], b'-r: bad value "fast"'),
    (["-m"], b"-m needs a value"),
    (["-time"], b"-time needs a value"),
    (["-mk", "sequential"], b'-mk: bad value "sequential" (autoIncrement or random)'),
    (["-x"], b"unknown option -x"),
    (["-k", "name"], b"-k needs -v too"),
    (["-t", "3", "a", "b"], b"-t 3: 2 topics were named"),
    (["-f", "payloads.txt"], b"-f is not supported"),
    (["-txn", "-nmt", "0"], b'-nmt: bad value "0" (1 or more)'),
    (["-txn", "-tto", "0"], b'-tto: bad value "0" (1 to 2147483 seconds)'),
])
def test_a_wrong_argument_is_named(service_url, args, message):
    proc = ph.run_bin("pulsarc-perf", "produce", "-u", service_url, *args, check=False,
                      timeout_s=30)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr, proc.stderr
