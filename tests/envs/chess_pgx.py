"""Pgx's ``chess`` replaying games played by ours, every ply of many games in one compiled call.

Ours plays first (random legal moves, or scripted UCI moves then random ones), recording at every
ply what it shows; Pgx then replays the same actions from the same starting positions inside one
``jax.jit`` of a ``lax.scan`` over ``jax.vmap(env.step)`` (Pgx's own public step: its legal mask,
rules, rewards and ends) and the two records are compared ply by ply. Compiling Pgx's chess step
is the cost (about a minute of CPU with XLA's optimisations, half that without them: the replay
compiles with most of them off, integers coming out the same), so every game of a test module
shares one compiled replay of fixed length and width.

A starting position reaches Pgx as ``pgx.experimental.chess.from_fen`` builds it (the board,
rights and clocks seen by the side to move, its key first in the history, its legal mask by Pgx's
own ``_legal_action_mask``), inside the compiled call rather than through ``from_fen``, which
compiles anew for every position. Two keys differ from Pgx's own starts, both in the history of
repeated positions: ``from_fen`` also leaves there the key Pgx hard-codes for the game's start,
and ``env.init`` starts the history with that hard-coded key, which is not the key Pgx computes for
the start position under the jax installed here (its Zobrist tables come from ``jax.random``):
Pgx's own start never counts as an occurrence. Each game here starts with its position's key as
Pgx computes it, the rule as Pgx means it and as ours and python-chess play it.
"""

import contextlib

import numpy as np

from tests.envs.reference import need
from vecenv.envs.chess import fen as chess_fen

PLIES = 512  # Pgx's limit: every game ends within the replay
WIDTH = 24  # games per replay


def _pgx():
    jax = need("jax", "jax (Pgx's)")
    pgx = need("pgx", "Pgx")
    return jax, pgx


def seen_by_mover(board, turn):
    """Pgx's view of a board: the side to move's pieces positive, its first rank at the bottom."""
    board = np.asarray(board)
    return board if turn == 0 else -board[np.arange(64) ^ 7]


def absolute(boards, colors):
    """Pgx's boards (N, 64) as ours: white positive, a1 at 0."""
    boards = np.asarray(boards)
    out = boards.copy()
    black = np.asarray(colors) == 1
    out[black] = -boards[black][:, np.arange(64) ^ 7]
    return out


@contextlib.contextmanager
def _quick_compiles(jax):
    """XLA's most expensive optimisations off while Pgx's chess compiles (its tables computed op by
    op on import, then the replay): the module docstring says why."""
    flag = "jax_disable_most_optimizations"
    previous = jax.config.values[flag]
    jax.config.update(flag, True)
    try:
        yield
    finally:
        jax.config.update(flag, previous)


class Replay:
    """The compiled replay: ``run(fens, actions)`` with ``fens`` WIDTH FEN strings and
    ``actions`` (PLIES, WIDTH) action labels; returns the per-ply record as ours writes it."""

    def __init__(self):
        jax, pgx = _pgx()
        with _quick_compiles(jax):
            self._build(jax, pgx)

    def _build(self, jax, pgx):
        import jax.numpy as jnp
        from pgx._src.games import chess as game
        from pgx.chess import State

        self.jax, self.jnp = jax, jnp
        env = pgx.make("chess")
        rules = game.Game()

        def start(board, color, rights, ep, halfmove, fullmove):
            x = game.GameState(
                color=color,
                board=board,
                castling_rights=rights,
                en_passant=ep,
                halfmove_count=halfmove,
                fullmove_count=fullmove,
            )
            history = jnp.zeros_like(x.hash_history).at[0].set(game._zobrist_hash(x))
            boards = jnp.zeros_like(x.board_history).at[0].set(board)
            mask = game._legal_action_mask(x)
            x = x._replace(hash_history=history, board_history=boards, legal_action_mask=mask)
            return State(
                current_player=color,
                legal_action_mask=mask,
                terminated=rules.is_terminal(x),
                _player_order=jnp.int32([0, 1]),
                _x=x,
            )

        def shown(state):
            x = state._x
            return (
                jnp.packbits(state.legal_action_mask, axis=-1),
                x.board,
                x.color,
                x.castling_rights,
                x.en_passant,
                x.halfmove_count,
                x.fullmove_count,
                state.rewards,
                state.terminated,
            )

        def replay(fields, actions):
            state = jax.vmap(start)(*fields)
            step = jax.vmap(env.step)

            def body(state, action):
                state = step(state, action)
                return state, shown(state)

            _, plies = jax.lax.scan(body, state, actions)
            return shown(state), plies

        self._replay = jax.jit(replay)

    def run(self, fens, actions):
        jnp = self.jnp
        fields = [[] for _ in range(6)]
        for text in fens:
            f = chess_fen.parse(text)
            turn = f["turn"]
            rights = [
                [f["castling"] & 2, f["castling"] & 1],
                [f["castling"] & 8, f["castling"] & 4],
            ]
            ep = f["ep"] if f["ep"] < 0 or turn == 0 else f["ep"] ^ 7
            values = (
                seen_by_mover(f["board"], turn),
                turn,
                np.array(rights[::-1] if turn else rights, dtype=bool),
                ep,
                f["halfmove"],
                f["fullmove"],
            )
            for column, value in zip(fields, values, strict=True):
                column.append(value)
        dtypes = (np.int32, np.int32, np.bool_, np.int32, np.int32, np.int32)
        fields = tuple(
            jnp.asarray(np.array(c, dtype=t)) for c, t in zip(fields, dtypes, strict=True)
        )
        with _quick_compiles(self.jax):
            first, plies = self._replay(fields, jnp.asarray(actions, dtype=jnp.int32))
        first = [np.asarray(a)[None] for a in first]
        return _ours(
            [np.concatenate([a, np.asarray(b)]) for a, b in zip(first, plies, strict=True)]
        )


def _ours(record):
    """Pgx's per-ply record (ply 0 the start) in our terms: dict of (PLIES + 1, WIDTH, ...)."""
    packed, boards, colors, rights, ep, halfmove, fullmove, rewards, terminated = record
    t, g = colors.shape
    legal = np.unpackbits(packed, axis=-1)[..., : 64 * 73].astype(bool)
    board = absolute(boards.reshape(t * g, 64), colors.reshape(-1)).reshape(t, g, 64)
    # Pgx's rights, seen by the side to move: [[mine Q, mine K], [theirs Q, theirs K]].
    white = np.where(colors[..., None, None] == 0, rights, rights[..., ::-1, :])
    castling = np.stack(
        [white[..., 0, 1], white[..., 0, 0], white[..., 1, 1], white[..., 1, 0]], -1
    )
    ep = np.where((ep >= 0) & (colors == 1), ep ^ 7, ep)
    return {
        "legal": legal,
        "board": board,
        "turn": colors,
        "castling": castling,
        "en_passant": ep,
        "halfmove": halfmove,
        "fullmove": fullmove,
        "rewards": rewards,  # Pgx's players in order [0, 1]: white, black
        "terminated": terminated,
    }
