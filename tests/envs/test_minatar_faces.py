"""The MinAtar games through the faces a one-agent game meets beyond the generic tests (Gymnasium,
pickling, the contract and the CUDA simulator run every game already): AISysProj runs that are
the engine's episodes, the arena adding and playing each, and ``vecenv list`` and ``vecenv bench``
naming and timing them. The rules themselves are tests/envs/test_minatar_<game>.py's."""

import random

import pytest

from tests.aisys import test_episodes
from tests.arena.helpers import play_runs
from vecenv import aisys
from vecenv.cli import main

GAMES = {  # game: (AISysProj class, Gymnasium id, action space by default)
    "minatar_asterix": ("MinAtarAsterix", "MinAtarAsterix-v0", "Discrete(5)"),
    "minatar_freeway": ("MinAtarFreeway", "MinAtarFreeway-v0", "Discrete(3)"),
    "minatar_seaquest": ("MinAtarSeaquest", "MinAtarSeaquest-v0", "Discrete(6)"),
    "minatar_space_invaders": ("MinAtarSpaceInvaders", "MinAtarSpaceInvaders-v0", "Discrete(4)"),
}
WARM = [(game, {}) for game in GAMES]  # compiled beside the tests before they start


@pytest.mark.parametrize("game", GAMES)
def test_aisysproj_runs_are_the_engines_episodes(game):
    # Short runs (a time limit of 40 steps) and one with the full action set: each request's
    # observation, each reward and the run's end are the engine's for the same seed and actions.
    assert aisys.environment_class(game).__name__ == GAMES[game][0]
    test_episodes.test_runs_are_the_engines_episodes(game, {"max_steps": 40})
    test_episodes.test_runs_are_the_engines_episodes(
        game, {"minimal_actions": False, "max_steps": 9}
    )


@pytest.mark.parametrize("game", GAMES)
def test_the_arena_adds_and_plays_it(tmp_path, game):
    from vecenv.arena import Arena
    from vecenv.arena.client import random_policy

    arena = Arena(str(tmp_path / "arena.sqlite"))
    try:
        env = arena.add_environment(game, config={"max_steps": 12})
        assert env["env_class"].endswith(":" + GAMES[game][0])
        config = arena.add_agent(game, "alice")
        finished, _ = play_runs(arena, game, config, 2, random_policy(random.Random(game).random()))
        assert len(finished) >= 2 and all(isinstance(v, int | float) for v in finished.values())
        assert arena.agents(game)[0]["runs"] == len(finished)
    finally:
        arena.close()


def test_vecenv_list_names_each_with_its_faces(capsys):
    assert main(["list"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line}
    for game, (_, gym_id, action) in GAMES.items():
        assert gym_id in rows[game] and "gym,aisys" in rows[game] and action in rows[game]


def test_vecenv_bench_times_each(capsys):
    for _, gym_id, _ in GAMES.values():
        argv = ["bench", "--env", gym_id, "--num-envs", "1,4", "--steps", "3", "--repeats", "1"]
        assert main([*argv, "--no-gym"]) == 0
        rows = [line.split() for line in capsys.readouterr().out.splitlines()]
        assert [row[:2] for row in rows if row and row[0] == gym_id] == [
            [gym_id, "1"],
            [gym_id, "4"],
        ]
