"""Connecting to a Ray cluster (an optional dependency: ``pip install "vecenv[ray]"``).

Shared by ``vecenv.ray`` (distributed vector environments) and ``vecenv.selfplay`` (matches
spread over a cluster); it imports nothing of vecenv, so either may use it.
"""

try:
    import ray
except ImportError:  # pragma: no cover - the extra is missing
    ray = None


def require_ray():
    """The ``ray`` module, or an ImportError saying which extra to install."""
    if ray is None:
        raise ImportError('running on a Ray cluster needs Ray: pip install "vecenv[ray]"')
    return ray


def connect(address=None, **init_kwargs):
    """Connect this process to a Ray cluster unless it already is, and return ``ray``.

    ``address`` is what ``ray.init`` takes (``"auto"``, ``"ray://host:10001"``,
    ``"host:6379"``); None joins the cluster ``RAY_ADDRESS`` names, or starts a local one.
    True means None (``play(..., cluster=True)``: the cluster this process is on).
    """
    require_ray()
    if not ray.is_initialized():
        ray.init(address=None if address is True else address, **init_kwargs)
    return ray


def cpus():
    """The cluster's CPUs (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))
