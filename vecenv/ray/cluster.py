"""Connecting to a Ray cluster (an optional dependency: the ``ray`` extra).

Shared by the distributed vector environments of this package, ``vecenv.selfplay`` (matches
spread over a cluster), the arena's servers on Ray (``vecenv.arena.on_ray``) and the command
line's ``--ray``; it imports nothing of vecenv but, when Ray is missing, the hint of
``vecenv.extras``.
"""

import socket

try:
    import ray
except ImportError:  # pragma: no cover - the extra is missing
    ray = None


CONNECT_TIMEOUT = 10.0  # seconds to wait for a cluster's address to answer at all


def require_ray():
    """The ``ray`` module, or an ImportError saying which extra to install."""
    if ray is None:
        from vecenv import extras

        extras.require("ray", "running on a Ray cluster")
    return ray


def connect(address=None, **init_kwargs):
    """Connect this process to a Ray cluster unless it already is, and return ``ray``.

    ``address`` is what ``ray.init`` takes (``"auto"``, ``"ray://host:10001"``,
    ``"host:6379"``); None joins the cluster ``RAY_ADDRESS`` names, or starts a local one.
    True means None (``play(..., cluster=True)``: the cluster this process is on).
    """
    require_ray()
    if not ray.is_initialized():
        if address == "auto":
            address = _running_cluster()
        _answers(address, CONNECT_TIMEOUT)
        ray.init(address=None if address is True else address, **init_kwargs)
    return ray


def _running_cluster():
    """The address "auto" stands for (``RAY_ADDRESS``, else the cluster last started on this
    machine), found as ``ray.init`` finds it; ConnectionError where there is none."""
    try:
        from ray._private.services import get_ray_address_from_environment
    except ImportError:  # another Ray: leave "auto" to ray.init
        return "auto"
    try:
        found = get_ray_address_from_environment("auto", None)
    except ConnectionError:
        raise
    except Exception as e:  # Ray's own lookup failed: there is no cluster to join
        raise ConnectionError(f"no running Ray cluster found ({e})") from None
    if found in (None, "auto"):
        raise ConnectionError("no running Ray cluster found on this machine")
    return found


def _answers(address, timeout):
    """ConnectionError unless something listens at ``address`` where it names a host and port
    ("host:6379", "ray://host:10001"): Ray itself keeps retrying a dead address for minutes."""
    if not isinstance(address, str):
        return
    host, sep, port = address.split("://", 1)[-1].rpartition(":")
    if not sep or not port.isdigit():  # "auto", "local" and the like: Ray's own lookup
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout).close()
    except TimeoutError:
        raise ConnectionError(f"no Ray cluster answers at {address} within {timeout:g} s") from None
    except OSError as e:
        raise ConnectionError(f"no Ray cluster answers at {address} ({e.strerror or e})") from None


def cpus():
    """The cluster's CPUs (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def worker_cpus(value):
    """``num_cpus_per_worker`` checked: a number >= 0 (a fraction packs workers onto a CPU)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1e9:
        raise ValueError(f"num_cpus_per_worker must be a number >= 0, got {value!r}")
    return float(value)


# Ray counts fractional resources in units of 1/10000.
_UNITS = 10_000


def check_room(num_workers, options, what="worker"):
    """Raise ValueError at once where the cluster's live nodes cannot place ``num_workers``
    actors of ``ray.remote`` ``options`` (their ``num_cpus``, default 1, and ``num_gpus``): Ray
    would keep them pending, and every call to them would wait out its timeout."""
    for resource, key, default in (("CPU", "num_cpus", 1), ("GPU", "num_gpus", 0)):
        per = options.get(key)
        per = default if per is None else per
        if per <= 0:
            continue
        nodes = [n.get("Resources", {}) for n in ray.nodes() if n.get("Alive")]
        need = round(per * _UNITS)
        room = _room(nodes, resource, need)
        if room >= num_workers:
            continue
        total = ray.cluster_resources().get(resource, 0)
        free = ray.available_resources().get(resource, 0)
        fit = _largest_share(nodes, resource, num_workers)
        hint = f"num_cpus_per_worker={fit:g}" if key == "num_cpus" else f"{key}={fit:g}"
        raise ValueError(
            f"the Ray cluster lacks the resources for {num_workers} {what}s of {per:g} {resource}"
            f" each: it has {total:g} {resource}s ({free:g} free) over {len(nodes)} node(s); ask"
            f" for fewer {what}s or less per {what} (e.g. {hint}), or use a larger cluster"
        )


def _room(nodes, resource, need):
    """How many actors of ``need`` units of ``resource`` the nodes hold."""
    return sum(round(node.get(resource, 0) * _UNITS) // need for node in nodes)


def _largest_share(nodes, resource, count):
    """The most of ``resource`` each of ``count`` actors may ask for and all still be placed:
    some node's amount split k ways (0 where none fits)."""
    shares = {
        round(node.get(resource, 0) * _UNITS) // k for node in nodes for k in range(1, count + 1)
    }
    fitting = [s for s in shares if s > 0 and _room(nodes, resource, s) >= count]
    return max(fitting, default=0) / _UNITS
