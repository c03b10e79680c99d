"""Tic Tac Toe against Kaggle's own (kaggle-environments 1.20.0, the last release shipping it):
rules, statuses and rewards step by step, the agents, the text board; and random input."""

import inspect
import json
from pathlib import Path

import numba as nb
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vecenv
from tests.kaggle.reference import make as kaggle_make
from vecenv import registry
from vecenv.envs.tictactoe import agents, render
from vecenv.envs.tictactoe.rules import LINES
from vecenv.kernels.agents import AGENT_RNG
from vecenv.kernels.rng import seed_word
from vecenv.kernels.turns import ACTIVE, ERROR, FAILED_REWARD, STATUS_NAMES, TIMEOUT

GAME = "tictactoe"
FOLDER = Path(__file__).resolve().parents[2] / "envs" / GAME


def kaggle_failure(code):
    """What Kaggle's ``env.step`` takes for an agent that raised or ran out of time."""
    if code == TIMEOUT:
        from kaggle_environments.errors import DeadlineExceeded

        return DeadlineExceeded("late")
    return ValueError("x")


def kaggle_outcome(reward):
    return FAILED_REWARD if reward is None else float(reward)


def record_outcomes(record):
    """Each agent's reward as the engine counts it, from a state record."""
    status, reward = record["status"], record["reward"]
    return [
        FAILED_REWARD
        if STATUS_NAMES[int(status[k])] in ("ERROR", "INVALID", "TIMEOUT")
        else float(reward[k])
        for k in range(2)
    ]


def assert_same(engine, env, before):
    """Engine episode 0 after a step against Kaggle's ``env`` after the same step; ``before`` is
    each agent's outcome (engine counting) before the step."""
    record = engine.states[0]
    assert np.asarray(record["board"]).tolist() == env.state[0].observation.board
    assert [STATUS_NAMES[int(c)] for c in record["status"]] == [s.status for s in env.state]
    after = []
    for k, agent in enumerate(env.state):
        failed = agent.status in ("ERROR", "INVALID", "TIMEOUT")
        assert (agent.reward is None) == failed
        if not failed:
            assert float(record["reward"][k]) == agent.reward
        after.append(kaggle_outcome(agent.reward))
    np.testing.assert_array_equal(engine.rewards[0], np.subtract(after, before))
    assert bool(engine.terminated[0]) == env.done
    # The engine's own time limit (episodeSteps) is no part of Kaggle's rules.
    assert bool(engine.truncated[0]) == (record["step"] >= engine.max_episode_steps)
    # The observation follows the record.
    np.testing.assert_array_equal(engine.obs["board"][0], record["board"])
    assert engine.obs["mark"][0].tolist() == [s.observation.mark for s in env.state]
    empty = np.asarray(record["board"]) == 0
    np.testing.assert_array_equal(engine.obs["legal"][0], empty & (not env.done))
    return after


def play_side_by_side(engine, env, rng, fault_rate=0.0, invalid_rate=0.15):
    """One game with the same actions in both; returns Kaggle's final statuses and rewards. With
    ``fault_rate``, an agent is sometimes marked ERROR or TIMEOUT before a step (in the engine
    through its record, in Kaggle by passing the exception as the agent's action)."""
    engine.reset()
    env.reset()
    before = [0.0, 0.0]
    while not env.done:
        board = np.asarray(engine.states[0]["board"])
        seat = int(np.flatnonzero(engine.states[0]["status"] == ACTIVE)[0])
        if rng.random() < invalid_rate:
            cell = int(rng.integers(9))  # maybe a marked cell
        else:
            cell = int(rng.choice(np.flatnonzero(board == 0)))
        actions = [0, 0]
        actions[seat] = cell
        kaggle_actions = list(actions)
        if rng.random() < fault_rate:
            flagged = int(rng.integers(2))
            code = ERROR if rng.random() < 0.5 else TIMEOUT
            record = engine.get_state(0)
            record["status"][flagged] = code
            engine.set_state(record, 0)
            kaggle_actions[flagged] = kaggle_failure(code)
            # The flag is in the record before the step: the engine's step reward counts from it.
            before = record_outcomes(record)
        engine.step(np.array([actions]))
        env.step(kaggle_actions)
        before = assert_same(engine, env, before)
    return [s.status for s in env.state], [s.reward for s in env.state]


@pytest.fixture(scope="module")
def kaggle_env():
    return kaggle_make(GAME, debug=True)


def test_specification_is_kaggles_plus_array_extensions(kaggle_env):
    ours = json.loads((FOLDER / f"{GAME}.json").read_text())
    kaggle_json = Path(inspect.getfile(kaggle_env.interpreter)).with_name(f"{GAME}.json")
    theirs = json.loads(kaggle_json.read_text())
    assert ours["kaggle"] == {}
    assert ours["description"].startswith(theirs["description"])
    for key in ("name", "title", "version", "agents", "configuration", "reward", "status"):
        assert ours[key] == theirs[key], key
    kaggle_action = {k: v for k, v in ours["action"].items() if k not in ("low", "high")}
    assert kaggle_action == theirs["action"]
    extensions = ("shape", "dtype", "low", "high")
    for name, entry in ours["observation"].items():
        if isinstance(entry, dict) and entry.get("kaggle") is False:
            assert name not in theirs["observation"]
            continue
        if isinstance(entry, dict):
            entry = {k: v for k, v in entry.items() if k not in extensions}
        assert entry == theirs["observation"][name], name
    spec = registry.get_spec(GAME)
    assert spec.num_agents == 2
    assert spec.action.discrete and (spec.action.low[0], spec.action.high[0]) == (0, 8)
    # The resolved configuration is Kaggle's, base entries included.
    assert spec.resolve_configuration({}) == dict(kaggle_env.configuration)


@pytest.mark.parametrize("episode_steps", [None, 30])
def test_random_games_match_kaggle(kaggle_env, episode_steps):
    # At the default episodeSteps (10) Kaggle's limit ends a game of nine moves as its full board
    # does; a longer limit leaves the draw to the rules alone.
    engine = vecenv.make(GAME, num_envs=1, seed=3, autoreset="disabled")
    if episode_steps is not None:
        config = {"episodeSteps": episode_steps}
        kaggle_env = kaggle_make(GAME, configuration=config, debug=True)
        engine = vecenv.make(GAME, num_envs=1, seed=3, autoreset="disabled", **config)
    rng = np.random.default_rng(0)
    endings = set()
    for _ in range(100):
        statuses, rewards = play_side_by_side(engine, kaggle_env, rng)
        endings.add((tuple(statuses), tuple(rewards)))
    # Wins for either side, draws and invalid moves by either side all came up.
    assert (("DONE", "DONE"), (1, -1)) in endings
    assert (("DONE", "DONE"), (-1, 1)) in endings
    assert (("DONE", "DONE"), (0, 0)) in endings
    assert (("INVALID", "DONE"), (None, 0)) in endings
    assert (("DONE", "INVALID"), (0, None)) in endings


def test_agents_marked_error_or_timeout_match_kaggle(kaggle_env):
    engine = vecenv.make(GAME, num_envs=1, seed=4, autoreset="disabled")
    rng = np.random.default_rng(1)
    endings = set()
    for _ in range(80):
        statuses, _ = play_side_by_side(engine, kaggle_env, rng, fault_rate=0.3)
        endings.add(tuple(statuses))
    # The mover flagged, and the waiting agent flagged (the mover then ends DONE without moving).
    assert {
        ("ERROR", "DONE"),
        ("DONE", "ERROR"),
        ("TIMEOUT", "DONE"),
        ("DONE", "TIMEOUT"),
    } <= endings


def test_error_on_the_first_move_matches_kaggle(kaggle_env):
    engine = vecenv.make(GAME, num_envs=1, seed=0, autoreset="disabled")
    kaggle_env.reset()
    record = engine.get_state(0)
    record["status"][0] = ERROR
    engine.set_state(record, 0)
    engine.step(np.array([[4, 0]]))
    kaggle_env.step([ValueError("x"), 0])
    assert_same(engine, kaggle_env, record_outcomes(record))
    assert [s.status for s in kaggle_env.state] == ["ERROR", "DONE"]
    assert np.asarray(engine.states[0]["board"]).tolist() == [0] * 9


@pytest.mark.parametrize("episode_steps", [1, 2, 4, 7])
def test_short_episode_steps_end_the_game_like_kaggle(episode_steps):
    env = kaggle_make(GAME, configuration={"episodeSteps": episode_steps}, debug=True)
    engine = vecenv.make(GAME, num_envs=1, seed=0, autoreset="disabled", episodeSteps=episode_steps)
    rng = np.random.default_rng(episode_steps)
    lengths = set()
    for _ in range(20):
        play_side_by_side(engine, env, rng, invalid_rate=0.0)
        lengths.add(int(engine.states[0]["step"]))
    # Kaggle marks every running agent DONE at the step that reaches episodeSteps - 1.
    assert max(lengths) == max(1, episode_steps - 1)


# -- agents ---------------------------------------------------------------------------------------


@nb.njit
def _choose(kinds, obs, status, steps, cfgs, rs, out):
    """Each ACTIVE seat's agent's action (0 for the others), as a match runner asks for them."""
    memory = np.zeros(0, dtype=np.int64)
    for i in range(out.shape[0]):
        for p in range(2):
            out[i, p] = 0
            if status[i, p] == ACTIVE:
                out[i, p] = agents.act(kinds[p], obs, i, p, steps[i], cfgs[0], memory, rs[i])


def agent_obs(board):
    """The engine's observation tuple for one episode with ``board``."""
    board = np.asarray(board, dtype=np.int8).reshape(1, 9)
    return (board, np.array([[1, 2]], dtype=np.int8), board == 0)


def choices(kind, board, player, seed, n):
    """``n`` successive choices of agent ``kind`` for ``player`` on ``board``."""
    obs = agent_obs(board)
    status = np.zeros((1, 2), dtype=np.int8)
    status[0, player] = ACTIVE
    cfgs = registry.get_spec(GAME).config_record(registry.get_spec(GAME).resolve_configuration({}))
    rs = np.zeros(1, dtype=AGENT_RNG)
    rs["rng"] = seed_word(np.uint64(seed), np.uint64(0))
    kinds = np.array([kind, kind], dtype=np.int64)
    out = np.zeros((1, 2), dtype=np.int64)
    picks = []
    for _ in range(n):
        _choose(kinds, obs, status, np.zeros(1, dtype=np.int64), cfgs, rs, out)
        picks.append(int(out[0, player]))
    return picks


def random_board(rng):
    """A board reached by random play (stopping at a win), or now and then any board at all."""
    if rng.random() < 0.3:
        board = rng.integers(0, 3, size=9)
        if (board != 0).all():
            board[rng.integers(9)] = 0
        return board, int(rng.integers(2))
    board = np.zeros(9, dtype=np.int64)
    for move in range(int(rng.integers(0, 9))):
        board[rng.choice(np.flatnonzero(board == 0))] = move % 2 + 1
        if any((board[line] == move % 2 + 1).all() for line in LINES):
            break
    player = int((board != 0).sum() % 2)
    if (board != 0).all():
        board[rng.integers(9)] = 0
    return board, player


def test_names_and_memory():
    assert agents.NAMES == tuple(kaggle_make(GAME).agents) == ("random", "reaction")
    assert agents.MEMORY == 0


def test_reaction_agent_matches_kaggle_where_kaggle_is_deterministic(monkeypatch):
    reaction = kaggle_make(GAME).agents["reaction"]

    class RandomBranch(Exception):
        pass

    def no_choice(options):
        raise RandomBranch

    # Kaggle's agent falls back to random.choice only when it finds no line to take or block.
    monkeypatch.setitem(reaction.__globals__, "choice", no_choice)
    from kaggle_environments.utils import structify

    rng = np.random.default_rng(5)
    deterministic = fallback = 0
    for trial in range(600):
        board, player = random_board(rng)
        (ours,) = choices(agents.NAMES.index("reaction"), board, player, trial, 1)
        try:
            theirs = reaction(structify({"board": board.tolist(), "mark": player + 1}))
        except RandomBranch:
            fallback += 1
            assert board[ours] == 0
        else:
            deterministic += 1
            assert ours == theirs, (board.tolist(), player)
    assert deterministic > 100 and fallback > 100


@pytest.mark.parametrize("name", ["random", "reaction"])
def test_random_choices_are_uniform_over_empty_cells(name):
    board = [1, 0, 0, 0, 2, 0, 0, 0, 0]  # no line to take or block for either mark
    picks = choices(agents.NAMES.index(name), board, 0, seed=7, n=3500)
    counts = np.bincount(picks, minlength=9)
    empty = np.flatnonzero(np.asarray(board) == 0)
    assert counts[np.asarray(board) != 0].sum() == 0
    assert (np.abs(counts[empty] - 500) < 100).all(), counts


def test_random_agent_picks_empty_cells_on_random_boards():
    rng = np.random.default_rng(6)
    for trial in range(300):
        board, player = random_board(rng)
        for pick in choices(agents.NAMES.index("random"), board, player, trial, 3):
            assert board[pick] == 0


def test_agent_mark_is_the_seat_plus_one():
    engine = vecenv.make(GAME, num_envs=2, seed=0)
    assert engine.obs["mark"].tolist() == [[1, 2], [1, 2]]
    # The reaction agent completes its own line first: X at 0, 1 takes 2; O at 3, 4 takes 5.
    board = [1, 1, 0, 2, 2, 0, 0, 0, 0]
    reaction = agents.NAMES.index("reaction")
    assert choices(reaction, board, 0, 0, 1) == [2]
    assert choices(reaction, board, 1, 0, 1) == [5]


@pytest.mark.parametrize("kinds", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_agents_play_only_legal_moves_over_whole_games(kinds):
    n = 64
    engine = vecenv.make(GAME, num_envs=n, seed=8, autoreset="disabled")
    spec = engine.spec
    cfgs = spec.config_record(engine.config)
    rs = np.zeros(n, dtype=AGENT_RNG)
    rs["rng"] = [seed_word(np.uint64(9), np.uint64(i)) for i in range(n)]
    actions = np.zeros((n, 2), dtype=np.int64)
    obs = tuple(engine.obs.values())
    kinds = np.array(kinds, dtype=np.int64)
    for _ in range(9):
        running = ~engine.terminated.copy()
        _choose(kinds, obs, engine.states["status"], engine.states["step"], cfgs, rs, actions)
        movers = engine.states["status"] == ACTIVE
        rows, seats = np.nonzero(movers & running[:, None])
        assert engine.obs["legal"][rows, actions[rows, seats]].all()
        engine.step(actions)
    assert engine.terminated.all()
    status = engine.states["status"]
    assert (status == STATUS_NAMES.index("DONE")).all()


# -- text and frames ------------------------------------------------------------------------------


def test_ansi_is_kaggles_text_board(kaggle_env):
    from kaggle_environments.utils import structify

    engine = vecenv.make(GAME, num_envs=1, seed=0)
    rng = np.random.default_rng(10)
    boards = [np.zeros(9, dtype=np.int64)] + [rng.integers(0, 3, size=9) for _ in range(100)]
    for board in boards:
        record = engine.get_state(0)
        record["board"] = board
        engine.set_state(record, 0)
        theirs = kaggle_env.renderer(structify([{"observation": {"board": board.tolist()}}]), None)
        assert engine.render(0, "ansi") == theirs
        assert render.ansi(record, engine.config) == theirs


def test_rgb_array_shows_the_marks():
    engine = vecenv.make(GAME, num_envs=1, seed=0)
    empty = engine.render(0)
    assert empty.dtype == np.uint8 and empty.ndim == 3 and empty.shape[2] == 3
    record = engine.get_state(0)
    record["board"] = [1, 0, 0, 0, 2, 0, 0, 0, 0]
    engine.set_state(record, 0)
    frame = engine.render(0)
    assert frame.shape == empty.shape
    cell = render.CELL
    changed = (frame != empty).any(axis=2)
    # Only the marked cells' squares change: X in the top-left, O in the centre.
    for pos in range(9):
        r, c = divmod(pos, 3)
        square = changed[r * cell : (r + 1) * cell + render.GAP, c * cell : (c + 1) * cell]
        assert square.any() == (pos in (0, 4)), pos
    assert (frame == render.X_COLOR).all(axis=2).any()
    assert (frame == render.O_COLOR).all(axis=2).any()


# -- random input ---------------------------------------------------------------------------------

FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
N = 4


@pytest.fixture(scope="module")
def fuzz_engine():
    return vecenv.make(GAME, num_envs=N, seed=0)


@FUZZ
@given(moves=st.lists(st.lists(st.integers(0, 8), min_size=2 * N, max_size=2 * N), max_size=30))
def test_random_action_sequences_keep_records_sound(fuzz_engine, moves):
    engine = fuzz_engine
    engine.reset(seed=1)
    for row in moves:
        engine.step(np.array(row, dtype=np.int64).reshape(N, 2))
        board = engine.states["board"]
        x, o = (board == 1).sum(axis=1), (board == 2).sum(axis=1)
        assert ((x - o == 0) | (x - o == 1)).all()
        status = engine.states["status"]
        assert ((status >= 0) & (status <= 5)).all()
        running = (status == ACTIVE).any(axis=1)
        # A running episode has exactly one ACTIVE agent; a step ends it exactly when none is.
        assert ((status == ACTIVE).sum(axis=1) <= 1).all()
        assert (engine.terminated == ~running).all()
        assert (engine.states["reward"].sum(axis=1) == 0).all()
        engine.check_state(engine.get_state())


garbage = st.one_of(
    st.tuples(st.just("board"), st.integers(0, 8), st.sampled_from([-1, 3, 7, 127, -128])),
    st.tuples(st.just("status"), st.integers(0, 1), st.sampled_from([-1, 6, 100])),
    st.tuples(
        st.just("reward"), st.integers(0, 1), st.sampled_from([np.nan, np.inf, 0.5, 2.0, -3.0])
    ),
)


@FUZZ
@given(bad=garbage, where=st.integers(0, N - 1), moves=st.integers(0, 4))
def test_garbage_records_are_refused_and_change_nothing(fuzz_engine, bad, where, moves):
    engine = fuzz_engine
    engine.reset(seed=2)
    for _ in range(moves):
        engine.step(np.tile(np.arange(2 * moves, 2 * moves + 2) % 9, (N, 1)))
    before = engine.get_state()
    obs_before = {k: v.copy() for k, v in engine.obs.items()}
    field, index, value = bad
    state = engine.get_state()
    state[where][field][index] = value
    with pytest.raises(ValueError, match=field):
        engine.set_state(state)
    with pytest.raises(ValueError, match=field):
        engine.set_state(state[where], where)
    np.testing.assert_array_equal(engine.get_state(), before)
    for key, value in engine.obs.items():
        np.testing.assert_array_equal(value, obs_before[key])


def test_setting_one_record_leaves_the_others_untouched():
    engine = vecenv.make(GAME, num_envs=3, seed=0, autoreset="disabled")
    engine.step(np.array([[4, 0], [0, 0], [8, 0]]))
    before = engine.get_state()
    record = engine.get_state(1)
    record["board"] = [1, 1, 0, 2, 2, 0, 0, 0, 0]
    engine.set_state(record, 1)
    np.testing.assert_array_equal(engine.get_state([0, 2]), before[[0, 2]])
    assert engine.obs["legal"][1].tolist() == [False, False, True, False, False, True] + [True] * 3
    # O (to move everywhere) plays 5: a win only on the board that was set.
    engine.step(np.array([[0, 5], [0, 5], [0, 5]]))
    assert engine.terminated.tolist() == [False, True, False]
    assert engine.rewards.tolist() == [[0.0, 0.0], [-1.0, 1.0], [0.0, 0.0]]
    assert engine.states["board"][1].tolist() == [1, 1, 0, 2, 2, 2, 0, 0, 0]
