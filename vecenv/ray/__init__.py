"""vecenv over a Ray cluster: a ``gymnasium.vector.VectorEnv`` whose episodes are spread over Ray
actors.

``VectorEnv(game, num_envs, num_workers, seed)`` splits N episodes into ``num_workers``
contiguous slices; each slice lives in one Ray actor that holds one engine (using its node's
threads), and every call steps the slices in parallel and gathers their results into arrays made
once. Episode i draws from the stream of ``(seed, i)`` wherever it runs (each worker's engine
plays its slice as episodes ``first .. first + n - 1`` of the whole batch), so trajectories are
bit-identical to the local ``GameVectorEnv`` of the same seed for any number of workers.
``MultiAgentVectorEnv`` does the same for the batched self-play env.

Workers on the driver's machine take their steps through shared memory (``sharedsteps``: the
actions and results in shared arrays, ``sharedarrays``, a byte on a socket to wake each worker);
workers on other machines through Ray calls, their arrays in the messages. A worker that dies is
restarted by Ray (``max_restarts``); its episodes start again from their seeds and are reported
truncated (see ``VectorEnv``). Every wait is bounded by ``timeout``, so a caller never hangs on a
lost node. Ray is an optional dependency: the ``ray`` extra (``pip install ".[ray]"``).

The modules: ``vector`` (``VectorEnv``, the driver), ``multiagent`` (``MultiAgentVectorEnv``),
``worker`` (``Worker``, a slice in its actor), ``results`` (the result arrays, split and merged),
``sharedarrays`` and ``sharedsteps`` (the shared-memory transport), ``cluster`` (connecting to a
cluster, checking it has room). Importing this package registers ``VectorEnv`` with
``vecenv.variants``, where ``gymnasium.make_vec("vecenv/<Id>", num_workers=W)`` finds it.
"""

from vecenv import variants

from .cluster import check_room, connect, ray, require_ray, worker_cpus
from .multiagent import MultiAgentVectorEnv
from .results import split
from .vector import DEFAULT_TIMEOUT, TRANSPORTS, VectorEnv
from .worker import SHARED, Worker

__all__ = [
    "DEFAULT_TIMEOUT",
    "SHARED",
    "TRANSPORTS",
    "MultiAgentVectorEnv",
    "VectorEnv",
    "Worker",
    "check_room",
    "connect",
    "ray",
    "require_ray",
    "split",
    "worker_cpus",
]

variants.register("ray", "gym.vector", VectorEnv)
