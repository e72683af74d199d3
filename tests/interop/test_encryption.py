"""End-to-end encryption (issue 10): what pulsarc encrypts, the official Python client
decrypts with its CryptoKeyReader and the Java client (the broker tarball's jars) too,
byte for byte; a consumer without the key gets only ciphertext and the encryption
metadata; failure actions and data key rotation behave as documented.

Key pairs are made once per session with the openssl command (RSA 2048, the private key
in the traditional PKCS#1 form the Java client reads)."""

import hashlib
import os
import re
import shutil
import subprocess
import threading

import pytest

import pulsar

import pulsar_helpers as ph
from crypto_helpers import assert_same_set, make_rsa_key_pair, read_topic
from test_producer_interop import block_edge_files
from proxy_helpers import fault_proxy, fault_proxy_session  # noqa: F401  (the proxy test)
from pulsarc_messages import gen_messages, read_ids
from test_proxy_faults import BackgroundProducer
from test_unload_reconnect import unload_repeatedly

AES_GCM_TAG = 16  # bytes the ciphertext of an entry is longer than its plaintext
SUMMARY = re.compile(r"sent=(\d+) failed=(\d+) producer=(\S*) last_sequence_id=(-?\d+) "
                     r"rejected=(\d+) pending=(\d+) memory=(\d+)")
CODECS = {"lz4": pulsar.CompressionType.LZ4, "zlib": pulsar.CompressionType.ZLib,
          "zstd": pulsar.CompressionType.ZSTD, "snappy": pulsar.CompressionType.SNAPPY}
# The Java cross-check runs once, against the plain build (the interop suite runs again
# under ASan, and a subset under TSan). Test names here avoid the words the TSan subset
# selects by (scripts/test), so a 20 MB message is not sent again under TSan.
SANITIZED_BUILD = str(ph.build_dir()).rstrip("/").endswith(("-asan", "-tsan"))


@pytest.fixture(scope="session")
def keys(tmp_path_factory):
    """Two RSA key pairs, 'a' and 'b', a third one ('other') that no producer uses, and a
    file that is not a PEM key at all."""
    d = tmp_path_factory.mktemp("keys")
    garbage = d / "garbage.pub"
    garbage.write_text("-----BEGIN PUBLIC KEY-----\nnot a key\n-----END PUBLIC KEY-----\n")
    return {"a": make_rsa_key_pair(d, "a"), "b": make_rsa_key_pair(d, "b"),
            "other": make_rsa_key_pair(d, "other"), "garbage": str(garbage)}


def encrypt_args(keys, *names, **files):
    """--encrypt NAME=PUBLIC_KEY_FILE for interop_producer: each name with its own key
    pair's public key, or (files) any file for a name."""
    out = []
    for n in names:
        out += ["--encrypt", f"{n}={keys[n].public}"]
    for n, f in files.items():
        out += ["--encrypt", f"{n}={f}"]
    return out


def produce(service_url, topic, count, tmp_path, *extra, check=True, timeout_s=120):
    """interop_producer (async) -> (summary, ids, stderr text)."""
    ids_file = tmp_path / f"ids-{topic.rsplit('-', 1)[-1]}.txt"
    proc = ph.run_bin("interop_producer", service_url, topic, str(count), "async",
                      "--ids", str(ids_file), *extra, timeout_s=timeout_s, check=check)
    out, err = proc.stdout.decode(), proc.stderr.decode(errors="replace")
    m = SUMMARY.search(out)
    assert m, out + err[-3000:]
    summary = {"sent": int(m[1]), "failed": int(m[2]), "pending": int(m[6]),
               "memory": int(m[7]), "rc": proc.returncode}
    return summary, read_ids(str(ids_file)), err


def cli(*args, check=True, timeout_s=120):
    return ph.run_bin("pulsarc-produce", *args, timeout_s=timeout_s, check=check)


def by_index(messages):
    return {int(m["properties"]["index"]): m for m in messages}


def assert_encrypted_for(messages, names):
    for m in messages:
        enc = m["encryption"]
        assert enc is not None, "message stored unencrypted"
        assert sorted(enc["key_names"]) == sorted(names), "each key name once"
        assert not enc["decryption_failed"]


# --------------------------------------------------------------------------------------
# Round trips, read back decrypted by the Python client
# --------------------------------------------------------------------------------------

def test_unbatched_round_trip(service_url, unique_topic, tmp_path, keys):
    topic = unique_topic()
    summary, _, _ = produce(service_url, topic, 300, tmp_path, *encrypt_args(keys, "a"),
                            "--conf", "batchingEnabled=false")
    assert (summary["sent"], summary["failed"]) == (300, 0)
    received = read_topic(topic, keys["a"])
    assert_same_set(gen_messages(300), received)
    assert_encrypted_for(received, ["a"])
    assert all(m["encryption"]["batch_size"] == -1 for m in received)


@pytest.mark.parametrize("batcher", ["default", "key_based"])
def test_batched_round_trip(service_url, unique_topic, tmp_path, keys, batcher):
    topic = unique_topic()
    count = 3000
    summary, ids, _ = produce(service_url, topic, count, tmp_path, *encrypt_args(keys, "a"),
                              "--conf", f"batcherType={batcher}", "--max-size", "200")
    assert (summary["sent"], summary["failed"]) == (count, 0)
    assert max(i["batch_index"] for i in ids) > 0, "messages went out in batches"
    received = read_topic(topic, keys["a"])
    assert_same_set(gen_messages(count, max_size=200), received)
    assert_encrypted_for(received, ["a"])
    entries = {}
    for m in received:
        entries.setdefault(m["message_id"][:2], []).append(m)
    if batcher == "key_based":
        # One key per batch (the ordering key, else the message key).
        assert all(len({m["ordering_key"] or m["partition_key"] for m in ms}) == 1
                   for ms in entries.values())
    # Undecrypted, each batch is one opaque entry whose metadata counts its messages.
    stored = read_topic(topic)
    assert len(stored) == len(entries) < count
    assert sum(s["encryption"]["batch_size"] for s in stored) == count
    assert all(s["encryption"]["decryption_failed"] for s in stored)


@pytest.mark.parametrize("codec", ["lz4", "zlib", "zstd", "snappy"])
def test_every_codec_compresses_then_encrypts(service_url, unique_topic, tmp_path, keys, codec):
    topic = unique_topic()
    summary, _, _ = produce(service_url, topic, 1000, tmp_path, *encrypt_args(keys, "a"),
                            "--conf", f"compressionType={codec}", "--max-size", "300")
    assert (summary["sent"], summary["failed"]) == (1000, 0)
    received = read_topic(topic, keys["a"])
    assert_same_set(gen_messages(1000, max_size=300), received)
    assert_encrypted_for(received, ["a"])
    # The metadata names the codec and the plaintext's size: compressed, then encrypted.
    stored = read_topic(topic)
    assert {s["encryption"]["compression"] for s in stored} == {CODECS[codec]}
    assert all(s["encryption"]["uncompressed_size"] > 0 for s in stored)


def compressible(size: int) -> bytes:
    """Half random, half a repeated text, in 1 KiB blocks: compresses to about half."""
    block = 512
    filler = (b"pulsarc encryption " * 30)[:block]
    rnd = os.urandom(size // 2 + block)
    return b"".join(rnd[k:k + block] + filler for k in range(0, size // 2, block))[:size]


def test_payloads_around_the_block_sizes(service_url, unique_topic, tmp_path, keys):
    """Payloads on each side of the send blocks' edges (accept/block_pool.h: about 150 and
    1,700 bytes without key or properties), batched and encrypted, sent 20 times over: the
    official client decrypts each byte for byte, in order."""
    topic = unique_topic()
    files = block_edge_files(tmp_path)
    args = ["-u", service_url, "-n", "20", "--encryption-key-name", "a",
            "--encryption-public-key", keys["a"].public, topic]
    for f in files:
        args += ["-f", str(f)]
    proc = cli(*args)
    total = 20 * len(files)
    assert f"sent={total} failed=0".encode() in proc.stdout, proc.stdout
    received = read_topic(topic, keys["a"])
    assert [m["data"] for m in received] == [f.read_bytes() for f in files] * 20
    assert_encrypted_for(received, ["a"])


@pytest.mark.parametrize("codec", ["none", "zstd"])
def test_20mb_message_between_smaller_ones(service_url, unique_topic, tmp_path, keys, codec):
    topic = unique_topic()
    big = os.urandom(20 * 1024 * 1024) if codec == "none" else compressible(20 * 1024 * 1024)
    medium = os.urandom(300 * 1024)
    (tmp_path / "big.bin").write_bytes(big)
    (tmp_path / "medium.bin").write_bytes(medium)
    proc = cli("-u", service_url, "-m", "before", "-f", str(tmp_path / "big.bin"),
               "-f", str(tmp_path / "medium.bin"), "-m", "after", "--chunking", "-z", codec,
               "--encryption-key-name", "a", "--encryption-public-key", keys["a"].public, topic)
    assert b"sent=4 failed=0" in proc.stdout, proc.stdout
    received = read_topic(topic, keys["a"])
    assert [len(m["data"]) for m in received] == [6, len(big), len(medium), 5]
    assert [m["data"] for m in received] == [b"before", big, medium, b"after"]
    assert_encrypted_for(received, ["a"])
    # The big one went in chunks, stored entries of their own: at least four 5 MB chunks
    # of random data, at least two of the compressed half-random data. Each is encrypted
    # on its own (a fresh IV, 16 bytes of tag); without the tags they add up to the
    # compressed payload, total_chunk_msg_size.
    last = ph.last_message_id(topic)
    chunks = []
    for entry in range(last["entryId"] + 1):
        headers, body = ph.get_message_by_id(topic, last["ledgerId"], entry)
        if ph.header(headers, "X-Pulsar-num-chunks-from-msg"):
            chunks.append((headers, body))
    assert len(chunks) >= (4 if codec == "none" else 2)
    total = int(ph.header(chunks[0][0], "X-Pulsar-total-chunk-msg-size"))
    assert sum(len(body) - AES_GCM_TAG for _, body in chunks) == total
    assert (total == len(big)) if codec == "none" else (total < len(big) * 0.6)
    for headers, _ in chunks:
        assert ph.header(headers, "X-Pulsar-Is-Encrypted") == "true"
        assert int(ph.header(headers, "X-Pulsar-uncompressed-size")) == len(big)
    ivs = {ph.header(headers, "X-Pulsar-Base64-encryption-param") for headers, _ in chunks}
    assert len(ivs) == len(chunks), "a fresh IV per chunk"
    assert chunks[0][1][:4096] != big[:4096]


def test_partitioned_round_trip(service_url, unique_topic, tmp_path, keys):
    topic = unique_topic()
    ph.create_partitioned_topic(topic, 3)
    summary, _, _ = produce(service_url, topic, 900, tmp_path, *encrypt_args(keys, "a"),
                            "--max-size", "200")
    assert (summary["sent"], summary["failed"]) == (900, 0)
    received = read_topic(topic, keys["a"], partitions=3)
    assert_same_set(gen_messages(900, max_size=200), received)
    assert_encrypted_for(received, ["a"])
    assert {m["message_id"][2] for m in received} == {0, 1, 2}


# --------------------------------------------------------------------------------------
# Who can read it
# --------------------------------------------------------------------------------------

def test_two_key_names_each_consumer_holds_one_private_key(service_url, unique_topic, tmp_path,
                                                           keys):
    topic = unique_topic()
    summary, _, _ = produce(service_url, topic, 500, tmp_path, *encrypt_args(keys, "a", "b"),
                            "--max-size", "200")
    assert (summary["sent"], summary["failed"]) == (500, 0)
    expected = gen_messages(500, max_size=200)
    for name in ("a", "b"):
        received = read_topic(topic, keys[name])
        assert_same_set(expected, received)
        assert_encrypted_for(received, ["a", "b"])
    # A third private key opens nothing: with CONSUME the entries come undecrypted.
    stored = read_topic(topic, keys["other"], on_failure="consume")
    assert stored and all(s["encryption"]["decryption_failed"] for s in stored)
    plaintexts = {m["data"] for m in expected}
    assert not any(s["data"] in plaintexts for s in stored)


def test_example_key_reader_callback_sends_key_metadata(service_url, unique_topic, keys):
    """examples/encrypted_producer.c with a METADATA_VALUE supplies its key through a key
    reader callback that adds {"version": VALUE}: it travels, readable, with the wrapped
    key, which the consumer's key reader gets."""
    topic = unique_topic()
    ph.run_bin("encrypted_producer", service_url, topic, "a", keys["a"].public, "v7",
               timeout_s=60)
    received = read_topic(topic, keys["a"])
    assert [m["data"] for m in received] == [f"secret message {i}".encode() for i in range(5)]
    assert_encrypted_for(received, ["a"])
    stored = read_topic(topic)
    assert all(m["encryption"]["key_metadata"] == {"a": {"version": "v7"}} for m in stored)


def test_consumer_without_key_gets_ciphertext_and_readable_metadata(service_url, unique_topic,
                                                                     tmp_path, keys):
    topic = unique_topic()
    summary, _, _ = produce(service_url, topic, 200, tmp_path, *encrypt_args(keys, "a", "b"),
                            "--conf", "batchingEnabled=false")
    assert (summary["sent"], summary["failed"]) == (200, 0)
    expected = gen_messages(200)
    stored = by_index(read_topic(topic))
    assert sorted(stored) == list(range(200))
    ivs = set()
    for i, want in enumerate(expected):
        got = stored[i]
        enc = got["encryption"]
        assert enc["decryption_failed"]
        # The payload is AES-GCM ciphertext (plaintext length + tag), never the plaintext.
        assert len(got["data"]) == len(want["data"]) + AES_GCM_TAG
        assert got["data"] != want["data"]
        if len(want["data"]) >= 8:
            assert want["data"] not in got["data"]
        # The key names and one wrapped data key per name (RSA 2048 -> 256 bytes).
        assert sorted(enc["key_names"]) == ["a", "b"]
        assert all(len(v) == 256 for v in enc["keys"].values())
        assert len(enc["iv"]) == 12
        ivs.add(enc["iv"])
        # What stays readable: key, ordering key, properties, event time.
        assert got["partition_key"] == want["partition_key"]
        assert got["ordering_key"] == want["ordering_key"]
        assert got["properties"] == want["properties"]
        assert got["event_timestamp"] == want["event_timestamp"]
    assert len(ivs) == 200, "a fresh IV for every entry"


# --------------------------------------------------------------------------------------
# Data key rotation
# --------------------------------------------------------------------------------------

def test_short_rotation_period_changes_the_data_key(service_url, unique_topic, tmp_path, keys):
    topic = unique_topic()
    # About 3 s of sending with a new data key every 0.5 s.
    summary, _, _ = produce(service_url, topic, 90, tmp_path, *encrypt_args(keys, "a"),
                            "--rate", "30", "--conf", "batchingEnabled=false",
                            "--conf", "dataKeyRotationMs=500")
    assert (summary["sent"], summary["failed"]) == (90, 0)
    stored = by_index(read_topic(topic))
    wrapped = [stored[i]["encryption"]["keys"]["a"] for i in range(90)]
    runs = [w for k, w in enumerate(wrapped) if k == 0 or wrapped[k - 1] != w]
    print(f"{len(runs)} data keys over 90 messages")
    assert len(runs) >= 2, "the data key was rotated"
    assert len(set(runs)) == len(runs), "a replaced data key never comes back"
    received = read_topic(topic, keys["a"])
    assert_same_set(gen_messages(90), received)


def test_data_key_kept_across_reconnects(service_url, dedup_topic, tmp_path, keys):
    """Topic unloads make the producer reconnect and resend; the data key (and so the
    wrapped key every entry carries) stays the same, and deduplication still works."""
    topic = dedup_topic()
    ph.create_topic(topic)
    ph.wait_deduplication_enabled(topic)
    stop = threading.Event()
    unloads = []
    unloader = threading.Thread(
        target=lambda: unloads.append(unload_repeatedly(topic, stop, every_s=0.3)))
    unloader.start()
    try:
        summary, _, _ = produce(service_url, topic, 2000, tmp_path, *encrypt_args(keys, "a"),
                                "--name", "enc-unload-" + topic[-8:], "--rate", "1000",
                                "--conf", "batchingEnabled=false")
    finally:
        stop.set()
        unloader.join()
    print(f"{unloads[0]} unloads while sending")
    assert unloads[0] >= 2, "the topic was unloaded while sending"
    assert (summary["sent"], summary["failed"]) == (2000, 0)
    stored = read_topic(topic)
    assert len({m["encryption"]["keys"]["a"] for m in stored}) == 1, "one data key throughout"
    assert_same_set(gen_messages(2000), read_topic(topic, keys["a"]))  # each exactly once


# --------------------------------------------------------------------------------------
# Failure actions
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("batching", ["true", "false"])
def test_unreadable_public_key_fails_every_message(service_url, unique_topic, tmp_path, keys,
                                                   batching):
    topic = unique_topic()
    missing = str(tmp_path / "no-such-key.pub")
    summary, ids, err = produce(service_url, topic, 50, tmp_path,
                                *encrypt_args(keys, a=missing),
                                "--conf", "cryptoFailureAction=fail",
                                "--conf", f"batchingEnabled={batching}", check=False,
                                timeout_s=60)
    assert summary == {"sent": 0, "failed": 50, "pending": 0, "memory": 0, "rc": 1}, summary
    assert [i["result"] for i in ids] == ["CRYPTO"] * 50
    failures = [line for line in err.splitlines() if re.match(r"message \d+ failed:", line)]
    assert len(failures) == 50, err[-2000:]
    # Each names the key whose public key is missing.
    assert all('key "a"' in line for line in failures), failures[0]
    assert read_topic(topic) == []
    assert ph.topic_stats(topic).get("msgInCounter", 0) == 0


def test_unreadable_public_key_with_send_publishes_plaintext(service_url, unique_topic,
                                                             tmp_path, keys):
    topic = unique_topic()
    missing = str(tmp_path / "no-such-key.pub")
    summary, _, _ = produce(service_url, topic, 50, tmp_path, *encrypt_args(keys, a=missing),
                            "--conf", "cryptoFailureAction=send", timeout_s=60)
    assert (summary["sent"], summary["failed"], summary["pending"], summary["memory"]) == \
        (50, 0, 0, 0)
    stored = read_topic(topic)
    assert_same_set(gen_messages(50), stored)
    assert all(m["encryption"] is None for m in stored)


def test_public_key_that_appears_later_is_used_from_then_on(service_url, unique_topic,
                                                            tmp_path, keys):
    """While the key file is missing every message fails; the producer tries again at each
    one, so once the file is there the rest go out encrypted."""
    topic = unique_topic()
    ph.create_topic(topic)
    late = tmp_path / "late.pub"
    # 4 s of sending; the key file appears right after the first failure.
    bg = BackgroundProducer(service_url, topic, 200, tmp_path / "run", *encrypt_args(keys, a=late),
                            "--rate", "50", "--conf", "batchingEnabled=false")
    try:
        assert bg.wait_err(r'message \d+ failed: .*key "a"') is not None, "\n".join(bg.err)
        shutil.copy(keys["a"].public, tmp_path / "late.tmp")
        os.replace(tmp_path / "late.tmp", late)  # appears whole
        summary, ids = bg.finish(timeout_s=60)
    finally:
        bg.kill()
    results = [i["result"] for i in ids]
    assert "OK" in results, summary
    first_ok = results.index("OK")
    assert first_ok > 0 and set(results[:first_ok]) == {"CRYPTO"}
    assert set(results[first_ok:]) == {"OK"}, "no failure after the key appeared"
    assert (summary["pending"], summary["memory"]) == (0, 0)
    sent = [m for m, r in zip(gen_messages(200), results) if r == "OK"]
    assert_same_set(sent, read_topic(topic, keys["a"]))


@pytest.mark.parametrize("action", ["fail", "send"])
def test_cli_crypto_failure_action(service_url, unique_topic, keys, action):
    topic = unique_topic()
    # --keep-going: each message fails on its own (without it the first failure ends the run).
    proc = cli("-u", service_url, "-m", "one", "-m", "two", "-m", "three", "--keep-going",
               "--encryption-key-name", "a", "--encryption-public-key", keys["garbage"],
               "--crypto-failure-action", action, topic, check=False, timeout_s=60)
    err = proc.stderr.decode(errors="replace")
    if action == "fail":
        assert proc.returncode == 1, err
        assert b"sent=0 failed=3" in proc.stdout, proc.stdout
        assert len(re.findall(r"message \d+ failed: .*\[CRYPTO\]: public key \"a\"", err)) == 3, err
        assert "not a key" not in err, "key file contents stay out of messages"
        assert read_topic(topic) == []
    else:
        assert proc.returncode == 0, err
        assert b"sent=3 failed=0" in proc.stdout, proc.stdout
        stored = read_topic(topic)
        assert [m["data"] for m in stored] == [b"one", b"two", b"three"]
        assert all(m["encryption"] is None for m in stored)


# --------------------------------------------------------------------------------------
# A second implementation: the Java client decrypts too
# --------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def java_consumer(tmp_path_factory):
    """(java, classpath) for DecryptingConsumer.java, compiled against the jars of the
    Pulsar tarball with the JDK the broker runs on (both found by scripts/common.sh)."""
    found = subprocess.run(
        ["bash", "-c", f"source '{ph.REPO_ROOT}/scripts/common.sh' && find_java17 && "
                       "echo \"$PULSAR_HOME_DIR\" && echo \"$JAVA_HOME\""],
        capture_output=True, text=True)
    assert found.returncode == 0, f"no Java 17 JDK found: {found.stderr}"
    home, java_home = found.stdout.split("\n")[:2]
    jars = os.path.join(home, "lib", "*")
    out = tmp_path_factory.mktemp("java")
    src = ph.REPO_ROOT / "tests" / "interop" / "DecryptingConsumer.java"
    javac = subprocess.run([os.path.join(java_home, "bin", "javac"), "-d", str(out), "-cp", jars,
                            str(src)], capture_output=True, text=True, timeout=120)
    assert javac.returncode == 0, javac.stderr
    return os.path.join(java_home, "bin", "java"), f"{out}{os.pathsep}{jars}"


@pytest.mark.skipif(SANITIZED_BUILD, reason="the Java consumer checks the wire once, "
                                            "against the build without sanitizers")
def test_java_consumer_decrypts_too(service_url, unique_topic, tmp_path, keys, java_consumer):
    topic = unique_topic()
    summary, _, _ = produce(service_url, topic, 500, tmp_path, *encrypt_args(keys, "a", "b"),
                            "--max-size", "200", "--conf", "compressionType=lz4")
    assert (summary["sent"], summary["failed"]) == (500, 0)
    big = compressible(12 * 1024 * 1024)
    (tmp_path / "big.bin").write_bytes(big)
    batch_entries = ph.internal_stats(topic)["entriesAddedCounter"]
    cli("-u", service_url, "-f", str(tmp_path / "big.bin"), "-p", "index=big", "--chunking",
        "-z", "zstd", "--encryption-key-name", "a", "--encryption-public-key", keys["a"].public,
        "--encryption-key-name", "b", "--encryption-public-key", keys["b"].public, topic)
    chunks = ph.internal_stats(topic)["entriesAddedCounter"] - batch_entries
    assert chunks >= 2, "the big one went in chunks"
    java, classpath = java_consumer
    # Key "b" only: the entries also carry "a", which this key cannot unwrap.
    proc = subprocess.run([java, "-XX:TieredStopAtLevel=1", "-cp", classpath,
                           "DecryptingConsumer", service_url, topic, keys["b"].private, "501",
                           "60"], capture_output=True, timeout=120)
    out = proc.stdout.decode(errors="replace")
    assert proc.returncode == 0, out[-3000:] + proc.stderr.decode(errors="replace")[-3000:]
    got = sorted(tuple(line.split()[1:]) for line in out.splitlines() if line.startswith("MSG "))
    want = sorted([(hashlib.sha256(m["data"]).hexdigest(), str(len(m["data"])),
                    m["properties"]["index"]) for m in gen_messages(500, max_size=200)]
                  + [(hashlib.sha256(big).hexdigest(), str(len(big)), "big")])
    assert "END 501" in out, out[-3000:]
    assert got == want


# --------------------------------------------------------------------------------------
# Resend after a connection cut (needs scripts/broker-behind-proxy: pytest -m proxy)
# --------------------------------------------------------------------------------------

@pytest.mark.proxy
@pytest.mark.parametrize("dedup,batching", [(True, "true"), (True, "false"), (False, "false")])
def test_resend_after_cuts_repeats_the_same_ciphertext(service_url, unique_topic, dedup_topic,
                                                       tmp_path, keys, fault_proxy, dedup,
                                                       batching):
    topic = dedup_topic() if dedup else unique_topic()
    ph.create_topic(topic)
    if dedup:
        ph.wait_deduplication_enabled(topic)
    count = 6000
    fault_proxy.schedule_cuts(0.5, 1.5)
    try:
        summary, _, _ = produce(service_url, topic, count, tmp_path, *encrypt_args(keys, "a"),
                                "--name", "enc-cuts-" + topic[-8:], "--max-size", "200",
                                "--rate", "2000", "--conf", f"batchingEnabled={batching}",
                                timeout_s=300)
    finally:
        fault_proxy.schedule_off()
    cuts = fault_proxy.stats()["cuts"]
    assert cuts >= 1, "the proxy really cut connections"
    assert (summary["sent"], summary["failed"]) == (count, 0)
    expected = gen_messages(count, max_size=200)
    decrypted = read_topic(topic, keys["a"])
    indexes = [int(m["properties"]["index"]) for m in decrypted]
    print(f"{cuts} cuts; {len(indexes)} stored, {len(indexes) - len(set(indexes))} duplicates")
    if dedup:
        assert_same_set(expected, decrypted)  # each message exactly once
        return
    # Without deduplication a message in flight at a cut may be stored twice: each copy
    # must be the same ciphertext under the same IV and wrapped key, i.e. a resend
    # repeats the entry as built instead of encrypting it again.
    assert_same_set(expected, list(by_index(decrypted).values()))
    copies = {}
    for m in read_topic(topic):
        enc = m["encryption"]
        copies.setdefault(int(m["properties"]["index"]), set()).add(
            (m["data"], enc["iv"], enc["keys"]["a"]))
    assert all(len(c) == 1 for c in copies.values()), \
        [i for i, c in copies.items() if len(c) > 1][:10]
