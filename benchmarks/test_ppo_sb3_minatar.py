"""MinAtar at equal wall time (``benchmarks/ppo_sb3_minatar.py``) end to end in its quick mode, and
its mapping of vecenv's configuration onto Stable-Baselines3's PPO. The comparison itself takes
about half an hour on 2 cores: ``python benchmarks/ppo_sb3_minatar.py``. Like the other full
comparisons, it runs in the smoke run (``--benchmark-disable``) only."""

import json

import ppo_sb3_minatar
import pytest

pytest.importorskip("torch", reason="the trainers need PyTorch (vecenv[train])")
pytest.importorskip("stable_baselines3", reason="the peer is Stable-Baselines3 (vecenv[test])")
pytest.importorskip("minatar", reason="SB3 trains on the minatar package (vecenv[test])")


def test_sb3_gets_vecenvs_configuration_one_to_one():
    from vecenv.ppo import zoo

    config = zoo.tuned("minatar_freeway").config(seed=3)
    hp = ppo_sb3_minatar.sb3_hyperparameters(config)
    assert hp["n_steps"] == config.num_steps == 128
    assert hp["batch_size"] * config.num_minibatches == config.num_envs * config.num_steps
    assert hp["n_epochs"] == 4 and hp["learning_rate"] == 5e-4  # constant: anneal_lr is off
    assert (hp["gamma"], hp["gae_lambda"], hp["clip_range"]) == (0.999, 0.95, 0.2)
    assert hp["clip_range_vf"] == 0.2 and hp["normalize_advantage"]
    assert hp["policy_kwargs"]["net_arch"] == {"pi": [256, 256], "vf": [256, 256]}
    assert hp["policy_kwargs"]["activation_fn"].__name__ == "ReLU"
    annealed = ppo_sb3_minatar.sb3_hyperparameters(zoo.tuned("minatar_breakout").config())
    assert annealed["learning_rate"](0.5) == pytest.approx(0.001)  # SB3 passes the share left
    assert annealed["policy_kwargs"]["activation_fn"].__name__ == "Tanh"


def test_quick_run_gives_both_sides_the_same_wall_time(request, tmp_path):
    if not request.config.getoption("benchmark_disable", False):
        pytest.skip("python benchmarks/ppo_sb3_minatar.py runs the comparison (half an hour)")
    report = ppo_sb3_minatar.main(
        ["--quick", "--games", "minatar_breakout", "--out", str(tmp_path)]
    )
    saved = json.loads((tmp_path / "sb3_minatar.json").read_text())
    assert saved == json.loads(json.dumps(report)) and saved["quick"]
    (row,) = saved["rows"]
    ours, theirs = row["vecenv"], row["sb3"]
    assert row["game"] == "minatar_breakout" and row["seed"] == 1
    assert ours["steps"] > 0 and theirs["steps"] > 0
    # SB3 stops at the first step past vecenv's seconds, or at the end of the same step budget
    # (its learning-rate schedule's), whichever comes first.
    # (Quick mode's vecenv side trains its whole budget of two updates.)
    assert theirs["seconds"] >= ours["seconds"] or theirs["steps"] >= ours["steps"]
    assert ours["target"] == 10.0 and ours["reached"] is None  # two updates reach nothing
    assert "| minatar_breakout | 1 |" in (tmp_path / "sb3_minatar.md").read_text()


def test_a_run_name_that_is_not_a_plain_file_name_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        ppo_sb3_minatar.main(["--quick", "--name", "../S9", "--out", str(tmp_path)])
    assert "--name" in capsys.readouterr().err and list(tmp_path.iterdir()) == []
