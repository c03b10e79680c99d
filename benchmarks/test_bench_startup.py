"""Cold compile and warm start, per game present.

In a subprocess with fresh, empty VECENV_CACHE_DIR and NUMBA_CACHE_DIR, time
``import vecenv; vecenv.make(game, num_envs=8).step(actions)`` (cold: every kernel compiles), then
run the same again with the same directories (warm: every kernel loads from the cache). The times
measured inside the process (import, make, first step) and the process wall times go into
extra_info; the budgets (cold < 5 s, warm < 1 s) are reported, never asserted.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import pytest
import report
from harness import game_of

GAMES = (
    "CartPole-v1",
    "Acrobot-v1",
    "Pendulum-v1",
    "MountainCar-v0",
    "MountainCarContinuous-v0",
    "MinAtarBreakout-v0",
    "MinAtarAsterix-v0",
    "MinAtarFreeway-v0",
    "MinAtarSeaquest-v0",
    "MinAtarSpaceInvaders-v0",
)

SCRIPT = """
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import vecenv
t1 = time.perf_counter()
env = vecenv.make(sys.argv[1], num_envs=8, seed=0)
t2 = time.perf_counter()
action = env.spec.action
low = np.asarray(action.low, dtype=np.float64).reshape(action.shape)
actions = np.zeros((8,) + action.shape, dtype=action.kernel_dtype) + low.astype(action.kernel_dtype)
env.step(actions)
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "make_s": t2 - t1, "step_s": t3 - t2, "total_s": t3 - t0}))
"""


def _run(game, env):
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, game], env=env, capture_output=True, text=True, timeout=300
    )
    wall = time.perf_counter() - start
    if out.returncode != 0:
        pytest.fail(f"{game} start failed:\n{out.stderr[-2000:]}", pytrace=False)
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    figures["wall_s"] = wall
    return figures


@pytest.mark.parametrize("gym_id", GAMES)
def test_cold_and_warm_start(benchmark, gym_id):
    benchmark.group = "startup"
    game = game_of(gym_id)
    figures = {}

    def cold_then_warm():
        with tempfile.TemporaryDirectory(prefix="vecenv-bench-") as root:
            env = dict(
                os.environ,
                VECENV_CACHE_DIR=os.path.join(root, "vecenv"),
                NUMBA_CACHE_DIR=os.path.join(root, "numba"),
            )
            figures["cold"] = _run(game, env)
            figures["warm"] = _run(game, env)

    benchmark.pedantic(cold_then_warm, rounds=1, iterations=1)
    cold, warm = figures["cold"], figures["warm"]
    info = {
        "cold_s": cold["total_s"],
        "warm_s": warm["total_s"],
        "cold_wall_s": cold["wall_s"],
        "warm_wall_s": warm["wall_s"],
        "budget_cold_s": 5.0,
        "budget_warm_s": 1.0,
    }
    for name, fig in (("cold", cold), ("warm", warm)):
        for part in ("import", "make", "step"):
            info[f"{name}_{part}_s"] = fig[f"{part}_s"]
    report.record_extra(("startup", gym_id), benchmark, **info)
