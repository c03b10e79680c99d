"""Animal shogi, Gardner chess and shogi: random self-play at N = 4096 against Pgx's
``animal_shogi``, ``gardner_chess`` and ``shogi``, and against EnvPool's C++ ports of them.

**Against Pgx** (the stream of the Othello, Connect Four and chess benchmarks):
``vecenv.make(game, num_envs=4096, autoreset="same_step")``, both seats played by the built-in
random agent (a uniform legal move) through ``vecenv.selfplay.Seats.step(32)``, a finished game
replaced in the same step; against ``pgx.make(game)`` under ``jax.jit`` on CPU, ``jax.vmap`` of
``pgx.experimental.auto_reset(env.step, env.init)`` with ``act_randomly`` on its
``legal_action_mask``, in a ``jax.lax.scan`` of 32 steps a call (``harness.pgx_round``); compile
time excluded. Same thread counts: vecenv's one thread against Pgx with every thread of the
process held to one CPU, two threads against jax's default. vecenv's side times rounds for about
1.5 s (at least 20), Pgx's ``PGX_ROUNDS`` rounds (a round of Pgx's shogi takes minutes of a CPU).
Target: at least 10x. In smoke mode (``--benchmark-disable``) Pgx's side skips (its compile alone
takes a minute; ``tests/envs`` replays Pgx's games already).

**Against EnvPool** (``envpool`` 1.2.5's ``AnimalShogi-v1``, ``GardnerChess-v1``, ``Shogi-v1``,
gymnasium API, ``num_threads=1``, ``batch_size = num_envs``): both sides step N = 4096 games with
random legal moves drawn in numpy from the legal mask each shows (EnvPool's
``info["legal_action_mask"]``, vecenv's ``obs["legal"]``), the same drawing code on both sides
(``harness.uniform_legal``: one pass over the mask), next-step autoreset on both; 8 steps a
round, the rounds alternating between the sides (EnvPool's timed by hand before each of
vecenv's), both held to one CPU. Target: at least 10x. EnvPool is an optional peer (``pip
install envpool==1.2.5``): where it does not install or import, its benchmark skips with the
reason (``harness.against_envpool``; ``test_bench_envpool_games.py`` the other board games).

Keys: ("selfplay", game, 4096, impl) with impl "vecenv-stream-T1", "vecenv-stream-T2",
"pgx-scan-1cpu", "pgx-scan", "vecenv-numpy-T1", "envpool-T1" (plies per second).
"""

import contextlib

import pytest
import report
from harness import (
    against_envpool,
    cpu_threads,
    declare_envpool,
    declare_pgx,
    numpy_envpool_round,
    numpy_vecenv_round,
    one_cpu,
    pgx_round,
    stream_round,
    timed,
    timed_for,
)

GAMES = {  # ours: (Pgx's id, EnvPool's task, Pgx's rounds)
    "animal_shogi": ("animal_shogi", "AnimalShogi-v1", 3),
    "gardner_chess": ("gardner_chess", "GardnerChess-v1", 3),
    "shogi": ("shogi", "Shogi-v1", 2),
}
N = 4096
T = 32
SMOKE_N = 64
SMOKE_T = 2
TARGET = 10.0
IMPLS = ("vecenv-stream-T1", "vecenv-stream-T2", "pgx-scan-1cpu", "pgx-scan")
NUMPY_STEPS = 8  # EnvPool's and vecenv's steps a round, each with its numpy draws
NUMPY_ROUNDS = 12


def _declare():
    for game, (pgx_id, task, _) in GAMES.items():
        key = ("selfplay", game, N)
        section = f"{game} random self-play, N={N}: vecenv (plies/s) vs Pgx {pgx_id} (jax CPU)"
        declare_pgx(section, f"random vs random N={N}", key, IMPLS[:2], T, TARGET)
        declare_envpool(
            f"{game} random self-play, N={N}: vecenv vs EnvPool's C++ {task} (numpy's draws)",
            key,
            task,
            TARGET,
        )


_declare()


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("game", GAMES)
def test_random_selfplay_against_pgx(benchmark, game, impl):
    benchmark.group = f"{game} random self-play N={N}"
    smoke = benchmark.disabled
    n, steps = (SMOKE_N, SMOKE_T) if smoke else (N, T)
    held = impl in ("vecenv-stream-T1", "pgx-scan-1cpu")
    pgx_id, _, rounds = GAMES[game]
    if impl.startswith("pgx"):
        if smoke:
            pytest.skip(f"Pgx's {pgx_id} compiles for a minute; tests/envs replays it")
        round_fn, finished = pgx_round(n, steps, pgx_id)
    else:
        round_fn, finished = stream_round(n, steps, int(impl[-1]), game)
    with one_cpu() if held else contextlib.nullcontext():
        if impl.startswith("pgx"):
            timed(benchmark, round_fn, rounds, warmup_rounds=0)  # pgx_round made one call
        else:
            timed_for(benchmark, round_fn)
    info = {
        "games_finished_per_call": finished[-1],
        "steps_per_call": steps,
        "threads": 1 if held else cpu_threads(impl),
    }
    report.record(benchmark, ("selfplay", game, N, impl), n * steps, 1, unit="plies", **info)


@pytest.mark.parametrize("game", GAMES)
def test_random_selfplay_against_envpool(benchmark, game):
    benchmark.group = f"{game} random self-play N={N}, numpy's draws"
    n, steps = (SMOKE_N, 1) if benchmark.disabled else (N, NUMPY_STEPS)
    theirs = numpy_envpool_round(GAMES[game][1], n, steps)
    ours = numpy_vecenv_round(game, n, steps)
    against_envpool(benchmark, ("selfplay", game, N), ours, theirs, steps, n, NUMPY_ROUNDS)
