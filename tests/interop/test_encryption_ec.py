"""EC keys for end-to-end encryption (issue 32): pulsarc wraps the data key for an EC
public key with ECIES as the Java client's MessageCryptoBc does (docs/encryption.md, "EC
keys"), and the Java consumer of the broker tarball decrypts it, byte for byte: once
through `bin/pulsar-client consume -ekv`, as a user would, and once through
DecryptingConsumer.java (hash of every payload). RSA and EC keys on one message: each
consumer unwraps the data key with its own private key.

The Python client (its C++ core) reads only RSA private keys: with the EC private key it
logs "Failed to decrypt AES key" and holds the message back; the test asserts that, so a
Python client that learns EC shows up here.

The test keys are tests/keys/test_ec1_*.pem (P-256) and test_rsa1_*.pem."""

import hashlib
import os
import re
import subprocess
from pathlib import Path

import pytest

import pulsar_helpers as ph
from crypto_helpers import KeyPair, assert_same_set, read_topic
from pulsarc_messages import gen_messages
from test_encryption import SANITIZED_BUILD, java_consumer, produce  # noqa: F401 (fixture)

KEYS = ph.REPO_ROOT / "tests" / "keys"
EC = KeyPair(str(KEYS / "test_ec1_pub.pem"), str(KEYS / "test_ec1_priv.pem"))
RSA = KeyPair(str(KEYS / "test_rsa1_pub.pem"), str(KEYS / "test_rsa1_priv.pem"))
EC_WRAPPED_LEN = 65 + 32 + 20  # P-256 point, data key, HMAC-SHA1 tag

pytestmark = pytest.mark.skipif(SANITIZED_BUILD, reason="the Java consumer checks the wire "
                                                        "once, against the build without "
                                                        "sanitizers")


def java_decrypts(java_consumer, service_url, topic, private, count):
    """[(sha256, length, index)] of what DecryptingConsumer.java decrypted, sorted."""
    java, classpath = java_consumer
    proc = subprocess.run([java, "-XX:TieredStopAtLevel=1", "-cp", classpath,
                           "DecryptingConsumer", service_url, topic, private, str(count), "60"],
                          capture_output=True, timeout=120)
    out = proc.stdout.decode(errors="replace")
    assert proc.returncode == 0, out[-3000:] + proc.stderr.decode(errors="replace")[-3000:]
    assert f"END {count}" in out, out[-3000:]
    return sorted(tuple(line.split()[1:]) for line in out.splitlines() if line.startswith("MSG "))


def pulsar_home(java_consumer):
    """The tarball java_consumer's classpath points into (its lib/*)."""
    return Path(java_consumer[1].split(os.pathsep)[-1]).parent.parent


def expected(messages):
    return sorted((hashlib.sha256(m["data"]).hexdigest(), str(len(m["data"])),
                   m["properties"]["index"]) for m in messages)


def test_java_cli_and_consumer_decrypt_what_an_ec_key_wrapped(service_url, unique_topic,
                                                              tmp_path, java_consumer):
    # The CLI, as the docs show it; pulsar-client consume prints each payload.
    topic = unique_topic()
    payloads = ["ec one", "ec two: ünïcödé", "ec three " + "x" * 300]
    args = ["-u", service_url, "-ekn", "ec", "-ekv", f"file://{EC.public}"]
    for p in payloads:
        args += ["-m", p]
    ph.run_bin("pulsarc-produce", *args, topic, timeout_s=60)
    consume = subprocess.run(
        [str(pulsar_home(java_consumer) / "bin" / "pulsar-client"), "--url", service_url, "consume",
         topic, "-s", "sub", "-n", str(len(payloads)), "-p", "Earliest",
         "-ekv", f"file://{EC.private}"], capture_output=True, timeout=180)
    out = consume.stdout.decode(errors="replace")
    assert consume.returncode == 0, out[-3000:] + consume.stderr.decode(errors="replace")[-3000:]
    got = re.findall(r"content:(.*)", out)
    assert got == payloads, out[-3000:]

    # Batched, compressed and chunked messages through the library, every byte checked.
    topic = unique_topic("ec-batched")
    summary, _, _ = produce(service_url, topic, 300, tmp_path, "--encrypt", f"ec={EC.public}",
                            "--max-size", "200", "--conf", "compressionType=lz4")
    assert (summary["sent"], summary["failed"]) == (300, 0)
    big = bytes(range(256)) * (6 * 1024 * 4)  # 6 MiB: chunks
    (tmp_path / "big.bin").write_bytes(big)
    ph.run_bin("pulsarc-produce", "-u", service_url, "-f", str(tmp_path / "big.bin"), "-p",
               "index=big", "--chunking", "--encryption-key-name", "ec",
               "--encryption-public-key", EC.public, topic, timeout_s=120)
    got = java_decrypts(java_consumer, service_url, topic, EC.private, 301)
    want = expected(gen_messages(300, max_size=200))
    assert got == sorted(want + [(hashlib.sha256(big).hexdigest(), str(len(big)), "big")])


def test_rsa_and_ec_keys_on_one_message_each_consumer_uses_its_own(service_url, unique_topic,
                                                                   tmp_path, java_consumer):
    topic = unique_topic()
    summary, _, _ = produce(service_url, topic, 200, tmp_path, "--encrypt", f"rsa={RSA.public}",
                            "--encrypt", f"ec={EC.public}", "--max-size", "200")
    assert (summary["sent"], summary["failed"]) == (200, 0)
    want = gen_messages(200, max_size=200)
    # Java with the EC private key only.
    assert java_decrypts(java_consumer, service_url, topic, EC.private, 200) == expected(want)
    # Python with the RSA private key.
    received = read_topic(topic, RSA)
    assert_same_set(want, received)
    for m in received:
        enc = m["encryption"]
        assert enc["key_names"] == ["rsa", "ec"] and not enc["decryption_failed"]
        assert len(enc["keys"]["rsa"]) == 256 and len(enc["keys"]["ec"]) == EC_WRAPPED_LEN
        assert enc["keys"]["ec"][0] == 0x04, "uncompressed ephemeral point first"
        assert enc["key_metadata"]["ec"] == {}, "no metadata of its own, as Java"


def test_python_client_cannot_unwrap_an_ec_wrapped_key(service_url, unique_topic):
    """The C++ core loads RSA private keys only: with the EC one the message stays
    undecrypted (CONSUME hands over the ciphertext, marked as failed)."""
    topic = unique_topic()
    ph.run_bin("pulsarc-produce", "-u", service_url, "-m", "for java only", "-ekn", "ec",
               "--encryption-public-key", EC.public, topic, timeout_s=60)
    [m] = read_topic(topic, EC, on_failure="consume")
    assert m["encryption"]["decryption_failed"]
    assert m["data"] != b"for java only"
    assert len(m["encryption"]["keys"]["ec"]) == EC_WRAPPED_LEN
    with pytest.raises(AssertionError, match="undecryptable"):
        read_topic(topic, EC, timeout_s=5)  # FAIL: never handed over
