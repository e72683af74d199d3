"""Helpers for the end-to-end encryption interop tests (test_encryption.py): RSA key pairs
made with the openssl command, and reading a topic with the official Python client either
decrypting (with a private key) or taking the ciphertext as stored (no key, crypto
failure action CONSUME), each message with what its encryption metadata says."""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pulsar

import pulsar_helpers as ph


@dataclass(frozen=True)
class KeyPair:
    public: str   # PEM "BEGIN PUBLIC KEY" (SubjectPublicKeyInfo)
    private: str  # PEM "BEGIN RSA PRIVATE KEY" (PKCS#1), the form the Java client reads

    def reader(self) -> "pulsar.CryptoKeyReader":
        """The Python client's key reader; it returns these keys for every key name."""
        return pulsar.CryptoKeyReader(self.public, self.private)


def make_rsa_key_pair(directory: Path, name: str, bits: int = 2048) -> KeyPair:
    """An RSA key pair in `directory`: <name>.key (traditional PKCS#1 private key) and
    <name>.pub (public key), made with the openssl command as docs/encryption.md shows."""
    private, public = directory / f"{name}.key", directory / f"{name}.pub"
    subprocess.run(["openssl", "genrsa", "-traditional", "-out", str(private), str(bits)],
                   check=True, capture_output=True)
    subprocess.run(["openssl", "rsa", "-in", str(private), "-pubout", "-out", str(public)],
                   check=True, capture_output=True)
    return KeyPair(str(public), str(private))


def _encryption(msg: "pulsar.Message") -> dict | None:
    """The message's encryption metadata as plain values (None when not encrypted). Read
    at once: the client's context object must not outlive the message."""
    ctx = msg.encryption_context()
    if ctx is None:
        return None
    return {
        "key_names": [k.key for k in ctx.keys()],  # in order, a repeated name twice
        "keys": {k.key: bytes(k.value) for k in ctx.keys()},
        "key_metadata": {k.key: dict(k.metadata) for k in ctx.keys()},
        "iv": bytes(ctx.param()),
        "compression": ctx.compression_type(),
        "uncompressed_size": ctx.uncompressed_message_size(),
        "batch_size": ctx.batch_size(),
        "decryption_failed": ctx.is_decryption_failed(),
    }


def read_topic(topic: str, keys: KeyPair | None = None, partitions: int = 0,
               on_failure: str | None = None, timeout_s: float = 30,
               client: "pulsar.Client | None" = None) -> list[dict]:
    """Everything stored on the topic (each partition in turn), read from the earliest
    message up to the last entry the broker holds, as ph.message_to_dict dicts with an
    extra "encryption" entry (see _encryption).

    With `keys`, messages are decrypted, and by default (on_failure "fail", the crypto
    failure action FAIL) one that cannot be is never handed over: the read then ends with
    AssertionError at timeout_s, so a message the key cannot open fails the test. Without
    `keys` (or with on_failure "consume"), an entry that cannot be decrypted comes as
    stored (CONSUME): a batch stays one message holding the whole ciphertext. Such a
    batch looks unfinished to has_message_available, so the read ends at the entry the
    admin API names as the last one instead."""
    own = client is None
    # Without a key the client warns once per encrypted message; that is the point here.
    client = client or ph.make_client(logger=pulsar.ConsoleLogger(pulsar.LoggerLevel.Error))
    action = on_failure or ("fail" if keys else "consume")
    crypto = {"crypto_failure_action": getattr(pulsar.ConsumerCryptoFailureAction, action.upper())}
    if keys:
        crypto["crypto_key_reader"] = keys.reader()
    out: list[dict] = []
    deadline = time.monotonic() + timeout_s
    try:
        for part in (range(partitions) if partitions else [-1]):
            name = ph.partition_name(topic, part) if partitions else topic
            last = ph.last_message_id(name)
            last_entry = (last["ledgerId"], last["entryId"])
            # A batch handed over undecrypted is one message to the reader, while the broker
            # counts its messages against the reader's flow permits: with the default queue
            # of 1000, reading 102 such entries of ~30 messages stalled after 100 of them.
            # A queue larger than any test's message count never runs out of permits.
            reader = client.create_reader(name, pulsar.MessageId.earliest,
                                          receiver_queue_size=100_000, **crypto)
            try:
                at = (-1, -1)
                while last_entry[1] >= 0 and at < last_entry:
                    left_ms = int((deadline - time.monotonic()) * 1000)
                    if left_ms <= 0:
                        raise AssertionError(f"reading {name} did not finish within {timeout_s} s "
                                             f"({len(out)} messages so far; undecryptable?)")
                    try:
                        msg = reader.read_next(timeout_millis=min(left_ms, 5_000))
                    except pulsar.Timeout:
                        continue
                    d = ph.message_to_dict(msg)
                    d["encryption"] = _encryption(msg)
                    out.append(d)
                    enc = d["encryption"]
                    whole_entry = enc is not None and enc["decryption_failed"]
                    if not whole_entry and d["message_id"][:2] == last_entry \
                            and d["message_id"][3] < last["batchIndex"]:
                        continue  # more messages of the last batch to come
                    at = d["message_id"][:2]
            finally:
                reader.close()
    finally:
        if own:
            client.close()
    return out


def record(m: dict) -> tuple:
    """What a message carries that pulsarc set, comparable across the Python generator
    (pulsarc_messages.gen_messages) and a read-back dict, and sortable (an unset key is
    (0, '') , a set one (1, value))."""
    def opt(v):
        return (0, b"") if v is None else (1, v.encode() if isinstance(v, str) else v)
    return (m["data"], opt(m["partition_key"]), opt(m["ordering_key"] or None),
            tuple(sorted(m["properties"].items())), m["event_timestamp"])


def assert_same_set(expected: list[dict], received: list[dict]) -> None:
    """The received messages are exactly the expected ones (as a multiset: no message
    missing, none extra, none twice), compared field by field, payloads byte for byte."""
    want = sorted(record(m) for m in expected)
    got = sorted(record(m) for m in received)
    if want != got:
        missing = len(set(want) - set(got))
        extra = len(set(got) - set(want))
        raise AssertionError(f"read back {len(got)} messages, expected {len(want)}: "
                             f"{missing} expected ones missing or changed, {extra} unexpected")
