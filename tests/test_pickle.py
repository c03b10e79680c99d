"""Every engine, Env, VectorEnv and self-play object pickles (pickle and cloudpickle, as Ray
uses) and deep-copies mid-episode, and the copy continues bit-identically to the original."""

import copy
import io
import json
import pickle
import shutil

import cloudpickle
import gymnasium
import numpy as np
import pytest

import vecenv
from vecenv import registry, selfplay
from vecenv.gym.multiagent import MultiAgentVectorEnv
from vecenv.opponent import OpponentEngine

GAMES = registry.list_envs()
GYM_GAMES = [g for g in GAMES if "id" in registry.get_spec(g).gym]
TWO_AGENT_GAMES = [g for g in GAMES if registry.get_spec(g).num_agents == 2]
COPIES = {
    "pickle": lambda o: pickle.loads(pickle.dumps(o)),
    "cloudpickle": lambda o: cloudpickle.loads(cloudpickle.dumps(o)),
    "deepcopy": copy.deepcopy,
}


def same(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    return a == b


def copies(obj):
    return [make(obj) for make in COPIES.values()]


def gym_id(game):
    return f"vecenv/{registry.get_spec(game).gym['id']}"


@pytest.mark.parametrize("game", GYM_GAMES)
def test_env_continues_identically(game):
    env = gymnasium.make(gym_id(game))
    env.reset(seed=7)
    env.action_space.seed(7)
    moves = [env.action_space.sample() for _ in range(24)]
    for a in moves[:4]:
        _, _, term, trunc, _ = env.step(a)
        if term or trunc:
            env.reset()
    loaded = copies(env)
    for a in moves[4:]:
        outs = [e.step(a) for e in [env, *loaded]]
        for out in outs[1:]:
            assert same(out[:4], outs[0][:4])
        if outs[0][2] or outs[0][3]:
            for e in [env, *loaded]:
                e.reset()
    assert all(same(e.unwrapped.get_state(), env.unwrapped.get_state()) for e in loaded)


@pytest.mark.parametrize("game", GYM_GAMES)
def test_vector_env_continues_identically(game):
    mode = gymnasium.vector.AutoresetMode.SAME_STEP
    env = gymnasium.make_vec(gym_id(game), num_envs=3, autoreset_mode=mode)
    env.reset(seed=11)
    env.action_space.seed(11)
    moves = [env.action_space.sample() for _ in range(20)]
    for a in moves[:5]:
        env.step(a)
    loaded = copies(env)
    assert all(type(e) is type(env) for e in loaded)
    for a in moves[5:]:
        outs = [e.step(a) for e in [env, *loaded]]
        for out in outs[1:]:
            assert same(out[:4], outs[0][:4])
            assert same(out[4].get("_final_obs", []), outs[0][4].get("_final_obs", []))


@pytest.mark.parametrize("game", GAMES)
def test_engine_continues_identically(game):
    engine = vecenv.make(game, num_envs=5, seed=3, autoreset="same_step")
    low = engine.action.low.reshape(engine.action.shape)
    high = engine.action.high.reshape(engine.action.shape)
    rng = np.random.default_rng(0)
    shape = (5, engine.num_agents) + engine.action.shape

    def moves():
        if engine.action.discrete:
            return rng.integers(low, high + 1, size=shape).astype(np.int64)
        return rng.uniform(low, high, size=shape)

    for _ in range(3):
        engine.step(moves())
    loaded = copies(engine)
    for e in loaded:
        assert e.num_envs == 5 and e.seed == 3 and e.config == engine.config
        assert same(e.obs, engine.obs) and same(e.rewards, engine.rewards)
    for _ in range(15):
        a = moves()
        outs = [e.step(a) for e in [engine, *loaded]]
        for out in outs[1:]:
            assert same(out, outs[0])
    assert all(same(e.get_state(), engine.get_state()) for e in loaded)


def test_pickle_holds_no_compiled_code():
    engine = vecenv.make("connectx", num_envs=2, seed=1)
    engine.step(np.zeros((2, 2), dtype=np.int64))
    data = pickle.dumps(engine)
    assert b"numba" not in data and b"Dispatcher" not in data
    assert len(data) < 4096
    # A reset after loading reseeds as the original would.
    loaded = pickle.loads(data)
    loaded.reset(seed=4)
    engine.reset(seed=4)
    assert same(loaded.get_state(), engine.get_state())


def test_engine_playing_a_slice_pickles_its_place():
    whole = vecenv.make("cartpole", num_envs=6, seed=9)
    part = vecenv.make("cartpole", num_envs=2, seed=0)
    part.first_episode = 4
    part = pickle.loads(pickle.dumps(part))
    part.reset(seed=9)
    assert same(part.get_state(), whole.get_state(slice(4, 6)))


@pytest.mark.parametrize("mode", ["next_step", "same_step", "disabled"])
@pytest.mark.parametrize("game", TWO_AGENT_GAMES)
def test_multiagent_vector_env_continues_identically(game, mode):
    env = MultiAgentVectorEnv(game, num_envs=4, seed=5, autoreset_mode=mode)
    env.reset(seed=5)
    rng = np.random.default_rng(1)

    def moves():
        # A legal move of every agent to move (the lowest action elsewhere).
        mask = env.action_mask
        scores = rng.random(mask.shape) * mask
        return (scores.argmax(axis=2) + env.single_action_space.start).astype(np.int64)

    for _ in range(4):
        env.step(moves())
    loaded = copies(env)
    for _ in range(16):
        a = moves()
        outs = [e.step(a) for e in [env, *loaded]]
        for out in outs[1:]:
            assert same(out[:4], outs[0][:4])
            assert same(out[4]["action_mask"], outs[0][4]["action_mask"])


def lowest_legal(obs, legal):
    """A batched Python policy (module level, so that plain pickle finds it)."""
    return np.argmax(legal, axis=1).astype(np.int64)


@pytest.mark.parametrize("opponent", ["random", lowest_legal])
def test_opponent_engine_continues_identically(opponent):
    engine = OpponentEngine("connectx", num_envs=6, seed=2, opponent=opponent)
    rng = np.random.default_rng(3)
    for _ in range(3):
        engine.step(rng.integers(0, 7, size=6))
    loaded = copies(engine)
    for _ in range(25):
        a = rng.integers(0, 7, size=6)
        outs = [e.step(a) for e in [engine, *loaded]]
        for out in outs[1:]:
            assert same(out, outs[0])


def test_seats_continue_identically():
    engine = vecenv.make("connectx", num_envs=8, seed=4, autoreset="disabled")
    seats = selfplay.Seats(engine)
    side = np.arange(8) % 2
    seats.assign("negamax", side)
    seats.assign(lambda obs, legal: np.argmax(legal, axis=1).astype(np.int64), 1 - side)
    seats.step(3)
    # Plain pickle cannot carry a lambda; cloudpickle (Ray's) and deepcopy can.
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        pickle.dumps(seats)
    loaded = [cloudpickle.loads(cloudpickle.dumps(seats)), copy.deepcopy(seats)]
    for _ in range(10):
        outs = [s.step(2) for s in [seats, *loaded]]
        for s, out in zip(loaded, outs[1:], strict=True):
            assert same(out, outs[0])
            assert same(s.returns, seats.returns) and same(s.memory, seats.memory)


def test_pickles_naming_the_old_modules_of_moved_classes_load():
    """Seats moved from vecenv.selfplay to vecenv.seats, the Ray classes from the module
    vecenv/ray.py into the package vecenv.ray: pickles made before name the old paths."""
    engine = vecenv.make("connectx", num_envs=4, seed=2, autoreset="disabled")
    seats = selfplay.Seats(engine)
    seats.assign("negamax", np.arange(4) % 2)
    seats.assign("random", 1 - np.arange(4) % 2)
    seats.step(3)
    # Protocol 0 writes a class as "c<module>\n<name>\n": the old module put in its place.
    blob = pickle.dumps(seats, protocol=0)
    assert b"cvecenv.seats\nSeats\n" in blob
    old = pickle.loads(blob.replace(b"cvecenv.seats\nSeats\n", b"cvecenv.selfplay\nSeats\n"))
    assert type(old) is selfplay.Seats
    assert same(old.step(2), seats.step(2)) and same(old.returns, seats.returns)
    pytest.importorskip("ray")
    import vecenv.ray as on_ray

    finder = pickle.Unpickler(io.BytesIO())
    for name in ("VectorEnv", "MultiAgentVectorEnv", "Worker"):
        assert finder.find_class("vecenv.ray", name) is getattr(on_ray, name)


def test_match_results_pickle():
    results = selfplay.play("tictactoe", ("reaction", "random"), 6, seed=1, keep_actions=True)
    for loaded in copies(results):
        assert same(loaded.rewards, results.rewards) and loaded.summary == results.summary
        assert loaded.replay(0).toJSON()["steps"] == results.replay(0).toJSON()["steps"]


def test_game_classes_pickle_by_reference():
    env = gymnasium.make("vecenv/CartPole-v1").unwrapped
    cls = type(env)
    assert pickle.loads(pickle.dumps(cls)) is cls
    vec = gymnasium.make_vec("vecenv/Catch-v0", num_envs=2)
    assert pickle.loads(pickle.dumps(type(vec))) is type(vec)


@pytest.mark.parametrize("game", ["connectx", "tictactoe"])
def test_pettingzoo_parallel_env_continues_identically(game):
    from vecenv import pettingzoo

    env = pettingzoo.parallel_env(game)
    env.reset(seed=6)
    rng = np.random.default_rng(4)

    def moves(e, obs):
        """A random move of every agent (an illegal one ends the game, also a continuation)."""
        return {
            agent: int(e.action_space(agent).start + rng.integers(e.action_space(agent).n))
            for agent in e.agents
        }

    obs = None
    for _ in range(2):
        obs, *_ = env.step(moves(env, obs))
    loaded = copies(env)
    for _ in range(6):
        if not env.agents:
            break
        a = moves(env, obs)
        outs = [e.step(a) for e in [env, *loaded]]
        for out in outs[1:]:
            assert same(out[:4], outs[0][:4])
        obs = outs[0][0]


def test_a_game_registered_from_a_folder_loads_in_a_fresh_process(tmp_path):
    """The pickle names the folder: a process that never registered it registers it on load
    (as a Ray worker does) and continues the episodes as the original."""
    import subprocess
    import sys

    from tests.test_outside_games import ROOT, copy_walk

    folder = copy_walk(tmp_path, "amble")
    vecenv.register(folder)
    env = gymnasium.make_vec("vecenv/Amble-v0", num_envs=4, seed=2)
    env.reset(seed=2)
    env.step(np.ones(4, dtype=np.int64))
    (tmp_path / "env.pkl").write_bytes(pickle.dumps(env))
    code = (
        "import pickle, numpy as np\n"
        f"env = pickle.loads(open({str(tmp_path / 'env.pkl')!r}, 'rb').read())\n"
        "obs = env.step(np.ones(4, dtype=np.int64))[0]\n"
        "print(obs.tolist())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == str(env.step(np.ones(4, dtype=np.int64))[0].tolist())


def _garble_board(s):
    s["board"][0] = 7  # out of the field's bounds


def _float_a_checker(s):
    s["board"][0] = 1  # the top-left cell over an empty column: caught by the rules' own check


@pytest.mark.parametrize(
    "game, garble, match",
    [
        ("connectx", _garble_board, "'board' must be in"),
        ("connectx", _float_a_checker, "floats above an empty cell"),
        ("cartpole", lambda s: s.__setitem__("x", np.nan), "'x' must be finite"),
        ("cartpole", lambda s: s.__setitem__("step", -1), "'step' must be >= 0"),
        ("cartpole", lambda s: s.__setitem__("done", 9), "'done' must be in"),
    ],
)
def test_a_garbled_pickled_state_is_refused_on_load(game, garble, match):
    """Loading runs set_state's checks on the pickled records (numba does no bounds checks): a
    garbled record raises ValueError naming its episode; the good pickle of the same engine still
    loads and continues bit-identically."""
    engine = vecenv.make(game, num_envs=4, seed=5)
    actions = np.zeros((4, engine.num_agents) + engine.action.shape, dtype=engine.action.dtype)
    engine.step(actions)
    good = pickle.dumps(engine)
    kept = engine._states.copy()
    garble(engine._states[2])  # behind set_state's back, as a pickle altered on disk would be
    bad = [pickle.dumps(engine), cloudpickle.dumps(engine)]
    engine._states[:] = kept
    for data in bad:
        with pytest.raises(ValueError, match=rf"episode 2 has a bad state: .*{match}"):
            pickle.loads(data)
    loaded = pickle.loads(good)
    for _ in range(6):
        assert same(loaded.step(actions), engine.step(actions))
    assert same(loaded.get_state(), engine.get_state())


def test_a_pickle_whose_states_do_not_fit_is_refused():
    engine = vecenv.make("cartpole", num_envs=3, seed=1)
    state = engine.__getstate__()
    for states in (engine._states[:2].copy(), np.zeros(3, dtype=[("x", "f8")]), None):
        garbled = dict(state, arrays=dict(state["arrays"], _states=states))
        with pytest.raises(ValueError, match="_states does not fit this game"):
            object.__new__(vecenv.Engine).__setstate__(garbled)


def test_a_pickle_refuses_another_game_of_its_name(tmp_path):
    """A pickled engine of one folder's ``coins`` never plays another folder's ``coins``: the
    pickle remembers its game's sources and loading compares them."""
    from vecenv import scaffold

    mine = scaffold.write_game("coins", tmp_path / "a", agents=2)
    other = scaffold.write_game("coins", tmp_path / "b", agents=2)
    spec = json.loads((other / "coins.json").read_text())
    spec["configuration"]["pile"]["default"] = 13
    (other / "coins.json").write_text(json.dumps(spec))
    vecenv.register(mine)
    data = pickle.dumps(vecenv.make("coins", num_envs=2, seed=1))
    vecenv.unregister("coins")
    vecenv.register(other)
    with pytest.raises(ValueError, match="pickled engine of 'coins'") as raised:
        pickle.loads(data)
    assert str(mine) in str(raised.value) and str(other) in str(raised.value)


def test_a_pickle_loads_into_the_same_game_in_another_folder(tmp_path):
    """The same sources elsewhere (another install, a worker's machine) are the same game."""
    from vecenv import scaffold

    first = scaffold.write_game("coins", tmp_path / "a", agents=2)
    vecenv.register(first)
    engine = vecenv.make("coins", num_envs=2, seed=1)
    data = pickle.dumps(engine)
    vecenv.unregister("coins")
    vecenv.register(shutil.copytree(first, tmp_path / "b" / "coins"))
    loaded = pickle.loads(data)
    assert same(loaded.get_state(), engine.get_state())
