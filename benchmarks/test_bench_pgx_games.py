"""Kuhn poker, Leduc hold'em, Hex, Go 13x13 and backgammon: random self-play at N = 4096 on one
CPU, against Pgx and EnvPool's C++ ports, all three in one run.

vecenv (``vecenv-stream-T1``): ``vecenv.make(game, num_envs=4096, autoreset="same_step")``, both
seats played by the built-in random agent (a uniform legal action) through
``vecenv.selfplay.Seats.step(32)``: each game plays 32 plies a call inside one compiled loop, a
finished game replaced in the same step; N x 32 plies a call.

Pgx (``pgx-scan-1cpu``): ``pgx.make(game)`` (``pgx.go.Go(size=13)`` for 13x13, which ``make`` does
not name) under ``jax.jit`` on CPU: ``jax.vmap`` of ``pgx.experimental.auto_reset(env.step,
env.init)`` over N games, ``act_randomly`` on the legal mask, in a ``jax.lax.scan`` of 32 steps a
call (``harness.pgx_round``); compile time excluded; N x 32 plies a call.

EnvPool (``envpool-T1``): ``envpool.make(<Game>-v1, env_type="gymnasium", num_envs=N,
batch_size=N, num_threads=1)`` (KuhnPoker, LeducHoldem, Hex, Go13x13, Backgammon), the move of
each game's player to act drawn uniformly among ``info["legal_action_mask"]`` in numpy (one
vectorised draw a step), 32 steps a call. EnvPool resets a finished game in the next step, which
moves no game: only the plies are counted (N a step, less the games reset in it).

Every side on one CPU: vecenv on one thread, Pgx and EnvPool with every thread of the process held
to one CPU (``harness.one_cpu``). Target: vecenv at least 10x each. Pgx (with jax) and EnvPool are
optional peers: where one does not import, its benchmarks skip with the reason (EnvPool 1.2.5 is
not in the test extra; the figures of README were measured with it installed beside). Smoke mode:
N = 64, 2 steps a call.

Keys: ("selfplay", game, 4096, impl), rates as "plies".
"""

from importlib import import_module

import numpy as np
import pytest
import report
from harness import envpool_module, one_cpu, pgx_round, stream_round, timed_for

N = 4096
T = 32
SMOKE_N = 64
SMOKE_T = 2
TARGET = 10.0
IMPLS = ("vecenv-stream-T1", "pgx-scan-1cpu", "envpool-T1")
# game: (vecenv's name and configuration, Pgx's env, EnvPool's id)
GAMES = {
    "kuhn_poker": (("kuhn_poker", {}), "kuhn_poker", "KuhnPoker-v1"),
    "leduc_holdem": (("leduc_holdem", {}), "leduc_holdem", "LeducHoldem-v1"),
    "hex": (("hex", {}), "hex", "Hex-v1"),
    "go_13x13": (
        ("go", {"size": 13}),
        lambda pgx: import_module("pgx.go").Go(size=13),
        "Go13x13-v1",
    ),
    "backgammon": (("backgammon", {}), "backgammon", "Backgammon-v1"),
}
SECTION = f"Random self-play on one CPU, N={N}: vecenv vs Pgx (jax CPU) and EnvPool's C++ ports"


def _declare():
    for game in GAMES:
        key = ("selfplay", game, N)
        report.label(key + ("vecenv-stream-T1",), "vecenv T=1")
        report.label(key + ("pgx-scan-1cpu",), "pgx scan on 1 CPU")
        report.label(key + ("envpool-T1",), "envpool, 1 thread")
        for peer in ("pgx-scan-1cpu", "envpool-T1"):
            report.compare(
                SECTION,
                f"{game}, {T} plies a round",
                key + ("vecenv-stream-T1",),
                key + (peer,),
                target=TARGET,
                target_text=f"target >= {TARGET:g}x",
            )


_declare()


def envpool_round(n, steps, task_id):
    """EnvPool's game ``task_id``: ``steps`` steps of ``n`` games a call, each game's player to
    act moving uniformly among its legal actions. Returns (round function, plies of each call)."""
    envpool = envpool_module()
    env = envpool.make(task_id, env_type="gymnasium", num_envs=n, batch_size=n, num_threads=1)
    _, info = env.reset()
    rng = np.random.default_rng(0)
    state = {"mask": info["legal_action_mask"], "done": np.zeros(n, dtype=bool)}
    plies = []

    def round_fn():
        moved = 0
        mask, done = state["mask"], state["done"]
        for _ in range(steps):
            # A uniform legal action: the legal one of the largest random key.
            action = np.argmax(rng.random(mask.shape) * mask, axis=1).astype(np.int32)
            moved += n - int(done.sum())  # a game finished last step is only reset by this one
            _, _, terminated, truncated, info = env.step(action)
            mask = info["legal_action_mask"]
            done = terminated[:n] | truncated[:n]
        state["mask"], state["done"] = mask, done
        plies.append(moved)

    round_fn()  # the first steps (EnvPool builds its games in make)
    return round_fn, plies


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("game", list(GAMES))
def test_random_selfplay(benchmark, game, impl):
    benchmark.group = f"{game} random self-play N={N}"
    smoke = benchmark.disabled
    n, steps = (SMOKE_N, SMOKE_T) if smoke else (N, T)
    (name, configuration), pgx_game, envpool_id = GAMES[game]
    plies = None
    if impl.startswith("pgx"):
        round_fn, _ = pgx_round(n, steps, pgx_game)
    elif impl.startswith("envpool"):
        round_fn, plies = envpool_round(n, steps, envpool_id)
    else:
        round_fn, _ = stream_round(n, steps, 1, name, **configuration)
    with one_cpu():
        timed_for(benchmark, round_fn)
    calls = n * steps if plies is None else int(np.mean(plies))
    info = {"steps_per_call": steps, "threads": 1}
    if plies is not None:
        info["plies_share_of_steps"] = round(float(np.mean(plies)) / (n * steps), 4)
    report.record(benchmark, ("selfplay", game, N, impl), calls, 1, unit="plies", **info)
