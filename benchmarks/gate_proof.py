"""How often the regression checks cry wolf, and how often they catch a real slowdown.

Saves one baseline run of a few benchmarks with pytest-benchmark, then makes ``--runs`` runs of
each of three builds, interleaved (same code, same code with the engine's CartPole step 15% slower,
30% slower: ``VECENV_BENCH_SLOWDOWN``, read only by the benchmark harness), each a fresh
``pytest`` process compared with the baseline by both checks at once:

- vecenv's: ``--vecenv-fail-over`` on the time over the calibration kernel, per round
  (``vecenv.perf``);
- pytest-benchmark's plain rule: ``--benchmark-compare-fail=min:10%`` on the best round;
- "every": vecenv's statistics applied to every figure, the ones it does not gate too (peers,
  two-thread benchmarks on a 2-CPU machine), to show what gating them would cost.

A run of the same code that a check fails is a false alarm; a run of a slowed build counts as
caught by a check when the check fails every slowed benchmark that vecenv's check gates (those on
one thread: two-thread benchmarks use every CPU of a 2-CPU machine and are shown, not gated), and
as a false alarm too if it also fails a benchmark that was not slowed. Prints the rates and the
largest change seen, and writes them as JSON (``--out``).

    python benchmarks/gate_proof.py --runs 20 --threshold 10%

``--via cli`` does the same with ``vecenv bench --save/--compare`` (CartPole, N = 64 and 4096, one
and two threads, Gymnasium beside), the plain rule then applied to the raw round times of the
same runs (the best round now over the best round of the baseline).

``--via ref`` measures ``vecenv bench --compare-ref HEAD`` instead (no saved baseline): each run
compares HEAD with this tree (same code) and, interleaved with it, HEAD with a temporary worktree
of HEAD whose ``Engine.step`` spins 15% longer than the step took (``--slowdown``); ``--load 1``
keeps one core busy with another process (``while True: pass``) for the whole measurement. A
false alarm: a same-code run that fails; a catch: a slowed run whose every gated case fails.

    python benchmarks/gate_proof.py --via ref --runs 20 --load 1
"""

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SELECTION = ("benchmarks/test_bench_step.py", "-k", "N4096")
SLOWED = "vecenv"  # the benchmarks whose id names the engine: the step the hook slows
BUILDS = (("same code", 0.0), ("15% slower", 0.15), ("30% slower", 0.30))
CLI_ARGS = ("bench", "--num-envs", "64,4096", "--threads", "1,2", "--rounds", "40")
MIN_FAILED = re.compile(r"^\s*(test_\S+) \(\S+\) - Field 'min' has failed")


def pytest_command(storage, extra):
    return [
        sys.executable,
        "-m",
        "pytest",
        *SELECTION,
        "-q",
        "-p",
        "no:cacheprovider",
        f"--benchmark-storage={storage}",
        *extra,
    ]


def run(cmd, slowdown):
    env = dict(os.environ, VECENV_BENCH_SLOWDOWN=str(slowdown))
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def short(fullname):
    return fullname.split("::")[-1]


def one_run(storage, threshold, slowdown, tmp, i):
    report = Path(tmp) / f"compare-{i}.json"
    code, out = run(
        pytest_command(
            storage,
            [
                "--benchmark-compare=0001",
                f"--benchmark-compare-fail=min:{threshold}",
                f"--vecenv-fail-over={threshold}",
                f"--vecenv-compare-json={report}",
            ],
        ),
        slowdown,
    )
    if not report.exists():
        raise SystemExit(f"run {i} wrote no comparison (exit {code}):\n{out[-3000:]}")
    doc = json.loads(report.read_text())
    changes = {short(f["figure"]): f for f in doc["figures"] if "change" in f}
    ours = {name for name, f in changes.items() if f["verdict"] == "slower" and f["gate"]}
    every = {name for name, f in changes.items() if f["verdict"] == "slower"}
    plain = {m.group(1) for line in out.splitlines() if (m := MIN_FAILED.match(line))}
    return {
        "slowdown": slowdown,
        "ours": sorted(ours),
        "plain": sorted(plain),
        "every": sorted(every),
        "changes": changes,
    }


def cli_child(slowdown, argv):
    """``vecenv bench`` with the engine's step slowed by ``slowdown`` (this process only)."""
    sys.path.insert(0, str(HERE))
    os.environ["VECENV_BENCH_SLOWDOWN"] = str(slowdown)
    from harness import slowed

    from vecenv.cli import bench, main

    make = bench.make_ours

    def make_slowed(*args, **kwargs):
        target = make(*args, **kwargs)
        target.step = slowed(target.step)
        return target

    bench.make_ours = make_slowed
    sys.exit(main(argv))


def cli_run(base, threshold, slowdown, tmp, i):
    from vecenv.perf import compare, runs

    now = Path(tmp) / f"now-{i}.json"
    cmd = [sys.executable, __file__, "--child", str(slowdown), "--", *CLI_ARGS]
    cmd += ["--save", str(now), "--compare", str(base), "--fail-over", threshold]
    code, out = run(cmd, 0.0)
    if code not in (0, 1) or not now.exists():
        raise SystemExit(f"run {i} failed (exit {code}):\n{out[-3000:]}")
    b, n = runs.load(base), runs.load(now)
    rows = compare.compare_figures(b["figures"], n["figures"], compare.parse_threshold(threshold))
    ours = {r.figure for r in compare.regressions(rows)}
    every = {r.figure for r in rows if r.change is not None and r.change.slower}
    assert bool(ours) == (code == 1), out  # what the command itself decided
    changes = {
        r.figure: {"change": r.change.change, "verdict": r.change.verdict, "gate": r.gate}
        for r in rows
        if r.change is not None
    }
    limit = 1 + compare.parse_threshold(threshold)
    plain = {
        name.replace(" vecenv", " vecenv/calibration").replace(
            " gymnasium", " gymnasium/calibration"
        )
        for name, raw in n["raw"].items()
        if min(raw["seconds"]) > limit * min(b["raw"][name]["seconds"])
    }
    return {
        "slowdown": slowdown,
        "ours": sorted(ours),
        "plain": sorted(plain),
        "every": sorted(every),
        "changes": changes,
    }


REF_ARGS = ("bench", "--compare-ref", "HEAD", "--num-envs", "64,4096", "--threads", "1")
STEP = "        return self.step_flat(self._actions(actions))\n"
SLOWED_STEP = """        start = _slow_clock()
        result = self.step_flat(self._actions(actions))
        # The spin's own clock reads are part of the slowdown: left out of it.
        until = start + (_slow_clock() - start) * (1.0 + {slowdown}) - _SLOW_READ
        while _slow_clock() < until:  # the injected slowdown (gate_proof.py)
            pass
        return result
"""
# The spin reads the wall clock, a few tens of nanoseconds a read: a thread's CPU clock costs a
# system call a read (about a microsecond), which would inflate a 4-microsecond step by far more
# than the slowdown asked. Spinning, the thread burns the CPU time the gate's CPU clock then counts.
SLOW_HEAD = """from time import perf_counter as _slow_clock

_SLOW_READ = min(-_slow_clock() + _slow_clock() for _ in range(10000))
"""
ROW = re.compile(r"^(\S+ N=\d+ T=\d+)\s+\S+\s+\S+\s+([+-][\d.]+)%\s.*\s(\S+)$")


@contextlib.contextmanager
def slowed_tree(slowdown):
    """A worktree of HEAD, its ``Engine.step`` slower by ``slowdown``; removed afterwards."""
    sys.path.insert(0, str(ROOT))
    from vecenv.perf import worktree

    with worktree.checkout(ROOT, "HEAD") as (folder, _):
        engine = folder / "vecenv" / "engine.py"
        text = engine.read_text()
        if text.count(STEP) != 1:
            raise SystemExit("Engine.step is not the one line this script knows how to slow")
        text = text.replace(STEP, SLOWED_STEP.format(slowdown=slowdown))
        engine.write_text(text.replace("\nimport ", "\n" + SLOW_HEAD + "import ", 1))
        yield folder


@contextlib.contextmanager
def busy_cores(count):
    """``count`` processes spinning at nice 0 while the block runs, killed afterwards."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def ref_run(tree, rounds, threshold):
    """One ``vecenv bench --compare-ref HEAD`` of the code in ``tree``: exit code, cases."""
    cmd = [sys.executable, "-m", "vecenv", *REF_ARGS, "--rounds", str(rounds)]
    cmd += ["--fail-over", threshold]
    env = dict(os.environ, PYTHONPATH=str(tree))
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    cases = {m[1]: (float(m[2]) / 100, m[3]) for line in out.splitlines() if (m := ROW.match(line))}
    if proc.returncode not in (0, 1) or not cases:
        raise SystemExit(f"--compare-ref failed (exit {proc.returncode}):\n{out[-3000:]}")
    return proc.returncode, cases


def ref_main(args):
    """``--via ref``: false alarms on the same code, catches of a slowed build."""
    results, start = [], time.time()
    with slowed_tree(args.slowdown) as slow, busy_cores(args.load):
        for i in range(args.runs):
            for label, tree in (("same code", ROOT), (f"{args.slowdown:.0%} slower", slow)):
                code, cases = ref_run(tree, args.rounds, args.threshold)
                results.append({"build": label, "exit": code, "cases": cases})
                shown = "  ".join(f"{c} {x:+.1%} {v}" for c, (x, v) in cases.items())
                print(f"run {i + 1:2d} {label:10s} exit {code}  {shown}", flush=True)
    same = [r for r in results if r["build"] == "same code"]
    slow = [r for r in results if r["build"] != "same code"]
    summary = {
        "via": "ref",
        "command": " ".join(REF_ARGS) + f" --rounds {args.rounds} --fail-over {args.threshold}",
        "slowdown": args.slowdown,
        "busy_processes": args.load,
        "runs_each": args.runs,
        "false_alarms": sum(r["exit"] == 1 for r in same),
        "caught": sum(all(v == "SLOWER" for _, v in r["cases"].values()) for r in slow),
        "same_change_range": [
            min(x for r in same for x, _ in r["cases"].values()),
            max(x for r in same for x, _ in r["cases"].values()),
        ],
        "slowed_change_range": [
            min(x for r in slow for x, _ in r["cases"].values()),
            max(x for r in slow for x, _ in r["cases"].values()),
        ],
        "seconds": round(time.time() - start),
        "load_average": list(os.getloadavg()),
        "runs": results,
    }
    Path(args.out).write_text(json.dumps(summary, indent=1))
    print(json.dumps({k: v for k, v in summary.items() if k != "runs"}, indent=1))


def tally(results, names):
    """Per build: false alarms and catches of both checks, the changes seen."""
    gated = {n: c["gate"] for r in results for n, c in r["changes"].items()}
    slowed = {n for n in names if SLOWED in n}  # what the hook slows
    target = {n for n in slowed if gated.get(n)}  # of those, what vecenv's check gates
    rows = {}
    for label, slowdown in BUILDS:
        runs = [r for r in results if r["slowdown"] == slowdown]
        row = {"runs": len(runs)}
        for check in ("ours", "plain", "every"):
            flagged = [set(r[check]) for r in runs]
            if slowdown:
                row[f"{check}_caught"] = sum(target <= f for f in flagged)
            unslowed = [f - slowed if slowdown else f for f in flagged]
            row[f"{check}_false_alarms"] = sum(bool(f) for f in unslowed)
            row[f"{check}_flags"] = {n: sum(n in f for f in flagged) for n in names}
        for scope, keep in (("gated", lambda n: gated.get(n)), ("all", lambda n: True)):
            moves = [
                (abs(c["change"]), n, round(c["change"], 4))
                for r in runs
                for n, c in r["changes"].items()
                if keep(n) and not (slowdown and n in slowed)
            ]
            if moves:
                row[f"largest_change_unslowed_{scope}"] = list(max(moves)[1:])
        if slowdown:
            seen = [c["change"] for r in runs for n, c in r["changes"].items() if n in target]
            row["slowed_change_range"] = [round(min(seen), 4), round(max(seen), 4)]
        rows[label] = row
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20, help="runs of each build (default 20)")
    ap.add_argument("--threshold", default="10%", help="both checks' threshold (default 10%%)")
    ap.add_argument("--out", default="gate_proof.json", help="where the figures go (JSON)")
    ap.add_argument("--via", choices=("pytest", "cli", "ref"), default="pytest")
    ap.add_argument("--slowdown", type=float, default=0.15, help="--via ref: the injected slowdown")
    ap.add_argument("--load", type=int, default=0, help="--via ref: busy processes beside it")
    ap.add_argument("--rounds", type=int, default=200, help="--via ref: paired rounds per case")
    ap.add_argument("--child", type=float, help=argparse.SUPPRESS)
    args, rest = ap.parse_known_args(argv)
    if args.child is not None:
        cli_child(args.child, [a for a in rest if a != "--"])
    if args.via == "ref":
        return ref_main(args)
    with tempfile.TemporaryDirectory(prefix="vecenv-gate-proof-") as tmp:
        storage = Path(tmp) / "storage"
        if args.via == "pytest":
            code, out = run(pytest_command(storage, ["--benchmark-save=baseline"]), 0.0)
        else:
            storage = Path(tmp) / "base.json"
            cmd = [sys.executable, "-m", "vecenv", *CLI_ARGS, "--save", str(storage)]
            code, out = run(cmd, 0.0)
        if code != 0:
            raise SystemExit(f"the baseline run failed:\n{out[-3000:]}")
        results, start = [], time.time()
        measure = one_run if args.via == "pytest" else cli_run
        for i in range(args.runs):
            for label, slowdown in BUILDS:  # interleaved: every build sees the same spells
                r = measure(storage, args.threshold, slowdown, tmp, f"{i}-{slowdown}")
                results.append(r)
                print(
                    f"run {i + 1:2d} {label:10s}  vecenv check fails: {r['ours'] or '-'}  "
                    f"min rule fails: {r['plain'] or '-'}",
                    flush=True,
                )
        names = sorted({n for r in results for n in r["changes"]})
        summary = {
            "threshold": args.threshold,
            "via": args.via,
            "selection": " ".join(SELECTION if args.via == "pytest" else CLI_ARGS),
            "slowed": [n for n in names if SLOWED in n],
            "seconds": round(time.time() - start),
            "load_average": list(os.getloadavg()),
            "builds": tally(results, names),
            "runs": results,
        }
    Path(args.out).write_text(json.dumps(summary, indent=1))
    print(json.dumps({k: v for k, v in summary.items() if k != "runs"}, indent=1))


if __name__ == "__main__":
    main()
