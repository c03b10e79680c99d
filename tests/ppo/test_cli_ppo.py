"""``vecenv train ppo`` and ``vecenv train eval`` through the command line."""

import csv
import importlib.util

import pytest

from tests.test_cli import episodes, run

SMALL = ["--num-envs", "8", "--num-steps", "16", "--total-steps", "512"]


def curve(path):
    with open(path) as f:
        return [(row["steps"], row["mean_return"]) for row in csv.DictReader(f)]


def test_ppo_writes_its_run_and_the_same_seed_repeats_it(capsys, tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    for where in (first, second):
        code, out, err = run(
            capsys,
            "train",
            "ppo",
            "--env",
            "CartPole-v1",
            *SMALL,
            "--seed",
            "5",
            "--run-dir",
            str(where),
            "--checkpoint-every",
            "2",
        )
        assert code == 0, err
        assert "PPO on CartPole-v1 (vecenv), 8 envs, seed 5" in out
        assert f"wrote {where}: policy.pt" in out
    assert sorted(p.name for p in first.iterdir()) == [
        "checkpoint_256.pt",
        "checkpoint_512.pt",
        "curve.csv",
        "curve.png",
        "policy.pt",
        "run.json",
    ]
    assert curve(first / "curve.csv") == curve(second / "curve.csv")
    assert (first / "policy.pt").read_bytes() != b""


def test_activation_and_a_constant_learning_rate_reach_the_run(capsys, tmp_path):
    import json

    import torch

    from vecenv import ppo

    flags = ["--activation", "relu", "--no-anneal-lr", "--hidden", "32,32", "--torch-threads", "2"]
    code, _, err = run(
        capsys, "train", "ppo", "--env", "CartPole-v1", *SMALL, *flags, "--run-dir", str(tmp_path)
    )
    assert code == 0, err
    config = json.loads((tmp_path / "run.json").read_text())["config"]
    assert config["activation"] == "relu" and config["anneal_lr"] is False
    assert config["torch_threads"] == 2 and config["hidden"] == [32, 32]
    network = ppo.load(tmp_path / "policy.pt").network
    assert network.activation == "relu" and isinstance(network.actor[1], torch.nn.ReLU)
    code, _, err = run(capsys, "train", "ppo", "--env", "CartPole-v1", "--activation", "gelu")
    assert code == 2 and "--activation" in err


def test_env_config_trains_on_the_game_so_configured(capsys, tmp_path):
    import json

    given = ["--env-config", '{"sutton_barto_reward": true}', "--run-dir", str(tmp_path)]
    code, _, err = run(capsys, "train", "ppo", "--env", "CartPole-v1", *SMALL, *given)
    assert code == 0, err
    assert json.loads((tmp_path / "run.json").read_text())["config"]["env_config"] == {
        "sutton_barto_reward": True
    }
    # Sutton and Barto's reward: 0 a step and -1 where the pole falls, so no return is positive
    returns = [float(mean) for _, mean in curve(tmp_path / "curve.csv") if mean]
    assert returns and max(returns) <= 0 and min(returns) < 0
    # eval plays the game as the policy trained on it, not the game's defaults (+1 a step)
    policy = str(tmp_path / "policy.pt")
    code, out, err = run(capsys, "train", "eval", "--policy", policy, "--episodes", "3")
    assert code == 0, err
    assert "vecenv/CartPole-v1 (vecenv) with sutton_barto_reward=True, agent" in out
    played = [total for total, _ in episodes(out)]
    assert len(played) == 3 and max(played) <= 0


@pytest.mark.parametrize(
    ("env_config", "message"), [({"no_such_field": 1}, "no_such_field"), ([1], "must be an object")]
)
def test_eval_refuses_a_policy_whose_env_config_the_game_lacks(
    capsys, tmp_path, env_config, message
):
    from vecenv import ppo
    from vecenv.ppo import checkpoint

    code, _, err = run(
        capsys, "train", "ppo", "--env", "CartPole-v1", *SMALL, "--run-dir", str(tmp_path)
    )
    assert code == 0, err
    policy = tmp_path / "policy.pt"
    loaded = ppo.load(policy)
    config = {**loaded.config, "env_config": env_config}
    checkpoint.save(policy, loaded.network, loaded.env_id, config=config)
    code, out, err = run(capsys, "train", "eval", "--policy", str(policy), "--episodes", "1")
    assert code != 0 and message in err and "Traceback" not in err


def test_ppo_runs_on_gymnasiums_own_env_too(capsys, tmp_path):
    code, out, err = run(
        capsys, "train", "ppo", "--env", "gym.CartPole-v1", *SMALL, "--run-dir", str(tmp_path)
    )
    assert code == 0, err
    assert "(gymnasium)" in out and (tmp_path / "policy.pt").exists()


def test_eval_plays_a_saved_policy_and_renders_it(capsys, tmp_path):
    code, _, err = run(
        capsys, "train", "ppo", "--env", "CartPole-v1", *SMALL, "--run-dir", str(tmp_path)
    )
    assert code == 0, err
    policy = str(tmp_path / "policy.pt")
    code, out, err = run(
        capsys,
        "train",
        "eval",
        "--policy",
        policy,
        "--episodes",
        "2",
        "--seed",
        "3",
        "--render-to",
        str(tmp_path / "sheet.png"),
    )
    assert code == 0, err
    assert out.startswith("vecenv/CartPole-v1 (vecenv), agent policy.pt, seed 3")
    assert len(episodes(out)) == 2
    assert (tmp_path / "sheet.png").read_bytes()[:4] == b"\x89PNG"
    # the same policy and seed play the same episodes
    code, again, _ = run(
        capsys, "train", "eval", "--policy", policy, "--episodes", "2", "--seed", "3"
    )
    assert episodes(again) == episodes(out)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ppo", "--env", "CartPole-v1", "--hidden", "64,x"], "--hidden"),
        (["ppo", "--env", "NoSuchGame-v9"], "unknown game"),
        (["ppo", "--env", "CartPole-v1", "--selfplay"], "two-agent"),
        (["ppo", "--env", "gym.FrozenLake-v1", "--stop-at-target"], "no tuned target"),
        (["eval", "--policy", "missing.pt"], "not a vecenv PPO checkpoint"),
        (["ppo", "--env", "CartPole-v1", "--env-config", "{"], "--env-config: not JSON"),
        (["ppo", "--env", "CartPole-v1", "--env-config", "[1]"], "a JSON object"),
        (["ppo", "--env", "CartPole-v1", "--env-config", '{"no_such_field": 1}'], "no_such_field"),
        (["ppo", "--env", "CartPole-v1", "--env-config", '{"episodeSteps": -3}'], "episodeSteps"),
        (["ppo", "--env", "gym.FrozenLake-v1", "--env-config", '{"is_slippery": 0}'], "vecenv's"),
    ],
)
def test_bad_requests_exit_2_with_one_line(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "train", *argv)
    assert code == 2
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_without_torch_the_error_says_what_to_install(capsys, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a)
    )
    code, _, err = run(capsys, "train", "ppo", "--env", "CartPole-v1")
    assert code == 2 and 'PPO needs torch: pip install ".[train]"' in err
    assert "download.pytorch.org/whl/cpu" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "train", "alphazero", "--env", "tictactoe")
    assert code == 2 and 'AlphaZero needs torch: pip install ".[train]"' in err


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--num-envs", "0"], "--num-envs"),
        (["--gamma", "5"], "--gamma"),
        (["--gamma", "0"], "--gamma"),
        (["--torch-threads", "0"], "--torch-threads"),
        (["--learning-rate", "0"], "--learning-rate"),
        (["--ent-coef", "-0.1"], "--ent-coef"),
        (["--num-minibatches", "0"], "--num-minibatches"),
        (["--checkpoint-every", "-1"], "--checkpoint-every"),
        (["--threshold", "nan"], "--threshold"),
        (["--eval-matches", "-1"], "--eval-matches"),
    ],
)
def test_ppo_numbers_out_of_range_are_usage_errors(capsys, tmp_path, monkeypatch, argv, flag):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "train", "ppo", "--env", "CartPole-v1", *argv)
    assert code == 2 and out == "" and f"argument {flag}:" in err
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_run_dir_fails_before_training(capsys, tmp_path):
    (tmp_path / "a_file").write_text("")
    code, out, err = run(
        capsys, "train", "ppo", "--env", "CartPole-v1", "--run-dir", str(tmp_path / "a_file/run")
    )
    assert code == 2 and out == "" and "--run-dir" in err and "Traceback" not in err


def test_without_matplotlib_the_run_is_saved_and_the_plot_skipped(capsys, tmp_path, monkeypatch):
    import json
    import sys

    (tmp_path / "curve.png").write_bytes(b"an earlier run's plot")
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib: ImportError
    argv = ["--run-dir", str(tmp_path), "--force"]  # over the earlier run, on purpose
    code, out, err = run(capsys, "train", "ppo", "--env", "CartPole-v1", *SMALL, *argv)
    assert code == 0, err
    assert json.loads((tmp_path / "run.json").read_text())["steps"] > 0
    assert len(curve(tmp_path / "curve.csv")) > 0
    assert not (tmp_path / "curve.png").exists()
    assert "note: no curve.png" in out and "matplotlib" in out


@pytest.fixture
def cartpole_policy(tmp_path):
    """A CartPole checkpoint (untrained: only its game matters here)."""
    import gymnasium

    from vecenv.ppo import save
    from vecenv.ppo.network import ActorCritic

    env = gymnasium.make("vecenv/CartPole-v1")
    path = tmp_path / "cartpole.pt"
    save(str(path), ActorCritic(env.observation_space, env.action_space, (8,)), "CartPole-v1")
    return str(path)


@pytest.mark.parametrize(
    "argv",
    [
        ["play", "connectx", "--agents", "{policy}", "random", "--matches", "4"],
        ["tournament", "connectx", "--agents", "{policy}", "random", "--matches-per-pair", "4"],
        ["train", "eval", "--policy", "{policy}", "--env", "connectx", "--episodes", "1"],
    ],
)
def test_a_policy_for_another_game_is_refused_naming_both(capsys, cartpole_policy, argv):
    code, out, err = run(capsys, *(a.format(policy=cartpole_policy) for a in argv))
    assert code == 2, err
    assert "trained on CartPole-v1" in err and "connectx" in err and "Traceback" not in err
