"""Compiles, in a process of its own at low priority, the engines that the collected test modules
declare in a module-level ``WARM`` list of ``(game, configuration)`` pairs: into the session's
caches (under ``tests.cachelock``'s lock), on the core the test process leaves idle, so that those
modules load the drivers instead of compiling them when their turn comes. A pair the test process
reaches first it compiles itself, as without this.

    python -m tests.warmup '[["connectx", {"rows": 5, "columns": 4}], ...]'
    python -m tests.warmup --declared     # every test module's WARM (.ci/run, before the suite)

Under pytest-xdist the test process does not start it (its second worker keeps that core busy):
``.ci/run`` runs it with ``--declared`` before the suite instead, beside PufferLib's one-core build,
so that neither worker compiles a configured engine at test time.
"""

import importlib
import json
import re
import sys
from pathlib import Path

import numpy as np

from tests import cachelock


def warm(game, configuration):
    import vecenv

    engine = vecenv.make(game, num_envs=2, seed=0, autoreset="disabled", **configuration)
    shape = (2, engine.num_agents) + engine.action.shape
    engine.step(np.zeros(shape, dtype=np.int64 if engine.action.discrete else np.float64))
    engine.set_state(engine.get_state())
    engine.reset(seed=1)


def declared():
    """The ``(game, configuration)`` pairs of every test module that declares ``WARM``, in module
    order, each pair once. Only modules whose source assigns ``WARM`` at the top are imported; one
    that fails to import is left out (its tests report why)."""
    root = Path(__file__).resolve().parents[1]
    pairs, seen = [], set()
    for path in sorted(Path(__file__).parent.rglob("test_*.py")):
        if not re.search(r"^WARM = ", path.read_text(), flags=re.M):
            continue
        name = ".".join(path.relative_to(root).with_suffix("").parts)
        try:
            module = importlib.import_module(name)
        except Exception:
            continue
        for game, configuration in module.WARM:
            key = json.dumps([game, configuration], sort_keys=True)
            if key not in seen:
                seen.add(key)
                pairs.append([game, configuration])
    return pairs


def main(pairs):
    cachelock.install()
    for game, configuration in pairs:
        try:
            warm(game, configuration)
        except Exception:  # the tests themselves report what fails
            continue


if __name__ == "__main__":
    main(declared() if sys.argv[1:] == ["--declared"] else json.loads(sys.argv[1]))
