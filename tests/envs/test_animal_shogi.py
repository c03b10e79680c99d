"""Animal shogi beside Pgx's ``animal_shogi``: the same legal masks, boards, hands, rewards, ends
and observation tensors (``rules.planes``, both players' views) at every ply of random and
scripted games, replayed in Pgx by ``pgx_replay``.

The random games (some choosing any action now and then, so that illegal actions end them as Pgx
rules) end every way a game ends: checkmate, the try, repetition and the 256-ply limit. Two
scripted games repeat positions: by moves back and forth (a draw at the third occurrence) and
by the lions walking round triangles, where Pgx's key of a position counts the moves that took
nothing (see ``rules``): the position's third occurrence goes on and the game is drawn at its
fifth, in Pgx and in ours.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vecenv
from tests.envs import pgx_replay
from vecenv import selfplay
from vecenv.envs.animal_shogi import rules
from vecenv.envs.animal_shogi.rules import ACTIONS, label
from vecenv.kernels.turns import INVALID

WIDTH = 96
PLIES = 256
# (square, square) moves from the start, agent 0 first.
OPENING = [(3, 2), (8, 9), (2, 1), (9, 10)]  # the giraffes make room
TRIANGLES = OPENING + [(7, 3), (4, 8), (3, 2), (8, 9), (2, 7), (9, 4)] * 5
BACK_AND_FORTH = OPENING + [(7, 3), (4, 8), (3, 7), (8, 4)] * 2
SCRIPTS = [TRIANGLES, BACK_AND_FORTH]
RANDOM = WIDTH - len(SCRIPTS)


def shown(state):
    import jax
    import jax.numpy as jnp

    env_observe = jax.vmap(pgx_replay.pgx()[1].make("animal_shogi")._observe)
    other = env_observe(state, 1 - state.current_player)
    return (
        state.legal_action_mask,
        state._board,
        state._hand,
        state._turn,
        state.rewards,
        state.terminated,
        state.observation,
        other,
        jnp.int32(state._step_count),
    )


def ours_board(board, turn):
    """Pgx's board (the mover's view: 0-4 the mover's, 5-9 the other's, -1 empty) as ours."""
    codes = np.where(board < 0, 0, np.where(board < 5, board + 1, 4 - board))
    return np.where(turn[..., None] == 0, codes, -codes[..., ::-1])


@pytest.fixture(scope="module")
def games():
    replay = pgx_replay.Replay("animal_shogi", shown, WIDTH, seed=0)
    engine = vecenv.make("animal_shogi", num_envs=WIDTH, seed=2, autoreset="disabled")
    record = {
        name: np.zeros((PLIES + 1, WIDTH) + shape, dtype=dtype)
        for name, shape, dtype in (
            ("legal", (ACTIONS,), bool),
            ("board", (12,), np.int8),
            ("hands", (2, 3), np.int8),
            ("rewards", (2,), float),
            ("terminated", (), bool),
            ("turn", (), np.int64),
        )
    }
    record["planes"] = [[None] * WIDTH for _ in range(PLIES + 1)]

    def keep(t):
        for name in ("legal", "board", "hands"):
            record[name][t] = engine.obs[name]
        record["rewards"][t] = engine.rewards
        record["terminated"][t] = engine.terminated
        record["turn"][t] = engine.states["turn"]
        for player in (0, 1):
            for i, p in enumerate(rules.planes(engine.states, player)):
                if record["planes"][t][i] is None:
                    record["planes"][t][i] = [None, None]
                record["planes"][t][i][player] = p

    rng = np.random.default_rng(2)
    illegal = np.zeros(WIDTH)
    illegal[:16] = 0.03
    scripted = {}
    for k, script in enumerate(SCRIPTS):
        game = RANDOM + k
        illegal[game] = 0.0
        scripted[game] = [label(f, t, ply % 2) for ply, (f, t) in enumerate(script)]

    actions, ended = pgx_replay.play_ours(engine, PLIES, rng, illegal, keep, scripted)
    theirs = replay.run(actions)
    return record, theirs, replay.first_players, ended, engine


def test_every_ply_is_pgxs(games):
    ours, theirs, first, ended, engine = games
    legal, board, hands, turn, rewards, terminated, observation, other, plies = theirs
    agents = np.stack([first, 1 - first], axis=1)  # Pgx's player id of each agent
    for i in range(WIDTH):
        last = ended[i]
        where = f"game {i}"
        # Pgx plays an illegal action out before it ends the game: the position after one is
        # not compared.
        shown = last if engine.states["status"][i].max() == INVALID else last + 1
        np.testing.assert_array_equal(
            ours["board"][:shown, i], ours_board(board[:shown, i], turn[:shown, i]), err_msg=where
        )
        mine = hands[:shown, i]
        mine = np.where(turn[:shown, i, None, None] == 0, mine, mine[:, ::-1])
        np.testing.assert_array_equal(ours["hands"][:shown, i], mine, err_msg=where)
        np.testing.assert_array_equal(
            ours["terminated"][: last + 1, i], terminated[: last + 1, i], err_msg=where
        )
        np.testing.assert_array_equal(
            ours["rewards"][1 : last + 1, i],
            rewards[1 : last + 1, i][:, agents[i]],
            err_msg=f"{where}: rewards",
        )
        np.testing.assert_array_equal(ours["turn"][:last, i], turn[:last, i], err_msg=where)
        np.testing.assert_array_equal(ours["legal"][:last, i], legal[:last, i], err_msg=where)
        for t in range(last):
            mover = turn[t, i]
            np.testing.assert_array_equal(
                ours["planes"][t][i][mover], observation[t, i], err_msg=f"{where}, ply {t}"
            )
            np.testing.assert_array_equal(
                ours["planes"][t][i][1 - mover], other[t, i], err_msg=f"{where}, ply {t}: other"
            )


def end_of(engine, i):
    state = engine.states[i]
    if INVALID in state["status"]:
        return "illegal"
    if state["reward"][0] != 0:
        board = state["board"]
        tried = (board[[0, 4, 8]] == rules.LION).any() or (board[[3, 7, 11]] == -rules.LION).any()
        return "try" if tried else "checkmate"
    if state["repetitions"] == 2:
        return "repetition"
    assert state["ply"] == rules.MAX_PLIES
    return "limit"


def test_the_games_end_every_way(games):
    _, _, _, ended, engine = games
    ends = [end_of(engine, i) for i in range(WIDTH)]
    assert {"illegal", "try", "checkmate", "repetition", "limit"} <= set(ends)
    # The triangles: the position's third occurrence (ply 16) went on, its fifth drew.
    assert ends[RANDOM:] == ["repetition", "repetition"]
    assert ended[RANDOM] == 28 and ended[RANDOM + 1] == len(BACK_AND_FORTH)


# ---- the legal moves against a plain transcription of the rules --------------------------------


def plain_legal(board, hands, turn):
    """The legal labels by brute force: every label tried on a copy of the board, legal when the
    piece may move so (or the kind is in hand and the square empty) and no piece of the other
    player attacks the mover's lion afterwards."""
    sign = 1 - 2 * turn
    legal = np.zeros(ACTIONS, dtype=bool)

    def attacks(b, frm, to):
        code = b[frm]
        owner = 0 if code > 0 else 1
        x0, y0, x1, y1 = frm // 4, frm % 4, to // 4, to % 4
        dx, dy = (x1 - x0, y1 - y0) if owner == 0 else (x0 - x1, y0 - y1)
        if max(abs(dx), abs(dy)) != 1:
            return False
        kind = abs(code)
        return {
            1: dx == 0 and dy == -1,
            2: dx != 0 and dy != 0,
            3: dx == 0 or dy == 0,
            4: True,
            5: dx == 0 or dy != 1,
        }[kind]

    def safe(b):
        lion = int(np.flatnonzero(b == 4 * sign)[0])
        return not any(b[q] * sign < 0 and attacks(b, q, lion) for q in range(12))

    for a in range(ACTIONS):
        b = board.copy()
        if a < 96:
            d, seen = divmod(a, 12)
            frm = seen if turn == 0 else 11 - seen
            x, y = seen // 4 + rules.DX[d], seen % 4 + rules.DY[d]
            if not (0 <= x < 3 and 0 <= y < 4) or b[frm] * sign <= 0:
                continue
            to = 4 * x + y if turn == 0 else 11 - (4 * x + y)
            if b[to] * sign > 0 or not attacks(b, frm, to):
                continue
            b[to], b[frm] = b[frm], 0
        else:
            kind, seen = divmod(a - 96, 12)
            to = seen if turn == 0 else 11 - seen
            if hands[turn, kind] == 0 or b[to] != 0:
                continue
            b[to] = (kind + 1) * sign
        legal[a] = safe(b)
    return legal


@pytest.fixture(scope="module")
def positions():
    """Positions of random games, a few hundred plies of 16 games."""
    engine = vecenv.make("animal_shogi", num_envs=16, seed=7)
    seats = selfplay.Seats(engine)
    seats.assign("random", np.zeros(16, dtype=np.int64))
    seats.assign("random", np.ones(16, dtype=np.int64))
    found = []
    for _ in range(24):
        seats.step(1)
        running = ~engine.terminated
        found.extend(engine.states[running].copy())
    return found


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_legal_moves_are_the_plain_rules(positions, data):
    state = positions[data.draw(st.integers(0, len(positions) - 1))]
    expected = plain_legal(state["board"], state["hands"], int(state["turn"]))
    np.testing.assert_array_equal(state["legal"] != 0, expected)


# ---- the state ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("board", lambda b: b.__setitem__(7, 0), "one lion"),
        ("board", lambda b: b.__setitem__(1, 1), "two chicks"),
        ("legal", lambda legal: legal.__setitem__(0, 1 - legal[0]), "legal moves"),
        ("turn", lambda _: 1, "turn"),
        ("hash", lambda _: 5, "history"),
    ],
)
def test_a_corrupted_state_is_refused_and_changes_nothing(field, value, message):
    engine = vecenv.make("animal_shogi", num_envs=2, seed=1)
    records = engine.get_state()
    if field in ("turn", "hash"):
        records[field][0] = value(None)
    else:
        value(records[field][0])
    before = engine.states.copy()
    with pytest.raises(ValueError, match=message):
        engine.set_state(records)
    np.testing.assert_array_equal(engine.states, before)
