"""Backgammon beside Pgx's ``backgammon`` and OpenSpiel's ``backgammon``.

Pgx rolls its dice from its key; ours from the episode's own stream. Random games are played in
ours first (now and then an action drawn among all, so that illegal ones end games as Pgx rules);
Pgx then replays them inside one ``jax.jit`` of a ``lax.scan`` over ``jax.vmap(env.step)``, each
roll of ours put into Pgx's state (its ``_dice``, ``_playable_dice`` and legal mask, made by Pgx's
own functions) where Pgx has just rolled: at ``init`` and wherever its step passed the turn.
Every ply: the same legal masks (the no-move actions included), boards, dice still to play, player
to move (doubles' four moves, no-move turns), observations of both players, ends and rewards
(gammons, backgammons, Pgx's -3 for an illegal action).

OpenSpiel plays whole turns (both dice, four of a double) and requires the most dice, and the
larger die, to be used; Pgx's rules (and ours) let any playable die move. So OpenSpiel's random
games are replayed in ours, its rolls as ours (``set_state``), each of its turns a sequence of our
single moves, each legal here, then a no-move ply where dice are left that OpenSpiel could not
use: the same boards after every turn, no move exactly where OpenSpiel passes, the same ends and,
scored as OpenSpiel's ``full_scoring`` scores them, the same points where no checker is on the
bar at the end (OpenSpiel counts one there towards a backgammon, Pgx does not).
"""

import random

import numpy as np
import pytest

import vecenv
from tests.envs import pgx_replay
from tests.envs.reference import need
from vecenv import selfplay
from vecenv.envs.backgammon import rules
from vecenv.envs.backgammon.rules import ACTIONS
from vecenv.kernels.turns import ACTIVE, DONE, STATUS_NAMES

WIDTH = 32
PLIES = 900  # random games end within about 900 plies (the longest of 20,000: 862)
ILLEGAL = 0.003  # per ply, in a quarter of the games


def pgx_backgammon():
    jax, _ = pgx_replay.pgx()
    return jax, need("pgx.backgammon", "Pgx")


def build_replay():
    """A jitted function of (first dice (W, 2), actions (T, W), dice after each ply (T, W, 2))
    replaying the games in Pgx with our rolls, returning what every ply shows."""
    jax, bg = pgx_backgammon()
    jnp = jax.numpy
    env = bg.Backgammon()

    def with_roll(state, dice, rolled):
        dice = jnp.where(rolled, dice, state._dice)
        playable = jnp.where(rolled, bg._set_playable_dice(dice), state._playable_dice)
        mask = jnp.where(rolled, bg._legal_action_mask(state._board, dice), state.legal_action_mask)
        state = state.replace(_dice=dice, _playable_dice=playable, legal_action_mask=mask)
        return state.replace(observation=bg._observe(state, state.current_player))

    observe = jax.vmap(bg._observe)

    def shown(state):
        return (
            state.legal_action_mask,
            state._board,
            state._playable_dice,
            state._played_dice_num,
            state.current_player,
            state.rewards,
            state.terminated,
            state.observation,
            observe(state, 1 - state.current_player),
        )

    def one_ply(state, action, dice, key):
        before = state.current_player
        state = env.step(state, action, key)
        passed = (state.current_player != before) | (state._played_dice_num == 0)
        rolled = ~state.terminated & passed
        return with_roll(state, dice, rolled)

    def replay(keys, first, actions, dice):
        state = jax.vmap(env.init)(keys)
        state = jax.vmap(with_roll)(state, first, jnp.ones(first.shape[0], dtype=bool))
        step = jax.vmap(one_ply)

        def body(state, inputs):
            action, dice = inputs
            state = step(state, action, dice, keys)
            return state, shown(state)

        _, plies = jax.lax.scan(body, state, (actions, dice))
        return shown(state), plies

    keys = jax.random.split(jax.random.key(0), WIDTH)
    fn = jax.jit(replay)

    def run(first, actions, dice):
        start, plies = fn(keys, jnp.asarray(first), jnp.asarray(actions), jnp.asarray(dice))
        return tuple(
            np.concatenate([np.asarray(a)[None], np.asarray(b)])
            for a, b in zip(start, plies, strict=True)
        )

    return run


@pytest.fixture(scope="module")
def games():
    """Our random games (ply by ply records) and Pgx's replay of them."""
    run = build_replay()
    engine = vecenv.make("backgammon", num_envs=WIDTH, seed=5, autoreset="disabled")
    record = {
        name: np.zeros((PLIES + 1, WIDTH) + shape, dtype=dtype)
        for name, shape, dtype in (
            ("legal", (ACTIONS,), bool),
            ("board", (28,), np.int8),
            ("playable", (4,), np.int8),
            ("played", (), np.int8),
            ("mover", (), np.int8),
            ("dice", (2,), np.int32),
            ("rewards", (2,), float),
            ("terminated", (), bool),
            ("features", (2, 34), np.int8),
        )
    }

    def keep(t):
        states = engine.states
        record["legal"][t] = engine.obs["legal"]
        record["features"][t] = engine.obs["features"]
        for name in ("board", "playable", "played", "mover", "dice"):
            record[name][t] = states[name]
        record["rewards"][t] = engine.rewards
        record["terminated"][t] = engine.terminated

    illegal = np.where(np.arange(WIDTH) % 4 == 3, ILLEGAL, 0.0)
    actions, ended = pgx_replay.play_ours(engine, PLIES, np.random.default_rng(7), illegal, keep)
    plies = int(ended.max())  # the replay scans as many plies as the longest game
    theirs = run(record["dice"][0], actions[:plies], record["dice"][1 : plies + 1])
    first_players = theirs[4][0]  # Pgx's player to move at init: our agent 0
    return record, theirs, actions, ended, first_players


def test_random_games_are_pgxs_ply_by_ply(games):
    record, theirs, actions, ended, first = games
    mask, board, playable, played, player, rewards, terminated, obs, other_obs = theirs
    rows = np.arange(WIDTH)
    order = np.stack([first, 1 - first], axis=1)  # Pgx's player id of our agents 0 and 1
    seen = {"no move": 0, "doubles": 0, "hits": 0, "illegal": 0}
    for t in range(int(ended.max()) + 1):
        where = f"ply {t}"
        live = ended >= t  # games that were going before ply t (or ended by it)
        going = ended > t
        np.testing.assert_array_equal(record["terminated"][t][live], terminated[t][live], where)
        pgx_rewards = rewards[t][rows[:, None], order]
        np.testing.assert_array_equal(record["rewards"][t][live], pgx_rewards[live], where)
        np.testing.assert_array_equal(record["legal"][t][going], mask[t][going], where)
        mover = record["mover"][t]
        np.testing.assert_array_equal(order[rows, mover][going], player[t][going], where)
        # The position after a legal ply (an illegal one ends the game; Pgx moves it anyway).
        legal_ply = live & ((t == 0) | record["legal"][max(t - 1, 0)][rows, actions[t - 1]])
        if t == 0:
            legal_ply = live
        for name, pgx_value in (("board", board), ("playable", playable), ("played", played)):
            np.testing.assert_array_equal(
                record[name][t][legal_ply], pgx_value[t][legal_ply], f"{where}: {name}"
            )
        for k in range(2):
            pgx_obs = np.where((order[:, k] == player[t])[:, None], obs[t], other_obs[t])
            np.testing.assert_array_equal(
                record["features"][t][legal_ply, k], pgx_obs[legal_ply], f"{where}: features {k}"
            )
        if t:
            a = actions[t - 1]
            moved = live & (t <= ended)
            seen["no move"] += int((moved & (a < 6)).sum())
            seen["illegal"] += int((moved & ~record["legal"][t - 1][rows, a]).sum())
            before = record["board"][t - 1]
            seen["hits"] += int((moved & (record["board"][t][:, 25] < before[:, 25])).sum())
        seen["doubles"] += int((going & (record["playable"][t][:, 3] >= 0)).sum())
    assert all(seen.values()), seen
    final = record["rewards"][ended, rows]
    outcomes = set(np.abs(final[:, 0]).tolist())
    assert {1.0, 2.0, 3.0} <= outcomes, outcomes


# ---- OpenSpiel ---------------------------------------------------------------------------------

OS_BAR = 100  # OpenSpiel's checker-move position of the bar (a pass: -1)


def our_action(player, pos, num):
    """OpenSpiel's checker move of ``player`` (``pos`` on its board, where player 0 moves up
    and player 1 down; ``num`` the die) as Pgx's action: points as the mover sees them."""
    if pos == OS_BAR:
        return 6 + num - 1
    point = pos if player == 0 else 23 - pos
    return 6 * (point + 2) + num - 1


def only_no_move(engine):
    legal = engine.obs["legal"][0]
    return bool(legal[:6].all() and not legal[6:].any())


def step(engine, agent, action):
    both = np.zeros((1, 2), dtype=np.int64)
    both[0, agent] = action
    engine.step(both)


def chance_for(theirs, dice, opening):
    """OpenSpiel's chance outcome for our roll (at the opening, the one where X, player 0, our
    agent 0, starts)."""
    for action, _ in theirs.chance_outcomes():
        text = theirs.action_to_string(-1, action)
        if opening and "X starts" not in text:
            continue
        faces = sorted(int(ch) for ch in text.split("roll: ")[1] if ch.isdigit())
        if faces == sorted(dice):
            return action
    raise AssertionError(f"no chance outcome for {dice}")


def play_openspiel(seed):
    """A random OpenSpiel game replayed in ours, compared after every turn; returns what it
    went through."""
    pyspiel = need("pyspiel", "OpenSpiel")
    game = pyspiel.load_game("backgammon", {"scoring_type": "full_scoring"})
    theirs = game.new_initial_state()
    ours = vecenv.make("backgammon", num_envs=1, seed=seed, autoreset="disabled")
    rng = random.Random(seed)
    seen = {"passes": 0, "moves": 0}
    opening = True
    while not theirs.is_terminal():
        if theirs.is_chance_node():
            dice = (ours.obs["dice"][0]).tolist()
            theirs.apply_action(chance_for(theirs, dice, opening))
            opening = False
            continue
        player = theirs.current_player()
        assert ours.states["status"][0, player] == ACTIVE
        choices = theirs.legal_actions()
        checkers = {a: theirs.spiel_move_to_checker_moves(player, a) for a in choices}
        if only_no_move(ours):  # no checker moves here: OpenSpiel passes
            assert all(c.pos == -1 for a in choices for c in checkers[a])
        legal = ours.obs["legal"][0]
        for a in choices:  # every first checker move OpenSpiel allows is legal here
            first = checkers[a][0]
            if first.pos != -1:
                assert legal[our_action(player, first.pos, first.num)], (seed, a)
        move = rng.choice(choices)
        theirs.apply_action(move)
        moves = [c for c in checkers[move] if c.pos != -1]
        if len(moves) == 2 and not legal[our_action(player, moves[0].pos, moves[0].num)]:
            moves.reverse()
        for c in moves:
            action = our_action(player, c.pos, c.num)
            assert ours.obs["legal"][0, action], (seed, c.pos, c.num)
            step(ours, player, action)
            seen["moves"] += 1
        turn_over = theirs.is_terminal() or theirs.is_chance_node()
        if turn_over and not ours.terminated[0] and ours.states["status"][0, player] == ACTIVE:
            assert only_no_move(ours), seed  # dice left that no checker can use
            step(ours, player, 0)
            seen["passes"] += 1
        if turn_over:
            board = ours.obs["board"][0]
            want = [theirs.board(0, p) - theirs.board(1, p) for p in range(24)]
            assert board[:24].tolist() == want, seed
    assert ours.terminated[0]
    returns = theirs.returns()
    mine = ours.states["reward"][0].tolist()
    if ours.obs["board"][0, 24] == 0 and ours.obs["board"][0, 25] == 0:
        assert mine == returns, (seed, mine, returns)
    else:  # OpenSpiel counts a checker on the bar towards a backgammon, Pgx does not
        assert [np.sign(r) for r in mine] == [np.sign(r) for r in returns]
    seen["points"] = abs(mine[0])
    return seen


def test_random_openspiel_games_replay_here():
    seen = [play_openspiel(seed) for seed in range(8)]
    assert sum(s["passes"] for s in seen) > 0
    assert {s["points"] for s in seen} >= {1.0, 2.0}


# ---- rules beyond the references ---------------------------------------------------------------


def test_an_illegal_action_loses_three_as_pgx_rules_it():
    e = vecenv.make("backgammon", num_envs=1, seed=0, autoreset="disabled")
    assert not e.obs["legal"][0, 0]
    e.step(np.array([[0, 0]]))  # no move while a checker can move
    np.testing.assert_array_equal(e.states["status"][0], [DONE, DONE])
    np.testing.assert_array_equal(e.rewards[0], [-3, 3])
    assert e.terminated[0] and not e.obs["legal"][0].any() and e.obs["turn"][0] == 0


def chi2(counts):
    expected = counts.sum() / counts.size
    return float(((counts - expected) ** 2 / expected).sum())


def test_the_rolls_are_pgxs_uniform_opening_and_two_fair_dice():
    """Pgx's opening roll is one of the 30 without doubles, uniformly, and later rolls are two
    fair dice (36 ordered faces); ours from the episode's stream too (chi-square tests at 0.1%)."""
    n = 18_000
    e = vecenv.make("backgammon", num_envs=n, seed=3, autoreset="disabled")
    dice = e.obs["dice"].astype(np.int64) - 1
    assert (dice[:, 0] != dice[:, 1]).all()
    opening = np.bincount(dice[:, 0] * 6 + dice[:, 1], minlength=36)
    assert chi2(opening[opening > 0]) < 58.3 and (opening > 0).sum() == 30  # 29 dof
    rng = np.random.default_rng(3)
    second = np.full(n, -1)
    while (second < 0).any():
        legal = e.obs["legal"]
        moves = np.zeros((n, 2), dtype=np.int64)
        moves[:, 0] = np.argmax(rng.random(legal.shape) * legal, axis=1)
        e.step(moves)
        rolled = (second < 0) & (e.obs["turn"] == 2)
        second[rolled] = (e.obs["dice"][rolled, 0] - 1) * 6 + e.obs["dice"][rolled, 1] - 1
    assert chi2(np.bincount(second, minlength=36)) < 66.6  # 35 degrees of freedom


def test_a_position_reached_by_play_and_given_is_the_same_record():
    """Positions given by their observations (mid-turn, either agent to move, doubles, checkers
    on the bar, games over) make the records play reached, and the same observations."""
    played = vecenv.make("backgammon", num_envs=16, seed=6, autoreset="disabled")
    rng = np.random.default_rng(6)
    header = ("rng", "last", "step", "done")
    names = [n for n in played.state_dtype.names if n not in header]
    for ply in range(120):
        if ply % 7 == 3:
            given = vecenv.make("backgammon", num_envs=16, seed=6, autoreset="disabled")
            positions = []
            for i in range(16):
                observation = {k: played.obs[k][i].copy() for k in ("board", "dice", "remaining")}
                status = [STATUS_NAMES[c] for c in played.states["status"][i]]
                reward = played.states["reward"][i].tolist()
                positions.append({"observation": observation, "status": status, "reward": reward})
            given.reset(position=positions)
            for name in names:
                np.testing.assert_array_equal(given.states[name], played.states[name], name)
            for name in played.obs:
                np.testing.assert_array_equal(given.obs[name], played.obs[name], name)
        moves = np.zeros((16, 2), dtype=np.int64)
        for i in np.flatnonzero(~played.terminated):
            mover = played.obs["turn"][i] - 1
            moves[i, mover] = rng.choice(np.flatnonzero(played.obs["legal"][i]))
        played.step(moves)


def test_random_self_play_is_deterministic_across_threads():
    runs = [
        selfplay.play("backgammon", ("random", "random"), 300, seed=4, num_threads=t).rewards
        for t in (1, 2)
    ]
    np.testing.assert_array_equal(*runs)
    assert rules.CHANCE
