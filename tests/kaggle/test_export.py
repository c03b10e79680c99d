"""vecenv's Kaggle games inside kaggle-environments itself: ``register(name, export(game))`` and
Kaggle's own ``make``, ``run``, ``step``, ``train``, ``clone`` and ``render`` play them.

Full episodes (built-in agents by name, callables, an invalid move, an agent that raises) give the
steps Kaggle's own game gives for the same actions (tictactoe: the reference's, from
kaggle-environments 1.20.0).
"""

import random

import pytest

from tests.kaggle import reference
from tests.kaggle.common import plain
from vecenv import kaggle as vk

GAMES = ["connectx", "tictactoe", "rps"]


@pytest.fixture(scope="module")
def kaggle():
    """kaggle_environments with each game registered again as ``vecenv_<game>``."""
    module = reference.kaggle()
    for game in GAMES:
        module.register(f"vecenv_{game}", vk.export(game))
    yield module
    for game in GAMES:
        module.environments.pop(f"vecenv_{game}", None)


def replayed_action(agent):
    """What to give Kaggle's step so that an agent ends as ``agent`` did."""
    if agent["status"] == "ERROR":
        return RuntimeError("failed")
    if agent["status"] == "TIMEOUT":
        return reference.kaggle().errors.DeadlineExceeded("slow")
    if agent["status"] == "INVALID" and agent["action"] is None:
        return "not an action"
    return agent["action"]


def kaggles_own(game, config, steps):
    """Kaggle's own game fed the actions of ``steps``."""
    env = reference.make(game, configuration=config, debug=True)
    for step in steps[1:]:
        env.step([replayed_action(agent) for agent in step])
    return env


def lowest_column(obs, config):
    return next(c for c in range(config.columns) if obs.board[c] == 0)


def first_open_cell(obs):
    return obs.board.index(0)


def raiser(obs, config):
    raise ValueError("this agent fails")


CONFIGS = {"connectx": {}, "tictactoe": {}, "rps": {"episodeSteps": 30, "tieRewardThreshold": 5}}
BUILTIN_PAIRS = [
    ("connectx", "negamax", "random"),
    ("connectx", "random", "negamax"),
    ("tictactoe", "reaction", "random"),
    ("tictactoe", "random", "reaction"),
    ("rps", "statistical", "copy_opponent"),
    ("rps", "reactionary", "counter_reactionary"),
    ("rps", "rock", "paper"),
]


@pytest.mark.parametrize(
    "game,first,second", BUILTIN_PAIRS, ids=[f"{g}-{a}-{b}" for g, a, b in BUILTIN_PAIRS]
)
def test_kaggle_runs_the_exported_game_with_builtin_agents(kaggle, game, first, second):
    random.seed(f"{first}{second}")
    env = kaggle.make(f"vecenv_{game}", configuration=CONFIGS[game], debug=True)
    assert sorted(env.agents) == sorted(vk.builtin_callables(game))
    steps = env.run([first, second])
    assert [s.status for s in env.state] == ["DONE", "DONE"]
    assert len(steps) > 2
    assert plain(steps, overage=False) == plain(
        kaggles_own(game, CONFIGS[game], steps).steps, overage=False
    )


CALLABLE_CASES = {
    "connectx-lowest": ("connectx", {}, lambda: [lowest_column, lowest_column], "DONE"),
    "connectx-full-column": ("connectx", {}, lambda: [3, 3], "INVALID"),
    "connectx-off-the-board": ("connectx", {}, lambda: [lowest_column, 9], "DONE"),
    "connectx-raises": ("connectx", {}, lambda: [lowest_column, raiser], "DONE"),
    "connectx-string": ("connectx", {}, lambda: [lambda o, c: "1", lowest_column], "INVALID"),
    "connectx-small": (
        "connectx",
        {"rows": 4, "columns": 5, "inarow": 3},
        lambda: [lowest_column, lowest_column],
        "DONE",
    ),
    "tictactoe-first-open": ("tictactoe", {}, lambda: [first_open_cell, first_open_cell], "DONE"),
    "tictactoe-occupied": ("tictactoe", {}, lambda: [first_open_cell, 0], "DONE"),
    "tictactoe-raises": ("tictactoe", {}, lambda: [raiser, first_open_cell], "ERROR"),
    "rps-callables": (
        "rps",
        {"episodeSteps": 12, "signs": 5},
        lambda: [lambda o, c: o.step % c.signs, "rock"],
        "DONE",
    ),
    "rps-invalid": ("rps", {"episodeSteps": 12}, lambda: [1, lambda o, c: o.step], "DONE"),
    "rps-raises": ("rps", {"episodeSteps": 12}, lambda: ["paper", raiser], "DONE"),
}


@pytest.mark.parametrize("case", sorted(CALLABLE_CASES))
def test_kaggle_runs_the_exported_game_with_callables(kaggle, case):
    game, config, agents, first_status = CALLABLE_CASES[case]
    env = kaggle.make(f"vecenv_{game}", configuration=config)
    steps = env.run(agents())
    assert env.state[0].status == first_status
    assert all(s.status != "ACTIVE" for s in env.state)
    own = kaggles_own(game, config, steps)
    assert plain(steps, overage=False) == plain(own.steps, overage=False)
    # Kaggle's run of its own game with the same agents agrees too.
    theirs = reference.make(game, configuration=config)
    assert plain(theirs.run(agents()), overage=False) == plain(steps, overage=False)


def test_exported_specification_is_kaggles(kaggle):
    for game in GAMES:
        ours = kaggle.make(f"vecenv_{game}")
        theirs = reference.make(game)
        for key in ("name", "title", "version", "agents", "configuration", "observation"):
            assert ours.specification[key] == theirs.specification[key], (game, key)
        for key in ("action", "reward"):
            assert ours.specification[key] == theirs.specification[key], (game, key)
        assert dict(ours.configuration) == dict(theirs.configuration)
        assert plain(ours.steps, overage=False) == plain(theirs.steps, overage=False)


@pytest.mark.parametrize("game", GAMES)
def test_kaggle_renders_the_exported_game_as_text(kaggle, game):
    env = kaggle.make(f"vecenv_{game}", debug=True)
    own = reference.make(game, debug=True)
    assert env.render(mode="ansi") == own.render(mode="ansi")
    pairs = ([0, 1], [1, 1], [2, 0]) if game == "rps" else ([4, 4], [0, 0], [2, 2])
    for pair in pairs:
        env.step(list(pair))
        own.step(list(pair))
        assert env.render(mode="ansi") == own.render(mode="ansi")


def test_kaggle_renders_the_exported_game_as_our_html_player(kaggle):
    env = kaggle.make("vecenv_connectx")
    env.run([lowest_column, lowest_column])
    page = env.render(mode="html")
    assert page.count("<script>window.kaggle =") == 1
    assert "vecenvReplay" in page and "function renderStep(" in page
    head = page[: page.lower().index("</head>")]
    assert '"name": "connectx"' in head and '"statuses": ["DONE", "DONE"]' in head


def test_kaggle_trains_on_the_exported_game(kaggle):
    runs = []
    for name in ("vecenv_rps", "rps"):
        env = kaggle.make(name, configuration={"episodeSteps": 5}, debug=True)
        trainer = env.train(["paper", None])
        out = [dict(trainer.reset())]
        done = False
        while not done:
            observation, reward, done, info = trainer.step(2)
            out.append((dict(observation), reward, done))
        runs.append(out)
    assert runs[0] == runs[1]
    # Scissors beat paper every round, but 4 is below tieRewardThreshold: a tie at the end.
    assert [reward for _, reward, _ in runs[0][1:]] == [1, 1, 1, -3]


def test_kaggle_clone_and_steps_of_the_exported_game_go_on(kaggle):
    env = kaggle.make("vecenv_connectx", debug=True)
    for pair in ([3, 3], [4, 4], [3, 3]):
        env.step(list(pair))
    twin = env.clone()
    restored = kaggle.make("vecenv_connectx", steps=env.steps, debug=True)
    own = kaggles_own("connectx", {}, env.steps)
    for e in (env, twin, restored, own):
        for pair in ([4, 4], [3, 3], [5, 5], [3, 3]):
            if not e.done:
                e.step(list(pair))
    assert (
        plain(twin.steps, overage=False)
        == plain(env.steps, overage=False)
        == plain(restored.steps, overage=False)
        == plain(own.steps, overage=False)
    )
    assert [s.status for s in env.state] == ["DONE", "DONE"]
    assert [s.reward for s in env.state] == [1, -1]


def test_kaggle_evaluates_the_exported_game(kaggle):
    config = {"episodeSteps": 8, "tieRewardThreshold": 2}
    got = kaggle.evaluate("vecenv_rps", ["rock", "paper"], config, num_episodes=2)
    assert got == kaggle.evaluate("rps", ["rock", "paper"], config, num_episodes=2)
    assert got == [[-7, 7], [-7, 7]]


def test_export_refuses_a_game_that_is_not_kaggles():
    with pytest.raises(vk.InvalidArgument):
        vk.export("cartpole")
