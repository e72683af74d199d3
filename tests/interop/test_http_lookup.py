"""pulsarc with an http:// service URL: topics are looked up over the broker's admin REST
API (/lookup/v2/topic/..., /admin/v2/.../partitions), then pulsarc publishes over the
binary protocol to the broker the answer names. The official Python client reads back.

Fixture web services (http_fixtures.py) check that credentials follow a redirect only to
the service URL's hosts (unless httpLookupAuthAllowRedirect) and that tlsProtocols and
tlsCiphers apply to HTTPS lookups. The https + token case needs the secured broker
(scripts/broker-secure) and is marked `secure` like tests/interop/test_security.py."""

from __future__ import annotations

import re
import ssl
import subprocess
import urllib.parse

import pytest

import pulsar_helpers as ph
from http_fixtures import RecordingService, Redirector
from pulsarc_messages import gen_messages


def http_url() -> str:
    """The default broker's web service, where the admin helpers already go."""
    return ph.admin_url()


def produce(url: str, topic: str, count: int, *args: str, mode: str = "async",
            check: bool = True, timeout_s: float = 120):
    proc = ph.run_bin("interop_producer", url, topic, str(count), mode, *args,
                      timeout_s=timeout_s, check=check)
    out = proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
    return proc, out


def assert_exact(want: list[dict], got: list[dict]):
    assert len(got) == len(want)
    for i, (w, g) in enumerate(zip(want, got)):
        assert g["data"] == w["data"], f"payload of message {i}"
        assert g["partition_key"] == w["partition_key"], f"key of message {i}"
        assert g["properties"] == w["properties"], f"properties of message {i}"
        assert g["event_timestamp"] == w["event_timestamp"], f"event time of message {i}"


def test_plain_topic_over_http_lookup(unique_topic):
    topic = unique_topic()
    count = 500
    _, out = produce(http_url(), topic, count)
    assert f"sent={count} failed=0" in out, out
    received = ph.read_messages(topic, count, timeout_s=60, to_end=True)
    assert_exact(gen_messages(count), received)


def test_default_port_is_8080(unique_topic):
    parsed = urllib.parse.urlsplit(http_url())
    if parsed.port not in (None, 8080):
        pytest.fail(f"the default broker's web service is not on port 8080: {http_url()}")
    topic = unique_topic()
    _, out = produce(f"http://{parsed.hostname}", topic, 5, mode="sync")
    assert "sent=5 failed=0" in out, out
    assert_exact(gen_messages(5), ph.read_messages(topic, 5, to_end=True))


def test_partitioned_topic_over_http_lookup(unique_topic):
    topic = unique_topic()
    partitions, count = 3, 600
    ph.create_partitioned_topic(topic, partitions)
    # Without keys in every message, round-robin spreads them over the partitions.
    _, out = produce(http_url(), topic, count)
    assert f"sent={count} failed=0" in out, out
    received = ph.read_partitioned(topic, count, timeout_s=60, to_end=True)
    want = gen_messages(count)
    assert len(received) == count
    by_index = {int(m["properties"]["index"]): m for m in received}
    assert sorted(by_index) == list(range(count)), "every message exactly once"
    assert_exact(want, [by_index[i] for i in range(count)])
    used = {m["message_id"][2] for m in received}
    assert used == set(range(partitions)), f"partitions used: {sorted(used)}"
    # Order holds within each partition.
    for p in range(partitions):
        idx = [int(m["properties"]["index"]) for m in received if m["message_id"][2] == p]
        assert idx == sorted(idx), f"order in partition {p}"


def test_unknown_namespace_is_a_clear_error(unique_topic):
    topic = unique_topic(namespace="public/no-such-namespace-for-http")
    proc, out = produce(http_url(), topic, 1, mode="sync", check=False, timeout_s=60)
    assert proc.returncode != 0, out
    assert "topic not found" in out, out
    assert "Namespace not found" in out, out
    assert "status 404" in out, out


def test_unreachable_web_service_fails_with_connect_error(unique_topic):
    proc, out = produce("http://127.0.0.1:1", unique_topic(), 1, "--client-conf",
                        "operationTimeoutMs=3000", mode="sync", check=False, timeout_s=60)
    assert proc.returncode != 0, out
    assert re.search(r"could not connect", out), out
    assert "127.0.0.1:1" in out, out


# --------------------------------------------------------------------------------------
# Credentials and redirects: fixture web services in front of the default broker
# --------------------------------------------------------------------------------------

REDIRECT_TOKEN = "redirect-test-token-not-for-other-hosts"


def redirected_produce(unique_topic, *extra: str) -> tuple[Redirector, RecordingService, str]:
    """pulsarc looks the topic up at a service URL whose host answers every request with a
    307 to another host (localhost instead of 127.0.0.1, on another port), where a
    recording web service names the default broker; then it publishes there."""
    broker = urllib.parse.urlsplit(ph.service_url())
    broker_url = f"pulsar://{broker.hostname}:{broker.port or 6650}"
    with RecordingService(broker_url, broker_url.replace("pulsar:", "pulsar+ssl:"),
                          host_name="localhost") as other, Redirector(other.url) as service:
        _, out = produce(service.url, unique_topic(), 3, "--client-conf", "authPlugin=token",
                         "--client-conf", f"authParams=token:{REDIRECT_TOKEN}", *extra,
                         mode="sync")
    assert "sent=3 failed=0" in out, out
    assert service.requests and other.requests, "the redirect was not followed"
    assert all(v == f"Bearer {REDIRECT_TOKEN}" for v in service.with_header("Authorization")), \
        "the service URL's host did not get the credentials"
    return service, other, out


def test_credentials_do_not_follow_a_redirect_to_another_host(unique_topic):
    _, other, out = redirected_produce(unique_topic)
    assert other.with_header("Authorization") == [None] * len(other.requests), \
        "the token went to a host outside the service URL"
    assert REDIRECT_TOKEN not in out


def test_http_lookup_auth_allow_redirect_sends_them_on(unique_topic):
    """httpLookupAuthAllowRedirect=true (off by default, as in the C++ client)."""
    _, other, _ = redirected_produce(unique_topic, "--client-conf",
                                     "httpLookupAuthAllowRedirect=true")
    assert other.with_header("Authorization") == [f"Bearer {REDIRECT_TOKEN}"] * len(other.requests)


# --------------------------------------------------------------------------------------
# tlsProtocols and tlsCiphers apply to HTTPS lookups
# --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def rsa_cert(tmp_path_factory) -> tuple[str, str]:
    """A self-signed RSA certificate for localhost (the client trusts it as its CA)."""
    d = tmp_path_factory.mktemp("https-fixture")
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return str(cert), str(key)


def tls12_only(cert: str, key: str, cipher: str | None = None) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    if cipher:
        ctx.set_ciphers(cipher)
    return ctx


def https_lookup(cert: str, server_tls: ssl.SSLContext, *conf: str) -> tuple[RecordingService, str]:
    """One sync message through an HTTPS web service fixture (whose answer names a broker
    that refuses connections: only the lookup matters here)."""
    args = ["--client-conf", f"tlsTrustCertsFilePath={cert}", "--client-conf",
            "operationTimeoutMs=3000"]
    for kv in conf:
        args += ["--client-conf", kv]
    with RecordingService("pulsar://127.0.0.1:1", "pulsar+ssl://127.0.0.1:1", tls=server_tls,
                          host_name="localhost") as web:
        _, out = produce(web.url, ph.unique_topic("https-fixture"), 1, *args, mode="sync",
                         check=False, timeout_s=60)
    return web, out


def test_tls_protocols_apply_to_https_lookups(rsa_cert):
    cert, key = rsa_cert
    web, out = https_lookup(cert, tls12_only(cert, key), "tlsProtocols=TLSv1.3")
    assert not web.requests, "a TLS 1.2 web service was asked despite tlsProtocols=TLSv1.3"
    assert "TLS handshake failed" in out, out
    web, out = https_lookup(cert, tls12_only(cert, key), "tlsProtocols=TLSv1.2,TLSv1.3")
    assert web.requests, out


def test_tls_ciphers_apply_to_https_lookups(rsa_cert):
    cert, key = rsa_cert
    server = "ECDHE-RSA-AES128-GCM-SHA256"
    web, out = https_lookup(cert, tls12_only(cert, key, server),
                            "tlsCiphers=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384")
    assert not web.requests, "the web service was asked with a cipher tlsCiphers excludes"
    assert "TLS handshake failed" in out, out
    web, out = https_lookup(cert, tls12_only(cert, key, server),
                            "tlsCiphers=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256")
    assert web.requests, out


# --------------------------------------------------------------------------------------
# https + token against the secured broker
# --------------------------------------------------------------------------------------

@pytest.mark.secure
def test_https_lookup_with_token(secure_broker, unique_topic):
    env = secure_broker
    token = ph.read_secret(env["producer_token_file"])
    topic = unique_topic()
    count = 50
    proc, out = produce(env["https_url"], topic, count,
                        "--client-conf", f"tlsTrustCertsFilePath={env['ca']}",
                        "--client-conf", "authPlugin=token",
                        "--client-conf", f"authParams=file://{env['producer_token_file']}",
                        "--client-conf", "logLevel=debug", mode="sync")
    assert f"sent={count} failed=0" in out, out
    assert token not in out and token.rsplit(".", 1)[1] not in out, "the token leaked"
    client = ph.make_secure_client()
    try:
        got = ph.read_messages(topic, count, timeout_s=60, to_end=True, client=client)
    finally:
        client.close()
    assert [m["data"] for m in got] == [m["data"] for m in gen_messages(count)]


@pytest.mark.secure
def test_https_lookup_without_token_is_refused(secure_broker, unique_topic):
    env = secure_broker
    proc, out = produce(env["https_url"], unique_topic(), 1,
                        "--client-conf", f"tlsTrustCertsFilePath={env['ca']}",
                        mode="sync", check=False, timeout_s=60)
    assert proc.returncode != 0, out
    assert "status 401" in out, out
