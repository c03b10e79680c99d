"""Kaggle's Rock Paper Scissors: the rules side by side with kaggle-environments' own rps, the
built-in agents against Kaggle's agents, the renderers, and random input."""

import json
from pathlib import Path

import numba as nb
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vecenv
from tests.kaggle.reference import kaggle
from tests.kaggle.reference import make as kaggle_make
from vecenv.envs.rps import agents, render, rules
from vecenv.kernels.agents import AGENT_RNG
from vecenv.kernels.rng import seed_word
from vecenv.kernels.turns import (
    ACTIVE,
    DONE,
    ERROR,
    FAILED_REWARD,
    INVALID,
    STATUS_NAMES,
    TIMEOUT,
    failed,
)

FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
# Our extensions of Kaggle's specification (arrays, faces); everything else is Kaggle's.
EXTENSION_KEYS = {"shape", "dtype", "low", "high", "shared", "absent", "kaggle"}


def make(seed=0, **config):
    return vecenv.make("rps", num_envs=1, seed=seed, autoreset="disabled", **config)


def kaggle_env(**config):
    return kaggle_make("rps", config, debug=True)


def outcome(reward):
    """A Kaggle reward as the engine counts it: None (a failed agent) is -1."""
    return FAILED_REWARD if reward is None else reward


def mark(e, marks):
    """Set agents' statuses in our record before a step, as the Kaggle face marks failed agents."""
    record = e.get_state(0)
    for k, code in marks.items():
        record["status"][k] = code
    e.set_state(record, 0)


def assert_same(e, env):
    """Our episode 0 and Kaggle's env agree on statuses, rewards, observations and the end."""
    record = e.states[0]
    for k in range(2):
        theirs = env.state[k]
        code = int(record["status"][k])
        assert STATUS_NAMES[code] == theirs.status
        if theirs.reward is None:
            assert failed(code)
        else:
            assert not failed(code)
            assert record["reward"][k] == theirs.reward
        assert e.obs["lastOpponentAction"][0, k] == theirs.observation.get("lastOpponentAction", -1)
        assert e.obs["reward"][0, k] == theirs.observation.reward
    assert bool(e.terminated[0]) == env.done


def step_both(e, env, kaggle_actions, ours, marks=None):
    """One step of both. The engine's rewards are the changes of Kaggle's, counted from the
    record the step starts from (where a marked agent already counts as failed)."""
    before = [outcome(env.state[k].reward) for k in range(2)]
    if marks:
        mark(e, marks)
        for k in marks:
            before[k] = FAILED_REWARD
    env.step(kaggle_actions)
    e.step(np.array([ours], dtype=np.int64))
    after = [outcome(env.state[k].reward) for k in range(2)]
    np.testing.assert_array_equal(e.rewards[0], np.subtract(after, before))
    assert_same(e, env)


def winning_sign(sign, signs):
    """A sign beating ``sign``."""
    return next(s for s in range(signs) if rules.get_score(s, sign) == 1)


# -- the specification ---------------------------------------------------------------------------


def strip_extensions(entry):
    if isinstance(entry, dict):
        return {k: strip_extensions(v) for k, v in entry.items() if k not in EXTENSION_KEYS}
    return entry


def test_specification_is_kaggles_plus_array_extensions():
    from kaggle_environments.envs import rps as kaggle_rps

    kaggle()
    with open(Path(kaggle_rps.__file__).with_name("rps.json")) as f:
        theirs = json.load(f)
    with open(Path(rules.__file__).with_name("rps.json")) as f:
        ours = json.load(f)
    assert ours["description"].startswith(theirs["description"])
    for key in ("name", "title", "version", "agents", "configuration", "reward", "action"):
        assert strip_extensions(ours[key]) == theirs[key], key
    assert strip_extensions(ours["observation"]) == theirs["observation"]
    assert set(ours) - set(theirs) == {"kaggle", "gym"}


def test_configuration_matches_kaggles_defaults_and_engine_arrays():
    e = make()
    assert e.config == dict(kaggle_env().configuration)
    assert e.spec.action.low[0] == 0 and e.spec.action.high[0] == 2
    assert make(signs=5).action.high[0] == 4
    assert e.obs["lastOpponentAction"].shape == (1, 2)
    assert e.obs["lastOpponentAction"].dtype == np.int8
    assert e.obs["reward"].shape == (1, 2) and e.obs["reward"].dtype == np.int64
    for bad in ({"signs": 2}, {"signs": 6}, {"episodeSteps": 1}, {"tieRewardThreshold": 0}):
        with pytest.raises(ValueError):
            make(**bad)


def test_start_state():
    e = make()
    record = e.states[0]
    assert record["status"].tolist() == [ACTIVE, ACTIVE]
    assert record["reward"].tolist() == [0.0, 0.0]
    assert e.obs["lastOpponentAction"][0].tolist() == [-1, -1]
    assert e.obs["reward"][0].tolist() == [0, 0]


# -- side by side with Kaggle's rps --------------------------------------------------------------

# (signs, episodeSteps, tieRewardThreshold, bias, tie): ``bias`` is the chance that agent 0 (> 0)
# or agent 1 (< 0) shows the sign beating the other's; ``tie`` whether the final tie rule must zero
# a non-zero score (True), must keep the score (False), or either (None).
GAMES = [
    (3, 2, 1, 0.0, None),
    (3, 3, 1, 0.0, None),
    (4, 3, 2, 0.0, None),
    (5, 10, 1, 0.0, None),
    (3, 10, 20, 0.6, True),
    (4, 10, 3, -0.9, False),
    (5, 50, 1000, 0.7, True),
    (3, 50, 10, 0.8, False),
    (3, 50, 10, -0.8, False),
    (5, 50, 30, 0.0, True),
]


@pytest.mark.parametrize("signs,episode_steps,threshold,bias,tie", GAMES)
def test_random_matches_side_by_side(signs, episode_steps, threshold, bias, tie):
    config = {"signs": signs, "episodeSteps": episode_steps, "tieRewardThreshold": threshold}
    env = kaggle_env(**config)
    for seed in range(3):
        rng = np.random.default_rng([signs, episode_steps, seed])
        e = make(seed=seed, **config)
        env.reset()
        assert_same(e, env)
        rounds = 0
        while not env.done:
            a = [int(x) for x in rng.integers(0, signs, size=2)]
            if rng.random() < abs(bias):
                winner = 0 if bias > 0 else 1
                a[winner] = winning_sign(a[1 - winner], signs)
            step_both(e, env, a, a)
            rounds += 1
        assert rounds == episode_steps - 1
        assert e.states["step"][0] == episode_steps - 1
        assert e.states["status"][0].tolist() == [DONE, DONE]
        score = int(e.obs["reward"][0, 0])
        if tie is True:
            assert score != 0 and e.states["reward"][0].tolist() == [0.0, 0.0]
        elif tie is False:
            assert e.states["reward"][0].tolist() == [score, -score] and score != 0
        # Frozen once over (autoreset disabled): nothing moves.
        frozen = e.get_state()
        e.step(np.zeros((1, 2), dtype=np.int64))
        np.testing.assert_array_equal(e.get_state(), frozen)
        assert e.rewards[0].tolist() == [0.0, 0.0]


def kaggle_failures():
    errors = kaggle().errors
    return {"timeout": errors.DeadlineExceeded("too slow"), "error": RuntimeError("boom")}


# (signs, Kaggle's actions, our marks): an out-of-range sign, a sign beyond the schema's maximum,
# a negative one, an agent that timed out or raised.
INVALID_MOVES = [
    (3, [0, 4], {1: INVALID}),
    (3, [3, 1], {0: INVALID}),
    (4, [7, 1], {0: INVALID}),
    (5, [2, 9], {1: INVALID}),
    (3, [-1, 2], {0: INVALID}),
    (3, [3, 3], {0: INVALID, 1: INVALID}),
    (5, [7, 5], {0: INVALID, 1: INVALID}),
    (3, ["timeout", 1], {0: TIMEOUT}),
    (3, [2, "error"], {1: ERROR}),
    (4, ["error", "timeout"], {0: ERROR, 1: TIMEOUT}),
    (5, ["timeout", 8], {0: TIMEOUT, 1: INVALID}),
]


@pytest.mark.parametrize("signs,kaggle_actions,marks", INVALID_MOVES)
@pytest.mark.parametrize("at", ["first", "middle", "last"])
def test_invalid_moves_side_by_side(signs, kaggle_actions, marks, at):
    episode_steps = 6
    config = {"signs": signs, "episodeSteps": episode_steps, "tieRewardThreshold": 1}
    env = kaggle_env(**config)
    e = make(**config)
    rng = np.random.default_rng(signs)
    before = {"first": 0, "middle": 2, "last": episode_steps - 2}[at]
    for _ in range(before):
        a = [int(x) for x in rng.integers(0, signs, size=2)]
        step_both(e, env, a, a)
    failures = kaggle_failures()
    theirs = [failures.get(a, a) if isinstance(a, str) else a for a in kaggle_actions]
    step_both(e, env, theirs, [0, 0], marks)
    assert env.done and e.terminated[0]
    statuses = e.states["status"][0].tolist()
    for k in range(2):
        if k in marks:
            assert statuses[k] == INVALID
        else:
            assert statuses[k] == DONE and e.states["reward"][0, k] == 1.0


def test_out_of_range_actions_are_refused_by_the_engine():
    e = make(signs=3)
    before = e.get_state()
    for bad in ([[0, 3]], [[-1, 0]], [[5, 1]]):
        with pytest.raises(ValueError, match="out of range"):
            e.step(np.array(bad))
        np.testing.assert_array_equal(e.get_state(), before)
    make(signs=5).step(np.array([[4, 3]]))


@pytest.mark.parametrize(
    "left,right,expected", [(0, 0, 0), (0, 1, -1), (1, 0, 1), (2, 0, -1), (0, 2, 1), (3, 1, -1)]
)
def test_get_score(left, right, expected):
    from kaggle_environments.envs.rps.utils import get_score

    kaggle()
    assert rules.get_score(left, right) == expected == get_score(left, right)


def test_get_score_matches_kaggles_for_every_pair_of_signs():
    from kaggle_environments.envs.rps.utils import get_score

    kaggle()
    for left in range(5):
        for right in range(5):
            assert rules.get_score(left, right) == get_score(left, right)


# -- agents --------------------------------------------------------------------------------------


@nb.njit
def agent_action(kind, obs, player, step, cfgs, memory, rngs):
    return agents.act(kind, obs, 0, player, step, cfgs[0], memory, rngs[0])


class ReplayedRandom:
    """Stands in for the ``random`` module of Kaggle's agents: ``randrange`` returns the sign our
    agent drew (so both continue from the same first move) and records that it was asked."""

    def __init__(self, value, signs):
        self.value = value
        self.signs = signs
        self.calls = 0

    def randrange(self, start, stop):
        assert (start, stop) == (0, self.signs)
        self.calls += 1
        return self.value


def opponent_sequences(signs, length=40):
    rng = np.random.default_rng(signs)
    return {
        "random": [int(x) for x in rng.integers(0, signs, size=length)],
        "constant": [signs - 1] * length,
        "cycle": [k % signs for k in range(length)],
        # Equal counts of several signs, met in an order other than their values' (statistical's
        # ties go to the first seen).
        "ties": [2, 1, 0, 0, 1, 2, 2, 0, 1, 1, 0, 2] * (length // 12 + 1),
    }


@pytest.mark.parametrize("name", agents.NAMES)
@pytest.mark.parametrize("signs", [3, 5])
@pytest.mark.parametrize("seat", [0, 1])
def test_agents_play_as_kaggles(name, signs, seat, monkeypatch):
    from kaggle_environments.envs.rps import agents as kaggle_agents

    utils = kaggle().utils
    kind = agents.NAMES.index(name)
    for label, sequence in opponent_sequences(signs).items():
        config = {"signs": signs, "episodeSteps": len(sequence) + 1, "tieRewardThreshold": 1}
        env = kaggle_env(**config)
        for seed in range(2):
            e = make(seed=seed, **config)
            env.reset()
            cfgs = e.spec.config_record(e.config)
            memory = np.zeros(agents.MEMORY, dtype=np.int64)
            rngs = np.zeros(1, dtype=AGENT_RNG)
            rngs["rng"] = seed_word(np.uint64(seed), np.uint64(seat))
            obs = tuple(e.obs.values())
            for opponent in sequence:
                step = int(e.states["step"][0])
                assert step == env.state[0].observation.step
                word = int(rngs["rng"][0])
                ours = int(agent_action(kind, obs, seat, step, cfgs, memory, rngs))
                assert 0 <= ours < signs
                drew = int(rngs["rng"][0]) != word
                replay = ReplayedRandom(ours, signs)
                monkeypatch.setattr(kaggle_agents, "random", replay)
                observation = utils.structify({**env.state[seat].observation, "step": step})
                theirs = kaggle_agents.agents[name](observation, env.configuration)
                theirs = 0 if theirs is None else theirs  # Kaggle's action schema's default
                assert ours == theirs, (label, seed, step)
                assert drew == (replay.calls > 0), (label, seed, step)
                actions = [ours, opponent] if seat == 0 else [opponent, ours]
                env.step(actions)
                e.step(np.array([actions]))
                assert_same(e, env)
            assert e.terminated[0] and env.done


@nb.njit
def seat_action(kinds, obs, step, cfgs, memories, rngs, player):
    return agents.act(kinds[player], obs, 0, player, step, cfgs[0], memories[player], rngs[player])


@pytest.mark.parametrize(
    "name,answer",
    [
        ("reactionary", lambda opponent: (opponent + 1) % 3),
        ("copy_opponent", lambda opponent: opponent),
    ],
)
def test_agents_keep_their_own_memory_in_self_play(name, answer):
    """The same agent on both seats of one match: each seat keeps its own memory and stream, so
    each answers its own opponent's last sign."""
    kind = agents.NAMES.index(name)
    e = make(seed=4, episodeSteps=30)
    kinds = np.array([kind, kind])
    cfgs = e.spec.config_record(e.config)
    memories = np.zeros((2, agents.MEMORY), dtype=np.int64)
    rngs = np.zeros(2, dtype=AGENT_RNG)
    rngs["rng"] = [seed_word(np.uint64(4), np.uint64(k)) for k in range(2)]
    obs = tuple(e.obs.values())
    rounds = 0
    while not e.terminated[0]:
        step = int(e.states["step"][0])
        moves = [int(seat_action(kinds, obs, step, cfgs, memories, rngs, k)) for k in range(2)]
        if step > 0:
            last = e.obs["lastOpponentAction"][0]
            assert moves == [answer(int(last[k])) for k in range(2)]
        e.step(np.array([moves]))
        rounds += 1
    assert rounds == 29


def test_statistical_breaks_ties_by_the_first_seen_sign():
    kind = agents.NAMES.index("statistical")
    e = make(signs=5)
    cfgs = e.spec.config_record(e.config)
    memory = np.zeros(agents.MEMORY, dtype=np.int64)
    rngs = np.zeros(1, dtype=AGENT_RNG)
    obs = tuple(e.obs.values())
    played = []
    for opponent in [3, 1, 1, 3, 4, 4]:
        played.append(int(agent_action(kind, obs, 0, int(e.states["step"][0]), cfgs, memory, rngs)))
        e.step(np.array([[played[-1], opponent]]))
    # None (0) first; then the mode of 3 / 3,1 / 3,1,1 / 3,1,1,3 (a tie: 3 first) / +4, plus one.
    assert played == [0, 4, 4, 2, 4, 4]
    assert memory[agents.SEEN] == 3
    assert memory[agents.ORDER : agents.ORDER + 3].tolist() == [3, 1, 4]


# -- render --------------------------------------------------------------------------------------


def test_ansi_tells_the_round_signs_and_score():
    e = make(episodeSteps=3, tieRewardThreshold=1)
    assert e.render(0, "ansi") == "Round 0: no signs shown, Score: 0 to 0"
    e.step(np.array([[1, 0]]))
    assert e.render(0, "ansi") == "Round 1: Paper vs Rock, Score: 1 to -1"
    e.step(np.array([[1, 1]]))
    assert e.render(0, "ansi").splitlines() == [
        "Round 2: Paper vs Paper, Score: 1 to -1",
        "Game ended on round 2, final score: 1 to -1 (DONE and DONE)",
    ]
    failed_match = make()
    failed_match.step(np.array([[0, 2]]))  # Rock beats Scissors
    mark(failed_match, {1: TIMEOUT})
    failed_match.step(np.array([[0, 0]]))
    assert failed_match.render(0, "ansi").splitlines()[-1] == (
        "Game ended on round 2, final score: 1 to None (DONE and INVALID)"
    )


def test_rgb_array_shows_both_signs_and_the_outcome():
    e = make(signs=5, episodeSteps=2, tieRewardThreshold=1)
    frame = e.render(0)
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    m, q = render.MARGIN, render.SQUARE
    left, right = frame[m + q // 2, m + q // 2], frame[m + q // 2, 2 * m + q + q // 2]
    assert left.tolist() == right.tolist() == list(render.NO_SIGN_COLOUR)
    strip = 2 * m + q + 1
    assert frame[strip, m + 1].tolist() == list(render.RUNNING)
    e.step(np.array([[4, 3]]))  # Lizard beats Spock
    frame = e.render(0)
    left, right = frame[m + q // 2, m + q // 2], frame[m + q // 2, 2 * m + q + q // 2]
    assert left.tolist() == list(render.SIGN_COLOURS[4])
    assert right.tolist() == list(render.SIGN_COLOURS[3])
    assert frame[strip, m + 1].tolist() == list(render.WINNER)
    assert frame[strip, 2 * m + q + 1].tolist() == list(render.OTHER)


# -- random input --------------------------------------------------------------------------------


@st.composite
def matches(draw):
    signs = draw(st.integers(3, 5))
    episode_steps = draw(st.integers(2, 12))
    threshold = draw(st.integers(1, 6))
    moves = draw(
        st.lists(
            st.tuples(st.integers(0, signs - 1), st.integers(0, signs - 1)),
            min_size=episode_steps,
            max_size=episode_steps,
        )
    )
    failure = draw(
        st.none()
        | st.tuples(
            st.integers(0, episode_steps - 2),
            st.dictionaries(
                st.integers(0, 1), st.sampled_from([ERROR, INVALID, TIMEOUT]), min_size=1
            ),
        )
    )
    return signs, episode_steps, threshold, moves, failure


@FUZZ
@given(match=matches(), seed=st.integers(0, 2**32))
def test_random_matches_keep_consistent_statuses(match, seed):
    signs, episode_steps, threshold, moves, failure = match
    e = make(seed=seed, signs=signs, episodeSteps=episode_steps, tieRewardThreshold=threshold)
    score = 0
    returns = np.zeros(2)
    for t, (a, b) in enumerate(moves):
        if e.terminated[0]:
            break
        marks = failure[1] if failure is not None and failure[0] == t else None
        if marks:
            mark(e, marks)
            # A marked agent's step reward counts from its failed outcome, -1.
            for k in marks:
                returns[k] += FAILED_REWARD - e.states["reward"][0, k]
        e.step(np.array([[a, b]]))
        returns += e.rewards[0]
        record = e.states[0]
        statuses = record["status"].tolist()
        if marks:
            assert e.terminated[0]
            for k in range(2):
                assert statuses[k] == (INVALID if k in marks else DONE)
                assert k in marks or record["reward"][k] == 1.0
            assert e.obs["reward"][0].tolist() == [score, -score]
        else:
            score += rules.get_score(a, b)
            assert e.obs["lastOpponentAction"][0].tolist() == [b, a]
            assert e.obs["reward"][0].tolist() == [score, -score]
            last = t == episode_steps - 2
            assert bool(e.terminated[0]) == last
            if last:
                assert statuses == [DONE, DONE]
                final = 0 if abs(score) < threshold else score
                assert record["reward"].tolist() == [final, -final]
            else:
                assert statuses == [ACTIVE, ACTIVE]
                assert record["reward"].tolist() == [score, -score]
        assert not e.truncated[0]
    assert e.terminated[0]
    # The step rewards add up to each agent's outcome.
    record = e.states[0]
    final = [
        FAILED_REWARD if failed(record["status"][k]) else record["reward"][k] for k in range(2)
    ]
    np.testing.assert_array_equal(returns, final)


GARBAGE = [
    ("status", 0, 6),
    ("status", 1, -1),
    ("reward", 0, np.nan),
    ("reward", 1, np.inf),
    ("reward", 0, 2.0**60),
    ("sign", 0, 3),
    ("sign", 1, -2),
    ("score", 0, -(2**62)),
]


@FUZZ
@given(
    garbage=st.sampled_from(GARBAGE),
    lone_sign=st.integers(0, 2),
    keep=st.booleans(),
)
def test_set_state_refuses_records_the_rules_cannot_run(garbage, lone_sign, keep):
    e = make(signs=3)
    e.step(np.array([[0, 1]]))
    before = e.get_state()
    record = e.get_state(0)
    if keep:
        field, k, value = garbage
        record[field][k] = value
    else:
        record["sign"][:] = [lone_sign, -1]  # one agent's sign without the other's
    with pytest.raises(ValueError, match="state field"):
        e.set_state(record, 0)
    np.testing.assert_array_equal(e.get_state(), before)


@FUZZ
@given(
    status=st.lists(st.integers(0, 5), min_size=2, max_size=2),
    reward=st.lists(st.integers(-50, 50), min_size=2, max_size=2),
    signs=st.sampled_from([[-1, -1], [0, 2], [2, 2], [1, 0]]),
    score=st.lists(st.integers(-50, 50), min_size=2, max_size=2),
    step=st.integers(0, 2**40),
    actions=st.lists(st.integers(0, 2), min_size=2, max_size=2),
)
def test_accepted_records_step_without_surprises(status, reward, signs, score, step, actions):
    e = make(signs=3, episodeSteps=20)
    record = e.get_state(0)
    record["status"][:] = status
    record["reward"][:] = reward
    record["sign"][:] = signs
    record["score"][:] = score
    record["step"] = step
    e.set_state(record, 0)
    assert e.obs["lastOpponentAction"][0].tolist() == [signs[1], signs[0]]
    assert e.obs["reward"][0].tolist() == score
    e.step(np.array([actions]))
    after = e.states[0]
    assert all(0 <= c <= 5 for c in after["status"])
    assert np.isfinite(after["reward"]).all()
    assert bool(e.terminated[0]) == all(c != ACTIVE for c in after["status"])
