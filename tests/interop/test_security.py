"""pulsarc against the secured broker (scripts/broker-secure): TLS with a test CA and
hostname verification, token / mTLS / basic authentication, authorization, refusals
with their named results and no retry storm, token refresh through the supplier
callback, and no secret in pulsarc's debug log. The official Python client reads back
over TLS as the superuser.

Run: scripts/broker-secure start; eval "$(scripts/broker-secure env)";
     python3 -m pytest -v tests/interop/test_security.py   (or -m secure)"""

from __future__ import annotations

import re
import threading
import time

import pulsar
import pytest

import pulsar_helpers as ph
from pulsarc_messages import gen_messages

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


@pytest.fixture(scope="module")
def names(secure_broker):
    try:
        return ph.result_names()
    except OSError as e:
        pytest.fail(f"cannot load libpulsarc.so from {ph.build_dir()}/lib: {e}", pytrace=False)


def tls_conf(env, *extra: str) -> list[str]:
    args = ["--client-conf", f"tlsTrustCertsFilePath={env['ca']}"]
    for kv in extra:
        args += ["--client-conf", kv]
    return args


def token_auth(token_file: str, plugin: str = "token") -> list[str]:
    return ["--client-conf", f"authPlugin={plugin}", "--client-conf", f"authParams=file://{token_file}"]


def produce(url, topic, count, *args, mode="sync", timeout_s=120, check=True):
    t0 = time.monotonic()
    proc = ph.run_bin("interop_producer", url, topic, str(count), mode,
                      "--client-conf", "logLevel=debug", *args, timeout_s=timeout_s, check=check)
    return proc, time.monotonic() - t0


def output(proc) -> str:
    return proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")


def assert_no_secret(proc, *secrets: str):
    text = output(proc)
    for s in secrets:
        assert s and s not in text, "a secret appears in pulsarc's output"
        # A token's signature alone is secret enough.
        if s.count(".") == 2:
            assert s.rsplit(".", 1)[1] not in text, "a token's signature appears in pulsarc's output"


def assert_read_back(reader_client, topic, count):
    got = ph.read_messages(topic, count, timeout_s=60, to_end=True, client=reader_client)
    want = gen_messages(count)
    assert [m["data"] for m in got] == [w["data"] for w in want]
    assert [m["properties"] for m in got] == [w["properties"] for w in want]


def assert_read_back_at_least_once(reader_client, topic, count):
    """For connections cut while messages are in flight on a topic without deduplication:
    a message the broker stored just before a cut, whose receipt the cut lost, is sent
    again after the reconnect and stored twice (at-least-once, as with every client).
    Every message must be there, in send order by first arrival, and a copy may only be a
    resend: the same message, after its first arrival."""
    got = ph.read_messages(topic, count, timeout_s=60, to_end=True, client=reader_client)
    want = gen_messages(count)
    first: dict[int, dict] = {}
    for m in got:
        i = int(m["properties"]["index"])
        if i in first:
            assert m["data"] == first[i]["data"], f"message {i} stored twice, differently"
        else:
            first[i] = m
    order = list(first)
    assert order == list(range(count)), \
        f"missing {sorted(set(range(count)) - set(order))}, first arrivals {order}"
    assert [first[i]["data"] for i in order] == [w["data"] for w in want]
    assert [first[i]["properties"] for i in order] == [w["properties"] for w in want]
    print(f"read back {len(got)} for {count} sent: {len(got) - count} resent after a cut")


# --------------------------------------------------------------------------------------
# The test set-up itself: the secured broker behaves as the tests assume
# --------------------------------------------------------------------------------------

def test_secured_broker_refuses_anonymous_and_accepts_tokens_python(secure_broker, reader_client):
    env = secure_broker
    code = None
    try:
        import urllib.request
        urllib.request.urlopen(env["http_url"] + "/admin/v2/namespaces/public/default", timeout=10)
    except urllib.error.HTTPError as e:  # type: ignore[attr-defined]
        code = e.code
    assert code == 401
    topic = ph.unique_topic("secure-python")
    with_producer = ph.make_secure_client(ph.read_secret(env["producer_token_file"]))
    try:
        ph.produce_python(topic, [b"a", b"b"], client=with_producer)
    finally:
        with_producer.close()
    got = ph.read_messages(topic, 2, client=reader_client)
    assert [m["data"] for m in got] == [b"a", b"b"]


# --------------------------------------------------------------------------------------
# Round trips
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode,plugin,params", [
    ("sync", "token", "file"),
    ("async", "org.apache.pulsar.client.impl.auth.AuthenticationToken", "token"),
])
def test_tls_token_round_trip(secure_broker, reader_client, unique_topic, mode, plugin, params):
    env = secure_broker
    token = ph.read_secret(env["producer_token_file"])
    topic = unique_topic()
    auth = (token_auth(env["producer_token_file"], plugin) if params == "file" else
            ["--client-conf", f"authPlugin={plugin}", "--client-conf", f"authParams=token:{token}"])
    count = 50
    proc, _ = produce(env["tls_url"], topic, count, *tls_conf(env), *auth, mode=mode)
    assert f"sent={count} failed=0" in proc.stdout.decode()
    assert_read_back(reader_client, topic, count)
    # Debug logging on: the token never shows, whichever way it was given.
    assert_no_secret(proc, token)


def test_mtls_identity(secure_broker, reader_client, unique_topic):
    """The client certificate (CN=pulsarc-client, granted produce) is the only
    credential: the broker lets no anonymous client in, so success proves the identity."""
    env = secure_broker
    topic = unique_topic()
    proc, _ = produce(env["tls_url"], topic, 10, *tls_conf(env, "authPlugin=tls",
                      f"authParams=tlsCertFile:{env['client_cert']},tlsKeyFile:{env['client_key']}"))
    assert "sent=10 failed=0" in proc.stdout.decode()
    assert_read_back(reader_client, topic, 10)
    key_body = "".join(l for l in open(env["client_key"]).read().splitlines() if "PRIVATE KEY" not in l)
    assert key_body[:40] not in output(proc)


def test_basic_auth(secure_broker, reader_client, unique_topic):
    env = secure_broker
    password = ph.read_secret(env["basic_password_file"])
    topic = unique_topic()
    proc, _ = produce(env["tls_url"], topic, 10, *tls_conf(env, "authPlugin=basic",
                      f'authParams={{"userId":"{env["basic_user"]}","password":"{password}"}}'))
    assert "sent=10 failed=0" in proc.stdout.decode()
    assert_read_back(reader_client, topic, 10)
    assert_no_secret(proc, password)


def test_hostname_check_off_accepts_ip(secure_broker, reader_client, unique_topic):
    """By 127.0.0.1 the certificate (DNS:localhost only) does not match; with the check
    explicitly off the connection is accepted (the CA is still checked)."""
    env = secure_broker
    topic = unique_topic()
    proc, _ = produce(f"pulsar+ssl://127.0.0.1:{env['tls_port']}", topic, 5,
                      *tls_conf(env, "tlsEnableHostnameVerification=false"),
                      *token_auth(env["producer_token_file"]))
    assert "sent=5 failed=0" in proc.stdout.decode()
    assert_read_back(reader_client, topic, 5)


def test_plain_port_with_token(secure_broker, reader_client, unique_topic):
    """The same broker's plain-text listener, with a token (the control for the TLS
    client sent to it below)."""
    env = secure_broker
    topic = unique_topic()
    proc, _ = produce(env["plain_url"], topic, 5, *token_auth(env["producer_token_file"]))
    assert "sent=5 failed=0" in proc.stdout.decode()
    assert_read_back(reader_client, topic, 5)


CLEAR_TEXT_WARNING = "goes to the broker unencrypted"


def test_token_in_clear_text_is_warned_about_once(secure_broker, unique_topic):
    """A token over pulsar:// travels unencrypted: pulsarc says so once per client (not per
    connection or message); over TLS it says nothing."""
    env = secure_broker
    proc, _ = produce(env["plain_url"], unique_topic(), 20, *token_auth(env["producer_token_file"]),
                      mode="async")
    assert "sent=20 failed=0" in proc.stdout.decode()
    assert output(proc).count(CLEAR_TEXT_WARNING) == 1, output(proc)[-3000:]
    proc, _ = produce(env["tls_url"], unique_topic(), 5, *tls_conf(env),
                      *token_auth(env["producer_token_file"]))
    assert CLEAR_TEXT_WARNING not in output(proc)


# --------------------------------------------------------------------------------------
# Refusals: a named result, promptly, without a retry storm
# --------------------------------------------------------------------------------------

# Log lines that mark a connection attempt or a retry in pulsarc's debug log.
ATTEMPT_RE = re.compile(r"connect|lookup|reconnect|attempt|handshake|TLS", re.IGNORECASE)
# A connection dropped during the handshake may be a cut (retried: see the fault-proxy
# test) or a set-up problem that looks the same (a plain client on the TLS port): creation
# gives it 4 quick retries with backoff (about 1.5 s), then fails with its own error.
# Each attempt logs two lines; anything beyond that budget would be a retry loop.
LOOKUP_ATTEMPTS = 5
MAX_ATTEMPT_LINES = 2 * LOOKUP_ATTEMPTS + 2
PROMPT_S = 10.0  # operationTimeoutMs stays at its default (30 s): a retry loop would hit it


def refusal_cases(env):
    tok = token_auth(env["producer_token_file"])
    other = f"pulsar+ssl://127.0.0.1:{env['tls_port']}"
    return {
        "untrusted_ca": (env["tls_url"], ["--client-conf", f"tlsTrustCertsFilePath={env['other_ca']}", *tok],
                         {"TLS_UNTRUSTED"}),
        "hostname_mismatch": (other, [*tls_conf(env), *tok], {"TLS_HOSTNAME"}),
        "expired_token": (env["tls_url"], [*tls_conf(env), *token_auth(env["expired_token_file"])],
                          {"BROKER_AUTHENTICATION"}),
        "no_permission": (env["tls_url"], [*tls_conf(env), *token_auth(env["noperm_token_file"])],
                          {"BROKER_AUTHORIZATION"}),
        "no_credentials": (env["tls_url"], tls_conf(env), {"BROKER_AUTHENTICATION"}),
        # The same authentication and authorization refusals on the plain-text listener.
        "expired_token_plain": (env["plain_url"], token_auth(env["expired_token_file"]),
                                {"BROKER_AUTHENTICATION"}),
        "no_permission_plain": (env["plain_url"], token_auth(env["noperm_token_file"]),
                                {"BROKER_AUTHORIZATION"}),
        # A plain-text client on the TLS port: the broker's TLS side never answers a
        # CONNECT, it drops the connection. Any clear connection-level error will do,
        # but not a timeout.
        "plaintext_to_tls_port": (f"pulsar://localhost:{env['tls_port']}", tok,
                                  {"CONNECT_FAILED", "CONNECTION_CLOSED", "PROTOCOL", "TLS_HANDSHAKE"}),
        "tls_to_plain_port": (f"pulsar+ssl://localhost:{env['plain_port']}", [*tls_conf(env), *tok],
                              {"TLS_HANDSHAKE"}),
    }


@pytest.mark.parametrize("case", ["untrusted_ca", "hostname_mismatch", "expired_token",
                                  "no_permission", "no_credentials", "expired_token_plain",
                                  "no_permission_plain", "plaintext_to_tls_port",
                                  "tls_to_plain_port"])
def test_refusal(secure_broker, names, unique_topic, case):
    env = secure_broker
    url, args, expected = refusal_cases(env)[case]
    topic = unique_topic()
    proc, elapsed = produce(url, topic, 1, *args, timeout_s=90, check=False)
    text = output(proc)
    assert proc.returncode != 0, f"{case}: the producer was accepted\n{text[-3000:]}"
    line = next((l for l in proc.stderr.decode(errors="replace").splitlines()
                 if l.startswith(("client: ", "create producer: "))), None)
    assert line, f"{case}: no 'client:' or 'create producer:' error line\n{text[-3000:]}"
    # "<what>: <pulsarc_strerror> (<detail>)"; a description may itself hold parentheses,
    # so take the longest known description the line starts with.
    msg = line.split(": ", 1)[1]
    known = [d for d in names if msg.startswith(d + " (")]
    assert known, f"{case}: unknown error description in: {line}"
    desc = max(known, key=len)
    result, detail = names[desc], msg[len(desc) + 2:-1]
    assert result in expected, f"{case}: got {result} ({detail}), expected one of {sorted(expected)}"
    assert detail.strip(), f"{case}: no detail message"
    assert elapsed < PROMPT_S, f"{case}: took {elapsed:.1f} s (retried until a timeout?)\n{text[-3000:]}"
    attempts = [l for l in text.splitlines() if ATTEMPT_RE.search(l)]
    assert len(attempts) <= MAX_ATTEMPT_LINES, \
        f"{case}: {len(attempts)} connection/retry log lines (retry storm?)\n" + "\n".join(attempts[:40])
    assert_no_secret(proc, *(ph.read_secret(env[k]) for k in
                             ("producer_token_file", "expired_token_file", "noperm_token_file")))


# --------------------------------------------------------------------------------------
# Token refresh: a short-lived token, the broker's expiry check every 5 s
# --------------------------------------------------------------------------------------

TOKEN_LIFE_S = 6
RUN_S = 18


@pytest.mark.parametrize("listener", ["tls", "plain"])
def test_token_refresh_keeps_publishing(secure_broker, reader_client, unique_topic, tmp_path, listener):
    """The producer publishes for RUN_S seconds with tokens that live TOKEN_LIFE_S
    seconds, handed out by pulsarc_client_config_set_auth_token_supplier (the driver
    reads them from a file this test keeps rewriting). The broker checks credentials
    every 5 s and challenges expired ones: every send must succeed, the callback must be
    asked more than once, and no token may show in the debug log."""
    env = secure_broker
    topic = unique_topic()
    token_file = tmp_path / "token"
    issued: list[str] = []

    def write_token():
        tok = ph.mint_token("producer", TOKEN_LIFE_S)
        issued.append(tok)
        tmp = tmp_path / "token.tmp"
        tmp.write_text(tok)
        tmp.replace(token_file)  # atomic: the driver never reads half a token

    write_token()
    stop = threading.Event()

    def refresher():
        while not stop.wait(2.0):
            write_token()

    t = threading.Thread(target=refresher, daemon=True)
    t.start()
    try:
        url = env["tls_url"] if listener == "tls" else env["plain_url"]
        extra = ["--client-conf", f"tlsTrustCertsFilePath={env['ca']}"] if listener == "tls" else []
        proc = ph.run_bin("interop_token_refresh", url, topic, str(token_file), str(RUN_S), *extra,
                          "--client-conf", "logLevel=debug", timeout_s=RUN_S + 60, check=False)
    finally:
        stop.set()
        t.join()
    text = output(proc)
    m = re.search(r"sent=(\d+) failed=(\d+) supplier_calls=(\d+) first_error=(\S+)", proc.stdout.decode())
    assert m, text[-3000:]
    sent, failed, calls = int(m[1]), int(m[2]), int(m[3])
    assert proc.returncode == 0 and failed == 0, f"failed={failed} first_error={m[4]}\n{text[-3000:]}"
    assert sent >= RUN_S * 2, f"only {sent} messages in {RUN_S} s\n{text[-3000:]}"
    # The first token expired after TOKEN_LIFE_S: the broker must have challenged, and
    # pulsarc answered from the callback on the same connection (no reconnect).
    assert calls >= 2, f"the token supplier was called {calls} time(s)\n{text[-3000:]}"
    assert "answered an auth challenge" in text, text[-3000:]
    drops = [l for l in text.splitlines()
             if re.search(r"connection to .* closed|connection lost|reconnecting", l)
             and "client is closing" not in l]  # the driver's own close at the end
    assert not drops, "the connection dropped instead of answering the challenge\n" + text[-3000:]
    got = ph.read_messages(topic, sent, timeout_s=60, to_end=True, client=reader_client)
    assert [m["data"] for m in got] == [f"refresh-{i}".encode() for i in range(sent)]
    assert_no_secret(proc, *issued)


# --------------------------------------------------------------------------------------
# The fault proxy in front of the TLS port: cuts mid-handshake and mid-frame
# --------------------------------------------------------------------------------------

# pulsarc's "connection closed" line and the patterns that count as a reconnect.
CLOSED_RE = r"connection to {host}:{port} closed: (.*)"
DROP_RE = re.compile(r"connection to .* closed|connection lost|reconnecting")


def connection_drops(text: str) -> list[str]:
    """pulsarc log lines showing that a connection dropped or a producer reconnected,
    without the driver's own close at the end (as test_token_refresh_keeps_publishing)."""
    return [l for l in text.splitlines() if DROP_RE.search(l) and "client is closing" not in l]


def measure_tls_connection(env, topic: str) -> dict:
    """One clean run through a recording relay in front of the TLS port: the sizes of
    pulsarc's ClientHello, its whole handshake (up to its Finished) and the encrypted
    records after it (CONNECT, PARTITIONED_METADATA, LOOKUP), on its first connection.
    topic: a name as long as the one the test uses, so the frames have the same sizes."""
    from proxy_helpers import (RecordingRelay, TLS_APPLICATION_DATA, TLS_HANDSHAKE,
                               tls_client_handshake_end, tls_records)

    with RecordingRelay(("localhost", env["tls_port"])) as tap:
        proc, _ = produce(f"pulsar+ssl://localhost:{tap.port}", topic, 1,
                          *tls_conf(env), *token_auth(env["producer_token_file"]))
        assert "sent=1 failed=0" in proc.stdout.decode(), output(proc)[-3000:]
        conns = [bytes(c) for c in tap.c2s]
    data = conns[0]
    records = tls_records(data)
    assert records and records[0][0] == TLS_HANDSHAKE, f"not TLS: {data[:16].hex()}"
    end = tls_client_handshake_end(records)
    frames = [(off, n) for ctype, off, n in records if off >= end and ctype == TLS_APPLICATION_DATA]
    # CONNECT, PARTITIONED_METADATA and LOOKUP at least, each in its own record.
    assert len(frames) >= 3, (f"records after the handshake: {frames}; connections: "
                              f"{[tls_records(c) for c in conns]}\n{output(proc)[-4000:]}")
    return {"client_hello": records[0][2], "handshake": end, "frames": frames, "records": records,
            "connections": len(conns)}


class CutArmer:
    """Arms the proxy's one-shot cut-after for consecutive connections: step k is armed
    once step k-1 has cut. Each step: (label, bytes, rst|fin)."""

    def __init__(self, proxy, steps):
        self.proxy, self.steps = proxy, steps
        self.armed = 0
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        try:
            for k, (_, nbytes, mode) in enumerate(self.steps):
                self.proxy.cut_after(nbytes, mode)
                self.armed = k + 1
                while self.proxy.stats()["cuts"] <= k:
                    if self._stop.wait(0.005):
                        return
        except BaseException as e:  # noqa: BLE001 - reported by the test
            self.error = e

    def __enter__(self):
        self._thread.start()
        while not self.armed and self._thread.is_alive():
            time.sleep(0.005)
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.proxy.cancel_cut_after()


@pytest.mark.parametrize("schedule", ["first_connections", "from_the_topic_lookup"])
def test_fault_proxy_cuts_tls_mid_handshake_and_mid_frame(secure_broker, reader_client, unique_topic,
                                                          tmp_path, schedule):
    """tests/proxy/faultproxy.py in front of the TLS port (a private instance, listening on
    a free port, forwarding to localhost:6651). pulsarc's service URL is
    pulsar+ssl://localhost:<proxy port>, so its lookup connection goes through the proxy.
    The lookup answers brokerServiceUrlTls pulsar+ssl://localhost:6651, yet pulsarc (as
    measured) opens its data connection through the service URL too, i.e. through the
    proxy, naming the broker in CONNECT: both connections can be cut. TLS runs end to end
    (the proxy only forwards bytes); the certificate names localhost, hostname
    verification is on.

    A clean run through a recording relay first measures pulsarc's handshake (ClientHello
    size, where its Finished ends, the encrypted records after it). Then the proxy cuts
    consecutive connections, each at a chosen byte of what the client sent:
    mid-ClientHello (RST after 8 bytes; FIN half-way through it) and mid-frame after the
    handshake (half-way through the encrypted CONNECT or LOOKUP record), before it lets
    connections through.

      first_connections      the cuts start on the very first connection: the partition
                             metadata lookup itself must be retried
      from_the_topic_lookup  the first connection is cut in its LOOKUP frame (after the
                             partition metadata answer); the producer's registration
                             retries take the other cuts

    Expected: creating the producer succeeds within operationTimeoutMs, every message is
    read back exactly, the proxy cut exactly where asked, and pulsarc's log shows each cut
    connection closed with a TLS or connection detail, without a crash or a hang."""
    from proxy_helpers import FaultProxy

    env = secure_broker
    m = measure_tls_connection(env, unique_topic())
    connect_rec, lookup_rec = m["frames"][0], m["frames"][2]
    mid_hello = m["client_hello"] // 2
    mid_connect = connect_rec[0] + connect_rec[1] // 2
    mid_lookup = lookup_rec[0] + lookup_rec[1] // 2
    assert 8 < mid_hello < m["client_hello"] and mid_connect > m["handshake"]
    steps = [("mid-ClientHello", 8, "rst"), ("mid-ClientHello", mid_hello, "fin"),
             ("mid-CONNECT frame", mid_connect, "rst"), ("mid-CONNECT frame", mid_connect, "fin")]
    if schedule == "from_the_topic_lookup":
        steps = [("mid-LOOKUP frame", mid_lookup, "rst")] + steps[:3]

    topic = unique_topic()
    count = 20
    op_timeout_ms = 25_000
    proxy_log = tmp_path / "proxy.log"
    with FaultProxy.start([("127.0.0.1:0", f"localhost:{env['tls_port']}")],
                          log_path=proxy_log) as proxy:
        port = proxy.listen_addresses[0][1]
        with CutArmer(proxy, steps) as armer:
            proc, elapsed = produce(
                f"pulsar+ssl://localhost:{port}", topic, count, *tls_conf(env),
                *token_auth(env["producer_token_file"]),
                "--client-conf", f"operationTimeoutMs={op_timeout_ms}",
                # Room for the armer between a cut and the retry's connect.
                "--client-conf", "initialBackoffIntervalMs=300",
                timeout_s=op_timeout_ms / 1000 + 30, check=False)
        st = proxy.stats()
    text = output(proc)
    diag = (f"measured {m}\nsteps {steps}\nproxy cuts {st['recent_cuts']}\n"
            f"--- pulsarc (exit {proc.returncode}, {elapsed:.1f} s) ---\n{text[-6000:]}")
    assert armer.error is None, f"arming the cuts failed: {armer.error}\n{diag}"
    assert proc.returncode >= 0, f"pulsarc died of signal {-proc.returncode}\n{diag}"
    assert not re.search(r"Sanitizer|Segmentation fault|core dumped|Assertion .* failed", text), diag
    assert proc.returncode == 0 and f"sent={count} failed=0" in proc.stdout.decode(), diag
    assert elapsed < op_timeout_ms / 1000, f"took {elapsed:.1f} s\n{diag}"

    # The proxy cut each connection exactly where asked, then let the next one through.
    cuts = st["recent_cuts"]
    assert [(c["bytes_c2s"], c["mode"]) for c in cuts] == [(n, mode) for _, n, mode in steps], diag
    assert st["accepted"] > len(steps), diag
    # Each cut shows in pulsarc's log as a closed connection to the proxy, with a TLS or
    # connection detail.
    closed = [d for d in re.findall(CLOSED_RE.format(host="localhost", port=port), text)
              if "client is closing" not in d]
    assert len(closed) >= len(steps), diag
    for detail in closed:
        assert re.search(r"TLS|handshake|reset|closed|broken pipe", detail, re.IGNORECASE), \
            f"unexpected detail {detail!r}\n{diag}"
    assert_read_back(reader_client, topic, count)
    assert_no_secret(proc, ph.read_secret(env["producer_token_file"]))



# --------------------------------------------------------------------------------------
# TLS session resumption and large records
# --------------------------------------------------------------------------------------

ESTABLISHED_RE = re.compile(r"TLS established with (\S+)( \(session resumed\))?")


def tls_handshakes(text: str) -> list[bool]:
    """One entry per TLS handshake in pulsarc's debug log: whether it resumed a session."""
    return [bool(m.group(2)) for m in ESTABLISHED_RE.finditer(text)]


@pytest.mark.parametrize("resumption", ["true", "false"])
def test_reconnect_resumes_the_tls_session(secure_broker, reader_client, unique_topic, tmp_path,
                                           resumption):
    """The fault proxy in front of the TLS port cuts every connection twice while pulsarc
    sends at a steady rate; pulsarc reconnects to the same host and port (through the
    proxy: TLS runs end to end). With tlsEnableSessionResumption (the default) each
    reconnect resumes a session the broker handed out before; switched off, every
    connection is a full handshake. Every message is read back either way."""
    from proxy_helpers import FaultProxy

    env = secure_broker
    topic = unique_topic()
    count, rate = 80, 20
    with FaultProxy.start([("127.0.0.1:0", f"localhost:{env['tls_port']}")],
                          log_path=tmp_path / "proxy.log") as proxy:
        port = proxy.listen_addresses[0][1]
        cutter_error: list[BaseException] = []

        def cut_twice():
            try:
                for _ in range(2):
                    # After the producer has registered and sent a while on its connections.
                    time.sleep(1.2)
                    proxy.cut("rst")
            except BaseException as e:  # noqa: BLE001 - reported below
                cutter_error.append(e)

        cutter = threading.Thread(target=cut_twice, daemon=True)
        cutter.start()
        proc, _ = produce(f"pulsar+ssl://localhost:{port}", topic, count,
                          *tls_conf(env, f"tlsEnableSessionResumption={resumption}",
                                    "initialBackoffIntervalMs=50"),
                          *token_auth(env["producer_token_file"]), "--rate", str(rate),
                          mode="async", check=False)
        cutter.join()
        st = proxy.stats()
    text = output(proc)
    diag = f"proxy cuts {st['cuts']}\n--- pulsarc (exit {proc.returncode}) ---\n{text[-5000:]}"
    assert not cutter_error, f"cutting failed: {cutter_error[0]}\n{diag}"
    assert proc.returncode == 0 and f"sent={count} failed=0" in proc.stdout.decode(), diag
    assert st["cuts"] >= 2, diag
    handshakes = tls_handshakes(text)
    assert len(handshakes) >= 3, f"expected a handshake before and after each cut\n{diag}"
    assert not handshakes[0], "the first connection cannot resume anything"
    if resumption == "true":
        assert any(handshakes[1:]), f"no reconnect resumed its session: {handshakes}\n{diag}"
    else:
        assert not any(handshakes), f"a session was resumed with resumption off\n{diag}"
    # The cuts come while messages are in flight, and the topic has no deduplication.
    assert_read_back_at_least_once(reader_client, topic, count)


def test_large_messages_over_tls(secure_broker, reader_client, unique_topic):
    """Payloads up to 1.5 MiB, batched and not, through the TLS write path: frames larger
    than one TLS record and than one 256 KiB part of encryption, mixed with small ones,
    arrive whole and in order."""
    env = secure_broker
    for batching in ("true", "false"):
        topic = unique_topic()
        count = 24
        proc, _ = produce(env["tls_url"], topic, count, *tls_conf(env),
                          *token_auth(env["producer_token_file"]), "--max-size", "1572864",
                          "--conf", f"batchingEnabled={batching}", mode="async")
        assert f"sent={count} failed=0" in proc.stdout.decode(), output(proc)[-3000:]
        got = ph.read_messages(topic, count, timeout_s=60, to_end=True, client=reader_client)
        want = gen_messages(count, max_size=1572864)
        assert [m["data"] for m in got] == [w["data"] for w in want]
