"""Chess's move generator and positions: perft against the Chess Programming Wiki's published
counts, the legal moves and FENs of random games and random positions against python-chess, FEN and
UCI round trips, starting positions (from a FEN or the observation) and what they refuse, and the
rules Pgx adds to the board's (ends, rewards, the illegal move).

python-chess (``chess`` on PyPI) comes with the test extra; outside CI its tests skip without it.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import vecenv
from tests.envs.reference import need
from vecenv import selfplay
from vecenv.envs.chess import fen as chess_fen
from vecenv.envs.chess import render
from vecenv.envs.chess.perft import divide, perft
from vecenv.kernels.position import PositionError
from vecenv.kernels.turns import ACTIVE, DONE, INACTIVE, INVALID, STATUS_NAMES

START = chess_fen.START
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
# The Chess Programming Wiki's perft results, to the depths a test affords in well under a second
# (the start position's depth 5 is 4,865,609 leaves; deeper ones are the benchmark's).
PERFT = [
    (START, [20, 400, 8902, 197281, 4865609]),
    (KIWIPETE, [48, 2039, 97862, 4085603]),
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", [14, 191, 2812, 43238, 674624]),
    ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", [6, 264, 9467, 422333]),
    ("r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1", [6, 264, 9467, 422333]),
    ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", [44, 1486, 62379, 2103487]),
    (
        "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
        [46, 2079, 89890, 3894594],
    ),
]


def _chess():
    return need("chess", "python-chess")


@pytest.mark.parametrize(
    ("fen", "counts"), PERFT, ids=["start", "kiwipete", "3", "4", "4b", "5", "6"]
)
def test_perft_is_the_published_count(fen, counts):
    assert [perft(fen, depth) for depth in range(len(counts) + 1)] == [1] + counts


def test_divide_is_python_chess_per_move():
    chess = _chess()
    board = chess.Board(KIWIPETE)
    theirs = {}
    for move in board.legal_moves:
        board.push(move)
        theirs[move.uci()] = board.legal_moves.count()
        board.pop()
    assert divide(KIWIPETE, 2) == theirs
    assert sum(divide(KIWIPETE, 3).values()) == perft(KIWIPETE, 3)


def test_perft_refuses_a_bad_depth():
    for depth in (-1, 1.5, "2"):
        with pytest.raises(ValueError, match="depth"):
            perft(START, depth)


# ---- against python-chess -----------------------------------------------------------------------


def ours_in_uci(engine, i, turn):
    legal = np.flatnonzero(engine.obs["legal"][i])
    return sorted(chess_fen.uci(a, engine.obs["board"][i], turn) for a in legal)


@pytest.mark.parametrize("seed", range(3))
def test_random_games_are_python_chesss(seed):
    """Random games played in both, ply by ply: the same legal moves (as UCI), the same FEN (the
    en-passant square after every double step, as Pgx keeps it), the same checkmates and
    stalemates."""
    chess = _chess()
    n, plies = 12, 200
    engine = vecenv.make("chess", num_envs=n, seed=seed, autoreset="disabled")
    boards = [chess.Board() for _ in range(n)]
    rng = np.random.default_rng(seed)
    for _ in range(plies):
        actions = np.zeros((n, 2), dtype=np.int64)
        for i, board in enumerate(boards):
            if engine.terminated[i]:
                continue
            turn = 0 if board.turn == chess.WHITE else 1
            assert engine.states["status"][i, turn] == ACTIVE
            assert ours_in_uci(engine, i, turn) == sorted(m.uci() for m in board.legal_moves)
            assert chess_fen.observed_fen(engine.obs, i, turn) == board.fen(en_passant="fen")
            action = rng.choice(np.flatnonzero(engine.obs["legal"][i]))
            board.push_uci(chess_fen.uci(action, engine.obs["board"][i], turn))
            actions[i, turn] = action
        engine.step(actions)
        for i, board in enumerate(boards):
            if engine.terminated[i] and board.is_game_over() and not board.is_repetition(3):
                mated = board.is_checkmate()
                assert (engine.states["reward"][i] != 0).all() == mated
                if mated:  # the side to move lost
                    loser = 0 if board.turn == chess.WHITE else 1
                    assert engine.states["reward"][i, loser] == -1
    assert engine.terminated.any()


@st.composite
def random_position(draw):
    """A FEN of pieces scattered at random around two kings: any material, pins, checks,
    castling rights where king and rook stand at home, an en-passant square where one can be."""
    squares = draw(st.permutations(range(64)))
    board = np.zeros(64, dtype=np.int8)
    board[squares[0]], board[squares[1]] = 6, -6
    for sq in squares[2 : 2 + draw(st.integers(0, 24))]:
        code = draw(st.integers(1, 5)) * draw(st.sampled_from([1, -1]))
        if abs(code) == 1 and sq % 8 in (0, 7):
            continue
        board[sq] = code
    turn = draw(st.integers(0, 1))
    castling = 0
    for bit, king, rook, code in ((1, 32, 56, 1), (2, 32, 0, 1), (4, 39, 63, -1), (8, 39, 7, -1)):
        if board[king] == 6 * code and board[rook] == 4 * code and draw(st.booleans()):
            castling |= bit
    ep = -1
    step = 1 - 2 * turn
    passed = [
        sq
        for sq in range(64)
        if sq % 8 == 5 - 3 * turn
        and board[sq] == 0
        and board[sq + step] == 0
        and board[sq - step] == -step
    ]
    if passed and draw(st.booleans()):
        ep = draw(st.sampled_from(passed))
    return chess_fen.fen(board, turn, castling, ep, 0, 1)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fen=random_position())
def test_the_legal_moves_of_any_position_are_python_chesss(fen):
    chess = _chess()
    engine = vecenv.make("chess", num_envs=1, seed=0, autoreset="disabled")
    try:
        engine.reset(position={"fen": fen})
    except PositionError:
        assume(False)  # a side not to move in check, or a game already over
    board = chess.Board(fen)
    turn = 0 if board.turn == chess.WHITE else 1
    assert ours_in_uci(engine, 0, turn) == sorted(m.uci() for m in board.legal_moves)
    assert chess_fen.record_fen(engine.get_state(0)) == fen
    assert engine.render(0, mode="ansi") == str(board)


def test_fens_round_trip():
    chess = _chess()
    engine = vecenv.make("chess", num_envs=len(PERFT), seed=0, autoreset="disabled")
    fens = [f for f, _ in PERFT]
    engine.reset(position=[{"fen": f} for f in fens])
    for i, fen in enumerate(fens):
        assert chess_fen.record_fen(engine.get_state(i)) == fen
        turn = int(engine.states["status"][i, 1] == ACTIVE)
        assert chess_fen.observed_fen(engine.obs, i, turn) == fen
        assert chess.Board(fen).fen() == fen
    parsed = chess_fen.parse("8/8/8/8/8/8/8/K6k")  # python-chess's defaults for what is left out
    assert chess_fen.fen(**parsed) == "8/8/8/8/8/8/8/K6k w - - 0 1"
    assert chess_fen.parse("8/8/8/8/8/8/8/K6k b - - 3 0")["fullmove"] == 1


def test_uci_and_labels_translate_both_ways():
    engine = vecenv.make("chess", num_envs=1, seed=0, autoreset="disabled")
    # The pawn on a7 attacks b8, which castling queen-side only needs empty.
    engine.reset(position={"fen": "r3k2r/P7/8/8/8/8/6p1/R3K2R b KQkq - 0 1"})
    board = engine.obs["board"][0]
    moves = {chess_fen.uci(a, board, 1): a for a in np.flatnonzero(engine.obs["legal"][0])}
    assert {"e8c8", "e8g8", "g2g1q", "g2h1n", "g2h1r", "g2h1b", "g2h1q"} <= set(moves)
    for move, action in moves.items():
        assert chess_fen.label(move, 1) == action
    assert chess_fen.label("e2e4", 0) == 73 * 33 + chess_fen.label("e2e4", 0) % 73
    for bad in ("e2", "e2e4k", "a1h5", 42):
        with pytest.raises(ValueError):
            chess_fen.label(bad, 0)
    with pytest.raises(ValueError, match="off the board"):
        chess_fen.uci(0, board, 0)  # a1 down: no square


# ---- starting positions -------------------------------------------------------------------------


def observed_position(engine, i):
    return {
        "observation": {n: engine.obs[n][i].copy() for n in engine.obs if n != "legal"},
        "status": [STATUS_NAMES[c] for c in engine.states["status"][i]],
        "step": int(engine.states["step"][i]),
    }


@pytest.mark.parametrize("by", ["fen", "observation"])
def test_a_position_reached_by_play_and_given_go_on_alike(by):
    n = 8
    played = vecenv.make("chess", num_envs=n, seed=3, autoreset="disabled")
    rng = np.random.default_rng(3)

    def random_actions(engine):
        out = np.zeros((n, 2), dtype=np.int64)
        for i in range(n):
            legal = np.flatnonzero(engine.obs["legal"][i])
            turn = int(engine.states["status"][i, 1] == ACTIVE)
            out[i, turn] = rng.choice(legal) if len(legal) else 0
        return out

    for _ in range(30):
        played.step(random_actions(played))
    assert not played.terminated.any()
    if by == "fen":
        turns = (played.states["status"][:, 1] == ACTIVE).astype(int)
        positions = [{"fen": chess_fen.observed_fen(played.obs, i, turns[i])} for i in range(n)]
    else:
        positions = [observed_position(played, i) for i in range(n)]
    placed = vecenv.make("chess", num_envs=n, seed=4, autoreset="disabled")
    placed.reset(position=positions)
    for _ in range(40):
        same = played.obs["repetitions"] == placed.obs["repetitions"]  # no history is given
        for name in played.obs:
            np.testing.assert_array_equal(placed.obs[name][same], played.obs[name][same], name)
        actions = random_actions(played)
        played.step(actions)
        placed.step(actions)


BAD_FENS = [
    ("", "has 0 fields"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1", "has 7 ranks"),
    ("rnbqkbnr/pppppppp/54/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "has 9 squares"),
    ("rnbqkbnr/ppppxppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "is no rank"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "'w' or 'b'"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkx - 0 1", "castling rights"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1", "en-passant square"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - -1 1", "half-move clock"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 x", "has 7 fields"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 9999999999", "at most"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQ1BNR w KQkq - 0 1", "one king of each colour"),
    ("rnbqkbnP/pppppppp/8/8/8/8/PPPPPPP1/RNBQKBNR w KQkq - 0 1", "pawn on the first or last"),
    ("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq e3 0 1", "en-passant square is no"),
    ("4k3/8/8/8/8/8/4Q3/4K3 w - - 0 1", "side not to move in check"),
    ("4k3/8/8/8/8/8/R7/4K3 w - - 100 70", "fifty-move rule"),
    ("R3k3/8/4K3/8/8/8/8/8 b - - 0 1", "checkmate"),
    ("k7/2Q5/1K6/8/8/8/8/8 b - - 0 1", "stalemate"),
    ("4k3/8/8/8/8/8/8/4KB2 w - - 0 1", "insufficient material"),
]


@pytest.mark.parametrize(("fen", "reason"), BAD_FENS)
def test_a_fen_the_rules_cannot_play_is_refused(fen, reason):
    engine = vecenv.make("chess", num_envs=2, seed=0)
    before = engine.get_state()
    with pytest.raises(PositionError, match="fen") as caught:
        engine.reset(position={"fen": fen})
    assert reason in str(caught.value)
    assert (engine.get_state() == before).all()


@settings(max_examples=60, deadline=None)
@given(text=st.one_of(st.text(max_size=90), st.integers(), st.none(), st.lists(st.text())))
def test_any_fen_is_played_or_refused(text):
    engine = vecenv.make("chess", num_envs=1, seed=0)
    try:
        engine.reset(position={"fen": text})
    except PositionError:
        return
    assert engine.obs["legal"].any()


def test_positions_from_the_observation_are_checked():
    engine = vecenv.make("chess", num_envs=1, seed=0)
    start = engine.obs["board"][0].copy()
    two_kings = start.copy()
    two_kings[0] = 6
    cases = [
        ({"observation": {"board": two_kings}}, "observation.board: needs one king"),
        ({"observation": {"color": [1, 0]}}, "agent 0's observation.color"),
        ({"observation": {"en_passant": 20}}, "observation.en_passant"),
        ({"observation": {"halfmove": 100}}, "observation.halfmove: is 100"),
        ({"fen": START, "observation": {"halfmove": 3}}, "fen: gives the whole position"),
        ({"fen": START, "status": ["ACTIVE", "INACTIVE"]}, "fen: gives the whole position"),
        ({"fan": START}, "is no part of a position"),
    ]
    for position, message in cases:
        with pytest.raises(PositionError, match=message):
            engine.reset(position=position)
    engine.reset(
        position={"observation": {"halfmove": 7, "fullmove": 9}, "status": [INACTIVE, ACTIVE]}
    )
    assert chess_fen.observed_fen(engine.obs, 0, 1) == START.replace("w KQkq - 0 1", "b KQkq - 7 9")
    assert engine.obs["legal"][0].sum() == 20
    engine.reset(position={"observation": {"castling": [True, False, False, True]}})
    assert chess_fen.record_fen(engine.get_state(0)).split()[2] == "Kq"


def test_castling_rights_are_kept_as_given():
    """Pgx keeps a FEN's rights even where the king or rook is not at home (python-chess drops
    them): they stay in the FEN, the key and the observation, and allow no castling."""
    engine = vecenv.make("chess", num_envs=1, seed=0)
    stale = "4k3/8/8/8/8/8/8/R3K3 w KQkq - 0 1"
    engine.reset(position={"fen": stale})
    assert chess_fen.record_fen(engine.get_state(0)) == stale
    board = engine.obs["board"][0]
    moves = {chess_fen.uci(a, board, 0) for a in np.flatnonzero(engine.obs["legal"][0])}
    assert "e1c1" in moves and "e1g1" not in moves  # the rook on a1 is home, none on h1


# ---- the rules' ends --------------------------------------------------------------------------


def play_uci(engine, moves, i=0):
    for move in moves.split():
        turn = int(engine.states["status"][i, 1] == ACTIVE)
        actions = np.zeros((engine.num_envs, 2), dtype=np.int64)
        actions[i, turn] = chess_fen.label(move, turn)
        engine.step(actions)


def test_a_repetition_counts_the_start():
    chess = _chess()
    engine = vecenv.make("chess", num_envs=1, seed=0, autoreset="disabled")
    shuffle = "g1f3 g8f6 f3g1 f6g8 "
    play_uci(engine, shuffle)
    assert engine.obs["repetitions"][0] == 1 and not engine.terminated[0]
    play_uci(engine, shuffle)
    board = chess.Board()
    for move in (shuffle * 2).split():
        board.push_uci(move)
    assert board.is_repetition(3) and engine.terminated[0]
    np.testing.assert_array_equal(engine.states["status"][0], [DONE, DONE])
    np.testing.assert_array_equal(engine.states["reward"][0], [0, 0])


@pytest.mark.parametrize(
    ("fen", "moves", "rewards"),
    [
        (START, "f2f3 e7e5 g2g4 d8h4", [-1, 1]),  # black mates
        ("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", "a1a8", [1, -1]),  # white mates
    ],
)
def test_checkmate_scores_and_ends(fen, moves, rewards):
    engine = vecenv.make("chess", num_envs=1, seed=0, autoreset="disabled")
    engine.reset(position={"fen": fen})
    play_uci(engine, moves)
    assert engine.terminated[0] and not engine.truncated[0]
    np.testing.assert_array_equal(engine.rewards[0], rewards)
    assert not engine.obs["legal"].any()


def test_the_game_is_drawn_after_512_plies():
    engine = vecenv.make("chess", num_envs=1, seed=0, autoreset="disabled")
    engine.reset(position={"step": 510})
    play_uci(engine, "g1f3")
    assert not engine.terminated[0]
    play_uci(engine, "g8f6")
    assert engine.terminated[0] and not engine.truncated[0]
    np.testing.assert_array_equal(engine.states["status"][0], [DONE, DONE])
    short = vecenv.make("chess", num_envs=1, seed=0, autoreset="disabled", episodeSteps=5)
    play_uci(short, "g1f3 g8f6 f3g1")
    assert not short.terminated[0]
    play_uci(short, "f6g8")
    assert short.terminated[0]


def test_an_illegal_action_makes_the_mover_invalid():
    engine = vecenv.make("chess", num_envs=2, seed=0, autoreset="disabled")
    engine.step(np.array([[0, 0], [chess_fen.label("e2e4", 0), 0]]))
    np.testing.assert_array_equal(engine.states["status"][0], [INVALID, DONE])
    np.testing.assert_array_equal(engine.rewards[0], [-1, 0])
    assert not engine.obs["legal"][0].any() and engine.obs["legal"][1].sum() == 20


def test_set_state_refuses_records_the_rules_cannot_play():
    engine = vecenv.make("chess", num_envs=2, seed=0)
    play_uci(engine, "e2e4 e7e5 g1f3", i=1)  # (episode 0 steps illegally: INVALID)
    good = engine.get_state()
    for field, value, message in [
        ("bb", 0, "bitboards"),
        ("hash", 1, "Zobrist key"),
        ("legal", 0, "legal moves"),
        ("repetitions", 1, "repetitions"),
        ("since", 2, "since"),
        ("turn", 0, "ACTIVE agent"),
        ("ep", 20, "en_passant"),
    ]:
        bad = good.copy()
        bad[field][1] = value
        with pytest.raises(ValueError, match=message):
            engine.set_state(bad)
        assert (engine.get_state() == good).all()


# ---- agents and frames --------------------------------------------------------------------------


def test_random_self_play_is_legal_and_deterministic_across_threads():
    runs = [
        selfplay.play("chess", ("random", "random"), 256, seed=5, num_threads=t) for t in (1, 2)
    ]
    np.testing.assert_array_equal(runs[0].rewards, runs[1].rewards)
    np.testing.assert_array_equal(runs[0].plies, runs[1].plies)
    assert runs[0].plies.min() >= 4 and runs[0].plies.max() <= 512


def test_the_picture_shows_the_pieces():
    engine = vecenv.make("chess", num_envs=1, seed=0)
    start = engine.render(0)
    assert start.dtype == np.uint8 and start.shape[2] == 3
    play_uci(engine, "e2e4")
    moved = engine.render(0)
    assert moved.shape == start.shape and (moved != start).any()
    assert render.ansi({"board": np.zeros(64, dtype=np.int8)}, {}) == "\n".join(
        ["." + " ." * 7] * 8
    )
