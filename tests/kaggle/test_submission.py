"""A checkpoint as a Kaggle submission (``vecenv export kaggle``, ``vecenv.kaggle.submission``):
one file of numpy and the standard library whose agent plays the checkpoint's own moves (the
network's forward pass as PyTorch's, the search move for move as vecenv's), always legal, inside
kaggle-environments' own ``make("connectx").run``; unsupported games and bad files are refused in
one line."""

import ast
import contextlib
import importlib.util
import io
import random
import subprocess
import sys

import numpy as np
import pytest

from tests.envs.reference import need
from tests.kaggle import reference

torch = need("torch", "PyTorch (vecenv[train])")

from vecenv import alphazero, ppo, search, tournament  # noqa: E402
from vecenv.engine import Engine  # noqa: E402
from vecenv.kernels.turns import ACTIVE  # noqa: E402
from vecenv.ppo.network import ActorCritic  # noqa: E402

SIMULATIONS = 16
SHAPES = {"connectx": (6, 7, 4), "tictactoe": (3, 3, 3)}


def load_file(path):
    """The submission's namespace, as kaggle-environments makes it (``exec`` of its source)."""
    namespace = {}
    with open(path, encoding="utf-8") as f:
        exec(compile(f.read(), str(path), "exec"), namespace)
    return namespace


def untrained_alphazero(folder, game, hidden=(32,), network="mlp"):
    engine = Engine(game, num_envs=1, seed=0)
    features = alphazero.Features(engine, cross=True)
    actions = search.MCTS(engine, 1, evaluator="uniform").num_actions
    config = alphazero.AlphaZeroConfig(
        hidden=hidden, network=network, blocks=2, filters=8, iterations=1,
        eval_simulations=SIMULATIONS,
    )  # fmt: skip
    torch.manual_seed(4)
    board = alphazero.Board.of(game, engine.config, actions)
    net = alphazero.architecture(game, network, features, board, actions, config)[1]()
    path = folder / f"{game}-{network}.pt"
    alphazero.save(str(path), game, net, config, {})
    return path


def ppo_policy(folder, game, norm=True):
    vec = ppo.vector_env(game, 1)
    torch.manual_seed(5)
    net = ActorCritic(vec.single_observation_space, vec.single_action_space, (16,), norm_obs=norm)
    vec.close()
    if norm:  # running statistics away from the identity: the file must scale as the policy
        size = net.obs_norm.mean.shape[0]
        net.obs_norm.update(np.random.default_rng(0).random((64, size)) * 2.0)
    path = folder / f"ppo-{game}.pt"
    ppo.save(str(path), net, game)
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Checkpoints and their submissions: a connectx network trained a little (it beats
    random), an untrained tictactoe network, an untrained connectx residual network, an
    untrained connectx PPO policy with running statistics."""
    folder = tmp_path_factory.mktemp("submission")
    config = alphazero.AlphaZeroConfig(
        num_games=32,
        simulations=16,
        iterations=2,
        hidden=(64,),
        batch_size=64,
        updates=20,
        learning_rate=3e-3,
        eval_every=0,
        eval_simulations=SIMULATIONS,
        seed=1,
    )
    alphazero.train("connectx", config, str(folder / "run"))
    checkpoints = {
        "connectx": folder / "run" / "model.pt",
        "tictactoe": untrained_alphazero(folder, "tictactoe"),
        "resnet": untrained_alphazero(folder, "connectx", network="resnet"),
        "ppo": ppo_policy(folder, "connectx"),
    }
    out = {}
    for name, path in checkpoints.items():
        target = folder / f"{name}.py"
        code, text, err = cli_run("export", "kaggle", str(path), "--out", str(target))
        assert code == 0, err
        assert text.startswith(f"wrote {target}") and "a Kaggle agent for" in text
        out[name] = (path, target)
    return out


def cli_run(*argv):
    from vecenv.cli import main

    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(list(argv))
    return code, stdout.getvalue(), stderr.getvalue()


def positions(game, count=48, plies=12, seed=5):
    """(engine state of one episode, seat to move, board as a list) of positions reached by
    random legal moves."""
    engine = Engine(game, num_envs=count, seed=0, autoreset="disabled")
    engine.reset(seed=seed)
    rng = np.random.default_rng(seed)
    found = []
    for ply in range(plies):
        state = engine.get_state()
        active = (state["status"] == ACTIVE) & (state["done"] == 0)[:, None]
        legal = engine.obs["legal"]
        actions = np.zeros((count, 2), dtype=np.int64)
        for i in range(count):
            if not active[i].any():
                continue
            seat = int(np.argmax(active[i]))
            if ply % 2 == 0:
                found.append(
                    (state[i : i + 1].copy(), seat, [int(v) for v in engine.obs["board"][i]])
                )
            actions[i] = rng.choice(np.flatnonzero(legal[i]))
        engine.step(actions)
    return found


# -- the file -------------------------------------------------------------------------------------


BLOCKER = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "numba", "vecenv", "gymnasium", "tests"):
            raise ImportError("blocked: " + name)
sys.meta_path.insert(0, Block())
sys.path = [p for p in sys.path if p not in ("", ".")]
namespace = {}
exec(compile(open(sys.argv[1]).read(), sys.argv[1], "exec"), namespace)
agent = [v for v in namespace.values() if callable(v)][-1]
board = [0] * int(sys.argv[2])
print(agent.__name__, agent({"board": board, "mark": 1}, {"rows": 6, "columns": 7, "inarow": 4}))
loaded = {m.split(".")[0] for m in sys.modules}
print(sorted(loaded & {"torch", "numba", "vecenv"}))
"""


def test_the_file_needs_numpy_and_the_standard_library_alone(files, tmp_path):
    for name, (_, path) in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                imported.add((node.module or "").split(".")[0])
        assert imported <= set(sys.stdlib_module_names) | {"numpy"}, (name, imported)
        # Kaggle's rule: the agent is the file's last callable.
        last = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))][-1]
        assert last.name == "agent" and [a.arg for a in last.args.args] == [
            "observation",
            "configuration",
        ]
        cells = 9 if name == "tictactoe" else 42
        done = subprocess.run(
            [sys.executable, "-c", BLOCKER, str(path), str(cells)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        first, loaded = done.stdout.splitlines()
        assert first.startswith("agent ") and loaded == "[]", done.stdout


def test_the_network_in_numpy_is_the_checkpoints(files):
    cases = (("connectx", "connectx"), ("tictactoe", "tictactoe"), ("ppo", "connectx"))
    for name, game in (*cases, ("resnet", "connectx")):
        checkpoint, path = files[name]
        namespace = load_file(path)
        loaded = tournament.load(str(checkpoint))
        shape = SHAPES[game]
        for _, seat, board in positions(game):
            obs = {"board": np.array([board], np.int8), "mark": np.array([seat + 1], np.int8)}
            legal = np.array([[v == 0 for v in board[: shape[1]]]]) if game == "connectx" else None
            legal = np.array([[v == 0 for v in board]]) if game == "tictactoe" else legal
            move = namespace["greedy"](board, seat + 1, shape)
            if name == "ppo":
                assert move == loaded.selfplay({**obs, "legal": legal}, legal)[0]
                continue
            logits, value = loaded.evaluator(obs, legal)
            mine, my_value = namespace["network"]({"board": board, "mark": seat + 1})
            assert (
                np.allclose(mine, logits[0], rtol=0, atol=1e-5) and abs(my_value - value[0]) < 1e-5
            )
            assert move == loaded.policy(obs, legal)[0]


def test_the_search_is_vecenvs_move_for_move(files):
    for name, game in (
        ("connectx", "connectx"),
        ("tictactoe", "tictactoe"),
        ("resnet", "connectx"),
    ):
        checkpoint, path = files[name]
        namespace = load_file(path)
        assert namespace["SIMULATIONS"] == SIMULATIONS  # the run's evaluation search, by default
        player = alphazero.load(str(checkpoint))

        def file_network(obs, legal, namespace=namespace):
            out = [
                namespace["network"]({"board": [int(v) for v in b], "mark": int(m)})
                for b, m in zip(obs["board"], obs["mark"], strict=True)
            ]
            return np.array([o[0] for o in out]), np.array([o[1] for o in out])

        engine = Engine(game, num_envs=1, seed=0, autoreset="disabled")
        # vecenv's search with the file's own network: the same tree, the same move; and the
        # checkpoint as it plays in vecenv (its network in PyTorch, Player.agent's search)
        same = search.MCTS(engine, SIMULATIONS, selection="gumbel", gumbel_scale=0.0,
                           evaluator=file_network)  # fmt: skip
        own = search.MCTS(engine, SIMULATIONS, selection="gumbel", gumbel_scale=0.0,
                          evaluator=player.evaluator)  # fmt: skip
        found = positions(game, count=24)
        agree = 0
        for state, seat, board in found:
            move = namespace["agent"]({"board": board, "mark": seat + 1}, {})
            assert move == namespace["search"](board, seat + 1, SHAPES[game], SIMULATIONS)
            assert move == same.search(state, seed=0, seats=np.array([seat])).action[0]
            agree += move == own.search(state, seed=0, seats=np.array([seat])).action[0]
        assert agree >= 0.95 * len(found), (game, agree, len(found))


def test_the_move_is_always_legal_and_takes_a_win(files):
    namespace = load_file(files["connectx"][1])
    config = {"rows": 6, "columns": 7, "inarow": 4}
    # three in the bottom row for mark 1, to move: the search finds the win
    board = [0] * 42
    board[35:38] = [1, 1, 1]
    board[28:31] = [2, 2, 2]
    assert namespace["agent"]({"board": board, "mark": 1}, config) == 3
    # a board of another size than the network's: the rules' move (here the block), legal
    small = [0] * 30
    small[24:27] = [2, 2, 2]
    move = namespace["agent"]({"board": small, "mark": 1}, {"rows": 5, "columns": 6, "inarow": 4})
    assert move == 3
    # one column left open: that one
    full = [1 if (c + r) % 2 else 2 for r in range(6) for c in range(7)]
    for r in range(6):
        full[r * 7 + 4] = 0
    assert namespace["agent"]({"board": full, "mark": 2}, config) == 4


def test_kaggle_environments_runs_it_and_it_beats_random(files):
    """kaggle-environments' own connectx: the file's agent by its path, seats alternating."""
    path = str(files["connectx"][1])
    points = 0
    for match in range(10):
        agents = [path, "random"] if match % 2 == 0 else ["random", path]
        random.seed(match)  # Kaggle's random agent draws from Python's random
        env = reference.make("connectx", debug=True)
        steps = env.run(agents)
        mine = match % 2
        last = steps[-1]
        assert all(agent["status"] == "DONE" for agent in last), [a["status"] for a in last]
        statuses = {agent["status"] for step in steps for agent in step}
        assert not statuses & {"ERROR", "INVALID", "TIMEOUT"}, statuses
        points += last[mine]["reward"] == 1
    assert points >= 7, points
    # tictactoe, and a PPO policy's file, to the end too
    for name, game in (("tictactoe", "tictactoe"), ("ppo", "connectx")):
        steps = reference.make(game, debug=True).run([str(files[name][1]), "random"])
        assert all(agent["status"] == "DONE" for agent in steps[-1]), (name, steps[-1])


# -- refused ------------------------------------------------------------------------------------


def test_unsupported_games_and_bad_files_are_refused_in_one_line(files, tmp_path):
    rps = untrained_alphazero(tmp_path, "rps", hidden=(8,))
    vec = ppo.vector_env("CartPole-v1", 1)
    net = ActorCritic(vec.single_observation_space, vec.single_action_space, (8,))
    vec.close()
    cartpole = tmp_path / "cartpole.pt"
    ppo.save(str(cartpole), net, "CartPole-v1")
    garbled = tmp_path / "garbled.pt"
    garbled.write_bytes(b"\x80\x02not a checkpoint at all" * 10)
    out = str(tmp_path / "s.py")
    cases = [
        ([str(rps)], "written for connectx, tictactoe (their rules fit in the file), not rps"),
        ([str(cartpole)], "not cartpole"),
        ([str(tmp_path / "missing.pt")], "no such checkpoint file"),
        ([str(garbled)], "garbled.pt"),
        ([str(files["ppo"][0]), "--simulations", "4"], "only an AlphaZero checkpoint"),
        ([str(files["tictactoe"][0]), "--simulations", "x"], "--simulations"),
        ([str(files["tictactoe"][0]), "--out", str(tmp_path / "s.txt")], "FILE.py"),
        ([str(files["tictactoe"][0]), "--out", str(tmp_path / "no" / "s.py")], "no directory"),
    ]
    for argv, message in cases:
        args = [*argv, "--out", out] if "--out" not in argv else argv
        code, text, err = cli_run("export", "kaggle", *args)
        assert code == 2 and message in err, (argv, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert not (tmp_path / "s.py").exists()
    real = importlib.util.find_spec
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            importlib.util, "find_spec", lambda n, *a: None if n == "torch" else real(n, *a)
        )
        code, _, err = cli_run("export", "kaggle", str(rps), "--out", out)
    assert code == 2 and 'needs torch: pip install ".[train]"' in err
    with pytest.raises(ValueError, match="connectx, tictactoe"):
        alphazero.load(str(rps)).kaggle_submission()
    with pytest.raises(ValueError, match="simulations"):
        alphazero.load(str(files["tictactoe"][0])).kaggle_submission(-1)
