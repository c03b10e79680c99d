"""Self-play: batched ConnectX matches through ``vecenv.selfplay.play``, against kaggle-environments
and Pgx

**negamax vs random, against kaggle-environments.** Matches per second of
``vecenv.selfplay.play("connectx", ("negamax", "random"), 1024, seed=0, num_threads=T)`` (seats
alternating, as ``play`` does by default), T = 1 and 2, against episodes per second of
``kaggle_environments.make("connectx").run(["negamax", "random"])`` (negamax always in the first
seat, as Kaggle's ``run`` gives it). Kaggle's negamax takes about a second an episode: its rounds
are 3 episodes (a fresh ``make`` each), 3 rounds, each round starting with ``random.seed(2)`` so
every round plays the same episodes. Those three last 11, 9 and 25 plies, 15 on average, as
Kaggle's negamax-vs-random episodes do (15.6 plies over 20 episodes; ``play``'s matches last 15.8
plies with negamax always first, 17.4 with seats alternating); a seed whose episodes are shorter
(seed 0: 9, 7 and 7 plies) would double Kaggle's rate. The plies per episode or match of each side
are kept in ``extra_info``. ``play`` is timed over 3 rounds of 1024 matches. Target: T = 1 at least
1000x kaggle-environments. In smoke mode (``--benchmark-disable``) both sides play on a 4 x 4
board with 3 in a row: ``play`` 8 matches, kaggle-environments one episode. Where
kaggle-environments does not import, its side skips with the reason.

**Random self-play at N = 4096, against Pgx.** Plies per second of
``vecenv.selfplay.play("connectx", ("random", "random"), 4096, seed=0, num_threads=T)``, T = 1 and
2, counting the plies actually played (``result.plies.sum()``; a finished match stops, so the share
of match-plies played, ``plies.sum() / (4096 * plies.max())``, kept in ``extra_info`` as
``occupancy``, costs little). Each call builds its engine, plays every match to its end and
summarises the results. The same seed every round, so every round plays the same matches. Every
side of this section times rounds for about 1.5 s (at least 20 rounds): the best round of each then
comes from an equally long look at a machine whose other work comes and goes.

**The same work as Pgx's** (``vecenv-stream``, the figures the target is for): ``vecenv.make(
"connectx", num_envs=4096, autoreset="same_step")``, both seats played by the built-in random agent
through ``vecenv.selfplay.Seats.step(32)``: one call a round, in which each game plays 32 plies
in a row (the moves chosen and played in one compiled loop), a finished game replaced in the same
step, as Pgx's ``auto_reset`` does; it counts N x 32 steps a round.

Against it, Pgx's ``connect_four`` (``pgx.make("connect_four")``) under ``jax.jit`` on CPU:
``jax.vmap`` of ``pgx.experimental.auto_reset(env.step, env.init)`` (a finished game is replaced by
a new one in the same step) over N = 4096 games, the moves drawn uniformly among the legal ones
(``pgx.experimental.act_randomly`` on ``legal_action_mask``), in a ``jax.lax.scan`` of T = 32 steps
per call, each step splitting the keys the step and the reset take; it counts N x 32 steps a call
(every game moves every step). Compile time is excluded (the first call compiles, before timing).

Same thread count on both sides: jax's CPU backend runs on every CPU by default, so
``vecenv-stream-T2`` (two threads) is compared with ``pgx-scan`` as jax runs by default
(``threads`` in ``extra_info``: the CPUs the process may use), and ``vecenv-stream-T1`` with
``pgx-scan-1cpu``: every thread of the process (jax's pool included) held to one CPU while Pgx
plays, as ``taskset`` would; vecenv's T = 1 rounds run held to that same CPU. Target: each
vecenv stream at least 5x its Pgx. Pgx is an optional peer (``pip install pgx``, with jax); where
it does not install or import, its benchmarks skip with the reason, as the one-CPU ones do where
the operating system cannot hold threads to a CPU. In smoke mode N = 64 and the scan is 2 steps
long.

Keys: ("selfplay", "negamax-random", impl) with impl "vecenv-T1", "vecenv-T2", "kaggle" (matches or
episodes per second); ("selfplay", "connect_four", 4096, impl) with impl "vecenv-T1", "vecenv-T2",
"vecenv-stream-T1", "vecenv-stream-T2", "pgx-scan", "pgx-scan-1cpu" (plies per second), and the
same stream on Othello, ("selfplay", "othello", 4096, impl), against Pgx's ``othello``. The table
prints every rate as "steps/s".
"""

import contextlib
import random

import pytest
import report
from harness import cpu_threads, declare_pgx, one_cpu, pgx_round, stream_round, timed, timed_for

import vecenv.selfplay

NEGAMAX_MATCHES = 1024
NEGAMAX_ROUNDS = 3
KAGGLE_EPISODES = 3  # a round of kaggle-environments' negamax
KAGGLE_SEED = 2  # Python's random seed of those episodes: 11, 9 and 25 plies (see above)
SMOKE_BOARD = {"rows": 4, "columns": 4, "inarow": 3}
SMOKE_MATCHES = 8
NEGAMAX_TARGET = 1000.0

N = 4096
T = 32  # steps in one Pgx scan call
SMOKE_N = 64
SMOKE_T = 2
PGX_TARGET = 5.0

NEGAMAX_SECTION = (
    f"ConnectX negamax vs random: vecenv.selfplay.play M={NEGAMAX_MATCHES} (matches/s) vs "
    "kaggle_environments run (episodes/s); printed as steps/s"
)
RANDOM_SECTION = (
    f"Connect Four random self-play, N={N}: vecenv (plies played/s) vs Pgx connect_four "
    "(jax CPU, steps/s)"
)


def _declare():
    key = ("selfplay", "negamax-random")
    report.label(key + ("vecenv-T1",), "vecenv play T=1")
    report.label(key + ("vecenv-T2",), "vecenv play T=2")
    report.label(key + ("kaggle",), "kaggle_environments run")
    for impl in ("vecenv-T1", "vecenv-T2"):
        target = NEGAMAX_TARGET if impl == "vecenv-T1" else None
        report.compare(
            NEGAMAX_SECTION,
            "negamax vs random",
            key + (impl,),
            key + ("kaggle",),
            target=target,
            target_text=f"target >= {NEGAMAX_TARGET:g}x" if target else "",
        )
    key = ("selfplay", "connect_four", N)
    report.label(key + ("vecenv-T1",), "vecenv play T=1")
    report.label(key + ("vecenv-T2",), "vecenv play T=2")
    for threads in (1, 2):
        report.label(key + (f"vecenv-stream-T{threads}",), f"vecenv stream T={threads}")
    report.label(key + ("pgx-scan",), "pgx scan, jax's default threads")
    report.label(key + ("pgx-scan-1cpu",), "pgx scan on 1 CPU")
    # Same thread count: one CPU for both, or two threads against jax's default (every CPU).
    for threads, pgx in ((1, "pgx-scan-1cpu"), (2, "pgx-scan")):
        report.compare(
            RANDOM_SECTION,
            f"random vs random N={N}, {threads} thread(s), {T} plies a round",
            key + (f"vecenv-stream-T{threads}",),
            key + (pgx,),
            target=PGX_TARGET,
            target_text=f"target >= {PGX_TARGET:g}x",
        )
    for impl in ("vecenv-T1", "vecenv-T2"):
        report.compare(
            RANDOM_SECTION, f"random vs random N={N}", key + (impl,), key + ("pgx-scan",)
        )


_declare()


# -- negamax vs random ---------------------------------------------------------------------------


def _kaggle_environments():
    try:
        import kaggle_environments
    except Exception as e:  # not installed, or its import fails here
        pytest.skip(f"kaggle-environments is not installed or does not import here: {e!r:.300}")
    return kaggle_environments


@pytest.mark.parametrize("impl", ("vecenv-T1", "vecenv-T2", "kaggle"))
def test_negamax_vs_random(benchmark, impl):
    benchmark.group = "ConnectX negamax vs random"
    smoke = benchmark.disabled
    board = SMOKE_BOARD if smoke else {}
    if impl == "kaggle":
        make = _kaggle_environments().make
        episodes = 1 if smoke else KAGGLE_EPISODES
        make("connectx", configuration=SMOKE_BOARD).run(["negamax", "random"])  # warm
        plies = []

        def round_fn():
            random.seed(KAGGLE_SEED)
            plies.clear()
            for _ in range(episodes):
                steps = make("connectx", configuration=board).run(["negamax", "random"])
                plies.append(len(steps) - 1)

        timed(benchmark, round_fn, NEGAMAX_ROUNDS, warmup_rounds=0)
        assert plies and all(p >= 1 for p in plies)
        count, info = episodes, {"plies_per_episode": sum(plies) / len(plies)}
    else:
        threads = int(impl[-1])
        matches = SMOKE_MATCHES if smoke else NEGAMAX_MATCHES
        agents = ("negamax", "random")
        if not smoke:  # compiles (or loads) the kernels, the parallel ones too
            vecenv.selfplay.play("connectx", agents, 64, seed=1, num_threads=threads)
        out = []

        def round_fn():
            out[:] = [
                vecenv.selfplay.play(
                    "connectx", agents, matches, seed=0, num_threads=threads, **board
                )
            ]

        timed(benchmark, round_fn, NEGAMAX_ROUNDS, warmup_rounds=0)
        result = out[0]
        assert result.summary.matches == matches
        count = matches
        info = {
            "plies_per_match": float(result.plies.mean()),
            "wins_of_negamax": result.summary.wins,
            "num_threads": threads,
        }
    report.record(
        benchmark,
        ("selfplay", "negamax-random", impl),
        count,
        1,
        unit="matches" if impl.startswith("vecenv") else "episodes",
        impl=impl,
        board=board,
        **info,
    )


# -- random self-play against Pgx ----------------------------------------------------------------


RANDOM_IMPLS = (
    "vecenv-stream-T1",
    "vecenv-stream-T2",
    "vecenv-T1",
    "vecenv-T2",
    "pgx-scan-1cpu",
    "pgx-scan",
)


@pytest.mark.parametrize("impl", RANDOM_IMPLS)
def test_random_selfplay(benchmark, impl):
    benchmark.group = f"Connect Four random self-play N={N}"
    smoke = benchmark.disabled
    n = SMOKE_N if smoke else N
    # The T = 1 stream and Pgx's one-CPU scan run held to the same CPU.
    held = impl in ("vecenv-stream-T1", "pgx-scan-1cpu")
    if impl.startswith(("vecenv-stream", "pgx-scan")):
        steps = SMOKE_T if smoke else T
        if impl.startswith("pgx"):
            round_fn, finished = pgx_round(n, steps)
        else:
            round_fn, finished = stream_round(n, steps, int(impl[-1]))
        with one_cpu() if held else contextlib.nullcontext():
            timed_for(benchmark, round_fn)
        plies = n * steps
        info = {
            "games_finished_per_call": finished[-1],
            "steps_per_call": steps,
            "threads": 1 if held else cpu_threads(impl),
        }
    else:
        threads = int(impl[-1])
        agents = ("random", "random")
        if not smoke:  # compiles (or loads) the kernels
            vecenv.selfplay.play("connectx", agents, n, seed=1, num_threads=threads)
        out = []

        def round_fn():
            out[:] = [vecenv.selfplay.play("connectx", agents, n, seed=0, num_threads=threads)]

        timed_for(benchmark, round_fn)
        result = out[0]
        plies = int(result.plies.sum())
        assert result.summary.matches == n
        info = {
            "matches": n,
            "plies_per_match": float(result.plies.mean()),
            "occupancy": plies / (n * int(result.plies.max())),
            "num_threads": threads,
        }
    # The rate is plies per second: ``plies`` per round over one "env".
    report.record(
        benchmark, ("selfplay", "connect_four", N, impl), plies, 1, unit="plies", impl=impl, **info
    )


# -- Othello random self-play against Pgx --------------------------------------------------------

OTHELLO_SECTION = (
    f"Othello random self-play, N={N}: vecenv (Seats.step, plies/s) vs Pgx othello "
    "(jax CPU, steps/s)"
)
OTHELLO_IMPLS = ("vecenv-stream-T1", "vecenv-stream-T2", "pgx-scan-1cpu", "pgx-scan")


declare_pgx(
    OTHELLO_SECTION,
    f"random vs random N={N}",
    ("selfplay", "othello", N),
    ("vecenv-stream-T1", "vecenv-stream-T2"),
    T,
    PGX_TARGET,
)


@pytest.mark.parametrize("impl", OTHELLO_IMPLS)
def test_othello_random_selfplay(benchmark, impl):
    """The Connect Four stream above on Othello: every game moving every ply (passes included),
    finished games replaced in the same step, on both sides; same thread counts."""
    benchmark.group = f"Othello random self-play N={N}"
    smoke = benchmark.disabled
    n, steps = (SMOKE_N, SMOKE_T) if smoke else (N, T)
    held = impl in ("vecenv-stream-T1", "pgx-scan-1cpu")
    if impl.startswith("pgx"):
        round_fn, finished = pgx_round(n, steps, "othello")
    else:
        round_fn, finished = stream_round(n, steps, int(impl[-1]), "othello")
    with one_cpu() if held else contextlib.nullcontext():
        timed_for(benchmark, round_fn)
    info = {
        "games_finished_per_call": finished[-1],
        "steps_per_call": steps,
        "threads": 1 if held else cpu_threads(impl),
    }
    report.record(
        benchmark, ("selfplay", "othello", N, impl), n * steps, 1, unit="plies", impl=impl, **info
    )
