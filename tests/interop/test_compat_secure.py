"""pulsarc-compat against the secured broker (scripts/broker-secure): a program written
against libpulsar's C API (tests/compat/programs/compat_async_producer.c) with TLS, the
test CA, hostname verification and a token; the official Python client reads back over
TLS as the superuser. A token the broker refuses fails producer creation with libpulsar's
AuthenticationError, and the token never shows in the program's output.

Run: scripts/broker-secure start; python3 -m pytest -v tests/interop/test_compat_secure.py
(or -m secure, as scripts/test does)."""

from __future__ import annotations

import pytest

import pulsar_helpers as ph
from test_compat import run_async

pytestmark = pytest.mark.secure


@pytest.fixture(scope="session")
def broker(secure_broker):
    """Overrides conftest's autouse `broker`: these tests need the secured broker only."""
    return secure_broker


@pytest.fixture(scope="module")
def reader_client(secure_broker):
    client = ph.make_secure_client()
    yield client
    client.close()


def test_tls_and_token(secure_broker, reader_client, unique_topic, bin_path):
    env = secure_broker
    topic = unique_topic("compat-secure")
    token = ph.read_secret(env["producer_token_file"])
    ids = run_async(bin_path, env["tls_url"], topic, 25, "--token", token, "--trust", env["ca"],
                    "--validate-hostname", "--compression", "lz4")
    assert len(ids) == 25
    got = ph.read_messages(topic, 25, client=reader_client)
    assert [m["data"] for m in got] == [f"async-{i}".encode() for i in range(25)]


def test_refused_token(secure_broker, unique_topic, bin_path):
    env = secure_broker
    topic = unique_topic("compat-secure-refused")
    token = ph.mint_token("producer", -60)  # expired
    bin_path("compat_async_producer")
    proc = ph.run_bin("compat_async_producer", env["tls_url"], topic, "1", "--token", token,
                      "--trust", env["ca"], check=False, timeout_s=120)
    out = proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
    assert proc.returncode == 1, out
    assert "create failed AuthenticationError" in out, out
    assert token not in out and token.split(".")[2] not in out
