"""Sparrow mahjong beside Pgx's ``sparrow_mahjong``.

Pgx shuffles its seats and wall from its key; ours come from the episode's own stream. Each game
is played in ours (random legal discards, now and then any tile), then replayed in Pgx from our
deal put into Pgx's state (its wall, seats, hands, red tiles and dora; an agent is Pgx's player
id) inside one compiled scan of Pgx's ``step``: at every ply the same agent to move, legal
discards, observations of all three players (Pgx's, as our ``features``), ends and rewards.
Pgx (with jax) is a test extra.
"""

import functools

import numpy as np
import pytest

import vecenv
from tests.envs.pgx_replay import pgx, quick_compiles
from vecenv import testing
from vecenv.envs.sparrow_mahjong.rules import (
    BASE_POINTS,
    FIRST_DRAW,
    PLAYERS,
    TILES,
    TYPES,
    WIN_CODES,
    YAKU_POINTS,
    redraw_hidden,
)
from vecenv.kernels.turns import ACTIVE, DONE, INVALID

GAMES = 48  # games a replay plays at once: one compiled shape for every test
PLIES = 28  # discards a game makes at most (the wall: 44 tiles, 15 dealt, the dora kept)


@functools.cache
def pgx_sparrow():
    """Pgx's replay of a batch of games from given deals: ``run(deal, actions)`` gives, before
    the first ply and after each, (current player, legal mask, terminated, rewards, every
    player's observation)."""
    jax, _ = pgx()
    import jax.numpy as jnp
    from pgx import sparrow_mahjong as sm

    env = sm.SparrowMahjong()  # its ``step`` (Pgx's core: illegal actions, ends, step counts)

    def shown(state):
        seen = jnp.stack([jax.vmap(sm._observe, (0, None))(state, p) for p in range(PLAYERS)], 1)
        rewards = state.rewards
        return state.current_player, state.legal_action_mask, state.terminated, rewards, seen

    def replay(deal, actions):
        wall, seats, hands, reds = deal
        # Pgx's state from its defaults (its ``init`` draws a deal of its own, and compiles for
        # seconds), holding our deal.
        state = jax.tree_util.tree_map(
            lambda x: jnp.broadcast_to(x, (wall.shape[0],) + x.shape), sm.State()
        )
        state = state.replace(
            observation=jnp.zeros((wall.shape[0], TYPES, 15), dtype=jnp.bool_),
            _wall=wall,
            _shuffled_players=seats,
            _hands=hands,
            _n_red_in_hands=reds,
            _dora=wall[:, -1] // 4,
            _draw_ix=jnp.full(wall.shape[0], FIRST_DRAW + 1, dtype=jnp.int32),
            current_player=seats[:, 0],
            legal_action_mask=hands[:, 0] > 0,
        )
        step = jax.vmap(env.step)

        def body(state, action):
            state = step(state, action)
            return state, shown(state)

        _, plies = jax.lax.scan(body, state, actions)
        return shown(state), plies

    compiled = jax.jit(replay)

    def run(deal, actions):
        deal = tuple(jnp.asarray(a, dtype=jnp.int32) for a in deal)
        with quick_compiles(jax):
            first, plies = compiled(deal, jnp.asarray(actions, dtype=jnp.int32))
        return tuple(
            np.concatenate([np.asarray(a)[None], np.asarray(b)])
            for a, b in zip(first, plies, strict=True)
        )

    return run


def play_ours(seed, illegal=0.02):
    """``GAMES`` random games of ours: the deal, each ply's actions (by the agent to move) and
    what ours showed before the first ply and after each (as ``pgx_sparrow`` gives Pgx's)."""
    e = vecenv.make("sparrow_mahjong", num_envs=GAMES, seed=seed, autoreset="disabled")
    s = e.states
    deal = (s["wall"].copy(), s["seats"].copy(), s["hands"].copy(), s["reds"].copy())
    rng = np.random.default_rng(seed)
    rows = np.arange(GAMES)
    actions = np.zeros((PLIES, GAMES), dtype=np.int64)
    movers, legals, ends, rewards, seen = [], [], [], [], []

    def keep(terminated, reward):
        status = e.states["status"]
        mover = np.where((status == ACTIVE).any(axis=1), np.argmax(status == ACTIVE, axis=1), -1)
        movers.append(mover)
        legals.append(e.obs["legal"][rows, np.maximum(mover, 0)].copy())
        ends.append(terminated.copy())
        rewards.append(reward.copy())
        seen.append(e.obs["features"].copy())

    keep(np.zeros(GAMES, dtype=bool), np.zeros((GAMES, PLAYERS)))
    for t in range(PLIES):
        mover = movers[-1]
        legal = legals[-1]
        noise = rng.random((GAMES, TYPES))
        chosen = np.argmax(np.where(legal, noise, -1.0), axis=1)
        wild = rng.random(GAMES) < illegal
        chosen[wild] = rng.integers(0, TYPES, size=int(wild.sum()))
        chosen[mover < 0] = 0
        actions[t] = chosen
        both = np.zeros((GAMES, PLAYERS), dtype=np.int64)
        both[rows, np.maximum(mover, 0)] = chosen
        e.step(both)
        keep(e.terminated, e.rewards)
    assert e.terminated.all(), "a game outlasted the wall"
    return e, deal, actions, (movers, legals, ends, rewards, seen)


def play_both(seed, illegal=0.02):
    """Ours and Pgx's replay compared at every ply; returns our engine and how each game ended
    (its last ply, and the kind: a win on a discard, a win on a draw, a drawn game, illegal)."""
    e, deal, actions, (movers, legals, ends, rewards, seen) = play_ours(seed, illegal)
    player, mask, terminated, theirs, observed = pgx_sparrow()(deal, actions)
    live = np.ones(GAMES, dtype=bool)
    for t in range(PLIES + 1):
        where = f"seed {seed}, ply {t}"
        if t:
            np.testing.assert_array_equal(ends[t][live], terminated[t][live], err_msg=where)
            np.testing.assert_array_equal(rewards[t][live], theirs[t][live], err_msg=where)
            live &= ~ends[t]
        np.testing.assert_array_equal(movers[t][live], player[t][live], err_msg=where)
        np.testing.assert_array_equal(legals[t][live], mask[t][live], err_msg=where)
        np.testing.assert_array_equal(seen[t][live], observed[t][live], err_msg=where)
    assert not live.any()
    return e


def outcomes(e):
    """Each game's end: 'invalid', 'draw' (the wall spent), 'discard' or 'self-draw' (the winner
    paid by one seat, or by both others)."""
    s = e.states
    kinds = []
    for g in range(GAMES):
        scores = s["scores"][g]
        if (s["status"][g] == INVALID).any():
            kinds.append("invalid")
        elif not scores.any():
            kinds.append("draw")
        elif (scores < 0).sum() == 2:  # both others pay: a win on a draw
            kinds.append("self-draw")
        else:
            kinds.append("discard")
    return kinds


def test_random_games_are_pgxs():
    e = play_both(seed=1)
    kinds = outcomes(e)
    # Every way a game ends comes up: wins on a discard and on a draw, drawn games, illegal ones.
    assert {"discard", "self-draw", "draw", "invalid"} <= set(kinds), kinds
    assert (e.states["status"] != 1).all()


def test_random_games_are_pgxs_for_any_seed():
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=4, deadline=None, database=None)
    @hypothesis.given(seed=st.integers(0, 2**40))
    def replay(seed):
        play_both(seed, illegal=0.0)

    replay()


def test_the_win_table_is_pgxs():
    """Our winning hands and their points, derived from the rules, are Pgx's tables."""
    pgx()
    from pgx import sparrow_mahjong as sm

    np.testing.assert_array_equal(WIN_CODES, np.asarray(sm.WIN_HANDS))
    np.testing.assert_array_equal(BASE_POINTS, np.asarray(sm.BASE_SCORES))
    np.testing.assert_array_equal(YAKU_POINTS, np.asarray(sm.YAKU_SCORES))


# ---- rules beyond the reference ----------------------------------------------------------------


def test_the_deal_holds_every_tile_and_never_wins_before_a_discard():
    e = vecenv.make("sparrow_mahjong", num_envs=3000, seed=3)
    s = e.states
    assert (np.sort(s["wall"], axis=1) == np.arange(TILES)).all()
    np.testing.assert_array_equal(s["hands"].sum(axis=2), np.tile([6, 5, 5], (3000, 1)))
    e.check_state(s)  # a ValueError where the rules refuse a record
    # The dealer is each agent about a third of the time (a chi-square test at 0.1%).
    counts = np.bincount(s["seats"][:, 0], minlength=PLAYERS)
    expected = len(s) / PLAYERS
    assert ((counts - expected) ** 2 / expected).sum() < 13.8
    np.testing.assert_array_equal(s["status"][np.arange(3000), s["seats"][:, 0]], ACTIVE)


def test_an_illegal_discard_makes_the_mover_invalid_and_the_others_win_two():
    e = vecenv.make("sparrow_mahjong", num_envs=1, seed=0, autoreset="disabled")
    mover = int(e.states["seats"][0, 0])
    missing = int(np.flatnonzero(e.obs["legal"][0, mover] == 0)[0])
    actions = np.zeros((1, PLAYERS), dtype=np.int64)
    actions[0, mover] = missing
    e.step(actions)
    expected = np.full(PLAYERS, 2.0)
    expected[mover] = -1.0
    np.testing.assert_array_equal(e.rewards[0], expected)
    assert e.states["status"][0, mover] == INVALID and e.terminated[0]
    assert (np.delete(e.states["status"][0], mover) == DONE).all()
    assert not e.obs["legal"].any() and e.obs["turn"][0] == 0


def test_an_agent_sees_its_own_hand_and_the_table_only():
    """Redrawing what agent k cannot see (the others' hands, the wall) changes them and leaves
    agent k's observation as it was (the contract's check "hidden information", run by
    tests/test_contract.py, holds it over random play, the built-in agent's moves included)."""
    e = vecenv.make("sparrow_mahjong", num_envs=64, seed=5, autoreset="disabled")
    rng = np.random.default_rng(0)
    for _ in range(4):
        e.step(testing.legal_actions(e, rng))
    records = e.get_state()
    twin = vecenv.make("sparrow_mahjong", num_envs=64, seed=5, autoreset="disabled")
    for k in range(PLAYERS):
        other = records.copy()
        redraw_hidden(other, e.config, k, rng)
        twin.set_state(other)
        seat = np.argmax(records["seats"] == k, axis=1)
        rows = np.arange(64)
        np.testing.assert_array_equal(other["hands"][rows, seat], records["hands"][rows, seat])
        assert (other["hands"] != records["hands"]).any() and (
            other["wall"] != records["wall"]
        ).any()
        np.testing.assert_array_equal(other["dora"], records["dora"])
        for f in e.observation:
            mine, again = e.obs[f.name], twin.obs[f.name]
            if not f.shared:
                mine, again = mine[:, k], again[:, k]
            np.testing.assert_array_equal(mine, again, err_msg=f.name)
