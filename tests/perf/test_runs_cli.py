"""Saved runs, the ``vecenv bench`` regression check and the pytest plugin, end to end. The
comparisons are made against baselines whose figures are scaled far from what any machine
measures, so the verdicts never depend on how fast this one is."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from vecenv.cli import main
from vecenv.perf import runs
from vecenv.perf.calibrate import Calibration
from vecenv.perf.rounds import interleaved


def bench(capsys, *argv):
    code = main(["bench", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def scaled(src, dst, factor):
    run = runs.load(src)
    for fig in run["figures"].values():
        fig["samples"] = [s * factor for s in fig["samples"]]
    runs.save(run, dst)


def test_run_round_trip_and_history(tmp_path):
    for i, when in enumerate(["2026-01-02T00:00:00+00:00", "2026-01-01T00:00:00+00:00"]):
        run = runs.new_run(label=f"r{i}", settings={"rounds": 3})
        run["created"] = when
        runs.add_figure(run, "a", [1.0, 2.0, 3.0 + i])
        runs.add_figure(run, "b", [1.0, 1.0], gate=False)
        runs.save(run, tmp_path / f"r{i}.json")
    (tmp_path / "other.json").write_text('{"benchmarks": []}')  # not a run: skipped
    again = runs.load(tmp_path / "r1.json")
    assert again["figures"]["a"] == {
        "samples": [1.0, 2.0, 4.0],
        "value": 2.0,
        "gate": True,
        "what": "",
    }
    assert again["machine"]["cpus"] and again["versions"]["numpy"] == np.__version__
    assert [r["label"] for _, r in runs.history(tmp_path)] == ["r1", "r0"]  # oldest first


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("not json", "not JSON"),
        ('{"format": "x"}', "not a vecenv bench run"),
        ('{"format": "vecenv-perf/1", "figures": {"a": 1}}', "no valid figures"),
    ],
)
def test_a_wrong_file_is_refused(tmp_path, text, match):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=match):
        runs.load(path)
    with pytest.raises(ValueError, match="cannot read"):
        runs.load(tmp_path / "missing.json")


def test_interleaved_rounds_pair_each_round_with_a_calibration():
    calls = []
    times = interleaved({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, 3)
    assert calls == ["a", "b", "a", "b", "b", "a", "a", "b"]  # warm-up, then rotating order
    for seconds, before in times.values():
        assert len(seconds) == len(before) == 3 and min(before) > 0
    assert Calibration().time_round() > 0


def test_bench_save_compare_and_fail_over(capsys, tmp_path):
    base = tmp_path / "base.json"
    argv = ["--num-envs", "8", "--threads", "1", "--rounds", "4"]
    code, out, err = bench(capsys, *argv, "--save", str(base))
    assert code == 0, err
    assert f"saved {base}" in out
    run = runs.load(base)
    assert set(run["figures"]) == {
        "CartPole-v1 N=8 T=1 vecenv/calibration",
        "CartPole-v1 N=8 T=1 vecenv/gymnasium",
        "CartPole-v1 N=8 gymnasium/calibration",
    }
    assert all(len(f["samples"]) == 4 for f in run["figures"].values())
    assert run["raw"]["CartPole-v1 N=8 T=1 vecenv"]["calls"] == 256
    assert run["raw"]["CartPole-v1 N=8 gymnasium"]["calls"] == 256  # 2**16 / (8 * 32)

    fast, slow = tmp_path / "fast.json", tmp_path / "slow.json"
    scaled(base, fast, 1e-3)  # a baseline 1000x faster than anything: now is far slower
    scaled(base, slow, 1e3)
    code, out, _ = bench(capsys, *argv, "--no-gym", "--compare", str(fast))
    assert code == 1
    row = next(
        line
        for line in out.splitlines()
        if line.startswith("CartPole-v1 N=8 T=1 vecenv/calibration")
    )
    assert row.split()[-1] == "SLOWER"
    assert "not measured now" in out  # the gymnasium figures: --no-gym
    assert "1 figure(s) slower by more than 10%" in out
    code, out, _ = bench(capsys, *argv, "--no-gym", "--compare", str(slow), "--fail-over", "5%")
    assert code == 0
    assert "no figure slower by more than 5%" in out


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--compare", "missing.json"], "cannot read"),
        (["--save", "x.json", "--fail-over", "ten"], "--fail-over"),
        (["--save", "x.json", "--rounds", "1"], "--rounds"),
        (["--save", "x.json", "--plot", "x.png"], "--plot"),
        (["--history", "."], "--history needs --plot"),
        (["--history", "nowhere", "--plot", "h.png"], "not a folder"),
    ],
)
def test_bench_check_errors(capsys, tmp_path, monkeypatch, extra, match):
    monkeypatch.chdir(tmp_path)
    code, _, err = bench(capsys, "--num-envs", "8", *extra)
    assert code == 2 and match in err


def test_history_plot(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    for i in range(3):
        run = runs.new_run()
        run["created"] = f"2026-01-0{i + 1}T00:00:00+00:00"
        runs.add_figure(run, "x", [1.0 + i, 1.1 + i])
        runs.add_figure(run, "y", [2.0, 2.0], gate=False)  # not drawn
        runs.save(run, tmp_path / f"{i}.json")
    png = tmp_path / "h.png"
    code, out, err = bench(capsys, "--history", str(tmp_path), "--plot", str(png))
    assert code == 0, err
    assert "3 run(s), 1 figure(s)" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


BENCH_FILE = """
import numpy as np
from vecenv.perf.pytest_plugin import calibrated_rounds

DATA = np.arange(20000.0)

def test_sum(benchmark):
    benchmark.extra_info["threads"] = 1
    calibrated_rounds(benchmark, DATA.sum, rounds=5)
"""


def test_pytest_plugin_judges_the_normalised_figures(tmp_path):
    pytest.importorskip("pytest_benchmark")
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["vecenv.perf.pytest_plugin"]\n')
    (tmp_path / "test_tiny.py").write_text(textwrap.dedent(BENCH_FILE))
    storage = tmp_path / "storage"

    def pytest_run(*extra):
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "test_tiny.py",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--benchmark-storage={storage}",
            *extra,
        ]
        # A run of its own, also when this suite runs under pytest-xdist (whose variables
        # would make pytest-benchmark take the inner run for a worker's and save nothing).
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
        return subprocess.run(
            cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env
        )

    done = pytest_run("--benchmark-autosave")
    assert done.returncode == 0, done.stdout + done.stderr
    (saved,) = storage.rglob("0001_*.json")
    doc = json.loads(saved.read_text())
    perf = doc["benchmarks"][0]["extra_info"]["vecenv_perf"]
    assert len(perf["norm"]) == len(perf["calibration_s"]) == 5
    for bench_doc in doc["benchmarks"]:
        bench_doc["extra_info"]["vecenv_perf"]["norm"] = [x * 1e-3 for x in perf["norm"]]
    saved.write_text(json.dumps(doc))  # the baseline now reads 1000x faster than any machine

    report = tmp_path / "cmp.json"
    compare = ["--benchmark-compare", f"--vecenv-compare-json={report}"]
    done = pytest_run(*compare, "--vecenv-fail-over=10%")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "vecenv regression check" in done.stdout and "SLOWER" in done.stdout
    assert "FAILED: a figure slower by more than 10%" in done.stdout
    result = json.loads(report.read_text())
    assert result["failed"] and result["figures"][0]["verdict"] == "slower"
    done = pytest_run("--vecenv-fail-over=lots")
    assert done.returncode != 0 and "--vecenv-fail-over" in done.stderr
