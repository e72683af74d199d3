"""pytest fixtures for the interop tests (real broker, official Python client).

The broker is started by scripts/broker (scripts/test does it for you). If it is not
reachable every test errors out: a missing broker is a failure, never a skip."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pulsar_helpers as ph  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def broker():
    """Fails the session up front when the broker is not answering."""
    if not ph.broker_ready():
        pytest.fail(f"Pulsar broker not reachable at {ph.admin_url()} "
                    "(start it with scripts/broker start)", pytrace=False)
    return ph.admin_url()


@pytest.fixture(scope="session")
def service_url() -> str:
    return ph.service_url()


@pytest.fixture(scope="session")
def admin_url() -> str:
    return ph.admin_url()


@pytest.fixture(scope="session")
def bin_path():
    """bin_path('pulsarc-produce') -> absolute path in $PULSARC_BUILD_DIR/bin; the test
    fails (not skips) when the program was not built."""
    def resolve(name: str) -> str:
        try:
            return ph.bin_path(name)
        except FileNotFoundError as e:
            pytest.fail(str(e), pytrace=False)
    return resolve


@pytest.fixture
def unique_topic(request):
    """unique_topic() or unique_topic('prefix') -> fresh persistent://public/default/...
    name; the default prefix is the test's name."""
    default = "".join(c if c.isalnum() else "-" for c in request.node.name)[:60].strip("-")

    def make(prefix: str | None = None, **kw) -> str:
        return ph.unique_topic(prefix or default, **kw)
    return make


@pytest.fixture
def dedup_topic(unique_topic):
    """dedup_topic() or dedup_topic('prefix') -> a fresh topic name in ph.DEDUP_NAMESPACE,
    where deduplication is on by namespace policy (see pulsar_helpers for why never by
    topic policy). Create it, then ph.wait_deduplication_enabled() before producing."""
    def make(prefix: str | None = None) -> str:
        return unique_topic(prefix, namespace=ph.ensure_dedup_namespace())
    return make


@pytest.fixture(scope="session")
def pulsar_client(broker):
    """One official client for the whole session (creating one per test is slow)."""
    client = ph.make_client()
    yield client
    client.close()


# --------------------------------------------------------------------------------------
# The secured broker (scripts/broker-secure): tests marked `secure`; the broker with the
# transaction coordinator (scripts/broker-txn): tests marked `txn`
# --------------------------------------------------------------------------------------

# marker -> the test file that holds its tests
OWN_BROKER_MARKERS = {"secure": "test_security", "txn": "test_transactions",
                      "kerberos": "test_kerberos"}


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "secure: needs the secured broker (scripts/broker-secure); run with -m secure "
        "or by naming tests/interop/test_security.py")
    config.addinivalue_line(
        "markers", "txn: needs the broker with transactions on (scripts/broker-txn); run with "
        "-m txn or by naming tests/interop/test_transactions.py")
    config.addinivalue_line(
        "markers", "kerberos: needs the KDC and the broker with SASL on (scripts/broker-kerberos); "
        "run with -m kerberos or by naming tests/interop/test_kerberos.py")


def pytest_collection_modifyitems(config, items):
    """`secure` and `txn` tests run only when asked for (-m secure / -m txn, or their file
    named on the command line): the ordinary interop runs (-m "not proxy") have neither
    broker."""
    markexpr = config.getoption("markexpr", "") or ""
    for marker, test_file in OWN_BROKER_MARKERS.items():
        if marker in markexpr or any(test_file in str(a) for a in config.args):
            continue
        keep, dropped = [], []
        for item in items:
            (dropped if item.get_closest_marker(marker) else keep).append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = keep


@pytest.fixture(scope="session")
def secure_broker() -> dict:
    """The secured broker's URLs and generated files (ph.secure_env()); fails (never
    skips) the test when that broker is not answering."""
    if not ph.secure_broker_ready():
        pytest.fail(f"secured Pulsar broker not reachable at {ph.secure_env()['https_url']} "
                    "(start it with scripts/broker-secure start)", pytrace=False)
    return ph.secure_env()
