"""Shogi beside Pgx's ``shogi``: the same legal masks, boards, hands, rewards, ends and
observation tensors (``rules.planes``) at every ply of random games replayed in Pgx by
``pgx_replay``, and the same legal masks and observations (both players') in 512 random
positions (Pgx's own ``_legal_action_mask`` and ``_observe`` on its state of each), where kings
stand beside
corners and pawns wait in hand, so that the pawn-drop mate rule comes up, including the squares
where Pgx's test of it reads off the board (``rules.drop_pawn_mate``). python-shogi's legal
moves, a second reference, agree everywhere but there. SFENs go both ways; bad positions and
records are refused.
"""

import numpy as np
import pytest

import vecenv
from tests.envs import pgx_replay
from vecenv.envs.shogi import notation, rules
from vecenv.envs.shogi.rules import KING
from vecenv.kernels.position import PositionError
from vecenv.kernels.turns import INVALID

WIDTH = 8
PLIES = rules.MAX_PLIES
POSITIONS = 512
# A pawn dropped on 1c mates gote's king on 1b; Pgx's test of the mate also lets the king step
# to "square -1" (its corner 1a, tested at sente's corner 9i), which it counts as an escape
# where 9i holds a sente piece or is empty and unattacked: the drop is then legal in Pgx and
# ours, not in python-shogi.
CORNER_CASES = [
    "9/6G1k/9/7S1/4B1N2/9/9/9/K8 b P2rb3g3s3n4l17p 1",  # 9i holds sente's king: an escape
    "9/6G1k/9/7S1/4B1N2/9/2p6/9/4K4 b P2rb3g3s3n4l16p 1",  # 9i empty, unattacked: an escape
    "9/6G1k/9/7S1/4B1N2/9/9/9/1K7 b P2rb3g3s3n4l17p 1",  # 9i attacked: a mate, an illegal drop
]
OFF_THE_BOARD = CORNER_CASES[:2]


def shown(state):
    x = state._x
    return (
        state.legal_action_mask,
        x.board,
        x.hand,
        x.color,
        state.rewards,
        state.terminated,
        state.observation,
    )


def pgx_codes(board, turn):
    """Our boards (N, 81) as Pgx's, seen by the player ``turn`` (N,) to move."""
    codes = np.where(board > 0, board - 1, np.where(board < 0, 13 - board, -1)).astype(np.int32)
    turned = np.where(codes < 0, -1, (codes + 14) % 28)[..., ::-1]
    return np.where(np.asarray(turn)[..., None] == 0, codes, turned)


def ours_board(codes, turn):
    """Pgx's boards as ours (the inverse of ``pgx_codes``)."""
    board = np.where(codes < 0, 0, np.where(codes < 14, codes + 1, 13 - codes)).astype(np.int8)
    return np.where(np.asarray(turn)[..., None] == 0, board, -board[..., ::-1])


@pytest.fixture(scope="module")
def games():
    # Pgx's shogi runs slowly unoptimised: here its run costs more than its compile.
    replay = pgx_replay.Replay("shogi", shown, WIDTH, seed=0, quick=False)
    engine = vecenv.make("shogi", num_envs=WIDTH, seed=2, autoreset="disabled")
    record = {n: [] for n in ("legal", "board", "hands", "rewards", "terminated", "turn")}
    record["planes"] = []

    def keep(t):
        for name in ("legal", "board", "hands"):
            record[name].append(engine.obs[name].copy())
        record["rewards"].append(engine.rewards.copy())
        record["terminated"].append(engine.terminated.copy())
        record["turn"].append(engine.states["turn"].astype(np.int64))
        movers = engine.states["turn"]
        both = [rules.planes(engine.obs, p) for p in (0, 1)]
        record["planes"].append(np.where(movers[:, None, None, None] == 0, both[0], both[1]))

    illegal = np.zeros(WIDTH)
    illegal[:3] = 0.01
    rng = np.random.default_rng(2)
    actions, ended = pgx_replay.play_ours(engine, PLIES, rng, illegal, keep)
    theirs = replay.run(actions)
    ours = {n: np.array(v) for n, v in record.items()}
    return ours, theirs, replay.first_players, ended, engine


def test_every_ply_is_pgxs(games):
    ours, theirs, first, ended, engine = games
    legal, board, hand, turn, rewards, terminated, observation = theirs
    agents = np.stack([first, 1 - first], axis=1)
    for i in range(WIDTH):
        last = ended[i]
        where = f"game {i}"
        shown_ = last if engine.states["status"][i].max() == INVALID else last + 1
        np.testing.assert_array_equal(
            ours["board"][:shown_, i], ours_board(board[:shown_, i], turn[:shown_, i]), where
        )
        mine = np.where(turn[:shown_, i, None, None] == 0, hand[:shown_, i], hand[:shown_, i, ::-1])
        np.testing.assert_array_equal(ours["hands"][:shown_, i], mine, err_msg=where)
        np.testing.assert_array_equal(
            ours["terminated"][: last + 1, i], terminated[: last + 1, i], err_msg=where
        )
        np.testing.assert_array_equal(
            ours["rewards"][1 : last + 1, i], rewards[1 : last + 1, i][:, agents[i]], where
        )
        np.testing.assert_array_equal(ours["turn"][:last, i], turn[:last, i], err_msg=where)
        np.testing.assert_array_equal(ours["legal"][:last, i], legal[:last, i], err_msg=where)
        np.testing.assert_array_equal(
            ours["planes"][:last, i], observation[:last, i], err_msg=f"{where}: observation"
        )


def test_the_games_end_every_way(games):
    _, _, _, ended, engine = games
    rewards = engine.states["reward"]
    illegal = (engine.states["status"] == INVALID).any(axis=1)
    assert illegal.any()
    assert (~illegal & (rewards[:, 0] != 0)).any()  # checkmate
    assert (~illegal & (rewards[:, 0] == 0) & (ended == PLIES)).any()  # 512 plies: a draw


# ---- random positions ---------------------------------------------------------------------------


def random_positions(n, rng):
    """``n`` positions with every piece somewhere (a board square or a hand), the player to move
    with a legal move and the other's king not attacked; half with the kings in the corners' 2x2
    squares. Returns (boards (n, 81), hands (n, 2, 7), turns (n,))."""
    found = []
    scratch = np.zeros(2, dtype=vecenv.make("shogi", num_envs=1).state_dtype)
    while len(found) < n:
        board = np.zeros(81, dtype=np.int8)
        hands = np.zeros((2, 7), dtype=np.int8)
        turn = int(rng.integers(2))
        if rng.random() < 0.5:
            board[int(rng.choice([0, 1, 9, 10]))] = -KING
            board[int(rng.choice([80, 79, 71, 70]))] = KING
        else:
            a, b = rng.choice(81, 2, replace=False)
            board[a], board[b] = KING, -KING
        for kind, many in enumerate(rules.IN_ALL, start=1):
            for _ in range(many):
                owner = int(rng.integers(2))
                square = int(rng.choice(np.flatnonzero(board == 0)))
                rank = square % 9 if owner == 0 else 8 - square % 9
                stuck = (kind in (1, 2) and rank == 0) or (kind == 3 and rank < 2)
                if rng.random() < 0.4 or stuck:
                    hands[owner, kind - 1] += 1
                    continue
                code = kind + 8 if kind <= 6 and rng.random() < 0.2 else kind
                board[square] = code * (1 - 2 * owner)
        one = scratch[:1]
        one["board"], one["hands"], one["turn"] = board, hands, turn
        one["status"] = (1, 0) if turn == 0 else (0, 1)
        if rules.build(one, scratch[1:]) == 0:
            found.append((board, hands, turn))
    boards, hands, turns = zip(*found, strict=True)
    return np.array(boards), np.array(hands), np.array(turns)


@pytest.fixture(scope="module")
def positions():
    boards, hands, turns = random_positions(POSITIONS, np.random.default_rng(5))
    parsed = [notation.parse(s) for s in CORNER_CASES]
    boards = np.concatenate([boards, [p["board"] for p in parsed]])
    hands = np.concatenate([hands, [p["hands"] for p in parsed]])
    turns = np.concatenate([turns, [p["turn"] for p in parsed]])
    engine = vecenv.make("shogi", num_envs=len(boards), seed=0)
    engine.reset(
        position=[{"sfen": notation.sfen(*p)} for p in zip(boards, hands, turns, strict=True)]
    )
    return boards, hands, turns, engine.obs["legal"].copy()


def test_positions_are_pgxs(positions):
    jax, _ = pgx_replay.pgx()
    import jax.numpy as jnp
    from pgx._src.games import shogi as game

    boards, hands, turns, legal = positions
    mover_hands = np.where(turns[:, None, None] == 0, hands, hands[:, ::-1]).astype(np.int32)

    @jax.jit
    @jax.vmap
    def pgx(board, hand, color):
        state = game.GameState(board=board, hand=hand, color=color)
        views = (game._observe(state, True), game._observe(state, False))
        return game._legal_action_mask(state), views

    masks, (observations, others) = pgx(
        jnp.asarray(pgx_codes(boards, turns)), jnp.asarray(mover_hands), jnp.asarray(turns)
    )
    np.testing.assert_array_equal(legal, np.asarray(masks))
    observations, others = np.asarray(observations), np.asarray(others)
    for i in range(len(boards)):
        position, turn = {"board": boards[i], "hands": hands[i]}, int(turns[i])
        mine = rules.planes(position, turn)[0]
        np.testing.assert_array_equal(mine, observations[i], err_msg=f"position {i}")
        theirs = rules.planes(position, 1 - turn)[0]
        np.testing.assert_array_equal(theirs, others[i], err_msg=f"position {i}, the other's")
    # The positions hold pawn-drop mates (a pawn in hand, the drop refused) and Pgx's corner.
    refused = 0
    for board, hand, turn, mask in zip(boards, hands, turns, legal, strict=True):
        sign = 1 - 2 * turn
        enemy = int(np.flatnonzero(board == -KING * sign)[0])
        ahead = enemy + sign
        if hand[turn, 0] and 0 <= ahead < 81 and board[ahead] == 0 and enemy % 9 != 4 + 4 * sign:
            label = notation.label(f"P*{notation.square_name(ahead)}", turn)
            refused += not mask[label] and rules.drop_pawn_mate(board.copy(), ahead, enemy, sign)
    assert refused >= 2
    drop = notation.label("P*1c", 0)
    assert legal[POSITIONS, drop] and legal[POSITIONS + 1, drop]  # Pgx's escape off the board
    assert not legal[POSITIONS + 2, drop]


def test_legal_moves_are_python_shogis(positions):
    shogi = pytest.importorskip("shogi", reason="python-shogi (a second reference) not installed")
    boards, hands, turns, legal = positions
    for i in range(len(boards)):
        text = notation.sfen(boards[i], hands[i], int(turns[i]))
        theirs = {move.usi() for move in shogi.Board(text).legal_moves}
        ours = {notation.usi(a, boards[i], int(turns[i])) for a in np.flatnonzero(legal[i])}
        if text in OFF_THE_BOARD:
            assert ours - theirs == {"P*1c"} and theirs <= ours
        else:
            assert ours == theirs, text


# ---- notation, positions, records ---------------------------------------------------------------


def test_sfen_and_usi_go_both_ways(positions):
    boards, hands, turns, legal = positions
    for i in range(0, len(boards), 7):
        parsed = notation.parse(notation.sfen(boards[i], hands[i], int(turns[i]), ply=9))
        np.testing.assert_array_equal(parsed["board"], boards[i])
        np.testing.assert_array_equal(parsed["hands"], hands[i])
        assert parsed["turn"] == turns[i] and parsed["ply"] == 9
        for action in np.flatnonzero(legal[i]):
            move = notation.usi(action, boards[i], int(turns[i]))
            assert notation.label(move, int(turns[i])) == action
    assert notation.sfen(rules.START, np.zeros((2, 7)), 0) == notation.START


@pytest.mark.parametrize(
    ("position", "message"),
    [
        ({"sfen": "9/9/9/9/9/9/9/9/9 b - 1"}, "one king"),
        ({"sfen": notation.START.replace("1B5R1", "1B5R2")}, "rank h"),
        ({"sfen": notation.START.replace(" b ", " x ")}, "side to move"),
        ({"sfen": "4k4/9/4P4/9/9/9/9/9/4K4 b - 1"}, "18 pawns"),
        ({"sfen": "4k4/4G4/9/9/9/9/9/9/4K4 b 2r2b3g4s4n4l18p 1"}, "not to move attacked"),
        ({"sfen": notation.START, "observation": {"board": rules.START}}, "whole position"),
        ({"observation": {"color": np.array([1, 0], dtype=np.int8)}}, "agent 0"),
    ],
)
def test_bad_positions_are_refused(position, message):
    engine = vecenv.make("shogi", num_envs=1, seed=0)
    before = engine.states.copy()
    with pytest.raises(PositionError, match=message):
        engine.reset(position=position)
    np.testing.assert_array_equal(engine.states, before)


def test_a_position_plays_on_as_the_game_that_reached_it():
    played = vecenv.make("shogi", num_envs=1, seed=0, autoreset="disabled")
    for move in ("7g7f", "3c3d", "8h2b+", "3a2b", "B*4e"):
        actions = np.zeros((1, 2), dtype=np.int64)
        turn = int(played.states["turn"][0])
        actions[0, turn] = notation.label(move, turn)
        played.step(actions)
    text = notation.sfen(played.obs["board"][0], played.obs["hands"][0], 1, ply=5)
    given = vecenv.make("shogi", num_envs=1, seed=0, autoreset="disabled")
    given.reset(position={"sfen": text})
    for name in ("board", "hands", "legal"):
        np.testing.assert_array_equal(given.obs[name], played.obs[name], err_msg=name)
    assert given.states["ply"][0] == 5


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r["board"].__setitem__(44, 0), "one king"),
        (lambda r: r["board"].__setitem__(40, 1), "18 pawns"),
        (lambda r: r["legal"].__setitem__(0, r["legal"][0] ^ np.uint64(1)), "legal moves"),
        (lambda r: r.__setitem__("turn", 1), "turn"),
        (lambda r: r["hands"].__setitem__((0, 6), 1), "4 golds"),
    ],
)
def test_a_corrupted_state_is_refused_and_changes_nothing(change, message):
    engine = vecenv.make("shogi", num_envs=2, seed=1)
    records = engine.get_state()
    change(records[0])
    before = engine.states.copy()
    with pytest.raises(ValueError, match=message):
        engine.set_state(records)
    np.testing.assert_array_equal(engine.states, before)
