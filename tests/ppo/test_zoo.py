"""Tuned configurations (``ppo.json`` beside a game's rules) and how ``vecenv train ppo`` uses
them: flags override single fields, progress lines, Ctrl-C keeps the run, eval's interval."""

import json
import os
import re
import signal
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.child import ROOT
from tests.test_cli import run
from vecenv import registry
from vecenv.ppo import PPOConfig, zoo

TARGETS = {  # the published thresholds the issue and the references name
    "cartpole": 475.0,
    "acrobot": -100.0,
    "mountaincar": -110.0,
    "mountaincar_continuous": 90.0,
    "pendulum": -200.0,
    "minatar_freeway": 58.0,  # gymnax-blines' PPO returns after 10M steps
    "minatar_asterix": 15.0,
}
PROOF = ROOT / "docs" / "training" / "ppo_zoo.json"


def test_every_shipped_configuration_reads_and_builds_a_config():
    tuned = zoo.all_tuned()
    assert "cartpole" in tuned
    for name, entry in tuned.items():
        spec = registry.get_spec(name)
        assert spec.num_agents == 1 and spec.gym.get("id"), name
        config = entry.config(seed=3)
        assert isinstance(config, PPOConfig) and config.seed == 3
        assert entry.target_source.strip()
        if name in TARGETS:
            assert entry.target == TARGETS[name]
        threshold = spec.gym.get("reward_threshold")
        if threshold is not None:
            assert entry.target == threshold, name


def test_every_one_agent_game_ships_a_configuration():
    """The issue's bar: every bundled one-agent game with a Gymnasium id has a ppo.json."""
    games = {
        name
        for name in registry.specs()
        if registry.get_spec(name).num_agents == 1 and registry.get_spec(name).gym.get("id")
    }
    assert games and games <= set(zoo.all_tuned())


def test_every_configuration_has_its_proof_recorded():
    """docs/training/ppo_zoo.json (benchmarks/ppo_zoo.py's record, docs/training.md's table) holds
    each shipped configuration's target, source and budget as proven, with seeds 1-5 all solved:
    a configuration never proven, or whose target or budget changed since, fails here."""
    rows = {row["game"]: row for row in json.loads(PROOF.read_text())["games"]}
    for name, entry in zoo.all_tuned().items():
        row = rows.get(name)
        assert row is not None, f"{name}: run benchmarks/ppo_zoo.py --docs --games {name}"
        assert (row["target"], row["target_source"]) == (entry.target, entry.target_source), name
        assert row["budget"] == entry.config().total_steps, name
        assert row["seeds"] == [1, 2, 3, 4, 5] and row["solved"] == 5, name


def test_continuing_games_are_measured_in_segments():
    """csuite's games never end an episode: their targets are rewards per step of segments."""
    for name, entry in zoo.all_tuned().items():
        continuing = "csuite" in registry.get_spec(name).raw
        config = entry.config()
        assert bool(config.segment) == continuing, name
        assert config.metric == ("mean_reward_per_step" if continuing else "mean_return")


def write_config(folder, data):
    path = folder / zoo.FILE
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


GOOD = {"target": 1.0, "target_source": "a reason", "hyperparameters": {"num_envs": 4}}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{not json", "not a readable"),
        ([1, 2], "exactly the keys"),
        ({**GOOD, "extra": 1}, "exactly the keys"),
        ({**GOOD, "target": "high"}, "finite number"),
        ({**GOOD, "target": True}, "finite number"),
        ({**GOOD, "target_source": " "}, "where the target comes from"),
        ({**GOOD, "hyperparameters": {"num_env": 4}}, "unknown hyper-parameters"),
        ({**GOOD, "hyperparameters": {"num_envs": 0}}, "num_envs must be a positive"),
        ({**GOOD, "hyperparameters": {"norm_obs": "yes"}}, "norm_obs must be true or false"),
        ({**GOOD, "hyperparameters": {"segment": -5}}, "segment must be a non-negative"),
        ({**GOOD, "hyperparameters": {"segment": 10.5}}, "segment must be a non-negative"),
        ({**GOOD, "hyperparameters": {"one_hot_obs": 1}}, "one_hot_obs must be true or false"),
        ({**GOOD, "hyperparameters": {"anneal_ent": "no"}}, "anneal_ent must be true or false"),
        ({**GOOD, "hyperparameters": {"hidden": "64"}}, "hidden"),
        ({**GOOD, "hyperparameters": []}, "must be an object"),
    ],
)
def test_a_malformed_configuration_is_refused_naming_its_file(tmp_path, data, message):
    path = write_config(tmp_path, data)
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        zoo.read(path, "x")
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    ("env_config", "message"),
    [({"no_such_field": 1}, "no configuration 'no_such_field'"), ([0], "env_config must be")],
)
def test_a_configuration_of_a_game_field_it_lacks_is_refused(tmp_path, env_config, message):
    path = write_config(tmp_path, {**GOOD, "hyperparameters": {"env_config": env_config}})
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        zoo.read(path, "cartpole")
    assert str(path) in str(info.value)
    good = write_config(tmp_path, {**GOOD, "hyperparameters": {"env_config": {"episodeSteps": 9}}})
    assert zoo.read(good, "cartpole").config().env_config == {"episodeSteps": 9}


def test_flags_override_single_fields_of_the_tuned_configuration(capsys, tmp_path):
    tuned = zoo.tuned("CartPole-v1")
    argv = ["--num-envs", "8", "--num-steps", "8", "--total-steps", "256", "--gamma", "0.9"]
    code, out, err = run(
        capsys, "train", "ppo", "--env", "CartPole-v1", *argv, "--run-dir", str(tmp_path)
    )
    assert code == 0, err
    assert "PPO on CartPole-v1 (vecenv), 8 envs, seed 1" in out
    assert f"configuration: cartpole's tuned ppo.json, target {tuned.target:g}" in out
    assert f"did not reach {tuned.target:g}" in out  # 256 steps are far too few
    saved = json.loads((tmp_path / "run.json").read_text())
    config = saved["config"]
    assert (config["num_envs"], config["num_steps"], config["gamma"]) == (8, 8, 0.9)
    for key, value in tuned.hyperparameters.items():  # the rest comes from ppo.json
        if key not in ("num_envs", "num_steps", "total_steps", "gamma"):
            assert config[key] == (list(value) if isinstance(value, tuple) else value), key
    assert saved["target"] == tuned.target and saved["interrupted"] is False


def test_progress_lines_report_steps_rate_and_return(capsys, tmp_path):
    argv = ["--num-envs", "8", "--num-steps", "8", "--total-steps", "640"]
    code, out, err = run(
        capsys, "train", "ppo", "--env", "acrobot", *argv, "--run-dir", str(tmp_path)
    )
    assert code == 0, err
    lines = [line for line in out.splitlines() if line.strip().endswith(tuple("0123456789n"))]
    progress = [line for line in lines if "steps/s  mean return" in line]
    assert 5 <= len(progress) <= 10
    steps = [int(line.split()[0].replace(",", "")) for line in progress]
    assert steps == sorted(steps) and steps[-1] <= 640


def test_ctrl_c_stops_the_run_and_keeps_what_it_learned(tmp_path):
    """A real SIGINT after the first progress line: the run directory is complete, run.json
    says it was interrupted, and the exit status is 130 (as a shell reports Ctrl-C)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    argv = ["train", "ppo", "--env", "CartPole-v1", "--total-steps", "400000"]
    argv += ["--num-envs", "64", "--num-steps", "16", "--run-dir", str(tmp_path / "run")]
    # Ctrl-C's default in the child, as in a shell's foreground job: a process inherits an
    # ignored SIGINT (Python then leaves it ignored, as for a background job), and what ran
    # before in this test process may have left it ignored here.
    child = subprocess.Popen(
        [sys.executable, "-m", "vecenv", *argv],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        for line in child.stdout:  # blocks until the trainer reports progress
            if "steps/s" in line:
                break
        child.send_signal(signal.SIGINT)
        rest = child.stdout.read()
        code = child.wait(timeout=120)
    finally:
        child.kill()
    assert code == 130, rest
    assert "interrupted at" in rest
    saved = json.loads((tmp_path / "run" / "run.json").read_text())
    assert saved["interrupted"] is True and 0 < saved["steps"] < 400_000
    curve = (tmp_path / "run" / "curve.csv").read_text().splitlines()
    assert len(curve) >= 2
    from vecenv import ppo

    assert ppo.load(str(tmp_path / "run" / "policy.pt")).env_id == "CartPole-v1"


def test_an_interrupted_trainer_returns_its_run(monkeypatch):
    from vecenv import ppo

    def interrupt(run, iteration):
        if iteration == 2:
            raise KeyboardInterrupt

    config = PPOConfig(num_envs=4, num_steps=8, total_steps=4096)
    run, _ = ppo.train("cartpole", config, on_rollout=interrupt)
    assert run.interrupted and len(run.curve) == 2 and run.steps == run.curve[-1][0]


def test_eval_reports_the_mean_return_with_its_interval(capsys, tmp_path):
    code, _, err = run(
        capsys, "train", "ppo", "--env", "cartpole", "--num-envs", "8", "--num-steps", "8",
        "--total-steps", "64", "--run-dir", str(tmp_path),
    )  # fmt: skip
    assert code == 0, err
    code, out, err = run(
        capsys, "train", "eval", "--policy", str(tmp_path / "policy.pt"), "--episodes", "4",
        "--seed", "0",
    )  # fmt: skip
    assert code == 0, err
    summary = out.strip().splitlines()[-1]
    found = re.search(r"mean return ([\d.-]+) \(95% interval \[([\d.-]+), ([\d.-]+)\]", summary)
    assert found, summary
    mean, low, high = map(float, found.groups())
    assert low <= mean <= high


def test_num_envs_alone_keeps_the_tuned_batch_and_minibatch_size():
    cartpole = zoo.tuned("cartpole")  # 32 envs x 32 steps, one minibatch
    assert (cartpole.hyperparameters["num_envs"], cartpole.hyperparameters["num_steps"]) == (32, 32)
    for envs, steps, minibatches in [
        (8, 128, 1),
        (64, 16, 1),
        (256, 4, 1),
        (512, 4, 2),
        (32, 32, 1),
    ]:
        config = cartpole.config(num_envs=envs)
        assert (config.num_envs, config.num_steps, config.num_minibatches) == (
            envs,
            steps,
            minibatches,
        )
    acrobot = zoo.tuned("acrobot")  # 32 envs x 64 steps, 8 minibatches of 256
    assert acrobot.config(num_envs=256).num_steps == 8
    assert acrobot.config(num_envs=256).num_minibatches == 8
    # A field given beside --num-envs stays as given; the minibatches follow the batch it makes.
    config, changes = zoo.adapted(cartpole.hyperparameters, {"num_envs": 256, "num_steps": 16})
    assert (config.num_steps, config.num_minibatches) == (16, 4)
    assert changes == {"num_envs": (32, 256), "num_minibatches": (1, 4)}
    assert zoo.adapted(cartpole.hyperparameters, {"seed": 3})[1] == {}


@settings(max_examples=300, deadline=None)
@given(
    tuned_envs=st.integers(1, 512),
    tuned_steps=st.integers(1, 256),
    minibatches=st.integers(1, 64),
    envs=st.integers(1, 4096),
)
def test_a_rescaled_configuration_keeps_its_batch_where_it_can(
    tuned_envs, tuned_steps, minibatches, envs
):
    batch = tuned_envs * tuned_steps
    minibatches = min(minibatches, batch)
    tuned = dict(num_envs=tuned_envs, num_steps=tuned_steps, num_minibatches=minibatches)
    values, changes = zoo.for_num_envs(tuned, envs)
    config = PPOConfig(**values)  # always a valid configuration
    assert config.num_envs == envs
    if envs == tuned_envs:
        assert values == tuned and changes == {}
        return
    assert config.num_steps >= min(zoo.MIN_STEPS, tuned_steps)
    if config.num_steps > min(zoo.MIN_STEPS, tuned_steps):  # not held up by the floor
        assert abs(config.batch_size - batch) <= envs / 2
    size = config.batch_size / config.num_minibatches
    assert 1 <= config.num_minibatches <= config.batch_size
    assert size <= 1.5 * batch / minibatches or config.num_minibatches == 1
    for key, (was, now) in changes.items():
        assert tuned[key] == was and values[key] == now != was


def test_num_envs_on_the_command_line_says_what_it_rescaled(capsys, tmp_path):
    argv = ["--num-envs", "64", "--total-steps", "2048", "--run-dir", str(tmp_path)]
    code, out, err = run(capsys, "train", "ppo", "--env", "CartPole-v1", *argv)
    assert code == 0, err
    assert (
        "--num-envs 64 (tuned at 32): num_steps 32 -> 16; 1,024 steps per update as tuned, "
        "minibatches of 1,024 as tuned"
    ) in out
    saved = json.loads((tmp_path / "run.json").read_text())["config"]
    assert (saved["num_envs"], saved["num_steps"], saved["num_minibatches"]) == (64, 16, 1)
