"""vecenv on a GPU: every game's own rules compiled as CUDA kernels (numba-cuda).

``vecenv.make(name, num_envs, device="cuda")`` gives a :class:`vecenv.cuda.engine.CudaEngine`;
``vecenv.cuda.selfplay.DeviceSeats`` runs the built-in agents inside its step kernel;
``vecenv.cuda.ptx.ptx(name, ccs)`` compiles a game's kernels to PTX on any machine, which is how a
game is checked for CUDA without a GPU. Needs the ``cuda`` extra (``pip install vecenv[cuda]``);
``import vecenv`` never imports numba.cuda.
"""


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
