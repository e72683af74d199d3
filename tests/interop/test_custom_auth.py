"""pulsarc's custom authentication provider (pulsarc_client_config_set_auth_provider)
against the secured broker (scripts/broker-secure): the application's provider does
token authentication (method "token", data the JWT of a file) and the official Python
client reads back exactly what it published; a wrong token is refused with a named
result, promptly, and no token shows in pulsarc's debug output. The same provider as a
failover cluster's own credentials
(pulsarc_client_config_set_failover_cluster_auth_provider): the client fails over from a
dead primary to the secured broker and publishes there with the provider's token only.

Run: scripts/broker-secure start; eval "$(scripts/broker-secure env)";
     python3 -m pytest -v tests/interop/test_custom_auth.py   (or -m secure)"""

from __future__ import annotations

import re
import socket
import time

import pytest

import pulsar_helpers as ph

pytestmark = pytest.mark.secure

COUNT = 25
REPORT_RE = re.compile(r"sent=(\d+) failed=(\d+) initial_calls=(\d+) refreshes=(\d+) frees=(\d+) "
                       r"first_error=(\S+)")


@pytest.fixture
def broker(secure_broker):
    """Overrides conftest's autouse `broker`: these tests need the secured broker only."""
    return secure_broker


@pytest.fixture
def reader_client(secure_broker):
    client = ph.make_secure_client()
    yield client
    client.close()


def run(url, topic, token_file, count, *extra, check=False):
    t0 = time.monotonic()
    proc = ph.run_bin("interop_custom_auth", url, topic, token_file, str(count),
                      "--client-conf", "logLevel=debug", *extra, timeout_s=120, check=check)
    text = proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
    return proc, text, time.monotonic() - t0


def report(proc, text):
    m = REPORT_RE.search(proc.stdout.decode(errors="replace"))
    assert m, text[-3000:]
    return m


def assert_no_token(text, token):
    assert token not in text, "the token appears in pulsarc's output"
    assert token.rsplit(".", 1)[1] not in text, "the token's signature appears in pulsarc's output"


@pytest.mark.parametrize("listener", ["tls", "plain", "https"])
def test_custom_provider_token_round_trip(secure_broker, reader_client, unique_topic, listener):
    env = secure_broker
    url = {"tls": env["tls_url"], "plain": env["plain_url"], "https": env["https_url"]}[listener]
    extra = [] if listener == "plain" else ["--client-conf", f"tlsTrustCertsFilePath={env['ca']}"]
    topic = unique_topic()
    proc, text, _ = run(url, topic, env["producer_token_file"], COUNT, *extra)
    m = report(proc, text)
    assert proc.returncode == 0 and int(m[1]) == COUNT, text[-3000:]
    assert int(m[3]) >= 1, "the provider was never asked"
    assert int(m[5]) == 1, f"free ran {m[5]} times"
    got = ph.read_messages(topic, COUNT, timeout_s=60, to_end=True, client=reader_client)
    assert [g["data"] for g in got] == [f"custom-auth-{i}".encode() for i in range(COUNT)]
    assert_no_token(text, ph.read_secret(env["producer_token_file"]))


@pytest.mark.parametrize("which", ["expired", "forged"])
def test_custom_provider_wrong_token_is_refused_by_name(secure_broker, unique_topic, tmp_path, which):
    env = secure_broker
    if which == "expired":
        token_file = env["expired_token_file"]
    else:  # signed with a key the broker does not know
        good = ph.read_secret(env["producer_token_file"])
        token_file = str(tmp_path / "forged")
        head, body, _ = good.split(".")
        (tmp_path / "forged").write_text(f"{head}.{body}.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
    proc, text, elapsed = run(env["tls_url"], unique_topic(), token_file, 1,
                              "--client-conf", f"tlsTrustCertsFilePath={env['ca']}")
    assert proc.returncode == 1, text[-3000:]
    line = next((l for l in proc.stderr.decode(errors="replace").splitlines()
                 if l.startswith("create producer: ")), None)
    assert line, text[-3000:]
    m = report(proc, text)
    assert m[6] == "BROKER_AUTHENTICATION", line
    assert int(m[5]) == 1, f"free ran {m[5]} times"
    assert elapsed < 10, f"took {elapsed:.1f} s: retried until a timeout?"
    assert_no_token(text, ph.read_secret(token_file))


@pytest.fixture
def dead_primary():
    """A pulsar:// URL where connections are refused: a port bound, never listened on, and
    held for the test so that nothing else can take it."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    yield f"pulsar://127.0.0.1:{s.getsockname()[1]}"
    s.close()


@pytest.mark.parametrize("listener", ["tls", "https"])
def test_failover_cluster_with_its_own_custom_provider(secure_broker, reader_client, unique_topic,
                                                       dead_primary, listener):
    """The primary is down and has a token of its own, built in: the noperm role's, which
    the secured broker accepts and then refuses to produce with, so it must never go there.
    The secured broker is a failover cluster whose only credentials are the custom
    provider (over https://, its HTTP lookups too): the client moves there and publishes
    with the provider's token, and the reader gets exactly what was sent."""
    env = secure_broker
    url = {"tls": env["tls_url"], "https": env["https_url"]}[listener]
    primary_token = ph.read_secret(env["noperm_token_file"])
    topic = unique_topic()
    proc, text, _ = run(url, topic, env["producer_token_file"], COUNT,
                        "--failover-from", dead_primary,
                        "--client-conf", f"tlsTrustCertsFilePath={env['ca']}",
                        "--client-conf", "authPlugin=token",
                        "--client-conf", f"authParams=token:{primary_token}",
                        "--client-conf", "failoverDelayMs=1000",
                        "--client-conf", "failoverCheckIntervalMs=100")
    m = report(proc, text)
    assert proc.returncode == 0 and int(m[1]) == COUNT, text[-3000:]
    assert f"switching from {dead_primary} to {url}" in text, text[-3000:]
    assert int(m[3]) >= (2 if listener == "https" else 1), "the provider was not asked"
    assert int(m[5]) == 1, f"free ran {m[5]} times"
    got = ph.read_messages(topic, COUNT, timeout_s=60, to_end=True, client=reader_client)
    assert [g["data"] for g in got] == [f"custom-auth-{i}".encode() for i in range(COUNT)]
    assert_no_token(text, ph.read_secret(env["producer_token_file"]))
    assert_no_token(text, primary_token)
