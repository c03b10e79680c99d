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
2, counting the plies actually played (``result.plies.sum()``: ``play`` runs until the longest of
the 4096 matches ends, so the last plies step a batch most of whose matches are over; the share of
match-plies that were played, ``plies.sum() / (4096 * plies.max())``, is kept in ``extra_info`` as
``occupancy``). Each call builds its engine, plays every match to its end and summarises the
results: this is the engine-level figure too (the engine has no public way to let the built-in
agents choose the moves other than ``play``). The same seed every round, so every round plays the
same matches.

**The same work as Pgx's** (``vecenv-stream``, the figure the target is for): ``vecenv.make(
"connectx", num_envs=4096, autoreset="same_step")`` on one thread, both seats played by the
built-in random agent through ``vecenv.selfplay.Seats`` (moves chosen inside the engine), 32 steps a
round, every game moving every step and a finished game replaced in the same step, as Pgx's
``auto_reset`` does; it counts N x 32 steps a round.

Against it, Pgx's ``connect_four`` (``pgx.make("connect_four")``) under ``jax.jit`` on CPU with
jax's default threads: ``jax.vmap`` of ``pgx.experimental.auto_reset(env.step, env.init)`` (a
finished game is replaced by a new one in the same step) over N = 4096 games, the moves drawn
uniformly among the legal ones (``pgx.experimental.act_randomly`` on ``legal_action_mask``), in a
``jax.lax.scan`` of T = 32 steps per call, each step splitting the keys the step and the reset take;
it counts N x 32 steps a call (every game moves every step). Compile time is excluded (the first
call compiles, before timing). Target: ``vecenv-stream`` at least 5x Pgx. Pgx is an optional peer
(``pip install pgx``, with jax); where it does not install or import, its benchmark skips with the
reason. In smoke mode N = 64 and the scan is 2 steps long.

Keys: ("selfplay", "negamax-random", impl) with impl "vecenv-T1", "vecenv-T2", "kaggle" (matches or
episodes per second); ("selfplay", "connect_four", 4096, impl) with impl "vecenv-T1", "vecenv-T2",
"pgx-scan" (plies per second). The table prints every rate as "steps/s".
"""

import importlib.util
import os
import random
import tempfile

import numpy as np
import pytest
import report

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
JAX_CACHE = os.path.join(tempfile.gettempdir(), "vecenv-bench-jax-cache")

NEGAMAX_SECTION = (
    f"ConnectX negamax vs random: vecenv.selfplay.play M={NEGAMAX_MATCHES} (matches/s) vs "
    "kaggle_environments run (episodes/s); printed as steps/s"
)
RANDOM_SECTION = (
    f"Connect Four random self-play, N={N}: vecenv.selfplay.play (plies played/s) vs Pgx "
    "connect_four (jax CPU, default threads, steps/s)"
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
    report.label(key + ("vecenv-stream",), f"vecenv stream T=1, {T} plies a round")
    report.label(key + ("pgx-scan",), f"pgx scan T={T}")
    for impl in ("vecenv-stream", "vecenv-T1", "vecenv-T2"):
        target = PGX_TARGET if impl == "vecenv-stream" else None
        report.compare(
            RANDOM_SECTION,
            f"random vs random N={N}",
            key + (impl,),
            key + ("pgx-scan",),
            target=target,
            target_text=f"target >= {PGX_TARGET:g}x" if target else "",
        )


_declare()


def timed(benchmark, round_fn, rounds, warmup_rounds=1):
    """``rounds`` timed calls of ``round_fn`` after ``warmup_rounds`` untimed ones; once when
    disabled."""
    if benchmark.disabled:
        benchmark(round_fn)
        return
    benchmark.pedantic(round_fn, rounds=rounds, warmup_rounds=warmup_rounds, iterations=1)


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


def _pgx():
    """(jax, pgx), or a skip with the reason they cannot be used here.

    Unless jax is told otherwise (``JAX_COMPILATION_CACHE_DIR``), its compiled functions are kept
    in a folder of the temporary directory: a later run loads them instead of compiling.
    """
    if importlib.util.find_spec("pgx") is None:  # skip before importing jax (a second)
        pytest.skip("pgx is not installed here (pip install pgx)")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    try:
        import jax
        import pgx
        import pgx.experimental
    except Exception as e:  # ImportError, or a broken install failing at import
        pytest.skip(f"pgx (with jax) is not installed or does not import here: {e!r:.300}")
    if not jax.config.jax_compilation_cache_dir:
        jax.config.update("jax_compilation_cache_dir", JAX_CACHE)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    return jax, pgx


def _pgx_round(n, steps):
    """A compiled round of Pgx connect_four: ``steps`` random legal moves in each of ``n`` games,
    finished games replaced in the same step. Returns (round function, list of the games finished
    in each call)."""
    jax, pgx = _pgx()
    try:
        env = pgx.make("connect_four")
        step = jax.vmap(pgx.experimental.auto_reset(env.step, env.init))
        act_randomly = pgx.experimental.act_randomly
        state = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.key(0), n))
    except Exception as e:  # an API that moved (pgx < 2 took no key in step)
        pytest.skip(f"pgx {getattr(pgx, '__version__', '?')} connect_four: {e!r:.300}")

    def body(carry, _):
        state, key = carry
        key, move_key, step_key = jax.random.split(key, 3)
        action = act_randomly(move_key, state.legal_action_mask)
        state = step(state, action, jax.random.split(step_key, n))
        return (state, key), state.terminated

    @jax.jit
    def rollout(state, key):
        (state, key), terminated = jax.lax.scan(body, (state, key), None, length=steps)
        return state, key, terminated.sum()

    carry = [state, jax.random.key(1)]
    finished = []

    def round_fn():
        state, key, ended = rollout(*carry)
        jax.block_until_ready(ended)
        carry[:] = state, key
        finished.append(int(ended))

    round_fn()  # compile
    return round_fn, finished


def _stream_round(n, steps):
    """vecenv's counterpart of Pgx's scan: ``n`` games on one thread, every game moving every
    step, the built-in random agents choosing the moves inside the engine, a finished game
    replaced in the same step (same-step autoreset, as Pgx's ``auto_reset``)."""
    engine = vecenv.make("connectx", num_envs=n, seed=0, autoreset="same_step")
    seats = vecenv.selfplay.Seats(engine)
    seats.assign("random", np.zeros(n, dtype=np.int64))
    seats.assign("random", np.ones(n, dtype=np.int64))
    actions = np.zeros((n, 2), dtype=np.int64)
    finished = []

    def round_fn():
        ended = 0
        for _ in range(steps):
            seats.moves(actions)
            _, _, terminated, _ = engine.step(actions)
            ended += int(terminated.sum())
        finished.append(ended)

    round_fn()  # compiles (or loads) the kernels
    return round_fn, finished


@pytest.mark.parametrize("impl", ("vecenv-stream", "vecenv-T1", "vecenv-T2", "pgx-scan"))
def test_random_selfplay(benchmark, impl):
    benchmark.group = f"Connect Four random self-play N={N}"
    smoke = benchmark.disabled
    n = SMOKE_N if smoke else N
    if impl == "vecenv-stream":
        steps = SMOKE_T if smoke else T
        round_fn, finished = _stream_round(n, steps)
        timed(benchmark, round_fn, 20)
        plies = n * steps
        info = {"games_finished_per_call": finished[-1], "steps_per_call": steps}
    elif impl == "pgx-scan":
        steps = SMOKE_T if smoke else T
        round_fn, finished = _pgx_round(n, steps)
        timed(benchmark, round_fn, 20)
        plies = n * steps
        info = {"games_finished_per_call": finished[-1], "steps_per_call": steps}
    else:
        threads = int(impl[-1])
        agents = ("random", "random")
        if not smoke:  # compiles (or loads) the kernels
            vecenv.selfplay.play("connectx", agents, n, seed=1, num_threads=threads)
        out = []

        def round_fn():
            out[:] = [vecenv.selfplay.play("connectx", agents, n, seed=0, num_threads=threads)]

        timed(benchmark, round_fn, 20)
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
