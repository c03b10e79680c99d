"""vecenv.kaggle's text beside kaggle-environments': ``render(mode="ansi")`` writes Kaggle's text.

Both environments are fed the same actions (legal moves, one past the last, and every kind of bad
action: out of range, not an integer, None, an agent's exception, a timeout) and their texts are
compared after the reset and after every step. rps writes every round, its rewards the Python
values Kaggle's interpreter leaves (``-1.0`` once a round had a winner, ``0`` while every round
tied, ints where it sets them). Where Kaggle's own rps renderer raises (a first round without two
valid actions leaves no ``lastOpponentAction`` to read) ours writes the round as "no signs shown".
"""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.kaggle import reference
from tests.kaggle.common import plain
from vecenv import kaggle as vk

CASES = [
    ("connectx", {}),
    ("connectx", {"rows": 5, "columns": 4, "inarow": 3}),
    ("connectx", {"rows": 3, "columns": 8, "inarow": 2}),
    ("connectx", {"rows": 2, "columns": 1, "inarow": 1}),
    ("connectx", {"rows": 4, "columns": 4, "inarow": 5}),
    ("connectx", {"rows": 6, "columns": 7, "inarow": 4, "episodeSteps": 8}),
    ("tictactoe", {}),
    ("tictactoe", {"episodeSteps": 6}),
    ("rps", {"episodeSteps": 12}),
    ("rps", {"signs": 5, "episodeSteps": 15, "tieRewardThreshold": 2}),
    ("rps", {"signs": 4, "episodeSteps": 6, "tieRewardThreshold": 3}),
    ("rps", {"episodeSteps": 3, "tieRewardThreshold": 1}),
    ("rps", {"signs": 5, "episodeSteps": 2, "tieRewardThreshold": 1}),
]

FAILED = {"ERROR", "INVALID", "TIMEOUT"}
# Bad actions by name (the exceptions are made afresh for each step).
BAD = ["string", "none", "bool", "negative", "huge", "float", "list", "raise", "timeout"]

HYPOTHESIS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _size(game, config):
    return {"connectx": config.get("columns", 7), "tictactoe": 9}.get(game, config.get("signs", 3))


def _action(game, token):
    """An int is played as it is; a name is one of the bad actions."""
    if isinstance(token, int):
        return token
    return {
        "string": "1",
        "none": None,  # Kaggle's schema fills in the default action
        "bool": True,
        "negative": -1,
        "huge": 10**30,
        # rps refuses an integral float; Kaggle's connectx and tictactoe raise out of step on it.
        "float": 2.0 if game == "rps" else 1.5,
        "list": [1],
        "raise": ValueError("the agent raised"),
        "timeout": reference.kaggle().errors.DeadlineExceeded("the agent ran out of time"),
    }[token]


def _unscored_first_round(steps):
    return len(steps) > 1 and any(agent["status"] in FAILED for agent in steps[1])


def _no_signs_text(state):
    """Ours where Kaggle's rps renderer raises: the first round, unscored, ended the match."""
    first, second = state[0]["reward"], state[1]["reward"]
    return (
        f"Round 1: no signs shown, Score: {first} to {second}\n"
        f"Game ended on round 1, final score: {first} to {first}\n"
    )


def assert_same_text(game, ours, theirs):
    if game == "rps" and _unscored_first_round(theirs.steps):
        with pytest.raises(AttributeError, match="lastOpponentAction"):
            theirs.render(mode="ansi")
        assert ours.render(mode="ansi") == _no_signs_text(theirs.state)
    else:
        assert ours.render(mode="ansi") == theirs.render(mode="ansi")


def play(game, config, tokens):
    """Both environments through ``tokens`` (pairs of actions, or of bad actions' names), their
    texts compared after the reset and every step; stops at the end of the episode."""
    ours = vk.make(game, configuration=config)
    theirs = reference.make(game, configuration=config)
    assert_same_text(game, ours, theirs)
    for pair in tokens:
        if theirs.done:
            break
        actions = [_action(game, token) for token in pair]
        theirs.step(list(actions))
        ours.step(list(actions))
        assert plain([ours.state], overage=False) == plain([theirs.state], overage=False)
        assert_same_text(game, ours, theirs)
    return ours, theirs


def _random_pair(rng, game, config):
    size = _size(game, config)
    return [rng.choice(BAD) if rng.random() < 0.05 else rng.randrange(size + 1) for _ in range(2)]


@pytest.mark.parametrize("game,config", CASES, ids=[f"{g}-{c}" for g, c in CASES])
def test_the_same_text_after_every_step(game, config):
    rng = random.Random(f"ansi {game} {config}")
    ends = set()
    for _ in range(10):
        tokens = [_random_pair(rng, game, config) for _ in range(60)]
        ours, theirs = play(game, config, tokens)
        assert theirs.done
        ends.add(tuple(a.status for a in theirs.state))
    assert len(ends) > 1  # the games end in more than one way


MOVE_OR_BAD = st.one_of(st.integers(0, 7), st.sampled_from(BAD))
# Mostly signs (some past the configuration's), so that matches run to the end.
SIGN_OR_BAD = st.one_of(st.integers(0, 4), st.integers(0, 4), st.sampled_from(BAD))


@HYPOTHESIS
@given(
    case=st.sampled_from(CASES),
    tokens=st.lists(st.tuples(MOVE_OR_BAD, MOVE_OR_BAD), max_size=12),
)
def test_the_same_text_for_any_actions(case, tokens):
    game, config = case
    play(game, config, tokens)


@HYPOTHESIS
@given(
    signs=st.integers(3, 5),
    episode_steps=st.integers(2, 7),
    threshold=st.integers(1, 4),
    tokens=st.lists(st.tuples(SIGN_OR_BAD, SIGN_OR_BAD), max_size=8),
)
def test_rps_rewards_are_written_as_kaggles_values(signs, episode_steps, threshold, tokens):
    config = {"signs": signs, "episodeSteps": episode_steps, "tieRewardThreshold": threshold}
    play("rps", config, tokens)


# (configuration, pairs of actions, the text after the last)
EXACT = {
    "every round tied": (
        {"episodeSteps": 3, "tieRewardThreshold": 1},
        [[0, 0], [0, 0]],
        "Round 1: Rock vs Rock, Score: 0 to 0\n"
        "Round 2: Rock vs Rock, Score: 0 to 0\n"
        "Game ended on round 2, final score: 0 to 0\n",
    ),
    "won, then tied by the threshold": (
        {"episodeSteps": 3, "tieRewardThreshold": 4},
        [[0, 1], [0, 0]],
        "Round 1: Rock vs Paper, Score: -1.0 to 1.0\n"
        "Round 2: Rock vs Rock, Score: 0 to 0\n"
        "Game ended on round 2, final score: 0 to 0\n",
    ),
    "won, above the threshold": (
        {"episodeSteps": 3, "tieRewardThreshold": 1},
        [[0, 1], [0, 0]],
        "Round 1: Rock vs Paper, Score: -1.0 to 1.0\n"
        "Round 2: Rock vs Rock, Score: -1.0 to 1.0\n"
        "Game ended on round 2, final score: -1.0 to -1.0\n",
    ),
    "a single round": (
        {"signs": 5, "episodeSteps": 2, "tieRewardThreshold": 1},
        [[3, 4]],
        "Round 1: Spock vs Lizard, Score: -1.0 to 1.0\n"
        "Game ended on round 1, final score: -1.0 to -1.0\n",
    ),
    "even again while running": (
        {"episodeSteps": 6},
        [[1, 0], [2, 1], [0, 1], [1, 2]],
        "Round 1: Paper vs Rock, Score: 1.0 to -1.0\n"
        "Round 2: Scissors vs Paper, Score: 2.0 to -2.0\n"
        "Round 3: Rock vs Paper, Score: 1.0 to -1.0\n"
        "Round 4: Paper vs Scissors, Score: 0.0 to 0.0\n"
        "Game ended on round 4, final score: 0.0 to 0.0\n",
    ),
    "an invalid sign after a won round": (
        {"episodeSteps": 10},
        [[0, 2], [1, 3]],
        "Round 1: Rock vs Scissors, Score: 1.0 to -1.0\n"
        "Round 2: Rock vs Scissors, Score: 1 to None\n"
        "Game ended on round 2, final score: 1 to 1\n",
    ),
    "both invalid after a tied round": (
        {"episodeSteps": 10},
        [[2, 2], [-1, 5]],
        "Round 1: Scissors vs Scissors, Score: 0 to 0\n"
        "Round 2: Scissors vs Scissors, Score: None to None\n"
        "Game ended on round 2, final score: None to None\n",
    ),
}


@pytest.mark.parametrize("case", sorted(EXACT))
def test_rps_text_of_known_matches(case):
    config, actions, text = EXACT[case]
    ours = vk.make("rps", configuration=config)
    for pair in actions:
        ours.step(list(pair))
    assert ours.render(mode="ansi") == text
    theirs = reference.make("rps", configuration=config)
    for pair in actions:
        theirs.step(list(pair))
    assert theirs.render(mode="ansi") == text


def test_rps_writes_the_final_line_from_the_reset_on():
    config = {"episodeSteps": 4, "tieRewardThreshold": 4}
    ours = vk.make("rps", configuration=config)
    assert ours.render(mode="ansi") == "Game ended on round 0, final score: 0 to 0\n"
    ours.step([1, 2])
    assert ours.render(mode="ansi") == (
        "Round 1: Paper vs Scissors, Score: -1.0 to 1.0\n"
        "Game ended on round 1, final score: -1.0 to -1.0\n"
    )
    # A tied round keeps the float a won round made.
    ours.step([1, 1])
    assert ours.render(mode="ansi").splitlines()[1] == "Round 2: Paper vs Paper, Score: -1.0 to 1.0"
    play("rps", config, [[1, 2], [1, 1], [2, 2]])


# First rounds without two valid actions: each kind of failure, in either seat, and in both.
FIRST_ROUNDS = [
    ["negative", 1],
    [0, "float"],
    ["string", 2],
    [2, 3],
    [1, "raise"],
    ["timeout", 0],
    ["huge", "list"],
    ["raise", "timeout"],
]


@pytest.mark.parametrize("pair", FIRST_ROUNDS, ids=str)
def test_rps_first_round_unscored_is_text_where_kaggle_raises(pair):
    """A deliberate difference: Kaggle's renderer reads ``lastOpponentAction`` of every round, and
    a first round without two valid actions ends the match before any agent observes one."""
    theirs = reference.make("rps", configuration={"episodeSteps": 5})
    theirs.step([_action("rps", token) for token in pair])
    with pytest.raises(AttributeError, match="lastOpponentAction"):
        theirs.render(mode="ansi")
    ours = vk.make("rps", configuration={"episodeSteps": 5})
    ours.step([_action("rps", token) for token in pair])
    # A failed agent's reward is None; the other, if its sign was valid, wins with 1 (an int).
    first, second = [None if isinstance(token, str) or token >= 3 else 1 for token in pair]
    assert [a.reward for a in ours.state] == [a.reward for a in theirs.state] == [first, second]
    assert ours.render(mode="ansi") == (
        f"Round 1: no signs shown, Score: {first} to {second}\n"
        f"Game ended on round 1, final score: {first} to {first}\n"
    )


def test_rps_run_with_an_agent_that_raises():
    """Agents as ``run`` calls them: a callable that raises in the third round, against a
    built-in."""

    def fails_late(observation, configuration):
        if observation.step == 2:
            raise RuntimeError("the agent fails")
        return observation.step % configuration.signs

    config = {"episodeSteps": 8}
    ours = vk.make("rps", configuration=config)
    theirs = reference.make("rps", configuration=config)
    ours.run([fails_late, "paper"])
    theirs.run([fails_late, "paper"])
    assert [a.status for a in ours.state] == ["INVALID", "DONE"]
    assert ours.render(mode="ansi") == theirs.render(mode="ansi")
    assert ours.render(mode="ansi").splitlines()[-2:] == [
        "Round 3: Paper vs Paper, Score: None to 1",
        "Game ended on round 3, final score: None to None",
    ]
