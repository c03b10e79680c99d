"""Animal shogi, Gardner's chess and shogi through the faces a two-agent game meets: Kaggle's (a
match to its end, text, the replay page), PettingZoo's AEC beside it, the batched multi-agent
VectorEnv, the one-agent Gymnasium env against the random agent, AISysProj and the arena, the
command line (``play``, ``list``, ``bench``), the ``mcts`` agent, and the frames. Their rules are
tested against Pgx in ``test_<game>.py``; the engine's contract, pickles, self-play and the GPU
engine (simulator, PTX) for every game by the generic suites."""

import contextlib
import io
import random

import gymnasium
import numpy as np
import pytest

import vecenv
from tests.aisys.test_face import engine_outcome, kaggle_replay
from tests.aisys.test_face import play as play_aisys
from tests.envs.aec_beside_kaggle import play_aec_beside_kaggle
from vecenv import aisys, kaggle, registry, selfplay
from vecenv.cli import main
from vecenv.gym.multiagent import MultiAgentVectorEnv
from vecenv.kernels.turns import INVALID
from vecenv.search import MCTS

# game: (Gymnasium id, actions, rows of its text)
GAMES = {
    "animal_shogi": ("AnimalShogi-v0", 132, 6),
    "gardner_chess": ("GardnerChess-v0", 1225, 5),
    "shogi": ("Shogi-v0", 2187, 11),
}


@pytest.mark.parametrize("game", GAMES)
def test_a_kaggle_match_plays_to_its_end(game):
    random.seed(0)
    env = kaggle.make(game)
    steps = env.run(["random", "random"])
    assert env.done and len(steps) >= 2
    final = env.state
    assert {s.status for s in final} <= {"DONE"}
    assert sorted(s.reward for s in final) in ([-1, 1], [0, 0])
    assert "legal" not in final[0].observation and final[1].observation.color == 1
    assert "renderStep" in env.render(mode="html")
    assert len(env.render(mode="ansi").splitlines()) == GAMES[game][2]


@pytest.mark.parametrize("game", GAMES)
def test_pettingzoos_aec_face_is_the_kaggle_faces(game):
    for seed in range(2):
        assert play_aec_beside_kaggle(game, seed) >= 2


@pytest.mark.parametrize("game", GAMES)
def test_the_multi_agent_vector_env_plays_legal_moves(game):
    n = 4
    env = MultiAgentVectorEnv(game, num_envs=n)
    obs, infos = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    rng = np.random.default_rng(0)
    for _ in range(20):
        mask = infos["action_mask"]
        actions = np.zeros((n, 2), dtype=np.int64)
        for i, k in zip(*np.nonzero(mask.any(axis=2)), strict=True):
            actions[i, k] = rng.choice(np.flatnonzero(mask[i, k]))
        obs, rewards, terminated, truncated, infos = env.step(actions)
        assert env.observation_space.contains(obs)
        assert not (env._engine.states["status"] == INVALID).any()  # no move was refused


@pytest.mark.parametrize("game", GAMES)
def test_the_gymnasium_env_plays_against_the_random_agent(game):
    env = gymnasium.make(f"vecenv/{GAMES[game][0]}")
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    rng = np.random.default_rng(3)
    done, reward = False, 0.0
    while not done:
        legal = np.flatnonzero(info["action_mask"] if "action_mask" in info else obs["legal"])
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(legal)))
        done = terminated or truncated
    assert reward in (-1.0, 0.0, 1.0)


@pytest.mark.parametrize("seat", [0, 1])
@pytest.mark.parametrize("game", GAMES)
def test_aisysproj_runs_match_the_engine_and_kaggle(game, seat):
    cls = aisys.environment_class(game)
    config = {"opponent": "random", "seat": seat}
    env = cls(aisys.EnvInfo(cls.__name__, game), config)
    state = env.new_run(seed=seat)
    rng = random.Random(seat)
    final, outcome, moves, _ = play_aisys(env, state, lambda c: rng.choice(c["legal"]))
    total, ended = engine_outcome(game, config, seat, seat, moves)
    assert ended and outcome == total
    replayed = kaggle_replay(game, None, final["steps"])
    assert replayed.done and replayed.state[seat].reward == outcome


@pytest.mark.parametrize("game", GAMES)
def test_the_arena_adds_and_plays_the_game(game, tmp_path):
    from tests.arena.helpers import play_runs
    from vecenv.arena import Arena
    from vecenv.arena.client import random_policy

    arena = Arena(str(tmp_path / "arena.sqlite"))
    try:
        env = arena.add_environment(game)
        assert env["env_class"].endswith(":" + GAMES[game][0].split("-")[0])
        config = arena.add_agent(game, "alice")
        finished, _ = play_runs(arena, game, config, 2, random_policy(0))
        assert len(finished) >= 2 and set(finished.values()) <= {-1, 0, 1}
    finally:
        arena.close()


@pytest.mark.parametrize("game", GAMES)
def test_the_command_line_plays_lists_and_times_the_game(game, tmp_path, capsys):
    page = tmp_path / "match.html"
    argv = ["play", game, "--agents", "random", "random", "--matches", "4", "--seed", "1"]
    assert main([*argv, "--replay", str(page)]) == 0
    assert "random vs random: 4 matches" in capsys.readouterr().out
    assert "renderStep" in page.read_text()
    assert main(["list"]) == 0
    row = next(r for r in capsys.readouterr().out.splitlines() if r.startswith(game + " "))
    assert GAMES[game][0] in row and f"Discrete({GAMES[game][1]})" in row
    argv = ["bench", "--env", game, "--num-envs", "1,4", "--steps", "3", "--repeats", "1"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*argv, "--no-gym"]) == 0
    rows = [line.split() for line in out.getvalue().splitlines()]
    assert [r[:2] for r in rows if r and r[0] == GAMES[game][0]] == [
        [GAMES[game][0], "1"],
        [GAMES[game][0], "4"],
    ]


@pytest.mark.parametrize("game", ["animal_shogi", "gardner_chess"])
def test_mcts_beats_random(game):
    results = selfplay.play(game, ["mcts:64", "random"], matches=8, seed=0)
    wins = (results.rewards[:, 0] > 0).sum()
    assert wins >= 6, results.rewards[:, 0]


def test_mcts_searches_shogi():
    """Shogi's games are long (random ones up to 512 plies): the search, with short rollouts,
    on a few positions (its strength: docs/games/shogi.md)."""
    engine = vecenv.make("shogi", num_envs=2, seed=0)
    result = MCTS("shogi", 32, rollout_limit=16).search(engine.get_state(), seed=0)
    assert result.searched.all()
    assert engine.obs["legal"][np.arange(2), result.action].all()
    assert result.visit_counts.sum(axis=1).tolist() == [32, 32]


@pytest.mark.parametrize("game", GAMES)
def test_frames_show_the_start(game):
    engine = vecenv.make(game, num_envs=1, seed=0)
    render = registry.game_module(game, "render")
    image = render.rgb_array(engine.states[0], engine.config)
    assert image.ndim == 3 and image.shape[2] == 3 and image.dtype == np.uint8
    assert len(np.unique(image.reshape(-1, 3), axis=0)) > 4
    assert len(render.ansi(engine.states[0], engine.config).splitlines()) == GAMES[game][2]
