"""The compiled search builds the plain-Python reference's trees (tests/search/reference.py).

On tictactoe positions reached by random play, every selection rule, with random rollouts (the
same draws from the same stream) and with a deterministic evaluator (priors and values from a
fixed function of the board), must give the reference's visit counts, Q values, root value,
policy and action: the kernels do what their formulas say, node for node.
"""

import numpy as np
import pytest

import vecenv
from vecenv.kernels.rng import seed_words
from vecenv.search import MCTS

from .reference import Search, Stream, TicTacToe

SEED = 11
SIMULATIONS = 60


def positions(count, seed):
    """``count`` running tictactoe positions: random plies from the start, 0 to 5 of them."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        game = TicTacToe([0] * 9, 0)
        for _ in range(int(rng.integers(0, 6))):
            legal = np.flatnonzero(game.legal())
            after, _ = game.play(int(rng.choice(legal)))
            if after.over:
                break
            game = after
        out.append(game)
    return out


def logits_values(boards, marks):
    """The deterministic evaluator: prior logits and a value from the board and the mover's
    mark, distinct enough that no two actions tie."""
    boards = np.asarray(boards, dtype=np.float64)
    marks = np.asarray(marks, dtype=np.float64)
    cells = np.arange(9)
    weights = np.sin(np.outer(np.arange(1, 10), cells + 1.0))
    mix = boards @ weights + marks[:, None] * 0.37
    logits = np.sin(mix + 0.13 * cells) * 2.0
    values = np.tanh(boards @ np.cos(cells + 0.5) * 0.3 + marks * 0.11 - 0.2)
    return logits, values


def batched_evaluator(obs, legal):
    return logits_values(obs["board"], obs["mark"])


def reference_evaluator(position):
    logits, values = logits_values([position.board], [position.mover + 1])
    return list(logits[0]), float(values[0])


@pytest.fixture(scope="module")
def start():
    """An engine on the positions and their stream words."""
    games = positions(12, SEED)
    engine = vecenv.make("tictactoe", num_envs=len(games), seed=0)
    engine.reset(
        position=[
            {
                "observation": {"board": g.board},
                "status": ["ACTIVE", "INACTIVE"] if g.mover == 0 else ["INACTIVE", "ACTIVE"],
                "step": sum(c != 0 for c in g.board),
            }
            for g in games
        ]
    )
    words = np.zeros(len(games), dtype=np.uint64)
    seed_words(np.uint64(SEED), words, np.ones(len(games), dtype=np.bool_))
    return games, engine, words


@pytest.mark.parametrize("selection", ["uct", "puct", "gumbel"])
@pytest.mark.parametrize("evaluated", [False, True], ids=["rollouts", "evaluator"])
def test_the_same_trees_as_the_reference(start, selection, evaluated):
    games, engine, words = start
    mcts = MCTS(
        engine,
        SIMULATIONS,
        selection=selection,
        evaluator=batched_evaluator if evaluated else "rollout",
    )
    result = mcts.search(engine.get_state(), seed=words.copy())
    assert result.searched.all()
    for i, game in enumerate(games):
        ref = Search(
            selection,
            SIMULATIONS,
            Stream(words[i]),
            evaluator=reference_evaluator if evaluated else None,
        )
        root = ref.run(game)
        visits = [root.children[a].visits if a in root.children else 0 for a in range(9)]
        q = [root.children[a].q() if a in root.children else 0.0 for a in range(9)]
        np.testing.assert_array_equal(result.visit_counts[i], visits, err_msg=f"position {i}")
        np.testing.assert_allclose(result.qvalues[i], q, rtol=1e-12, atol=1e-12)
        assert result.root_value[i] == pytest.approx(root.value, rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(result.policy[i], ref.policy(), rtol=1e-12, atol=1e-12)
        assert result.action[i] == ref.action(), f"position {i}"
        assert sum(visits) == SIMULATIONS


def test_the_reference_is_no_echo(start):
    """Different streams or settings give different trees: the comparisons above can fail."""
    games, engine, words = start
    base = MCTS(engine, SIMULATIONS).search(engine.get_state(), seed=words.copy())
    other = MCTS(engine, SIMULATIONS).search(engine.get_state(), seed=words + np.uint64(1))
    wider = MCTS(engine, SIMULATIONS, uct_c=0.5).search(engine.get_state(), seed=words.copy())
    assert not np.array_equal(base.visit_counts, other.visit_counts)
    assert not np.array_equal(base.visit_counts, wider.visit_counts)
