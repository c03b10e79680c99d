"""Agents as the Kaggle face resolves them, beside kaggle-environments' ``build_agent``: built-in
names, callables of one or two arguments, Python files (importing their neighbours) and source,
static values, unknown names and URLs; and the built-in agents as Kaggle-signature callables
(``builtin_callables``), fed Kaggle's observations as dicts and as Structs.
"""

import random
import sys

import pytest

from tests.kaggle import reference
from tests.kaggle.common import BUILTIN_NAMES, plain
from vecenv import kaggle as vk
from vecenv.kaggle.agents import UnknownAgent


def run_both(game, make_agents, config=None):
    """``run`` in both faces with fresh agents; returns (ours, Kaggle's) environments."""
    ours = vk.make(game, configuration=config)
    theirs = reference.make(game, configuration=config)
    ours.run(make_agents())
    theirs.run(make_agents())
    return ours, theirs


def lowest_column(obs, config):
    return next(c for c in range(config.columns) if obs.board[c] == 0)


# ---- what resolves to what ----------------------------------------------------------------------


@pytest.mark.parametrize("game", sorted(BUILTIN_NAMES))
def test_builtin_names_are_kaggles(game):
    assert sorted(vk.make(game).agents) == sorted(BUILTIN_NAMES[game])
    assert sorted(vk.builtin_callables(game)) == sorted(reference.make(game).agents)
    assert all(callable(a) for a in vk.make(game).agents.values())


def test_callables_get_what_kaggles_get():
    """One- and two-argument callables: the same observations and configurations, as Structs."""

    def recorder(calls, two):
        if two:

            def agent(obs, config):
                calls.append((type(obs).__name__, dict(obs), dict(config), config.columns))
                return lowest_column(obs, config)

        else:

            def agent(obs):
                calls.append((type(obs).__name__, dict(obs)))
                return next(c for c in range(7) if obs.board[c] == 0)

        return agent

    def calls_in(make):
        calls = ([], [])
        env = make("connectx", configuration={"inarow": 3})
        env.run([recorder(calls[0], True), recorder(calls[1], False)])
        return calls

    ours, theirs = calls_in(vk.make), calls_in(reference.make)
    assert ours == theirs
    assert ours[0][0][0] == "Struct" and ours[0][0][3] == 7
    assert ours[0][0][1]["mark"] == 1 and ours[1][0][1]["mark"] == 2
    assert "board" in ours[1][0][1] and ours[1][0][1]["step"] == 1


def _write_agent_files(tmp_path, module_name):
    (tmp_path / f"{module_name}.py").write_text(
        "def best_column(board, columns):\n"
        "    return max(c for c in range(columns) if board[c] == 0)\n"
    )
    path = tmp_path / "agent.py"
    path.write_text(
        f"from {module_name} import best_column\n"
        "\n"
        "def not_the_agent(obs, config):\n"
        "    return 0\n"
        "\n"
        "def agent(obs, config):\n"
        "    return best_column(obs.board, config.columns)\n"
    )
    return path


def test_file_agent_is_its_last_callable_and_imports_its_neighbours(tmp_path, monkeypatch):
    module_name = f"helper_{tmp_path.name.replace('-', '_')}"
    monkeypatch.delitem(sys.modules, module_name, raising=False)
    path = _write_agent_files(tmp_path, module_name)
    before = list(sys.path)
    ours, theirs = run_both("connectx", lambda: [str(path), lowest_column])
    sys.modules.pop(module_name, None)
    assert plain(ours.steps, overage=False) == plain(theirs.steps, overage=False)
    assert ours.steps[1][0].action == 6  # best_column: the rightmost open column
    assert [s.status for s in ours.state] == ["DONE", "DONE"]
    assert str(tmp_path) not in sys.path[len(before) :]


@pytest.mark.parametrize(
    "source",
    [
        "this line is not python at all",
        "def agent(obs, config):\n    return undefined_name\n",
        "x = 1  # a file that defines no callable at all\n",
    ],
    ids=["syntax-error", "raises-when-called", "no-callable"],
)
def test_broken_file_or_source_agent_is_an_error_at_its_first_act(tmp_path, source):
    path = tmp_path / "broken.py"
    path.write_text(source)
    for raw in (str(path), source):
        ours, theirs = run_both("connectx", lambda raw=raw: [raw, lowest_column])
        assert [s.status for s in ours.state] == [s.status for s in theirs.state]
        assert [s.status for s in ours.state] == ["ERROR", "DONE"]
        assert ours.logs[-1][0]["stderr"]


def test_source_string_agent():
    source = (
        "import math\n"
        "\n"
        "def helper(obs, config):\n"
        "    return 0\n"
        "\n"
        "def act(obs, config):\n"
        "    return math.floor(config.columns * 0.5)\n"
    )
    ours, theirs = run_both("connectx", lambda: [source, lowest_column])
    assert plain(ours.steps, overage=False) == plain(theirs.steps, overage=False)
    assert [s.action for s in ours.steps[1]] == [3, 0]


def test_one_argument_source_agent_gets_the_observation_only():
    source = "def act(observation):\n    return observation.step % 3\n"
    ours, theirs = run_both("rps", lambda: [source, "rock"], {"episodeSteps": 6})
    assert plain(ours.steps, overage=False) == plain(theirs.steps, overage=False)
    assert [s[0].action for s in ours.steps[1:]] == [0, 1, 2, 0, 1]


@pytest.mark.parametrize(
    "value,status",
    [(3, "DONE"), (None, "INVALID"), ([3], "INVALID"), ({"a": 3}, "INVALID"), ("3" * 25, "ERROR")],
    ids=repr,
)
def test_static_values_are_always_played(value, status):
    """Any value but a string is played as it is (3 stacks column 3 to a win over an agent in
    column 0; None plays the default column 0 until it is full); a long string that is no file is
    Python source, whose failure is the agent's ERROR."""
    ours, theirs = run_both("connectx", lambda: [value, lowest_column])
    assert plain(ours.steps, overage=False) == plain(theirs.steps, overage=False)
    assert ours.state[0].status == status


def test_static_three_plays_column_three_until_it_is_full():
    env = vk.make("connectx")
    env.run([3, 3])
    assert len(env.steps) == 8
    assert [s[0].action for s in env.steps[1::2]] == [3] * 4
    assert [s[1].action for s in env.steps[2::2]] == [3] * 3
    assert [s.status for s in env.state] == ["INVALID", "DONE"]


@pytest.mark.parametrize("name", ["nonexistent", "agents/nope.py", "x" * 19, "C:\\agents\\a.py"])
def test_unknown_short_names_are_file_not_found_as_in_kaggle(name):
    with pytest.raises(FileNotFoundError):
        reference.make("connectx").run([name, "random"])
    with pytest.raises(UnknownAgent) as raised:
        vk.make("connectx").run([name, "random"])
    assert isinstance(raised.value, vk.InvalidArgument)
    assert isinstance(raised.value, FileNotFoundError)
    assert "random, negamax" in str(raised.value)


@pytest.mark.parametrize("url", ["http://example.com/agent", "https://x.org", "ftp://host/a"])
def test_url_agents_are_refused_clearly(url):
    env = vk.make("connectx")
    with pytest.raises(vk.InvalidArgument, match="URL agents are not supported"):
        env.run([url, "random"])
    assert len(env.steps) == 1


def test_builtin_callable_agents_play_in_kaggles_run():
    random.seed(1)
    for game in sorted(BUILTIN_NAMES):
        config = {"episodeSteps": 20} if game == "rps" else {}
        callables = vk.builtin_callables(game)
        names = BUILTIN_NAMES[game]
        env = reference.make(game, configuration=config, debug=True)
        env.run([callables[names[-1]], callables[names[0]]])
        assert [s.status for s in env.state] == ["DONE", "DONE"], game
        env = vk.make(game, configuration=config, debug=True)
        env.run([callables[names[-1]], callables[names[0]]])
        assert [s.status for s in env.state] == ["DONE", "DONE"], game


# ---- builtin_callables on Kaggle's observations -------------------------------------------------


def _positions(game, config, count, seed):
    """Kaggle states of random games: (observation as Kaggle hands it to the agent to move,
    the configuration, the seat)."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        env = reference.make(game, configuration=config, debug=True)
        while not env.done and len(out) < count:
            conf = dict(env.configuration)
            seat = 0 if env.state[0].status == "ACTIVE" else 1
            observation = {**env.state[seat].observation, "step": env.state[0].observation.step}
            if game != "rps":
                observation["board"] = list(env.state[0].observation.board)
            out.append((observation, conf, seat))
            if game == "rps":
                env.step([rng.randrange(conf["signs"]), rng.randrange(conf["signs"])])
            else:
                board = observation["board"]
                size = conf["columns"] if game == "connectx" else 9
                move = rng.choice([c for c in range(size) if board[c] == 0])
                env.step([move, move])
    return out


LEGAL_CASES = [
    ("connectx", {}),
    ("connectx", {"rows": 4, "columns": 5, "inarow": 3}),
    ("tictactoe", {}),
    ("rps", {"signs": 5}),
]


@pytest.mark.parametrize("game,config", LEGAL_CASES, ids=[f"{g}-{c}" for g, c in LEGAL_CASES])
@pytest.mark.parametrize("as_struct", [False, True], ids=["dicts", "structs"])
def test_builtin_callables_return_legal_moves(game, config, as_struct):
    for name, agent in vk.builtin_callables(game).items():
        for observation, conf, _ in _positions(game, config, 40, f"{game}{name}"):
            if as_struct:
                observation, conf = vk.Struct(**observation), vk.Struct(**conf)
            move = agent(observation, conf)
            assert isinstance(move, int) and not isinstance(move, bool)
            if game == "rps":
                assert 0 <= move < conf["signs"], name
            else:
                assert observation["board"][move] == 0, (name, observation)


def test_tictactoe_callables_take_the_observation_alone_as_kaggles():
    board = [1, 1, 0, 2, 2, 0, 0, 0, 0]
    for agent in (vk.builtin_callables("tictactoe")["reaction"], reference_tictactoe("reaction")):
        assert agent(vk.Struct(board=board, mark=1, step=4)) == 2  # completes its line
        assert agent(vk.Struct(board=board, mark=2, step=4)) == 5


def reference_tictactoe(name):
    return reference.make("tictactoe").agents[name]


REACTION_BOARDS = [
    # (board, mark): a line to complete comes first, then a line to block, in Kaggle's order.
    ([1, 1, 0, 2, 2, 0, 0, 0, 0], 1),
    ([1, 1, 0, 2, 2, 0, 0, 0, 0], 2),
    ([1, 0, 0, 2, 2, 0, 1, 0, 0], 1),
    ([2, 0, 1, 0, 1, 0, 0, 0, 2], 2),
    ([1, 2, 1, 0, 2, 0, 0, 0, 0], 1),
    ([0, 0, 0, 0, 1, 0, 0, 0, 1], 2),
    ([2, 1, 0, 1, 2, 0, 0, 0, 0], 1),
]


@pytest.mark.parametrize("board,mark", REACTION_BOARDS)
def test_tictactoe_reaction_wins_and_blocks_as_kaggles(board, mark):
    observation = {"board": board, "mark": mark, "step": sum(1 for v in board if v)}
    ours = vk.builtin_callables("tictactoe")["reaction"]
    theirs = reference_tictactoe("reaction")
    want = theirs(vk.Struct(**observation))
    assert ours(observation, {}) == ours(vk.Struct(**observation), vk.Struct()) == want


def test_connectx_negamax_takes_the_winning_move_as_kaggles(monkeypatch):
    theirs = reference.make("connectx").agents["negamax"]
    monkeypatch.setitem(theirs.__globals__, "choice", lambda options: options[0])
    ours = vk.builtin_callables("connectx")["negamax"]
    config = {"rows": 6, "columns": 7, "inarow": 4}
    cases = [
        # Three of mark 1 on the bottom row, columns 0-2: column 3 wins for 1.
        ({35: 1, 36: 1, 37: 1, 28: 2, 29: 2, 30: 2}, 1, 3),
        # Mark 2 has three stacked in column 5: the top of that stack wins for 2.
        ({40: 2, 33: 2, 26: 2, 35: 1, 36: 1, 41: 1}, 2, 5),
        # A diagonal for 1 from (5, 0) up to (2, 3).
        ({35: 1, 29: 1, 23: 1, 38: 1, 36: 2, 37: 2, 30: 2, 31: 2, 24: 2}, 1, 3),
    ]
    for cells, mark, column in cases:
        board = [0] * 42
        for cell, value in cells.items():
            board[cell] = value
        observation = {"board": board, "mark": mark, "step": len(cells)}
        want = theirs(vk.Struct(**observation), vk.Struct(**config))
        assert want == column
        assert ours(observation, config) == want
        assert ours(vk.Struct(**observation), vk.Struct(**config, episodeSteps=1000)) == want


def test_connectx_callable_without_configuration_uses_the_defaults():
    board = [0] * 42
    for cell in (35, 36, 37):
        board[cell] = 1
    assert vk.builtin_callables("connectx")["negamax"]({"board": board, "mark": 1}) == 3


def _rps_module():
    reference.kaggle()
    from kaggle_environments.envs.rps import agents

    return agents


@pytest.mark.parametrize("name", ["rock", "paper", "scissors", "copy_opponent", "statistical"])
@pytest.mark.parametrize("signs", [3, 5])
def test_rps_deterministic_agents_as_kaggles(name, signs):
    """Fed one match's observations in order (Kaggle's statistical keeps its histogram between
    calls, as ours its memory), from step 1 on (copy_opponent's step 0 is random)."""
    ours = vk.builtin_callables("rps")[name]
    theirs = getattr(_rps_module(), name)
    config = {"signs": signs, "episodeSteps": 40}
    rng = random.Random(name)
    score = 0
    for step in range(30):
        observation = {"step": step, "reward": score, "remainingOverageTime": 60}
        if step:
            observation["lastOpponentAction"] = rng.choice([0, 0, 1, signs - 1])
        mine = ours(dict(observation), config)
        want = theirs(vk.Struct(**observation), vk.Struct(**config))
        if step or name != "copy_opponent":
            assert mine == (0 if want is None else want), step


def test_rps_reactionary_agents_follow_kaggles_rule(monkeypatch):
    """After its random first sign, each follows Kaggle's rule from its own last sign: Kaggle's
    module keeps that sign in a global, set here to ours."""
    module = _rps_module()
    config = {"signs": 3, "episodeSteps": 40}
    for name, memory in (
        ("reactionary", "last_react_action"),
        ("counter_reactionary", "last_counter_action"),
    ):
        ours = vk.builtin_callables("rps")[name]
        rng = random.Random(name)
        for step in range(25):
            observation = {"step": step, "reward": 0}
            if step:
                observation["lastOpponentAction"] = rng.randrange(3)
            mine = ours(vk.Struct(**observation), vk.Struct(**config))
            if step == 0:
                getattr(module, name)(vk.Struct(**observation), vk.Struct(**config))
                monkeypatch.setattr(module, memory, mine)
                continue
            assert mine == getattr(module, name)(vk.Struct(**observation), vk.Struct(**config))


def test_builtin_callable_starts_a_new_match_at_step_0():
    statistical = vk.builtin_callables("rps")["statistical"]
    config = {"signs": 3}
    statistical({"step": 0}, config)
    for step in range(1, 6):
        move = statistical({"step": step, "lastOpponentAction": 2}, config)
    assert move == 0  # 2 is the mode: one more is 0
    assert statistical({"step": 0}, config) == 0
    assert statistical({"step": 1, "lastOpponentAction": 0}, config) == 1  # the old counts gone
