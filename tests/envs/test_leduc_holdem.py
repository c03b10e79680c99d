"""Leduc hold'em beside Pgx's ``leduc_holdem`` and OpenSpiel's ``leduc_poker``.

Pgx draws its deal from its key; ours comes from the episode's own stream. Each game is played in
both after our deal is put into Pgx's state (its ``_cards``: the players' cards by player id and
the public card; our agent 0 is Pgx's first player), then random actions go to both, ply by ply,
a few of them illegal ones (which lose, as Pgx rules): the same legal actions, observations (Pgx's,
of both players, as our ``features``), ends and rewards. OpenSpiel deals through chance nodes, six
cards of two suits, so its chance outcomes are cards of our ranks; its actions are 0 fold, 1 call,
2 raise. Pgx (with jax) and OpenSpiel are test extras.
"""

import functools
import random
from collections import Counter

import numpy as np
import pytest

import vecenv
from tests.envs.reference import need
from vecenv import kaggle, selfplay
from vecenv.envs.leduc_holdem.rules import CALL, FOLD, RAISE, redraw_hidden
from vecenv.kernels.turns import ACTIVE, DONE, INVALID


@functools.cache
def pgx_leduc():
    """jax, and Pgx's Leduc hold'em ``init``, ``step`` and per-player ``_observe`` over a batch."""
    jax = need("jax", "jax (Pgx's)")
    leduc = need("pgx.leduc_holdem", "Pgx")
    env = leduc.LeducHoldem()
    observe = jax.jit(jax.vmap(leduc._observe))
    return jax, jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(env.step)), observe


def play_both(games, seed, illegal=0.0):
    """``games`` random games in Pgx and ours, compared at every ply (an action drawn among all
    three with probability ``illegal``, else among the legal ones); returns what they went
    through."""
    jax, init, step, observe = pgx_leduc()
    jnp = jax.numpy
    theirs = init(jax.random.split(jax.random.key(seed), games))
    first = np.asarray(theirs.current_player)
    order = np.stack([first, 1 - first], axis=1)  # Pgx's player id of our agents 0 and 1
    ours = vecenv.make("leduc_holdem", num_envs=games, seed=seed, autoreset="disabled")
    rows = np.arange(games)
    cards = np.zeros((games, 3), dtype=np.int32)
    cards[rows[:, None], order] = ours.states["cards"]
    cards[:, 2] = ours.states["public"]
    theirs = theirs.replace(_cards=jnp.asarray(cards))
    rng = np.random.default_rng(seed)
    live = np.ones(games, dtype=bool)
    # Pgx applies an illegal action to its state before it ends the game (a fold ends the round,
    # a raise adds chips); ours ends the game where it stood: those final observations differ.
    shown = np.ones(games, dtype=bool)
    seen = Counter()
    for ply in range(12):
        where = f"seed {seed}, ply {ply}"
        for k in range(2):
            mine = observe(theirs, jnp.asarray(order[:, k]))
            np.testing.assert_array_equal(
                ours.obs["features"][shown, k], np.asarray(mine)[shown], err_msg=where
            )
        if not live.any():
            break
        mover = np.where(ours.states["status"][:, 0] == ACTIVE, 0, 1)
        current = np.asarray(theirs.current_player)
        np.testing.assert_array_equal(order[rows, mover][live], current[live], err_msg=where)
        mask = np.asarray(theirs.legal_action_mask)
        np.testing.assert_array_equal(ours.obs["legal"][live], mask[live], err_msg=where)
        actions = np.array(
            [
                rng.integers(3) if rng.random() < illegal else rng.choice(np.flatnonzero(m))
                for m in ours.obs["legal"] | ~live[:, None]
            ]
        )
        was_legal = ours.obs["legal"][rows, actions]
        theirs = step(theirs, jnp.asarray(actions, dtype=np.int32))
        both = np.zeros((games, 2), dtype=np.int64)
        both[rows, mover] = actions
        ours.step(both)
        shown &= was_legal | ~live
        terminated = np.asarray(theirs.terminated)
        np.testing.assert_array_equal(ours.terminated[live], terminated[live], err_msg=where)
        rewards = np.asarray(theirs.rewards)[rows[:, None], order]
        np.testing.assert_array_equal(ours.rewards[live], rewards[live], err_msg=where)
        for g in np.flatnonzero(live & terminated):
            if not was_legal[g]:
                seen["illegal"] += 1
            elif actions[g] == FOLD:
                seen["fold in round 1" if ours.states["street"][g] == 1 else "fold in round 2"] += 1
            elif ours.rewards[g, 0] == 0:
                seen["drawn showdown"] += 1
            else:
                seen["showdown"] += 1
            seen[f"stake {abs(int(ours.rewards[g, 0]))}"] += 1
        live &= ~terminated
    assert not live.any()
    return seen


def test_random_games_are_pgxs():
    seen = play_both(512, seed=1, illegal=0.05)
    for end in ("illegal", "fold in round 1", "fold in round 2", "drawn showdown", "showdown"):
        assert seen[end] > 0, (end, seen)
    assert seen["stake 13"] > 0  # two raises in each round


@pytest.mark.parametrize("seed", range(2))
def test_more_random_games_are_pgxs(seed):
    play_both(128, seed=10 + seed)


def test_the_deal_is_a_shuffled_decks_first_three_cards():
    """Pgx deals a shuffled deck's first three cards; ours too. The chances of the 24 rank
    triples are 1/30 with a pair among them (two cards of one rank), else 1/15 (chi-square at
    0.1%)."""
    e = vecenv.make("leduc_holdem", num_envs=48_000, seed=3)
    dealt = np.stack([e.states["cards"][:, 0], e.states["cards"][:, 1], e.states["public"]], 1)
    counts = Counter(map(tuple, dealt.tolist()))
    assert len(counts) == 24  # no rank thrice
    chi2 = 0.0
    for triple, count in counts.items():
        expected = len(dealt) * (1 / 30 if len(set(triple)) < 3 else 1 / 15)
        chi2 += (count - expected) ** 2 / expected
    assert chi2 < 49.7  # the 0.1% point of chi-square with 23 degrees of freedom


# ---- OpenSpiel ---------------------------------------------------------------------------------

OS_ACTION = {CALL: 1, RAISE: 2, FOLD: 0}


def play_openspiel(seed):
    """A random game in OpenSpiel and ours, our deal given to OpenSpiel's chance nodes (a card of
    the rank, suits kept apart: a pair of the public card's rank is two suits)."""
    pyspiel = need("pyspiel", "OpenSpiel")
    ours = vecenv.make("leduc_holdem", num_envs=1, seed=seed, autoreset="disabled")
    theirs = pyspiel.load_game("leduc_poker").new_initial_state()
    used = set()

    def deal(rank):
        assert theirs.is_chance_node()
        card = next(c for c in (2 * rank, 2 * rank + 1) if c not in used)
        used.add(card)
        theirs.apply_action(card)

    for rank in ours.states["cards"][0]:
        deal(int(rank))
    rng = random.Random(seed)
    plies = 0
    while not theirs.is_terminal():
        if theirs.is_chance_node():
            deal(int(ours.states["public"][0]))
            assert ours.obs["public"][0] == ours.states["public"][0]
            continue
        mover = theirs.current_player()
        assert ours.states["status"][0, mover] == ACTIVE
        legal = np.flatnonzero(ours.obs["legal"][0]).tolist()
        assert sorted(OS_ACTION[a] for a in legal) == theirs.legal_actions()
        action = rng.choice(legal)
        theirs.apply_action(OS_ACTION[action])
        actions = np.zeros((1, 2), dtype=np.int64)
        actions[0, mover] = action
        ours.step(actions)
        plies += 1
    assert ours.terminated[0]
    np.testing.assert_array_equal(ours.states["reward"][0], theirs.returns())
    return plies


def test_random_games_are_openspiels():
    plies = [play_openspiel(seed) for seed in range(150)]
    assert min(plies) == 2 and max(plies) >= 7


# ---- rules beyond the references ---------------------------------------------------------------


def test_an_illegal_action_makes_the_mover_invalid_and_the_other_win():
    e = vecenv.make("leduc_holdem", num_envs=1, seed=0, autoreset="disabled")
    e.step(np.array([[FOLD, 0]]))  # no raise to fold to
    np.testing.assert_array_equal(e.states["status"][0], [INVALID, DONE])
    np.testing.assert_array_equal(e.rewards[0], [-1, 1])
    assert e.terminated[0] and not e.obs["legal"][0].any() and e.obs["turn"][0] == 0


def test_the_public_card_is_shown_from_the_second_round():
    e = vecenv.make("leduc_holdem", num_envs=1, seed=5, autoreset="disabled")
    for mover, action in ((0, RAISE), (1, RAISE), (0, CALL)):  # 1 + 2 + 2 chips, then called
        assert e.obs["public"][0] == -1
        actions = np.zeros((1, 2), dtype=np.int64)
        actions[0, mover] = action
        e.step(actions)
    np.testing.assert_array_equal(e.obs["chips"][0], [5, 5])
    assert e.obs["public"][0] == e.states["public"][0] and e.obs["turn"][0] == 1
    assert "public: ?" not in e.render(0, mode="ansi")


def test_redrawing_what_an_agent_cannot_see_keeps_what_it_sees():
    e = vecenv.make("leduc_holdem", num_envs=400, seed=4, autoreset="disabled")
    e.step(np.array([[CALL, 0]] * 400))
    e.step(np.array([[0, CALL]] * 200 + [[0, RAISE]] * 200))  # half in their second round
    records = e.get_state()
    second = records["street"] == 1
    assert second.sum() == 200
    for agent in (0, 1):
        redrawn = records.copy()
        redraw_hidden(redrawn, {}, agent, np.random.default_rng(agent))
        e.check_state(redrawn)
        np.testing.assert_array_equal(redrawn["cards"][:, agent], records["cards"][:, agent])
        np.testing.assert_array_equal(redrawn["public"][second], records["public"][second])
        assert (redrawn["public"][~second] != records["public"][~second]).any()
        assert (redrawn["cards"][:, 1 - agent] != records["cards"][:, 1 - agent]).any()


def test_the_kaggle_face_plays_to_the_end():
    env = kaggle.make("leduc_holdem")
    env.run(["random", "random"])
    assert env.done and sum(s.reward for s in env.state) == 0


def test_random_self_play_is_deterministic_across_threads():
    runs = [
        selfplay.play("leduc_holdem", ("random", "random"), 1100, seed=4, num_threads=t).rewards
        for t in (1, 2)
    ]
    np.testing.assert_array_equal(*runs)
