"""A real local Ray cluster of several nodes on this machine, started once per test module.

Without Ray the tests that use it skip, except under ``CI``, where they fail (``vecenv[test]``
installs Ray).
"""

import contextlib
import fcntl
import os
import tempfile
from pathlib import Path

import pytest

NODES = 2  # the head and one more node, each its own raylet and object store
CPUS_PER_NODE = 4  # logical CPUs: room for several one-CPU workers on a 2-core machine
OBJECT_STORE = 100 * 2**20
# Every node on the loopback address. Ray replaces 127.0.0.1 by the machine's own outward address
# when it connects unless clusters are "disabled" on this platform, which the root conftest asks
# for (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0, read when Ray is imported): then every address Ray
# chooses is the loopback one.
LOOPBACK = "127.0.0.1"


@contextlib.contextmanager
def one_ray_at_a_time():
    """Held while a test module (or README block) runs a Ray of its own. Under pytest-xdist the
    workers would otherwise start Ray side by side, and ``ray.init()`` joins the Ray last
    recorded as current on the machine, another worker's, whose shutdown then cancels its
    actors. A no-op without xdist."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run:
        yield
        return
    # In the session's scratch folder (tests/conftest.py), which goes when the session ends.
    folder = os.environ.get("VECENV_TESTS_SCRATCH") or tempfile.gettempdir()
    with open(Path(folder) / f"vecenv-tests-ray-{run}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(scope="module")
def ray_cluster():
    with one_ray_at_a_time():
        yield from _ray_cluster()


def _ray_cluster():
    try:
        import ray
        from ray.cluster_utils import Cluster
    except ImportError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"the Ray tests must run in CI: {exc}")
        pytest.skip(f'Ray is not installed ({exc}): pip install ".[ray]"')
    node = {
        "num_cpus": CPUS_PER_NODE,
        "object_store_memory": OBJECT_STORE,
        "node_ip_address": LOOPBACK,
    }
    cluster = Cluster(initialize_head=True, head_node_args=dict(node))
    try:
        for _ in range(NODES - 1):
            cluster.add_node(**node)
        ray.init(address=cluster.address, log_to_driver=False)
        cluster.wait_for_nodes(timeout=120)
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()
