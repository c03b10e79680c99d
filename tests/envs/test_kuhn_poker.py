"""Kuhn poker beside Pgx's ``kuhn_poker`` and OpenSpiel's ``kuhn_poker``.

Pgx draws its deal from its key; ours comes from the episode's own stream. Each game is played in
both after our deal is put into Pgx's state (its ``_cards``, by player id: our agent 0 is Pgx's
``current_player`` at ``init``), then random actions go to both, ply by ply: the same legal
actions, observations (Pgx's, of both players, as our ``features``), ends and rewards. OpenSpiel
deals through chance nodes, so its chance outcomes are our cards; its actions are the other way
round (0 pass, 1 bet). Pgx (with jax) and OpenSpiel are test extras.
"""

import functools
import random

import numpy as np
import pytest

import vecenv
from tests.envs.reference import need
from vecenv import kaggle, selfplay
from vecenv.envs.kuhn_poker.rules import DEALS, redraw_hidden
from vecenv.kernels.turns import ACTIVE, DONE, INVALID


@functools.cache
def pgx_kuhn():
    """jax, Pgx's Kuhn poker, its ``init``, ``step`` and per-player ``_observe`` over a batch."""
    jax = need("jax", "jax (Pgx's)")
    kuhn = need("pgx.kuhn_poker", "Pgx")
    env = kuhn.KuhnPoker()
    observe = jax.jit(jax.vmap(kuhn._observe))
    return jax, jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(env.step)), observe


def with_our_deal(jax, theirs, ours, order):
    """Pgx's states holding our cards (``order[g]``: Pgx's player id of each of our agents)."""
    cards = np.zeros((len(order), 2), dtype=np.int32)
    rows = np.arange(len(order))[:, None]
    cards[rows, order] = ours.states["cards"]
    return theirs.replace(_cards=jax.numpy.asarray(cards))


def play_both(games, seed):
    """``games`` random games in Pgx and ours, compared at every ply; returns how they ended."""
    jax, init, step, observe = pgx_kuhn()
    theirs = init(jax.random.split(jax.random.key(seed), games))
    first = np.asarray(theirs.current_player)
    order = np.stack([first, 1 - first], axis=1)  # Pgx's player id of our agents 0 and 1
    ours = vecenv.make("kuhn_poker", num_envs=games, seed=seed, autoreset="disabled")
    theirs = with_our_deal(jax, theirs, ours, order)
    rng = np.random.default_rng(seed)
    rows = np.arange(games)
    live = np.ones(games, dtype=bool)
    ends = []
    for ply in range(4):
        where = f"seed {seed}, ply {ply}"
        for k in range(2):
            mine = observe(theirs, jax.numpy.asarray(order[:, k]))
            np.testing.assert_array_equal(ours.obs["features"][:, k], mine, err_msg=where)
        mover = np.where(ours.states["status"][:, 0] == ACTIVE, 0, 1)
        np.testing.assert_array_equal(
            order[rows, mover][live], np.asarray(theirs.current_player)[live]
        )
        mask = np.asarray(theirs.legal_action_mask)
        np.testing.assert_array_equal(ours.obs["legal"][live], mask[live], err_msg=where)
        if not live.any():
            break
        actions = rng.integers(0, 2, size=games)
        theirs = step(theirs, jax.numpy.asarray(actions, dtype=np.int32))
        both = np.zeros((games, 2), dtype=np.int64)
        both[rows, mover] = actions
        ours.step(both)
        terminated = np.asarray(theirs.terminated)
        np.testing.assert_array_equal(ours.terminated[live], terminated[live], err_msg=where)
        rewards = np.asarray(theirs.rewards)[rows[:, None], order]
        np.testing.assert_array_equal(ours.rewards[live], rewards[live], err_msg=where)
        for g in np.flatnonzero(live & terminated):
            ends.append((ply + 1, abs(float(ours.rewards[g, 0]))))
        live &= ~terminated
    assert not live.any() and (ours.states["status"] == DONE).all()
    return ends


def test_random_games_are_pgxs():
    ends = play_both(256, seed=1)
    # Every line of betting comes up: folds (2 or 3 plies, +-1) and showdowns of 1 and 2 chips.
    assert {(2, 1.0), (2, 2.0), (3, 1.0), (3, 2.0)} <= set(ends)


@pytest.mark.parametrize("seed", range(3))
def test_more_random_games_are_pgxs(seed):
    play_both(64, seed=10 + seed)


def test_the_deal_is_pgxs_deal_uniform_over_the_six_ordered_pairs():
    """Pgx draws one of the six ordered pairs uniformly; ours too, from the episode's stream (a
    chi-square test at 0.1%, and every episode a pair of different cards)."""
    e = vecenv.make("kuhn_poker", num_envs=30_000, seed=3)
    cards = e.states["cards"]
    counts = np.array([((cards == d).all(axis=1)).sum() for d in DEALS])
    assert counts.sum() == len(cards)
    expected = len(cards) / 6
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 20.5  # the 0.1% point of chi-square with 5 degrees of freedom


# ---- OpenSpiel ---------------------------------------------------------------------------------

OS_PASS, OS_BET = 0, 1


def play_openspiel(seed):
    pyspiel = need("pyspiel", "OpenSpiel")
    ours = vecenv.make("kuhn_poker", num_envs=1, seed=seed, autoreset="disabled")
    theirs = pyspiel.load_game("kuhn_poker").new_initial_state()
    for card in ours.states["cards"][0]:
        assert theirs.is_chance_node()
        theirs.apply_action(int(card))
    rng = random.Random(seed)
    plies = 0
    while not theirs.is_terminal():
        mover = theirs.current_player()
        assert ours.states["status"][0, mover] == ACTIVE
        assert sorted(theirs.legal_actions()) == [OS_PASS, OS_BET]
        ours_action = rng.randrange(2)
        theirs.apply_action(OS_BET if ours_action == 0 else OS_PASS)
        actions = np.zeros((1, 2), dtype=np.int64)
        actions[0, mover] = ours_action
        ours.step(actions)
        plies += 1
    assert ours.terminated[0]
    np.testing.assert_array_equal(ours.states["reward"][0], theirs.returns())
    return plies


def test_random_games_are_openspiels():
    plies = [play_openspiel(seed) for seed in range(60)]
    assert set(plies) == {2, 3}


# ---- rules beyond the references ---------------------------------------------------------------


def test_an_action_outside_the_two_makes_the_mover_invalid_and_the_other_win():
    e = vecenv.make("kuhn_poker", num_envs=1, seed=0, autoreset="disabled")
    e._act_high = e._act_high + 1  # past the engine's check to the rules, as the Kaggle face
    e.step(np.array([[2, 0]]))
    np.testing.assert_array_equal(e.states["status"][0], [INVALID, DONE])
    np.testing.assert_array_equal(e.rewards[0], [-1, 1])
    assert e.terminated[0] and not e.obs["legal"][0].any() and e.obs["turn"][0] == 0
    # Kaggle's face refuses an action outside the schema before the rules, as Kaggle does: the
    # other agent is DONE with its reward so far.
    env = kaggle.make("kuhn_poker")
    env.step([7, None])
    assert [s.status for s in env.state] == ["INVALID", "DONE"]
    assert [s.reward for s in env.state] == [None, 0]


def test_redrawing_what_an_agent_cannot_see_keeps_its_card_and_draws_the_others():
    e = vecenv.make("kuhn_poker", num_envs=600, seed=4)
    records = e.get_state()
    seen = set()
    for agent in (0, 1):
        redrawn = records.copy()
        redraw_hidden(redrawn, {}, agent, np.random.default_rng(agent))
        np.testing.assert_array_equal(redrawn["cards"][:, agent], records["cards"][:, agent])
        assert (redrawn["cards"][:, 0] != redrawn["cards"][:, 1]).all()
        seen |= {tuple(c) for c in redrawn["cards"].tolist()}
        assert (redrawn["cards"] != records["cards"]).any()
    assert seen == {tuple(d) for d in DEALS.tolist()}


def test_random_self_play_is_deterministic_across_threads():
    runs = [
        selfplay.play("kuhn_poker", ("random", "random"), 1100, seed=4, num_threads=t).rewards
        for t in (1, 2)
    ]
    np.testing.assert_array_equal(*runs)
