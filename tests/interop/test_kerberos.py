"""Kerberos (authPlugin=sasl) against a real MIT KDC and a standalone with the broker's
SASL provider (scripts/broker-kerberos): pulsarc publishes with a keytab, the official
Java client (the tarball's bin/pulsar-client, AuthenticationSasl with a JAAS section on
the same realm) reads back exactly what was sent; a principal the broker does not allow,
a service principal the KDC does not know and an http:// service URL each fail promptly
with a named result and a detail that says why.

Run: scripts/broker-kerberos start; eval "$(scripts/broker-kerberos env)";
     python3 -m pytest -v -m kerberos tests/interop"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
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
    proc = ph.run_bin("pulsarc-produce", "-u", env["PULSARC_KRB_URL"],
                      "--client-conf", "authPlugin=sasl",
                      "--client-conf", f"authParams={params(env)}",
                      "--client-conf", "logLevel=debug", "--stdin", topic,
                      input="\n".join(payloads).encode() + b"\n", timeout_s=60,
                      env={"KRB5_CONFIG": env["PULSARC_KRB5_CONFIG"]})
    text = proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
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


def test_sasl_http_lookup_is_refused(broker, unique_topic):
    """pulsarc does not speak the broker's SASL HTTP exchange: an http:// service URL is
    refused with UNSUPPORTED and a hint, not sent without credentials."""
    env = broker
    proc, text, _ = produce(env, unique_topic(), params(env), "-m", "x",
                            url=env["PULSARC_KRB_HTTP_URL"])
    assert proc.returncode != 0
    assert "[UNSUPPORTED]" in text and "use a pulsar:// or pulsar+ssl://" in text, text[-2000:]
