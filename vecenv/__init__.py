"""vecenv: vectorized reinforcement-learning environments on numba kernels.

``vecenv.make(name, num_envs=...)`` gives the engine (a lean array API); the faces translate it to
the interfaces people already use: ``vecenv.gym`` (Gymnasium, registered as ``vecenv/<Id>`` on
import), and the command line ``vecenv``.
"""

import os

# numba's OpenMP workers spin between parallel loops by default. An engine is stepped from Python
# with other work (a learner, other processes) in between, and spinning workers then steal those
# cores: on a busy 2-core machine 2 threads ran 50-100x slower than 1. Sleeping workers cost a few
# microseconds per call instead. It must be set before the OpenMP runtime starts; a user's own
# setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _map_source_folders():
    """In a clone, ``kernels/`` and ``envs/`` sit beside ``vecenv/`` and an install maps them to
    ``vecenv.kernels`` and ``vecenv.envs``. Python started in the clone's root imports this
    folder rather than the installed package, so map them here as the install does."""
    import importlib.util
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parent
    for sub in ("kernels", "envs"):
        name = f"{__name__}.{sub}"
        source = here.parent / sub / "__init__.py"
        if name in sys.modules or (here / sub).is_dir() or not source.is_file():
            continue
        spec = importlib.util.spec_from_file_location(
            name, source, submodule_search_locations=[str(source.parent)]
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        globals()[sub] = module


_map_source_folders()

# Every compiled artefact goes to vecenv's cache folder, never into the package: the locator is
# in place before any jitted function of vecenv is defined, which is when numba is first imported
# (not here: vecenv.kernels.cache).
from .kernels import cache as _cache  # noqa: E402
from .kernels.imports import when_imported  # noqa: E402

_cache.install_when_numba_loads()

from .registry import GameError, list_envs  # noqa: E402

__version__ = "0.1.0"
__all__ = ["Engine", "GameError", "__version__", "list_envs", "make", "register", "unregister"]


def make(
    game,
    num_envs=1,
    seed=None,
    num_threads=1,
    autoreset="next_step",
    device="cpu",
    memory_budget=None,
    precision="float64",
    **configuration,
):
    """Make an engine of ``num_envs`` episodes of ``game`` (see :class:`vecenv.engine.Engine`);
    ``device="cuda"`` keeps them on the GPU (:class:`vecenv.cuda.engine.CudaEngine`). A make whose
    arrays would exceed ``memory_budget`` (default: ``VECENV_MEMORY_BUDGET`` or 4 GiB, see
    ``vecenv.memory``) raises ValueError before allocating. ``precision="float32"`` runs a game
    whose rules compute in floating point in float32 (docs/precision.md)."""
    kwargs = dict(configuration, memory_budget=memory_budget)
    if precision != "float64":
        if device == "cuda":
            raise ValueError("the GPU engine runs the rules as written: precision='float64'")
        kwargs["precision"] = precision
    if device == "cuda":
        from . import variants  # the GPU engine is a layer above: vecenv.cuda registers it

        make_engine = variants.find("cuda", "engine")
        return make_engine(game, num_envs, seed, num_threads, autoreset, **kwargs)
    if device != "cpu":
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    from .engine import Engine

    return Engine(game, num_envs, seed, num_threads, autoreset, **kwargs)


def register(path):
    """Make the game folder ``path`` (``<name>.json``, ``rules.py``, ...) a game of this process,
    Gymnasium ids included; returns its name. See ``vecenv.registry``."""
    from . import registry

    name = registry.register(path)
    when_imported("gymnasium", _register_gym)
    return name


def unregister(name):
    """Forget a game ``register`` made, its Gymnasium ids included."""
    from . import registry
    from .gym.registration import unregister as unregister_gym

    unregister_gym(registry.unregister(name))


def __getattr__(name):
    if name == "Engine":
        from .engine import Engine

        return Engine
    raise AttributeError(f"module 'vecenv' has no attribute {name!r}")


def _register_gym():
    from .gym import registration

    # Mid-import (gymnasium's own import came from vecenv.gym.registration's first line), it has
    # no register_all yet: its last line registers the ids instead.
    if hasattr(registration, "register_all"):
        registration.register_all()


# The ``vecenv/<Id>`` ids are registered with gymnasium when it is imported (now, if it is):
# ``import vecenv`` itself imports neither gymnasium nor numba (vecenv.kernels.imports).
when_imported("gymnasium", _register_gym)
