"""Hidden information through every face: what agent k is handed never depends on what it cannot
see.

For every game that declares hidden information (its rules' ``redraw_hidden``), positions of random
legal play are taken, what agent k cannot see is drawn again (the other agent's card, a card dealt
face down), and agent k's view through each face must stay byte for byte the same: the engine and
its built-in agents (the contract check ``hidden information``, run on every game by
tests/test_contract.py), PettingZoo's AEC ``observe`` and Parallel's observations, the Gymnasium Env
against an opponent (k the learner's seat), the multi-agent vector Env's row of agent k, Kaggle's
per-agent observation (as ``run`` and ``train`` hand it to an agent) and its built-in agents' moves,
AISysProj's action request (what the arena sends an agent) and the observations self-play hands a
Python policy. The search, which reads whole records, refuses such a game. A game that leaks fails
the contract check.
"""

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

import vecenv
from vecenv import kaggle, pettingzoo, registry, search, selfplay, testing, warm
from vecenv.aisys.environment import Match
from vecenv.gym.env import GameEnv
from vecenv.gym.multiagent import MultiAgentVectorEnv
from vecenv.kaggle.agents import shared_observation
from vecenv.seats import builtin_names

HIDDEN = [g for g in registry.list_envs() if registry.hidden_information(g)]


def agents(game):
    return registry.get_spec(game).num_agents


def test_the_card_and_tile_games_declare_hidden_information_and_the_board_games_do_not():
    assert {"kuhn_poker", "leduc_holdem", "sparrow_mahjong"} <= set(HIDDEN)
    assert not {"connectx", "go", "chess", "tictactoe"} & set(HIDDEN)


def positions(game, plies=6, n=8, seed=3):
    """Records after each of ``plies`` plies of random legal play (games that end start anew)."""
    engine = vecenv.make(game, num_envs=n, seed=seed)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(plies):
        out.append(engine.get_state())
        engine.step(testing.legal_actions(engine, rng))
    return np.concatenate(out)


def pairs(game):
    """(record, record with what agent k cannot see drawn again, k), for records where the redraw
    changed something."""
    redraw = registry.rules(game).redraw_hidden
    config = registry.get_spec(game).resolve_configuration({})
    rng = np.random.default_rng(0)
    found = []
    for record in positions(game):
        for k in range(agents(game)):
            other = record.copy()[None]
            redraw(other, config, k, rng)
            if other[0] != record:
                found.append((record[None], other, k))
    assert len(found) >= 10
    return found


def same(a, b):
    """Byte for byte the same view: numpy arrays by their bytes, Kaggle's structs as JSON."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def views(read, game):
    """For every pair: agent k's view of both records through ``read(record, k)``, compared."""
    for record, other, k in pairs(game):
        assert same(read(record, k), read(other, k)), (game, k, record, other)


@pytest.mark.parametrize("game", HIDDEN)
def test_pettingzoo_hands_each_agent_its_own_view(game):
    aec = pettingzoo.env(game)
    aec.reset(seed=0)
    parallel = pettingzoo.parallel_env(game)
    parallel.reset(seed=0)

    def read_aec(record, k):
        aec.engine.set_state(record)
        return aec.observe(aec.possible_agents[k])

    def read_parallel(record, k):
        parallel.engine.set_state(record)
        return parallel._game.observe(k)  # what reset and step hand the agent

    views(read_aec, game)
    views(read_parallel, game)


@pytest.mark.parametrize("game", HIDDEN)
def test_the_gymnasium_faces_hand_the_learner_its_own_view(game):
    envs = {k: GameEnv(game=game, seat=k) for k in range(agents(game))}
    vector = MultiAgentVectorEnv(game, num_envs=1, seed=0)

    def read_env(record, k):
        envs[k].set_state(record[0])
        return envs[k]._observation()

    def read_vector(record, k):
        vector.set_state(record)
        obs = vector._out(vector._obs)
        return {name: np.ascontiguousarray(value[0, k]) for name, value in obs.items()}

    views(read_env, game)
    views(read_vector, game)


@pytest.mark.parametrize("game", HIDDEN)
def test_kaggle_hands_each_agent_its_own_observation_and_its_agents_move_alike(game):
    env = kaggle.make(game)
    agents = kaggle.builtin_callables(game)

    def read(record, k):
        env.start_record(record[0])
        observation = shared_observation(env.state, k, env._hidden, env._shared)
        moves = {}
        if env.state[k].status == "ACTIVE":
            for name, agent in agents.items():
                random.seed(7)
                agent.reset()
                moves[name] = agent(observation, env.configuration)
        return {"observation": dict(observation), "moves": moves}

    views(read, game)


@pytest.mark.parametrize("game", [g for g in HIDDEN if registry.get_spec(g).num_agents == 2])
def test_aisysproj_sends_the_agent_its_own_view(game):
    def read(record, k):
        match = Match(game, {}, "random", k, seed=1)
        match.env.start_record(record[0])
        return match.observation()  # the action request's "observation"

    views(read, game)


@pytest.mark.parametrize("game", HIDDEN)
def test_self_play_hands_a_python_policy_its_seats_view(game):
    engine = vecenv.make(game, num_envs=1, seed=0, autoreset="disabled")
    seen = []

    def policy(obs, legal):
        seen.append({name: value.copy() for name, value in obs.items()})
        return np.zeros(1, dtype=np.int64)

    def read(record, k):
        engine.set_state(record)
        seats = selfplay.Seats(engine)
        seats.assign(policy, np.array([k]))
        for other in range(agents(game)):
            if other != k:
                seats.assign("random", np.array([other]))
        seen.clear()
        seats.moves(np.zeros((1, agents(game)), dtype=np.int64))
        return seen[0] if seen else {}

    views(read, game)


@pytest.mark.parametrize("game", HIDDEN)
def test_the_search_refuses_a_game_of_hidden_information(game):
    with pytest.raises(ValueError, match="hidden information"):
        search.MCTS(game, 10)
    with pytest.raises(ValueError, match="hidden information"):
        selfplay.play(game, ("mcts",) + ("random",) * (agents(game) - 1), 2)
    assert "mcts" not in builtin_names(game)
    # ``vecenv warm --parts all`` (CI's first step) warms the parts the game has, the search it
    # refuses left out.
    assert warm.warm([game], ("agents", "search"), jobs=1)[0].error is None


@pytest.mark.parametrize("game", HIDDEN)
def test_a_replay_deals_the_cards_of_the_match(game):
    """A match played again through the Kaggle face (``vecenv play --replay``) starts from the
    match's own record: the same deal (each agent's own cards or tiles, as the engine shows them
    from the match's first record), the same end."""
    k = agents(game)
    result = selfplay.play(game, ("random",) * k, 40, seed=2, keep_actions=True)
    engine = vecenv.make(game, num_envs=40, autoreset="disabled")
    engine.set_state(result.starts)
    own = next(f.name for f in engine.observation if not f.shared)  # card, or hand
    for match in range(40):
        env = result.replay(match)
        assert env.done
        for i, seat in enumerate(result.order[match]):  # agent i of the match played seat
            assert env.state[seat].reward == result.rewards[match, i]
        dealt = [np.asarray(s.observation[own]).tolist() for s in env.steps[0]]
        assert dealt == engine.obs[own][match].tolist()
    assert len({engine.obs[own][m].tobytes() for m in range(40)}) > 3  # deals differ


# ---- a game that leaks fails the check ---------------------------------------------------------


def leaky(tmp_path, name, old, new, file="rules.py"):
    """kuhn_poker copied as game ``name``, with ``old`` replaced by ``new`` in ``file``."""
    folder = tmp_path / name
    shutil.copytree(Path(registry.get_game("kuhn_poker").folder), folder)
    spec = json.loads((folder / "kuhn_poker.json").read_text())
    spec["name"], spec["gym"]["id"] = name, f"{name.title().replace('_', '')}-v0"
    (folder / "kuhn_poker.json").unlink()
    (folder / f"{name}.json").write_text(json.dumps(spec))
    source = (folder / file).read_text()
    assert old in source
    (folder / file).write_text(source.replace(old, new))
    return vecenv.register(folder)


def test_an_observation_showing_the_other_card_fails_the_check(tmp_path):
    game = leaky(
        tmp_path,
        "peek_poker",
        "features[card] = card == own",
        "features[card] = card == s.cards[1 - k]",
    )
    with pytest.raises(testing.CheckFailed, match="agent 0's observation 'features'"):
        testing.check_hidden_information(game)


def test_an_agent_reading_the_other_seat_fails_the_check(tmp_path):
    game = leaky(
        tmp_path,
        "cheat_poker",
        "    return integer(r, count) + (1 - np.int64(legal[0]))",
        "    return 0 if obs[0][i, 1 - player] == 0 else integer(r, count) + 1 - legal[0]",
        file="agents.py",
    )
    with pytest.raises(testing.CheckFailed, match="built-in agent 'random' moved otherwise"):
        testing.check_hidden_information(game)


def test_a_redraw_that_hides_nothing_fails_the_check(tmp_path):
    game = leaky(
        tmp_path,
        "open_poker",
        '        record["cards"][1 - agent] = others[int(rng.integers(len(others)))]',
        "        pass",
    )
    with pytest.raises(testing.CheckFailed, match="never changed a record"):
        testing.check_hidden_information(game)
