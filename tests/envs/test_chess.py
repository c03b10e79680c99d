"""Chess beside Pgx's ``chess``: the same legal masks, boards, rights, clocks, rewards and ends at
every ply of random and scripted games (``chess_pgx`` replays ours in Pgx).

The games start from the game's start (random legal moves), from the Chess Programming Wiki's
perft positions (castling, en passant and promotions at every turn) and from positions one to
eight plies before each way a game ends (checkmate, stalemate, threefold repetition, the
fifty-move rule, insufficient material), plus an under-promotion, an en-passant capture and rooks
captured in their corners (castling rights); after their script they go on randomly. Pgx ends the
long random games after 512 plies, as ours does.
"""

import numpy as np
import pytest

import vecenv
from tests.envs import chess_pgx
from vecenv.envs.chess import fen as chess_fen
from vecenv.envs.chess.moves import ACTIONS
from vecenv.kernels.turns import ACTIVE

START = chess_fen.START
PERFT_POSITIONS = [
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",  # Kiwipete
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
]
# (position, its first moves): each ends the game, or sets up a rule, in a known way.
SCRIPTED = [
    (START, "f2f3 e7e5 g2g4 d8h4"),  # checkmate: black wins
    ("7k/4Q3/6K1/8/8/8/8/8 w - - 0 1", "e7f7"),  # stalemate
    (
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
        "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8",  # the third occurrence: a draw
    ),
    ("8/8/8/4k3/8/8/8/R3K3 w - - 98 60", "a1a2 e5e4"),  # the fifty-move rule
    ("8/8/8/4k3/2b5/8/3n4/4K3 w - - 0 1", "e1d2"),  # a king and a bishop against a king
    ("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3", "e5f6"),  # en passant
    ("8/1P6/8/8/8/8/6k1/K7 w - - 0 1", "b7b8n"),  # under-promotion to a knight
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "a1a8 e8e7 h1h8"),  # rooks taken in corners
    ("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "e8c8 e1g1"),  # castling both ways
]
RANDOM_STARTS = chess_pgx.WIDTH - len(PERFT_POSITIONS) - len(SCRIPTED)
FIELDS = ("board", "castling", "en_passant", "halfmove", "fullmove")


def play_ours(fens, scripts, seed):
    """Our games from ``fens``: the scripted UCI moves, then uniformly random legal ones, until
    every game ends. Returns (the per-ply record as ``chess_pgx`` gives Pgx's, the actions)."""
    n, plies = len(fens), chess_pgx.PLIES
    engine = vecenv.make("chess", num_envs=n, seed=seed, autoreset="disabled")
    engine.reset(position=[{"fen": f} for f in fens])
    rng = np.random.default_rng(seed)
    record = {
        "legal": np.zeros((plies + 1, n, ACTIONS), dtype=bool),
        "board": np.zeros((plies + 1, n, 64), dtype=np.int8),
        "turn": np.zeros((plies + 1, n), dtype=np.int64),
        "castling": np.zeros((plies + 1, n, 4), dtype=bool),
        "en_passant": np.zeros((plies + 1, n), dtype=np.int64),
        "halfmove": np.zeros((plies + 1, n), dtype=np.int64),
        "fullmove": np.zeros((plies + 1, n), dtype=np.int64),
        "rewards": np.zeros((plies + 1, n, 2)),
        "terminated": np.zeros((plies + 1, n), dtype=bool),
    }
    actions = np.zeros((plies, n), dtype=np.int64)

    def keep(t):
        for name in FIELDS + ("legal",):
            record[name][t] = engine.obs[name]
        record["turn"][t] = engine.states["status"][:, 1] == ACTIVE
        record["rewards"][t] = engine.rewards
        record["terminated"][t] = engine.terminated

    keep(0)
    moves = [script.split() for script in scripts]
    for t in range(plies):
        if engine.terminated.all():
            break
        noise = rng.random((n, ACTIONS))
        chosen = np.argmax(np.where(engine.obs["legal"], noise, -1.0), axis=1)
        for i, script in enumerate(moves):
            if t < len(script):
                chosen[i] = chess_fen.label(script[t], record["turn"][t, i])
                assert engine.obs["legal"][i, chosen[i]], (fens[i], script[t])
        chosen[engine.terminated] = 0
        actions[t] = chosen
        both = np.zeros((n, 2), dtype=np.int64)
        both[np.arange(n), record["turn"][t]] = chosen
        engine.step(both)
        keep(t + 1)
    assert engine.terminated.all()
    return record, actions, engine


@pytest.fixture(scope="module")
def replay():
    return chess_pgx.Replay()


@pytest.fixture(scope="module")
def games(replay):
    fens = PERFT_POSITIONS + [f for f, _ in SCRIPTED] + [START] * RANDOM_STARTS
    scripts = [""] * len(PERFT_POSITIONS) + [s for _, s in SCRIPTED] + [""] * RANDOM_STARTS
    ours, actions, engine = play_ours(fens, scripts, seed=2)
    theirs = replay.run(fens, actions)
    return fens, ours, theirs, engine


def test_every_ply_is_pgxs(games):
    fens, ours, theirs, _ = games
    ended = np.argmax(ours["terminated"], axis=0)  # the ply each game ended
    for i, fen in enumerate(fens):
        last = ended[i]
        where = f"game {i} from {fen!r}"
        for name in FIELDS + ("terminated",):
            np.testing.assert_array_equal(
                ours[name][: last + 1, i], theirs[name][: last + 1, i], err_msg=f"{where}: {name}"
            )
        np.testing.assert_array_equal(
            ours["rewards"][1 : last + 1, i],
            theirs["rewards"][1 : last + 1, i],
            err_msg=f"{where}: rewards",
        )
        # While the game runs: the side to move and its legal moves (Pgx's mask is all true once
        # a game is over, ours empty).
        np.testing.assert_array_equal(
            ours["turn"][:last, i], theirs["turn"][:last, i], err_msg=f"{where}: turn"
        )
        for t in range(last):
            mine, pgx = np.flatnonzero(ours["legal"][t, i]), np.flatnonzero(theirs["legal"][t, i])
            assert mine.tolist() == pgx.tolist(), f"{where}, ply {t}: legal {mine} != {pgx}"


def end_of(engine, i):
    """How game ``i`` ended: checkmate, stalemate, fifty moves, repetition, material, limit."""
    state = engine.states[i]
    if state["reward"][0] != 0:
        return "checkmate"
    if state["repetitions"] == 2:
        return "repetition"
    if state["halfmove"] >= 100:
        return "fifty moves"
    if state["step"] >= 512:
        return "limit"
    from vecenv.envs.chess.moves import insufficient

    if insufficient(state):
        return "material"
    return "stalemate"


def test_the_games_end_every_way(games):
    fens, _, _, engine = games
    ends = [end_of(engine, i) for i in range(len(fens))]
    scripted = ends[len(PERFT_POSITIONS) : len(PERFT_POSITIONS) + 5]
    assert scripted == ["checkmate", "stalemate", "repetition", "fifty moves", "material"]
    assert "limit" in ends
