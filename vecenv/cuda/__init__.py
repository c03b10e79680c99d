"""vecenv on a GPU: every game's own rules compiled as CUDA kernels (numba-cuda).

``vecenv.make(name, num_envs, device="cuda")`` gives a :class:`vecenv.cuda.engine.CudaEngine`;
``vecenv.cuda.ptx.ptx(name, cc)`` compiles a game's kernels to PTX on any machine, which is how a
game is checked for CUDA without a GPU. Needs the ``cuda`` extra (``pip install vecenv[cuda]``);
``import vecenv`` never imports numba.cuda.
"""


def available():
    """Whether a CUDA GPU (or numba's CUDA simulator) can run the engine here."""
    try:
        from numba import cuda
    except ImportError:
        return False
    try:
        return bool(cuda.is_available())
    except Exception:  # a broken driver counts as none
        return False
