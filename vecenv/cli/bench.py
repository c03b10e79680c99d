"""``vecenv bench``: env-steps/s of vecenv's vector env beside Gymnasium's, at the same sizes.

Actions are drawn before the clock starts (a pool of batches, cycled), the first calls (compiles,
first touches) are warm-up, and each figure is the median of a few timed runs. Gymnasium has no
thread count, so its figure is measured once per N and shared by every thread row.

``--save``/``--compare``/``--history`` make it a regression check against a saved run
(``bench_gate``), ``--compare-ref REV`` one against a git revision timed in the same run
(``bench_ref``: the dependable one on a shared machine).
"""

import importlib.util
import itertools
import statistics
import time

import numpy as np

from vecenv import extras
from vecenv.perf.ab_worker import POOL, actions_pool  # batches of actions cycled through

from . import bench_gate, bench_ref
from .common import (
    GYM_PREFIX,
    CliError,
    Progress,
    check_output_file,
    parse_ints,
    positive_float,
    positive_int,
    precision_option,
    seed,
    si,
)
from .train import sample

DEFAULT_SECONDS = 0.3
WARMUP = 3
SYNC_ENV_STEPS = 20_000  # bound on a SyncVectorEnv run in --steps mode: it is slow
# The most environments of a SyncVectorEnv (a Python object each) measured beside ours: past
# it gymnasium's side is left out ("-"), so a large --num-envs cannot take the machine's memory
# in Python objects (ours are checked against the memory budget).
SYNC_MAX_ENVS = 2**14
CALIBRATE_SECONDS = 0.05


class Target:
    """One vector env being measured: its step function, a pool of actions, and close;
    ``engine``, vecenv's engine underneath, where there is one (it says which loop it ran)."""

    def __init__(self, step, pool, close, engine=None):
        self.step, self.pool, self.close, self.engine = step, pool, close, engine

    def loop(self):
        """The loop vecenv's engine chose for this batch at its last decision: "serial", or
        "K threads" (``vecenv.threads``); "-" where there is no engine or no decision yet."""
        chosen = getattr(getattr(self.engine, "threads", None), "chosen", None)
        if chosen is None:
            return "-"
        return "serial" if chosen == 1 else f"{chosen} threads"

    def run(self, k):
        batches = itertools.islice(itertools.cycle(self.pool), k)
        step = self.step
        t0 = time.perf_counter()
        for actions in batches:
            step(actions)
        return time.perf_counter() - t0


def uses_vector_face(spec):
    """Whether vecenv is measured through its Gymnasium vector env (else the bare engine)."""
    return bool(spec.gym.get("id")) and importlib.util.find_spec("vecenv.gym.vector") is not None


def make_ours(spec, n, threads, seed, device="cpu", precision="float64"):
    """vecenv at N envs and T threads: its Gymnasium vector env, or the engine until one exists
    (on the GPU, the engine, its actions already in GPU memory)."""
    if uses_vector_face(spec) and device == "cpu":
        import gymnasium

        env = gymnasium.make_vec(
            f"vecenv/{spec.gym['id']}", num_envs=n, num_threads=threads, precision=precision
        )
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        pool = [sample(env.action_space, rng) for _ in range(POOL)]
        return Target(env.step, pool, env.close, getattr(env, "_engine", None))
    import vecenv

    engine = vecenv.make(
        spec.name, num_envs=n, seed=seed, num_threads=threads, device=device, precision=precision
    )
    pool = actions_pool(spec, n, seed)  # the same draws as --compare-ref's workers
    if device == "cuda":
        from numba import cuda

        pool = [cuda.to_device(a) for a in pool]
    return Target(engine.step, pool, lambda: None, engine)


def gym_mode(gym_id):
    """How Gymnasium vectorises ``gym_id``: its own vector env where it has one, else sync."""
    import gymnasium

    if gym_id not in gymnasium.registry:
        return None
    return "vector_entry_point" if gymnasium.spec(gym_id).vector_entry_point else "sync"


def make_theirs(gym_id, mode, n, seed):
    import gymnasium

    env = gymnasium.make_vec(gym_id, num_envs=n, vectorization_mode=mode)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    pool = [sample(env.action_space, rng) for _ in range(POOL)]
    return Target(env.step, pool, env.close)


def calibrate(target, steps, seconds):
    """Warm ``target`` up and return the batches a timed run takes: ``steps``, or as many as
    take about ``seconds``."""
    target.run(WARMUP)
    if steps is not None:
        return steps
    k = 1
    while True:
        elapsed = target.run(k)
        if elapsed >= CALIBRATE_SECONDS or k >= 1 << 24:
            break
        k *= 2
    return max(1, round(k * seconds / max(elapsed, 1e-9)))


def measure(targets, n, steps, seconds, repeats):
    """Median env-steps/s of each of ``targets`` (a dict) over ``repeats`` timed runs, the runs
    of all targets alternating so that each sees the same spells of a shared machine's load;
    ``steps`` is a dict of batches per run (None: as many as take ``seconds``)."""
    batches = {key: calibrate(t, steps.get(key), seconds) for key, t in targets.items()}
    rates = {key: [] for key in targets}
    for _ in range(repeats):
        for key, target in targets.items():
            rates[key].append(n * batches[key] / max(target.run(batches[key]), 1e-12))
    return {key: statistics.median(r) for key, r in rates.items()}


def check_plot(path):
    if path is None:
        return
    if not path.lower().endswith(".png"):
        raise CliError(f"--plot wants a .png file, got {path!r}")
    extras.require("train", "--plot", ["matplotlib"])
    check_output_file(path, "--plot")


def plot(path, title, ns, ours, theirs, their_label):
    """A log-log plot of env-steps/s against N: one line per thread count, one for Gymnasium."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    ax = fig.add_subplot()
    for threads, rates in ours.items():
        ax.plot(ns, rates, marker="o", label=f"vecenv, {threads} thread{'s' * (threads > 1)}")
    if theirs:
        ax.plot(ns, theirs, marker="s", linestyle="--", color="grey", label=their_label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("N (parallel envs)")
    ax.set_ylabel("env-steps/s")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.savefig(path, dpi=120)


def cmd_bench(args, out):
    import numba

    from vecenv import registry

    if args.history:
        return bench_gate.history(args, out)
    gate = args.save is not None or args.compare is not None
    if args.rounds is None:
        args.rounds = bench_ref.DEFAULT_ROUNDS if args.compare_ref else 40
    if args.env.startswith(GYM_PREFIX):
        raise CliError("bench takes one of our games; it measures Gymnasium's own beside it")
    try:
        spec = registry.get_spec(args.env)
    except ValueError as e:
        raise CliError(str(e)) from None
    gym_id = spec.gym.get("id") or spec.name
    ns = parse_ints(args.num_envs, "--num-envs")
    threads = parse_ints(args.threads, "--threads")
    most = numba.config.NUMBA_NUM_THREADS
    if max(threads) > most:
        raise CliError(f"--threads {max(threads)} exceeds the {most} threads numba may use")
    check_plot(args.plot)
    if args.save:
        check_output_file(args.save, "--save")
    if args.compare_ref is not None:
        return bench_ref.run(args, out, spec, gym_id, ns, threads)
    if gate:
        if args.plot:
            raise CliError("--plot draws a plain bench or --history, not --save/--compare")
        bench_gate.check_args(args)
    seconds = DEFAULT_SECONDS if args.steps is None and args.seconds is None else args.seconds
    mode = None if args.no_gym else gym_mode(gym_id)

    wide = f", precision='{args.precision}'" if args.precision != "float64" else ""
    if args.device == "cuda":
        ours_label = f"vecenv.make('{spec.name}', num_envs=N, device='cuda').step"
    elif uses_vector_face(spec):
        ours_label = f"gymnasium.make_vec('vecenv/{gym_id}', num_envs=N, num_threads=T{wide})"
    else:
        ours_label = f"vecenv.make('{spec.name}', num_envs=N, num_threads=T{wide}).step"
    budget = f"{args.steps} steps" if args.steps is not None else f"{seconds:g} s"
    print(f"vecenv:    {ours_label}", file=out)
    if mode is not None:
        note = ""
        if mode == "sync" and args.steps is not None:
            note = f" (at most {SYNC_ENV_STEPS:,} env-steps a run: it is slow)"
        print(
            f"gymnasium: gymnasium.make_vec('{gym_id}', vectorization_mode='{mode}'){note}",
            file=out,
        )
    if gate:
        print(
            f"random actions, {args.rounds} rounds of each, each after a calibration round "
            "(rates from the median round)",
            file=out,
        )
    else:
        print(
            f"random actions, median of {args.repeats} runs of {budget}, the runs of every "
            "figure of one N alternating; loop: the one vecenv's engine chose for that batch "
            "(it times both and keeps the faster)",
            file=out,
        )

    w = max(len(gym_id), 3)
    head = ("env", "N", "threads", "loop", "vecenv steps/s", "gymnasium steps/s", "ratio")
    line = "{:<" + str(w) + "}  {:>7}  {:>7}  {:>9}  {:>14}  {:>17}  {:>7}"
    print(line.format(*head), file=out, flush=True)
    if gate:
        run = bench_gate.measure_run(
            args, out, spec, gym_id, ns, threads, mode, make_ours, make_theirs, line, si
        )
        return bench_gate.save_and_judge(args, out, run)

    progress = Progress(len(ns), "bench")
    ours = {t: [] for t in threads}
    theirs = []
    for done, n in enumerate(ns):
        progress.update(done, f"N={n}", force=True)
        targets, steps, made = {}, {}, []
        try:
            # Ours first: their sizes are checked against the memory budget before gymnasium
            # is asked for as many environments.
            for t in threads:
                try:
                    made.append(make_ours(spec, n, t, args.seed, args.device, args.precision))
                except (ValueError, RuntimeError) as e:
                    raise CliError(str(e)) from None
            if mode is not None and not (mode == "sync" and n > SYNC_MAX_ENVS):
                targets["gym"] = make_theirs(gym_id, mode, n, args.seed)
                steps["gym"] = args.steps
                if args.steps is not None and mode == "sync":
                    steps["gym"] = min(args.steps, max(WARMUP, SYNC_ENV_STEPS // n))
            for t, target in zip(threads, made, strict=True):
                targets[t] = target
                steps[t] = args.steps
            rates = measure(targets, n, steps, seconds, args.repeats)
        finally:
            for target in {id(x): x for x in (*made, *targets.values())}.values():
                target.close()
        theirs_rate = rates.get("gym")
        theirs.append(theirs_rate)
        progress.clear()
        for t in threads:
            rate = rates[t]
            ours[t].append(rate)
            ratio = f"{rate / theirs_rate:.2f}x" if theirs_rate else "-"
            row = (gym_id, n, t, targets[t].loop(), si(rate), si(theirs_rate), ratio)
            print(line.format(*row), file=out, flush=True)
    progress.clear()
    if args.plot:
        label = f"gymnasium ({mode})" if mode else ""
        plot(args.plot, f"{gym_id}: env-steps/s", ns, ours, theirs if mode else None, label)
        print(f"wrote {args.plot}", file=out)
    return 0


def add_parser(sub):
    bench = sub.add_parser(
        "bench",
        help="measure env-steps/s against Gymnasium's vector env",
        description="Env-steps/s of vecenv's vector env and Gymnasium's at the same sizes.",
    )
    bench.add_argument("--env", default="CartPole-v1", help="one of our games (default CartPole)")
    bench.add_argument(
        "--num-envs", default="1,64,4096", help="comma-separated N values (default %(default)s)"
    )
    bench.add_argument("--threads", default="1", help="comma-separated thread counts (default 1)")
    budget = bench.add_mutually_exclusive_group()
    budget.add_argument("--steps", type=positive_int, help="batched steps per measurement")
    budget.add_argument(
        "--seconds",
        type=positive_float,
        help="seconds per measurement (default 0.3 unless --steps)",
    )
    bench.add_argument(
        "--repeats",
        type=positive_int,
        default=3,
        help="runs per figure; the median counts (default 3)",
    )
    bench.add_argument("--seed", type=seed, default=0, help="seed of the envs and the actions")
    bench.add_argument(
        "--device", choices=("cpu", "cuda"), default="cpu", help="where vecenv runs (default cpu)"
    )
    bench.add_argument("--no-gym", action="store_true", help="skip Gymnasium's vector env")
    precision_option(bench)
    bench.add_argument("--plot", metavar="FILE.png", help="save a log-log plot (matplotlib)")
    check = bench.add_argument_group(
        "regression check",
        "interleaved rounds, each after a calibration kernel round; figures saved as JSON",
    )
    check.add_argument("--save", metavar="FILE", help="save this run (figures, rounds, machine)")
    check.add_argument(
        "--compare",
        metavar="FILE",
        help="compare with a saved run; exit 1 on a slowdown over --fail-over (the machine's "
        "state between the two runs enters the figures: see --compare-ref)",
    )
    check.add_argument(
        "--compare-ref",
        metavar="REV",
        help="time git revision REV's code and this code in the same run, rounds alternating, "
        "in two worker processes; exit 1 when a case is slower by more than --fail-over",
    )
    check.add_argument(
        "--fail-over",
        default="10%",
        metavar="PCT",
        help="slowdown that fails --compare when its interval is clear, --compare-ref when its "
        "whole interval is above it (default %(default)s)",
    )
    check.add_argument(
        "--rounds",
        type=positive_int,
        default=None,
        help=f"rounds of each target (default 40; {bench_ref.DEFAULT_ROUNDS} with --compare-ref)",
    )
    check.add_argument(
        "--history", metavar="DIR", help="with --plot: the figures of the runs saved in DIR"
    )
    bench.set_defaults(func=cmd_bench)
