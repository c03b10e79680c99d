"""The PPO race (``benchmarks/ppo_race.py``) end to end in its quick mode, on the sides that start
in seconds (vecenv's trainer on both envs, CleanRL's settings, Stable-Baselines3 where installed),
and its options. The race itself takes about half an hour on 2 cores:
``python benchmarks/ppo_race.py``.
Like the other full comparisons, it runs in the smoke run (``--benchmark-disable``) only."""

import importlib.util
import json

import ppo_race
import pytest

pytest.importorskip("torch", reason="the trainers need PyTorch (vecenv[train])")

CHEAP = ["vecenv", "vecenv-on-gymnasium", "cleanrl"]
if importlib.util.find_spec("stable_baselines3") is not None:
    CHEAP.append("sb3")
RUN_KEYS = {
    "seed",
    "solved",
    "steps_to_threshold",
    "seconds_to_threshold",
    "steps",
    "seconds",
    "steps_per_second",
    "budget",
    "update_steps",
}


def test_quick_race_writes_the_json_and_the_table(request, tmp_path):
    if not request.config.getoption("benchmark_disable", False):
        pytest.skip("python benchmarks/ppo_race.py runs the race (half an hour on 2 cores)")
    report = ppo_race.main(["--quick", "--sides", ",".join(CHEAP), "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "race.json").read_text())
    assert saved == json.loads(json.dumps(report))
    assert saved["quick"] and saved["seeds"] == [1] and saved["threshold"] == 475.0
    assert saved["machine"]["cores"] >= 1 and saved["date"]
    assert list(saved["sides"]) == CHEAP
    for side, entry in saved["sides"].items():
        assert entry["source"] and entry["hyperparameters"], side
        (run,) = entry["runs"]
        assert set(run) == RUN_KEYS
        # Quick budgets: two updates, far too few to reach 475.
        assert 0 < run["steps"] <= run["budget"] and not run["solved"]
        assert run["steps_per_second"] > 0 and run["update_steps"] > 0
        summary = entry["summary"]
        assert summary["seeds_solved"] == 0 and summary["seeds"] == 1
        assert summary["median_steps_to_threshold"] is None
        assert summary["median_steps_per_second"] > 0
    assert saved["sides"]["cleanrl"]["hyperparameters"]["num_envs"] == 4
    table = (tmp_path / "race.md").read_text().splitlines()
    rows = [line for line in table if line.startswith("| ") and "---" not in line]
    assert rows[0].startswith("| side | hyper-parameters | seeds solved")
    assert len(rows) == 1 + len(CHEAP)
    assert all(row.count("|") == 7 and "0/1" in row for row in rows[1:])


def test_summary_counts_an_unsolved_seed_as_never_reaching():
    def outcome(reached):
        return ppo_race.Outcome(steps=1000, seconds=2.0, reached=reached)

    two_of_three = ppo_race.summarise([outcome((100, 1.0)), outcome(None), outcome((300, 3.0))])
    assert two_of_three["seeds_solved"] == 2
    assert two_of_three["median_steps_to_threshold"] == 300
    assert two_of_three["median_seconds_to_threshold"] == 3.0
    assert two_of_three["median_steps_per_second"] == 500.0
    one_of_three = ppo_race.summarise([outcome((100, 1.0)), outcome(None), outcome(None)])
    assert one_of_three["median_steps_to_threshold"] is None


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--sides", "vecenv,rllib"], "unknown side(s) rllib"),
        (["--sides", ","], "unknown side(s) (none)"),
        (["--seeds", "1,x"], "seeds are integers"),
        (["--seeds", "-1"], "non-negative"),
    ],
)
def test_bad_options_are_refused_before_anything_runs(argv, message, capsys):
    with pytest.raises(SystemExit):
        ppo_race.main(argv)
    assert message in capsys.readouterr().err
