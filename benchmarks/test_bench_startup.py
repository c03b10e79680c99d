"""Cold compile and warm start of the one-agent Gymnasium games, as pytest-benchmark figures.

``startup.game_startup`` (benchmarks/startup.py, which times every game beside gymnax and Pgx):
in a new process on a fresh, empty ``VECENV_CACHE_DIR``, ``import vecenv; vecenv.make(game,
num_envs=64)`` and one step (cold: every kernel compiles), then the same in a second process on
the same cache (warm: every kernel loads). The times measured inside the processes (import,
make, first step) go into extra_info; the targets (cold <= 3 s, warm <= 0.5 s) are reported,
never asserted.
"""

import pytest
import report
import startup
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


@pytest.mark.parametrize("gym_id", GAMES)
def test_cold_and_warm_start(benchmark, gym_id):
    if benchmark.disabled and gym_id != GAMES[0]:
        # Each game's cold start is a compile of seconds: the smoke run shows the measurement
        # works on one; benchmarks/startup.py times every game beside gymnax and Pgx.
        pytest.skip("smoke mode times the first game only (python benchmarks/startup.py: all)")
    benchmark.group = "startup"
    game = game_of(gym_id)
    figures = {}

    def cold_then_warm():
        figures.update(startup.game_startup(game))

    benchmark.pedantic(cold_then_warm, rounds=1, iterations=1)
    cold, warm = figures["cold"], figures["warm"]
    info = {
        "cold_s": cold["total"],
        "warm_s": warm["total"],
        "cold_wall_s": cold["wall"],
        "warm_wall_s": warm["wall"],
        "budget_cold_s": 3.0,
        "budget_warm_s": 0.5,
    }
    for name, fig in (("cold", cold), ("warm", warm)):
        for part in ("import", "make", "step"):
            info[f"{name}_{part}_s"] = fig[part]
    report.record_extra(("startup", gym_id), benchmark, **info)
