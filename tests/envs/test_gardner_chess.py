"""Gardner chess beside Pgx's ``gardner_chess``: the same legal masks, boards, clocks, rewards,
ends and observation tensors (``rules.planes``, both players' views) at every ply of random and
scripted games, replayed in Pgx by ``pgx_replay``.

The random games (some choosing any action now and then, so that illegal actions end them as Pgx
rules, some putting off their end) end by checkmate, stalemate, insufficient material,
repetition, the fifty-move rule and the 256-ply limit, and under-promote to every piece; scripted
openings add a quick checkmate and knights shuffling to a threefold repetition. The legal moves
are also checked against python-chess's on positions of random games (the 5x5 board in a corner
of chess's 8x8).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vecenv
from tests.envs import pgx_replay
from vecenv import selfplay
from vecenv.envs.gardner_chess import rules
from vecenv.envs.gardner_chess.rules import ACTIONS, label
from vecenv.kernels.turns import INVALID

WIDTH = 96
PLIES = 256
SCRIPTS = [
    "b1a3 e4e3 a3c4 e5e4 d2d3",  # the black king walks into a checkmate by a pawn
    "b1a3 b5c3 a3b1 c3b5 b1a3 b5c3 a3b1 c3b5",  # knights out and back: the third occurrence
]
RANDOM = WIDTH - len(SCRIPTS)
LONG = range(RANDOM - 8, RANDOM)  # games that put off their end (see ``put_off_the_end``)


def shown(state):
    import jax

    env = pgx_replay.pgx()[1].make("gardner_chess")
    other = jax.vmap(env._observe)(state, 1 - state.current_player)
    return (
        state.legal_action_mask,
        state._board,
        state._turn,
        state._halfmove_count,
        state._fullmove_count,
        state.rewards,
        state.terminated,
        state.observation,
        other,
    )


def ours_board(board, turn):
    """Pgx's boards (the mover's view: the mover's pieces positive, black's board mirrored) as
    ours."""
    mirrored = -board.reshape(board.shape[:-1] + (5, 5))[..., ::-1].reshape(board.shape)
    return np.where(turn[..., None] == 0, board, mirrored)


def put_off_the_end(engine, legal):
    """In the ``LONG`` games, the moves that neither end the game nor repeat a position (those
    that reset the half-move clock once it reaches 60), where there are any: the games then run
    to the 256-ply limit or the fifty-move rule."""
    for i in LONG:
        if engine.terminated[i]:
            continue
        state = engine.states[i]
        keep, reset = [], []
        for action in np.flatnonzero(legal[i]):
            after = state.copy()
            rules.play(after, action)
            after["ply"] += 1
            if rules.settle(after) == 0 and after["repetitions"] == 0:
                keep.append(action)
                if after["halfmove"] == 0:
                    reset.append(action)
        chosen = reset if state["halfmove"] >= 60 and reset else keep
        if chosen:
            legal[i] = False
            legal[i, chosen] = True


def scripted_labels(script):
    return [label(move, ply % 2) for ply, move in enumerate(script.split())]


@pytest.fixture(scope="module")
def games():
    # Pgx's gardner_chess runs slowly unoptimised: here its run costs more than its compile.
    replay = pgx_replay.Replay("gardner_chess", shown, WIDTH, seed=0, quick=False)
    engine = vecenv.make("gardner_chess", num_envs=WIDTH, seed=3, autoreset="disabled")
    names = ("legal", "board", "halfmove", "fullmove", "rewards", "terminated", "turn", "planes")
    record = {name: [] for name in names}

    def keep(t):
        for name in ("legal", "board", "halfmove", "fullmove"):
            record[name].append(engine.obs[name].copy())
        record["rewards"].append(engine.rewards.copy())
        record["terminated"].append(engine.terminated.copy())
        record["turn"].append(engine.states["turn"].astype(np.int64))
        record["planes"].append([rules.planes(engine.states, p) for p in (0, 1)])

    rng = np.random.default_rng(3)
    illegal = np.zeros(WIDTH)
    illegal[:16] = 0.02
    scripts = {RANDOM + k: scripted_labels(s) for k, s in enumerate(SCRIPTS)}
    actions, ended = pgx_replay.play_ours(
        engine, PLIES, rng, illegal, keep, scripts, lambda legal: put_off_the_end(engine, legal)
    )
    theirs = replay.run(actions)
    ours = {name: np.array(value) if name != "planes" else value for name, value in record.items()}
    ours["actions"] = actions[np.arange(PLIES)[:, None] < ended[None, :]]
    return ours, theirs, replay.first_players, ended, engine


def test_every_ply_is_pgxs(games):
    ours, theirs, first, ended, engine = games
    legal, board, turn, halfmove, fullmove, rewards, terminated, observation, other = theirs
    agents = np.stack([first, 1 - first], axis=1)  # Pgx's player id of each agent
    for i in range(WIDTH):
        last = ended[i]
        where = f"game {i}"
        shown_ = last if engine.states["status"][i].max() == INVALID else last + 1
        np.testing.assert_array_equal(
            ours["board"][:shown_, i], ours_board(board[:shown_, i], turn[:shown_, i]), where
        )
        for name, theirs_ in (("halfmove", halfmove), ("fullmove", fullmove)):
            np.testing.assert_array_equal(ours[name][:shown_, i], theirs_[:shown_, i], where)
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
            mine = ours["planes"][t]
            np.testing.assert_array_equal(mine[mover][i], observation[t, i], f"{where}, ply {t}")
            np.testing.assert_array_equal(mine[1 - mover][i], other[t, i], f"{where}, ply {t}")


def end_of(engine, i):
    state = engine.states[i]
    if INVALID in state["status"]:
        return "illegal"
    if state["reward"][0] != 0:
        return "checkmate"
    if state["repetitions"] == 2:
        return "repetition"
    if state["halfmove"] >= 100:
        return "fifty moves"
    if rules.insufficient(state["board"]):
        return "material"
    if state["ply"] == rules.MAX_PLIES:
        return "limit"
    return "stalemate"


def test_the_games_end_every_way(games):
    _, _, _, ended, engine = games
    ends = [end_of(engine, i) for i in range(WIDTH)]
    every = ("illegal", "checkmate", "repetition", "fifty moves", "material", "limit", "stalemate")
    for end in every:
        assert end in ends, (end, sorted(set(ends)))
    assert ends[RANDOM:] == ["checkmate", "repetition"]
    assert ended[RANDOM] == 5 and ended[RANDOM + 1] == 8
    assert engine.states["reward"][RANDOM].tolist() == [1.0, -1.0]


def test_the_games_promote_every_way(games):
    ours, _, _, ended, _ = games
    plays = ours["actions"]
    promoted = plays[(plays % 49 < rules.UNDERPROMOTIONS)]
    assert set((promoted % 49) // 3) == {0, 1, 2}  # to rooks, bishops and knights


# ---- the legal moves against python-chess ------------------------------------------------------


def python_chess_legal(board, turn):
    """The legal moves of a Gardner position by python-chess, as UCI moves: its 5x5 board in the
    corner of an empty 8x8 one, the moves that stay in the corner (lines between two squares of
    the corner stay in it, so checks are the same), without white's pawn double steps, a pawn
    reaching the fifth rank promoting as Gardner's pawns do (a queen's move reads as a plain
    move, as ``rules.uci`` writes it)."""
    chess = pytest.importorskip("chess", reason="python-chess is a test extra")
    big = chess.Board(None)
    for sq in range(25):
        code = int(board[sq])
        if code:
            big.set_piece_at(chess.square(sq // 5, sq % 5), chess.Piece(abs(code), code > 0))
    big.turn = turn == 0
    moves = set()
    for move in big.legal_moves:
        frm, to = move.from_square, move.to_square
        if chess.square_file(to) >= 5 or chess.square_rank(to) >= 5:
            continue
        plain = chess.square_name(frm) + chess.square_name(to)
        if big.piece_type_at(frm) == chess.PAWN:
            if abs(chess.square_rank(to) - chess.square_rank(frm)) == 2:
                continue
            if chess.square_rank(to) == 4 or move.promotion:
                moves.update([plain, plain + "r", plain + "b", plain + "n"])
                continue
        moves.add(plain)
    return moves


@pytest.fixture(scope="module")
def positions():
    """Positions of random games, a few hundred plies of 16 games."""
    engine = vecenv.make("gardner_chess", num_envs=16, seed=11)
    seats = selfplay.Seats(engine)
    seats.assign("random", np.zeros(16, dtype=np.int64))
    seats.assign("random", np.ones(16, dtype=np.int64))
    found = []
    for _ in range(24):
        seats.step(1)
        found.extend(engine.states[~engine.terminated].copy())
    return found


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_legal_moves_are_python_chesss(positions, data):
    state = positions[data.draw(st.integers(0, len(positions) - 1))]
    turn = int(state["turn"])
    bits = np.unpackbits(state["legal"].view(np.uint8), bitorder="little")[:ACTIONS]
    ours = {rules.uci(a, turn) for a in np.flatnonzero(bits)}
    assert ours == python_chess_legal(state["board"], turn)


def test_labels_and_uci_moves_translate_both_ways():
    for turn in (0, 1):
        for action in range(ACTIONS):
            try:
                move = rules.uci(action, turn)
            except ValueError:
                continue
            if rules.TARGET[action // 49, action % 49] >= 0:
                assert label(move, turn) == action, (move, turn, action)


# ---- the state ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r["board"].__setitem__(20, 0), "one king"),
        (lambda r: r["board"].__setitem__(12, 1), "Zobrist"),
        (lambda r: r["legal"].__setitem__(0, r["legal"][0] ^ np.uint64(1)), "legal moves"),
        (lambda r: r.__setitem__("turn", 1), "turn"),
        (lambda r: r["board"].__setitem__(4, 1), "pawn on the first or last rank"),
    ],
)
def test_a_corrupted_state_is_refused_and_changes_nothing(change, message):
    engine = vecenv.make("gardner_chess", num_envs=2, seed=1)
    records = engine.get_state()
    change(records[0])
    before = engine.states.copy()
    with pytest.raises(ValueError, match=message):
        engine.set_state(records)
    np.testing.assert_array_equal(engine.states, before)
