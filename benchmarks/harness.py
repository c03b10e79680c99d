"""Shared pieces of the benchmark suites: timing rounds, pre-made actions, optional peers.

Every throughput benchmark times *rounds* of consecutive step calls, each call taking the next row
of actions made before timing starts. A round lasts about a millisecond (``calls_per_round``); the
number of rounds is chosen from one untimed round so each benchmark takes about ``BUDGET_S``.
Each timed round follows a round of vecenv's calibration kernel (``vecenv.perf``), and the
benchmark keeps every round's time over it: the normalised figures that the regression check
(``--vecenv-fail-over``) compares.

``VECENV_BENCH_SLOWDOWN`` (a fraction, e.g. 0.15), read here only, makes the engine's CartPole step
(``cartpole_step("vecenv", ...)``) do that much more work: the deliberate slowdown the regression
check must catch (``gate_proof.py``). It is never read outside the benchmarks.
"""

import contextlib
import importlib.metadata
import importlib.util
import itertools
import math
import os
import tempfile
import time

import numba
import numpy as np
import pytest
import report

from vecenv.perf.pytest_plugin import calibrated_rounds

BUDGET_S = 0.4  # seconds of timed rounds per benchmark, about
MIN_ROUNDS = 7
MAX_ROUNDS = 400
# Calls in a round, at least: back to back, as a training loop makes them. A round of one call would
# time each call from cold: with 2 threads, the worker thread's wake-up can cost milliseconds when
# other processes hold the cores.
MIN_CALLS = 4


MAX_CALLS = 256  # calls in a round, at most: small batches cost a few microseconds a call


def calls_per_round(num_envs, cost=1):
    """Step calls in one round: about 2**16 / ``cost`` env-steps, from 4 to MAX_CALLS calls.

    ``cost`` is how many times slower than the engine's CartPole a call is, roughly (gymnasium's
    numpy CartPole 8, EnvPool 16, Acrobot 16): a round then lasts about a millisecond for every
    implementation. The count depends on nothing measured, so a benchmark's rounds are the same
    length in every run and ``--benchmark-compare`` compares like with like. Rounds of about a
    millisecond, because on a loaded machine the scheduler preempts a process every few
    milliseconds: at N = 4096 rounds of 16 calls varied 3 times less from run to run than rounds of
    64, and at N = 64 rounds of 1000 calls (3 ms) took 7 or 15 ms instead of 3 in whole runs.
    """
    return max(MIN_CALLS, min(MAX_CALLS, 2**16 // (num_envs * cost)))


def step_round(step, rows):
    """A round: ``step(a)`` for every pre-made action row ``a``."""

    def round_fn():
        for a in rows:
            step(a)

    return round_fn


def run_rounds(benchmark, round_fn):
    """Time ``round_fn`` with pytest-benchmark, each round after a calibration round; with
    benchmarks disabled, call it once.

    Short rounds, many of them: the figures use the best round, and on a shared machine the more
    rounds there are, the likelier one of them ran undisturbed.
    """
    if benchmark.disabled:
        benchmark(round_fn)
        return
    # Warm-up, and the round count (never the round's length) from the fastest of three rounds:
    # one round slowed by other work would otherwise cut the count.
    elapsed = []
    for _ in range(3):
        start = time.perf_counter()
        round_fn()
        elapsed.append(time.perf_counter() - start)
    rounds = int(min(MAX_ROUNDS, max(MIN_ROUNDS, math.ceil(BUDGET_S / max(min(elapsed), 1e-6)))))
    calibrated_rounds(benchmark, round_fn, rounds, warmup_rounds=1)


def run_steps(benchmark, step, rows):
    """Time rounds of ``step`` over every pre-made row of ``rows``; return the calls per round."""
    run_rounds(benchmark, step_round(step, rows))
    return len(rows)


def action_rows(calls, num_envs, seed=0, *, discrete=True, low=0, high=1, shape=(), dtype=None):
    """``calls`` pre-made action arrays of shape (num_envs, *shape), uniform within the bounds."""
    rng = np.random.default_rng(seed)
    size = (calls, num_envs) + tuple(shape)
    if discrete:
        acts = rng.integers(low, high, size=size, endpoint=True, dtype=dtype or np.int64)
    else:
        acts = rng.uniform(low, high, size=size).astype(dtype or np.float64)
    return list(acts)


def engine_action_rows(engine, calls, seed=0):
    """Random valid actions for a single-agent engine, shaped (N, *action_shape)."""
    action = engine.spec.action
    low = np.asarray(action.low, dtype=np.float64).reshape(action.shape)
    high = np.asarray(action.high, dtype=np.float64).reshape(action.shape)
    if action.discrete:
        low, high = int(low.min()), int(high.max())
    return action_rows(
        calls,
        engine.num_envs,
        seed,
        discrete=action.discrete,
        low=low,
        high=high,
        shape=action.shape,
    )


def make_engine(game, num_envs, num_threads, **kwargs):
    """A warmed engine (its kernels compiled or loaded); a failing first step fails the test."""
    import vecenv

    engine = vecenv.make(game, num_envs=num_envs, num_threads=num_threads, seed=0, **kwargs)
    warm = engine_action_rows(engine, 1, seed=1)[0]
    try:
        engine.step(warm)
    except Exception as e:  # a crash is a bug, not a speed figure
        pytest.fail(
            f"engine step failed ({game}, num_envs={num_envs}, num_threads={num_threads}): "
            f"{type(e).__name__}: {str(e)[:300]}",
            pytrace=False,
        )
    return engine


def game_of(gym_id):
    """The vecenv game registered under the Gymnasium id ``gym_id``."""
    from vecenv import registry

    return registry.resolve(gym_id)


def cartpole_step(impl, n, threads=1):
    """A warmed ``step`` of CartPole at N = n: the engine ("vecenv"; "vecenv-float32" its rules
    in float32) or gymnasium's numpy ``CartPoleVectorEnv`` ("gymnasium", which has no thread
    knob)."""
    if impl in ("vecenv", "vecenv-float32"):
        precision = "float32" if impl == "vecenv-float32" else "float64"
        return slowed(make_engine("cartpole", n, threads, precision=precision).step)
    import gymnasium

    env = gymnasium.make_vec("CartPole-v1", num_envs=n, vectorization_mode="vector_entry_point")
    env.reset(seed=0)
    return env.step


def slowed(step):
    """``step``, doing ``VECENV_BENCH_SLOWDOWN`` (a fraction) more work when that is set: after
    the calls that bring the running excess to a whole call, one more call of the same step with
    the same actions. 0.15 adds 15% of the step's own work, whatever the machine and N."""
    fraction = float(os.environ.get("VECENV_BENCH_SLOWDOWN") or 0)
    if fraction <= 0:
        return step
    owed = [0.0]

    def slow_step(actions):
        result = step(actions)
        owed[0] += fraction
        while owed[0] >= 1.0:
            owed[0] -= 1.0
            step(actions)
        return result

    return slow_step


def set_threads(num_threads):
    numba.set_num_threads(num_threads)


def require_extra(extra, *modules):
    """Skip the calling module (outside CI) when a package of ``extra`` is missing; in CI, where
    every extra is installed, fail instead: there a missing package is a broken setup."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if not missing:
        return
    reason = f"{', '.join(missing)} not installed: pip install -e '.[{extra}]'"
    if os.environ.get("CI"):
        pytest.fail(f"the {extra} extra must be installed in CI: {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def envpool_module():
    """envpool, or a skip with the reason it cannot be used here."""
    try:
        import envpool
    except ImportError as e:
        pytest.skip(f"envpool is not installed or does not import here: {e}")
    return envpool


# -- gymnax, the jax peer of several games ---------------------------------------------------

GYMNAX_IMPLS = ("gymnax-scan", "gymnax-scan-noobs", "gymnax-step")


def _jax_with(peer, *modules):
    """jax and the peer's modules, or a skip with the reason they cannot be used here.

    Unless jax is told otherwise (``JAX_COMPILATION_CACHE_DIR``), its compiled functions are kept
    in a folder of the temporary directory: a later run loads them instead of compiling (compile
    time is never timed; this only shortens the run).
    """
    if importlib.util.find_spec(peer) is None:  # skip before importing jax (a second)
        pytest.skip(f"{peer} is not installed here (pip install {peer})")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    try:
        import jax

        loaded = [importlib.import_module(m) for m in modules]
    except Exception as e:  # ImportError, or a broken install failing at import
        pytest.skip(f"{peer} (with jax) is not installed or does not import here: {e!r:.300}")
    if not jax.config.jax_compilation_cache_dir:
        jax.config.update("jax_compilation_cache_dir", JAX_CACHE)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    return (jax, *loaded)


GYMNAX_MIN_VERSION = (1, 0, 1)  # the bench extra's; older releases call jax APIs long gone


def gymnax_modules():
    """(jax, gymnax), or a skip with the reason. kaggle-environments pulls in gymnax 0.0.8,
    which imports but fails at its first step on today's jax: only the bench extra's counts."""
    try:
        found = importlib.metadata.version("gymnax")
    except importlib.metadata.PackageNotFoundError:
        found = None
    if found is not None and _release(found) < GYMNAX_MIN_VERSION:
        wanted = ".".join(map(str, GYMNAX_MIN_VERSION))
        pytest.skip(f"gymnax {found} is older than {wanted} (pip install 'vecenv[bench]')")
    return _jax_with("gymnax", "gymnax")


def _release(version):
    """The leading numbers of a version string: "1.0.1.post2" -> (1, 0, 1)."""
    numbers = []
    for part in version.split("."):
        digits = "".join(itertools.takewhile(str.isdigit, part))
        if not digits:
            break
        numbers.append(int(digits))
    return tuple(numbers)


def declare_gymnax(section, title, key, label, steps, target):
    """The report's rows of vecenv (``key + ("vecenv",)``) against each gymnax figure, the
    target on the scan."""
    report.label(key + ("vecenv",), label)
    report.label(key + ("gymnax-scan",), f"gymnax scan T={steps}")
    report.label(key + ("gymnax-scan-noobs",), f"gymnax scan T={steps}, obs dropped")
    report.label(key + ("gymnax-step",), "gymnax per call")
    for impl in GYMNAX_IMPLS:
        aimed = target if impl == "gymnax-scan" else None
        report.compare(
            section,
            title,
            key + ("vecenv",),
            key + (impl,),
            target=aimed,
            target_text=f"target >= {target:g}x" if aimed else "",
        )


def gymnax_round(env_id, impl, rows, steps):
    """A round of gymnax's ``env_id`` over the pre-made action rows (each of N actions), one of
    GYMNAX_IMPLS: "gymnax-scan" (``jax.lax.scan`` over ``steps`` steps in one jitted call, every
    step's observation, reward and termination returned), "gymnax-scan-noobs" (the same without
    the observations: XLA then leaves them out, an upper bound on gymnax's speed) or
    "gymnax-step" (one jitted vmapped step a call, brought to numpy). Returns (round function,
    env-step calls in a round)."""
    jax, gymnax = gymnax_modules()
    env, params = gymnax.make(env_id)
    n = len(rows[0])
    vstep = jax.vmap(env.step, in_axes=(0, 0, 0, None))
    key = jax.random.key(0)
    _, state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(key, n), params)

    def one(state, key, actions):
        key, sub = jax.random.split(key)
        out = vstep(jax.random.split(sub, n), state, actions, params)
        # gymnax 1.x returns (obs, state, reward, terminated, truncated, info); 0.0.x returned
        # (obs, state, reward, done, info).
        obs, state, reward, terminated = out[:4]
        return state, key, obs, reward, terminated

    if impl == "gymnax-step":
        step = jax.jit(one)
        actions = [jax.device_put(a.astype(np.int32)) for a in rows]
        carry = [state, key]

        def round_fn():
            state, key = carry
            for a in actions:
                state, key, obs, reward, _ = step(state, key, a)
                np.asarray(obs)
                np.asarray(reward)
            carry[:] = state, key

        round_fn()  # compile
        return round_fn, len(actions)

    keep_obs = impl == "gymnax-scan"

    def body(carry, actions):
        state, key, obs, reward, terminated = one(*carry, actions)
        return (state, key), ((obs, reward, terminated) if keep_obs else (reward, terminated))

    @jax.jit
    def rollout(state, key, actions):
        return jax.lax.scan(body, (state, key), actions)

    actions = jax.device_put(np.stack(rows).astype(np.int32))  # (steps, N)
    carry = [state, key]

    def round_fn():
        (state, key), out = rollout(*carry, actions)
        jax.block_until_ready(out)
        carry[:] = state, key

    round_fn()  # compile
    return round_fn, steps


# -- rounds timed for a while, Pgx, and holding a process to one CPU ------------------------------

JAX_CACHE = os.path.join(tempfile.gettempdir(), "vecenv-bench-jax-cache")
RANDOM_SECONDS = 1.5  # of timed rounds for each side of the self-play benchmarks against Pgx
MIN_ROUNDS = 20
MAX_ROUNDS = 400


def timed(benchmark, round_fn, rounds, warmup_rounds=1):
    """``rounds`` timed calls of ``round_fn`` after ``warmup_rounds`` untimed ones; once when
    disabled."""
    if benchmark.disabled:
        benchmark(round_fn)
        return
    calibrated_rounds(benchmark, round_fn, rounds, warmup_rounds=warmup_rounds)


def timed_for(benchmark, round_fn, seconds=RANDOM_SECONDS):
    """Timed calls of ``round_fn`` for about ``seconds`` (MIN_ROUNDS to MAX_ROUNDS of them, as
    many as one untimed call says fit); once when disabled. Rounds spread over the same time on
    every side: the best round of each then comes from as long a look at the machine, where
    other work (on a shared machine, on the other CPUs) comes and goes in spells."""
    if benchmark.disabled:
        benchmark(round_fn)
        return
    start = time.perf_counter()
    round_fn()
    elapsed = max(time.perf_counter() - start, 1e-6)
    rounds = int(min(MAX_ROUNDS, max(MIN_ROUNDS, math.ceil(seconds / elapsed))))
    timed(benchmark, round_fn, rounds, warmup_rounds=0)


def stream_round(n, steps, threads, game="connectx", **configuration):
    """vecenv's counterpart of Pgx's scan: ``n`` games, every game moving every step, the built-in
    random agents choosing the moves inside the engine, a finished game replaced in the same step
    (same-step autoreset, as Pgx's ``auto_reset``); ``configuration`` the game's."""
    import vecenv
    from vecenv.selfplay import Seats

    engine = vecenv.make(
        game,
        num_envs=n,
        seed=0,
        autoreset="same_step",
        num_threads=threads,
        parallel=threads > 1,
        **configuration,
    )
    seats = Seats(engine)
    for seat in range(engine.num_agents):
        seats.assign("random", np.full(n, seat, dtype=np.int64))
    finished = []

    def round_fn():
        before = int(seats.ends.sum())
        seats.step(steps)
        finished.append(int(seats.ends.sum()) - before)

    round_fn()  # compiles (or loads) the kernels
    return round_fn, finished


def pgx_modules():
    """(jax, pgx), or a skip with the reason."""
    return _jax_with("pgx", "pgx", "pgx.experimental")[:2]


def declare_pgx(section, title, key, impls, steps, target):
    """The report's rows of vecenv's ``impls`` (one thread, two threads) against Pgx's scan on
    one CPU and on jax's default threads, with the target."""
    for threads, impl in enumerate(impls, start=1):
        report.label(key + (impl,), f"vecenv T={threads}")
    report.label(key + ("pgx-scan",), "pgx scan, jax's default threads")
    report.label(key + ("pgx-scan-1cpu",), "pgx scan on 1 CPU")
    for threads, pgx in ((1, "pgx-scan-1cpu"), (2, "pgx-scan")):
        report.compare(
            section,
            f"{title}, {threads} thread(s), {steps} steps a round",
            key + (impls[threads - 1],),
            key + (pgx,),
            target=target,
            target_text=f"target >= {target:g}x",
        )


def pgx_round(n, steps, game="connect_four"):
    """A compiled round of Pgx's ``game`` (an id of ``pgx.make``, or a function of the pgx module
    making the env): ``steps`` random legal moves in each of ``n`` games, finished games replaced
    in the same step. Returns (round function, list of the games finished in each call)."""
    jax, pgx = pgx_modules()
    try:
        env = pgx.make(game) if isinstance(game, str) else game(pgx)
        step = jax.vmap(pgx.experimental.auto_reset(env.step, env.init))
        act_randomly = pgx.experimental.act_randomly
        state = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.key(0), n))
    except Exception as e:  # an API that moved (pgx < 2 took no key in step)
        pytest.skip(f"pgx {getattr(pgx, '__version__', '?')} {game}: {e!r:.300}")

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


# -- EnvPool's C++ ports of Pgx's games, both sides drawing their moves in numpy ----------------


def uniform_legal(mask, rng):
    """A uniformly drawn true column of each row of ``mask`` (N, A) bool (0 where none): one
    pass over the mask, then one draw a row among its true columns. The same code draws
    vecenv's moves and EnvPool's, so neither side's time includes a cheaper draw."""
    rows, columns = np.nonzero(mask)
    counts = np.bincount(rows, minlength=mask.shape[0])
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    picks = starts + (rng.random(mask.shape[0]) * counts).astype(np.int64)
    return np.where(counts > 0, columns[np.minimum(picks, len(columns) - 1)], 0).astype(np.int32)


def numpy_vecenv_round(game, n, steps, **configuration):
    """``steps`` steps of ``n`` games of vecenv's ``game`` of several agents, the agent to move in
    each (its status ACTIVE) playing ``uniform_legal`` of ``obs["legal"]`` (its own row, where
    each agent has one), next-step autoreset (as EnvPool's); one thread. Returns the round
    function (its kernels compiled)."""
    import vecenv
    from vecenv.kernels.turns import ACTIVE

    engine = vecenv.make(game, num_envs=n, seed=0, autoreset="next_step", **configuration)
    rng = np.random.default_rng(0)
    rows = np.arange(n)
    actions = np.zeros((n, engine.num_agents), dtype=np.int64)
    per_agent = engine.obs["legal"].ndim == 3

    def round_fn():
        for _ in range(steps):
            mover = np.argmax(engine.states["status"] == ACTIVE, axis=1)
            legal = engine.obs["legal"][rows, mover] if per_agent else engine.obs["legal"]
            actions[rows, mover] = uniform_legal(legal, rng)
            engine.step(actions)

    round_fn()  # compiles (or loads) the kernels
    return round_fn


def numpy_envpool_round(task, n, steps):
    """EnvPool's ``task`` (gymnasium API, ``num_threads=1``, ``batch_size = num_envs = n``):
    ``steps`` steps a round, each game's player to act playing ``uniform_legal`` of
    ``info["legal_action_mask"]``. Returns the round function (its games built)."""
    envpool = envpool_module()
    env = envpool.make(task, env_type="gymnasium", num_envs=n, batch_size=n, num_threads=1, seed=0)
    _, info = env.reset()
    rng = np.random.default_rng(0)
    held = [info]

    def round_fn():
        info = held[0]
        for _ in range(steps):
            info = env.step(uniform_legal(info["legal_action_mask"], rng))[-1]
        held[0] = info

    round_fn()
    return round_fn


def against_envpool(benchmark, key, ours, theirs, steps, n, rounds):
    """Times ``ours`` (pytest-benchmark) and ``theirs`` (by hand, untimed by pytest-benchmark)
    round by round, EnvPool's before each of vecenv's, on one CPU, and records both (plies of
    ``steps`` steps of ``n`` games: the keys ``key + ("vecenv-numpy-T1",)`` and ``key +
    ("envpool-T1",)``). In smoke mode one round of each."""
    spent = []

    def theirs_timed():
        start = time.perf_counter()
        theirs()
        spent.append(time.perf_counter() - start)

    with one_cpu():
        if benchmark.disabled:
            theirs_timed()
            benchmark(ours)
        else:
            benchmark.pedantic(ours, setup=theirs_timed, rounds=rounds, iterations=1)
            benchmark.extra_info["envpool"] = report.record_rounds(
                key + ("envpool-T1",), spent, steps, n
            )
    report.record(benchmark, key + ("vecenv-numpy-T1",), steps, n, unit="plies", threads=1)


def declare_envpool(section, key, task, target):
    """The report's row of vecenv against EnvPool's ``task``, both drawing in numpy."""
    report.label(key + ("vecenv-numpy-T1",), "vecenv, numpy's draws, T=1")
    report.label(key + ("envpool-T1",), f"envpool {task}, numpy's draws, T=1")
    report.compare(
        section,
        f"{key[1]}: one thread each",
        key + ("vecenv-numpy-T1",),
        key + ("envpool-T1",),
        target=target,
        target_text=f"target >= {target:g}x",
    )


@contextlib.contextmanager
def one_cpu():
    """Every thread of the process held to one CPU (the lowest it may use), as ``taskset`` holds
    a process; as they were afterwards. Skips where the operating system cannot do it."""
    tasks = "/proc/self/task"
    if not hasattr(os, "sched_setaffinity") or not os.path.isdir(tasks):
        pytest.skip("holding threads to one CPU needs Linux's sched_setaffinity")
    allowed = os.sched_getaffinity(0)
    cpu = {min(allowed)}

    def each_thread(action):
        for tid in os.listdir(tasks):
            with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
                action(int(tid))

    saved = {}
    each_thread(lambda tid: saved.setdefault(tid, os.sched_getaffinity(tid)))
    each_thread(lambda tid: os.sched_setaffinity(tid, cpu))
    try:
        yield
    finally:
        each_thread(lambda tid: os.sched_setaffinity(tid, saved.get(tid, allowed)))


def cpu_threads(impl):
    """The threads a stream runs on, or the CPUs jax may use."""
    if impl.startswith("vecenv"):
        return int(impl[-1])
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
