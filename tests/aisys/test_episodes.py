"""One-agent games as AISysProj environments: a run is one episode on a one-episode engine."""

import importlib
import json
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vecenv.aisys as aisys
from vecenv.aisys import (
    ActionResult,
    AgentDataSummary,
    EnvData,
    EnvInfo,
    EpisodeEnvironment,
    RunData,
    StateError,
)
from vecenv.aisys.common import LiveCache
from vecenv.engine import Engine


def make(cls, config=None):
    return cls(EnvInfo(display_name=cls.__name__, identifier=cls.__name__.lower()), config)


def run_data(state, run_id=1, agent="agent"):
    """The run as the server hands it back: the state through JSON."""
    return RunData(
        action_history=[],
        state=json.loads(json.dumps(state, allow_nan=False)),
        outcome=None,
        run_id=run_id,
        agent_name=agent,
    )


def pick(content, rng):
    """A random action for a request: in range for a discrete game; for a continuous one often
    outside the bounds (the game clips), as a list or a bare number."""
    space = content["action_space"]
    if space["discrete"]:
        return rng.randint(space["low"], space["high"])
    value = [
        rng.uniform(2 * lo, 2 * hi) for lo, hi in zip(space["low"], space["high"], strict=True)
    ]
    return value[0] if rng.random() < 0.3 else value


def play(env, state, rng, limit=2000):
    """A run played to its end: (requests, actions, results)."""
    requests, actions, results = [], [], []
    while True:
        rd = run_data(state)
        content = env.get_action_request(rd).content
        assert json.loads(json.dumps(content, allow_nan=False)) == content
        action = pick(content, rng)
        result = env.act(action, rd)
        assert result.new_state is not None, result.message
        assert result.new_state["actions"][:-1] == rd.state["actions"]
        requests.append(content)
        actions.append(action)
        results.append(result)
        state = result.new_state
        if result.outcome is not None:
            return requests, actions, results
        assert len(actions) < limit


def observation(engine):
    (field,) = engine.observation
    return engine.obs[field.name][0, 0].copy()


CASES = [
    ("cartpole", {}),
    ("cartpole", {"sutton_barto_reward": True, "max_steps": 30}),
    ("pendulum", {"g": 9.0, "max_steps": 60}),
    ("mountaincar_continuous", {"max_steps": 40}),
    # a parameter that leaves the state record's layout alone: no second compile of the game
    ("catch", {"spawn_probability": 0.5, "max_steps": 40}),
]


@pytest.mark.parametrize(("game", "config"), CASES, ids=[f"{g}-{len(c)}" for g, c in CASES])
def test_runs_are_the_engines_episodes(game, config):
    cls = aisys.environment_class(game)
    env = make(cls, config)
    configuration = {k: v for k, v in config.items() if k != "max_steps"}
    for seed in (0, 5):
        rng = random.Random(seed)
        state = env.new_run(seed=seed)
        assert state == {
            "game": game,
            "configuration": configuration,
            "seed": seed,
            "max_steps": env.max_steps,
            "actions": [],
        }
        requests, actions, results = play(env, state, rng)

        engine = Engine(
            game,
            seed=seed,
            autoreset="disabled",
            max_episode_steps=env.max_steps,
            **configuration,
        )
        total = 0.0
        for step, (request, action, result) in enumerate(
            zip(requests, actions, results, strict=True)
        ):
            expected = observation(engine)
            got = np.asarray(request["observation"], dtype=expected.dtype)
            np.testing.assert_array_equal(got, expected)
            assert request["step"] == step and request["max_steps"] == env.max_steps
            if engine.action.discrete:
                batch = np.array([action])
            else:
                batch = np.array(action, dtype=np.float64).reshape(1, *engine.action.shape)
            _, rewards, terminated, truncated = engine.step(batch)
            reward = float(rewards[0, 0])
            total += reward
            assert result.action_extra_info == reward
            over = bool(terminated[0] or truncated[0])
            assert (result.outcome is not None) == over
        assert result.outcome == total
        assert "over" in result.message
        assert ("terminated" in result.message) == bool(terminated[0])
        assert ("truncated" in result.message) == bool(truncated[0])
        if "max_steps" in config:
            assert len(actions) <= config["max_steps"]
        if truncated[0]:
            assert len(actions) == env.max_steps
        # a finished run takes no more actions
        refused = env.act(requests[-1]["action_space"]["low"], run_data(result.new_state))
        assert refused.new_state is None and "over" in refused.message


@pytest.mark.parametrize("game", ["cartpole", "pendulum"])
def test_replay_from_json_equals_the_live_run(game):
    """A state played again in a fresh environment (an empty cache) continues exactly as the
    environment that made it, and the same state always gives the same result."""
    cls = aisys.environment_class(game)
    live = make(cls)
    state = live.new_run(seed=21)
    rng = random.Random(4)
    for _ in range(12):
        rd = run_data(state)
        request = live.get_action_request(rd)
        assert make(cls).get_action_request(rd) == request
        action = pick(request.content, rng)
        a = live.act(action, rd)
        b = make(cls).act(action, rd)
        c = live.act(action, rd)  # the same state again: played again, the same result
        assert a == b == c
        if a.outcome is not None:
            break
        state = a.new_state


def test_percepts():
    cart = make(aisys.CartPole)
    content = cart.get_action_request(run_data(cart.new_run(seed=1))).content
    assert content["action_space"] == {"discrete": True, "low": 0, "high": 1}
    assert len(content["observation"]) == 4 and content["step"] == 0
    assert content["max_steps"] == 500  # gymnasium's max_episode_steps
    pendulum = make(aisys.Pendulum)
    content = pendulum.get_action_request(run_data(pendulum.new_run(seed=1))).content
    assert content["action_space"] == {
        "discrete": False,
        "shape": [1],
        "low": [-2.0],
        "high": [2.0],
    }
    catch = make(aisys.Catch)
    content = catch.get_action_request(run_data(catch.new_run(seed=1))).content
    assert np.asarray(content["observation"]).shape == (10, 5)
    assert content["max_steps"] == 1000  # a continuing game: the default limit
    taxi = make(aisys.Taxi)
    content = taxi.get_action_request(run_data(taxi.new_run(seed=1))).content
    assert isinstance(content["observation"], int) and 0 <= content["observation"] < 500


garbage = st.one_of(
    st.text(max_size=4),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(),
    st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=3),
    st.lists(st.lists(st.integers(-3, 3), max_size=2), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    st.just([True]),
    st.just(["1.0"]),
    st.just([1e300]),
    st.just(10**400),
)


def _valid(game, action):
    """Whether the environment must take ``action`` (what the tests expect of it)."""
    if game == "cartpole":
        return type(action) is int and action in (0, 1)
    values = action if isinstance(action, list) and len(action) == 1 else [action]
    if len(values) != 1 or isinstance(values[0], bool) or not isinstance(values[0], (int, float)):
        return False
    try:
        value = float(values[0])
    except OverflowError:
        return False
    return math.isfinite(value) and abs(value) <= float(np.finfo(np.float32).max)


_BAD = {}
for _game in ("cartpole", "pendulum"):
    _env = make(aisys.environment_class(_game))
    _state = _env.new_run(seed=4)
    _state = _env.act(1, run_data(_state)).new_state
    _BAD[_game] = (_env, _state, make(aisys.environment_class(_game)).act(0, run_data(_state)))


@settings(max_examples=40, deadline=None)
@given(game=st.sampled_from(sorted(_BAD)), action=garbage)
def test_bad_actions_change_nothing(game, action):
    env, state, following = _BAD[game]
    before = json.loads(json.dumps(state))
    rd = run_data(before)
    request = env.get_action_request(rd)
    result = env.act(action, rd)
    assert isinstance(result, ActionResult)
    if _valid(game, action):
        assert result.new_state is not None and result.new_state["actions"][-1] is not None
        return
    assert result.new_state is None and result.outcome is None
    assert result.message.startswith("Invalid action")
    assert rd.state == before == state
    assert env.get_action_request(run_data(before)) == request
    assert env.act(0, run_data(before)) == following  # the run goes on as if nothing happened


@pytest.mark.parametrize(
    "action",
    [True, False, 1.0, "1", None, [1], -1, 2, 10**30],
)
def test_bad_discrete_actions(action):
    env, state, _ = _BAD["cartpole"]
    result = env.act(action, run_data(state))
    assert result.new_state is None and result.message.startswith("Invalid action")


@pytest.mark.parametrize(
    "action",
    [
        float("nan"),
        [float("inf")],
        [1.0, 2.0],
        [[1.0]],
        [],
        [True],
        True,
        "0.5",
        ["0.5"],
        {"torque": 1.0},
        None,
        1e39,
        [-1e39],
        10**400,
    ],
)
def test_bad_continuous_actions(action):
    env, state, _ = _BAD["pendulum"]
    result = env.act(action, run_data(state))
    assert result.new_state is None and result.message.startswith("Invalid action")


def test_out_of_bounds_continuous_actions_are_clipped_by_the_game():
    env = make(aisys.Pendulum)
    state = env.new_run(seed=2)
    wide = env.act([7.5], run_data(state))
    edge = env.act(2, run_data(state))
    assert wide.new_state["actions"] == [[7.5]] and edge.new_state["actions"] == [[2.0]]
    assert env.get_action_request(run_data(wide.new_state)) == env.get_action_request(
        run_data(edge.new_state)
    )


def test_bad_states_are_refused():
    env = make(aisys.CartPole)
    state = env.new_run(seed=1)
    for action in (0, 1, 0):
        state = env.act(action, run_data(state)).new_state
    other = make(aisys.Catch).act(0, run_data(state))
    assert other.new_state is None and "cannot be continued" in other.message
    for bad in (
        [1, 2],
        "state",
        dict(state, game="acrobot"),
        dict(state, seed=-1),
        dict(state, seed=2**53),
        dict(state, seed="1"),
        dict(state, seed=True),
        dict(state, max_steps=0),
        dict(state, max_steps=2),  # fewer than the actions taken
        dict(state, configuration=[1]),
        dict(state, configuration={"gravity": 1.0}),
        dict(state, configuration={"seed": 3}),  # an engine keyword, not a parameter
        dict(state, configuration={"episodeSteps": "many"}),
        dict(state, actions="0,1"),
        dict(state, actions=[0, 2]),
        dict(state, actions=[0, True]),
        dict(state, actions=[0, None]),
        dict(state, actions=[0] * 100),  # past the episode's end (the pole falls)
        dict(state, actions=[0, 1] * 300),  # more than max_steps
        dict(state, extra=1),
        {k: v for k, v in state.items() if k != "seed"},
    ):
        fresh = make(aisys.CartPole)
        result = fresh.act(0, run_data(bad))
        assert result.new_state is None and "cannot be continued" in result.message, bad
        with pytest.raises(StateError):
            fresh.get_action_request(run_data(bad))
        with pytest.raises(ValueError):
            fresh.view_run(run_data(bad))


def test_a_state_that_is_no_json_is_refused():
    env = make(aisys.CartPole)
    state = dict(env.new_run(seed=1), actions={0})
    rd = RunData(action_history=[], state=state, outcome=None, run_id=1, agent_name="a")
    result = env.act(0, rd)
    assert result.new_state is None and "cannot be continued" in result.message


def test_max_steps_truncates_with_an_outcome():
    env = make(aisys.Catch, {"max_steps": 5})
    state = env.new_run(seed=0)
    rewards = []
    for step in range(5):
        result = env.act(1, run_data(state))
        state = result.new_state
        rewards.append(result.action_extra_info)
        assert (result.outcome is None) == (step < 4)
    assert "truncated at max_steps 5" in result.message
    assert result.outcome == sum(rewards)
    assert env.act(1, run_data(state)).new_state is None


def test_config_and_settings():
    for bad in (
        [1],
        {"max_steps": 0},
        {"max_steps": 2.5},
        {"max_steps": True},
        {"max_steps": 10**6},
        {"gravity": 1.0},
        {"num_envs": 4},
        {"episodeSteps": -1},
        {"sutton_barto_reward": "yes"},
    ):
        with pytest.raises(ValueError):
            make(aisys.CartPole, bad)
    assert make(aisys.CartPole, {"episodeSteps": 50}).max_steps == 50
    assert make(aisys.CartPole, {"episodeSteps": 50, "max_steps": 70}).max_steps == 70
    assert make(aisys.MountainCar).max_steps == 200
    assert make(aisys.Taxi).max_steps == 1000
    with pytest.raises(TypeError):
        EpisodeEnvironment(EnvInfo("x", "x"), None)  # played through a game's class
    with pytest.raises(ValueError):
        aisys.CartPole(EnvInfo("x", "x"), None).new_run(seed=-1)

    for game in aisys.games():
        cls = aisys.environment_class(game)
        s = cls.settings
        assert issubclass(cls, aisys.GenericEnvironment)
        assert s.RATING_OBJECTIVE == "max" and s.NUMBER_OF_ACTION_REQUESTS == 5
        assert s.MIN_RUNS_FOR_FULLY_EVALUATED == 20 and s.INITIAL_RATING == 0
    assert aisys.CartPole.settings.CAN_ABANDON_RUNS is True
    assert aisys.MountainCarContinuous.settings.CAN_ABANDON_RUNS is False
    assert aisys.GameEnvironment.CACHE_SIZE == EpisodeEnvironment.CACHE_SIZE == 1024


def test_abandon_outcome_is_the_worst_return_left():
    env = make(aisys.CartPole, {"max_steps": 100})
    state = env.new_run(seed=3)
    for _ in range(3):
        state = env.act(0, run_data(state)).new_state
    assert env.get_abandon_outcome(run_data(state)) == 3 - 97  # rewards of at least -1 each
    pendulum = make(aisys.Pendulum, {"max_steps": 10})
    first = pendulum.act(0.5, run_data(pendulum.new_run(seed=0)))
    worst = pendulum.get_abandon_outcome(run_data(first.new_state))
    assert worst == first.action_extra_info + 9 * -16.2736044
    mcc = make(aisys.MountainCarContinuous)
    with pytest.raises(NotImplementedError):
        mcc.get_abandon_outcome(run_data(mcc.new_run(seed=0)))


def test_every_game_has_a_class_that_plays():
    names = aisys.class_names()
    assert sorted(names.values()) == sorted(aisys.games())
    assert len(names) == len(set(names))
    assert {"cartpole", "catch", "connectx", "pendulum", "taxi"} <= set(aisys.games())
    for name, game in names.items():
        cls = aisys.environment_class(game)
        assert aisys.environment_class(game) is cls
        module, _, attr = f"vecenv.aisys:{name}".partition(":")
        assert getattr(importlib.import_module(module), attr) is cls
        assert cls.__name__ == name and cls.game == game
        assert name in dir(aisys)
        env = make(cls)
        state = env.new_run(seed=1)
        rd = run_data(state)
        content = env.get_action_request(rd).content
        json.dumps(content, allow_nan=False)
        if "legal" in content:
            action = content["legal"][0]
        elif content["action_space"]["discrete"]:
            action = content["action_space"]["low"]
        else:
            action = [0.0] * math.prod(content["action_space"]["shape"])
        result = env.act(action, rd)
        assert result.new_state is not None, (game, result.message)
        json.dumps(result.new_state, allow_nan=False)
    assert aisys.environment_class("CartPole-v1") is aisys.CartPole
    assert aisys.environment_class("vecenv/Catch-v0") is aisys.Catch
    assert aisys.environment_class("connectx") is aisys.ConnectX
    with pytest.raises(ValueError):
        aisys.environment_class("no_such_game")
    with pytest.raises(AttributeError):
        aisys.NoSuchGame  # noqa: B018


def test_view_run_and_pages():
    env = make(aisys.CartPole)
    state = env.new_run(seed=6)
    for action in (0, 1, 1):
        result = env.act(action, run_data(state))
        state = result.new_state
    page = env.view_run(run_data(state, run_id=9, agent="<b>me</b>"))
    assert page.lower().startswith("<!doctype html")
    assert page.count("<tr>") == 1 + 3  # the header and one row per step
    assert "data:image/png;base64," in page
    assert "&lt;b&gt;me&lt;/b&gt;" in page and "<b>me</b>" not in page
    assert "running" in page

    evil = "<script>alert(1)</script>"
    agents = [
        AgentDataSummary("low", 10.0, 10.0, [], 30, True),
        AgentDataSummary(evil, 400.0, 390.0, [], 30, True),
    ]
    html = env.view_env(EnvData(agents=agents, recent_runs=[]))
    assert "<script>" not in html and html.index("&lt;script&gt;") < html.index("low")
    assert "max_steps: 500" in html
    agent_html = env.view_agent(agents[1])
    assert "<script>" not in agent_html and "400.000" in agent_html


def test_live_cache_evicts_the_least_recently_used():
    cache = LiveCache(2)
    built = []

    def rebuild(state):
        built.append(state["n"])
        return state["n"]

    for n in (1, 2, 1, 3):  # 1 is used again, so 2 goes when 3 comes
        cache.find({"n": n}, rebuild)
    assert built == [1, 2, 3] and len(cache) == 2
    cache.find({"n": 1}, rebuild)
    cache.find({"n": 2}, rebuild)
    assert built == [1, 2, 3, 2]
    with pytest.raises(ValueError):
        LiveCache(0)
