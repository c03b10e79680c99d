"""AlphaZero's network and what it reads (``vecenv.alphazero.network``): every game's ``board.py``
declares true symmetries (the image of a position plays as the position does, move for move);
the features permute with the board; the replay buffer's samples are the positions seen through
a symmetry; the residual network reads the board's planes, trains, saves, reloads and is refused
where the game declares no board."""

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import vecenv
from tests.envs.reference import need
from vecenv import registry
from vecenv.engine import Engine
from vecenv.kernels.turns import ACTIVE

torch = need("torch", "PyTorch (vecenv[train])")

from vecenv import alphazero, search  # noqa: E402

BOARD_GAMES = [name for name in registry.list_envs() if registry.game_module(name, "board")]


def test_the_board_games_are_those_with_boards():
    assert {"connectx", "tictactoe", "othello"} <= set(BOARD_GAMES)


def _status_names(row):
    return ["ACTIVE" if s == ACTIVE else "INACTIVE" for s in row]


@pytest.mark.parametrize("game", BOARD_GAMES)
def test_each_symmetry_plays_as_the_position_does(game):
    """Random positions and their images under each declared symmetry, started from by a second
    engine: the image's legal actions are the position's, moved; after the same move (moved) the
    boards are each other's images again, with the same rewards and ends."""
    n = 16
    engine = Engine(game, num_envs=n, seed=0, autoreset="disabled")
    probe = search.MCTS(engine, 1, evaluator="uniform")
    board = alphazero.Board.of(game, engine.config, probe.num_actions)
    assert board.symmetries, game
    low = probe.low
    engine.reset(seed=3)
    rng = np.random.default_rng(3)
    checked = 0
    for ply in range(12):
        states = engine.get_state()
        running = states["done"] == 0
        active = (states["status"] == ACTIVE) & running[:, None]
        legal = engine.obs["legal"]
        actions = np.zeros((n, 2), dtype=np.int64)
        movers = np.full(n, -1)
        for i in range(n):
            if active[i].sum() == 1:
                movers[i] = int(np.argmax(active[i]))
                options = np.flatnonzero(legal[i] if legal.ndim == 2 else legal[i, movers[i]])
                actions[i, movers[i]] = rng.choice(options) + low
        cells = engine.obs[board.field].copy()
        rows = np.flatnonzero(movers >= 0)
        if ply % 3 == 1 and len(rows):
            for k, (order, moved) in enumerate(board.symmetries):
                image = Engine(game, num_envs=len(rows), seed=0, autoreset="disabled")
                image.reset(
                    position=[
                        {
                            "observation": {board.field: cells[i][order].tolist()},
                            "status": _status_names(states["status"][i]),
                        }
                        for i in rows
                    ]
                )
                image_legal = image.obs["legal"]
                original = legal[rows]
                if original.ndim == 3:
                    original = original[np.arange(len(rows)), movers[rows]]
                    image_legal = image_legal[np.arange(len(rows)), movers[rows]]
                np.testing.assert_array_equal(image_legal, original[:, moved], err_msg=f"{k}")
                image_actions = np.zeros((len(rows), 2), dtype=np.int64)
                for r, i in enumerate(rows):
                    a = actions[i, movers[i]] - low
                    image_actions[r, movers[i]] = int(np.flatnonzero(moved == a)[0]) + low
                twin = Engine(game, num_envs=len(rows), seed=0, autoreset="disabled")
                twin.reset(
                    position=[
                        {
                            "observation": {board.field: cells[i].tolist()},
                            "status": _status_names(states["status"][i]),
                        }
                        for i in rows
                    ]
                )
                _, reward, term, _ = twin.step(actions[rows])
                _, image_reward, image_term, _ = image.step(image_actions)
                np.testing.assert_array_equal(
                    image.obs[board.field], twin.obs[board.field][:, order]
                )
                np.testing.assert_array_equal(image_reward, reward)
                np.testing.assert_array_equal(image_term, term)
                checked += len(rows)
        engine.step(actions)
    assert checked > 0


def test_the_features_permute_with_the_board():
    engine = Engine("connectx", num_envs=6, seed=0)
    features = alphazero.Features(engine, cross=True)
    board = alphazero.Board.of("connectx", engine.config, 7)
    columns, actions = board.tables(features, 7)
    assert columns.shape == (2, features.size) and actions.tolist()[1] == [6, 5, 4, 3, 2, 1, 0]
    rng = np.random.default_rng(1)
    cells = rng.integers(0, 3, size=(6, 42)).astype(np.int8)
    obs = {"board": cells, "mark": np.array([1, 2, 1, 2, 1, 2], np.int8)}
    mirrored = {"board": cells.reshape(6, 6, 7)[:, :, ::-1].reshape(6, 42), "mark": obs["mark"]}
    np.testing.assert_array_equal(features(mirrored), features(obs)[:, columns[1]])
    planes, extras = features.planes("board")
    assert planes.shape == (42, 3 + 6) and len(extras) == 2  # one-hot, crossed; the mark's
    with pytest.raises(ValueError, match="no categorical field 'legal'"):
        features.planes("legal")  # never a feature


def test_the_buffer_samples_positions_seen_through_a_symmetry():
    engine = Engine("tictactoe", num_envs=2, seed=0)
    features = alphazero.Features(engine, cross=True)
    board = alphazero.Board.of("tictactoe", engine.config, 9)
    tables = board.tables(features, 9)
    assert len(tables[0]) == 8
    buffer = alphazero.Buffer(4, features.size, 9, tables)
    corner = {"board": np.array([[1] + [0] * 8], np.int8), "mark": np.array([2], np.int8)}
    policy = np.zeros((1, 9), np.float32)
    policy[0, 4] = 1.0  # the centre, which every symmetry keeps
    policy[0, 1] = 0.5
    buffer.add(features(corner), policy, np.array([0.25], np.float32))
    x, p, v = buffer.sample(np.random.default_rng(0), 200)
    seen = {tuple(row) for row in x.numpy()}
    assert len(seen) == 4  # the mark in each of the four corners
    assert torch.all(p[:, 4] == 1.0) and torch.all(v == 0.25)
    # the policy moved with the board: its 0.5 is on an edge next to the corner played
    for row, target in zip(x.numpy(), p.numpy(), strict=True):
        cell = int(np.flatnonzero(row[:27].reshape(9, 3)[:, 1])[0])
        edge = int(np.flatnonzero(target == 0.5)[0])
        assert edge in {1, 3, 5, 7} and abs(cell // 3 - edge // 3) + abs(cell % 3 - edge % 3) == 1


def test_a_residual_network_trains_saves_and_reloads(tmp_path):
    config = alphazero.AlphaZeroConfig(
        network="resnet", blocks=1, filters=8, num_games=8, simulations=4, iterations=2,
        batch_size=16, updates=3, eval_every=0, seed=2,
    )  # fmt: skip
    run = alphazero.train("tictactoe", config, str(tmp_path))
    assert len(run.rows) == 2 and all(np.isfinite(r["policy_loss"]) for r in run.rows)
    player = alphazero.load(str(tmp_path / "model.pt"), game="tictactoe")
    assert isinstance(player.network, alphazero.ResidualNetwork)
    saved = torch.load(tmp_path / "model.pt", weights_only=True)["weights"]
    assert all(torch.equal(player.network.state_dict()[k], saved[k]) for k in saved)
    engine = Engine("tictactoe", num_envs=3, seed=0)
    obs = {k: engine.obs[k][:, 0] if k == "mark" else engine.obs[k] for k in ("board", "mark")}
    logits, values = player.evaluator(obs, None)
    assert logits.shape == (3, 9) and np.all(np.abs(values) <= 1.0)


def test_a_residual_network_needs_a_board_and_sane_sizes():
    with pytest.raises(ValueError, match="rps declares none"):
        alphazero.Trainer("rps", alphazero.AlphaZeroConfig(network="resnet", iterations=1))
    for change, message in (
        ({"network": "cnn"}, "network must be one of"),
        ({"blocks": 0}, "blocks must be an integer in"),
        ({"filters": 10**6}, "filters must be an integer in"),
        ({"symmetries": "yes"}, "symmetries must be True or False"),
    ):
        with pytest.raises(ValueError, match=message):
            alphazero.AlphaZeroConfig(iterations=1, **change)


BROKEN_BOARDS = [
    ("FIELD = 'board'\ndef shape(config):\n    return 3, 3\n", "lacks symmetries"),
    (
        "FIELD = 'board'\ndef shape(config):\n    return 3, 3\n"
        "def symmetries(config):\n    return [([0] * 9, list(range(9)))]\n",
        "symmetry 0's cells are not a permutation of 9",
    ),
    (
        "FIELD = 'board'\ndef shape(config):\n    return 3, 3\n"
        "def symmetries(config):\n    return [(list(range(9)), [9] * 9)]\n",
        "symmetry 0's actions are not a permutation of 9",
    ),
    (
        "FIELD = 'board'\ndef shape(config):\n    return 3, 3\n"
        "def symmetries(config):\n    return [(list(range(9)), list(range(9)))] * 1000\n",
        "1000 symmetries, more than 64",
    ),
    (
        "FIELD = 'board'\ndef shape(config):\n    return 1 / 0\n"
        "def symmetries(config):\n    return []\n",
        "failed: ZeroDivisionError",
    ),
    (
        "FIELD = 'board'\ndef shape(config):\n    return (3,)\n"
        "def symmetries(config):\n    return []\n",
        "shape must be (rows, columns)",
    ),
    (
        "FIELD = 'board'\ndef shape(config):\n    return 3, 3\n"
        "def symmetries(config):\n    return [('a', object())]\n",
        "symmetry 0's cells are not a permutation",
    ),
]


def test_a_broken_board_is_refused_naming_the_game(tmp_path):
    """A game's ``board.py`` is its author's code, read as data: whatever is wrong in it is a
    ValueError naming the game, before any network or buffer is made."""
    source = Path(registry.get_game("tictactoe").folder)
    for k, (text, message) in enumerate(BROKEN_BOARDS):
        name = f"broken_board_{k}"
        folder = shutil.copytree(source, tmp_path / name)
        spec = json.loads((folder / "tictactoe.json").read_text())
        spec["name"], spec["gym"]["id"] = name, f"BrokenBoard{k}-v0"
        (folder / "tictactoe.json").unlink()
        (folder / f"{name}.json").write_text(json.dumps(spec))
        (folder / "board.py").write_text(text)
        game = vecenv.register(folder)
        try:
            config = registry.get_spec(game).resolve_configuration({})
            with pytest.raises(ValueError, match=f"{game}'s board.py.*{re.escape(message)}"):
                alphazero.Board.of(game, config, 9)
        finally:
            vecenv.unregister(game)


def _subnormals(tensors):
    return sum(
        int(((t != 0) & (t.abs() < torch.finfo(t.dtype).tiny)).sum())
        for t in tensors
        if torch.is_tensor(t) and t.is_floating_point()
    )


def test_subnormal_weights_and_moments_are_flushed_to_zero(tmp_path, monkeypatch):
    """Weight decay takes unused weights (and Adam's moments of them) into the subnormal range,
    where every operation on them runs many times slower: training and loading flush them."""
    config = alphazero.AlphaZeroConfig(
        hidden=(16,), num_games=4, simulations=2, iterations=1, batch_size=8, updates=12,
        eval_every=0, seed=1,
    )  # fmt: skip
    trainer = alphazero.Trainer("tictactoe", config)
    real_update = alphazero.update

    def decaying_update(network, optimizer, batch):
        losses = real_update(network, optimizer, batch)
        with torch.no_grad():  # what long decay leaves behind, every update
            for tensor in [*network.parameters(), *alphazero.optimizer_tensors(optimizer)]:
                if tensor.dim():
                    tensor.view(-1)[:3] = 1e-41
        return losses

    monkeypatch.setattr(alphazero, "update", decaying_update)
    trainer.iteration()
    moments = list(alphazero.optimizer_tensors(trainer.optimizer))
    assert moments and _subnormals(moments) == 0
    assert _subnormals(trainer.network.parameters()) == 0
    # normal values are kept: most weights are far from zero
    weights = torch.cat([p.detach().view(-1) for p in trainer.network.parameters()])
    assert (weights != 0).float().mean() > 0.9

    first = next(trainer.network.parameters())
    with torch.no_grad():
        first.view(-1)[:4] = torch.tensor([1e-41, -1e-42, 0.5, -0.25])
    trainer.save(str(tmp_path / "model.pt"))
    loaded = next(alphazero.load(str(tmp_path / "model.pt")).network.parameters())
    assert loaded.view(-1)[:4].tolist() == [0.0, 0.0, 0.5, -0.25]
    assert torch.equal(loaded.view(-1)[4:], first.detach().view(-1)[4:])
