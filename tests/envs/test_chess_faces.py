"""Chess through the faces: Kaggle's (a match, a FEN position as a Kaggle history, the HTML
replay), PettingZoo's AEC beside the Kaggle face, the batched multi-agent VectorEnv, the
one-agent Gymnasium env against the random agent, AISysProj, ``vecenv play`` and ``vecenv list``.
The engine's own contract (``vecenv check``), pickles and the GPU engine on the CUDA simulator are
run for every game by ``tests/test_contract.py``, ``tests/test_pickle.py`` and ``tests/cuda``.
"""

import gymnasium
import numpy as np

import vecenv
from tests.envs.aec_beside_kaggle import play_aec_beside_kaggle
from vecenv import aisys, kaggle
from vecenv.cli import main
from vecenv.envs.chess import fen as chess_fen
from vecenv.gym.multiagent import MultiAgentVectorEnv

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


def test_a_kaggle_match_plays_to_its_end():
    env = kaggle.make("chess")
    steps = env.run(["random", "random"])
    assert env.done and 2 <= len(steps) <= 513
    final = env.state
    assert {s.status for s in final} == {"DONE"}
    assert sorted(s.reward for s in final) in ([-1, 1], [0, 0])
    assert len(final[0].observation.board) == 64 and "legal" not in final[0].observation
    assert final[1].observation.color == 1
    page = env.render(mode="html")
    assert "renderStep" in page and "\\u2654" in page  # the pieces are Unicode symbols
    text = env.render(mode="ansi")
    assert len(text.splitlines()) == 8


def test_a_fen_position_becomes_a_kaggle_history():
    steps = kaggle.position_steps("chess", {"fen": KIWIPETE})
    env = kaggle.make("chess", steps=steps)
    board = env.state[0].observation.board
    assert chess_fen.fen(board, 0, 15, -1, 0, 1) == KIWIPETE
    assert [s.status for s in env.state] == ["ACTIVE", "INACTIVE"]
    env.step([chess_fen.label("e1g1", 0), None])  # castling
    assert [s.status for s in env.state] == ["INACTIVE", "ACTIVE"]
    assert env.state[0].observation.castling == [False, False, True, True]
    env.step([None, 4672])  # no label: INVALID, as Kaggle rules an action off the board
    assert env.state[1].status == "INVALID"


def test_pettingzoos_aec_face_is_the_kaggle_faces():
    for seed in range(2):
        assert play_aec_beside_kaggle("chess", seed) >= 4


def test_the_multi_agent_vector_env_plays_legal_moves():
    n = 4
    env = MultiAgentVectorEnv("chess", num_envs=n)
    obs, infos = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    rng = np.random.default_rng(0)
    for _ in range(20):
        mask = infos["action_mask"]
        actions = np.zeros((n, 2), dtype=np.int64)
        for i, k in zip(*np.nonzero(mask.any(axis=2)), strict=True):
            actions[i, k] = rng.choice(np.flatnonzero(mask[i, k]))
        obs, rewards, terminated, truncated, infos = env.step(actions)
        assert not (rewards < 0).any()  # no move was refused


def test_the_gymnasium_env_plays_against_the_random_agent():
    env = gymnasium.make("vecenv/Chess-v0")
    obs, info = env.reset(seed=3)
    assert set(obs) >= {"board", "castling", "en_passant"} and obs["board"].shape == (64,)
    done = False
    steps = 0
    while not done:
        legal = np.flatnonzero(info["action_mask"] if "action_mask" in info else obs["legal"])
        obs, reward, terminated, truncated, info = env.step(int(legal[0]))
        done = terminated or truncated
        steps += 1
    assert reward in (-1.0, 0.0, 1.0) and steps <= 256


def test_aisysproj_plays_chess_against_the_random_agent():
    env = aisys.environment_class("chess")(aisys.EnvInfo("Chess", "chess"), {"seat": 0})
    state = env.new_run()
    run = aisys.RunData(action_history=[], state=state, outcome=None, run_id=1, agent_name="me")
    request = env.get_action_request(run).content
    legal = request["legal"] if "legal" in request else request["observation"]["legal"]
    move = chess_fen.label("e2e4", 0)
    assert move in (np.flatnonzero(legal) if len(legal) == 4672 else legal)
    result = env.act(move, run)
    assert result.new_state is not None
    bad = env.act(chess_fen.label("e2e5", 0), aisys.RunData([], state, None, 2, "me"))
    assert bad.new_state is None  # an illegal move is refused, changing nothing


def test_vecenv_play_and_list_name_chess(capsys, tmp_path):
    assert main(["list"]) == 0
    listed = capsys.readouterr().out
    assert any(line.startswith("chess ") and "Chess-v0" in line for line in listed.splitlines())
    page = tmp_path / "match.html"
    code = main(
        [
            "play",
            "chess",
            "--agents",
            "random",
            "random",
            "--matches",
            "4",
            "--seed",
            "1",
            "--replay",
            str(page),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and "random vs random: 4 matches" in out
    assert "renderStep" in page.read_text()
    assert vecenv.make("chess").spec.gym["id"] == "Chess-v0"
