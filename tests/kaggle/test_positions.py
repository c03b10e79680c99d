"""Games started from a given position through ``make(steps=...)``, beside kaggle-environments.

kaggle-environments takes the last step of ``steps`` as the state the game goes on from (each
agent's state filled in and checked by its state schema) and keeps the steps before it as given.
Every position here goes through both faces: the states made, every step played from there,
``run``/``train``/``evaluate``, ``toJSON`` and the text render must be the same. A position the
rules cannot represent is refused with ``InvalidArgument`` naming the agent, the field and why,
where Kaggle plays on from it; what Kaggle's schema refuses, ours refuses too.
"""

import copy
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.kaggle import reference
from tests.kaggle import test_html_replay as replay
from tests.kaggle.common import plain
from vecenv import kaggle as vk

open_page = replay.open_page

SMALL = {"rows": 4, "columns": 5, "inarow": 3}


def both(game, steps, config=None):
    """Our environment and Kaggle's, made from the same ``steps``."""
    ours = vk.make(game, configuration=copy.deepcopy(config), steps=copy.deepcopy(steps))
    theirs = reference.make(game, configuration=copy.deepcopy(config), steps=copy.deepcopy(steps))
    return ours, theirs


def same(ours, theirs):
    assert plain(ours.steps) == plain(theirs.steps)
    assert [s.info for s in ours.state] == [s.info for s in theirs.state]
    assert ours.done == theirs.done
    assert ours.render(mode="ansi") == theirs.render(mode="ansi")


def play_on(ours, theirs, actions):
    """Both step with each action pair while the game runs; same states after each."""
    for pair in actions:
        if ours.done:
            break
        ours.step(list(pair))
        theirs.step(list(pair))
        same(ours, theirs)


def position(board, **agent0):
    """A one-state history: agent 0's state with ``board`` (and more), agent 1's empty."""
    first = {"observation": {"board": board}, **agent0}
    return [[first, {"observation": {}}]]


# ---- positions as Kaggle's own examples use them -------------------------------------------------

# (game, configuration, board, the actions played from it)
POSITIONS = {
    "connectx-full-column": ("connectx", SMALL, [1, 2, 0, 0, 0] * 4, [[1, None], [0, 0]]),
    "connectx-win": ("connectx", SMALL, [0] * 5 + [1, 2, 0, 0, 0] * 3, [[0, None]]),
    "connectx-tie": (
        "connectx",
        SMALL,
        [0, 0, 1, 2, 1] + [1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1],
        [[0, None], [None, 1]],
    ),
    "connectx-default-board": ("connectx", {}, [0] * 42, [[3, 0], [0, 3], [3, 0]]),
    "connectx-no-board": ("connectx", {}, None, [[3, 0], [0, 3]]),
    "connectx-mid-game": ("connectx", {}, [0] * 35 + [1, 2, 1, 2, 0, 0, 0], [[3, 0], [0, 4]]),
    "tictactoe-winning-mark": ("tictactoe", {}, [2, 1, 0, 1, 1, 0, 2, 0, 2], [[7, None]]),
    "tictactoe-occupied": ("tictactoe", {}, [2, 1, 0, 1, 1, 0, 2, 0, 2], [[0, None]]),
    "tictactoe-any-board": ("tictactoe", {}, [1, 1, 1, 1, 0, 0, 0, 0, 0], [[5, 0], [0, 6]]),
}


@pytest.mark.parametrize("case", sorted(POSITIONS))
def test_a_position_plays_on_as_kaggles(case):
    game, config, board, actions = POSITIONS[case]
    steps = [[{}, {}]] if board is None else position(board)
    ours, theirs = both(game, steps, config)
    same(ours, theirs)
    assert len(ours.steps) == 1
    play_on(ours, theirs, actions)
    assert ours.toJSON()["steps"] == theirs.toJSON()["steps"]
    assert ours.toJSON()["rewards"] == theirs.toJSON()["rewards"]


def test_who_moves_follows_the_statuses_given():
    board = [0] * 41 + [1]
    steps = [[{"observation": {"board": board}, "status": "INACTIVE"}, {"status": "ACTIVE"}]]
    ours, theirs = both("connectx", steps)
    assert [s.status for s in ours.state] == ["INACTIVE", "ACTIVE"]
    play_on(ours, theirs, [[0, 6], [5, 0], [0, 6]])
    # Agent 1 (mark 2) moved first, onto the checker given in the corner.
    assert ours.steps[1][0].observation.board[34:42:7] == [2, 1]


@pytest.mark.parametrize(
    "statuses",
    [
        ["ACTIVE", "ACTIVE"],
        ["INACTIVE", "INACTIVE"],
        ["DONE", "ACTIVE"],
        ["INVALID", "DONE"],
        ["ERROR", "ACTIVE"],
        ["TIMEOUT", "INACTIVE"],
    ],
)
@pytest.mark.parametrize("game", ["connectx", "tictactoe", "rps"])
def test_any_statuses_go_on_as_kaggles(game, statuses):
    steps = [[{"status": statuses[0], "reward": None}, {"status": statuses[1]}]]
    config = {"episodeSteps": 5} if game == "rps" else None
    failed = statuses[0] in ("ERROR", "INVALID", "TIMEOUT")
    if game == "rps" and failed and "ACTIVE" in statuses:
        # Kaggle's rps scores a failed agent's sign; our rules read the status as no sign.
        reference.make(game, configuration=config, steps=copy.deepcopy(steps))
        with pytest.raises(vk.InvalidArgument, match="agent 0's status: .* while the match runs"):
            vk.make(game, configuration=config, steps=steps)
        return
    ours, theirs = both(game, steps, config)
    same(ours, theirs)
    if not ours.done:
        play_on(ours, theirs, [[0, 1], [1, 2], [2, 0]])


def test_rps_starts_from_the_scores_and_last_signs_given():
    config = {"episodeSteps": 6, "tieRewardThreshold": 2, "signs": 5}
    first = {"observation": {"lastOpponentAction": 4, "reward": 1}, "reward": 1}
    second = {"observation": {"lastOpponentAction": 3, "reward": -1}, "reward": -1}
    ours, theirs = both("rps", [[first, second]], config)
    same(ours, theirs)
    play_on(ours, theirs, [[1, 0], [0, 1], [2, 2], [4, 3], [3, 4]])
    assert ours.done
    assert ours.toJSON()["rewards"] == theirs.toJSON()["rewards"]


def test_a_longer_history_keeps_its_steps_and_goes_on_from_the_last():
    env = vk.make("connectx")
    for pair in [[3, 0], [0, 3], [4, 0]]:
        env.step(pair)
    history = json.loads(json.dumps(env.toJSON()["steps"]))
    history[1][0]["info"] = {"note": "kept as given"}  # Kaggle keeps earlier steps unchecked
    ours, theirs = both("connectx", history)
    same(ours, theirs)
    assert ours.steps[1][0].info == {"note": "kept as given"}
    play_on(ours, theirs, [[0, 2], [5, 0], [0, 2]])


def test_what_a_state_adds_stays_in_later_states_as_in_kaggle():
    steps = [
        [
            {"observation": {"board": [0] * 9, "mine": [1]}, "info": {"a": 1}},
            {"observation": {"board": [1] + [0] * 8}},  # Kaggle reads only agent 0's board
        ]
    ]
    ours, theirs = both("tictactoe", steps)
    same(ours, theirs)
    play_on(ours, theirs, [[4, 0], [0, 0]])
    assert ours.state[0].observation.mine == [1]
    assert ours.state[1].observation.board == [1] + [0] * 8


def test_banked_overage_and_failed_states_are_kaggles_after_its_schema():
    first = {"observation": {"remainingOverageTime": 7.5}, "action": None, "reward": None}
    second = {"observation": {"remainingOverageTime": 3}, "status": "ACTIVE"}
    ours, theirs = both("connectx", [[first, second]])
    same(ours, theirs)
    # Kaggle's schema fills a None action and reward with their defaults.
    assert (ours.state[0].action, ours.state[0].reward) == (0, 0)
    assert [s.observation.remainingOverageTime for s in ours.state] == [7.5, 3]
    ours.step([0, 0], [{"duration": 4}, {}])
    assert ours.state[0].observation.remainingOverageTime == 5.5


# ---- run, train, evaluate, toJSON, clone and the replay from a position -------------------------


def test_run_from_one_state_starts_over_and_from_a_history_goes_on(monkeypatch):
    one = position([0] * 35 + [1, 2, 1, 2, 0, 0, 0])
    ours, theirs = both("connectx", one)
    first = lambda obs, config: next(c for c in range(7) if obs.board[c] == 0)  # noqa: E731
    assert plain(ours.run([first, first])) == plain(theirs.run([first, first]))
    assert ours.steps[0][0].observation.board == [0] * 42  # Kaggle's run: len(steps) == 1 resets
    two = json.loads(json.dumps(ours.toJSON()["steps"][:3]))
    ours, theirs = both("connectx", two)
    assert plain(ours.run([first, first])) == plain(theirs.run([first, first]))
    assert plain(ours.steps[:3]) == plain(two)


def test_train_and_evaluate_from_a_position_are_kaggles():
    one = position([1, 2, 0, 0, 0] * 4)
    ours, theirs = both("connectx", one, SMALL)
    ours_trainer, theirs_trainer = ours.train([None, "negamax"]), theirs.train([None, "negamax"])
    assert ours_trainer.reset() == theirs_trainer.reset()
    assert ours_trainer.step(2)[1:3] == theirs_trainer.step(2)[1:3]
    random.seed(3)
    rewards = vk.evaluate("connectx", ["negamax", "negamax"], SMALL, steps=one, num_episodes=2)
    assert rewards == reference.kaggle().evaluate(
        "connectx", ["negamax", "negamax"], SMALL, steps=one, num_episodes=2
    )


def test_to_json_and_clone_of_a_position_go_on_alike():
    ours, theirs = both("tictactoe", position([1, 0, 0, 0, 2, 0, 0, 0, 0]))
    mine, want = ours.toJSON(), theirs.toJSON()
    for key in ("steps", "rewards", "statuses", "configuration"):
        assert mine[key] == want[key]
    twin = ours.clone()
    for env in (ours, twin):
        env.step([8, 0])
    assert plain(twin.steps) == plain(ours.steps)


def test_exported_game_starts_from_a_position_as_kaggles_own():
    kaggle = reference.kaggle()
    kaggle.register("vecenv_connectx", vk.export("connectx"))
    steps = position([0] * 5 + [1, 2, 0, 0, 0] * 3)
    exported = kaggle.make("vecenv_connectx", configuration=SMALL, steps=copy.deepcopy(steps))
    own = reference.make("connectx", configuration=SMALL, steps=copy.deepcopy(steps))
    for pair in [[2, 0], [0, 2], [0, 0]]:
        if own.done:
            break
        exported.step(list(pair))
        own.step(list(pair))
    assert plain(exported.steps) == plain(own.steps)
    assert exported.render(mode="ansi") == own.render(mode="ansi")


def test_the_replay_shows_the_position_and_the_moves_after_it(open_page):
    board = [0] * 10 + [1, 2, 0, 0, 0, 1, 2, 0, 0, 0]
    env = vk.make("connectx", configuration=SMALL, steps=position(board))
    env.step([2, 0])
    opened = open_page(env.render(mode="html"))
    for step in (0, 1):
        state = opened.show(step)
        shown = env.steps[step][0].observation.board
        replay._assert_grid_colours(opened, state, shown, 4, 5, replay.CONNECTX_FILLS)


# ---- refusals ------------------------------------------------------------------------------------

# Positions Kaggle plays on from that the rules cannot represent: (game, config, steps, the words
# the error must name).
UNREPRESENTABLE = {
    "board-too-short": ("connectx", {}, position([0] * 5), "observation.board: has 5 values"),
    "board-too-long": ("tictactoe", {}, position([0] * 10), None),  # Kaggle's maxItems: both refuse
    "no-such-mark": ("connectx", SMALL, position([3] + [0] * 19), "observation.board[0]: 3"),
    "floating": ("connectx", SMALL, position([1] + [0] * 19), "floats above an empty cell"),
    "not-numbers": ("connectx", SMALL, position([None] * 20), "observation.board"),
    "swapped-marks": (
        "connectx",
        {},
        [[{"observation": {"mark": 2}}, {"observation": {"mark": 1}}]],
        "agent 0's observation.mark",
    ),
    "second-marks-first": (
        "tictactoe",
        {},
        [[{}, {"observation": {"mark": 1}}]],
        "agent 1's observation.mark",
    ),
    "step-not-its-index": (
        "connectx",
        {},
        [[{"observation": {"step": 4}}, {}]],
        "observation.step is 4",
    ),
    "one-sided-signs": (
        "rps",
        {},
        [[{"observation": {"lastOpponentAction": 1}}, {}]],
        "agent 1's observation.lastOpponentAction",
    ),
    "sign-past-the-configuration": (
        "rps",
        {"signs": 3},
        [[{"observation": {"lastOpponentAction": 4}}, {"observation": {"lastOpponentAction": 0}}]],
        "agent 0's observation.lastOpponentAction[]: 4 is outside",
    ),
    "score-past-the-episode": (
        "rps",
        {"episodeSteps": 3},
        [[{"observation": {"reward": 5}}, {}]],
        "observation.reward",
    ),
}


@pytest.mark.parametrize("case", sorted(UNREPRESENTABLE))
def test_a_position_the_rules_cannot_represent_is_refused_by_name(case):
    game, config, steps, words = UNREPRESENTABLE[case]
    kaggle_refuses = False
    try:
        reference.make(game, configuration=copy.deepcopy(config), steps=copy.deepcopy(steps))
    except reference.kaggle().errors.InvalidArgument:
        kaggle_refuses = True
    assert kaggle_refuses == (words is None)
    with pytest.raises(vk.InvalidArgument) as raised:
        vk.make(game, configuration=config, steps=copy.deepcopy(steps))
    if words is not None:
        assert words.replace("[]", "") in str(raised.value)
        assert "step 0" in str(raised.value)


# What Kaggle's state schema refuses, both refuse; what it fills in, both fill in.
SCHEMA_CASES = {
    "unknown-status": [[{"status": "WINNING"}, {}]],
    "reward-outside-its-enum": [[{"reward": 0.5}, {}]],
    "unknown-key": [[{"score": 3}, {}]],
    "mark-outside-its-enum": [[{"observation": {"mark": 3}}, {}]],
    "negative-overage": [[{"observation": {"remainingOverageTime": -1}}, {}]],
    "action-not-an-integer": [[{"action": "left"}, {}]],
    "board-not-an-array": [[{"observation": {"board": 3}}, {}]],  # no: Kaggle takes its default
    "three-agents": [[{}, {}, {}]],
    "no-agents": [[]],
}


@pytest.mark.parametrize("case", sorted(SCHEMA_CASES))
def test_kaggles_state_schema_refuses_and_fills_in_alike(case):
    steps = SCHEMA_CASES[case]
    try:
        reference.make("connectx", steps=copy.deepcopy(steps))
    except reference.kaggle().errors.InvalidArgument as exc:
        with pytest.raises(vk.InvalidArgument) as raised:
            vk.make("connectx", steps=copy.deepcopy(steps))
        assert str(raised.value).split(":")[0] == str(exc).split(":")[0]
        return
    # Kaggle takes it (an array field given as no array takes its default): so do we.
    ours, theirs = both("connectx", steps)
    same(ours, theirs)


# ---- any history ---------------------------------------------------------------------------------

_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 45),
    st.floats(allow_nan=False, width=16),
    st.text(max_size=3),
    st.sampled_from(["ACTIVE", "INACTIVE", "DONE", "INVALID", "ERROR", "TIMEOUT"]),
    st.lists(st.sampled_from([0, 0, 0, 1, 2]), min_size=42, max_size=42),
    st.lists(st.integers(0, 2), max_size=5),
)
_agent_states = st.one_of(
    _values,
    st.dictionaries(
        st.sampled_from(["action", "reward", "status", "info", "observation", "other"]),
        st.one_of(
            _values,
            st.dictionaries(
                st.sampled_from(["board", "mark", "step", "remainingOverageTime", "x"]), _values
            ),
        ),
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=st.lists(st.lists(_agent_states, min_size=1, max_size=3), min_size=1, max_size=3))
def test_any_history_is_kaggles_game_or_refused_as_kaggle_or_by_name(history):
    try:
        theirs = reference.make("connectx", steps=copy.deepcopy(history))
    except reference.kaggle().errors.InvalidArgument:
        with pytest.raises(vk.InvalidArgument):
            vk.make("connectx", steps=copy.deepcopy(history))
        return
    try:
        ours = vk.make("connectx", steps=copy.deepcopy(history))
    except vk.InvalidArgument as exc:
        # Only what the rules cannot represent, said so.
        assert "is no position of connectx" in str(exc) or "observation.step is" in str(exc)
        return
    assert plain(ours.steps[-1:]) == plain(theirs.steps[-1:])
    assert ours.done == theirs.done
    if not ours.done:
        play_on(ours, theirs, [[3, 3], [4, 4], [3, 3]])
