"""How often the regression checks cry wolf, and how often they catch a real slowdown.

Saves one baseline run of a few benchmarks with pytest-benchmark, then makes ``--runs`` runs of
each of three builds, interleaved (same code, same code with the engine's CartPole step 15% slower,
30% slower: ``VECENV_BENCH_SLOWDOWN``, read only by the benchmark harness), each a fresh
``pytest`` process compared with the baseline by both checks at once:

- vecenv's: ``--vecenv-fail-over`` on the time over the calibration kernel, per round
  (``vecenv.perf``);
- pytest-benchmark's plain rule: ``--benchmark-compare-fail=min:10%`` on the best round.

A run of the same code that a check fails is a false alarm; a run of a slowed build counts as
caught by a check when the check fails every slowed benchmark that vecenv's check gates (those on
one thread: two-thread benchmarks use every CPU of a 2-CPU machine and are shown, not gated), and
as a false alarm too if it also fails a benchmark that was not slowed. Prints the rates and the
largest change seen, and writes them as JSON (``--out``).

    python benchmarks/gate_proof.py --runs 20 --threshold 10%
"""

import argparse
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
    plain = {m.group(1) for line in out.splitlines() if (m := MIN_FAILED.match(line))}
    return {"slowdown": slowdown, "ours": sorted(ours), "plain": sorted(plain), "changes": changes}


def tally(results, names):
    """Per build: false alarms and catches of both checks, the changes seen."""
    gated = {n: c["gate"] for r in results for n, c in r["changes"].items()}
    slowed = {n for n in names if SLOWED in n}  # what the hook slows
    target = {n for n in slowed if gated.get(n)}  # of those, what vecenv's check gates
    rows = {}
    for label, slowdown in BUILDS:
        runs = [r for r in results if r["slowdown"] == slowdown]
        row = {"runs": len(runs)}
        for check in ("ours", "plain"):
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
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="vecenv-gate-proof-") as tmp:
        storage = Path(tmp) / "storage"
        code, out = run(pytest_command(storage, ["--benchmark-save=baseline"]), 0.0)
        if code != 0:
            raise SystemExit(f"the baseline run failed:\n{out[-3000:]}")
        results, start = [], time.time()
        for i in range(args.runs):
            for label, slowdown in BUILDS:  # interleaved: every build sees the same spells
                r = one_run(storage, args.threshold, slowdown, tmp, f"{i}-{slowdown}")
                results.append(r)
                print(
                    f"run {i + 1:2d} {label:10s}  vecenv check fails: {r['ours'] or '-'}  "
                    f"min rule fails: {r['plain'] or '-'}",
                    flush=True,
                )
        names = sorted({n for r in results for n in r["changes"]})
        summary = {
            "threshold": args.threshold,
            "selection": " ".join(SELECTION),
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
