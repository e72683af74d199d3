"""Helpers for the interop tests: a real Pulsar broker on one side, the official
Python client (pulsar-client) reading what pulsarc wrote on the other.

Plain functions, usable from pytest tests and from scripts alike. Only the standard
library and `pulsar` are needed; the admin API is reached over HTTP with urllib.

Environment:
  PULSAR_SERVICE_URL  binary protocol URL   [pulsar://127.0.0.1:6650]
  PULSAR_ADMIN_URL    admin/web URL         [http://127.0.0.1:8080]
  PULSARC_BUILD_DIR   build tree whose bin/ holds the programs under test [build]
                      (relative paths are taken from the repository root)
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path
from typing import Any, Callable, Iterable

import pulsar

REPO_ROOT = Path(__file__).resolve().parents[2]


def service_url() -> str:
    return os.environ.get("PULSAR_SERVICE_URL", "pulsar://127.0.0.1:6650")


def admin_url() -> str:
    return os.environ.get("PULSAR_ADMIN_URL", "http://127.0.0.1:8080").rstrip("/")


def make_client(url: str | None = None, **kw) -> "pulsar.Client":
    """An official client with its console logging at WARN (INFO logs every connect).
    PULSARC_PY_LOG_LEVEL=Debug|Info|Warn|Error changes that."""
    level = getattr(pulsar.LoggerLevel, os.environ.get("PULSARC_PY_LOG_LEVEL", "Warn"))
    kw.setdefault("operation_timeout_seconds", 30)
    kw.setdefault("logger", pulsar.ConsoleLogger(level))
    return pulsar.Client(url or service_url(), **kw)


# --------------------------------------------------------------------------------------
# Programs under test
# --------------------------------------------------------------------------------------

def build_dir() -> Path:
    d = Path(os.environ.get("PULSARC_BUILD_DIR", "build"))
    return d if d.is_absolute() else REPO_ROOT / d


def bin_path(name: str) -> str:
    """Absolute path of build/bin/<name>; raises FileNotFoundError when it was not built
    (a missing program is a failure, never a reason to skip)."""
    p = build_dir() / "bin" / name
    if not (p.is_file() and os.access(p, os.X_OK)):
        raise FileNotFoundError(f"{p} not found or not executable (build it first: cmake --build {build_dir()})")
    return str(p)


def run_bin(name: str, *args: str, timeout_s: float = 60, check: bool = True,
            input: bytes | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run a program from the build tree and capture its output (bytes). Sanitizer
    settings come from the caller's environment (scripts/test sets ASAN_OPTIONS etc.).
    With check=True a non-zero exit raises AssertionError showing stdout and stderr."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    cmd = [bin_path(name), *args]
    proc = subprocess.run(cmd, input=input, capture_output=True, timeout=timeout_s, env=full_env)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} exited with {proc.returncode}\n"
            f"--- stdout ---\n{proc.stdout.decode(errors='replace')}\n"
            f"--- stderr ---\n{proc.stderr.decode(errors='replace')}")
    return proc


# --------------------------------------------------------------------------------------
# Topic names
# --------------------------------------------------------------------------------------

def unique_topic(prefix: str = "pulsarc-test", namespace: str = "public/default",
                 persistent: bool = True) -> str:
    """A fresh fully-qualified topic name, so tests never see each other's messages."""
    domain = "persistent" if persistent else "non-persistent"
    return f"{domain}://{namespace}/{prefix}-{uuid.uuid4().hex[:12]}"


def _split_topic(topic: str) -> tuple[str, str, str]:
    """'persistent://tenant/ns/name' (or a short 'name') -> (domain, 'tenant/ns', name)."""
    if "://" in topic:
        domain, rest = topic.split("://", 1)
    else:
        domain, rest = "persistent", topic
    parts = rest.split("/")
    if len(parts) == 1:
        return domain, "public/default", parts[0]
    if len(parts) != 3:
        raise ValueError(f"unsupported topic name {topic!r}")
    return domain, f"{parts[0]}/{parts[1]}", parts[2]


def topic_rest_path(topic: str) -> str:
    """The topic's part of an admin URL: 'persistent/public/default/<name>'."""
    domain, ns, name = _split_topic(topic)
    return f"{domain}/{ns}/{urllib.parse.quote(name, safe='')}"


def partition_name(topic: str, i: int) -> str:
    return f"{topic}-partition-{i}"


# --------------------------------------------------------------------------------------
# Reading with the official client
# --------------------------------------------------------------------------------------

def java_partition(key: str, n: int) -> int:
    """The partition the Java client's default hash (JavaStringHash) gives key."""
    h = 0
    units = key.encode("utf-16-be")
    for k in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[k:k + 2], "big")) & 0xFFFFFFFF
    return (h & 0x7FFFFFFF) % n


def _as_bytes(v) -> bytes | None:
    if not v:
        return None
    return v.encode() if isinstance(v, str) else bytes(v)


def message_to_dict(msg: "pulsar.Message") -> dict:
    """Everything the official Python client exposes about a received message:
    data (bytes), partition_key (str|None), ordering_key (bytes|None), properties
    (dict str->str), event_timestamp / publish_timestamp (ms, 0 = unset),
    producer_name, topic_name (the partition's name for partitioned topics),
    redelivery_count, schema_version, message_id (ledger, entry, partition, batch_index).

    Not exposed by pulsar-client 3.13 Message: sequence id, compression, chunk and
    batch metadata, schema info beyond schema_version. For those use
    get_message_by_id() (admin API headers) on the message_id's ledger/entry."""
    mid = msg.message_id()
    return {
        "data": msg.data(),
        "partition_key": msg.partition_key() or None,
        # bytes on the wire; pulsar-client hands it back as str, so give bytes back
        "ordering_key": _as_bytes(msg.ordering_key()),
        "properties": dict(msg.properties()),
        "event_timestamp": msg.event_timestamp(),
        "publish_timestamp": msg.publish_timestamp(),
        "producer_name": msg.producer_name(),
        "topic_name": msg.topic_name(),
        "redelivery_count": msg.redelivery_count(),
        "schema_version": msg.schema_version(),
        "message_id": (mid.ledger_id(), mid.entry_id(), mid.partition(), mid.batch_index()),
    }


def _start_id(start: Any) -> "pulsar.MessageId":
    if start == "earliest":
        return pulsar.MessageId.earliest
    if start == "latest":
        return pulsar.MessageId.latest
    return start  # already a MessageId


def _read_rest(reader: "pulsar.Reader", out: list[dict], partition: int | None = None,
               deadline: float | None = None) -> None:
    """Append what the reader has not read yet of what is stored (has_message_available
    asks the broker): exact once nothing is being written any more, and immediate, unlike
    listening for a while. With `partition`, the ids get that partition index. Raises
    TimeoutError when a monotonic `deadline` passes first."""
    while reader.has_message_available():
        wait_ms = 10_000
        if deadline is not None:
            wait_ms = min(wait_ms, int((deadline - time.monotonic()) * 1000))
            if wait_ms <= 0:
                raise TimeoutError
        d = message_to_dict(reader.read_next(timeout_millis=wait_ms))
        if partition is not None:
            ledger, entry, _, batch = d["message_id"]
            d["message_id"] = (ledger, entry, partition, batch)
        out.append(d)


def _read_partitions_to_end(client: "pulsar.Client", topic: str, partitions: int,
                            out: list[dict], start_of: Callable[[int], "pulsar.MessageId"],
                            deadline: float | None = None) -> None:
    """_read_rest over each partition (the topic itself when partitions is 0), with a
    reader from start_of(partition index, -1 for the topic itself). TimeoutError names the
    partition being read when the deadline passed."""
    for part in range(partitions) if partitions else [-1]:
        name = partition_name(topic, part) if partitions else topic
        reader = client.create_reader(name, start_of(part))
        try:
            _read_rest(reader, out, part if partitions else None, deadline)
        except TimeoutError:
            raise TimeoutError(name) from None
        finally:
            reader.close()


def read_messages(topic: str, n: int, timeout_s: float = 30, start: Any = "earliest",
                  to_end: bool = False, extra_wait_s: float = 0.0,
                  client: "pulsar.Client | None" = None) -> list[dict]:
    """Read up to n messages from a non-partitioned topic (or one partition) with a
    Reader, from `start` ('earliest', 'latest' or a MessageId). Returns what arrived
    within timeout_s, as dicts (see message_to_dict); callers assert on the count.
    With to_end, also returns whatever else is stored after the n-th message, so tests
    can prove nothing extra (a duplicate) was stored; only once the writers are done.
    With extra_wait_s > 0, keeps listening that long after the n-th message instead: for
    what the broker stores but a reader skips, which has_message_available counts but no
    read returns (the first chunk of a replayed chunked message: the broker dedups a
    chunked message by its last chunk)."""
    own = client is None
    client = client or make_client()
    out: list[dict] = []
    try:
        reader = client.create_reader(topic, _start_id(start))
        try:
            deadline = time.monotonic() + timeout_s
            while len(out) < n:
                left_ms = int((deadline - time.monotonic()) * 1000)
                if left_ms <= 0:
                    break
                try:
                    out.append(message_to_dict(reader.read_next(timeout_millis=min(left_ms, 1000))))
                except pulsar.Timeout:
                    continue
            if to_end:
                _read_rest(reader, out)
            deadline = time.monotonic() + extra_wait_s
            while (left_ms := int((deadline - time.monotonic()) * 1000)) > 0:
                try:
                    out.append(message_to_dict(reader.read_next(timeout_millis=left_ms)))
                except pulsar.Timeout:
                    break
        finally:
            reader.close()
    finally:
        if own:
            client.close()
    return out


def read_partitioned(topic: str, n: int, timeout_s: float = 30, to_end: bool = False,
                     subscription: str | None = None,
                     client: "pulsar.Client | None" = None) -> list[dict]:
    """Read up to n messages from a (possibly partitioned) topic with an Exclusive
    consumer starting at the earliest message. Each dict's topic_name says which
    partition the message came from; message_id[2] is the partition index.
    Order is per partition only. With to_end, also returns whatever else each partition
    stores after the last message read from it (read_messages' to_end, per partition)."""
    own = client is None
    client = client or make_client()
    out: list[dict] = []
    try:
        consumer = client.subscribe(
            topic, subscription or f"pulsarc-check-{uuid.uuid4().hex[:8]}",
            consumer_type=pulsar.ConsumerType.Exclusive,
            initial_position=pulsar.InitialPosition.Earliest)
        try:
            deadline = time.monotonic() + timeout_s
            while len(out) < n and (left := int((deadline - time.monotonic()) * 1000)) > 0:
                try:
                    msg = consumer.receive(timeout_millis=min(left, 1000))
                except pulsar.Timeout:
                    continue
                out.append(message_to_dict(msg))
                consumer.acknowledge(msg)
        finally:
            consumer.close()
        if to_end:
            def after_last_read(p: int) -> "pulsar.MessageId":
                last = max((m["message_id"] for m in out if m["message_id"][2] == p),
                           default=None)
                return pulsar.MessageId(p, last[0], last[1], last[3]) if last else \
                    pulsar.MessageId.earliest

            _read_partitions_to_end(client, topic, partitioned_metadata(topic).get("partitions", 0),
                                    out, after_last_read)
    finally:
        if own:
            client.close()
    return out


def produce_python(topic: str, payloads: Iterable[bytes], client: "pulsar.Client | None" = None,
                   send_kwargs: dict | None = None, **producer_kwargs) -> list[tuple]:
    """Publish with the official client (reference behaviour for comparisons).
    Returns the message ids as (ledger, entry, partition, batch_index) tuples."""
    own = client is None
    client = client or make_client()
    ids = []
    try:
        producer = client.create_producer(topic, **producer_kwargs)
        try:
            for p in payloads:
                mid = producer.send(p, **(send_kwargs or {}))
                ids.append((mid.ledger_id(), mid.entry_id(), mid.partition(), mid.batch_index()))
        finally:
            producer.close()
    finally:
        if own:
            client.close()
    return ids


# --------------------------------------------------------------------------------------
# Admin API (HTTP, urllib)
# --------------------------------------------------------------------------------------

class AdminError(RuntimeError):
    def __init__(self, method: str, url: str, status: int, body: str):
        super().__init__(f"{method} {url} -> HTTP {status}: {body[:500]}")
        self.status = status
        self.body = body


def admin_request(method: str, path: str, body: Any = None, raw: bool = False,
                  timeout_s: float = 30):
    """Call the admin API. `path` starts with '/admin/...' or '/lookup/...'. A JSON body
    is sent for non-None `body`. Returns parsed JSON (None for an empty answer), or
    (status, headers, bytes) with raw=True. Raises AdminError on HTTP >= 400."""
    url = admin_url() + path
    data = None
    headers = {"Accept": "application/json"}
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            payload = resp.read()
            if raw:
                return resp.status, dict(resp.headers.items()), payload
    except urllib.error.HTTPError as e:
        raise AdminError(method, url, e.code, e.read().decode(errors="replace")) from None
    if not payload:
        return None
    try:
        return json.loads(payload)
    except ValueError:
        return payload.decode(errors="replace")


def _t(topic: str) -> str:
    return "/admin/v2/" + topic_rest_path(topic)


def broker_ready() -> bool:
    try:
        admin_request("GET", "/admin/v2/namespaces/public/default", timeout_s=5)
        return True
    except (AdminError, OSError):
        return False


def create_topic(topic: str) -> None:
    """Create a non-partitioned topic."""
    admin_request("PUT", _t(topic))


def create_partitioned_topic(topic: str, partitions: int) -> None:
    admin_request("PUT", _t(topic) + "/partitions", partitions)


def update_partitions(topic: str, partitions: int) -> None:
    """Grow a partitioned topic to `partitions` partitions (Pulsar cannot shrink)."""
    admin_request("POST", _t(topic) + "/partitions", partitions)


def partitioned_metadata(topic: str) -> dict:
    """{'partitions': N, ...}; N == 0 for a non-partitioned topic."""
    return admin_request("GET", _t(topic) + "/partitions")


def delete_topic(topic: str, partitioned: bool = False, force: bool = True) -> None:
    suffix = "/partitions" if partitioned else ""
    admin_request("DELETE", _t(topic) + suffix + f"?force={'true' if force else 'false'}")


def list_topics(namespace: str = "public/default") -> list[str]:
    return admin_request("GET", f"/admin/v2/persistent/{namespace}")


def set_namespace_deduplication(enabled: bool, namespace: str = "public/default") -> None:
    admin_request("POST", f"/admin/v2/namespaces/{namespace}/deduplication", bool(enabled))


# Deduplication is switched on per namespace, never per topic. Pulsar up to 4.0.8 (fixed
# upstream by apache/pulsar#25953, not in any 4.0 release served here) can expose a topic
# for writes before its deduplication state is rebuilt when a *topic-level* policy is
# present: each topic load then replays the dedup cursor twice at once (the broker logs
# "Replaying N entries for deduplication" twice per load), and a resend racing that can
# be stored again. Measured: 51 duplicates in 22,000 and 1 in 2,000 under repeated
# unloads. A namespace policy loads once, so dedup tests use topics in this namespace.
DEDUP_NAMESPACE = "public/pulsarc-dedup"
_dedup_namespace_ready: set[str] = set()


def ensure_dedup_namespace() -> str:
    """Create DEDUP_NAMESPACE with deduplication on (once per broker); returns its name."""
    if admin_url() not in _dedup_namespace_ready:
        try:
            admin_request("PUT", f"/admin/v2/namespaces/{DEDUP_NAMESPACE}")
        except AdminError as e:
            if e.status != 409:  # 409: it exists already (an earlier session)
                raise
        set_namespace_deduplication(True, DEDUP_NAMESPACE)
        _dedup_namespace_ready.add(admin_url())
    return DEDUP_NAMESPACE


def topic_stats(topic: str) -> dict:
    """Stats of a non-partitioned topic (or one partition): 'publishers' is a list of
    dicts with producerName, producerId, msgRateIn, ..., 'msgInCounter', etc."""
    return admin_request("GET", _t(topic) + "/stats")


def partitioned_stats(topic: str, per_partition: bool = True) -> dict:
    return admin_request("GET", _t(topic) + f"/partitioned-stats?perPartition={'true' if per_partition else 'false'}")


def publishers(topic: str) -> list[dict]:
    return topic_stats(topic).get("publishers", [])


def internal_stats(topic: str) -> dict:
    """Managed-ledger view: entriesAddedCounter, numberOfEntries, ledgers, cursors..."""
    return admin_request("GET", _t(topic) + "/internalStats")


def unload_topic(topic: str) -> None:
    """Close the topic on its broker; connected producers are told to reconnect."""
    admin_request("PUT", _t(topic) + "/unload")


def last_message_id(topic: str) -> dict:
    """{'ledgerId': .., 'entryId': .., 'partitionIndex': ..} of the last stored entry."""
    return admin_request("GET", _t(topic) + "/lastMessageId")


def get_message_by_id(topic: str, ledger_id: int, entry_id: int) -> tuple[dict, bytes]:
    """One stored entry as the broker sees it: (headers, body). The headers carry
    metadata the Python client hides, e.g. X-Pulsar-sequence-id, X-Pulsar-producer-name,
    X-Pulsar-num-batch-message, X-Pulsar-compression, X-Pulsar-uncompressed-size,
    X-Pulsar-publish-time, X-Pulsar-PROPERTY-<key>. Header names are case-sensitive as
    sent; use header() to look one up."""
    _, headers, body = admin_request("GET", _t(topic) + f"/ledger/{ledger_id}/entry/{entry_id}", raw=True)
    return headers, body


def header(headers: dict, name: str, default=None):
    """Case-insensitive header lookup."""
    low = name.lower()
    for k, v in headers.items():
        if k.lower() == low:
            return v
    return default


def lookup(topic: str) -> dict:
    """Which broker serves the topic: {'brokerUrl': 'pulsar://host:port', ...}."""
    domain, ns, name = _split_topic(topic)
    return admin_request("GET", f"/lookup/v2/topic/{domain}/{ns}/{urllib.parse.quote(name, safe='')}")


def wait_for(predicate: Callable[[], Any], timeout_s: float = 30, interval_s: float = 0.2,
             what: str = "condition"):
    """Poll until predicate() returns something truthy (and return it); raise
    AssertionError after timeout_s. Exceptions from the predicate count as 'not yet'."""
    deadline = time.monotonic() + timeout_s
    last_exc = None
    while time.monotonic() < deadline:
        try:
            v = predicate()
            if v:
                return v
        except Exception as e:  # noqa: BLE001 - retried until the deadline
            last_exc = e
        time.sleep(interval_s)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}"
                         + (f" (last error: {last_exc})" if last_exc else ""))


def deduplication_status(topic: str) -> str:
    """The broker's own view of deduplication on a loaded topic (or one partition):
    'Enabled', 'Disabled', 'Recovering', 'Removing' or 'Failed'. Asking loads the topic."""
    return topic_stats(topic).get("deduplicationStatus", "")


def wait_deduplication_enabled(topic: str, partitions: int = 0, timeout_s: float = 60) -> None:
    """Wait until the broker reports deduplication enabled on a topic of DEDUP_NAMESPACE
    (or on every partition): a producer that registers before that is not deduplicated."""
    assert f"/{DEDUP_NAMESPACE}/" in topic, f"{topic} is not in {DEDUP_NAMESPACE}"
    names = [partition_name(topic, i) for i in range(partitions)] if partitions else [topic]
    wait_for(lambda: all(deduplication_status(n) == "Enabled" for n in names),
             timeout_s=timeout_s, what=f"deduplication enabled on {topic}")


def entry_metadata(topic: str, ledger_id: int, entry_id: int) -> dict:
    """What the broker stored in one entry's metadata, from the admin API's headers:
    {'sequence_id': int, 'num_messages': int (1 when not a batch), 'producer_name': str}."""
    headers, _ = get_message_by_id(topic, ledger_id, entry_id)
    seq = header(headers, "X-Pulsar-sequence-id")
    return {"sequence_id": int(seq) if seq is not None else None,
            "num_messages": int(header(headers, "X-Pulsar-num-batch-message", 1)),
            "producer_name": header(headers, "X-Pulsar-producer-name")}


def read_to_end(topic: str, partitions: int = 0, timeout_s: float = 120,
                client: "pulsar.Client | None" = None) -> list[dict]:
    """Everything stored on a topic (each partition of a partitioned one, partition by
    partition) when nothing is being written any more: reads from the earliest message
    until the broker says none is left (has_message_available), so a test whose messages
    went missing ends at once instead of waiting for a count that never comes. As dicts
    (message_to_dict); for partitions, message_id[2] is the partition index. Raises
    AssertionError when the reading itself does not finish within timeout_s."""
    own = client is None
    client = client or make_client()
    out: list[dict] = []
    deadline = time.monotonic() + timeout_s
    try:
        _read_partitions_to_end(client, topic, partitions, out,
                                lambda _: pulsar.MessageId.earliest, deadline)
    except TimeoutError as e:
        raise AssertionError(f"reading {e} did not finish within {timeout_s} s "
                             f"({len(out)} messages so far)") from None
    finally:
        if own:
            client.close()
    return out


# --------------------------------------------------------------------------------------
# The secured broker (scripts/broker-secure): TLS, tokens, mTLS, basic, authorization
# --------------------------------------------------------------------------------------

def _secure_secrets_dir() -> Path:
    cache = Path(os.environ.get("PULSARC_CACHE", Path.home() / ".cache" / "pulsarc"))
    return Path(os.environ.get("PULSAR_SECURE_SECRETS", cache / "broker-secure" / "secrets"))


def secure_env() -> dict:
    """Where the secured broker listens and where its generated files are: the exports of
    `scripts/broker-secure env`, with the same defaults when they are not set."""
    s = _secure_secrets_dir()
    e = os.environ.get
    return {
        "tls_url": e("PULSAR_SECURE_TLS_URL", "pulsar+ssl://localhost:6651"),
        "https_url": e("PULSAR_SECURE_HTTPS_URL", "https://localhost:8443"),
        "plain_url": e("PULSAR_SECURE_PLAIN_URL", "pulsar://localhost:6660"),
        "http_url": e("PULSAR_SECURE_HTTP_URL", "http://localhost:8090"),
        "tls_port": int(e("PULSAR_SECURE_TLS_PORT", "6651")),
        "plain_port": int(e("PULSAR_SECURE_PORT", "6660")),
        "secrets": str(s),
        "ca": e("PULSAR_SECURE_CA", str(s / "ca.cert.pem")),
        "other_ca": e("PULSAR_SECURE_OTHER_CA", str(s / "other-ca.cert.pem")),
        "client_cert": e("PULSAR_SECURE_CLIENT_CERT", str(s / "client.cert.pem")),
        "client_key": e("PULSAR_SECURE_CLIENT_KEY", str(s / "client.key-pk8.pem")),
        "token_key": e("PULSAR_SECURE_TOKEN_KEY", str(s / "token-secret.key")),
        "admin_token_file": e("PULSAR_SECURE_ADMIN_TOKEN_FILE", str(s / "admin.token")),
        "producer_token_file": e("PULSAR_SECURE_PRODUCER_TOKEN_FILE", str(s / "producer.token")),
        "noperm_token_file": e("PULSAR_SECURE_NOPERM_TOKEN_FILE", str(s / "noperm.token")),
        "expired_token_file": e("PULSAR_SECURE_EXPIRED_TOKEN_FILE", str(s / "expired.token")),
        "basic_user": e("PULSAR_SECURE_BASIC_USER", "basicuser"),
        "basic_password_file": e("PULSAR_SECURE_BASIC_PASSWORD_FILE", str(s / "basic.password")),
    }


def read_secret(path: str) -> str:
    return Path(path).read_text().strip()


def mint_token(role: str, expires_in_s: float | None = None, key_file: str | None = None) -> str:
    """An HS256 JWT {"sub": role[, "exp": now + expires_in_s]} signed with the secured
    broker's secret key, as `bin/pulsar tokens create` makes it. A negative expires_in_s
    gives an expired token."""
    import base64
    import hashlib
    import hmac

    key = Path(key_file or secure_env()["token_key"]).read_bytes()
    claims: dict = {"sub": role}
    if expires_in_s is not None:
        claims["exp"] = int(time.time() + expires_in_s)

    def b64(b: bytes) -> str:
        return base64.urlsafe_b64encode(b).rstrip(b"=").decode()

    signing = b64(json.dumps({"alg": "HS256"}, separators=(",", ":")).encode()) + "." + \
        b64(json.dumps(claims, separators=(",", ":")).encode())
    return signing + "." + b64(hmac.new(key, signing.encode(), hashlib.sha256).digest())


def make_secure_client(token: str | None = None, url: str | None = None, **kw) -> "pulsar.Client":
    """An official client on the secured broker's TLS port, trusting the test CA and
    checking the host name, authenticated with `token` (default: the superuser's)."""
    env = secure_env()
    kw.setdefault("tls_trust_certs_file_path", env["ca"])
    kw.setdefault("tls_validate_hostname", True)
    if "authentication" not in kw:
        kw["authentication"] = pulsar.AuthenticationToken(token or read_secret(env["admin_token_file"]))
    return make_client(url or env["tls_url"], **kw)


def secure_admin_request(method: str, path: str, body: Any = None, timeout_s: float = 30):
    """The secured broker's admin API over HTTPS (test CA, host name checked), as the
    superuser. Returns parsed JSON or None; raises AdminError on HTTP >= 400."""
    import ssl

    env = secure_env()
    url = env["https_url"].rstrip("/") + path
    headers = {"Accept": "application/json",
               "Authorization": "Bearer " + read_secret(env["admin_token_file"])}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    ctx = ssl.create_default_context(cafile=env["ca"])
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout_s, context=ctx) as resp:
            payload = resp.read()
    except urllib.error.HTTPError as e:
        raise AdminError(method, url, e.code, e.read().decode(errors="replace")) from None
    return json.loads(payload) if payload else None


def secure_broker_ready() -> bool:
    try:
        secure_admin_request("GET", "/admin/v2/namespaces/public/default", timeout_s=5)
        return True
    except (AdminError, OSError, ValueError):
        return False


def result_names() -> dict:
    """pulsarc_strerror() text -> pulsarc_result_name() for every result, from the built
    shared library, to turn a program's "... : <strerror> (detail)" line into the name."""
    import ctypes

    lib = ctypes.CDLL(str(build_dir() / "lib" / "libpulsarc.so"))
    lib.pulsarc_strerror.restype = ctypes.c_char_p
    lib.pulsarc_strerror.argtypes = [ctypes.c_int]
    lib.pulsarc_result_name.restype = ctypes.c_char_p
    lib.pulsarc_result_name.argtypes = [ctypes.c_int]
    out = {}
    for v in range(-64, 200):
        name = lib.pulsarc_result_name(v).decode()
        if name != "UNKNOWN_RESULT":
            out[lib.pulsarc_strerror(v).decode()] = name
    return out
