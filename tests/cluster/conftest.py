"""pytest fixtures for the tests against the cluster rig (scripts/cluster: ZooKeeper, a
bookie, several brokers, the Pulsar proxy and an SNI router, all on loopback).

The rig is started by `scripts/cluster start` (scripts/test does it for this layer).
If it is not up, every test errors out: a missing rig is a failure, never a skip."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "interop"))  # pulsar_helpers: client, reading back
sys.path.insert(0, str(HERE))

import cluster_helpers as ch  # noqa: E402
import pulsar_helpers as ph  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def rig() -> ch.Cluster:
    """The rig's addresses; fails the session up front when a broker is not ready."""
    try:
        c = ch.cluster()
    except Exception as e:  # noqa: BLE001 - no env and no script answer: not started
        pytest.fail(f"cluster rig not configured ({e}); start it with scripts/cluster start", pytrace=False)
    for b in c.brokers:
        try:
            ch.admin(b.admin_url, "GET", "/admin/v2/brokers/ready", timeout_s=5)
        except (ph.AdminError, OSError) as e:
            pytest.fail(f"broker {b.n} of the cluster rig not ready at {b.admin_url} ({e}); "
                        "start the rig with scripts/cluster start", pytrace=False)
    return c


@pytest.fixture(scope="session")
def client(rig):
    """One official client on every broker's internal address, for reading back."""
    c = ph.make_client(rig.service_url)
    yield c
    c.close()


BROKER_SCRIPT = ph.REPO_ROOT / "scripts" / "broker"


@pytest.fixture(scope="session")
def standalone_broker():
    """A standalone broker beside the rig, as a second cluster (a failover secondary, a
    migration's destination): (service URL, admin URL), from PULSAR_SERVICE_URL and
    PULSAR_ADMIN_URL as for tests/interop. scripts/test stops its own standalone before
    this layer; then this starts one (scripts/broker, with PULSAR_PORT, PULSAR_HTTP_PORT
    and PULSARC_BROKER_DIR if set), and stops only that."""
    started = False
    if subprocess.run([str(BROKER_SCRIPT), "status"], capture_output=True).returncode != 0:
        proc = subprocess.run([str(BROKER_SCRIPT), "start"], capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, f"scripts/broker start failed:\n{proc.stdout}\n{proc.stderr}"
        started = True
    yield ph.service_url(), ph.admin_url()
    if started:
        subprocess.run([str(BROKER_SCRIPT), "stop"], capture_output=True, timeout=300)


@pytest.fixture(scope="session")
def standalone(standalone_broker):
    """The standalone broker's service URL (see standalone_broker)."""
    return standalone_broker[0]
