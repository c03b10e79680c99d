"""vecenv on a GPU: every game's own rules compiled as CUDA kernels (numba-cuda).

``vecenv.make(name, num_envs, device="cuda")`` gives a :class:`vecenv.cuda.engine.CudaEngine`
(one prepared kernel launch a step, ``vecenv.cuda.launch``; T steps a launch with
``rollout(T, policy)``, ``vecenv.cuda.rollout``); ``vecenv.cuda.selfplay.DeviceSeats`` runs the
built-in agents inside its step kernel;
``vecenv.cuda.ptx.ptx(name, ccs)`` compiles a game's kernels to PTX on any machine, which is how a
game is checked for CUDA without a GPU. Needs the ``cuda`` extra (``pip install ".[cuda]"``);
``import vecenv`` never imports numba.cuda, and neither does importing this package: its modules
that need it import it when used.

This package sits in the layer above the faces (docs/design.md): ``vecenv.make`` and the
Gymnasium ``GameVectorEnv`` reach it through ``vecenv.variants``, where it registers its engine
and the VectorEnv's GPU side when imported.
"""

from vecenv import variants

from . import vector


def gpu_available():
    """Whether a real CUDA GPU is here (False under numba's CUDA simulator, or without
    numba-cuda or a driver): what the GPU-only tests and benchmarks ask before they run."""
    import numba

    if numba.config.ENABLE_CUDASIM:
        return False
    try:
        from numba import cuda

        return cuda.is_available()
    except Exception:  # no numba-cuda, no driver, a broken install: no GPU to use
        return False


def _engine(*args, **kwargs):
    """``vecenv.make(..., device="cuda")``'s engine (imported on first use: it imports
    numba.cuda)."""
    from .engine import CudaEngine

    return CudaEngine(*args, **kwargs)


def _search():
    """``vecenv.search.MCTS(..., device="cuda")``'s class (imported on first use: it imports
    numba.cuda)."""
    from .search import DeviceMCTS

    return DeviceMCTS


variants.register("cuda", "engine", _engine)
variants.register("cuda", "search", _search)
variants.register("cuda", "gym.vector", vector)
