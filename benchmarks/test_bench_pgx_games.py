"""Kuhn poker, Leduc hold'em, Hex, Go 13x13, backgammon, sparrow mahjong and bridge bidding:
random self-play at N = 4096 on one CPU against Pgx (EnvPool's C++ ports of them:
``test_bench_envpool_games.py``; EnvPool has no bridge bidding).

vecenv (``vecenv-stream-T1``): ``vecenv.make(game, num_envs=4096, autoreset="same_step")``, every
seat played by the built-in random agent (a uniform legal action) through
``vecenv.selfplay.Seats.step(32)``: each game plays 32 plies a call inside one compiled loop, a
finished game replaced in the same step; N x 32 plies a call.

Pgx (``pgx-scan-1cpu``): ``pgx.make(game)`` (``pgx.go.Go(size=13)`` for 13x13 and
``pgx.bridge_bidding.BridgeBidding`` on vecenv's deal table, which ``make`` does not name) under
``jax.jit`` on CPU: ``jax.vmap`` of ``pgx.experimental.auto_reset(env.step, env.init)`` over N
games, ``act_randomly`` on the legal mask, in a ``jax.lax.scan`` of 32 steps a call
(``harness.pgx_round``); compile time excluded; N x 32 plies a call.

Both on one CPU: vecenv on one thread, Pgx with every thread of the process held to one CPU
(``harness.one_cpu``). Target: vecenv at least 10x. Pgx (with jax) is an optional peer: where it
does not import, its benchmarks skip with the reason. Smoke mode: N = 64, 2 steps a call.

Keys: ("selfplay", game, 4096, impl), rates as "plies".
"""

from importlib import import_module

import pytest
import report
from harness import one_cpu, pgx_round, stream_round, timed_for

N = 4096
T = 32
SMOKE_N = 64
SMOKE_T = 2
TARGET = 10.0
IMPLS = ("vecenv-stream-T1", "pgx-scan-1cpu")
# game: (vecenv's name and configuration, Pgx's env)
GAMES = {
    "kuhn_poker": (("kuhn_poker", {}), "kuhn_poker"),
    "leduc_holdem": (("leduc_holdem", {}), "leduc_holdem"),
    "hex": (("hex", {}), "hex"),
    "go_13x13": (("go", {"size": 13}), lambda pgx: import_module("pgx.go").Go(size=13)),
    "backgammon": (("backgammon", {}), "backgammon"),
    "sparrow_mahjong": (("sparrow_mahjong", {}), "sparrow_mahjong"),
    "bridge_bidding": (("bridge_bidding", {}), lambda pgx: _pgx_bridge()),
}


def _pgx_bridge():
    """Pgx's ``BridgeBidding`` (which ``make`` does not name) on the deal table vecenv ships:
    Pgx's own tables are a download."""
    from vecenv.envs.bridge_bidding import table

    return import_module("pgx.bridge_bidding").BridgeBidding(str(table.SHIPPED))


SECTION = f"Random self-play on one CPU, N={N}: vecenv vs Pgx (jax CPU)"


def _declare():
    for game in GAMES:
        key = ("selfplay", game, N)
        report.label(key + ("vecenv-stream-T1",), "vecenv T=1")
        report.label(key + ("pgx-scan-1cpu",), "pgx scan on 1 CPU")
        report.compare(
            SECTION,
            f"{game}, {T} plies a round",
            key + ("vecenv-stream-T1",),
            key + ("pgx-scan-1cpu",),
            target=TARGET,
            target_text=f"target >= {TARGET:g}x",
        )


_declare()


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("game", list(GAMES))
def test_random_selfplay(benchmark, game, impl):
    benchmark.group = f"{game} random self-play N={N}"
    n, steps = (SMOKE_N, SMOKE_T) if benchmark.disabled else (N, T)
    (name, configuration), pgx_game = GAMES[game]
    # Each of Pgx's games made by name is a JAX compile of seconds through the same path: the
    # smoke run takes the first; the games Pgx makes otherwise run (their own code).
    by_name = impl.startswith("pgx") and isinstance(pgx_game, str)
    if benchmark.disabled and by_name and game != next(iter(GAMES)):
        pytest.skip("smoke mode runs Pgx's games made by name on the first only")
    if impl.startswith("pgx"):
        round_fn, _ = pgx_round(n, steps, pgx_game)
    else:
        round_fn, _ = stream_round(n, steps, 1, name, **configuration)
    with one_cpu():
        timed_for(benchmark, round_fn)
    info = {"steps_per_call": steps, "threads": 1}
    report.record(benchmark, ("selfplay", game, N, impl), n * steps, 1, unit="plies", **info)
