"""The batched MCTS on the GPU: ``MCTS(game, S, device="cuda")`` (or ``MCTS(cuda_engine, S)``).

``DeviceMCTS`` is ``vecenv.search.MCTS`` with its trees in GPU memory and one CUDA thread per
tree running the whole search (``search_drivers.search``): the same settings, checks, streams and
results as on the CPU, where the arithmetic agrees (the CUDA simulator runs the host's C library
and gives the CPU's results bit for bit). Leaves are evaluated by random playouts or uniformly: a
Python evaluator would need the host between simulations, so it is refused.
"""

import numpy as np
from numba import cuda

from vecenv.search import MCTS

from .compile import search_kernel, simulated_tuple
from .engine import THREADS_PER_BLOCK, require_gpu
from .launch import launch

_KERNELS = {}  # (game, id(rules)) -> its compiled search


def _kernel(engine):
    key = (engine.name, id(engine.rules))
    if key not in _KERNELS:
        _KERNELS[key] = search_kernel(engine.rules, engine.action.discrete)
    return _KERNELS[key]


def _device_ones(shape):
    return cuda.to_device(np.ones(shape, dtype=np.bool_))


class DeviceMCTS(MCTS):
    """``vecenv.search.MCTS`` searching on the GPU (see the module); ``num_threads`` means
    nothing here (every tree has a thread of its own)."""

    device = "cuda"

    def __init__(self, game, *args, evaluator="rollout", device="cuda", **kwargs):
        require_gpu()
        if callable(evaluator):
            raise ValueError(
                "on the GPU the search evaluates its leaves itself (evaluator='rollout' or "
                "'uniform'): a Python evaluator would need the host between simulations"
            )
        if getattr(game, "device", None) == "cuda":
            game = game._host  # a CudaEngine's game, configuration and time limit
        kwargs.pop("num_threads", None)
        super().__init__(game, *args, evaluator=evaluator, device="cpu", **kwargs)

    def _allocate(self, trees):
        """The trees' arrays in GPU memory, for ``trees`` trees (kept for later searches)."""
        tree, game, obs = self._layout(trees)
        self._device_tree = tuple(cuda.to_device(arr) for arr in tree)
        self._device_obs = tuple(cuda.to_device(arr) for arr in obs)
        game = tuple(None if arr is None else cuda.to_device(arr) for arr in game)
        self._device_game = self._with_legal_view(game, self._device_obs, _device_ones)
        self._device_params = tuple(cuda.to_device(p) for p in self._params)
        self._trees = trees

    def _kernels(self):
        return _kernel(self.engine)

    def _begin_batch(self, states, words, out):
        self._batch = (
            cuda.to_device(states),
            cuda.to_device(self.engine._cfg),
            cuda.to_device(words),
            tuple(cuda.to_device(arr) for arr in out),
        )

    def _run(self, kernel, states, rows, seats, words):
        d_states, cfg, d_words, d_out = self._batch
        t = rows.size
        grid = ((t + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK, min(t, THREADS_PER_BLOCK))
        launch(
            kernel, *grid,
            d_states,
            cuda.to_device(rows),
            cuda.to_device(np.ascontiguousarray(seats, dtype=np.int64)),
            cfg,
            simulated_tuple(self._device_tree),
            simulated_tuple(self._device_game),
            simulated_tuple(self._device_obs),
            d_words,
            simulated_tuple(self._device_params),
            simulated_tuple(d_out),
        )  # fmt: skip

    def _end_batch(self, words, out):
        _, _, d_words, d_out = self._batch
        d_words.copy_to_host(words)
        for host, dev in zip(out, d_out, strict=True):
            dev.copy_to_host(host)
        self._batch = None

    def __getstate__(self):
        state = super().__getstate__()
        for key in ("_device_tree", "_device_game", "_device_obs", "_device_params", "_batch"):
            state.pop(key, None)
        return state

    def __repr__(self):
        return super().__repr__()[:-1] + ", device='cuda')"
