"""Compiles, in a process of its own at low priority, the engines that the collected test modules
declare in a module-level ``WARM`` list of ``(game, configuration)`` pairs: into the session's
caches (under ``tests.cachelock``'s lock), on the core the test process leaves idle, so that those
modules load the drivers instead of compiling them when their turn comes. A pair the test process
reaches first it compiles itself, as without this.

    python -m tests.warmup '[["connectx", {"rows": 5, "columns": 4}], ...]'
"""

import json
import sys

import numpy as np

from tests import cachelock


def warm(game, configuration):
    import vecenv

    engine = vecenv.make(game, num_envs=2, seed=0, autoreset="disabled", **configuration)
    shape = (2, engine.num_agents) + engine.action.shape
    engine.step(np.zeros(shape, dtype=np.int64 if engine.action.discrete else np.float64))
    engine.set_state(engine.get_state())
    engine.reset(seed=1)


def main(pairs):
    cachelock.install()
    for game, configuration in pairs:
        try:
            warm(game, configuration)
        except Exception:  # the tests themselves report what fails
            continue


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
