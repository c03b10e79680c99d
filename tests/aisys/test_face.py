"""The AISysProj face: runs played through ``vecenv.aisys`` environments."""

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vecenv import aisys, kaggle
from vecenv.aisys import (
    AbbreviatedRunData,
    ActionResult,
    AgentDataSummary,
    EnvData,
    EnvInfo,
    RunData,
)
from vecenv.opponent import OpponentEngine

GAMES = [
    (aisys.ConnectX, "connectx", {"opponent": "negamax", "configuration": {"rows": 5}}),
    (aisys.TicTacToe, "tictactoe", {"opponent": "reaction"}),
    (
        aisys.RockPaperScissors,
        "rps",
        {"opponent": "statistical", "configuration": {"episodeSteps": 25}},
    ),
]


def make(cls, config=None):
    return cls(EnvInfo(display_name=cls.__name__, identifier=cls.__name__.lower()), config)


def run_data(state, run_id=1, agent="agent"):
    """The run as the server would hand it back: the state through JSON."""
    return RunData(
        action_history=[],
        state=json.loads(json.dumps(state)),
        outcome=None,
        run_id=run_id,
        agent_name=agent,
    )


def play(env, state, pick, check=None):
    """Play a run to its end; returns (final state, outcome, agent moves, results)."""
    moves, results = [], []
    while True:
        rd = run_data(state)
        request = env.get_action_request(rd)
        content = json.loads(json.dumps(request.content))
        assert content == request.content
        move = pick(content)
        result = env.act(move, rd)
        assert result.new_state is not None, result.message
        if check is not None:
            check(rd, result)
        moves.append(move)
        results.append(result)
        state = result.new_state
        if result.outcome is not None:
            return state, result.outcome, moves, results
        assert len(moves) < 2000


def engine_outcome(game, config, seat, seed, moves):
    """The agent's summed reward for ``moves`` on an ``OpponentEngine`` with the same seed."""
    configuration = config.get("configuration", {})
    engine = OpponentEngine(
        game,
        seed=seed,
        opponent=config["opponent"],
        seat=seat,
        autoreset="disabled",
        **configuration,
    )
    total = 0.0
    for move in moves:
        _, rewards, terminated, truncated = engine.step(np.array([move]))
        total += float(rewards[0, 0])
        if terminated[0] or truncated[0]:
            break
    return total, bool(terminated[0] or truncated[0])


def kaggle_replay(game, configuration, steps):
    env = kaggle.make(game, configuration=configuration)
    for step in steps:
        env.step([0 if a is None else a for a in step])
    return env


@pytest.mark.parametrize("seat", [0, 1])
@pytest.mark.parametrize(("cls", "game", "config"), GAMES, ids=[g[1] for g in GAMES])
def test_full_runs_match_the_engine_and_kaggle(cls, game, config, seat):
    env = make(cls, dict(config, seat=seat))
    for seed in range(3):
        rng = random.Random(seed)
        state = env.new_run(seed=seed)
        assert json.loads(json.dumps(state)) == state
        assert state["seat"] == seat and state["seed"] == seed
        if seat == 1 and game != "rps":  # the opponent's opening is already played
            assert len(state["steps"]) == 1 and state["steps"][0][0] is not None
        else:
            assert state["steps"] == []

        def check(rd, result):
            # the state grew by the agent's move and the opponent's replies, nothing else
            before = rd.state["steps"]
            assert result.new_state["steps"][: len(before)] == before
            assert len(result.new_state["steps"]) > len(before)

        final, outcome, moves, results = play(
            env, state, lambda c, rng=rng: rng.choice(c["legal"]), check
        )
        total, ended = engine_outcome(game, config, seat, seed, moves)
        assert ended
        assert outcome == total
        replay = kaggle_replay(game, config.get("configuration"), final["steps"])
        assert replay.done
        assert outcome == replay.state[seat].reward
        assert replay.state[seat].status == "DONE"
        assert all(r.outcome is None for r in results[:-1])
        assert results[-1].message and "over" in results[-1].message
        # a finished run takes no more actions
        refused = env.act(0, run_data(final))
        assert refused.new_state is None and refused.outcome is None


@pytest.mark.parametrize(("cls", "game", "config"), GAMES, ids=[g[1] for g in GAMES])
def test_replay_from_json_equals_the_live_match(cls, game, config):
    """A state played again (a fresh environment: no cached match) continues exactly as the
    environment that made it, and the same state always gives the same reply."""
    live, cold = make(cls, config), make(cls, config)
    state = live.new_run(seed=11)
    rng = random.Random(3)
    for _ in range(6):
        rd = run_data(state)
        request = live.get_action_request(rd)
        assert make(cls, config).get_action_request(rd) == request
        move = rng.choice(request.content["legal"])
        a = live.act(move, rd)
        b = make(cls, config).act(move, rd)
        c = live.act(move, rd)  # the same state again: played again, same reply
        assert a == b == c
        assert cold.act(move, run_data(state)) == a
        if a.outcome is not None:
            break
        state = a.new_state


def test_observation_is_kaggles():
    env = make(aisys.ConnectX, {"opponent": "random", "seat": 1, "configuration": {"rows": 5}})
    state = env.new_run(seed=2)
    content = env.get_action_request(run_data(state)).content
    assert content["observation"]["mark"] == 2
    assert content["observation"]["step"] == 1
    board = content["observation"]["board"]
    assert len(board) == 5 * 7 and board.count(1) == 1 and board.count(2) == 0
    opening = state["steps"][0][0]
    assert board[4 * 7 + opening] == 1  # the opponent's checker at the bottom of its column
    assert content["legal"] == list(range(7))
    assert content["configuration"]["rows"] == 5


def test_full_column_and_occupied_cell_are_refused():
    env = make(aisys.ConnectX, {"configuration": {"rows": 2, "columns": 6, "inarow": 3}})
    state = env.new_run(seed=0)
    for _ in range(2):  # fill column 0 (the opponent may fill it too)
        request = env.get_action_request(run_data(state)).content
        if 0 not in request["legal"]:
            break
        result = env.act(0, run_data(state))
        state = result.new_state
        if result.outcome is not None:
            pytest.skip("the game ended early")
    assert 0 not in env.get_action_request(run_data(state)).content["legal"]
    result = env.act(0, run_data(state))
    assert result.new_state is None and "not legal" in result.message

    ttt = make(aisys.TicTacToe, {"opponent": "random"})
    state = ttt.act(4, run_data(ttt.new_run(seed=1))).new_state
    result = ttt.act(4, run_data(state))
    assert result == ActionResult.error(result.message)
    assert result.new_state is None and "4" in result.message


garbage = st.one_of(
    st.text(max_size=5),
    st.floats(allow_nan=True),
    st.none(),
    st.booleans(),
    st.integers().filter(lambda n: not 0 <= n <= 8),
    st.lists(st.integers(0, 8), max_size=3),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(action=garbage)
def test_garbage_actions_change_nothing(action):
    env = _GARBAGE_ENV
    before = json.loads(json.dumps(_GARBAGE_STATE))
    rd = run_data(before)
    request = env.get_action_request(rd)
    result = env.act(action, rd)
    assert isinstance(result, ActionResult)
    assert result.new_state is None and result.outcome is None
    assert result.message and result.message.startswith("Invalid action")
    assert rd.state == before == _GARBAGE_STATE
    assert env.get_action_request(run_data(before)) == request
    # the run goes on as if nothing happened
    assert env.act(2, run_data(before)) == _GARBAGE_NEXT


_GARBAGE_ENV = make(aisys.TicTacToe, {"opponent": "random", "seat": 1})
_GARBAGE_STATE = _GARBAGE_ENV.new_run(seed=4)
_GARBAGE_NEXT = make(aisys.TicTacToe, {"opponent": "random", "seat": 1}).act(
    2, run_data(_GARBAGE_STATE)
)


def test_bad_states_are_refused_not_crashed():
    env = make(aisys.TicTacToe, {"opponent": "random"})
    state = env.new_run(seed=1)
    state = env.act(0, run_data(state)).new_state
    forged = dict(state, steps=[list(s) for s in state["steps"]])
    forged["steps"][1][1] = (forged["steps"][1][1] + 1) % 9  # not the opponent's move
    if forged["steps"][1][1] == 0:
        forged["steps"][1][1] = 5
    result = make(aisys.TicTacToe, {"opponent": "random"}).act(1, run_data(forged))
    assert result.new_state is None and "cannot be continued" in result.message
    other = make(aisys.ConnectX).act(0, run_data(state))
    assert other.new_state is None
    for bad in (
        dict(state, seat=3),
        dict(state, seed=-1),
        dict(state, opponent="nobody"),
        dict(state, configuration=[1]),
        dict(state, steps="x"),
        dict(state, steps=[[9, None]]),
        dict(state, steps=state["steps"][:1]),  # stops while the opponent is to move
    ):
        result = env.act(1, run_data(bad))
        assert result.new_state is None and "cannot be continued" in result.message


def test_config_and_settings():
    with pytest.raises(ValueError):
        make(aisys.ConnectX, {"opponent": "nobody"})
    with pytest.raises(ValueError):
        make(aisys.ConnectX, {"seat": 2})
    with pytest.raises(ValueError):
        make(aisys.ConnectX, {"colour": "red"})
    with pytest.raises(kaggle.InvalidArgument):
        make(aisys.ConnectX, {"configuration": {"rows": "five"}})
    env = make(aisys.RockPaperScissors, None)
    assert env.opponent == "rock"  # the game's first built-in agent
    alternate = make(aisys.TicTacToe, {"seat": "alternate"})
    assert {alternate.new_run(seed=s)["seat"] for s in (2, 3)} == {0, 1}
    for cls in (aisys.ConnectX, aisys.TicTacToe, aisys.RockPaperScissors):
        s = cls.settings
        assert issubclass(cls, aisys.GenericEnvironment)
        assert s.RATING_OBJECTIVE == "max" and s.INITIAL_RATING == 0
        assert s.MIN_RUNS_FOR_FULLY_EVALUATED == 20 and s.NUMBER_OF_ACTION_REQUESTS == 5
        assert s.CAN_ABANDON_RUNS is True
    assert env.get_abandon_outcome(run_data(env.new_run(seed=0))) == -1
    assert ActionResult.error("no") == ActionResult(None, "no", None, None)


def test_views_escape_and_show():
    env = make(aisys.ConnectX, {"opponent": "random"})
    state = env.new_run(seed=7)
    final, outcome, _, _ = play(env, state, lambda c: c["legal"][0])
    page = env.view_run(run_data(final))
    assert page.lstrip().lower().startswith("<!doctype html")
    replay = kaggle_replay("connectx", None, final["steps"])
    assert "<script>" in page  # the player, inline
    # the same page as the Kaggle face's for the same moves, but for the episode's random id
    match_id = page[page.index('"id":"') + 6 :].split('"', 1)[0]
    assert page == replay.render(mode="html").replace(replay.id, match_id)

    evil = "<script>alert(1)</script>"
    runs = [
        AbbreviatedRunData(run_id=1, outcome=1, agent_name=evil),
        AbbreviatedRunData(run_id=2, outcome=None, agent_name="bob"),
    ]
    agents = [
        AgentDataSummary("low", -0.5, -0.5, [], 30, True),
        AgentDataSummary(evil, 0.75, 0.7, runs[:1], 30, True),
        AgentDataSummary("mid", 0.25, 0.2, [], 3, False),
    ]
    html = env.view_env(EnvData(agents=agents, recent_runs=runs))
    assert "<script>" not in html and "&lt;script&gt;" in html
    # fully evaluated agents best first, then the others
    order = [html.index(n) for n in ("&lt;script&gt;", "low", "Not fully evaluated", "mid")]
    assert order == sorted(order)
    assert 'href="/agent/connectx/%3Cscript%3Ealert%281%29%3C%2Fscript%3E"' in html
    assert 'href="/run/connectx/2"' in html
    assert "0.750" in html and "running" in html and "bob" in html
    agent_html = env.view_agent(agents[1])
    assert "<script>" not in agent_html and "&lt;script&gt;" in agent_html
    assert "0.750" in agent_html and "30" in agent_html


STUB_INTERFACE = """
import abc
import dataclasses
from typing import Any, Optional

from aisysprojserver.env_settings import EnvSettings


@dataclasses.dataclass(frozen=True)
class ActionResult:
    new_state: Any = None
    message: Optional[str] = None
    action_extra_info: Any = None
    outcome: Any = None

    @classmethod
    def error(cls, message):
        return cls(new_state=None, message=message)


@dataclasses.dataclass(frozen=True)
class ActionRequest:
    content: Any


@dataclasses.dataclass(frozen=True)
class ActionHistoryEntry:
    action: Any
    extra_info: Any


@dataclasses.dataclass(frozen=True)
class RunData:
    action_history: list
    state: Any
    outcome: Any
    run_id: int
    agent_name: str


@dataclasses.dataclass(frozen=True)
class AbbreviatedRunData:
    run_id: int
    outcome: Any
    agent_name: str


@dataclasses.dataclass(frozen=True)
class AgentDataSummary:
    agent_name: str
    agent_rating: float
    current_agent_rating: float
    recent_runs: list
    total_number_of_runs: int
    fully_evaluated: bool


@dataclasses.dataclass(frozen=True)
class EnvData:
    agents: list
    recent_runs: list


@dataclasses.dataclass(frozen=True)
class EnvInfo:
    display_name: str
    identifier: str


class GenericEnvironment(abc.ABC):
    settings = EnvSettings()

    def __init__(self, env_info, config_json):
        self.env_info = env_info
        self.config_json = config_json

    @abc.abstractmethod
    def act(self, action, run_data): ...

    @abc.abstractmethod
    def new_run(self): ...

    @abc.abstractmethod
    def get_action_request(self, run_data): ...
"""

STUB_SETTINGS = """
class EnvSettings:
    INITIAL_RATING = 0.0
    RATING_STRATEGY = "average"
    MIN_RUNS_FOR_FULLY_EVALUATED = 50
    RATING_OBJECTIVE = "max"
    NUMBER_OF_ACTION_REQUESTS = 5
    CAN_ABANDON_RUNS = False
    STORE_ACTION_HISTORY = True
    DESCRIPTION = ""
"""

PLUGIN_CHECK = """
import importlib
import json

from aisysprojserver import env_interface as server
from aisysprojserver.env_settings import EnvSettings

module_name, _, attr = "vecenv.aisys:ConnectX".partition(":")
cls = getattr(importlib.import_module(module_name), attr)
assert issubclass(cls, server.GenericEnvironment), cls.__mro__
assert isinstance(cls.settings, EnvSettings)
import vecenv.aisys as face
for name in ("RunData", "ActionResult", "ActionRequest", "EnvInfo", "EnvData"):
    assert getattr(face, name) is getattr(server, name), name
env = cls(server.EnvInfo("Connect X", "connectx"), {"opponent": "negamax", "seat": 1})
state = env.new_run()
while True:
    rd = server.RunData([], json.loads(json.dumps(state)), None, 1, "stub")
    request = env.get_action_request(rd)
    assert isinstance(request, server.ActionRequest)
    bad = env.act("left", rd)
    assert isinstance(bad, server.ActionResult) and bad.new_state is None
    result = env.act(request.content["legal"][-1], rd)
    assert isinstance(result, server.ActionResult) and result.new_state is not None
    state = result.new_state
    if result.outcome is not None:
        break
assert result.outcome in (-1, 0, 1)
print("plugin ok", result.outcome)
"""


def test_loads_as_a_server_plugin(tmp_path):
    package = tmp_path / "aisysprojserver"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "env_interface.py").write_text(textwrap.dedent(STUB_INTERFACE))
    (package / "env_settings.py").write_text(textwrap.dedent(STUB_SETTINGS))
    root = Path(__file__).resolve().parents[2]
    path = os.pathsep.join([str(tmp_path), str(root), os.environ.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, "-c", PLUGIN_CHECK],
        env=dict(os.environ, PYTHONPATH=path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "plugin ok" in out.stdout


def test_without_the_server_the_types_are_ours():
    from vecenv.aisys import interface

    if interface.SERVER:
        pytest.skip("aisysprojserver is installed")
    assert RunData.__module__ == "vecenv.aisys.interface"
    with pytest.raises(TypeError):
        interface.GenericEnvironment(EnvInfo("x", "x"), None)  # abstract
