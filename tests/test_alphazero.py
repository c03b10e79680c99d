"""AlphaZero (``vecenv.alphazero``, ``vecenv train alphazero``): the loop runs end to end on
tictactoe, its files and evaluations; the same seed repeats the run; the loss falls on a fixed
buffer; checkpoints reload and play, also named by their files wherever players are named; bad
settings and files are refused."""

import csv
import json
from types import SimpleNamespace

import numpy as np
import pytest

import vecenv
from tests.envs.reference import need
from tests.test_cli import run as cli

torch = need("torch", "PyTorch (vecenv[train])")

from vecenv import alphazero, search, selfplay, tournament  # noqa: E402

TINY = dict(
    num_games=8,
    simulations=4,
    iterations=2,
    hidden=(16,),
    batch_size=16,
    updates=3,
    eval_every=5,  # more than the run's iterations: only the last is evaluated
    eval_matches=4,
    eval_simulations=4,
    opponents=("random",),
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two runs of the same seed and one of another (the search compiles once for all)."""
    folders = [tmp_path_factory.mktemp(f"az{k}") for k in range(3)]
    seeds = (3, 3, 4)
    done = [
        alphazero.train("tictactoe", alphazero.AlphaZeroConfig(seed=s, **TINY), str(f))
        for s, f in zip(seeds, folders, strict=True)
    ]
    return list(zip(done, folders, strict=True))


def test_the_loop_runs_end_to_end_and_writes_its_run(runs):
    run, folder = runs[0]
    assert len(run.rows) == 2 and not run.interrupted
    assert run.games == 16 and run.positions == sum(row["positions"] for row in run.rows)
    assert all(5 * 8 <= row["positions"] <= 9 * 8 for row in run.rows)  # 5 to 9 plies a game
    assert all(np.isfinite(row["policy_loss"]) and row["value_loss"] >= 0 for row in run.rows)
    assert [s.agents[1] for _, s in run.evaluations] == ["random"]
    for k, summary in run.evaluations:
        assert k == 2 and summary.matches == 4
        assert summary.wins + summary.draws + summary.losses == 4
        low, high = summary.win_rate[1:]
        assert low <= summary.win_rate[0] <= high
    info = json.loads((folder / "run.json").read_text())
    assert info["game"] == "tictactoe" and info["iterations"] == 2
    assert [e["opponent"] for e in info["evaluations"]] == ["random"]
    with open(folder / "curve.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["iteration"]) for r in rows] == [1, 2]
    assert rows[0]["win_random"] == "" and float(rows[1]["win_random"]) >= 0
    assert (folder / "model.pt").exists()
    # one evaluation, so it is the best: its network is kept as best.pt
    wins, draws = run.evaluations[0][1].wins, run.evaluations[0][1].draws
    assert info["best"] == {"iteration": 2, "score": (wins + draws / 2) / 4}
    best = torch.load(folder / "best.pt", weights_only=True)
    assert best["extra"]["iteration"] == 2 and all(
        torch.equal(best["weights"][k], weights(folder)[k]) for k in best["weights"]
    )


def test_the_best_evaluation_is_kept(tmp_path, monkeypatch):
    # evaluations scripted: 2 of 4 points, then 3.5, then 1: the second network is kept
    points = iter([(2, 0), (3, 1), (1, 0)])
    saved = {}

    def scripted(player, config, seed):
        wins, draws = next(points)
        k = len(saved) + 1
        saved[k] = {n: w.clone() for n, w in player.network.state_dict().items()}
        rate = (wins / 4, 0.0, 1.0)
        return [SimpleNamespace(agents=("az", "random"), matches=4, wins=wins, draws=draws,
                                losses=4 - wins - draws, win_rate=rate)]  # fmt: skip

    monkeypatch.setattr(alphazero, "evaluate", scripted)
    config = alphazero.AlphaZeroConfig(seed=3, **{**TINY, "iterations": 3, "eval_every": 1})
    run = alphazero.train("tictactoe", config, str(tmp_path))
    assert run.best == (2, 0.875)
    kept = torch.load(tmp_path / "best.pt", weights_only=True)
    assert kept["extra"] == {"iteration": 2, "score": 0.875}
    assert all(torch.equal(kept["weights"][n], saved[2][n]) for n in saved[2])
    assert not any(torch.equal(saved[3][n], saved[2][n]) for n in saved[2])  # not the last
    info = json.loads((tmp_path / "run.json").read_text())
    assert info["best"] == {"iteration": 2, "score": 0.875}
    assert [e["wins"] for e in info["evaluations"]] == [2, 3, 1]


def weights(folder):
    return torch.load(folder / "model.pt", weights_only=True)["weights"]


def test_the_same_seed_repeats_the_run_and_another_seed_does_not(runs):
    (a, fa), (b, fb), (c, fc) = runs
    keys = ("positions", "policy_loss", "value_loss")
    assert [[r[k] for k in keys] for r in a.rows] == [[r[k] for k in keys] for r in b.rows]
    wa, wb, wc = weights(fa), weights(fb), weights(fc)
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    assert not all(torch.equal(wa[k], wc[k]) for k in wa)


def test_the_loss_falls_on_a_fixed_buffer():
    # value_mix 0: the value targets are the outcomes alone
    config = alphazero.AlphaZeroConfig(seed=5, **{**TINY, "learning_rate": 1e-2, "value_mix": 0.0})
    trainer = alphazero.Trainer("tictactoe", config)
    x, policy, outcome, _ = alphazero.self_play(
        trainer.engine, trainer.mcts, trainer.features, config, 0, trainer.rng
    )
    assert set(np.unique(outcome)) <= {-1.0, 0.0, 1.0}
    np.testing.assert_allclose(policy.sum(axis=1), 1.0, rtol=1e-5)
    batch = (torch.from_numpy(x), torch.from_numpy(policy), torch.from_numpy(outcome))

    def loss():
        with torch.no_grad():
            logits, value = trainer.network(batch[0])
            p = -(batch[1] * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
            return float(p + ((value - batch[2]) ** 2).mean())

    before = loss()
    for _ in range(100):
        alphazero.update(trainer.network, trainer.optimizer, batch)
    assert loss() < 0.8 * before


def test_the_crossed_features_are_the_board_as_each_mark_sees_it():
    engine = vecenv.make("tictactoe", num_envs=4, seed=1)
    engine.step(np.array([[4, 0], [0, 0], [8, 0], [1, 0]]))  # the first seat takes a cell
    plain, crossed = alphazero.Features(engine), alphazero.Features(engine, cross=True)
    seat = np.array([0, 1, 0, 1])
    obs = {"board": engine.obs["board"], "mark": engine.obs["mark"][np.arange(4), seat]}
    x, y = plain(obs), crossed(obs)
    np.testing.assert_array_equal(y[:, : plain.size], x)
    board = x[:, :27].reshape(4, 9, 3)  # cells: empty, mark 1, mark 2
    mark = x[:, 27:29]
    expected = board[:, :, :, None] * mark[:, None, None, :]
    np.testing.assert_array_equal(y[:, plain.size :], expected.reshape(4, -1))
    assert (
        crossed.size == plain.size + 9 * 3 * 2
        and y[:, plain.size :].sum(axis=1).tolist() == [9] * 4
    )


def test_a_checkpoint_reloads_and_plays(runs):
    _, folder = runs[0]
    player = alphazero.load(str(folder / "model.pt"), game="tictactoe")
    saved = weights(folder)
    assert all(torch.equal(player.network.state_dict()[k], saved[k]) for k in saved)
    for agent in (player.policy, player.agent(4)):
        result = selfplay.play("tictactoe", (agent, "random"), 4, seed=2)
        assert result.summary.matches == 4
        assert set(np.unique(result.statuses)) <= {2, 3}  # DONE and nothing failed
    again = selfplay.play("tictactoe", (player.agent(4), "random"), 4, seed=2)
    result = selfplay.play("tictactoe", (player.agent(4), "random"), 4, seed=2)
    np.testing.assert_array_equal(again.rewards, result.rewards)


def test_a_checkpoint_is_named_as_a_player_by_its_file(runs, capsys):
    path = str(runs[0][1] / "model.pt")
    entrant = tournament.agent(path, "tictactoe")  # searches as its run evaluated it
    assert isinstance(entrant, search.MCTSAgent) and entrant.name == path
    assert entrant.simulations == TINY["eval_simulations"]
    assert tournament.agent(f"{path}:7", "tictactoe").simulations == 7
    names = (f"{path}:2", f"{path}:0")  # 2 simulations a move; the network alone
    agents = [tournament.agent(name, "tictactoe") for name in names]
    result = selfplay.play("tictactoe", agents, 4, seed=1)
    assert result.summary.agents == names and result.summary.matches == 4
    assert set(np.unique(result.statuses)) <= {2, 3}  # DONE and nothing failed
    player = alphazero.load(path)
    by_hand = selfplay.play("tictactoe", (player.agent(2), player.policy), 4, seed=1)
    np.testing.assert_array_equal(result.rewards, by_hand.rewards)
    code, out, err = cli(
        capsys, "play", "tictactoe", "--agents", f"{path}:2", "random", "--matches", "2"
    )
    assert code == 0, err
    assert f"{path}:2 vs random: 2 matches" in out
    code, out, err = cli(
        capsys, "tournament", "tictactoe", "--agents", path, "random", "--matches-per-pair", "2"
    )
    assert code == 0 and path in out, err


def test_bad_checkpoints_named_as_players_are_refused(runs, tmp_path, capsys):
    path = str(runs[0][1] / "model.pt")
    junk, ppo_file, damaged = (str(tmp_path / f"{k}.pt") for k in ("junk", "ppo", "damaged"))
    with open(junk, "wb") as f:
        f.write(b"not a checkpoint")
    torch.save({"format": "vecenv.ppo/1"}, ppo_file)
    torch.save({"format": alphazero.FORMAT, "game": "tictactoe"}, damaged)
    cases = [
        ("tictactoe", str(tmp_path / "missing.pt"), "no such checkpoint file"),
        ("tictactoe", junk, "not a vecenv checkpoint"),
        ("connectx", path, "trained on tictactoe, not connectx"),
        ("tictactoe", f"{ppo_file}:4", "only an AlphaZero checkpoint"),
        ("tictactoe", damaged, "a damaged AlphaZero checkpoint"),
        ("tictactoe", f"{path}:{2**40}", "simulations"),
    ]
    for game, spec, message in cases:
        with pytest.raises(ValueError, match=message):
            tournament.agent(spec, game)
        with pytest.raises(ValueError, match=message):
            tournament.round_robin(game, [spec, "random"], 2, seed=0)
    code, _, err = cli(capsys, "play", "tictactoe", "--agents", junk, "random", "--matches", "2")
    assert code == 2 and "not a vecenv checkpoint" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(simulations=0), "simulations"),
        (dict(num_games=1.5), "num_games"),
        (dict(seed=-1), "seed"),
        (dict(learning_rate=float("nan")), "learning_rate"),
        (dict(dirichlet_fraction=2.0), "dirichlet_fraction"),
        (dict(selection="uct"), "selection"),
        (dict(hidden=(0,)), "hidden"),
        (dict(value_mix=1.5), "value_mix"),
        (dict(cross_features="yes"), "cross_features"),
        (dict(iterations=0, seconds=0), "needs an end"),
    ],
)
def test_bad_settings_are_refused(change, message):
    with pytest.raises(ValueError, match=message):
        alphazero.AlphaZeroConfig(**{**TINY, **change})


def test_bad_games_and_files_are_refused(tmp_path, runs):
    config = alphazero.AlphaZeroConfig(**TINY)
    with pytest.raises(ValueError, match="two-agent"):
        alphazero.train("cartpole", config, str(tmp_path))
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="not a vecenv AlphaZero checkpoint"):
        alphazero.load(str(junk))
    with pytest.raises(ValueError, match="trained on tictactoe"):
        alphazero.load(str(runs[0][1] / "model.pt"), game="connectx")


def test_the_command_trains_and_refuses_bad_arguments(capsys, tmp_path):
    code, out, _ = cli(
        capsys, "train", "alphazero", "--env", "tictactoe", "--iterations", "1",
        "--num-games", "4", "--simulations", "2", "--hidden", "8", "--updates", "1",
        "--batch-size", "4", "--eval-every", "1", "--eval-matches", "2",
        "--eval-simulations", "2", "--opponents", "random", "--run-dir", str(tmp_path),
        "--value-mix", "0.25", "--features", "plain", "--temperature-moves", "2",
    )  # fmt: skip
    assert code == 0
    config = json.loads((tmp_path / "run.json").read_text())["config"]
    assert (config["value_mix"], config["cross_features"], config["temperature_moves"]) == (
        0.25,
        False,
        2,
    )
    assert "iteration    1" in out and "vs random: " in out
    assert (tmp_path / "model.pt").exists() and (tmp_path / "run.json").exists()
    code, _, err = cli(capsys, "train", "alphazero", "--env", "cartpole", "--iterations", "1")
    assert code != 0 and "two-agent" in err
    code, _, err = cli(capsys, "train", "alphazero", "--env", "tictactoe")
    assert code != 0 and "needs an end" in err
    code, _, err = cli(capsys, "train", "alphazero", "--env", "tictactoe", "--simulations", "0")
    assert code == 2 and "--simulations" in err


def test_a_game_whose_seats_move_at_once_trains_both_seats(capsys, tmp_path):
    # rps: both seats move every ply, each searching its own action (the other's drawn inside
    # its tree), and every ply gives a position of each seat
    config = alphazero.AlphaZeroConfig(seed=2, **TINY)
    trainer = alphazero.Trainer("rps", config, episodeSteps=6)
    x, policy, target, plies = alphazero.self_play(
        trainer.engine, trainer.mcts, trainer.features, config, 0, trainer.rng
    )
    assert plies == 5
    assert x.shape[0] == policy.shape[0] == target.shape[0] == 2 * TINY["num_games"] * plies
    np.testing.assert_allclose(policy.sum(axis=1), 1.0, rtol=1e-5)
    assert np.all(np.abs(target) <= 1.0)
    code, out, _ = cli(
        capsys, "train", "alphazero", "--env", "rps", "--iterations", "1", "--num-games", "2",
        "--simulations", "2", "--hidden", "8", "--updates", "1", "--batch-size", "4",
        "--eval-every", "0", "--run-dir", str(tmp_path), "--config", "episodeSteps=4",
    )  # fmt: skip
    assert code == 0, out
    run = json.loads((tmp_path / "run.json").read_text())
    assert (run["configuration"], run["positions"]) == ({"episodeSteps": 4}, 2 * 2 * 3)
    code, _, err = cli(
        capsys, "train", "alphazero", "--env", "rps", "--iterations", "1",
        "--run-dir", str(tmp_path / "bad"), "--config", "episodeSteps=-3",
    )  # fmt: skip
    assert code == 2 and "episodeSteps" in err
    assert not (tmp_path / "bad").exists()  # refused before the run's folder was made
    with pytest.raises(ValueError, match="episodeSteps"):
        alphazero.train("rps", config, str(tmp_path / "bad"), episodeSteps=-3)
    assert not (tmp_path / "bad").exists()


def test_a_checkpoint_is_seated_by_its_file(runs, tmp_path):
    """``selfplay.play`` and ``Seats.assign`` take the file's spelling as the command line does
    (the engine layer reads it through ``vecenv.variants``): the same matches as the player
    loaded by hand; a missing file or another game's checkpoint is refused by name."""
    path = str(runs[0][1] / "model.pt")
    player = alphazero.load(path)
    by_file = selfplay.play("tictactoe", (f"{path}:2", f"{path}:0"), 4, seed=1)
    by_hand = selfplay.play("tictactoe", (player.agent(2), player.policy), 4, seed=1)
    np.testing.assert_array_equal(by_file.rewards, by_hand.rewards)
    assert by_file.summary.agents == (f"{path}:2", f"{path}:0")
    zeros = np.zeros(3, dtype=np.int64)
    seats = selfplay.Seats(vecenv.make("tictactoe", num_envs=3, seed=0))
    seats.assign(f"{path}:2", zeros)
    seats.assign("random", zeros + 1)
    seats.step(9)
    assert seats.ends.sum() >= 3  # every game of tictactoe ends within 9 plies
    with pytest.raises(ValueError, match="no such checkpoint file"):
        seats.assign(str(tmp_path / "missing.pt"), zeros)
    connectx = selfplay.Seats(vecenv.make("connectx", num_envs=3, seed=0))
    with pytest.raises(ValueError, match="connectx"):
        connectx.assign(path, zeros)


def test_the_arena_client_plays_a_checkpoint_by_its_file(runs):
    """The arena client's ``--agent FILE.pt:N``: the network's search from the percept's
    position, the move ``mcts`` plays from it with the same network (Kaggle's seat found from the
    mark); ``FILE.pt:0`` the network's own move; both legal."""
    import random

    from vecenv.arena import client
    from vecenv.kaggle.agents import search_callable

    path = str(runs[0][1] / "model.pt")
    player = alphazero.load(path)
    board = [1, 0, 0, 0, 2, 0, 0, 0, 0]
    percept = {"observation": {"board": board, "mark": 1, "step": 2}, "configuration": {}}
    random.seed(5)
    searched = client.make_policy(f"{path}:8", "tictactoe")(percept)
    random.seed(5)
    by_hand = search_callable("tictactoe", player.agent(8))(percept["observation"], {})
    assert searched == by_hand and board[searched] == 0
    alone = client.make_policy(f"{path}:0")(percept)  # the game: the checkpoint's
    engine = vecenv.make("tictactoe", num_envs=1, seed=0)
    position = {"board": board, "mark": [1, 2]}
    engine.reset(position={"observation": position, "status": ["ACTIVE", "INACTIVE"], "step": 2})
    obs = {f.name: engine.obs[f.name] if f.shared else engine.obs[f.name][:, 0]
           for f in engine.observation}  # fmt: skip
    assert alone == int(player.policy(obs, obs.get("legal"))[0]) and board[alone] == 0
    with pytest.raises(ValueError, match="connectx"):
        client.make_policy(path, "connectx")
