"""Crafted checkpoint files (``vecenv.checkpoints``): every loader checks what a file declares
against bounds and against the weights it carries before any network is built, and refuses a
mismatched or oversized file with its name, from Python and from the command line."""

import copy

import pytest

from tests.envs.reference import need
from tests.test_cli import run as cli

torch = need("torch", "PyTorch (vecenv[train])")

from vecenv import alphazero, checkpoints, ppo, tournament  # noqa: E402
from vecenv.arena import client  # noqa: E402
from vecenv.ppo import network as ppo_network  # noqa: E402
from vecenv.ppo.network import ActorCritic  # noqa: E402


@pytest.fixture(scope="module")
def ppo_data(tmp_path_factory):
    """A small connectx policy's checkpoint data (untrained: only its form matters)."""
    vec = ppo.vector_env("connectx", 1)
    net = ActorCritic(vec.single_observation_space, vec.single_action_space, (8,))
    vec.close()
    path = tmp_path_factory.mktemp("ppo") / "policy.pt"
    ppo.save(str(path), net, "connectx")
    return torch.load(path, weights_only=True)


@pytest.fixture(scope="module")
def az_data(tmp_path_factory):
    """A small tictactoe AlphaZero network's checkpoint data."""
    from vecenv.engine import Engine

    engine = Engine("tictactoe", num_envs=1, seed=0)
    features = alphazero.Features(engine, cross=True)
    config = alphazero.AlphaZeroConfig(hidden=(8,), iterations=1)
    net = alphazero.Network(features.size, 9, config.hidden)
    path = tmp_path_factory.mktemp("az") / "model.pt"
    alphazero.save(str(path), "tictactoe", net, config, {})
    return torch.load(path, weights_only=True)


def crafted(tmp_path, data, name="crafted.pt", **changes):
    data = copy.deepcopy(data)
    data.update(changes)
    path = tmp_path / name
    torch.save(data, path)
    return str(path)


@pytest.fixture
def never_built(monkeypatch):
    """Fails a test that builds a network: a refused file must be refused before."""

    def refuse(*args, **kwargs):
        raise AssertionError("a network was built from a file that should have been refused")

    monkeypatch.setattr(ppo.checkpoint, "ActorCritic", refuse)
    monkeypatch.setattr(alphazero, "Network", refuse)
    monkeypatch.setattr(alphazero, "ResidualNetwork", refuse)


def ppo_cases(data):
    weights = data["weights"]
    box = {"kind": "box", "shape": [2**40], "dtype": "float32", "low": [0.0], "high": [1.0]}
    deep = {"kind": "discrete", "n": 2, "start": 0}
    for _ in range(20):
        deep = {"kind": "dict", "fields": [["x", deep]]}
    wider = dict(weights, **{"critic.0.weight": torch.zeros(8, 3)})
    return [
        ({"hidden": [30000, 30000]}, "weights do not fit the network it declares"),
        ({"hidden": [10**8]}, "its hidden sizes must be"),
        ({"hidden": [8] * 1000}, "its hidden sizes must be"),
        ({"hidden": "8"}, "its hidden sizes must be"),
        ({"hidden": [-8]}, "its hidden sizes must be"),
        ({"observation_space": box}, "malformed"),
        ({"observation_space": deep}, "nested too deep"),
        ({"observation_space": {"kind": "discrete", "n": 2**40, "start": 0}}, "malformed"),
        ({"action_space": {"kind": "discrete", "n": 2**30, "start": 0}}, "malformed"),
        ({"action_space": "discrete"}, "damaged PPO checkpoint"),
        ({"weights": wider}, "critic.0.weight has shape"),
        ({"weights": {k: v for k, v in weights.items() if k != "actor.0.bias"}}, "missing"),
        ({"weights": dict(weights, extra=torch.zeros(3))}, "unexpected extra"),
        ({"weights": dict(weights, **{"actor.0.bias": torch.zeros(8).char()})}, "floating"),
        ({"weights": [1, 2]}, "not a dict of named tensors"),
        ({"env": 7}, "damaged PPO checkpoint"),
    ]  # fmt: skip


def test_crafted_ppo_files_are_refused_before_a_network_is_built(tmp_path, ppo_data, never_built):
    for k, (changes, message) in enumerate(ppo_cases(ppo_data)):
        path = crafted(tmp_path, ppo_data, f"p{k}.pt", **changes)
        for load in (
            lambda p: ppo.load(p),
            lambda p: tournament.checkpoint(p, "connectx"),
            lambda p: client.trained_policy(p, "connectx"),
        ):
            with pytest.raises(ValueError, match=message) as caught:
                load(path)
            assert str(caught.value).startswith(path), caught.value


def test_crafted_alphazero_files_are_refused_before_a_network_is_built(
    tmp_path, az_data, never_built
):
    weights = az_data["weights"]
    cases = [
        ({"hidden": [30000, 30000]}, "weights do not fit|trunk.0.weight has shape"),
        ({"hidden": [2**20]}, "its hidden sizes must be"),
        ({"hidden": None}, "its hidden sizes must be"),
        ({"configuration": {"nosuch": 1}}, "no configuration 'nosuch'"),
        ({"configuration": "x"}, "damaged AlphaZero checkpoint"),
        ({"game": "nosuch"}, "unknown game"),
        ({"weights": dict(weights, **{"policy.weight": torch.zeros(10**4, 8)})}, "policy.weight"),
    ]
    for k, (changes, message) in enumerate(cases):
        path = crafted(tmp_path, az_data, f"a{k}.pt", **changes)
        for load in (
            lambda p: alphazero.load(p),
            lambda p: tournament.checkpoint(p, "tictactoe"),
        ):
            with pytest.raises(ValueError, match=message) as caught:
                load(path)
            assert str(caught.value).startswith(path), caught.value


def test_files_that_are_no_checkpoint_are_refused_with_their_name(tmp_path, monkeypatch):
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\n")
    listed = tmp_path / "list.pt"
    torch.save([1, 2, 3], listed)
    folder = tmp_path / "folder.pt"
    folder.mkdir()
    for path, message in (
        (passwd, "not a vecenv PPO checkpoint"),
        (listed, "no dict of its fields"),
        (folder, "not a file"),
        (tmp_path / "missing.pt", "no such file"),
    ):
        with pytest.raises(ValueError, match=message) as caught:
            ppo.load(str(path))
        assert str(caught.value).startswith(str(path))
    big = tmp_path / "big.pt"
    big.write_bytes(b"\0" * 4096)
    monkeypatch.setenv("VECENV_MEMORY_BUDGET", "1K")
    with pytest.raises(ValueError, match="over the memory budget of 1.0 KiB"):
        alphazero.load(str(big))


@pytest.mark.parametrize(
    "argv",
    [
        ["train", "eval", "--policy", "{path}", "--episodes", "1"],
        ["play", "connectx", "--agents", "{path}", "random", "--matches", "2"],
        ["tournament", "connectx", "--agents", "{path}", "random", "--matches-per-pair", "2"],
    ],
)
def test_the_command_line_refuses_a_crafted_file_in_one_line(
    capsys, tmp_path, ppo_data, never_built, argv
):
    path = crafted(tmp_path, ppo_data, hidden=[30000, 30000])
    code, _, err = cli(capsys, *(a.format(path=path) for a in argv))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert path in err and "weights do not fit" in err


def test_the_shapes_checked_are_the_networks_own(ppo_data):
    from gymnasium import spaces

    cases = [
        (spaces.Box(-1, 1, (4,)), spaces.Box(-1, 1, (2,)), (8, 5), True),
        (spaces.Dict({"a": spaces.Discrete(3), "b": spaces.Box(0, 1)}), spaces.Discrete(3), (), 0),
        (spaces.MultiDiscrete([2, 3]), spaces.Discrete(7), (6,), False),
    ]  # fmt: skip
    for obs, action, hidden, norm in cases:
        net = ActorCritic(obs, action, hidden, norm_obs=norm)
        shapes = ppo_network.state_shapes(
            ppo_network.describe(obs), ppo_network.describe(action), hidden, norm
        )
        assert shapes == {k: tuple(v.shape) for k, v in net.state_dict().items()}
    net = alphazero.Network(10, 4, (6, 5))
    assert alphazero.network_shapes(10, 4, (6, 5)) == {
        k: tuple(v.shape) for k, v in net.state_dict().items()
    }


def test_networks_past_the_bounds_are_refused_before_training(capsys, tmp_path):
    with pytest.raises(ValueError, match="hidden must be a list of at most 64 layer sizes"):
        ppo.PPOConfig(hidden=(10**8, 10**8))
    with pytest.raises(ValueError, match="hidden must be"):
        alphazero.AlphaZeroConfig(hidden=(2**17,), iterations=1)
    config = ppo.PPOConfig(hidden=(60000, 60000), num_envs=2, total_steps=2, num_steps=1)
    with pytest.raises(ValueError, match="over the memory budget"):
        ppo.train("CartPole-v1", config, str(tmp_path / "run"))
    for hidden in ("100000000,100000000", "1e8,1e8", "60000,60000,60000"):
        code, _, err = cli(
            capsys, "train", "ppo", "--env", "CartPole-v1", "--hidden", hidden,
            "--total-steps", "64", "--run-dir", str(tmp_path / "cli"),
        )  # fmt: skip
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert "--hidden" in err or "hidden" in err


def test_bounds_are_what_the_module_says():
    assert checkpoints.check_hidden([checkpoints.MAX_LAYER]) == (checkpoints.MAX_LAYER,)
    with pytest.raises(ValueError):
        checkpoints.check_hidden([checkpoints.MAX_LAYER + 1])
    assert checkpoints.check_hidden([]) == ()
