"""A policy trained by ``vecenv train ppo --selfplay`` enters the arena and plays its runs."""

import json
import re
import subprocess
import sys

import pytest

from tests.envs.reference import need


def vecenv(*args):
    done = subprocess.run(
        [sys.executable, "-m", "vecenv", *args], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("selfplay", [True, False])
def test_a_trained_connectx_policy_plays_on_a_served_arena(tmp_path, start_server, selfplay):
    need("torch", "PyTorch (vecenv[train])")
    run_dir = tmp_path / "run"
    small = ["--num-envs", "8", "--num-steps", "8", "--total-steps", "128", "--eval-matches", "4"]
    vecenv(
        "train",
        "ppo",
        "--env",
        "connectx",
        *small,
        "--run-dir",
        str(run_dir),
        *(["--selfplay"] if selfplay else []),
    )
    db = str(tmp_path / "arena.sqlite")
    vecenv(
        "arena",
        "env",
        "add",
        "cx",
        "--class",
        "vecenv.aisys.environment:ConnectX",
        "--opponent",
        "random",
        "--seat",
        "alternate",
        "--db",
        db,
    )
    printed = json.loads(vecenv("arena", "agent", "add", "trained", "--db", db))
    server = start_server(db)
    config_file = tmp_path / "trained.json"
    config_file.write_text(json.dumps(dict(printed, url=server.url)))
    out = vecenv(
        "arena",
        "play",
        "--config",
        str(config_file),
        "--agent",
        str(run_dir / "policy.pt"),
        "--runs",
        "6",
    )
    finished = re.search(r"trained on cx: (\d+) runs finished", out)
    assert finished and int(finished.group(1)) >= 6, out
    assert ", 0 actions refused" in out  # every move the policy made was legal


def test_a_policy_trained_on_another_game_is_refused_by_the_client(tmp_path):
    need("torch", "PyTorch (vecenv[train])")
    import gymnasium

    from vecenv.arena import client
    from vecenv.ppo import save
    from vecenv.ppo.network import ActorCritic

    env = gymnasium.make("vecenv/CartPole-v1")
    path = tmp_path / "cartpole.pt"
    save(str(path), ActorCritic(env.observation_space, env.action_space, (8,)), "CartPole-v1")
    with pytest.raises(ValueError, match="trained on CartPole-v1.*connectx"):
        client.make_policy(str(path), "connectx")
    assert callable(client.make_policy(str(path), "cartpole"))
