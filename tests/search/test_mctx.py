"""vecenv's PUCT and Gumbel MuZero against mctx's, on the same tictactoe positions and evaluator.

``mctx_cases.json`` holds mctx's own searches (``tests/search/mctx_cases.py`` made it with mctx):
its visit counts, root values, Q values, policies (``action_weights``) and Gumbel's action, and
its sequential halving schedules. vecenv's search of the same positions, with the same
deterministic evaluator, PUCT without Dirichlet noise and Gumbel without Gumbel noise, must give
them. Where mctx is installed (the ``bench`` extra) its searches are run again and compared too.
"""

import json

import numpy as np
import pytest

import vecenv
from vecenv.kernels.search import considered_visits
from vecenv.search import MCTS

from .mctx_cases import CASES
from .reference import TicTacToe
from .test_reference import batched_evaluator

RECORDED = json.loads(CASES.read_text())


def engine_at(games):
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
    return engine


def vecenv_searches(games, simulations):
    engine = engine_at(games)
    out = {}
    for name, options in (("puct", {}), ("gumbel", {"gumbel_scale": 0.0})):
        mcts = MCTS(engine, simulations, selection=name, evaluator=batched_evaluator, **options)
        out[name] = mcts.search(engine.get_state(), seed=0)
    return out


def check(theirs, ours):
    for name in ("puct", "gumbel"):
        mctx, r = theirs[name], ours[name]
        np.testing.assert_array_equal(
            r.visit_counts, np.asarray(mctx["visit_counts"]), err_msg=name
        )
        np.testing.assert_allclose(r.root_value, mctx["value"], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(r.qvalues, mctx["qvalues"], rtol=1e-9, atol=1e-12)
        if name == "gumbel":
            np.testing.assert_allclose(r.policy, mctx["action_weights"], rtol=1e-9, atol=1e-12)
            np.testing.assert_array_equal(r.action, mctx["action"])
        else:  # mctx's PUCT samples by visits (at temperature 1); the visit shares are its policy
            np.testing.assert_allclose(r.policy, mctx["action_weights"], rtol=1e-12)


def recorded_games():
    return [TicTacToe(p["board"], p["mover"]) for p in RECORDED["positions"]]


def test_searches_match_mctx():
    ours = vecenv_searches(recorded_games(), RECORDED["simulations"])
    check(RECORDED["searches"], ours)
    # The positions are searched, not echoed: the visits differ from one position to the next.
    assert len({tuple(v) for v in ours["puct"].visit_counts.tolist()}) > 6


def test_sequential_halving_schedules_match_mctx():
    for case in RECORDED["schedules"]:
        table = considered_visits(case["m"], case["simulations"])
        np.testing.assert_array_equal(table, case["table"], err_msg=str(case["m"]))


def test_live_mctx():
    """mctx itself, where it is installed, still searches as it did when the cases were made."""
    pytest.importorskip("mctx")
    from .mctx_cases import run_mctx

    games = recorded_games()[:4]
    theirs = run_mctx(games, RECORDED["simulations"])
    ours = vecenv_searches(games, RECORDED["simulations"])
    check(theirs, ours)
