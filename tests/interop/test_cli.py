"""pulsarc-produce against the real broker: per-line keys from standard input
(--key-separator), read back with the official Python client, and a terminal broker
error ending a --stdin run that would otherwise never end (issue 7)."""

import re
import subprocess

import pytest

import pulsar_helpers as ph

LINES = b"k1|a\nk2|b\nnokey\nk1|c|d\n"
# (payload, key) per line: split at the first '|', no key without one.
EXPECTED = [(b"a", "k1"), (b"b", "k2"), (b"nokey", None), (b"c|d", "k1")]
# Batches then leave only at the final flush, so which messages share one is certain.
HOLD_BATCHES = ["--batch-delay-ms", "60000"]


def summary(stdout: bytes) -> dict:
    m = re.search(rb"sent=(\d+) failed=(\d+)", stdout)
    assert m, stdout
    return {"sent": int(m[1]), "failed": int(m[2])}


def produce_lines(service_url, topic, *extra, lines=LINES, separator="|"):
    proc = ph.run_bin("pulsarc-produce", topic, "-u", service_url, "--stdin",
                      "--key-separator", separator, *extra, input=lines)
    return summary(proc.stdout)


def entry(m: dict) -> tuple:
    return m["message_id"][:2]


@pytest.mark.parametrize("batching", ["default", "key_based", "none"])
def test_key_separator_lines_read_back(service_url, unique_topic, batching):
    topic = unique_topic()
    extra = {"default": HOLD_BATCHES,
             "key_based": ["--key-based-batching", *HOLD_BATCHES],
             "none": ["--no-batching"]}[batching]
    assert produce_lines(service_url, topic, *extra) == {"sent": 4, "failed": 0}
    received = ph.read_messages(topic, 4, timeout_s=30, extra_wait_s=0.5)
    got = [(m["data"], m["partition_key"]) for m in received]
    if batching == "key_based":
        # One batch per key: the order holds per key only.
        assert sorted(got, key=repr) == sorted(EXPECTED, key=repr)
        assert [d for d, k in got if k == "k1"] == [b"a", b"c|d"]
        by_key = {k: {entry(m) for m in received if m["partition_key"] == k}
                  for k in ("k1", "k2", None)}
        assert all(len(entries) == 1 for entries in by_key.values()), by_key
        assert len(set().union(*by_key.values())) == 3, "a batch of its own per key"
        return
    assert got == EXPECTED
    if batching == "default":
        assert len({entry(m) for m in received}) == 1, "one batch for every key"
        return
    # One entry per message: the broker's headers tell "no key" from an empty key.
    for m, (_, key) in zip(received, EXPECTED):
        headers, _ = ph.get_message_by_id(topic, *entry(m))
        assert ph.header(headers, "X-Pulsar-partition-key") == key


def test_key_separator_with_repeated_stdin(service_url, unique_topic):
    # -n 2 reads standard input whole before sending: its lines are split the same way,
    # at a separator of two characters here; -m messages have no key.
    topic = unique_topic()
    assert produce_lines(service_url, topic, "-n", "2", "-m", "plain", separator="::",
                         lines=b"k::x::y\nnokey\n") == {"sent": 6, "failed": 0}
    received = ph.read_messages(topic, 6, timeout_s=30, extra_wait_s=0.5)
    assert [(m["data"], m["partition_key"]) for m in received] == \
        [(b"plain", None), (b"x::y", "k"), (b"nokey", None)] * 2


def test_key_separator_usage_errors(service_url, unique_topic):
    topic = unique_topic()
    cases = {
        "splits the lines of --stdin": ["-m", "x", "--key-separator", "|"],
        "must not be empty": ["--stdin", "--key-separator", ""],
        "cannot be combined": ["--stdin", "-k", "key", "--key-separator", "|"],
    }
    for message, args in cases.items():
        proc = ph.run_bin("pulsarc-produce", topic, "-u", service_url, *args, input=b"",
                          check=False, timeout_s=30)
        assert proc.returncode == 2, (args, proc.stderr)
        assert message.encode() in proc.stderr, (args, proc.stderr)
        assert proc.stdout == b"", "nothing was sent"


def start_cli(bin_path, tmp_path, service_url, topic, stdin, *extra):
    out = open(tmp_path / "stdout", "wb")
    err = open(tmp_path / "stderr", "wb")
    with out, err:
        return subprocess.Popen([bin_path("pulsarc-produce"), topic, "-u", service_url,
                                 "--stdin", "--key-separator", "|", *extra],
                                stdin=stdin, stdout=out, stderr=err)


def wait_for_stored_messages(topic):
    ph.wait_for(lambda: ph.last_message_id(topic)["entryId"] >= 0, timeout_s=60,
                what=f"messages stored on {topic}")


def terminate(topic):
    ph.admin_request("POST", "/admin/v2/" + ph.topic_rest_path(topic) + "/terminate")


def assert_stopped_by_termination(proc, tmp_path):
    try:
        status = proc.wait(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    stdout = (tmp_path / "stdout").read_bytes()
    stderr = (tmp_path / "stderr").read_bytes()
    assert status == 1, stderr[-3000:]
    assert re.search(rb"producer stopped: .*\[BROKER_TOPIC_TERMINATED\]", stderr), stderr[-3000:]
    return summary(stdout)


@pytest.mark.parametrize("rate", ["0", "200"], ids=["unpaced", "paced"])
def test_terminated_topic_ends_endless_stdin(bin_path, service_url, unique_topic, tmp_path,
                                             rate):
    topic = unique_topic()
    # `yes` never stops writing: only the CLI giving up ends the run (yes then gets
    # SIGPIPE).
    lines = subprocess.Popen(["yes", "key|payload"], stdout=subprocess.PIPE)
    try:
        proc = start_cli(bin_path, tmp_path, service_url, topic, lines.stdout,
                         "--rate", rate, "--max-pending", "100")
        lines.stdout.close()
        wait_for_stored_messages(topic)
        terminate(topic)
        result = assert_stopped_by_termination(proc, tmp_path)
    finally:
        lines.kill()
        lines.wait()
    # What failed is about what was pending when the topic ended (--max-pending, and the
    # few sends that raced the first failure), not a stream of doomed sends.
    assert 1 <= result["failed"] <= 200, result


def test_terminated_topic_ends_idle_stdin(bin_path, service_url, unique_topic, tmp_path):
    # Standard input stays open and quiet after one more line: the failure of that line
    # must end the run, not the next line or the end of input.
    topic = unique_topic()
    proc = start_cli(bin_path, tmp_path, service_url, topic, subprocess.PIPE)
    try:
        proc.stdin.write(b"k|before\n")
        proc.stdin.flush()
        wait_for_stored_messages(topic)
        terminate(topic)
        proc.stdin.write(b"k|after\n")
        proc.stdin.flush()
        result = assert_stopped_by_termination(proc, tmp_path)
    finally:
        proc.stdin.close()
    assert result == {"sent": 1, "failed": 1}


def test_pulsar_client_produce_flags_and_conf_file(service_url, unique_topic, tmp_path):
    # The flags of `pulsar-client produce` mean the same here (-s splits -m values, -db
    # turns batching off), and a client.conf gives the service URL: unknown keys are
    # warned about without their values.
    topic = unique_topic()
    conf = tmp_path / "client.conf"
    conf.write_text(f"# Pulsar's format\nbrokerServiceUrl={service_url}\n"
                    "webServiceUrl=http://localhost:8080/\nmySecretKey=hunter2\n")
    proc = ph.run_bin("pulsarc-produce", topic, "--conf-file", str(conf), "-m", "a;b",
                      "-s", ";", "-m", "-db", "-db", "-p", "k=v")
    assert summary(proc.stdout) == {"sent": 3, "failed": 0}
    assert b"mySecretKey: unknown key" in proc.stderr and b"hunter2" not in proc.stderr
    received = ph.read_messages(topic, 3, timeout_s=30, extra_wait_s=0.5)
    assert [m["data"] for m in received] == [b"a", b"b", b"-db"]
    assert all(m["properties"] == {"k": "v"} for m in received)


def test_refused_pulsar_client_flags(service_url, unique_topic):
    cases = {
        "geo-replication": ["-dr"],
        "a KeyValue key from a file": ["-kvkf", "key.bin"],
        "json needs a definition": ["-vs", "json"],
        "unknown schema type 'jsn'": ["--schema-type", "jsn"],
        "give them in pairs": ["-ekn=k"],  # a key name without its public key
        "(hidden)": ["--auth-plugin", "token", "--auth-params", "hunter2",
                     "--client-conf", "authParams=hunter2", "--client-conf", "bogus=1"],
    }
    for message, args in cases.items():
        proc = ph.run_bin("pulsarc-produce", unique_topic(), "-m", "x", *args, check=False,
                          timeout_s=30)
        if message == "(hidden)":
            assert b"hunter2" not in proc.stderr, proc.stderr
            continue
        assert proc.returncode == 2, (args, proc.stderr)
        assert message.encode() in proc.stderr, (args, proc.stderr)
        assert proc.stdout == b""
