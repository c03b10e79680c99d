"""Bridge bidding beside Pgx's ``bridge_bidding``, and its rules beyond it.

Pgx draws its deal (a row of its deal table), the vulnerability, the dealer and the seating from
its key; ours come from the episode's own stream. Each game is played in both after ours are put
into Pgx's state (Pgx loading our table file and decoding our deal's key and value itself: its
hands and tricks are then the ones our encoding means), then random actions go to both, ply by
ply, a few of them illegal ones (which end the game with Pgx's penalty): the same player to call,
legal actions, observations of all four players (Pgx's ``_observe``, as our ``features``), ends
and rewards. The contracts' scores are checked against duplicate bridge's table by hand too.
The deal table itself: tests/envs/test_bridge_bidding_table.py. Pgx (with jax) is a test extra.
"""

import functools
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vecenv
from tests.envs.reference import need
from vecenv.envs.bridge_bidding import rules, table
from vecenv.envs.bridge_bidding.rules import BID, DOUBLE, PASS, REDOUBLE, redraw_hidden
from vecenv.kernels.turns import ACTIVE, DONE, INACTIVE, INVALID

WARM = [("bridge_bidding", {})]  # compiled beside the tests before they start (tests/warmup.py)

# ---- beside Pgx ---------------------------------------------------------------------------------


GAMES = 64  # every batch of games one size: Pgx's functions compile once


@functools.cache
def pgx_bridge():
    """jax, Pgx's bridge module, its BridgeBidding over our table file, its batched ``step`` and
    per-player ``_observe``."""
    jax = need("jax", "jax (Pgx's)")
    bridge = need("pgx.bridge_bidding", "Pgx")
    env = bridge.BridgeBidding(dds_results_table_path=str(table.SHIPPED))
    assert env._lut_keys.shape == (rules.DEALS, 4)  # Pgx loads our file
    observe = jax.jit(jax.vmap(bridge._observe))
    hands = jax.jit(jax.vmap(bridge._key_to_hand))
    return jax, bridge, hands, jax.jit(jax.vmap(env.step)), observe


def pgx_states(bridge, hands, jnp, states):
    """Pgx's initial states (as its ``_init_by_key`` makes them) with our deal (its key and
    value, decoded by Pgx), vulnerability, dealer and seating."""
    keys, values = table.load()
    n = len(states)
    start = bridge.State()
    theirs = type(start)(
        **{
            name: jnp.broadcast_to(value, (n, *np.shape(value)))
            for name, value in vars(start).items()
        }
    )
    mask = np.ones((n, rules.ACTIONS), dtype=bool)
    mask[:, [DOUBLE, REDOUBLE]] = False
    return theirs.replace(
        # Pgx's default observation is 478 wide, its observe's 480: one shape, one compile
        observation=jnp.zeros((n, rules.FEATURES), dtype=bool),
        legal_action_mask=jnp.asarray(mask),
        _hand=hands(jnp.asarray(keys[states["deal"]])),
        _dds_val=jnp.asarray(values[states["deal"]]),
        _vul_NS=jnp.asarray(states["vul"][:, 0] == 1),
        _vul_EW=jnp.asarray(states["vul"][:, 1] == 1),
        _dealer=jnp.asarray(states["dealer"].astype(np.int32)),
        _shuffled_players=jnp.asarray(states["seats"].astype(np.int32)),
        current_player=jnp.asarray(states["current"].astype(np.int32)),
    )


def draw(rng, legal, illegal):
    """A pass half of the time (auctions that stop low, contracts that make), else a legal
    action, or with probability ``illegal`` an illegal one (a double or redouble half of the time
    where one is illegal)."""
    chance = rng.random()
    if chance < 0.5:
        return PASS
    if chance >= 0.5 + 0.5 * illegal:
        return rng.choice(np.flatnonzero(legal))
    wrong = np.flatnonzero(~legal)
    doubles = wrong[wrong < BID]
    return rng.choice(doubles if len(doubles) and rng.random() < 0.5 else wrong)


def play_both(seed, illegal=0.0):
    """GAMES random games in Pgx and ours, compared at every ply (an illegal action drawn with
    probability ``illegal``); returns what they went through."""
    jax, bridge, hands, step, observe = pgx_bridge()
    jnp = jax.numpy
    ours = vecenv.make("bridge_bidding", num_envs=GAMES, seed=seed, autoreset="disabled")
    theirs = pgx_states(bridge, hands, jnp, ours.states)
    rng = np.random.default_rng(seed)
    rows = np.arange(GAMES)
    live = np.ones(GAMES, dtype=bool)
    seen = Counter()
    for ply in range(rules.MAX_CALLS + 1):
        where = f"seed {seed}, ply {ply}"
        for k in range(4):
            theirs_k = np.asarray(observe(theirs, jnp.full(GAMES, k, dtype=jnp.int32)))
            np.testing.assert_array_equal(ours.obs["features"][:, k], theirs_k, err_msg=where)
        if not live.any():
            break
        current = np.asarray(theirs.current_player)
        np.testing.assert_array_equal(ours.obs["turn"][live] - 1, current[live], err_msg=where)
        mask = np.asarray(theirs.legal_action_mask)
        np.testing.assert_array_equal(ours.obs["legal"][live], mask[live], err_msg=where)
        actions = np.array(
            [
                draw(rng, m, illegal) if g else PASS
                for m, g in zip(ours.obs["legal"], live, strict=True)
            ]
        )
        was_legal = ours.obs["legal"][rows, actions]
        theirs = step(theirs, jnp.asarray(actions, dtype=np.int32))
        ours.step(np.repeat(actions[:, None], 4, axis=1))  # only the caller's action counts
        terminated = np.asarray(theirs.terminated)
        np.testing.assert_array_equal(ours.terminated[live], terminated[live], err_msg=where)
        rewards = np.asarray(theirs.rewards)
        np.testing.assert_array_equal(ours.rewards[live], rewards[live], err_msg=where)
        for g in np.flatnonzero(live & terminated):
            s = ours.states[g]
            if not was_legal[g]:
                seen["illegal " + ("bid" if actions[g] >= BID else "double")] += 1
            elif s["last_bid"] < 0:
                seen["passed out"] += 1
            else:
                seen["redoubled" if s["redoubled"] else "doubled" if s["doubled"] else "plain"] += 1
                seen["made" if s["reward"][s["last_bidder"]] > 0 else "down"] += 1
        live &= ~terminated
    assert not live.any()
    return seen


def test_random_games_are_pgxs():
    seen = play_both(seed=1, illegal=0.06)
    for end in ("illegal bid", "illegal double", "doubled", "redoubled", "plain", "made", "down"):
        assert seen[end] > 0, (end, seen)


@given(st.integers(0, 2**31 - 1))
@settings(max_examples=3, deadline=None)
def test_games_of_any_seed_are_pgxs(seed):
    play_both(seed, illegal=0.04)


# ---- rules beyond the reference ----------------------------------------------------------------

N, E, S, W = range(4)
SPADES, HEARTS, NT = 3, 2, 4


def bid(level, denomination):
    return BID + 5 * (level - 1) + denomination


def auction(calls, tricks, vul=(0, 0)):
    """An auction from N (dealer), the players 0 (N), 2 (E), 1 (S), 3 (W) at the table, the
    tricks as {(seat, denomination): tricks}; returns the engine after it."""
    e = vecenv.make("bridge_bidding", num_envs=1, seed=0, autoreset="disabled")
    record = e.get_state()
    record["seats"] = [0, 2, 1, 3]
    record["dealer"] = N
    record["current"] = 0
    record["status"] = [ACTIVE, INACTIVE, INACTIVE, INACTIVE]
    record["vul"] = vul
    record["tricks"] = 0
    for (seat, denomination), count in tricks.items():
        record["tricks"][:, seat * 5 + denomination] = count
    e.set_state(record)
    for call in calls:
        assert not e.terminated[0]
        e.step(np.full((1, 4), call))
    return e


@pytest.mark.parametrize(
    "calls, tricks, vul, score",
    [
        ([bid(3, NT), PASS, PASS, PASS], {(N, NT): 9}, (0, 0), 400),
        ([bid(4, SPADES), PASS, PASS, PASS], {(N, SPADES): 11}, (1, 0), 650),
        ([bid(1, 0), DOUBLE, PASS, PASS, PASS], {(N, 0): 7}, (0, 0), 140),
        ([bid(2, HEARTS), DOUBLE, REDOUBLE, PASS, PASS, PASS], {(N, HEARTS): 7}, (1, 1), -400),
        ([bid(7, NT), PASS, PASS, PASS], {(N, NT): 13}, (1, 0), 2220),
        ([bid(6, SPADES), PASS, PASS, PASS], {(N, SPADES): 12}, (0, 0), 980),
        ([bid(1, NT), DOUBLE, PASS, PASS, PASS], {(N, NT): 4}, (0, 0), -500),
        ([bid(1, NT), DOUBLE, PASS, PASS, PASS], {(N, NT): 4}, (1, 0), -800),
        ([bid(3, NT), PASS, PASS, PASS], {(N, NT): 6}, (1, 1), -300),
        # S raises N's hearts: N, who named them first, declares (and makes), not S (who fails).
        (
            [bid(1, HEARTS), PASS, bid(4, HEARTS), PASS, PASS, PASS],
            {(N, HEARTS): 10, (S, HEARTS): 9},
            (0, 0),
            420,
        ),
    ],
)
def test_contracts_score_as_duplicate_bridge(calls, tricks, vul, score):
    e = auction(calls, tricks, vul)
    assert e.terminated[0]
    np.testing.assert_array_equal(e.rewards[0], [score, score, -score, -score])  # N-S: 0 and 1
    assert (e.states["status"][0] == DONE).all() and e.obs["turn"][0] == 0


def test_four_passes_score_nothing_and_three_after_a_bid_end_it():
    e = auction([PASS] * 3, {})
    assert not e.terminated[0] and e.obs["legal"][0, bid(1, 0)]
    e.step(np.full((1, 4), PASS))
    assert e.terminated[0] and (e.rewards[0] == 0).all() and not e.obs["legal"][0].any()
    e = auction([PASS, bid(1, 0), PASS, PASS], {})
    assert not e.terminated[0]  # the opener's side may still call
    e.step(np.full((1, 4), PASS))
    assert e.terminated[0]


def test_doubles_and_bids_follow_the_rules():
    e = auction([bid(1, HEARTS)], {})  # N bid, E to call
    legal = e.obs["legal"][0]
    assert (
        legal[DOUBLE]
        and not legal[REDOUBLE]
        and not legal[bid(1, HEARTS)]
        and legal[bid(1, SPADES)]
    )
    e.step(np.full((1, 4), PASS))  # S, N's partner, may not double
    assert not e.obs["legal"][0, DOUBLE]
    e.step(np.full((1, 4), PASS))
    e.step(np.full((1, 4), DOUBLE))  # W doubles; N may redouble
    assert e.obs["legal"][0, REDOUBLE] and not e.obs["legal"][0, DOUBLE]
    assert e.obs["turn"][0] == 1  # player 0 (N) to call


def test_an_illegal_call_ends_the_game_with_pgxs_penalty():
    e = auction([bid(1, 0), PASS, DOUBLE], {})  # S doubles its partner
    assert e.terminated[0]
    np.testing.assert_array_equal(e.states["status"][0], [DONE, INVALID, DONE, DONE])
    np.testing.assert_array_equal(e.rewards[0], [22800, -7600, 22800, 22800])


def test_an_agent_sees_only_its_own_cards():
    e = vecenv.make("bridge_bidding", num_envs=64, seed=2, autoreset="disabled")
    e.step(np.full((64, 4), bid(1, 0)))
    records = e.get_state()
    for agent in range(4):
        redrawn = records.copy()
        redraw_hidden(redrawn, {}, agent, np.random.default_rng(agent))
        e.check_state(redrawn)
        seat = (redrawn["seats"] == agent).argmax(axis=1)
        rows = np.arange(64)
        assert (redrawn["owners"] != records["owners"]).any(axis=1).all()
        np.testing.assert_array_equal(
            redrawn["owners"] == seat[:, None], records["owners"] == seat[:, None]
        )
        mirror = vecenv.make("bridge_bidding", num_envs=64, seed=2, autoreset="disabled")
        mirror.set_state(redrawn)
        np.testing.assert_array_equal(mirror.obs["features"][:, agent], e.obs["features"][:, agent])
        others = [k for k in range(4) if k != agent]
        assert (mirror.obs["features"][rows][:, others] != e.obs["features"][:, others]).any()


def test_the_deal_comes_from_the_table_and_the_seating_pairs_partners():
    e = vecenv.make("bridge_bidding", num_envs=2000, seed=3)
    states = e.states
    np.testing.assert_array_equal(states["owners"], rules.OWNERS[states["deal"]])
    np.testing.assert_array_equal(states["tricks"], rules.TRICKS[states["deal"]])
    seats = states["seats"]
    for k in range(4):  # each agent's hand: the cards of its seat
        seat = (seats == k).argmax(axis=1)
        np.testing.assert_array_equal(e.obs["hand"][:, k], states["owners"] == seat[:, None])
    assert ((seats[:, 0] // 2) == (seats[:, 2] // 2)).all()  # N and S: 0 and 1, or 2 and 3
    assert len({tuple(s) for s in seats.tolist()}) == 8  # every seating Pgx draws
    for field, values in (("dealer", 4), ("vul", 2)):
        counts = np.bincount(states[field].ravel(), minlength=values)
        assert counts.min() > 0.8 * counts.mean()


def test_render_shows_the_table():
    e = auction([bid(1, NT), DOUBLE], {})
    text = e.render(0, mode="ansi")
    assert "N:1NT E:X" in text and "<- to call" in text and text.count("S:") == 4
    assert e.render(0).shape == (200, 232, 3)


def test_records_the_rules_cannot_run_are_refused():
    e = vecenv.make("bridge_bidding", num_envs=1, seed=0)
    e.step(np.full((1, 4), bid(1, HEARTS)))

    def broken(change):
        record = e.get_state()
        change(record)
        return record

    cases = {
        "13 cards": lambda r: r["owners"][:, :2].__setitem__(Ellipsis, 0),
        "each player": lambda r: r["seats"].__setitem__(Ellipsis, [0, 0, 1, 2]),
        "both set or both -1": lambda r: r["last_bidder"].__setitem__(Ellipsis, -1),
        "named its denomination": lambda r: r["first"].__setitem__(Ellipsis, -1),
        "only the current player": lambda r: r["status"].__setitem__(Ellipsis, ACTIVE),
        "turn": lambda r: r["turn"].__setitem__(Ellipsis, rules.MAX_CALLS),
    }
    for message, change in cases.items():
        with pytest.raises(ValueError, match=message):
            e.set_state(broken(change))
