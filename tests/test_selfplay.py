"""The batched match runner: results, reproducibility, Python policies, replays, bad input."""

import numpy as np
import pytest

import vecenv
from vecenv import registry, selfplay
from vecenv.engine import PARALLEL_MIN_ENVS
from vecenv.kernels.turns import ACTIVE, DONE, INVALID, STATUS_NAMES

TWO_AGENT_GAMES = [g for g in registry.list_envs() if registry.get_spec(g).num_agents == 2]


def lowest_open_column(obs, legal):
    """A batched policy: the first legal column of every match."""
    return np.argmax(legal, axis=1).astype(np.int64)


@pytest.mark.parametrize(
    "game,agents",
    [
        ("connectx", ("negamax", "random")),
        ("tictactoe", ("reaction", "random")),
        ("rps", ("statistical", "copy_opponent")),
    ],
)
def test_results_are_consistent(game, agents):
    config = {"episodeSteps": 40} if game == "rps" else {}
    r = selfplay.play(game, agents, 64, seed=5, **config)
    s = r.summary
    assert s.wins + s.draws + s.losses == 64 == r.rewards.shape[0]
    assert s.win_rate[1] <= s.win_rate[0] <= s.win_rate[2]
    assert (r.statuses == DONE).all()  # built-in agents only play legal moves
    # Seats alternate: A moves first in even matches.
    assert (r.seats == np.arange(64) % 2).all()
    wins = (r.rewards[:, 0] > r.rewards[:, 1]).sum()
    assert wins == s.wins
    assert "matches" in str(s)


def test_negamax_beats_random_most_of_the_time():
    r = selfplay.play("connectx", ("negamax", "random"), 200, seed=1)
    assert r.summary.win_rate[1] > 0.8


def test_same_seed_same_matches_for_any_threads_and_batch_split():
    a = selfplay.play("connectx", ("negamax", "random"), 40, seed=9, keep_actions=True)
    b = selfplay.play("connectx", ("negamax", "random"), 40, seed=9, num_threads=2)
    c = selfplay.play("connectx", ("negamax", "random"), 20, seed=9, keep_actions=True)
    np.testing.assert_array_equal(a.rewards, b.rewards)
    np.testing.assert_array_equal(a.plies, b.plies)
    np.testing.assert_array_equal(a.rewards[:20], c.rewards)
    np.testing.assert_array_equal(a.actions[: c.actions.shape[0], :20], c.actions)
    d = selfplay.play("connectx", ("negamax", "random"), 40, seed=10)
    assert not np.array_equal(a.plies, d.plies)


def test_python_policy_plays_its_seat():
    r = selfplay.play("connectx", (lowest_open_column, "random"), 30, seed=2, keep_actions=True)
    assert r.agents[0] == "lowest_open_column"
    assert (r.statuses == DONE).all()
    # In every match, policy A's moves are the lowest open column of the board it saw.
    env = r.replay(0)
    for before, after in zip(env.steps, env.steps[1:], strict=False):
        seat = int(r.seats[0])
        if before[seat].status == "ACTIVE":
            board = before[0].observation.board
            assert after[seat].action == next(c for c in range(7) if board[c] == 0)


def test_a_bad_move_in_one_match_leaves_the_others_alone():
    def bad_in_match_3(obs, legal):
        out = lowest_open_column(obs, legal)
        out[3] = 99
        return out

    good = selfplay.play("connectx", (lowest_open_column, "random"), 8, seed=4)
    bad = selfplay.play("connectx", (bad_in_match_3, "random"), 8, seed=4)
    assert STATUS_NAMES[bad.statuses[3, 0]] == "INVALID" and bad.statuses[3, 1] == DONE
    assert bad.rewards[3, 0] == -1
    others = np.arange(8) != 3
    np.testing.assert_array_equal(good.rewards[others], bad.rewards[others])
    np.testing.assert_array_equal(good.statuses[others], bad.statuses[others])
    assert INVALID not in good.statuses


def test_policy_returning_the_wrong_shape_is_an_error():
    with pytest.raises(ValueError, match="must return"):
        selfplay.play("connectx", (lambda obs, legal: 3, "random"), 4, seed=0)


def test_replay_reproduces_the_match():
    r = selfplay.play("tictactoe", ("reaction", "random"), 10, seed=3, keep_actions=True)
    for match in range(10):
        env = r.replay(match)
        a, b = int(r.seats[match]), 1 - int(r.seats[match])
        assert [s.reward for s in env.state] == [
            r.rewards[match, 0] if a == 0 else r.rewards[match, 1],
            r.rewards[match, 1] if b == 1 else r.rewards[match, 0],
        ]
        assert len(env.steps) - 1 == r.plies[match]
        assert "vecenvReplay" in env.render(mode="html")


def test_replay_needs_the_actions():
    r = selfplay.play("tictactoe", ("reaction", "random"), 2, seed=3)
    with pytest.raises(ValueError, match="keep_actions"):
        r.replay(0)


@pytest.mark.parametrize(
    "args,match",
    [
        (("connectx", ("negamx", "random"), 4), "unknown agent"),
        (("cartpole", ("random", "random"), 4), "cartpole is a one-agent game"),
        (("connectx", ("random",), 4), "two agents"),
        (("connectx", ("random", "random"), 0), "positive integer"),
        (("connectx", ("random", 3), 4), "built-in name or a callable"),
    ],
)
def test_bad_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        selfplay.play(*args)


def test_bad_seed():
    with pytest.raises(ValueError, match="seed"):
        selfplay.play("connectx", ("random", "random"), 2, seed=-1)


def test_wilson_interval():
    low, high = selfplay.wilson(50, 100)
    assert low < 0.5 < high and high - low == pytest.approx(0.19, abs=0.01)
    assert selfplay.wilson(0, 10)[0] == 0.0 and selfplay.wilson(10, 10)[1] == pytest.approx(1.0)


def out_of_range_sometimes(obs, legal):
    """A batched policy whose move depends on what it sees, one past the range now and then."""
    first = next(iter(obs.values()))
    seen = first.reshape(first.shape[0], -1).sum(axis=1).astype(np.int64)
    return np.where(seen % 7 == 3, 99, seen % 2)


@pytest.mark.parametrize("autoreset", ["next_step", "same_step", "disabled"])
@pytest.mark.parametrize("game", TWO_AGENT_GAMES)
def test_seats_step_plays_as_moves_then_step(game, autoreset):
    """``Seats.step`` (agents and step in one pass, on one thread and on two) gives what
    ``Seats.moves`` then the engine's ``step`` give: moves, observations, rewards, flags,
    states, the agents' memory and streams, and its totals add up the rewards and the episodes
    ended. Every built-in agent and empty seats are mixed across the batch, and a Python policy
    (with moves out of range) plays some seats."""
    n = PARALLEL_MIN_ENVS + 3  # large enough to take the parallel loop
    split, fused, threaded = seat_tables(game, n, autoreset, threads=(1, 1, 2))
    kinds = split.kinds.copy()
    actions = np.zeros((n, 2), dtype=np.int64)
    returns = np.zeros((n, 2))
    ends = np.zeros(n, dtype=np.int64)
    agent_moves = 0
    for _ in range(30):
        to_move = split.engine.states["status"] == ACTIVE
        agent_moves += int((to_move & (kinds >= 0)).sum())
        running = split.engine.states["done"] == 0  # (a frozen episode's flags stay set)
        split.moves(actions)
        expected = split.engine.step(actions)
        returns += expected[1]
        ends += running & (expected[2] | expected[3])
        for table in (fused, threaded):
            got = table.step()
            np.testing.assert_array_equal(table.actions, actions)
            assert_same_play(table, split, expected, got)
            np.testing.assert_array_equal(table.returns, returns)
            np.testing.assert_array_equal(table.ends, ends)
    assert threaded.engine.uses_threads and not fused.engine.uses_threads
    # The built-in agents did move (othello's games end at the first illegal move of an empty or
    # Python seat, so with disabled autoreset fewer moves are played there).
    assert agent_moves > n // 4, agent_moves
    assert ends.sum() > 0


@pytest.mark.parametrize("autoreset", ["next_step", "same_step", "disabled"])
@pytest.mark.parametrize("game", TWO_AGENT_GAMES)
def test_plies_in_a_row_are_the_plies_one_by_one(game, autoreset):
    """``Seats.step(plies)`` with built-in agents only (each episode playing its plies in a
    row, on one thread and on two) reaches what as many ``Seats.step()`` calls reach."""
    n = PARALLEL_MIN_ENVS + 3
    one_by_one, in_a_row, threaded = seat_tables(
        game, n, autoreset, threads=(1, 1, 2), policy=False
    )
    for plies in (1, 5, 13):
        for _ in range(plies):
            expected = one_by_one.step()
        for table in (in_a_row, threaded):
            got = table.step(plies)
            assert_same_play(table, one_by_one, expected, got)
            np.testing.assert_array_equal(table.returns, one_by_one.returns)
            np.testing.assert_array_equal(table.ends, one_by_one.ends)
    assert one_by_one.ends.sum() > 0


def seat_tables(game, n, autoreset, threads, policy=True):
    """``Seats`` of one engine per thread count, the same seed, every seat given the same agent:
    a built-in one at random, none (the action's lowest value), or a Python policy."""
    tables = []
    rng = np.random.default_rng(1)
    for t in threads:
        engine = vecenv.make(
            game,
            num_envs=n,
            seed=11,
            autoreset=autoreset,
            num_threads=t,
            parallel=t > 1,
            max_episode_steps=12,
        )
        tables.append(selfplay.Seats(engine))
    kinds = rng.integers(-1, len(tables[0].names), size=(n, 2))
    policy_seat = np.where(rng.random(n) < 0.3, 0, 1)
    for table in tables:
        table.kinds[:] = kinds
        if policy:
            table.assign(out_of_range_sometimes, policy_seat)
    return tables


def assert_same_play(table, reference, expected, got):
    for x, y in zip(expected[1:], got[1:], strict=True):
        np.testing.assert_array_equal(x, y)
    for name in expected[0]:
        np.testing.assert_array_equal(expected[0][name], got[0][name])
    np.testing.assert_array_equal(table.engine.get_state(), reference.engine.get_state())
    np.testing.assert_array_equal(table.memory, reference.memory)
    np.testing.assert_array_equal(table.rngs, reference.rngs)


def test_plies_must_be_a_positive_integer():
    table = selfplay.Seats(vecenv.make("tictactoe", num_envs=2, seed=0))
    for bad in (0, -1, 1.5, "2", None, True, 2**63):
        with pytest.raises(ValueError, match="plies"):
            table.step(bad)


@pytest.mark.parametrize("autoreset", ["next_step", "same_step", "disabled"])
@pytest.mark.parametrize("game", TWO_AGENT_GAMES)
def test_garbage_written_into_the_seats_leaves_every_state_valid(game, autoreset):
    """Any kind, memory or stream written into ``Seats``' arrays: the agents' moves are not
    checked before the rules take them, so the rules must refuse what they cannot play, and
    every state stays one the engine accepts."""
    rng = np.random.default_rng(5)
    engine = vecenv.make(game, num_envs=300, seed=1, autoreset=autoreset)
    table = selfplay.Seats(engine)
    table.kinds[:] = rng.integers(-5, 100, size=table.kinds.shape)
    table.memory[:] = rng.integers(-(2**62), 2**62, size=table.memory.shape)
    table.rngs["rng"] = rng.integers(0, 2**63, size=table.rngs.shape, dtype=np.uint64)
    for _ in range(5):
        table.step(7)
        assert engine.check_state(engine.get_state()) is None
    assert np.isin(engine.states["status"], range(len(STATUS_NAMES))).all()


def test_the_arrays_the_compiled_step_takes_cannot_be_replaced():
    table = selfplay.Seats(vecenv.make("connectx", num_envs=3, seed=0))
    for name in ("kinds", "memory", "rngs", "actions", "returns", "ends"):
        with pytest.raises(AttributeError):
            setattr(table, name, np.zeros(3, dtype=np.int32))
    table.kinds[:] = 0  # written in place: the random agent in every seat
    table.step(4)
    assert table.engine.states["filled"].tolist() == [4, 4, 4]
    table.returns[:] = 0  # totals start over
    assert not table.returns.any()
