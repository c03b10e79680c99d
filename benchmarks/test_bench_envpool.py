"""Classic-control games at N = 4096: the engine on 1 and 2 threads, and EnvPool on as many.

EnvPool runs synchronously (batch_size = num_envs) with its gymnasium API and float32 obs; the
engine takes the same kind of random actions (Acrobot: 0..2; Pendulum: torque in [-2, 2]), with
its float64 rules (exact to gymnasium's) and with ``precision="float32"`` ("vecenv-float32").
MountainCar games have no EnvPool comparison here; their engine step is measured when present.
Games that are not in envs/ yet, and EnvPool where it does not install, skip with the reason.

Keys: (gym_id, N, T, "vecenv" | "vecenv-float32" | "envpool").
"""

import gc

import numpy as np
import pytest
import report
from harness import (
    calls_per_round,
    engine_action_rows,
    envpool_module,
    game_of,
    make_engine,
    run_steps,
)

N = 4096
THREADS = (1, 2)
PEER_GAMES = ("Acrobot-v1", "Pendulum-v1")
OTHER_GAMES = ("MountainCar-v0", "MountainCarContinuous-v0")
# (ratio at 1 thread, ratio at 2 threads): engine T against EnvPool T.
TARGETS = {"Acrobot-v1": (6.0, 10.0), "Pendulum-v1": (15.0, 25.0)}
SECTION = f"Classic control, N={N} (engine vs EnvPool)"
# A step's cost relative to CartPole's, roughly: sets the calls per round (see calls_per_round).
COST = {"Acrobot-v1": 16, "Pendulum-v1": 4}
# EnvPool's spaces are float32 and gymnasium says so when they are built.
pytestmark = pytest.mark.filterwarnings("ignore:.*precision lowered by casting:UserWarning")


def _declare():
    for gym_id in PEER_GAMES + OTHER_GAMES:
        for t in THREADS:
            report.label((gym_id, N, t, "vecenv"), f"vecenv T={t}")
            report.label((gym_id, N, t, "vecenv-float32"), f"vecenv float32 T={t}")
            report.label((gym_id, N, t, "envpool"), f"envpool T={t}")
    for gym_id in PEER_GAMES:
        for t, target in zip(THREADS, TARGETS[gym_id], strict=True):
            report.compare(
                SECTION,
                f"{gym_id} T={t}",
                (gym_id, N, t, "vecenv"),
                (gym_id, N, t, "envpool"),
                target=target,
                target_text=f"target >= {target:g}x",
            )
            for den in ("envpool", "vecenv"):  # float32: what it gains, said, not targeted
                report.compare(
                    SECTION,
                    f"{gym_id} T={t} float32",
                    (gym_id, N, t, "vecenv-float32"),
                    (gym_id, N, t, den),
                )
    for gym_id in PEER_GAMES + OTHER_GAMES:
        report.compare(
            SECTION, f"{gym_id} threads", (gym_id, N, 2, "vecenv"), (gym_id, N, 1, "vecenv")
        )


_declare()


def _cases():
    """(game, T, impl) grouped by game and T so each ratio's figures are taken close in time."""
    cases = []
    for gym_id in PEER_GAMES + OTHER_GAMES:
        for t in THREADS:
            cases.append((gym_id, t, "vecenv"))
            if gym_id in PEER_GAMES:
                cases += [(gym_id, t, "vecenv-float32"), (gym_id, t, "envpool")]
    return [pytest.param(*c, id=f"{c[0]}-{c[2]}-T{c[1]}") for c in cases]


def _envpool_actions(env, calls):
    space = env.action_space
    rng = np.random.default_rng(0)
    if space.shape == ():  # Discrete
        return list(rng.integers(0, space.n, size=(calls, N), dtype=np.int32))
    acts = rng.uniform(space.low, space.high, size=(calls, N) + space.shape)
    return list(acts.astype(np.float32))


@pytest.mark.parametrize(("gym_id", "threads", "impl"), _cases())
def test_classic_step(benchmark, gym_id, threads, impl):
    benchmark.group = f"{gym_id} N={N}"
    if impl in ("vecenv", "vecenv-float32"):
        precision = "float32" if impl == "vecenv-float32" else "float64"
        engine = make_engine(game_of(gym_id), N, threads, precision=precision)
        rows = engine_action_rows(engine, calls_per_round(N, cost=COST.get(gym_id, 1)))
        calls = run_steps(benchmark, engine.step, rows)
    else:
        envpool = envpool_module()
        env = envpool.make(
            gym_id, env_type="gymnasium", num_envs=N, batch_size=N, num_threads=threads, seed=0
        )
        env.reset()
        rows = _envpool_actions(env, calls_per_round(N, cost=16))
        calls = run_steps(benchmark, env.step, rows)
        env.close()
        # A live EnvPool object keeps worker threads that busy-wait: they make numba's parallel
        # loops later in this process up to 30x slower. Free it now, cycles included.
        del env, rows
        gc.collect()
    report.record(benchmark, (gym_id, N, threads, impl), calls, N, threads=threads, impl=impl)
