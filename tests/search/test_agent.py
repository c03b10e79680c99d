"""The agent ``mcts`` wherever a player is named: self-play, tournaments, the command line, the
Kaggle face, AISysProj, the arena client, the Gymnasium opponent; its strength; its names."""

import json
import pickle
import random

import numpy as np
import pytest

import vecenv
from vecenv import aisys, kaggle, search, seats, selfplay, tournament
from vecenv.aisys import EnvInfo, RunData
from vecenv.arena.client import make_policy
from vecenv.kaggle.agents import UnknownAgent, search_callable
from vecenv.opponent import OpponentEngine
from vecenv.search import MCTSAgent, agent_spec
from vecenv.selfplay import Seats

from ..test_cli import run


def rates(result):
    s = result.summary
    return s.wins, s.draws, s.losses


# -- strength (docs/search.md has the figures of longer runs) ------------------------------------


def test_tictactoe_mcts_draws_itself():
    result = selfplay.play("tictactoe", ("mcts", "mcts"), 20, seed=0)
    assert rates(result) == (0, 20, 0)


def test_connectx_mcts_beats_random_and_negamax():
    random_ = selfplay.play("connectx", ("mcts:200", "random"), 40, seed=0)
    assert random_.summary.win_rate[0] >= 0.95
    negamax = selfplay.play("connectx", ("mcts", "negamax"), 16, seed=0)
    wins, _, losses = rates(negamax)
    assert wins >= 12 and losses <= 2


def test_othello_mcts_beats_greedy():
    result = selfplay.play("othello", ("mcts:200", "greedy"), 8, seed=0)
    assert rates(result)[0] >= 7


def test_a_scaffolded_games_mcts_beats_random(capsys, tmp_path):
    """A game made by ``vecenv new NAME --agents 2`` (Nim) has the agent without writing it."""
    assert run(capsys, "new", "pebbles", "--agents", "2", "--dir", str(tmp_path))[0] == 0
    vecenv.register(tmp_path / "pebbles")
    result = selfplay.play("pebbles", ("mcts:200", "random"), 40, seed=0)
    assert result.summary.win_rate[0] >= 0.9
    code, out, _ = run(
        capsys, "play", "pebbles", "--agents", "mcts:100", "random", "--matches", "10"
    )
    assert code == 0 and "mcts:100 vs random: 10 matches" in out


# -- self-play ------------------------------------------------------------------------------------


def test_matches_are_the_same_for_any_threads_and_batch():
    a = selfplay.play("connectx", ("mcts:60", "random"), 12, seed=3, keep_actions=True)
    b = selfplay.play("connectx", ("mcts:60", "random"), 12, seed=3, num_threads=2)
    c = selfplay.play("connectx", ("mcts:60", "random"), 5, seed=3, keep_actions=True)
    np.testing.assert_array_equal(a.rewards, b.rewards)
    np.testing.assert_array_equal(a.plies, b.plies)
    np.testing.assert_array_equal(a.actions[: c.actions.shape[0], :5], c.actions)
    d = selfplay.play("connectx", ("mcts:60", "random"), 12, seed=4, keep_actions=True)
    assert not np.array_equal(a.actions[:6], d.actions[:6])


def test_seats_with_mcts_pickle_and_go_on_alike():
    engine = vecenv.make("tictactoe", num_envs=6, seed=2, autoreset="same_step")
    seats = Seats(engine)
    seats.assign("mcts:40", np.zeros(6, dtype=int))
    seats.assign("random", np.ones(6, dtype=int))
    seats.step(3)
    copy = pickle.loads(pickle.dumps(seats))
    seats.step(5)
    copy.step(5)
    np.testing.assert_array_equal(seats.actions, copy.actions)
    np.testing.assert_array_equal(seats.returns, copy.returns)


def test_the_gymnasium_opponent():
    engine = OpponentEngine("tictactoe", num_envs=4, seed=0, opponent="mcts:100", seat=1)
    # mcts opened in every game: one mark on the board before the agent's first move
    assert ((np.asarray(engine.obs["board"]) != 0).sum(axis=1) == 1).all()


def test_options_and_names():
    assert agent_spec("mcts") == MCTSAgent() and MCTSAgent().name == "mcts"
    assert agent_spec("mcts:250") == MCTSAgent(250) and MCTSAgent(250).name == "mcts:250"
    assert agent_spec("random") is None and agent_spec(print) is None
    gumbel = MCTSAgent(50, selection="gumbel")
    assert gumbel.name == "mcts(50, selection=gumbel)" and gumbel != MCTSAgent(50)
    result = selfplay.play("tictactoe", (gumbel, MCTSAgent(50, name="fifty")), 4, seed=0)
    assert result.agents == ("mcts(50, selection=gumbel)", "fifty")
    for bad in ("mcts:", "mcts:0", "mcts:-3", "mcts:x", "mcts:1:2"):
        with pytest.raises(ValueError, match="spelt 'mcts'"):
            selfplay.play("tictactoe", (bad, "random"), 2)
    with pytest.raises(ValueError, match="unknown mcts options"):
        MCTSAgent(10, depth=3)
    with pytest.raises(ValueError, match="simulations must be an integer"):
        MCTSAgent(0)


# -- the command line -----------------------------------------------------------------------------


def test_play_and_tournament_commands(capsys):
    code, out, _ = run(
        capsys, "play", "tictactoe", "--agents", "mcts:200", "random", "--matches", "6"
    )
    assert code == 0 and "mcts:200 vs random: 6 matches" in out
    code, out, _ = run(
        capsys,
        "tournament",
        "tictactoe",
        "--agents",
        "mcts:100",
        "reaction",
        "random",
        "--matches-per-pair",
        "4",
    )
    assert code == 0 and "mcts:100" in out and "ratings" in out
    code, _, err = run(capsys, "play", "tictactoe", "--agents", "mcts:0", "random")
    assert code == 2 and "spelt 'mcts'" in err
    result = tournament.round_robin("tictactoe", ["mcts:30", "random"], 2)
    assert result.names == ["mcts:30", "random"]


# -- the Kaggle face, AISysProj, the arena client ----------------------------------------------


def test_kaggle_runs_mcts_repeatably():
    env = kaggle.make("tictactoe")
    random.seed(1)
    first = env.run(["mcts:300", "reaction"])
    random.seed(1)
    again = env.run(["mcts:300", "reaction"])
    assert [s[0].action for s in first] == [s[0].action for s in again]
    assert env.state[0].status == "DONE" and env.state[0].reward in (0, 1)
    assert "mcts" not in env.agents  # Kaggle's list of the game's own agents is Kaggle's
    rps = kaggle.make("rps", configuration={"episodeSteps": 8})
    rps.run(["mcts:20", "rock"])
    assert rps.done and all(s.status == "DONE" for s in rps.state)
    with pytest.raises(UnknownAgent, match="spelt 'mcts'"):
        kaggle.make("tictactoe").run(["mcts:nine", "random"])


def test_the_kaggle_signature_callable_sees_a_win_and_a_block():
    agent = search_callable("connectx", "mcts:300")
    board = [0] * 35 + [1, 1, 1, 0, 2, 2, 0]
    assert agent({"board": board, "mark": 1, "step": 5}, {}) == 3  # wins
    assert agent({"board": board, "mark": 2, "step": 5}, {}) == 3  # blocks
    rps = search_callable("rps", "mcts:20")
    assert 0 <= rps({"lastOpponentAction": 1, "reward": 0, "step": 3}, {}) < 3
    with pytest.raises(ValueError, match="no search agent"):
        search_callable("connectx", "negamax")


def test_aisysproj_opponent_mcts_continues_a_run_identically():
    def make():
        return aisys.TicTacToe(
            EnvInfo(display_name="ttt", identifier="ttt"), {"opponent": "mcts:80", "seat": 1}
        )

    def data(state):
        return RunData(
            action_history=[],
            state=json.loads(json.dumps(state)),
            outcome=None,
            run_id=1,
            agent_name="a",
        )

    live = make()
    state = live.new_run(seed=5)
    assert state["steps"][0][0] is not None  # mcts moved first
    rng = random.Random(0)
    while True:
        request = live.get_action_request(data(state))
        move = rng.choice(request.content["legal"])
        answer = live.act(move, data(state))
        assert make().act(move, data(state)) == answer  # played again from the state alone
        if answer.outcome is not None:
            break
        state = answer.new_state


def test_the_arena_clients_mcts_policy():
    policy = make_policy("mcts:200", "tictactoe")
    percept = {
        "observation": {"board": [1, 1, 0, 2, 2, 0, 0, 0, 0], "mark": 2, "step": 4},
        "legal": [2, 5, 6, 7, 8],
        "configuration": {},
    }
    assert policy(percept) == 5  # O wins at once
    with pytest.raises(ValueError, match="needs the game"):
        make_policy("mcts:200", None)
    with pytest.raises(ValueError, match="spelt 'mcts'"):
        make_policy("mcts:0", "tictactoe")


def test_an_agent_module_is_not_needed():
    """A two-agent game without an agents.py (none of its own) still has mcts."""
    assert search.AGENT in seats.builtin_names("rps")
    assert seats.builtin_names("cartpole") == ()
