"""mctx's searches of tictactoe positions, recorded for tests/search/test_mctx.py.

mctx (DeepMind's batched MCTS in JAX, ``pip install mctx``) searches the positions of
``test_reference.positions`` with the deterministic evaluator of ``test_reference`` (priors and
values from a fixed function of the board), as a ``recurrent_fn`` over a tictactoe written here in
JAX (float64), with ``muzero_policy`` (PUCT, no Dirichlet noise) and ``gumbel_muzero_policy``
(Gumbel scale 0, so the search is deterministic). Its visit counts, values and policies are written
to ``mctx_cases.json`` with its sequential halving schedules, so that the test checks vecenv's
search against mctx's where mctx is not installed; where it is, the test also runs this again.

    python -m tests.search.mctx_cases   # rewrites tests/search/mctx_cases.json
"""

import contextlib
import json
from pathlib import Path

import numpy as np

CASES = Path(__file__).with_name("mctx_cases.json")
POSITIONS_SEED = 5
NUM_POSITIONS = 12
SIMULATIONS = 48
SCHEDULES = [(1, 10), (2, 10), (3, 32), (4, 7), (7, 50), (9, 100), (16, 200)]
LINES = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]]


@contextlib.contextmanager
def _float64():
    """jax in float64 while mctx searches, as it was before afterwards: the switch is global, and
    left on it breaks the other tests that run Pgx in the same process (its int32 arithmetic)."""
    import jax

    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", before)


def run_mctx(games, simulations):
    """mctx's PUCT and Gumbel searches of ``games`` (``reference.TicTacToe`` positions)."""
    with _float64():
        return _run_mctx(games, simulations)


def evaluate(jnp, board, mark):
    """``test_reference.logits_values`` in JAX, for one position."""
    cells = jnp.arange(9)
    weights = jnp.sin(jnp.outer(jnp.arange(1, 10), cells + 1.0))
    b = board.astype(jnp.float64)
    logits = jnp.sin(b @ weights + mark * 0.37 + 0.13 * cells) * 2.0
    value = jnp.tanh(b @ jnp.cos(cells + 0.5) * 0.3 + mark * 0.11 - 0.2)
    return logits, value


def _run_mctx(games, simulations):
    import jax
    import jax.numpy as jnp
    import mctx

    lines = jnp.array(LINES)
    boards = jnp.array([g.board for g in games], dtype=jnp.int64)
    movers = jnp.array([g.mover for g in games], dtype=jnp.int64)
    overs = jnp.zeros(len(games), dtype=bool)

    def masked(logits, board, over):
        legal = (board == 0) & ~over
        return jnp.where(legal, logits, jnp.finfo(logits.dtype).min)

    def step(board, mover, over, action):
        illegal = board[action] != 0
        mark = mover + 1
        after = jnp.where(over | illegal, board, board.at[action].set(mark))
        won = jnp.any(jnp.all(after[lines] == mark, axis=1))
        full = jnp.all(after != 0)
        reward = jnp.where(over, 0.0, jnp.where(illegal, -1.0, jnp.where(won, 1.0, 0.0)))
        ended = over | illegal | won | full
        discount = jnp.where(ended, 0.0, -1.0)
        return after, jnp.where(ended, mover, 1 - mover), ended, reward, discount

    def recurrent_fn(params, rng, action, embedding):
        board, mover, over = embedding
        after, nxt, ended, reward, discount = jax.vmap(step)(board, mover, over, action)
        logits, value = jax.vmap(evaluate, in_axes=(None, 0, 0))(jnp, after, nxt + 1)
        logits = jax.vmap(masked)(logits, after, ended)
        out = mctx.RecurrentFnOutput(
            reward=reward, discount=discount, prior_logits=logits, value=value
        )
        return out, (after, nxt, ended)

    logits, value = jax.vmap(evaluate, in_axes=(None, 0, 0))(jnp, boards, movers + 1)
    root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=(boards, movers, overs))
    invalid = boards != 0
    key = jax.random.PRNGKey(0)
    puct = mctx.muzero_policy(
        None,
        key,
        root,
        recurrent_fn,
        simulations,
        invalid_actions=invalid,
        dirichlet_fraction=0.0,
    )
    gumbel = mctx.gumbel_muzero_policy(
        None, key, root, recurrent_fn, simulations, invalid_actions=invalid, gumbel_scale=0.0
    )
    out = {}
    for name, policy in (("puct", puct), ("gumbel", gumbel)):
        summary = policy.search_tree.summary()
        out[name] = {
            "visit_counts": np.asarray(summary.visit_counts).tolist(),
            "qvalues": np.asarray(summary.qvalues).tolist(),
            "value": np.asarray(summary.value).tolist(),
            "action_weights": np.asarray(policy.action_weights).tolist(),
            "action": np.asarray(policy.action).tolist(),
        }
    return out


def schedules():
    """mctx's sequential halving tables, (m, simulations) -> table rows."""
    from mctx._src import seq_halving

    return [
        {
            "m": m,
            "simulations": s,
            "table": [list(r) for r in seq_halving.get_table_of_considered_visits(m, s)],
        }
        for m, s in SCHEDULES
    ]


def cases():
    import mctx

    from .test_reference import positions

    games = positions(NUM_POSITIONS, POSITIONS_SEED)
    return {
        "mctx": mctx.__version__,
        "simulations": SIMULATIONS,
        "positions": [{"board": g.board, "mover": g.mover} for g in games],
        "searches": run_mctx(games, SIMULATIONS),
        "schedules": schedules(),
    }


if __name__ == "__main__":
    CASES.write_text(json.dumps(cases()) + "\n")
    print(f"wrote {CASES}")
