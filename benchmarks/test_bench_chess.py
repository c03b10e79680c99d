"""Chess: random self-play at N = 4096 against Pgx's ``chess``, and perft against python-chess.

**Random self-play.** The stream of the Othello and Connect Four benchmarks
(``test_bench_selfplay.py``) on chess: ``vecenv.make("chess", num_envs=4096,
autoreset="same_step")``, both seats played by the built-in random agent (a uniform legal move)
through ``vecenv.selfplay.Seats.step(32)``, a finished game replaced in the same step; against
``pgx.make("chess")`` under ``jax.jit`` on CPU, ``jax.vmap`` of
``pgx.experimental.auto_reset(env.step, env.init)`` with ``act_randomly`` on its
``legal_action_mask``, in a ``jax.lax.scan`` of 32 steps a call (``harness.pgx_round``); compile
time excluded. vecenv's side times rounds for about 1.5 s (at least 20), Pgx's three rounds (one
takes about 40 s of a CPU). Same thread counts: vecenv's one thread against Pgx with every thread
of the process held to one CPU, two threads against jax's default. Target: at least 5x. Pgx's chess
compiles for about 40 s: in smoke mode (``--benchmark-disable``) its side skips, the tests having
replayed Pgx's chess already (``tests/envs/test_chess.py``).

**Perft.** Leaves per second of ``vecenv.envs.chess.perft.perft(fen, depth)`` (the game's own move
generator, compiled, counting the last level from its legal-move bits) against the same count
with python-chess (``Board.legal_moves``, ``push``/``pop``, the last level counted by
``legal_moves.count()``), on the start position to depth 4 (197,281 leaves) and Kiwipete to depth
3 (97,862), one thread, the counts checked against the Chess Programming Wiki's. The start
position to depth 6 (119,060,324 leaves) is timed for vecenv alone. Smoke mode: depth 2.

Keys: ("selfplay", "chess", 4096, impl) with impl "vecenv-stream-T1", "vecenv-stream-T2",
"pgx-scan-1cpu", "pgx-scan" (plies per second); ("perft", position, depth, impl) with impl
"vecenv", "python-chess" (leaves per second).
"""

import contextlib
import importlib.util

import pytest
import report
from harness import cpu_threads, declare_pgx, one_cpu, pgx_round, stream_round, timed, timed_for

from vecenv.envs.chess import perft
from vecenv.envs.chess.fen import START

N = 4096
T = 32
SMOKE_N = 64
SMOKE_T = 2
PGX_TARGET = 5.0
PGX_ROUNDS = 3  # a round of Pgx's chess at N = 4096 takes about 40 s of one CPU
SELFPLAY_SECTION = (
    f"Chess random self-play, N={N}: vecenv (Seats.step, plies/s) vs Pgx chess (jax CPU, steps/s)"
)
SELFPLAY_IMPLS = ("vecenv-stream-T1", "vecenv-stream-T2", "pgx-scan-1cpu", "pgx-scan")

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
# (name, FEN, depth, leaves): the Chess Programming Wiki's counts.
PERFT = [("start", START, 4, 197281), ("kiwipete", KIWIPETE, 3, 97862)]
DEEP = ("start", START, 6, 119060324)
SMOKE_DEPTH = 2
PERFT_SECTION = "Chess perft, one thread: vecenv (compiled, bulk-counted) vs python-chess"

declare_pgx(
    SELFPLAY_SECTION,
    f"random vs random N={N}",
    ("selfplay", "chess", N),
    ("vecenv-stream-T1", "vecenv-stream-T2"),
    T,
    PGX_TARGET,
)
for _name, _fen, _depth, _ in PERFT:
    _key = ("perft", _name, _depth)
    report.label(_key + ("vecenv",), "vecenv perft")
    report.label(_key + ("python-chess",), "python-chess")
    report.compare(
        PERFT_SECTION, f"{_name} to depth {_depth}", _key + ("vecenv",), _key + ("python-chess",)
    )


@pytest.mark.parametrize("impl", SELFPLAY_IMPLS)
def test_chess_random_selfplay(benchmark, impl):
    benchmark.group = f"Chess random self-play N={N}"
    smoke = benchmark.disabled
    n, steps = (SMOKE_N, SMOKE_T) if smoke else (N, T)
    held = impl in ("vecenv-stream-T1", "pgx-scan-1cpu")
    if impl.startswith("pgx"):
        if smoke:
            pytest.skip("Pgx's chess compiles for about 40 s; tests/envs/test_chess.py replays it")
        round_fn, finished = pgx_round(n, steps, "chess")
    else:
        round_fn, finished = stream_round(n, steps, int(impl[-1]), "chess")
    with one_cpu() if held else contextlib.nullcontext():
        if impl.startswith("pgx"):
            timed(benchmark, round_fn, PGX_ROUNDS, warmup_rounds=0)  # pgx_round made one call
        else:
            timed_for(benchmark, round_fn)
    info = {
        "games_finished_per_call": finished[-1],
        "steps_per_call": steps,
        "threads": 1 if held else cpu_threads(impl),
    }
    report.record(
        benchmark, ("selfplay", "chess", N, impl), n * steps, 1, unit="plies", impl=impl, **info
    )


def python_chess_perft(board, depth):
    """The leaves ``depth`` plies below ``board``, the last level counted without playing it."""
    if depth == 1:
        return board.legal_moves.count()
    total = 0
    for move in board.legal_moves:
        board.push(move)
        total += python_chess_perft(board, depth - 1)
        board.pop()
    return total


@pytest.mark.parametrize("impl", ("vecenv", "python-chess"))
@pytest.mark.parametrize(("name", "fen", "depth", "leaves"), PERFT, ids=[p[0] for p in PERFT])
def test_perft(benchmark, impl, name, fen, depth, leaves):
    benchmark.group = f"Chess perft {name} depth {depth}"
    if benchmark.disabled:
        depth, leaves = SMOKE_DEPTH, None
    if impl == "vecenv":
        perft.perft(fen, 1)  # compiles (or loads) the generator

        def round_fn():
            return perft.perft(fen, depth)

    else:
        if importlib.util.find_spec("chess") is None:
            pytest.skip("python-chess is not installed here (pip install chess)")
        import chess

        def round_fn():
            return python_chess_perft(chess.Board(fen), depth)

    counted = round_fn()
    assert leaves is None or counted == leaves
    timed_for(benchmark, round_fn)
    report.record(benchmark, ("perft", name, depth, impl), counted, 1, unit="leaves", impl=impl)


def test_deep_perft(benchmark):
    """The start position to depth 6, vecenv alone (python-chess would take hours)."""
    name, fen, depth, leaves = DEEP
    benchmark.group = f"Chess perft {name} depth {depth}"
    if benchmark.disabled:
        depth, leaves = SMOKE_DEPTH, 400
    perft.perft(fen, 1)
    counted = perft.perft(fen, depth)
    assert counted == leaves
    timed_for(benchmark, lambda: perft.perft(fen, depth))
    report.record(benchmark, ("perft", name, depth, "vecenv"), counted, 1, unit="leaves")
