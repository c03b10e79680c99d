"""vecenv.kaggle beside kaggle-environments: the same actions give the same steps.

Seeded random games feed both ``env.step`` the same actions, valid ones and every kind of bad one
(out of range, wrong type, None, a raised exception, a timeout), and compare every agent's state
after every step: action, reward, status and observation, and the whole ``toJSON`` at the end.
"""

import random

import pytest

from tests.kaggle import reference
from vecenv import kaggle as vk

# (game, configuration): connectx at several sizes, tictactoe, rps with every sign count.
CASES = [
    ("connectx", {}),
    ("connectx", {"rows": 5, "columns": 4, "inarow": 3}),
    ("connectx", {"rows": 3, "columns": 8, "inarow": 3}),
    ("connectx", {"rows": 1, "columns": 1, "inarow": 1}),
    ("connectx", {"rows": 4, "columns": 4, "inarow": 5}),
    ("connectx", {"rows": 6, "columns": 7, "inarow": 4, "episodeSteps": 9}),
    ("tictactoe", {}),
    ("tictactoe", {"episodeSteps": 5}),
    ("rps", {"episodeSteps": 30}),
    ("rps", {"signs": 5, "episodeSteps": 25, "tieRewardThreshold": 3}),
    ("rps", {"signs": 4, "episodeSteps": 2}),
]


def _bad_actions(kaggle, game):
    bad = ["3", None, True, -1, 10**30, [1], {"a": 1}, ValueError("agent raised")]
    bad.append(kaggle.errors.DeadlineExceeded("too slow"))
    if game == "rps":
        bad.append(2.0)  # rps treats an integral float as invalid; the others raise in Kaggle
    return bad


def _actions(rng, kaggle, game, config, state):
    size = {"connectx": config.get("columns", 7), "tictactoe": 9}.get(game, config.get("signs", 3))
    actions = []
    for agent in state:
        if rng.random() < 0.06:
            actions.append(rng.choice(_bad_actions(kaggle, game)))
        elif agent["status"] != "ACTIVE":
            actions.append(0)
        else:
            actions.append(rng.randrange(size + 1))  # sometimes one past the last
    return actions


def _plain(state):
    return [
        {
            "action": a["action"],
            "reward": a["reward"],
            "status": a["status"],
            "observation": dict(a["observation"]),
        }
        for a in state
    ]


@pytest.mark.parametrize("game,config", CASES, ids=[f"{g}-{c}" for g, c in CASES])
def test_same_steps_as_kaggle(game, config):
    kaggle = reference.kaggle()
    rng = random.Random(f"{game}{config}")
    for _ in range(12):
        theirs = reference.make(game, configuration=config, debug=True)
        ours = vk.make(game, configuration=config, debug=True)
        assert _plain(ours.state) == _plain(theirs.state)
        while not theirs.done:
            actions = _actions(rng, kaggle, game, config, theirs.state)
            theirs.step(list(actions))
            ours.step(list(actions))
            assert _plain(ours.state) == _plain(theirs.state), actions
            assert ours.done == theirs.done
        assert len(ours.steps) == len(theirs.steps)
        mine, ref = ours.toJSON(), theirs.toJSON()
        for key in ("name", "title", "version", "statuses", "rewards"):
            assert mine[key] == ref[key], key
        assert mine["configuration"] == ref["configuration"]
        assert mine["specification"] == ref["specification"]
        assert [_plain(s) for s in mine["steps"]] == [_plain(s) for s in ref["steps"]]


@pytest.mark.parametrize("game", ["connectx", "tictactoe"])
def test_finished_env_refuses_steps(game):
    env = vk.make(game)
    env.run(["random", "random"])
    assert env.done
    with pytest.raises(vk.FailedPrecondition, match="reset required"):
        env.step([0, 0])


def test_integral_float_is_invalid_not_a_crash():
    """kaggle-environments' connectx raises a TypeError out of ``step`` for 3.0 (it passes the
    schema, then indexes a list); here the mover is INVALID, as for any move it cannot make."""
    env = vk.make("connectx")
    env.step([3.0, 0])
    assert [s.status for s in env.state] == ["INVALID", "DONE"]
    assert [s.reward for s in env.state] == [None, 0]
