"""OAuth2 client credentials end to end: pulsarc discovers a local issuer's token endpoint
(tests/interop/oauth2_issuer.py: HTTPS with the secured broker's certificate, JWTs signed
with the broker's token key), fetches a token with its client id and secret, and publishes
over TLS to the secured broker, which accepts the token; the official Python client reads
back. The issuer's certificate is always verified, against its own CAs (trustCertsFilePath
in authParams) or the system's store, never loosened by the broker's TLS settings: one it
does not trust fails the connect with AUTH_PROVIDER. With an https:// service URL the
token is fetched before the HTTP lookups too. No secret reaches pulsarc's debug output.

Run: scripts/broker-secure start; eval "$(scripts/broker-secure env)";
     python3 -m pytest -v tests/interop/test_oauth2.py   (or -m secure)"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import pulsar_helpers as ph
from oauth2_issuer import OAuth2Issuer
# The secured broker instead of conftest's (broker), and the superuser's reader.
from test_security import broker, reader_client  # noqa: F401  (pytest fixtures)
from test_security import (assert_no_secret, assert_read_back, connection_drops, output, produce,
                           tls_conf)

pytestmark = pytest.mark.secure

CLIENT_ID = "pulsarc-oauth2-test"
CLIENT_SECRET = "oauth2-client-secret-do-not-log"


@pytest.fixture(scope="module")
def names(secure_broker):
    return ph.result_names()


def error_result(proc, names) -> tuple[str, str]:
    """The result name and detail of interop_producer's "client:" / "create producer:"
    line ("<what>: <pulsarc_strerror> (<detail>)")."""
    line = next((l for l in proc.stderr.decode(errors="replace").splitlines()
                 if l.startswith(("client: ", "create producer: "))), "")
    msg = line.split(": ", 1)[1] if ": " in line else ""
    known = [d for d in names if msg.startswith(d + " (")]
    assert known, f"no error line in:\n{output(proc)[-3000:]}"
    desc = max(known, key=len)
    return names[desc], msg[len(desc) + 2:-1]


def broker_cert(env) -> tuple[str, str]:
    """The broker's certificate names DNS:localhost and chains to the test CA: the issuer
    wears it too, so trusting the CA (tlsTrustCertsFilePath) is what verifies it."""
    s = Path(env["secrets"])
    return str(s / "broker.cert.pem"), str(s / "broker.key-pk8.pem")


def issuer_for(env, **kw) -> OAuth2Issuer:
    cert, key = broker_cert(env)
    return OAuth2Issuer(kw.pop("cert", cert), kw.pop("key", key), env["token_key"], CLIENT_ID,
                        kw.pop("secret", CLIENT_SECRET), **kw)


def oauth2_auth(issuer_url: str, plugin: str = "oauth2", java_names: bool = False,
                key_file: str | None = None, issuer_ca: str | None = None) -> list[str]:
    """authParams for the fixture issuer. issuer_ca: the issuer's own CAs (the Java
    client's trustCertsFilePath); the broker's tlsTrustCertsFilePath never applies to it."""
    if java_names:
        params = {"issuerUrl": issuer_url, "privateKey": f"file://{key_file}",
                  "audience": "urn:pulsar:test"}
    else:
        params = {"issuer_url": issuer_url, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
                  "audience": "urn:pulsar:test", "scope": "produce consume"}
    if issuer_ca:
        params["trustCertsFilePath"] = issuer_ca
    return ["--client-conf", f"authPlugin={plugin}", "--client-conf", f"authParams={json.dumps(params)}"]


def test_oauth2_round_trip(secure_broker, reader_client, unique_topic):
    env = secure_broker
    topic = unique_topic()
    with issuer_for(env) as iss:
        proc, _ = produce(env["tls_url"], topic, 20, *tls_conf(env),
                          *oauth2_auth(iss.url, issuer_ca=env["ca"]))
        assert "sent=20 failed=0" in proc.stdout.decode()
        assert iss.count("/.well-known/openid-configuration") == 1
        posts = [f for m, p, f in iss.requests if m == "POST"]
        assert len(posts) == 1, "one token for the whole run (it lives an hour)"
        form = posts[0]
        assert form["_content_type"].startswith("application/x-www-form-urlencoded")
        assert form["grant_type"] == "client_credentials"
        assert form["audience"] == "urn:pulsar:test" and form["scope"] == "produce consume"
        assert_read_back(reader_client, topic, 20)
        assert_no_secret(proc, CLIENT_SECRET, *iss.tokens)


def test_oauth2_java_names_and_credentials_file(secure_broker, reader_client, unique_topic, tmp_path):
    env = secure_broker
    key_file = tmp_path / "credentials.json"
    key_file.write_text(json.dumps({"type": "client_credentials", "client_id": CLIENT_ID,
                                    "client_secret": CLIENT_SECRET}))
    topic = unique_topic()
    with issuer_for(env) as iss:
        proc, _ = produce(env["tls_url"], topic, 5, *tls_conf(env),
                          *oauth2_auth(iss.url, "org.apache.pulsar.client.impl.auth.oauth2."
                                       "AuthenticationOAuth2", java_names=True,
                                       key_file=str(key_file), issuer_ca=env["ca"]))
        assert "sent=5 failed=0" in proc.stdout.decode()
        assert_read_back(reader_client, topic, 5)
        assert_no_secret(proc, CLIENT_SECRET, *iss.tokens)


def test_oauth2_wrong_secret_is_an_auth_provider_error(secure_broker, names, unique_topic):
    env = secure_broker
    with issuer_for(env, secret="another-secret") as iss:
        proc, _ = produce(env["tls_url"], unique_topic(), 1, *tls_conf(env),
                          *oauth2_auth(iss.url, issuer_ca=env["ca"]), check=False, timeout_s=60)
        assert proc.returncode != 0
        result, detail = error_result(proc, names)
        assert result == "AUTH_PROVIDER" and "401" in detail and iss.url in detail, detail
        assert_no_secret(proc, CLIENT_SECRET)


def self_signed(tmp_path) -> tuple[str, str]:
    cert, key = tmp_path / "self.cert.pem", tmp_path / "self.key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return str(cert), str(key)


def test_oauth2_untrusted_issuer_certificate_is_refused(secure_broker, names, unique_topic, tmp_path):
    """CVE-2022-33684: the issuer's certificate is verified. A self-signed one for
    localhost, which the issuer's trust (the test CA) does not hold, fails."""
    env = secure_broker
    cert, key = self_signed(tmp_path)
    with issuer_for(env, cert=cert, key=key) as iss:
        proc, _ = produce(env["tls_url"], unique_topic(), 1, *tls_conf(env),
                          *oauth2_auth(iss.url, issuer_ca=env["ca"]), check=False, timeout_s=60)
        assert proc.returncode != 0
        result, detail = error_result(proc, names)
        assert result == "AUTH_PROVIDER" and iss.url in detail, detail
        assert not [r for r in iss.requests if r[0] == "POST"], "the secret went to an untrusted issuer"
        assert_no_secret(proc, CLIENT_SECRET)


def test_oauth2_issuer_is_verified_whatever_the_broker_settings(secure_broker, names, unique_topic,
                                                                tmp_path):
    """The broker's tlsAllowInsecureConnection and tlsEnableHostnameVerification=false
    are for the broker: the issuer, which receives the client secret, is verified anyway
    (its own CAs or the system's store), so a self-signed issuer is refused with a TLS
    error and never sees the secret."""
    env = secure_broker
    cert, key = self_signed(tmp_path)
    insecure = tls_conf(env, "tlsAllowInsecureConnection=true", "tlsEnableHostnameVerification=false")
    with issuer_for(env, cert=cert, key=key) as iss:
        proc, _ = produce(env["tls_url"], unique_topic(), 1, *insecure, *oauth2_auth(iss.url),
                          check=False, timeout_s=60)
        assert proc.returncode != 0, output(proc)[-3000:]
        result, detail = error_result(proc, names)
        assert result == "AUTH_PROVIDER" and "TLS_UNTRUSTED" in detail, detail
        assert not [r for r in iss.requests if r[0] == "POST"], "the secret went to an untrusted issuer"
        assert_no_secret(proc, CLIENT_SECRET)


def test_oauth2_broker_ca_is_not_the_issuers(secure_broker, names, unique_topic):
    """The broker's tlsTrustCertsFilePath (the test CA) does not vouch for the issuer: with
    no trustCertsFilePath of its own the issuer is checked against the system's store."""
    env = secure_broker
    with issuer_for(env) as iss:
        proc, _ = produce(env["tls_url"], unique_topic(), 1, *tls_conf(env), *oauth2_auth(iss.url),
                          check=False, timeout_s=60)
        assert proc.returncode != 0, output(proc)[-3000:]
        result, detail = error_result(proc, names)
        assert result == "AUTH_PROVIDER" and "TLS_UNTRUSTED" in detail, detail
        assert not [r for r in iss.requests if r[0] == "POST"]


def test_oauth2_over_an_https_service_url(secure_broker, reader_client, unique_topic):
    """An https:// service URL looks topics up over the REST API: the provider fetches its
    token before the first lookup (and renews it before later ones), which the secured
    broker's HTTPS port checks like the binary protocol does."""
    env = secure_broker
    topic = unique_topic()
    with issuer_for(env) as iss:
        proc, _ = produce(env["https_url"], topic, 10, *tls_conf(env),
                          *oauth2_auth(iss.url, issuer_ca=env["ca"]), check=False)
        assert proc.returncode == 0 and "sent=10 failed=0" in proc.stdout.decode(), \
            output(proc)[-3000:]
        assert len([r for r in iss.requests if r[0] == "POST"]) == 1, "one token for the run"
        assert_read_back(reader_client, topic, 10)
        assert_no_secret(proc, CLIENT_SECRET, *iss.tokens)


# --------------------------------------------------------------------------------------
# Token refresh: short-lived tokens, the broker's expiry check every 5 s
# --------------------------------------------------------------------------------------

REFRESH_TOKEN_LIFE_S = 6
REFRESH_RUN_S = 14
REFRESH_RATE = 5  # messages per second


def test_oauth2_token_refresh_answers_challenges(secure_broker, reader_client, unique_topic):
    """The issuer hands out tokens that live REFRESH_TOKEN_LIFE_S seconds (expires_in, and
    the JWT's exp to match) while pulsarc publishes for REFRESH_RUN_S seconds at a modest
    rate. The secured broker checks credentials every 5 s
    (authenticationRefreshCheckSeconds) and sends AUTH_CHALLENGE once the token expired:
    pulsarc must answer with a fresh token from the issuer (its cache keeps a token until
    a tenth of its lifetime before expiry) on the same connection. Every message is read
    back exactly once, the issuer served more than one token, none of them early, and
    pulsarc's log shows the challenge answered and no connection dropped."""
    env = secure_broker
    topic = unique_topic()
    count = REFRESH_RUN_S * REFRESH_RATE
    with issuer_for(env, expires_in=REFRESH_TOKEN_LIFE_S) as iss:
        proc, elapsed = produce(env["tls_url"], topic, count, *tls_conf(env),
                                *oauth2_auth(iss.url, issuer_ca=env["ca"]),
                                "--rate", str(REFRESH_RATE), timeout_s=REFRESH_RUN_S + 40, check=False)
        tokens, times = list(iss.tokens), list(iss.token_times)
    text = output(proc)
    diag = f"tokens at {[round(t - times[0], 1) for t in times]} s\n{text[-4000:]}"
    assert proc.returncode == 0 and f"sent={count} failed=0" in proc.stdout.decode(), diag
    # The first token expired during the run: the broker challenged, pulsarc fetched anew.
    assert len(tokens) >= 2, f"the issuer served {len(tokens)} token(s) in {elapsed:.1f} s\n{diag}"
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert all(g >= REFRESH_TOKEN_LIFE_S * 0.8 for g in gaps), f"a token was refetched early\n{diag}"
    assert "answered an auth challenge" in text, diag
    drops = connection_drops(text)
    assert not drops, "the connection dropped instead of answering the challenge\n" + \
        "\n".join(drops) + "\n" + diag
    assert_read_back(reader_client, topic, count)
    assert_no_secret(proc, CLIENT_SECRET, *tokens)
