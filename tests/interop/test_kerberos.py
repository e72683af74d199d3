"""Kerberos (authPlugin=sasl) against a real MIT KDC and a standalone with the broker's
SASL provider (scripts/broker-kerberos): pulsarc publishes with a keytab, over the binary
protocol and with HTTP lookups (the broker's SASL exchange in HTTP headers, then its role
token), and the official Java client (the tarball's bin/pulsar-client,
AuthenticationSasl with a JAAS section on the same realm) reads back exactly what was
sent; a principal the broker does not allow and a service principal the KDC does not
know each fail promptly with a named result and a detail that says why.

Run: scripts/broker-kerberos start; eval "$(scripts/broker-kerberos env)";
     python3 -m pytest -v -m kerberos tests/interop"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

import pulsar_helpers as ph

pytestmark = pytest.mark.kerberos


def krb_env() -> dict:
    keys = ("PULSARC_KRB_URL", "PULSARC_KRB_HTTP_URL", "PULSARC_KRB_DIR", "PULSARC_KRB5_CONFIG",
            "PULSARC_KRB_PULSAR_HOME")
    missing = [k for k in keys if not os.environ.get(k)]
    if missing:
        pytest.fail(f"{', '.join(missing)} not set: scripts/broker-kerberos start; "
                    "eval \"$(scripts/broker-kerberos env)\"", pytrace=False)
    return {k: os.environ[k] for k in keys}


@pytest.fixture
def broker():
    """Overrides conftest's autouse `broker`: these tests need the Kerberos broker only."""
    return krb_env()


def params(env, keytab="client.keytab", **extra) -> str:
    p = {"keytab": f"{env['PULSARC_KRB_DIR']}/{keytab}", "principal": "client@PULSARC.TEST",
         "serverType": "broker"}
    p.update(extra)
    return json.dumps({k: v for k, v in p.items() if v is not None})


def produce(env, topic, auth_params, *args, url=None, check=False):
    """pulsarc-produce with authPlugin=sasl; KRB5_CONFIG names the test realm's krb5.conf
    (the only thing the GSSAPI library needs from the environment)."""
    t0 = time.monotonic()
    proc = ph.run_bin("pulsarc-produce", "-u", url or env["PULSARC_KRB_URL"],
                      "--client-conf", "authPlugin=sasl", "--client-conf", f"authParams={auth_params}",
                      "--client-conf", "operationTimeoutMs=10000", "--client-conf", "logLevel=debug",
                      *args, topic, timeout_s=60, check=check,
                      env={"KRB5_CONFIG": env["PULSARC_KRB5_CONFIG"]})
    text = proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
    return proc, text, time.monotonic() - t0


def produce_lines(env, url, topic, lines, *args) -> str:
    """pulsarc-produce --stdin with authPlugin=sasl and the client keytab, at the debug
    level: one message per line; its output."""
    proc = ph.run_bin("pulsarc-produce", "-u", url, "--client-conf", "authPlugin=sasl",
                      "--client-conf", f"authParams={params(env)}",
                      "--client-conf", "logLevel=debug", "--stdin", *args, topic,
                      input="\n".join(lines).encode() + b"\n", timeout_s=60,
                      env={"KRB5_CONFIG": env["PULSARC_KRB5_CONFIG"]})
    return proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")


def java_consume(env, topic, count) -> list[str]:
    """The official Java client with AuthenticationSasl, as its users configure it: a JAAS
    file (section PulsarClient: client.keytab) and the realm's krb5.conf."""
    home = env["PULSARC_KRB_PULSAR_HOME"]
    opts = (f"-Djava.security.auth.login.config={env['PULSARC_KRB_DIR']}/jaas.conf "
            f"-Djava.security.krb5.conf={env['PULSARC_KRB5_CONFIG']}")
    proc = subprocess.run(
        [f"{home}/bin/pulsar-client", "--url", env["PULSARC_KRB_URL"],
         "--auth-plugin", "org.apache.pulsar.client.impl.auth.AuthenticationSasl",
         "--auth-params", '{"saslJaasClientSectionName":"PulsarClient","serverType":"broker"}',
         "consume", "-s", "krb-reader", "-p", "Earliest", "-n", str(count), topic],
        capture_output=True, timeout=120, env={**os.environ, "PULSAR_EXTRA_OPTS": opts})
    out = proc.stdout.decode(errors="replace")
    assert proc.returncode == 0, out[-3000:] + proc.stderr.decode(errors="replace")[-2000:]
    return re.findall(r"content:(.*)", out)


def broker_log(env) -> str:
    log = Path(env["PULSARC_KRB_DIR"]).parent / "logs" / "standalone.out"
    return log.read_text(errors="replace")


def test_sasl_round_trip_java_reader(broker, unique_topic):
    env = broker
    topic = unique_topic()
    payloads = [f"kerberos-{i:03d}" for i in range(20)]
    text = produce_lines(env, env["PULSARC_KRB_URL"], topic, payloads)
    assert "sent=20 failed=0" in text, text[-3000:]
    # CONNECT carried the first token; the broker's SaslServer asked twice more (its
    # Kerberos AP-REP, then the wrapped security-layer offer), as for the Java client.
    assert text.count("answered an auth challenge") >= 2, text[-3000:]
    # No keytab bytes and no credentials in pulsarc's own words.
    keytab = Path(env["PULSARC_KRB_DIR"], "client.keytab").read_bytes()
    assert keytab[-32:].hex() not in text
    assert java_consume(env, topic, len(payloads)) == payloads
    log = broker_log(env)
    assert re.search(r"connected with role=client@PULSARC\.TEST using authMethod=sasl, "
                     r"clientVersion=pulsarc", log), "the broker did not log a SASL login by pulsarc"
    assert re.search(r"connected with role=client@PULSARC\.TEST using authMethod=sasl, "
                     r"clientVersion=Pulsar-Java", log), "the Java reader did not log in by SASL"


def test_sasl_principal_not_allowed(broker, unique_topic):
    """other@PULSARC.TEST has a valid ticket, but saslJaasClientAllowedIds=client.*: the
    broker refuses, terminally (no retries until the operation timeout)."""
    env = broker
    proc, text, took = produce(env, unique_topic(), params(env, "other.keytab", principal=None),
                               "-m", "x")
    assert proc.returncode != 0
    assert "[BROKER_AUTHENTICATION]" in text, text[-2000:]
    assert took < 8, f"took {took:.1f} s"


def test_sasl_unknown_service_principal(broker, unique_topic):
    """serverType=proxy names proxy/localhost@PULSARC.TEST, which the KDC does not have:
    the provider fails before CONNECT, with Kerberos's own words."""
    env = broker
    proc, text, took = produce(env, unique_topic(), params(env, serverType="proxy"), "-m", "x")
    assert proc.returncode != 0
    assert "[AUTH_PROVIDER]" in text, text[-2000:]
    assert "proxy/localhost@PULSARC.TEST not found in Kerberos database" in text, text[-2000:]
    assert "GSSAPI major 0x" in text
    assert took < 8, f"took {took:.1f} s"


# ---- HTTP lookups (http://localhost:8950) ---------------------------------------------

# Jetty's request log line for a request pulsarc made: path, status, body size.
REQUEST_LOG = re.compile(r'"GET (\S+) HTTP/1\.1" (\d{3}) (\d+|-) "[^"]*" "pulsarc"')


def web_requests(env, local_name) -> list[tuple[str, int, str]]:
    """The broker's record of pulsarc's HTTP requests for topics named local_name...:
    (path, status, bytes), in order."""
    return [(m.group(1), int(m.group(2)), m.group(3))
            for m in REQUEST_LOG.finditer(broker_log(env)) if f"/{local_name}" in m.group(1)]


def krb_admin(env, method, path, body=None):
    """The Kerberos broker's admin API as its superuser (the token the standalone's own
    client uses: curl and urllib do not speak the SASL exchange)."""
    token = Path(os.environ["PULSARC_KRB_TOKEN_FILE"]).read_text().strip()
    req = urllib.request.Request(env["PULSARC_KRB_HTTP_URL"] + path, method=method,
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": f"Bearer {token}",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.status


def assert_one_exchange(requests, metadata_path):
    """Partition metadata ran the exchange (Init answered 401 with the Kerberos reply, the
    empty answer to it 401 with the security-layer offer, the choice 200 with the role
    token and no body), then went through with the token; nothing else was refused."""
    statuses = [(st, size) for path, st, size in requests if path.startswith(metadata_path)]
    assert [st for st, _ in statuses] == [401, 401, 200, 200], requests
    assert statuses[2][1] in ("0", "-"), requests
    others = [(path, st) for path, st, _ in requests if not path.startswith(metadata_path)]
    assert others and all(st == 200 for _, st in others), requests


def test_sasl_http_lookup_round_trip_java_reader(broker, unique_topic):
    """http://localhost:8950: partition metadata and the lookup authenticate by the
    broker's SASL exchange, once; the producer then logs in over the binary protocol;
    the Java client reads back exactly what was sent."""
    env = broker
    topic = unique_topic()
    local = topic.rsplit("/", 1)[1]
    payloads = [f"kerberos-http-{i:03d}" for i in range(20)]
    text = produce_lines(env, env["PULSARC_KRB_HTTP_URL"], topic, payloads)
    assert "sent=20 failed=0" in text, text[-3000:]
    # The two 401 rounds and the 200 that ended the exchange, in pulsarc's own log.
    assert text.count("status 401, the request goes again") == 2, text[-3000:]
    assert text.count("status 200, the request goes again") == 1, text[-3000:]
    assert "SaslAuthRoleToken" not in text and "u=client@PULSARC.TEST&" not in text
    assert java_consume(env, topic, len(payloads)) == payloads
    requests = web_requests(env, local)
    assert_one_exchange(requests, f"/admin/v2/persistent/public/default/{local}/partitions")
    assert [p for p, _, _ in requests if p.startswith("/lookup/")] == [
        f"/lookup/v2/topic/persistent/public/default/{local}"], requests
    # The web service logs no authentication method; the binary login says sasl.
    assert re.search(r"connected with role=client@PULSARC\.TEST using authMethod=sasl, "
                     r"clientVersion=pulsarc", broker_log(env))


def test_sasl_http_partitioned_topic(broker, unique_topic):
    """A topic of 3 partitions over HTTP lookups: one exchange (for the metadata), then a
    lookup per partition with the role token; the Java client reads every message."""
    env = broker
    topic = unique_topic()
    local = topic.rsplit("/", 1)[1]
    assert krb_admin(env, "PUT", f"/admin/v2/persistent/public/default/{local}/partitions",
                     3) == 204
    lines = [f"k{i}:kerberos-part-{i:03d}" for i in range(30)]
    text = produce_lines(env, env["PULSARC_KRB_HTTP_URL"], topic, lines, "--key-separator", ":")
    assert "sent=30 failed=0" in text, text[-3000:]
    got = java_consume(env, topic, len(lines))
    assert sorted(got) == sorted(line.split(":", 1)[1] for line in lines)
    requests = web_requests(env, local)
    assert_one_exchange(requests, f"/admin/v2/persistent/public/default/{local}/partitions")
    lookups = sorted(p for p, _, _ in requests if p.startswith("/lookup/"))
    assert lookups == [f"/lookup/v2/topic/persistent/public/default/{local}-partition-{i}"
                       for i in range(3)], requests


def test_sasl_http_principal_not_allowed(broker, unique_topic):
    """other@PULSARC.TEST over HTTP: the broker's SaslServer refuses it when the exchange
    completes; terminal, named, quick."""
    env = broker
    topic = unique_topic()
    proc, text, took = produce(env, topic, params(env, "other.keytab", principal=None), "-m", "x",
                               url=env["PULSARC_KRB_HTTP_URL"])
    assert proc.returncode != 0
    assert "[BROKER_AUTHENTICATION]" in text, text[-2000:]
    assert "refused the authentication of other@PULSARC.TEST" in text, text[-2000:]
    assert took < 8, f"took {took:.1f} s"
    # Refused, never served: every request pulsarc made for the topic got 401.
    requests = web_requests(env, topic.rsplit("/", 1)[1])
    assert requests and all(st == 401 for _, st, _ in requests), requests


def test_sasl_http_unknown_service_principal(broker, unique_topic):
    """serverType=proxy over HTTP: proxy/localhost is not in the KDC; the exchange never
    starts (no request goes out), with Kerberos's words."""
    env = broker
    topic = unique_topic()
    proc, text, took = produce(env, topic, params(env, serverType="proxy"), "-m", "x",
                               url=env["PULSARC_KRB_HTTP_URL"])
    assert proc.returncode != 0
    assert "[AUTH_PROVIDER]" in text, text[-2000:]
    assert "proxy/localhost@PULSARC.TEST not found in Kerberos database" in text, text[-2000:]
    assert took < 8, f"took {took:.1f} s"
    assert web_requests(env, topic.rsplit("/", 1)[1]) == []
