"""The Ray and GPU variants of what a face makes, found without the face importing the layers above.

vecenv's modules import only the layers below them (docs/design.md). Some of what a face offers
lives above it, though: ``gymnasium.make_vec("vecenv/CartPole-v1", num_workers=W)`` is a
``vecenv.ray.VectorEnv``, and ``vecenv.make(..., device="cuda")`` and ``GameVectorEnv(...,
device="cuda")`` run on ``vecenv.cuda``'s engine, and ``Seats.assign("model.pt", ...)`` seats the
player ``vecenv.tournament`` reads from the file. So the package above registers what it offers
here when it is imported (``register("ray", "gym.vector", VectorEnv)``), and the face asks for it
by kind and name (``find("ray", "gym.vector")``). ``find`` imports the package of that kind, named
in ``PACKAGES``, the first time one of its variants is asked for: the one place where vecenv
reaches a higher layer, by a name at call time rather than by an import statement
(tests/test_imports.py checks that no other import points up).
"""

import importlib

# Each kind of variant and the package (or module) that registers its variants when imported:
# ``"player"``, the trained players a face seats by their files (``vecenv.seats.CHECKPOINT``).
PACKAGES = {"ray": "vecenv.ray", "cuda": "vecenv.cuda", "player": "vecenv.tournament"}

_offers = {}  # (kind, name) -> what the package registered


def register(kind, name, offer):
    """Make ``offer`` the ``kind`` variant of ``name`` (a face's name for what it makes, such as
    ``"gym.vector"``); the package of that kind calls it when imported."""
    if kind not in PACKAGES:
        raise ValueError(f"no kind of variant {kind!r}; the kinds are {sorted(PACKAGES)}")
    _offers[kind, name] = offer


def find(kind, name):
    """The ``kind`` variant of ``name``, importing the package that offers it where needed (an
    ImportError from that import, such as a missing optional dependency, propagates)."""
    if kind not in PACKAGES:
        raise ValueError(f"no kind of variant {kind!r}; the kinds are {sorted(PACKAGES)}")
    if (kind, name) not in _offers:
        importlib.import_module(PACKAGES[kind])  # registers its variants
    try:
        return _offers[kind, name]
    except KeyError:
        raise LookupError(f"{PACKAGES[kind]} offers no {kind} variant of {name!r}") from None
