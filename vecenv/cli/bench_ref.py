"""``vecenv bench --compare-ref REV``: the code now against git revision REV, timed in one run.

REV is checked out into a temporary ``git worktree`` (``vecenv.perf.worktree``, removed when the
command ends, on an error or Ctrl-C too); each of N and thread count is then timed for REV's build
and for this one in two worker processes, their rounds alternating (``vecenv.perf.ab``), and judged
on the pairs of rounds (``vecenv.perf.paired``). Unlike ``--compare FILE``, no figure saved at
another time, on a machine in another state, enters the verdict.

The rounds are split over ``PROCESSES`` pairs of worker processes, started one pair after another,
and the verdict's interval is taken over those pairs as well as over the rounds: two processes of
the same code can differ for their whole lives (where their code and memory landed), and one such
pair must not decide a verdict. One-thread cases are timed in CPU time (``ab_worker``).
"""

from pathlib import Path

import vecenv
from vecenv.perf import ab, compare, paired, worktree

from .bench_gate import calls_per_round, usable_cpus
from .common import CliError, si

WARMUP = 3  # rounds of each build before any counts: compiles, first touches
DEFAULT_ROUNDS = 200  # paired rounds per case: about a millisecond each, per side
PROCESSES = 4  # pairs of worker processes the rounds are split over


def check_args(args):
    for flag, given in (
        ("--compare", args.compare),
        ("--save", args.save),
        ("--plot", args.plot),
        ("--history", args.history),
    ):
        if given:
            raise CliError(f"--compare-ref times both builds itself: drop {flag}")
    if args.device != "cpu":
        raise CliError("--compare-ref measures the CPU engine (--device cpu)")
    if args.rounds < paired.MIN_PAIRS * PROCESSES:
        least = paired.MIN_PAIRS * PROCESSES
        raise CliError(
            f"--rounds must be at least {least} ({PROCESSES} pairs of workers), got {args.rounds}"
        )
    try:
        return compare.parse_threshold(args.fail_over)
    except ValueError as e:
        raise CliError(f"--fail-over: {e}") from None


def current_tree():
    """The folder on ``sys.path`` that this ``vecenv`` package was imported from."""
    return Path(vecenv.__file__).resolve().parent.parent


def reference_repository(here, cwd=None):
    """``(repository, the package's folder in it)``: the checkout that ``here`` (this vecenv's
    folder) lies in, or, for a vecenv installed in site-packages, the checkout of vecenv that the
    current folder lies in (its root holds ``vecenv/__init__.py``). CliError where neither is."""
    try:
        repo = worktree.repo_root(here)
        return repo, here.relative_to(repo)
    except ValueError:
        pass
    cwd = Path.cwd() if cwd is None else Path(cwd)
    try:
        repo = worktree.repo_root(cwd)
    except ValueError:
        repo = None
    if repo is None or not (repo / "vecenv" / "__init__.py").is_file():
        raise CliError(
            f"--compare-ref times this vecenv against a git revision of vecenv's repository, "
            f"but this vecenv is installed in {here}, and the current folder ({cwd}) is not in "
            f"a checkout of vecenv: run it from inside a clone"
        )
    return repo, Path(".")


def row(case, rates, change, gated):
    interval = f"{change.change:+.1%} [{change.low:+.1%}, {change.high:+.1%}]"
    verdict = change.verdict.upper() if (change.slower and gated) else change.verdict
    if not gated:
        verdict += " (not gated)"
    return (
        f"{case:<28}  {rates[0]:>11}  {rates[1]:>11}  {interval:>26}  {change.pairs:>5}  {verdict}"
    )


def run(args, out, spec, gym_id, ns, threads):
    """Measure and judge; the exit status (0 pass, 1 a gated case slower)."""
    threshold = check_args(args)
    here = current_tree()
    repo, sub = reference_repository(here)
    try:
        with worktree.checkout(repo, args.compare_ref) as (folder, commit):
            ref = f"{args.compare_ref} ({commit[:12]})"
            print(f"reference: {ref}, checked out in {folder}", file=out)
            print(f"now:       {here}", file=out)
            return judge(args, out, spec, gym_id, ns, threads, threshold, folder / sub)
    except (ValueError, ab.WorkerError) as e:
        raise CliError(str(e)) from None


def judge(args, out, spec, gym_id, ns, threads, threshold, ref_tree):
    precision = f", precision='{args.precision}'" if args.precision != "float64" else ""
    print(
        f"vecenv.make('{spec.name}', num_envs=N, num_threads=T{precision}).step, random actions; "
        f"{args.rounds} rounds of each build, alternating, over {PROCESSES} pairs of worker "
        f"processes, each after {WARMUP} warm-up rounds; T = 1 timed in CPU time",
        file=out,
    )
    head = f"{'case':<28}  {'ref steps/s':>11}  {'now steps/s':>11}  {'change [95% interval]':>26}"
    print(f"{head}  {'pairs':>5}  verdict", file=out, flush=True)
    cases = [(n, t) for n in ns for t in threads]
    times = {case: ([], [], []) for case in cases}  # the reference's, now's, the process pair
    shares = [args.rounds // PROCESSES + (p < args.rounds % PROCESSES) for p in range(PROCESSES)]
    for p, rounds in enumerate(shares):
        ref = ab.Worker("reference", ref_tree, cache_dir=ref_tree.parent / "vecenv-cache")
        now = ab.Worker("current", current_tree())
        try:
            for n, t in cases:
                request = dict(env=spec.name, n=n, threads=t, seed=args.seed)
                if args.precision != "float64":  # (a build without it refuses the case)
                    request["precision"] = args.precision
                request.update(calls=calls_per_round(n), clock="cpu" if t == 1 else "wall")
                for worker in (ref, now):
                    worker.start_case(warmup=WARMUP, **request)
                a, b = ab.alternate(ref, now, rounds)
                times[n, t][0].extend(a)
                times[n, t][1].extend(b)
                times[n, t][2].extend([p] * rounds)
        finally:
            ref.close()
            now.close()
    failed = []
    for n, t in cases:
        case = f"{gym_id} N={n} T={t}" + (f" {args.precision}" * (args.precision != "float64"))
        a, b, groups = times[n, t]
        change = paired.paired_change(a, b, threshold, groups=groups)
        gated = t < (usable_cpus() or 1)  # see vecenv.perf.pytest_plugin
        if change.slower and gated:
            failed.append(case)
        rates = [si(n * calls_per_round(n) / x) for x in (change.a, change.b)]
        print(row(case, rates, change, gated), file=out, flush=True)
    print(
        "change: median over the pairs of now's round time over the reference's (positive: slower)",
        file=out,
    )
    if failed:
        print(
            f"{len(failed)} case(s) slower by more than {threshold:.0%} (whole interval above)",
            file=out,
        )
        return 1
    print(f"no case slower by more than {threshold:.0%} (whole interval above)", file=out)
    return 0
