"""``vecenv bench --save/--compare/--history``: the regression check of ``vecenv bench``.

Every round times a fixed number of step calls of each target (vecenv at each thread count, and
Gymnasium's vector env unless ``--no-gym``), each right after a round of the calibration kernel on
one thread, the targets in rotating order (``vecenv.perf.rounds``). A run keeps, per N and
thread count, the time per call over the calibration round (the figure the check judges), the
ratio to Gymnasium's round next to it, and the raw times; ``--compare`` judges it against a saved
run with a bootstrap interval (``vecenv.perf.compare``).
"""

import functools
import os

import numpy as np

from vecenv.perf import compare, rounds, runs

from .common import CliError

PEER_COST = 32  # Gymnasium's calls cost up to this many of vecenv's: its rounds have fewer


def calls_per_round(n, cost=1):
    """Step calls in a round: about 2**16 / ``cost`` env-steps, 4 to 256: about a millisecond,
    shorter than the few milliseconds a loaded machine's scheduler lets a process run (rounds of
    3 ms at N = 64 took 7 or 15 ms in whole runs). It depends on N only, so saved runs compare
    round for round."""
    return max(4, min(256, 2**16 // (n * cost)))


def usable_cpus():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def figure_names(gym_id, n, t, precision="float64"):
    ours = f"{gym_id} N={n} T={t}" + (f" {precision}" if precision != "float64" else "")
    return {
        "ours": f"{ours} vecenv/calibration",
        "peer": f"{ours} vecenv/gymnasium",
        "theirs": f"{gym_id} N={n} gymnasium/calibration",
    }


def measure_run(args, out, spec, gym_id, ns, threads, mode, make_ours, make_theirs, line, si):
    """A run (``vecenv.perf.runs``) of every N and thread count; prints the usual table."""
    settings = {"env": gym_id, "num_envs": ns, "threads": threads, "rounds": args.rounds}
    settings["seed"], settings["gymnasium"] = args.seed, mode
    settings["precision"] = args.precision
    run = runs.new_run(label=f"vecenv bench --env {gym_id}", settings=settings)
    for n in ns:
        k, k_gym = calls_per_round(n), calls_per_round(n, PEER_COST)
        targets, made, ours_of = {}, [], {}
        try:
            if mode is not None:
                theirs = make_theirs(gym_id, mode, n, args.seed)
                made.append(theirs)
                targets["gymnasium"] = functools.partial(theirs.run, k_gym)
            for t in threads:
                try:
                    ours = make_ours(spec, n, t, args.seed, precision=args.precision)
                except ValueError as e:
                    raise CliError(str(e)) from None
                made.append(ours)
                ours_of[t] = ours
                targets[t] = functools.partial(ours.run, k)
            timed = rounds.interleaved(targets, args.rounds)
        finally:
            for target in made:
                target.close()
        gym_rate = None
        if mode is not None:
            gym_s, gym_cal = (np.asarray(x) for x in timed["gymnasium"])
            gym_rate = n * k_gym / float(np.median(gym_s))
            name = figure_names(gym_id, n, 1)["theirs"]
            what = "Gymnasium's time per call over the calibration round before it"
            runs.add_figure(run, name, gym_s / k_gym / gym_cal, False, what, calibration=gym_cal)
            run["raw"][f"{gym_id} N={n} gymnasium"] = {"seconds": list(gym_s), "calls": k_gym}
        for t in threads:
            s, cal = (np.asarray(x) for x in timed[t])
            names = figure_names(gym_id, n, t, args.precision)
            what = "vecenv's time per call over the calibration round before it"
            # On every CPU of a shared machine a figure measures the other tenants too: shown,
            # not gated (see vecenv.perf.pytest_plugin).
            gate = t < (usable_cpus() or 1)
            runs.add_figure(run, names["ours"], s / k / cal, gate, what, calibration=cal)
            if mode is not None:
                what = "vecenv's time per call over Gymnasium's, in the same round"
                # Over the peer's time in the same round, not the calibration's: a round where
                # either side was disturbed is left out the same way (compare.steady).
                peer = gym_s / k_gym
                runs.add_figure(run, names["peer"], (s / k) / peer, False, what, calibration=peer)
            key = names["ours"].removesuffix("/calibration")
            run["raw"][key] = {"seconds": list(s), "calls": k}
            rate = n * k / float(np.median(s))
            ratio = f"{rate / gym_rate:.2f}x" if gym_rate else "-"
            row = (gym_id, n, t, ours_of[t].loop(), si(rate), si(gym_rate), ratio)
            print(line.format(*row), file=out, flush=True)
    return run


def save_and_judge(args, out, run):
    """``--save`` the run, ``--compare`` it; the exit status."""
    if args.save:
        try:
            runs.save(run, args.save)
        except OSError as e:
            raise CliError(f"cannot save the run to {args.save!r}: {e.strerror or e}") from None
        print(f"saved {args.save}", file=out)
    return judge(args, out, run) if args.compare else 0


def judge(args, out, run):
    """Compare ``run`` with the run saved in ``args.compare``; the exit status (1: slower)."""
    try:
        threshold = compare.parse_threshold(args.fail_over)
        baseline = runs.load(args.compare)
    except ValueError as e:
        raise CliError(str(e)) from None
    rows = compare.compare_figures(baseline["figures"], run["figures"], threshold)
    print(f"\nagainst {args.compare} (saved {baseline.get('created', '?')}):", file=out)
    for text in compare.table(rows, threshold):
        print(text, file=out)
    return 1 if compare.regressions(rows) else 0


def history(args, out):
    """``--history DIR --plot FILE.png``: the gated figures of the runs saved in DIR."""
    from vecenv.perf import plot

    if not args.plot:
        raise CliError("--history needs --plot FILE.png")
    try:
        saved = runs.history(args.history)
    except ValueError as e:
        raise CliError(str(e)) from None
    if not saved:
        raise CliError(f"no saved runs (vecenv bench --save) in {args.history!r}")
    lines = plot.plot_history(saved, args.plot)
    print(f"{len(saved)} run(s), {lines} figure(s): wrote {args.plot}", file=out)
    return 0


def check_args(args):
    if args.rounds < 2:
        raise CliError(f"--rounds must be at least 2, got {args.rounds}")
    try:
        compare.parse_threshold(args.fail_over)
    except ValueError as e:
        raise CliError(f"--fail-over: {e}") from None
    if args.compare is not None:
        try:
            runs.load(args.compare)  # before measuring: a bad file fails at once
        except ValueError as e:
            raise CliError(str(e)) from None
