"""Schema-registered topics (issue 11): what pulsarc registers, what the broker stores and
what the official Python client reads back as records.

pulsarc-produce covers the flags a user types (--schema-type, --schema-file,
--kv-encoding, text converted to the schema's encoding); interop_schema.c covers what the
tool cannot express (per-message schemas, AUTO_PRODUCE, null KeyValue parts, exact bytes).
Evolution and enforcement run in a namespace of their own, so their policies touch no
other test."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import struct
import subprocess
import uuid

import pytest

import pulsar
from pulsar.schema import (AvroSchema, BytesSchema, Integer, JsonSchema, Record, String,
                           StringSchema)

import pulsar_helpers as ph
from crypto_helpers import make_rsa_key_pair


class User(Record):
    name = String()
    age = Integer()


USER_DEFINITION = json.dumps(User.schema())
# USER with one more optional field: FULL-compatible with it, a second version.
USER_V2 = json.loads(USER_DEFINITION)
USER_V2["fields"].append({"name": "email", "type": ["null", "string"], "default": None})
USER_V2_DEFINITION = json.dumps(USER_V2)
JAVA_STRUCT_PROPERTIES = {"__alwaysAllowNull": "true", "__jsr310ConversionEnabled": "false"}


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------

def schema_path(topic: str) -> str:
    _, ns, name = ph._split_topic(topic)
    return f"/admin/v2/schemas/{ns}/{name}"


def registered_schema(topic: str) -> dict:
    """The topic's latest schema from the admin API: {version, type, data, properties}."""
    return ph.admin_request("GET", schema_path(topic) + "/schema")


def registered_versions(topic: str) -> list[dict]:
    return ph.admin_request("GET", schema_path(topic) + "/schemas")["getSchemaResponses"]


def version_number(raw) -> int:
    """A message's schema_version (the broker's 8-byte big-endian long) as a number."""
    raw = raw.encode("latin-1") if isinstance(raw, str) else bytes(raw)
    assert len(raw) == 8, raw
    return struct.unpack(">q", raw)[0]


def read_values(topic: str, n: int, schema, client, crypto_key_reader=None) -> list:
    """n messages from the start of topic, as (value, schema version, message) tuples,
    read with the official client's schema; nothing more must follow."""
    reader = client.create_reader(topic, pulsar.MessageId.earliest, schema=schema,
                                  crypto_key_reader=crypto_key_reader)
    try:
        out = []
        for _ in range(n):
            msg = reader.read_next(timeout_millis=20000)
            out.append((msg.value(), version_number(msg.schema_version()), msg))
        assert not reader.has_message_available(), "more messages than sent"
        return out
    finally:
        reader.close()


def write_file(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def produce(topic, *args, input=None, check=True):
    return ph.run_bin("pulsarc-produce", "-u", ph.service_url(), topic, *args, input=input,
                      check=check, timeout_s=60)


def summary(stdout: bytes) -> dict:
    m = re.search(rb"sent=(\d+) failed=(\d+)", stdout)
    assert m, stdout
    return {"sent": int(m.group(1)), "failed": int(m.group(2))}


def drive(topic, *args):
    """Runs interop_schema; returns (per-message results, schema version, creation error).
    A result is ('ok', ledger, entry, batch_index) or ('rejected'|'failed', name, detail)."""
    proc = ph.run_bin("interop_schema", ph.service_url(), topic, *args, check=False,
                      timeout_s=60)
    out = proc.stdout.decode()
    if proc.returncode == 3:
        return None, None, out.strip()
    assert proc.returncode == 0, (proc.returncode, out, proc.stderr.decode())
    results = {}
    for line in out.splitlines():
        parts = line.split(" ", 4)
        if len(parts) >= 3 and parts[0].isdigit():
            if parts[1] == "ok":
                results[int(parts[0])] = ("ok", int(parts[2]), int(parts[3]), int(parts[4]))
            else:
                results[int(parts[0])] = (parts[1], parts[2], " ".join(parts[3:]))
    version = int(re.search(r"schema-version=(-?\d+)", out).group(1))
    return results, version, None


def hexs(b: bytes) -> str:
    return b.hex()


def avro_bytes(definition: str, record: dict) -> bytes:
    import fastavro  # here, so that a missing fastavro fails only the tests that need it
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(json.loads(definition)), record)
    return buf.getvalue()


def cli_converts_avro(stderr: bytes) -> bool:
    return b"built without avro-c" not in stderr


@pytest.fixture(scope="module")
def schema_namespace():
    """A namespace of this module's own, with BACKWARD compatibility and schemas enforced
    (a producer without a schema is refused on a topic that has one)."""
    ns = f"public/pulsarc-schema-{uuid.uuid4().hex[:8]}"
    ph.admin_request("PUT", f"/admin/v2/namespaces/{ns}", {})
    ph.admin_request("PUT", f"/admin/v2/namespaces/{ns}/schemaCompatibilityStrategy", "BACKWARD")
    ph.admin_request("POST", f"/admin/v2/namespaces/{ns}/schemaValidationEnforced", True)
    yield ns
    try:
        for topic in ph.list_topics(ns):
            ph.delete_topic(topic)
        ph.admin_request("DELETE", f"/admin/v2/namespaces/{ns}")
    except ph.AdminError as e:  # best effort: a leftover namespace harms no later run
        print(f"could not remove {ns}: {e}")


# --------------------------------------------------------------------------------------
# STRING, JSON, AVRO: registered as sent, read back as records
# --------------------------------------------------------------------------------------

def test_string_schema_read_with_string_schema(unique_topic, pulsar_client):
    topic = unique_topic()
    texts = ["héllo wörld", "", "日本語 ✓"]
    args = []
    for t in texts:
        args += ["-m", t]
    produce(topic, "--schema-type", "string", *args)
    reg = registered_schema(topic)
    assert (reg["type"], reg["data"], reg["properties"]) == ("STRING", "", {})
    got = read_values(topic, len(texts), StringSchema(), pulsar_client)
    assert [v for v, _, _ in got] == texts
    assert {ver for _, ver, _ in got} == {reg["version"]}


def test_json_schema_from_stdin_read_as_records(unique_topic, pulsar_client, tmp_path):
    topic = unique_topic()
    definition = write_file(tmp_path, "user.avsc", USER_DEFINITION)
    lines = b'{"name": "ann", "age": 31}\n{"name": \n{"name": "bob", "age": null}\n'
    proc = produce(topic, "--schema-type", "json", "--schema-file", definition, "--stdin",
                   "--keep-going", input=lines, check=False)
    # The broken line fails alone, by name, before it is sent; the others go (--keep-going:
    # without it the run stops at the first failed message).
    assert proc.returncode == 1 and summary(proc.stdout) == {"sent": 2, "failed": 1}
    assert b"message 2 " in proc.stderr and b"[INVALID_PAYLOAD]" in proc.stderr
    reg = registered_schema(topic)
    assert reg["type"] == "JSON" and reg["data"] == USER_DEFINITION
    assert reg["properties"] == JAVA_STRUCT_PROPERTIES
    got = read_values(topic, 2, JsonSchema(User), pulsar_client)
    assert [(u.name, u.age) for u, _, _ in got] == [("ann", 31), ("bob", None)]
    assert {ver for _, ver, _ in got} == {reg["version"]}


def test_avro_schema_from_json_lines_read_as_records(unique_topic, pulsar_client, tmp_path):
    topic = unique_topic()
    definition = write_file(tmp_path, "user.avsc", USER_DEFINITION)
    records = [{"name": "ann", "age": 31}, {"name": None, "age": -5}, {"name": "çé", "age": None}]
    lines = "".join(json.dumps(r) + "\n" for r in records).encode()
    proc = produce(topic, "--schema-type", "avro", "--schema-file", definition, "--stdin",
                   input=lines, check=False)
    if not cli_converts_avro(proc.stderr):
        pytest.skip("pulsarc-produce was built without avro-c (libavro-dev): no JSON to Avro")
    assert proc.returncode == 0, proc.stderr
    reg = registered_schema(topic)
    assert reg["type"] == "AVRO" and reg["data"] == USER_DEFINITION
    assert reg["properties"] == JAVA_STRUCT_PROPERTIES
    got = read_values(topic, 3, AvroSchema(User), pulsar_client)
    assert [{"name": u.name, "age": u.age} for u, _, _ in got] == records
    assert {ver for _, ver, _ in got} == {reg["version"]}
    # Byte for byte what fastavro (the Python client's encoder) writes.
    assert [m.data() for _, _, m in got] == [avro_bytes(USER_DEFINITION, r) for r in records]


RICH_DEFINITION = json.dumps({
    "type": "record", "name": "Order", "namespace": "shop", "fields": [
        {"name": "id", "type": "long"},
        {"name": "state", "type": {"type": "enum", "name": "State", "symbols": ["NEW", "PAID"]}},
        {"name": "items", "type": {"type": "array", "items": {
            "type": "record", "name": "Item", "fields": [
                {"name": "sku", "type": "string"}, {"name": "qty", "type": "int"}]}}},
        {"name": "tags", "type": {"type": "map", "values": "double"}},
        {"name": "blob", "type": "bytes"},
        {"name": "digest", "type": {"type": "fixed", "name": "Digest", "size": 2}},
        {"name": "note", "type": ["null", "string", "long"]},
        {"name": "flag", "type": "boolean"},
        {"name": "ratio", "type": "float"},
        {"name": "best", "type": ["null", "Item"], "default": None},
    ]})


def test_avro_text_conversion_covers_the_avro_types(unique_topic, pulsar_client, tmp_path):
    # Every Avro type through pulsarc-produce's JSON to Avro, byte for byte as fastavro
    # writes the same record; a tagged union picks its branch, an untagged one the first
    # branch that fits, and a line that does not fit fails alone.
    definition = write_file(tmp_path, "order.avsc", RICH_DEFINITION)
    lines = [
        {"id": 2**40, "state": "PAID", "items": [{"sku": "a", "qty": 2}, {"sku": "é", "qty": -1}],
         "tags": {"x": 1.5}, "blob": "\u0000\u00ff", "digest": "hi", "note": {"long": 7},
         "flag": True, "ratio": 0.5, "best": {"shop.Item": {"sku": "b", "qty": 1}}},
        {"id": -1, "state": "NEW", "items": [], "tags": {}, "blob": "", "digest": "ab",
         "note": "text", "flag": False, "ratio": -2.25},
        {"id": 1, "state": "LOST", "items": [], "tags": {}, "blob": "", "digest": "ab",
         "note": None, "flag": False, "ratio": 0},
    ]
    text = "".join(json.dumps(r) + "\n" for r in lines).encode()
    topic = unique_topic()
    proc = produce(topic, "--schema-type", "avro", "--schema-file", definition, "--stdin",
                   "--keep-going", input=text, check=False)
    if not cli_converts_avro(proc.stderr):
        pytest.skip("pulsarc-produce was built without avro-c (libavro-dev): no JSON to Avro")
    assert summary(proc.stdout) == {"sent": 2, "failed": 1}, proc.stderr
    assert b"message 3 could not be converted" in proc.stderr
    assert b"state" in proc.stderr and b"LOST" in proc.stderr, proc.stderr
    want = [dict(lines[0], blob=b"\x00\xff", digest=b"hi", note=7, best={"sku": "b", "qty": 1}),
            dict(lines[1], blob=b"", digest=b"ab", best=None)]
    got = read_values(topic, 2, BytesSchema(), pulsar_client)
    assert [m.data() for _, _, m in got] == [avro_bytes(RICH_DEFINITION, r) for r in want]


def test_avro_payload_check_and_switching_it_off(unique_topic, pulsar_client, tmp_path):
    definition = write_file(tmp_path, "user.avsc", USER_DEFINITION)
    good = avro_bytes(USER_DEFINITION, {"name": "ann", "age": 31})
    bad = good[:-1]  # the int is cut off
    topic = unique_topic()
    results, _, err = drive(topic, "--schema", f"avro:{definition}", "--msg", hexs(good),
                            "--msg", hexs(bad))
    assert err is None and results[0][0] == "ok"
    if results[1][0] == "ok":
        pytest.skip("the library was built without avro-c: AVRO payloads are not checked")
    assert results[1][:2] == ("rejected", "INVALID_PAYLOAD"), results
    assert [m.data() for _, _, m in read_values(topic, 1, BytesSchema(), pulsar_client)] == [good]
    # schemaValidationEnabled=false sends what it is given.
    topic = unique_topic()
    results, _, _ = drive(topic, "--conf", "schemaValidationEnabled=false", "--schema",
                          f"avro:{definition}", "--msg", hexs(bad))
    assert results[0][0] == "ok"
    assert [m.data() for _, _, m in read_values(topic, 1, BytesSchema(), pulsar_client)] == [bad]


# --------------------------------------------------------------------------------------
# Evolution and enforcement (a namespace with BACKWARD and schemaValidationEnforced)
# --------------------------------------------------------------------------------------

def test_evolution_compatible_accepted_incompatible_refused(schema_namespace, pulsar_client,
                                                            tmp_path):
    topic = ph.unique_topic("evolution", namespace=schema_namespace)
    v1 = write_file(tmp_path, "v1.avsc", USER_DEFINITION)
    v2 = write_file(tmp_path, "v2.avsc", USER_V2_DEFINITION)
    produce(topic, "--schema-type", "json", "--schema-file", v1, "-m", '{"name":"a","age":1}')
    produce(topic, "--schema-type", "json", "--schema-file", v2,
            "-m", '{"name":"b","age":2,"email":"b@x"}')
    versions = registered_versions(topic)
    assert [(v["version"], v["data"]) for v in versions] == [(0, USER_DEFINITION),
                                                              (1, USER_V2_DEFINITION)]
    got = read_values(topic, 2, BytesSchema(), pulsar_client)
    assert [ver for _, ver, _ in got] == [0, 1]

    # age becomes a string: old data cannot be read with it, BACKWARD refuses it.
    bad = json.loads(USER_DEFINITION)
    bad["fields"][1]["type"] = "string"
    v3 = write_file(tmp_path, "v3.avsc", json.dumps(bad))
    proc = produce(topic, "--schema-type", "json", "--schema-file", v3,
                   "-m", '{"name":"c","age":"x"}', check=False)
    assert proc.returncode == 1 and proc.stdout == b"", proc.stdout  # no producer, no summary
    assert b"[BROKER_INCOMPATIBLE_SCHEMA]" in proc.stderr, proc.stderr
    # The broker's own text is the detail.
    assert b"IncompatibleSchemaException" in proc.stderr, proc.stderr
    assert len(registered_versions(topic)) == 2


def test_enforced_topic_refuses_producer_without_schema(schema_namespace):
    topic = ph.unique_topic("enforced", namespace=schema_namespace)
    produce(topic, "--schema-type", "string", "-m", "typed")
    proc = produce(topic, "-m", "untyped", check=False)
    assert proc.returncode == 1 and proc.stdout == b"", proc.stdout
    assert b"[BROKER_INCOMPATIBLE_SCHEMA]" in proc.stderr, proc.stderr
    assert b"without a schema to topics with a schema" in proc.stderr, proc.stderr
    assert ph.topic_stats(topic)["msgInCounter"] == 1


def test_reconnect_registers_the_schema_again(schema_namespace, pulsar_client, tmp_path):
    # On a topic that enforces its schema, a producer that came back without one would be
    # refused: the message after the unload only arrives if the reconnect registered the
    # schema again.
    topic = ph.unique_topic("reconnect", namespace=schema_namespace)
    definition = write_file(tmp_path, "user.avsc", USER_DEFINITION)
    proc = subprocess.Popen([ph.bin_path("pulsarc-produce"), "-u", ph.service_url(), topic,
                             "--schema-type", "json", "--schema-file", definition, "--stdin",
                             "--verbose"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        proc.stdin.write(b'{"name":"before","age":1}\n')
        proc.stdin.flush()
        for line in proc.stderr:
            if b"message 1 persisted" in line:
                break
        ph.unload_topic(topic)
        proc.stdin.write(b'{"name":"after","age":2}\n')
        out, err = proc.communicate(timeout=60)  # closes stdin: the end of input
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and summary(out) == {"sent": 2, "failed": 0}, err[-2000:]
    version = registered_schema(topic)["version"]
    got = read_values(topic, 2, JsonSchema(User), pulsar_client)
    assert [(u.name, ver) for u, ver, _ in got] == [("before", version), ("after", version)]


# --------------------------------------------------------------------------------------
# KeyValue, laid out as the Java client lays it out
# --------------------------------------------------------------------------------------

def check_kv_registration(topic, encoding):
    reg = registered_schema(topic)
    assert reg["type"] == "KEY_VALUE"
    props = dict(reg["properties"])
    assert json.loads(props.pop("value.schema.properties")) == JAVA_STRUCT_PROPERTIES
    assert json.loads(props.pop("key.schema.properties")) == {}
    assert props == {"key.schema.name": "String", "key.schema.type": "STRING",
                     "value.schema.name": "", "value.schema.type": "JSON",
                     "kv.encoding.type": encoding}
    # The broker splits schema_data at its length prefixes to show the parts: a STRING key
    # shows as "" only when its length is written as 0, as Java does (the C++ client's -1
    # would show as null).
    assert json.loads(reg["data"]) == {"key": "", "value": json.loads(USER_DEFINITION)}
    return reg["version"]


def test_key_value_inline_layout(unique_topic, pulsar_client, tmp_path):
    topic = unique_topic()
    definition = write_file(tmp_path, "user.avsc", USER_DEFINITION)
    pairs = [(b"k-1", b'{"name":"ann","age":1}'), (None, b'{"name":"bob","age":2}'),
             (b"", b'{"name":"cy","age":3}'), (b"k-4", None)]
    args = []
    for k, v in pairs:
        args += ["--kv-msg", "-" if k is None else hexs(k), "-" if v is None else hexs(v)]
    results, producer_version, err = drive(topic, "--kv", "inline", "string",
                                           f"json:{definition}", *args)
    assert err is None and all(r[0] == "ok" for r in results.values()), results
    version = check_kv_registration(topic, "INLINE")
    assert producer_version == version  # pulsarc_producer_schema_version

    def part(b):
        return struct.pack(">i", -1) if b is None else struct.pack(">i", len(b)) + b
    got = read_values(topic, len(pairs), BytesSchema(), pulsar_client)
    assert [m.data() for _, _, m in got] == [part(k) + part(v) for k, v in pairs]
    assert all(not m.partition_key() for _, _, m in got)
    assert {ver for _, ver, _ in got} == {version}


def test_key_value_separated_layout(unique_topic, pulsar_client, tmp_path):
    topic = unique_topic()
    definition = write_file(tmp_path, "user.avsc", USER_DEFINITION)
    key, value = "clé-7".encode(), b'{"name":"ann","age":1}'
    results, _, err = drive(topic, "--kv", "separated", "string", f"json:{definition}",
                            "--kv-msg", hexs(key), hexs(value),
                            "--kv-msg", "-", hexs(value),
                            "--kv-msg", hexs(key), "-")
    assert err is None and all(r[0] == "ok" for r in results.values()), results
    version = check_kv_registration(topic, "SEPARATED")
    got = read_values(topic, 3, BytesSchema(), pulsar_client)
    # The payload is the value alone; the key is the message key, base64 as Java writes it.
    # Null parts are the protocol's null_partition_key and null_value flags.
    assert [m.data() for _, _, m in got] == [value, value, b""]
    assert [m.partition_key() for _, _, m in got] == [base64.b64encode(key).decode(), "",
                                                      base64.b64encode(key).decode()]
    assert [m.has_null_value() for _, _, m in got] == [False, False, True]
    assert {ver for _, ver, _ in got} == {version}
    headers, _ = ph.get_message_by_id(topic, *results[0][1:3])
    assert ph.header(headers, "X-Pulsar-partition-key-b64-encoded") == "true", headers


def test_key_value_from_the_command_line(unique_topic, pulsar_client, tmp_path):
    topic = unique_topic()
    definition = write_file(tmp_path, "user.avsc", USER_DEFINITION)
    produce(topic, "--kv-encoding", "inline", "--key-schema-type", "int32", "--schema-type",
            "json", "--schema-file", definition, "-k", "42", "-m", '{"name":"ann","age":1}')
    got = read_values(topic, 1, BytesSchema(), pulsar_client)
    value = b'{"name":"ann","age":1}'
    assert got[0][2].data() == (struct.pack(">i", 4) + struct.pack(">i", 42) +
                                struct.pack(">i", len(value)) + value)
    props = registered_schema(topic)["properties"]
    assert (props["key.schema.type"], props["kv.encoding.type"]) == ("INT32", "INLINE")


def test_pulsar_client_schema_flags(unique_topic, pulsar_client):
    # pulsar-client's spelling: -vs TYPE:DEFINITION, -ks, -kvet, -kvk.
    topic = unique_topic()
    value = '{"name":"ann","age":1}'
    produce(topic, "-vs", f"json:{USER_DEFINITION}", "-ks", "string", "-kvet", "separated",
            "-kvk", "clé", "-m", value)
    reg = registered_schema(topic)
    assert (reg["type"], reg["properties"]["kv.encoding.type"]) == ("KEY_VALUE", "SEPARATED")
    msg = read_values(topic, 1, BytesSchema(), pulsar_client)[0][2]
    assert msg.data() == value.encode()
    assert base64.b64decode(msg.partition_key()) == "clé".encode()


# --------------------------------------------------------------------------------------
# Primitive schemas: the Java client's encodings
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("type_name,texts,fmt,values", [
    ("INT32", ["-2147483648", "7", "2147483647"], ">i", [-2**31, 7, 2**31 - 1]),
    ("INT64", ["-9223372036854775808", "1700000000000"], ">q", [-2**63, 1700000000000]),
    ("DOUBLE", ["3.5", "-0.1"], ">d", [3.5, -0.1]),
    ("BOOLEAN", ["true", "false"], ">?", [True, False]),
])
def test_primitive_schemas(unique_topic, pulsar_client, type_name, texts, fmt, values):
    # The Python client has no schema for these types: the test decodes the bytes.
    topic = unique_topic()
    args = []
    for t in texts:
        args += ["-m", t]
    produce(topic, "--schema-type", type_name.lower(), *args)
    reg = registered_schema(topic)
    assert (reg["type"], reg["data"]) == (type_name, "")
    got = read_values(topic, len(texts), BytesSchema(), pulsar_client)
    assert [m.data() for _, _, m in got] == [struct.pack(fmt, v) for v in values]
    assert {ver for _, ver, _ in got} == {reg["version"]}


def test_primitive_width_is_checked(unique_topic):
    results, _, err = drive(unique_topic(), "--schema", "int32", "--msg", "000102",
                            "--msg", "00010203")
    assert err is None
    assert results[0][:2] == ("rejected", "INVALID_PAYLOAD"), results
    assert results[1][0] == "ok"


# --------------------------------------------------------------------------------------
# Multi-schema producer, AUTO_PRODUCE
# --------------------------------------------------------------------------------------

def test_multi_schema_producer_alternates_versions(unique_topic, pulsar_client, tmp_path):
    topic = unique_topic()
    a = write_file(tmp_path, "a.avsc", USER_DEFINITION)
    b = write_file(tmp_path, "b.avsc", USER_V2_DEFINITION)
    plan = [("--msg", "A"), ("--msg", "A"), ("--msg-alt", "B"), ("--msg-alt", "B"),
            ("--msg-own", "A"), ("--msg", "A"), ("--msg-alt", "B")]
    args = []
    for i, (opt, _) in enumerate(plan):
        args += [opt, hexs(json.dumps({"name": f"u{i}", "age": i}).encode())]
    # A long batch delay: without the split at schema changes all would share a batch.
    results, producer_version, err = drive(topic, "--conf", "batchingMaxPublishDelayMs=300",
                            "--schema", f"json:{a}", "--alt", f"json:{b}", *args)
    assert err is None and all(r[0] == "ok" for r in results.values()), results
    versions = {v["data"]: v["version"] for v in registered_versions(topic)}
    assert set(versions) == {USER_DEFINITION, USER_V2_DEFINITION}
    want = {"A": versions[USER_DEFINITION], "B": versions[USER_V2_DEFINITION]}
    assert producer_version == want["A"]  # the producer's own schema
    got = read_values(topic, len(plan), BytesSchema(), pulsar_client)
    assert [json.loads(m.data())["name"] for _, _, m in got] == [f"u{i}" for i in range(len(plan))]
    assert [ver for _, ver, _ in got] == [want[s] for _, s in plan]
    entries = [results[i][1:3] for i in range(len(plan))]
    for i in range(1, len(plan)):
        if plan[i][1] != plan[i - 1][1]:
            assert entries[i] != entries[i - 1], f"a batch mixes schemas at message {i}"
    by_entry = {}
    for (_, s), e in zip(plan, entries):
        by_entry.setdefault(e, set()).add(s)
    assert all(len(s) == 1 for s in by_entry.values()), by_entry


def test_multi_schema_refused_schema_fails_only_its_messages(schema_namespace, pulsar_client,
                                                             tmp_path):
    # Under BACKWARD, a per-message schema that turns age into a string is refused: its
    # messages fail by name, the others around them are stored.
    topic = ph.unique_topic("multi-refused", namespace=schema_namespace)
    a = write_file(tmp_path, "a.avsc", USER_DEFINITION)
    bad = json.loads(USER_DEFINITION)
    bad["fields"][1]["type"] = "string"
    b = write_file(tmp_path, "b.avsc", json.dumps(bad))
    doc = hexs(b'{"name":"x","age":1}')
    results, _, err = drive(topic, "--schema", f"json:{a}", "--alt", f"json:{b}",
                            "--msg", doc, "--msg-alt", hexs(b'{"name":"y","age":"2"}'),
                            "--msg", doc)
    assert err is None
    assert [results[i][0] for i in (0, 2)] == ["ok", "ok"], results
    assert results[1][:2] == ("failed", "BROKER_INCOMPATIBLE_SCHEMA"), results
    assert "IncompatibleSchemaException" in results[1][2], results  # the broker's text
    assert len(registered_versions(topic)) == 1
    assert len(read_values(topic, 2, BytesSchema(), pulsar_client)) == 2


def test_auto_produce_checks_raw_bytes_against_topic_schema(unique_topic, pulsar_client,
                                                            tmp_path):
    topic = unique_topic()
    definition = write_file(tmp_path, "user.avsc", USER_DEFINITION)
    produce(topic, "--schema-type", "json", "--schema-file", definition,
            "-m", '{"name":"first","age":0}')
    version = registered_schema(topic)["version"]
    ok1, bad, ok2 = b'{"name":"ann","age":1}', b'{"name": "cut', b'{"name":"bob","age":2}'
    results, producer_version, err = drive(topic, "--schema", "auto_produce", "--msg", hexs(ok1),
                            "--msg", hexs(bad), "--msg", hexs(ok2))
    assert err is None
    assert results[0][0] == "ok" and results[2][0] == "ok", results
    assert results[1][:2] == ("rejected", "INVALID_PAYLOAD"), results
    assert producer_version == version  # it registered the topic's schema
    # The command line's --schema-type auto_produce does the same.
    proc = produce(topic, "--schema-type", "auto_produce", "-m", '{"name":"cli","age":3}',
                   "-m", "not json", check=False)
    assert summary(proc.stdout) == {"sent": 1, "failed": 1}, proc.stderr
    assert b"[INVALID_PAYLOAD]" in proc.stderr
    got = read_values(topic, 4, JsonSchema(User), pulsar_client)
    assert [u.name for u, _, _ in got] == ["first", "ann", "bob", "cli"]
    assert {ver for _, ver, _ in got} == {version}


# --------------------------------------------------------------------------------------
# Schema with batching, compression and chunking together
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("encrypted", [False, True], ids=["plain", "encrypted"])
def test_schema_with_batching_compression_and_chunking(unique_topic, pulsar_client, tmp_path,
                                                        encrypted):
    topic = unique_topic()
    encryption, key_reader = (), None
    if encrypted:  # every entry (batch, chunk) encrypted after compression, as issue 10 has it
        keys = make_rsa_key_pair(tmp_path, "schema-key")
        encryption = ("--encrypt", f"schema-key={keys.public}")
        key_reader = keys.reader()
    definition = write_file(tmp_path, "user.avsc", USER_DEFINITION)
    big_name = base64.b64encode(os.urandom(300_000)).decode()  # ~400 kB, compresses little
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"name": big_name, "age": 99}))
    small = [json.dumps({"name": f"s{i}", "age": i}).encode() for i in range(4)]
    results, _, err = drive(topic, *encryption, "--conf", "compressionType=zstd",
                            "--conf", "chunkingEnabled=true",
                            "--conf", "chunkMaxMessageSize=100000",
                            "--schema", f"json:{definition}",
                            "--msg", hexs(small[0]), "--msg", hexs(small[1]),
                            "--msg-file", str(big),
                            "--msg", hexs(small[2]), "--msg", hexs(small[3]))
    assert err is None and all(r[0] == "ok" for r in results.values()), results
    version = registered_schema(topic)["version"]
    got = read_values(topic, 5, JsonSchema(User), pulsar_client, key_reader)
    assert [(u.name, u.age) for u, _, _ in got] == [("s0", 0), ("s1", 1), (big_name, 99),
                                                    ("s2", 2), ("s3", 3)]
    assert {ver for _, ver, _ in got} == {version}
    if encrypted:  # decrypted by the consumer, so it was sent encrypted
        assert all(m.encryption_context() is not None for _, _, m in got)
    # The big one went as chunks: 300 kB of entropy need at least three 100 kB entries
    # between the entries of its neighbours.
    (l1, e1), (l2, e2) = results[1][1:3], results[3][1:3]
    if l1 == l2:
        assert e2 - e1 - 1 >= 3, results


# --------------------------------------------------------------------------------------
# The examples a user copies
# --------------------------------------------------------------------------------------

class Reading(Record):
    sensor = String(required=True)
    celsius = Integer(required=True)


def test_schema_examples_publish_records(unique_topic, pulsar_client):
    topic = unique_topic()
    proc = ph.run_bin("json_schema_producer", ph.service_url(), topic)
    assert b"[INVALID_PAYLOAD]" in proc.stderr  # the broken document, refused on purpose
    got = read_values(topic, 2, JsonSchema(User), pulsar_client)
    assert [(u.name, u.age) for u, _, _ in got] == [("ann", 31), ("bob", None)]

    topic = unique_topic()
    ph.run_bin("avro_producer", ph.service_url(), topic)
    got = read_values(topic, 3, AvroSchema(Reading), pulsar_client)
    assert [(r.sensor, r.celsius) for r, _, _ in got] == [("kitchen", 21), ("cellar", -3),
                                                          ("attic", 34)]
