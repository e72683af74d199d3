"""pulsarc-produce against the real broker: per-line keys from standard input
(--key-separator), read back with the official Python client, a terminal broker
error ending a --stdin run that would otherwise never end (issue 7), what the tool
says about settings, files and numbers it cannot use (issue 18), and about a service URL
that points at the broker's web service port (issue 27). A topic fenced for ever
is tested against the mock broker (tests/mock/test_cli_stops.c): a real broker fences
only when a write races the termination, which no test can time."""

import re
import subprocess
import threading
import urllib.parse

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
    received = ph.read_messages(topic, 4, timeout_s=30, to_end=True)
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
    received = ph.read_messages(topic, 6, timeout_s=30, to_end=True)
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


def wait_for_entries(topic, n):
    ph.wait_for(lambda: ph.internal_stats(topic)["entriesAddedCounter"] >= n, timeout_s=60,
                what=f"{n} entries stored on {topic}")


def terminate(topic):
    ph.admin_request("POST", "/admin/v2/" + ph.topic_rest_path(topic) + "/terminate")


def feed_for_ever(stdin, line: bytes) -> threading.Thread:
    """Writes line to stdin, over and over, until the reader is gone (like `yes`)."""
    chunk = line * 1000

    def feed():
        try:
            while True:
                stdin.write(chunk)
                stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass  # the CLI stopped reading: what the tests wait for
    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    return feeder


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
    # The topic is terminated while the producer is idle: its first messages are stored
    # and nothing is in flight. The broker then closes the producer and refuses it back
    # with TopicTerminated, always. (A write racing the termination would instead make it
    # fence the topic and answer "service not ready" for ever: the mock tests provoke that
    # on purpose.) Only then does standard input become endless: only the CLI giving up
    # ends the run.
    topic = unique_topic()
    proc = start_cli(bin_path, tmp_path, service_url, topic, subprocess.PIPE,
                     "--rate", rate, "--max-pending", "100", "--no-batching")
    try:
        proc.stdin.write(b"k|first\n" * 3)
        proc.stdin.flush()
        wait_for_entries(topic, 3)
        terminate(topic)
        feed_for_ever(proc.stdin, b"key|payload\n")
        result = assert_stopped_by_termination(proc, tmp_path)
    finally:
        proc.kill()
        proc.wait()
    assert result["sent"] == 3, result
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
    received = ph.read_messages(topic, 3, timeout_s=30, to_end=True)
    assert [m["data"] for m in received] == [b"a", b"b", b"-db"]
    assert all(m["properties"] == {"k": "v"} for m in received)


def test_refused_pulsar_client_flags(service_url, unique_topic):
    cases = {
        "cannot be combined": ["-dr", "--replication-clusters", "c1"],
        "expects names separated by ','": ["--replication-clusters", "c1,,c2"],
        "--deliver-after expects milliseconds": ["--deliver-after", "soon"],
        "--access-mode: unknown access mode 'solo' (valid: shared, exclusive, "
        "exclusive_with_fencing, wait_for_exclusive)": ["--access-mode", "solo"],
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


def test_misspelt_settings_never_show_their_values(service_url, unique_topic, bin_path):
    # A misspelt key cannot tell whether its value is a secret, nor can a setting typed
    # with another separator: the key is named, the value never repeated.
    topic = unique_topic()
    cases = {
        'unknown configuration key "authparams"': ["--client-conf", "authparams=token:hunter2"],
        "--client-conf expects KEY=VALUE": ["--client-conf", "authParams:token:hunter2"],
        'unknown configuration key "encryptionkeys"': ["--conf", "encryptionkeys=hunter2"],
        "the key before '=' is empty": ["--conf", "=hunter2"],
    }
    for message, args in cases.items():
        proc = ph.run_bin("pulsarc-produce", topic, "-u", service_url, "-m", "x", *args,
                          check=False, timeout_s=30)
        assert proc.returncode == 2, (args, proc.stderr)
        assert message.encode() in proc.stderr, (args, proc.stderr)
        assert b"hunter2" not in proc.stderr, (args, proc.stderr)
    # pulsarc-perf reads the same settings the same way.
    for args in (["--client-conf", "authparams=token:hunter2"], ["--conf", "x=hunter2"],
                 ["--client-conf", "authParams:token:hunter2"]):
        proc = subprocess.run([bin_path("pulsarc-perf"), "-u", service_url, topic, *args],
                              capture_output=True, timeout=30)
        assert proc.returncode != 0, (args, proc.stderr)
        assert b"hunter2" not in proc.stderr + proc.stdout, (args, proc.stderr)


def test_refused_settings_name_the_flag_and_suggest(service_url, unique_topic):
    # A flag's value the library refuses is named with the flag as typed (not the key
    # behind it), and an enumerated setting lists what it takes; a misspelt key gets the
    # nearest key of either configuration, and a key of the other configuration says
    # which option takes it. A misspelt key still never shows its value.
    cases = {
        "-z: unknown compression 'lz5' (valid: none, lz4, zlib, zstd, snappy)": ["-z", "lz5"],
        "--compression: unknown compression 'lz5' (valid: none, lz4, zlib, zstd, snappy)":
            ["--compression=lz5"],
        "--hashing: unknown hashing scheme 'jav' (valid: java, murmur3, boost, boost_1_81, "
        "boost_1_80, boost_1_80_arm64)": ["--hashing", "jav"],
        "--batch-max-messages: invalid configuration: batchingMaxMessages: \"many\" is not "
        "an integer": ["--batch-max-messages", "many"],
        '--conf compressionType: invalid configuration: compressionType: "lz5" is not a known '
        "value (valid: none, lz4, zlib, zstd, snappy)": ["--conf", "compressionType=lz5"],
        'logLevel: "loud" is not a known value (valid: debug, info, warn, error, off)':
            ["--client-conf", "logLevel=loud"],
        'unknown configuration key "compresionType"; did you mean compressionType?':
            ["--conf", "compresionType=lz4"],
        'unknown configuration key "authparams"; did you mean authParams?':
            ["--client-conf", "authparams=token:hunter2"],
        'unknown configuration key "operationTimeotMs"; did you mean operationTimeoutMs '
        "(a client setting: --client-conf)?": ["--conf", "operationTimeotMs=hunter2"],
        "--conf operationTimeoutMs: a client setting, not a producer setting: give it with "
        "--client-conf": ["--conf", "operationTimeoutMs=5000"],
        "--client-conf sendTimeoutMs: a producer setting, not a client setting: give it with "
        "--conf": ["--client-conf", "sendTimeoutMs=5000"],
    }
    for message, args in cases.items():
        proc = ph.run_bin("pulsarc-produce", unique_topic(), "-u", service_url, "-m", "x",
                          *args, check=False, timeout_s=30)
        assert proc.returncode == 2, (args, proc.stderr)
        assert message.encode() in proc.stderr, (args, proc.stderr)
        assert b"hunter2" not in proc.stderr, (args, proc.stderr)
    # Nothing near: no suggestion.
    proc = ph.run_bin("pulsarc-produce", unique_topic(), "-u", service_url, "-m", "x",
                      "--conf", "bogus=1", check=False, timeout_s=30)
    assert proc.returncode == 2 and b'unknown configuration key "bogus"\n' in proc.stderr, \
        proc.stderr


def test_what_a_spool_cannot_resend_is_a_usage_error(service_url, unique_topic, tmp_path):
    # A spool resends a message after a restart from what it wrote, which keeps neither a
    # delivery delay relative to the send nor replication clusters (the library refuses
    # such a message at each send), nor a transaction: each is refused before anything
    # connects or the spool is made, as --txn-batch always was.
    spool = tmp_path / "spool"
    cases = {
        "--disable-replication cannot be combined with --spool-dir": ["-dr"],
        "--replication-clusters cannot be combined with --spool-dir":
            ["--replication-clusters", "c1"],
        "--deliver-after cannot be combined with --spool-dir": ["--deliver-after", "1000"],
        "--txn-batch cannot be combined with --spool-dir": ["--txn-batch", "2"],
    }
    for message, args in cases.items():
        proc = ph.run_bin("pulsarc-produce", unique_topic(), "-u", service_url, "-m", "x",
                          "--producer-name", "spooler", "--spool-dir", str(spool), *args,
                          check=False, timeout_s=30)
        assert proc.returncode == 2, (args, proc.stderr)
        assert message.encode() in proc.stderr, (args, proc.stderr)
        assert proc.stdout == b"" and not spool.exists(), (args, proc.stdout)
    proc = ph.run_bin("pulsarc-produce", unique_topic(), "-u", service_url, "-m", "x",
                      "--producer-name", "spooler", "--conf", f"spoolDir={spool}",
                      "--deliver-after", "1000", check=False, timeout_s=30)
    assert proc.returncode == 2, proc.stderr
    assert b"--deliver-after cannot be combined with --conf spoolDir" in proc.stderr, proc.stderr


def test_sequence_id_start_names_its_limit(service_url, unique_topic):
    proc = ph.run_bin("pulsarc-produce", unique_topic(), "-u", service_url, "-m", "x",
                      "--sequence-id-start", "9223372036854775806", check=False, timeout_s=30)
    assert proc.returncode == 2, proc.stderr
    assert b"expects a number from 0 to 4611686018427387903, got '9223372036854775806'" \
        in proc.stderr, proc.stderr


def test_tls_settings_refused_at_client_start_are_configuration_errors(unique_topic):
    # Checked when the client starts, not when set: still a configuration error (exit 2),
    # as docs/cli.md says of a rejected --client-conf, and a missing file says why.
    cases = {
        "No such file or directory": ["--tls-trust-certs", "/nonexistent/pulsarc/ca.pem"],
        "allows no protocol at TLS 1.2 or newer": ["--client-conf", "tlsProtocols=TLSv1"],
    }
    for message, args in cases.items():
        proc = ph.run_bin("pulsarc-produce", unique_topic(), "-u", "pulsar+ssl://127.0.0.1:1",
                          "-m", "x", *args, check=False, timeout_s=30)
        assert proc.returncode == 2, (args, proc.stderr)
        assert message.encode() in proc.stderr, (args, proc.stderr)
        assert b"[TLS_CONFIG]" in proc.stderr and b"system lib" not in proc.stderr, proc.stderr


def test_missing_auth_files_fail_alike(service_url, unique_topic):
    # A token file and the tls plugin's certificate and key: on pulsar:// too, where no
    # TLS context opens the certificate, a missing file fails the run the same way.
    cases = [
        ["--auth-plugin", "token", "--auth-params", "file:/nonexistent/pulsarc/token"],
        ["--auth-plugin", "tls", "--auth-params",
         "tlsCertFile:/nonexistent/pulsarc/client.pem,tlsKeyFile:/nonexistent/pulsarc/client.key"],
        ["--auth-plugin", "tls", "--tls-cert", "/nonexistent/pulsarc/client.pem",
         "--tls-key", "/nonexistent/pulsarc/client.key"],
    ]
    for args in cases:
        proc = ph.run_bin("pulsarc-produce", unique_topic(), "-u", service_url, "-m", "x",
                          *args, check=False, timeout_s=60)
        assert proc.returncode == 1, (args, proc.stderr)
        assert b"[AUTH_PROVIDER]" in proc.stderr, (args, proc.stderr)
        assert b"/nonexistent/pulsarc/" in proc.stderr, (args, proc.stderr)
        assert b"No such file or directory" in proc.stderr, (args, proc.stderr)
        assert proc.stdout == b"", "nothing was sent"


@pytest.mark.parametrize("scheme", ["pulsar", "pulsar+ssl"])
def test_the_web_service_port_is_named_for_what_it_is(unique_topic, scheme):
    # The broker's HTTP port (the admin URL's) given as the binary protocol's: its Jetty
    # answers CONNECT (or the ClientHello) with "HTTP/1.1 400 ...", which pulsarc names
    # and quotes rather than calling it an oversized frame or a wrong TLS version.
    web = urllib.parse.urlsplit(ph.admin_url())
    if web.scheme != "http":
        pytest.skip(f"the admin URL {ph.admin_url()} is not plain http://")
    proc = ph.run_bin("pulsarc-produce", unique_topic(), "-u", f"{scheme}://{web.netloc}",
                      "-m", "x", "--client-conf", "operationTimeoutMs=10000",
                      check=False, timeout_s=60)
    assert proc.returncode == 1, proc.stderr
    article = "a plain-text" if scheme == "pulsar+ssl" else "an"
    assert f"{web.netloc} is {article} HTTP server (it answered 'HTTP/1.1 400".encode() \
        in proc.stderr, proc.stderr
    assert b"use http:// for lookups over HTTP" in proc.stderr, proc.stderr
    assert b"frame larger" not in proc.stderr and b"wrong version" not in proc.stderr, \
        proc.stderr
