"""The Kaggle face against kaggle-environments: whole episodes of ``make(game).run(agents)``

Episodes per second of ``vecenv.kaggle.make(game, configuration).run(agents)`` against
``kaggle_environments.make(game, configuration).run(agents)``, both with ``debug=False`` (the
default), each episode a fresh ``make`` followed by ``run`` (so the environment's construction is
part of an episode's cost on both sides, and kaggle-environments' logs never grow across episodes):

- connectx, ``run(["random", "random"])``: 8 episodes a round, target >= 20x;
- rps, ``run(["rock", "paper"])`` at the default ``episodeSteps`` of 1000 (999 rounds): one episode
  a round, no target;
- tictactoe, ``run(["random", "random"])``: 8 episodes a round, no target. kaggle-environments
  dropped tictactoe after 1.20.0; the tests' reference (``tests/kaggle/reference.py``) registers
  that release's tictactoe into the installed kaggle-environments, fetching it once into the user's
  cache. Where that reference cannot be had the kaggle-environments side skips with the reason.

Both sides draw their random moves from Python's ``random`` (Kaggle's agents call it, vecenv's
built-in agents seed their streams from it): every round starts with ``random.seed(0)``, so the
rounds of one side play the same episodes and its best round is the cost of that work. The two
sides play different episodes (their random streams differ); the plies played per episode of each
side are kept in ``extra_info`` (``plies_per_episode``).

A round is timed whole (rounds are fixed in number: 7 for vecenv, 5 for kaggle-environments with
connectx and tictactoe, 3 for rps); the rate is episodes per second of the best round. In smoke mode
(``--benchmark-disable``) each body plays one episode, rps with ``episodeSteps`` 10. Where
kaggle-environments does not import, its benchmarks skip with the reason.

Keys: ("kaggle", game, impl) with impl "vecenv" or "kaggle"; rates are episodes per second (the
table's "steps/s" reads "episodes/s" here).
"""

import importlib.util
import os
import random

import pytest
import report

import vecenv.kaggle

GAMES = {
    # game: (agents, episodes per round, rounds of vecenv, rounds of kaggle-environments)
    "connectx": (["random", "random"], 8, 7, 5),
    "rps": (["rock", "paper"], 1, 3, 3),
    "tictactoe": (["random", "random"], 8, 7, 5),
}
TARGETS = {"connectx": 20.0}
SMOKE_CONFIGURATION = {"rps": {"episodeSteps": 10}}
SECTION = (
    "Kaggle face: vecenv.kaggle.make(game).run(agents) vs kaggle_environments "
    "(episodes/s, printed as steps/s; make included, debug=False)"
)
REFERENCE = os.path.join(os.path.dirname(__file__), "..", "tests", "kaggle", "reference.py")


def _declare():
    for game, (agents, *_) in GAMES.items():
        key = ("kaggle", game)
        report.label(key + ("vecenv",), "vecenv.kaggle")
        report.label(key + ("kaggle",), "kaggle_environments")
        target = TARGETS.get(game)
        report.compare(
            SECTION,
            f"{game} run({agents})",
            key + ("vecenv",),
            key + ("kaggle",),
            target=target,
            target_text=f"target >= {target:g}x" if target else "",
        )


_declare()


def timed(benchmark, round_fn, rounds):
    """``rounds`` timed calls of ``round_fn`` (one untimed call first); once when disabled."""
    if benchmark.disabled:
        benchmark(round_fn)
        return
    benchmark.pedantic(round_fn, rounds=rounds, warmup_rounds=1, iterations=1)


def _kaggle_environments():
    try:
        import kaggle_environments
    except Exception as e:  # not installed, or its import fails here
        pytest.skip(f"kaggle-environments is not installed or does not import here: {e!r:.300}")
    return kaggle_environments


def _tictactoe_reference():
    """The tests' reference module, loaded from its file (benchmarks are not a package of the
    tests), or a skip with the reason."""
    if not os.path.exists(REFERENCE):
        pytest.skip("tictactoe: the tests' Kaggle reference (tests/kaggle/reference.py) is absent")
    spec = importlib.util.spec_from_file_location("vecenv_bench_kaggle_reference", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kaggle_make(game):
    """``kaggle_environments.make`` for ``game``, or a skip with the reason it cannot be had."""
    kaggle_environments = _kaggle_environments()
    if game in kaggle_environments.environments:
        return kaggle_environments.make
    if game != "tictactoe":
        pytest.skip(f"kaggle-environments {kaggle_environments.__version__} has no {game}")
    reference = _tictactoe_reference()
    try:
        reference.make("tictactoe")  # registers it (fetching kaggle-environments 1.20.0 once)
    except (pytest.skip.Exception, pytest.fail.Exception) as e:
        pytest.skip(f"tictactoe of kaggle-environments 1.20.0 cannot be had here: {e.msg:.300}")
    return kaggle_environments.make


@pytest.mark.parametrize("impl", ("vecenv", "kaggle"))
@pytest.mark.parametrize("game", tuple(GAMES))
def test_kaggle_run(benchmark, game, impl):
    benchmark.group = f"Kaggle {game} run"
    agents, episodes, vecenv_rounds, kaggle_rounds = GAMES[game]
    configuration = {}
    if benchmark.disabled:
        episodes = 1
        configuration = SMOKE_CONFIGURATION.get(game, {})
    make = vecenv.kaggle.make if impl == "vecenv" else kaggle_make(game)
    plies = []

    def round_fn():
        random.seed(0)
        plies.clear()
        for _ in range(episodes):
            steps = make(game, configuration=configuration).run(agents)
            plies.append(len(steps) - 1)

    timed(benchmark, round_fn, vecenv_rounds if impl == "vecenv" else kaggle_rounds)
    assert plies and all(p >= 1 for p in plies)
    report.record(
        benchmark,
        ("kaggle", game, impl),
        episodes,
        1,
        unit="episodes",
        impl=impl,
        plies_per_episode=sum(plies) / len(plies),
        configuration=configuration,
    )
