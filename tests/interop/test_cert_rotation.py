"""autoCertRefreshSeconds against the secured broker (scripts/broker-secure): the client
certificate (CN=pulsarc-client, the mTLS role the broker authorises, signed by the
broker's test CA) is replaced on disk while pulsarc produces; a forced reconnect after
the first certificate expired succeeds with the new one, and the official
client reads every acknowledged message exactly once. Without autoCertRefreshSeconds the
same reconnect fails with a named TLS error.

Run: scripts/broker-secure start; eval "$(scripts/broker-secure env)";
     python3 -m pytest -v tests/interop/test_cert_rotation.py   (or -m secure)"""

from __future__ import annotations

import datetime
import re
import threading
import time
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

import pulsar_helpers as ph
from pulsarc_messages import gen_messages
from test_security import ESTABLISHED_RE, broker, output, reader_client  # noqa: F401 - fixtures

pytestmark = pytest.mark.secure


def issue_client_cert(env: dict, cert_path: Path, key_path: Path, life_s: float) -> int:
    """A certificate for CN=pulsarc-client valid from a minute ago for life_s seconds,
    signed by the secured broker's CA, written over cert_path and key_path the way a
    deployment tool replaces files (a new file renamed over the old). Returns its serial."""
    secrets = Path(env["secrets"])
    ca_cert = x509.load_pem_x509_certificate((secrets / "ca.cert.pem").read_bytes())
    ca_key = serialization.load_pem_private_key((secrets / "ca.key.pem").read_bytes(), None)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = datetime.datetime.now(datetime.timezone.utc)
    serial = x509.random_serial_number()
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pulsarc-client")]))
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(serial)
            .not_valid_before(now - datetime.timedelta(seconds=60))
            .not_valid_after(now + datetime.timedelta(seconds=life_s))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    for path, data in ((key_path, key.private_bytes(serialization.Encoding.PEM,
                                                    serialization.PrivateFormat.PKCS8,
                                                    serialization.NoEncryption())),
                       (cert_path, cert.public_bytes(serialization.Encoding.PEM))):
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
    return serial


def dedup_topic(unique_topic) -> str:
    """A fresh topic in a namespace of the secured broker with deduplication on (a
    namespace policy, see DEDUP_NAMESPACE in pulsar_helpers) where the mTLS role may
    produce: a message resent after a cut connection is then stored once, so "exactly
    once" is the broker's promise and not luck. Waits until the broker applies it."""
    ns = ph.DEDUP_NAMESPACE
    try:
        ph.secure_admin_request("PUT", f"/admin/v2/namespaces/{ns}")
    except ph.AdminError as e:
        if e.status != 409:  # it exists already (an earlier run)
            raise
    ph.secure_admin_request("POST", f"/admin/v2/namespaces/{ns}/deduplication", True)
    ph.secure_admin_request("POST", f"/admin/v2/namespaces/{ns}/permissions/pulsarc-client",
                            ["produce"])
    topic = unique_topic(namespace=ns)
    path = "/admin/v2/persistent/" + topic.split("://", 1)[1]
    ph.secure_admin_request("PUT", path)
    ph.wait_for(lambda: ph.secure_admin_request("GET", path + "/stats")
                .get("deduplicationStatus") == "Enabled",
                timeout_s=60, what=f"deduplication enabled on {topic}")
    return topic


def unload(topic: str) -> None:
    ph.secure_admin_request("PUT", "/admin/v2/persistent/" + topic.split("://", 1)[-1] + "/unload")


@pytest.fixture
def tls_proxy(secure_broker, tmp_path):
    """The fault proxy in front of the TLS port (TLS runs end to end through it). A topic
    unload alone re-creates the producer on the same connection, which never shows the
    certificate again: cutting the connection is what forces a new handshake."""
    from proxy_helpers import FaultProxy

    with FaultProxy.start([("127.0.0.1:0", f"localhost:{secure_broker['tls_port']}")],
                          log_path=tmp_path / "proxy.log") as proxy:
        yield proxy


def force_reconnect(producer: "Producer", proxy, topic: str) -> None:
    """The topic unloaded, and the producer's connection cut: it must connect anew."""
    producer.unload(topic)
    time.sleep(0.5)
    proxy.cut("rst")


class Producer:
    """interop_producer in a thread: COUNT messages at RATE per second over mTLS."""

    def __init__(self, env, url, topic, count, rate, cert, key, *conf: str, producer_conf=()):
        args = [url, topic, str(count), "async", "--rate", str(rate)]
        for kv in producer_conf:
            args += ["--conf", kv]
        for kv in (f"tlsTrustCertsFilePath={env['ca']}", "authPlugin=tls",
                   f"authParams=tlsCertFile:{cert},tlsKeyFile:{key}", "logLevel=debug",
                   "initialBackoffIntervalMs=100", "maxBackoffIntervalMs=1000", *conf):
            args += ["--client-conf", kv]
        self.proc = None
        self.thread = threading.Thread(target=self._run, args=(args, count / rate + 90), daemon=True)
        self.thread.start()

    def _run(self, args, timeout_s):
        self.proc = ph.run_bin("interop_producer", *args, timeout_s=timeout_s, check=False)

    def unload(self, topic: str) -> None:
        """Unload the topic; when the broker has no such topic, say what the producer said."""
        try:
            unload(topic)
        except ph.AdminError:
            proc = self.wait()
            pytest.fail(f"unload failed; pulsarc said:\n{output(proc)[-4000:]}")

    def wait(self):
        self.thread.join()
        assert self.proc is not None, "interop_producer did not run"
        return self.proc


def rotate(env, proxy, topic, tmp_path, life_s, rate, *conf, reconnect_early=False,
           producer_conf=()):
    """The scenario both tests share: a first certificate valid for life_s seconds; the
    producer sends at rate for life_s + 20 s; after 5 s the files are replaced by a
    certificate valid for a day; (with reconnect_early, a forced reconnect 2 s later;)
    3 s after the first certificate expired, a forced reconnect. Returns the producer's
    process, its output with a diagnostic, the count and the new certificate's serial."""
    cert, key = tmp_path / "client.cert.pem", tmp_path / "client.key.pem"
    issue_client_cert(env, cert, key, life_s)
    first_expiry = time.monotonic() + life_s
    count = (life_s + 20) * rate
    url = f"pulsar+ssl://localhost:{proxy.listen_addresses[0][1]}"
    producer = Producer(env, url, topic, count, rate, cert, key, *conf, producer_conf=producer_conf)
    time.sleep(5)
    new_serial = issue_client_cert(env, cert, key, 24 * 3600)
    if reconnect_early:
        time.sleep(2)
        force_reconnect(producer, proxy, topic)
    time.sleep(max(0.0, first_expiry - time.monotonic()) + 3)
    force_reconnect(producer, proxy, topic)
    proc = producer.wait()
    text = output(proc)
    return proc, text, f"--- pulsarc (exit {proc.returncode}) ---\n{text[-5000:]}", count, new_serial


def test_rotated_certificate_serves_the_reconnects(secure_broker, reader_client, unique_topic,
                                                   tmp_path, tls_proxy):
    """A certificate valid for a minute, replaced on disk after a few seconds by one valid
    for a day; one forced reconnect soon after (it reads the new files: logged with the new
    serial, a full handshake, no resumed session of the old identity) and one after the
    first certificate expired. Every message is acknowledged and read back exactly once
    (deduplication on: a message resent after a cut is stored once)."""
    topic = dedup_topic(unique_topic)
    proc, text, diag, count, new_serial = rotate(secure_broker, tls_proxy, topic, tmp_path, 60,
                                                 10, "autoCertRefreshSeconds=1",
                                                 reconnect_early=True)
    assert proc.returncode == 0 and f"sent={count} failed=0" in proc.stdout.decode(), diag
    m = re.search(r"TLS files changed; new connections use them: client certificate .*?"
                  r"CN=pulsarc-client, serial ([0-9A-F]+)", text)
    assert m, f"the new files were not read\n{diag}"
    assert int(m[1], 16) == new_serial, f"serial {m[1]}, issued {new_serial:X}\n{diag}"
    after = [bool(h.group(2)) for h in ESTABLISHED_RE.finditer(text[m.end():])]
    assert len(after) >= 2, f"expected a reconnect after each cut\n{diag}"
    assert not after[0], f"the first connection after the change resumed an old session\n{diag}"
    assert "cannot be used" not in text, diag
    got = ph.read_messages(topic, count, timeout_s=60, to_end=True, client=reader_client)
    assert [g["data"] for g in got] == [w["data"] for w in gen_messages(count)]


@pytest.mark.parametrize("resumption", ["false", "true"])
def test_without_refresh_the_reconnect_after_expiry_fails(secure_broker, unique_topic, tmp_path,
                                                          tls_proxy, resumption):
    """autoCertRefreshSeconds=0: the files are read once. The same replacement, then a
    forced reconnect after the first certificate expired: every reconnect presents the
    expired one and the broker refuses it. With tlsEnableSessionResumption the broker
    would take a resumed session made while the certificate was valid without looking at
    it again (seen with Pulsar 4.0): pulsarc offers none once its certificate expired."""
    proc, text, diag, _, _ = rotate(secure_broker, tls_proxy, unique_topic(), tmp_path, 20, 5,
                                    "autoCertRefreshSeconds=0",
                                    f"tlsEnableSessionResumption={resumption}",
                                    producer_conf=["sendTimeoutMs=8000"])
    assert proc.returncode != 0 and "failed=0" not in proc.stdout.decode(), diag
    assert "TLS files changed" not in text, diag
    assert re.search(r"refused our client certificate|TLS_CLIENT_CERT", text), diag
