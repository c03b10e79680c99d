"""The Kaggle face's whole interface beside kaggle-environments'.

``run`` with the same agents (callables that play, print, raise or return odd values, and the
built-in agents by name) gives the same steps as Kaggle's ``run``; timeouts and the run deadline
are compared under one fake clock (``perf_counter`` replaced in both, advanced by the agents
themselves or by a fixed amount per reading), so no test waits or depends on real durations.
Then the rest of the interface: errors, ``train``, ``evaluate``, ``make``'s inputs (positions
given as ``steps`` are tests/kaggle/test_positions.py's), ``toJSON``, ``render``, ``Struct`` and
the seeding of the built-in agents.
"""

import copy
import json
import random
import sys
import types

import numpy as np
import pytest

import vecenv.kaggle.agents as our_agents
import vecenv.kaggle.environment as our_environment
from tests.kaggle import reference
from tests.kaggle import test_html_replay as replay
from tests.kaggle.common import BUILTIN_NAMES, plain
from vecenv import kaggle as vk

# The replay page tests' fixture that opens a page (``browser`` comes from tests/conftest.py).
open_page = replay.open_page

# ---- helpers -------------------------------------------------------------------------------------


class FakeClock:
    """``perf_counter`` for both faces: ``tick`` seconds pass at every reading, and an agent can
    ``spend`` time while it acts."""

    def __init__(self):
        self.now = 1000.0
        self.tick = 0.0

    def __call__(self):
        self.now += self.tick
        return self.now

    def spend(self, seconds):
        self.now += seconds


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(our_agents, "perf_counter", fake)
    monkeypatch.setattr(our_environment, "perf_counter", fake)
    try:
        import kaggle_environments.agent
        import kaggle_environments.core
    except Exception:  # the tests needing the reference skip (fail in CI) on their own
        return fake
    monkeypatch.setattr(kaggle_environments.agent, "perf_counter", fake)
    monkeypatch.setattr(kaggle_environments.core, "perf_counter", fake)
    return fake


def stdout_logs(env):
    return [[log.get("stdout") for log in step] for step in env.logs]


def both(game, config=None, debug=False):
    return (
        vk.make(game, configuration=config, debug=debug),
        reference.make(game, configuration=config, debug=debug),
    )


# ---- callables played side by side ---------------------------------------------------------------


def lowest_column(obs, config):
    return next(c for c in range(config.columns) if obs.board[c] == 0)


def first_open_cell(obs):  # Kaggle's tictactoe agents take the observation only
    return obs.board.index(0)


def chatty(obs, config):
    print("step", obs.step, "mark", obs.mark)
    return lowest_column(obs, config)


def raiser(obs, config):
    raise ValueError("this agent fails")


def returning(value):
    def agent(obs, config):
        return copy.deepcopy(value)

    return agent


def returning_at(step, value, otherwise):
    """Plays ``otherwise`` but returns ``value`` at Kaggle step ``step``."""

    def agent(obs, config):
        return copy.deepcopy(value) if obs.step == step else otherwise(obs, config)

    return agent


def one_column(column):
    return lambda obs, config: column


def sign(value):
    return lambda obs, config: value


def cycle(obs, config):
    return obs.step % config.signs


def beat_last(obs, config):
    return (obs.lastOpponentAction + 1) % config.signs if obs.step else 0


def rude_beat_last(obs, config):  # reads the absent lastOpponentAction at step 0: raises
    return (obs.lastOpponentAction + 1) % config.signs


ODD_VALUES = {
    "string": "3",
    "none": None,
    "huge": 10**30,
    "true": True,
    "np_int64": np.int64(3),
    "np_int32": np.int32(2),
    "negative": -1,
    "list": [1],
    "dict": {"column": 1},
    "fraction": 2.5,
    "nan": float("nan"),
}

RUN_CASES = {
    "connectx-lowest": ("connectx", {}, lambda: [lowest_column, lowest_column]),
    "connectx-small-board": (
        "connectx",
        # the 4x5 board most other small-board connectx tests play (tests/test_positions.py, ...)
        {"rows": 4, "columns": 5, "inarow": 3},
        lambda: [lowest_column, one_column(3)],
    ),
    "connectx-full-column": ("connectx", {}, lambda: [one_column(2), one_column(2)]),
    "connectx-past-the-board": ("connectx", {}, lambda: [lowest_column, one_column(7)]),
    "connectx-episode-steps": (
        "connectx",
        {"episodeSteps": 5},
        lambda: [lowest_column, lowest_column],
    ),
    "connectx-prints": ("connectx", {}, lambda: [chatty, chatty]),
    "connectx-raises-first": ("connectx", {}, lambda: [raiser, lowest_column]),
    "connectx-raises-second": ("connectx", {}, lambda: [lowest_column, raiser]),
    "connectx-static-value": ("connectx", {}, lambda: [4, lowest_column]),
    "tictactoe-first-open": ("tictactoe", {}, lambda: [first_open_cell, first_open_cell]),
    "tictactoe-occupied": ("tictactoe", {}, lambda: [first_open_cell, sign(0)]),
    "tictactoe-episode-steps": (
        "tictactoe",
        {"episodeSteps": 4},
        lambda: [first_open_cell, first_open_cell],
    ),
    "tictactoe-raises": ("tictactoe", {}, lambda: [first_open_cell, raiser]),
    "rps-rock-paper": ("rps", {"episodeSteps": 12}, lambda: [sign(0), sign(1)]),
    "rps-threshold": (
        "rps",
        {"episodeSteps": 12, "tieRewardThreshold": 3},
        lambda: [sign(0), sign(1)],
    ),
    "rps-cycle-beat": ("rps", {"episodeSteps": 15, "signs": 5}, lambda: [cycle, beat_last]),
    "rps-raises-at-step-0": ("rps", {"episodeSteps": 10}, lambda: [rude_beat_last, cycle]),
    "rps-sign-past-signs": ("rps", {"episodeSteps": 10}, lambda: [cycle, sign(3)]),
    "rps-both-invalid": ("rps", {"episodeSteps": 10}, lambda: [sign(7), sign(-1)]),
    "rps-integral-float": ("rps", {"episodeSteps": 10}, lambda: [sign(1.0), cycle]),
}
for _name, _value in ODD_VALUES.items():
    RUN_CASES[f"connectx-returns-{_name}"] = (
        "connectx",
        {},
        lambda v=_value: [returning_at(4, v, lowest_column), lowest_column],
    )
    RUN_CASES[f"rps-returns-{_name}"] = (
        "rps",
        {"episodeSteps": 8},
        lambda v=_value: [cycle, returning_at(3, v, cycle)],
    )


# With debug an agent's exception leaves run, as in Kaggle (tested below): those cases run captured.
RUN_PARAMS = [
    (case, debug)
    for case in sorted(RUN_CASES)
    for debug in (False, True)
    if not (debug and "raises" in case)
]


@pytest.mark.parametrize(
    "case,debug", RUN_PARAMS, ids=[f"{c}-{'debug' if d else 'captured'}" for c, d in RUN_PARAMS]
)
def test_run_with_callables_matches_kaggle(clock, case, debug):
    game, config, agents = RUN_CASES[case]
    ours, theirs = both(game, config, debug=debug)
    got = plain(ours.run(agents()))
    want = plain(theirs.run(agents()))
    assert got == want
    assert len(got) >= 2
    for key in ("statuses", "rewards"):
        assert ours.toJSON()[key] == theirs.toJSON()[key]
    assert stdout_logs(ours) == stdout_logs(theirs)


def test_odd_values_are_failures_as_kaggle_makes_them(clock):
    """What the side-by-side runs above pin down, spelt out: Kaggle's schema refuses numpy
    integers (``np.int64(3)`` is no JSON integer to it), strings and True; None plays the default
    column 0; a number past the board is refused by the rules, with its action recorded."""
    expected = {
        "string": ("INVALID", None),
        "np_int64": ("INVALID", None),
        "np_int32": ("INVALID", None),
        "true": ("INVALID", None),
        "negative": ("INVALID", None),
        "list": ("INVALID", None),
        "huge": ("INVALID", 10**30),
        "none": ("INACTIVE", 0),
    }
    for name, (status, action) in expected.items():
        env = vk.make("connectx")
        env.run([returning_at(0, ODD_VALUES[name], lowest_column), lowest_column])
        assert (env.steps[1][0].status, env.steps[1][0].action) == (status, action), name
        if status == "INVALID":
            assert env.steps[1][0].reward is None
            assert (env.steps[1][1].status, env.steps[1][1].reward) == ("DONE", 0)


@pytest.mark.parametrize("game", ["connectx", "rps"])
def test_agent_output_is_captured_into_logs_unless_debug(clock, game, capsys):
    config = {"episodeSteps": 4} if game == "rps" else {}

    def talker(obs, config):
        print("thinking at", obs.step)
        return 0 if game == "rps" else lowest_column(obs, config)

    for debug in (False, True):
        ours, theirs = both(game, config, debug=debug)
        ours.run([talker, talker])
        printed = capsys.readouterr().out
        theirs.run([talker, talker])
        assert capsys.readouterr().out == printed
        assert stdout_logs(ours) == stdout_logs(theirs)
        if debug:
            assert "thinking at 0" in printed
            assert all(log in ("", None) for step in stdout_logs(ours) for log in step)
        else:
            assert printed == ""
            assert next(step for step in ours.logs if step)[0]["stdout"] == "thinking at 0\n"


def test_raising_agent_is_error_and_logs_its_traceback(clock):
    env = vk.make("connectx")
    env.run([lowest_column, raiser])
    assert [s.status for s in env.state] == ["DONE", "ERROR"]
    assert [s.reward for s in env.state] == [0, None]
    assert "ValueError: this agent fails" in env.logs[-1][1]["stderr"]


def test_raising_agent_with_debug_raises_out_of_run(clock):
    ours, theirs = both("connectx", debug=True)
    with pytest.raises(ValueError, match="this agent fails"):
        theirs.run([lowest_column, raiser])
    with pytest.raises(ValueError, match="this agent fails"):
        ours.run([lowest_column, raiser])


# ---- built-in agents -----------------------------------------------------------------------------

PAIRS = [(g, a, b) for g, names in BUILTIN_NAMES.items() for a in names for b in names]


def replay_in_kaggle(game, config, steps):
    """Kaggle's environment fed the actions of ``steps``."""
    env = reference.make(game, configuration=config, debug=True)
    for step in steps[1:]:
        env.step([agent["action"] for agent in step])
    return env


@pytest.mark.parametrize("game,first,second", PAIRS, ids=[f"{g}-{a}-{b}" for g, a, b in PAIRS])
def test_builtin_agents_by_name_play_kaggle_games(clock, game, first, second):
    config = {"episodeSteps": 25, "tieRewardThreshold": 4} if game == "rps" else {}
    random.seed(f"{game}{first}{second}")
    env = vk.make(game, configuration=config)
    steps = env.run([first, second])
    statuses = [s.status for s in env.state]
    rewards = [s.reward for s in env.state]
    assert statuses == ["DONE", "DONE"]
    if game == "rps":
        assert len(steps) == config["episodeSteps"]
        assert rewards[0] == -rewards[1]
        # The running score decides: below tieRewardThreshold in size the match is a tie.
        score = steps[-1][0].observation.reward
        assert rewards[0] == (score if abs(score) >= config["tieRewardThreshold"] else 0)
    else:
        assert rewards in ([1, -1], [-1, 1], [0, 0])
    # Every move was legal and Kaggle's rules, fed the same actions, give the same steps.
    kaggle = replay_in_kaggle(game, config, steps)
    assert plain(steps, overage=False) == plain(kaggle.steps, overage=False)


def _rps_reference_agents():
    reference.kaggle()
    from kaggle_environments.envs.rps import agents

    return agents


# The module global each stateful Kaggle rps agent keeps its own last sign in.
RPS_MEMORY = {"reactionary": "last_react_action", "counter_reactionary": "last_counter_action"}


@pytest.mark.parametrize("seat", [0, 1])
@pytest.mark.parametrize("name", BUILTIN_NAMES["rps"])
def test_rps_builtins_move_as_kaggles_on_the_same_observations(clock, monkeypatch, name, seat):
    """Kaggle's own agent is fed the observations ours saw; after step 0 (a random sign for some)
    every rps agent is deterministic, and plays what ours played."""
    module = _rps_reference_agents()
    config = {"episodeSteps": 40, "signs": 5}
    opponent = returning_at(7, 4, lambda obs, conf: (obs.step * obs.step) % conf.signs)
    agents = [name, opponent] if seat == 0 else [opponent, name]
    random.seed(name)
    env = vk.make("rps", configuration=config)
    steps = env.run(agents)
    conf = vk.Struct(**dict(env.configuration))
    for t in range(len(steps) - 1):
        observation = vk.Struct(**{**steps[t][seat].observation, "step": t})
        kaggle_action = getattr(module, name)(observation, conf)
        ours = steps[t + 1][seat].action
        if t == 0:
            if name in RPS_MEMORY:
                monkeypatch.setattr(module, RPS_MEMORY[name], ours)  # the same first sign
            if name in RPS_MEMORY or name == "copy_opponent":
                continue
        assert ours == (0 if kaggle_action is None else kaggle_action), t


def test_tictactoe_reaction_wins_and_blocks_as_kaggles(clock, monkeypatch):
    """Where Kaggle's reaction agent has a line to complete or block, ours plays the same cell;
    Kaggle's random choice (patched to say so) marks the other positions."""
    kaggle_reaction = reference.make("tictactoe").agents["reaction"]
    monkeypatch.setitem(kaggle_reaction.__globals__, "choice", lambda options: (None, None))
    compared = 0
    for seed in range(30):
        random.seed(seed)
        env = vk.make("tictactoe")
        steps = env.run(["reaction", "random"])
        for t in range(0, len(steps) - 1, 2):  # the reaction agent (X) moves at even steps
            observation = vk.Struct(board=list(steps[t][0].observation.board), mark=1, step=t)
            want = kaggle_reaction(observation)
            if want is not None:
                compared += 1
                assert steps[t + 1][0].action == want
    assert compared >= 10


def test_connectx_negamax_takes_a_winning_move_as_kaggles(clock, monkeypatch):
    """Kaggle's negamax, given the positions ours met, returns without any coin where it can win
    at once; ours then plays that column."""
    kaggle_negamax = reference.make("connectx").agents["negamax"]

    class Coin(Exception):
        pass

    def coin(options):
        raise Coin

    monkeypatch.setitem(kaggle_negamax.__globals__, "choice", coin)
    conf = vk.Struct(rows=6, columns=7, inarow=4)
    compared = 0
    for seed in range(12):
        random.seed(seed)
        env = vk.make("connectx")
        steps = env.run(["negamax", "random"])
        for t in range(0, len(steps) - 1, 2):
            observation = vk.Struct(board=list(steps[t][0].observation.board), mark=1, step=t)
            try:
                want = kaggle_negamax(observation, conf)
            except Coin:
                continue
            compared += 1
            assert steps[t + 1][0].action == want
    assert compared >= 5


@pytest.mark.parametrize(
    "game,agents",
    [
        ("connectx", ["negamax", "random"]),
        ("tictactoe", ["random", "reaction"]),
        ("rps", ["copy_opponent", "reactionary"]),
        ("rps", ["counter_reactionary", "statistical"]),
    ],
)
def test_seeding_pythons_random_repeats_a_run(clock, game, agents):
    config = {"episodeSteps": 30} if game == "rps" else {}
    runs = []
    for seed in (5, 5, *range(6, 16)):
        random.seed(seed)
        runs.append(plain(vk.make(game, configuration=config).run(agents)))
    assert runs[0] == runs[1]
    assert any(run != runs[0] for run in runs[2:])


# ---- time ----------------------------------------------------------------------------------------


def spender(clock, seconds, play):
    """An agent that takes ``seconds[k]`` (fake) seconds at its k-th act, then plays ``play``."""
    schedule = iter(seconds)

    def agent(obs, config):
        clock.spend(next(schedule, 0))
        return play(*[obs, config][: play.__code__.co_argcount])

    return agent


TIMEOUT_CASES = {
    # connectx: actTimeout 2, 60 s banked. 30 and 40 s: 28 s and then 38 s of overage, too much.
    "connectx-overage-spent": ("connectx", {}, [0, 30, 40, 1], lowest_column),
    "connectx-at-once": ("connectx", {}, [62.5], lowest_column),
    "connectx-exactly-the-bank": ("connectx", {}, [62, 1, 2], lowest_column),
    "connectx-longer-act-timeout": ("connectx", {"actTimeout": 5}, [6, 6, 70], lowest_column),
    "tictactoe": ("tictactoe", {}, [1.5, 2.6], first_open_cell),
    "rps": ("rps", {"episodeSteps": 10}, [0, 20, 45], cycle),
}


@pytest.mark.parametrize("case", sorted(TIMEOUT_CASES))
def test_timeouts_and_overage_match_kaggle(clock, case):
    game, config, seconds, play = TIMEOUT_CASES[case]
    runs = []
    for env in both(game, config):
        steps = env.run([spender(clock, seconds, play), play])
        runs.append((plain(steps), env.toJSON()["statuses"], env.toJSON()["rewards"]))
    assert runs[0] == runs[1]
    steps, statuses, rewards = runs[0]
    if case == "connectx-exactly-the-bank":
        assert "TIMEOUT" not in statuses
    elif game == "rps":  # Kaggle's rps makes an agent without a sign INVALID, whatever the cause
        assert statuses == ["INVALID", "DONE"] and rewards == [None, 1]
    else:
        assert statuses[0] == "TIMEOUT" and rewards[0] is None
    overages = [step[0]["observation"]["remainingOverageTime"] for step in steps]
    assert overages == sorted(overages, reverse=True) and overages[-1] < overages[0]


def test_overage_decreases_by_the_time_past_act_timeout(clock):
    env = vk.make("connectx")
    env.run([spender(clock, [0, 5, 1, 3.5, 100], lowest_column), lowest_column])
    overage = [s[0].observation.remainingOverageTime for s in env.steps]
    # Agent 0 acts at steps 0, 2, 4, 6, 8 (its overage changes in the step that follows).
    assert overage[:10] == [60, 60, 60, 57, 57, 57, 57, 55.5, 55.5, -42.5]
    assert env.state[0].status == "TIMEOUT" and env.state[1].status == "DONE"
    assert env.steps[-1][1].observation.remainingOverageTime == 60


def test_builtin_agents_time_out_too(clock):
    """Every reading of the clock takes 20 s: each act lasts 20 s, 18 past actTimeout 2."""
    clock.tick = 20.0
    ours, theirs = both("connectx")
    ours.run(["random", "negamax"])
    theirs.run(["random", "negamax"])

    def outcome(env):
        return [(s.status, s.reward, s.observation.remainingOverageTime) for s in env.state]

    assert outcome(ours) == outcome(theirs) == [("TIMEOUT", None, -12), ("DONE", 0, 6)]
    assert len(ours.steps) == len(theirs.steps) == 8
    clock.tick = 0.5
    ours, theirs = both("rps", {"episodeSteps": 6})
    assert plain(ours.run(["rock", "paper"])) == plain(theirs.run(["rock", "paper"]))


def test_run_timeout_raises_deadline_exceeded_as_kaggle(clock):
    clock.tick = 0.5
    ours, theirs = both("rps", {"runTimeout": 10})
    kaggle = reference.kaggle()
    with pytest.raises(kaggle.errors.DeadlineExceeded, match="exceeded the runTimeout of 10"):
        theirs.run(["rock", "paper"])
    with pytest.raises(vk.DeadlineExceeded, match="exceeded the runTimeout of 10") as raised:
        ours.run(["rock", "paper"])
    assert isinstance(raised.value, TimeoutError)
    assert raised.value.toJSON()["status"] == "DEADLINE_EXCEEDED"
    assert len(ours.steps) == len(theirs.steps) > 1
    assert not ours.done


# ---- errors --------------------------------------------------------------------------------------


ERROR_CASES = {
    "reset-three": lambda env: env.reset(3),
    "reset-one": lambda env: env.reset(1),
    "run-one-agent": lambda env: env.run(["random"]),
    "run-one-agent-mid-game": lambda env: (env.step([0, 0]), env.run(["random"])),
    "run-three-agents-mid-game": lambda env: (env.step([0, 0]), env.run(["random"] * 3)),
    "step-one-action": lambda env: env.step([1]),
    "step-no-action": lambda env: env.step([]),
    "step-none": lambda env: env.step(None),
    "step-three-actions": lambda env: env.step([1, 1, 1]),
    "train-two-none": lambda env: env.train([None, None]),
    "train-no-none": lambda env: env.train(["random", "random"]),
    "train-one-seat": lambda env: env.train([None]),
}


@pytest.mark.parametrize("game", ["connectx", "rps"])
@pytest.mark.parametrize("case", sorted(ERROR_CASES))
def test_misuse_raises_kaggles_error(game, case):
    kaggle = reference.kaggle()
    ours, theirs = both(game, {"episodeSteps": 5} if game == "rps" else {})
    with pytest.raises(kaggle.errors.InvalidArgument) as want:
        ERROR_CASES[case](theirs)
    with pytest.raises(vk.InvalidArgument) as got:
        ERROR_CASES[case](ours)
    assert str(got.value) == str(want.value)
    assert isinstance(got.value, ValueError)


@pytest.mark.parametrize("game", ["connectx", "tictactoe", "rps"])
def test_step_after_done_is_failed_precondition(game):
    kaggle = reference.kaggle()
    ours, theirs = both(game, {"episodeSteps": 3})
    for env in (ours, theirs):
        while not env.done:
            env.step([0, 0])
    with pytest.raises(kaggle.errors.FailedPrecondition) as want:
        theirs.step([0, 0])
    with pytest.raises(vk.FailedPrecondition) as got:
        ours.step([0, 0])
    assert str(got.value) == str(want.value) == "Environment done, reset required."
    # run starts a new episode, as Kaggle's does.
    assert len(ours.run([sign(0), sign(0)])) == len(theirs.run([sign(0), sign(0)]))


def test_unknown_agent_name_raises_before_playing():
    env = vk.make("connectx")
    with pytest.raises(vk.InvalidArgument, match="no_such_agent"):
        env.run(["random", "no_such_agent"])
    with pytest.raises(FileNotFoundError):
        env.run(["no_such_agent", "random"])


# ---- train ---------------------------------------------------------------------------------------

TRAIN_CASES = {
    "connectx-first": ("connectx", {}, lambda: [None, lowest_column], [3, 3, 3, 3, 3, 3, 4, 4]),
    "connectx-second": ("connectx", {}, lambda: [lowest_column, None], [3, 3, 3, 3, 3, 3, 4]),
    "connectx-invalid": ("connectx", {}, lambda: [None, lowest_column], [9]),
    "connectx-none-action": ("connectx", {}, lambda: [None, one_column(6)], [None] * 8),
    "tictactoe-second": ("tictactoe", {}, lambda: [first_open_cell, None], [4, 8, 2, 6]),
    "rps-first": ("rps", {"episodeSteps": 6}, lambda: [None, sign(0)], [1, 2, 0, 1, 1]),
    "rps-second": ("rps", {"episodeSteps": 6}, lambda: [sign(1), None], [1, 2, 0]),
    "rps-invalid": ("rps", {"episodeSteps": 6}, lambda: [None, cycle], [1, 7]),
    "rps-builtin": ("rps", {"episodeSteps": 5}, lambda: ["paper", None], [2, 2, 2, 2]),
}


@pytest.mark.parametrize("case", sorted(TRAIN_CASES))
def test_train_matches_kaggle(clock, case):
    game, config, agents, moves = TRAIN_CASES[case]
    runs = []
    for env in both(game, config, debug=True):
        trainer = env.train(agents())
        out = [dict(trainer.reset())]
        for move in moves:
            observation, reward, done, info = trainer.step(move)
            out.append((dict(observation), reward, done, dict(info)))
            if done:
                break
        out.append(dict(trainer.reset()))  # a new episode, back at the trained seat's turn
        runs.append(out)
    assert runs[0] == runs[1]
    assert len(runs[0]) >= 3


@pytest.mark.parametrize("agents", [[None, "negamax"], ["random", None]])
def test_train_observation_carries_the_shared_fields(agents):
    env = vk.make("connectx")
    trainer = env.train(agents)
    seat = agents.index(None)
    observation = trainer.reset()
    assert observation.mark == seat + 1
    assert len(observation.board) == 42
    assert sum(1 for v in observation.board if v) == seat  # the opponent moved first as seat 0
    assert observation.step == seat
    observation, reward, done, info = trainer.step(lowest_column(observation, env.configuration))
    assert (reward, done) == (0, False)
    assert observation.step == seat + 2
    assert sum(1 for v in observation.board if v) == seat + 2


# ---- evaluate ------------------------------------------------------------------------------------


def test_evaluate_returns_final_rewards_per_episode():
    config = {"episodeSteps": 10, "tieRewardThreshold": 3}
    got = vk.evaluate("rps", ["rock", "paper"], config, num_episodes=3)
    want = reference.kaggle().evaluate("rps", ["rock", "paper"], config, num_episodes=3)
    assert got == want == [[-9, 9]] * 3
    assert vk.evaluate("rps", ["rock", "rock"], {"episodeSteps": 4}) == [[0, 0]]
    random.seed(3)
    rewards = vk.evaluate("connectx", ["negamax", "random"], num_episodes=4)
    assert len(rewards) == 4
    assert all(pair in ([1, -1], [-1, 1], [0, 0]) for pair in rewards)
    assert vk.evaluate("tictactoe", [first_open_cell, sign(0)]) == [[0, None]]


# ---- make ----------------------------------------------------------------------------------------


def test_make_unknown_environment():
    for name in ("nope", "cartpole", 3, None):
        with pytest.raises(vk.InvalidArgument, match="Unknown Environment Specification"):
            vk.make(name)


BAD_CONFIGURATIONS = [
    ("connectx", {"rows": "6"}),
    ("connectx", {"rows": 0}),
    ("connectx", {"rows": True}),
    ("connectx", {"columns": 2.5}),
    ("connectx", {"episodeSteps": 0}),
    ("connectx", {"actTimeout": -1}),
    ("connectx", {"runTimeout": "long"}),
    ("rps", {"signs": 6}),
    ("rps", {"signs": 2}),
    ("rps", {"tieRewardThreshold": 1001}),
    ("rps", {"episodeSteps": 1}),
    ("tictactoe", {"episodeSteps": 1.5}),
    ("tictactoe", {"agentTimeout": -2}),
]


@pytest.mark.parametrize("game,config", BAD_CONFIGURATIONS)
def test_make_refuses_a_configuration_kaggle_refuses(game, config):
    kaggle = reference.kaggle()
    with pytest.raises(kaggle.errors.InvalidArgument, match="Configuration Invalid"):
        reference.make(game, configuration=config)
    with pytest.raises(vk.InvalidArgument, match="Configuration Invalid") as raised:
        vk.make(game, configuration=config)
    assert next(iter(config)) in str(raised.value)


@pytest.mark.parametrize("config", [[1], "rows=5", 7])
def test_make_refuses_a_configuration_that_is_no_object(config):
    with pytest.raises(vk.InvalidArgument, match="Configuration Invalid"):
        vk.make("connectx", configuration=config)


def test_make_refuses_numbers_past_the_engines_range():
    with pytest.raises(vk.InvalidArgument, match="Configuration Invalid"):
        vk.make("connectx", configuration={"inarow": 10**30})


def test_make_keeps_unknown_keys_and_fills_defaults_as_kaggle():
    config = {"rows": 5, "mine": {"a": [1, 2]}, "episodeSteps": None}
    ours = vk.make("connectx", configuration=copy.deepcopy(config))
    theirs = reference.make("connectx", configuration=copy.deepcopy(config))
    assert dict(ours.configuration) == dict(theirs.configuration)
    assert ours.configuration.mine == {"a": [1, 2]}
    assert ours.configuration.episodeSteps == 1000
    assert ours.toJSON()["configuration"] == theirs.toJSON()["configuration"]


def _history(game, actions, config=None):
    env = vk.make(game, configuration=config, debug=True)
    for pair in actions:
        env.step(pair)
    return env


def test_make_from_steps_keeps_the_banked_overage(clock):
    env = vk.make("connectx")
    env.run([spender(clock, [0, 30, 0, 0], lowest_column), lowest_column])
    history = env.toJSON()["steps"][:6]
    assert history[-1][0]["observation"]["remainingOverageTime"] == 32
    restored = vk.make("connectx", steps=history)
    assert plain(restored.steps) == plain(history)
    # The bank goes on from there: 33 s at actTimeout 2 take 31 of its 32 s.
    restored.step([0, 0], [{"duration": 33}, {}])
    assert restored.state[0].observation.remainingOverageTime == 1


def test_clone_goes_on_as_the_original():
    env = _history("connectx", [[3, 0], [0, 4]])
    twin = env.clone()
    assert plain(twin.steps) == plain(env.steps)
    for e in (env, twin):
        e.step([5, 0])
    assert plain(twin.steps) == plain(env.steps)
    assert twin.id != env.id


# ---- toJSON and render ---------------------------------------------------------------------------

EPISODES = {
    "connectx": ("connectx", [[3, 0], [0, 4], [3, 0], [0, 4], [3, 0], [0, 4], [3, 0]]),
    "connectx-invalid": ("connectx", [[3, 0], [0, 9]]),
    "tictactoe": ("tictactoe", [[4, 0], [0, 0], [2, 0], [0, 8], [6, 0]]),
    "tictactoe-unfinished": ("tictactoe", [[4, 0], [0, 1]]),
    "rps": ("rps", [[0, 1], [2, 2], [1, "x"]]),
}


@pytest.mark.parametrize("case", sorted(EPISODES))
def test_to_json_has_kaggles_keys_and_values(case):
    game, actions = EPISODES[case]
    ours, theirs = both(game, debug=True)
    for pair in actions:
        ours.step(list(pair))
        theirs.step(list(pair))
    mine, want = ours.toJSON(), theirs.toJSON()
    assert sorted(mine) == sorted(want)
    for key in ("name", "title", "version", "schema_version", "info", "statuses", "rewards"):
        assert mine[key] == want[key], key
    assert mine["specification"] == want["specification"]
    assert mine["configuration"] == want["configuration"]
    assert sorted(mine["steps"][0][0]) == sorted(want["steps"][0][0])
    assert plain(mine["steps"]) == plain(want["steps"])
    assert isinstance(mine["description"], str) and mine["description"]
    assert isinstance(mine["id"], str) and mine["id"] != want["id"]
    # A copy: changing it leaves the environment alone.
    mine["steps"][0][0]["status"] = "changed"
    assert ours.steps[0][0].status != "changed"
    parsed = json.loads(ours.render(mode="json"))
    assert parsed == json.loads(json.dumps(ours.toJSON()))


@pytest.mark.parametrize(
    "case", ["connectx", "connectx-invalid", "tictactoe", "tictactoe-unfinished"]
)
def test_ansi_is_kaggles_text(case, capsys):
    game, actions = EPISODES[case]
    ours, theirs = both(game, debug=True)
    assert ours.render(mode="ansi") == theirs.render(mode="ansi")
    for pair in actions:
        ours.step(list(pair))
        theirs.step(list(pair))
        assert ours.render(mode="ansi") == theirs.render(mode="ansi")
    capsys.readouterr()
    assert ours.render() is None
    assert capsys.readouterr().out == ours.render(mode="ansi") + "\n"


def test_rps_ansi_tells_every_round_and_the_score():
    env = vk.make("rps", configuration={"episodeSteps": 3})
    assert env.render(mode="ansi") == "Game ended on round 0, final score: 0 to 0\n"
    env.step([0, 1])
    assert env.render(mode="ansi") == (
        "Round 1: Rock vs Paper, Score: -1.0 to 1.0\n"
        "Game ended on round 1, final score: -1.0 to -1.0\n"
    )
    env.step([2, 2])  # the last round: a score under tieRewardThreshold is a tie
    assert env.render(mode="ansi") == (
        "Round 1: Rock vs Paper, Score: -1.0 to 1.0\n"
        "Round 2: Scissors vs Scissors, Score: 0 to 0\n"
        "Game ended on round 2, final score: 0 to 0\n"
    )


def test_unknown_render_mode_raises():
    with pytest.raises(vk.InvalidArgument, match="Available render modes"):
        vk.make("connectx").render(mode="svg")


def test_html_render_shows_the_final_board(open_page):
    # A board other than the default (the page draws the configuration's), one this file's runs
    # already compiled (each board shape is a record type of its own).
    env = vk.make("connectx", configuration={"rows": 5, "columns": 4, "inarow": 3})
    for column in [0, 0, 1, 1, 2]:
        env.step([column, column])
    page = env.render(mode="html")
    assert "window.kaggle" in page and "vecenvReplay" in page
    # Kaggle's default for a finished episode: play it from the start, here at full speed.
    opened = open_page(env.render(mode="html", speed=0))
    last = len(env.steps) - 1
    opened.page.wait_for_selector(f'body[data-step="{last}"]', state="attached")
    opened.page.wait_for_function("!window.vecenvReplay.playing")
    state = opened.state()
    assert state["numSteps"] == len(env.steps)
    assert "Player 1 (red) wins" in state["status"]
    board = env.state[0].observation.board
    replay._assert_grid_colours(opened, state, board, 5, 4, replay.CONNECTX_FILLS)
    assert opened.requests == []


def test_html_render_of_a_running_game_shows_its_last_step(open_page):
    env = vk.make("tictactoe")
    for cell in [4, 0, 2]:
        env.step([cell, cell])
    opened = open_page(env.render(mode="html"))
    opened.page.wait_for_selector('body[data-step="3"]', state="attached")
    state = opened.state()
    assert state["status"] == "Player 2 (O) to move"
    replay._assert_grid_colours(
        opened, state, env.state[0].observation.board, 3, 3, replay.TICTACTOE_FILLS
    )


def test_ipython_render_displays_an_iframe(monkeypatch):
    """IPython's ``display`` (a stand-in module here) gets an iframe holding the page."""
    shown = []
    ipython = types.ModuleType("IPython")
    display = types.ModuleType("IPython.display")
    display.HTML = lambda data: ("HTML", data)
    display.display = shown.append
    ipython.display = display
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", display)
    env = vk.make("rps", configuration={"episodeSteps": 3})
    env.run(["rock", "paper"])
    assert env.render(mode="ipython", width=400) is None
    assert len(shown) == 1 and shown[0][0] == "HTML"
    frame = shown[0][1]
    assert frame.startswith('<iframe srcdoc="') and 'width="400" height="300"' in frame
    assert (
        "vecenvReplay" in frame
        and '"' not in frame[len('<iframe srcdoc="') : frame.index('" width')]
    )


# ---- Struct --------------------------------------------------------------------------------------


def test_struct_behaves_as_kaggles():
    reference.kaggle()
    from kaggle_environments import utils

    def exercise(Struct, structify):
        s = Struct(a=1, items=[1], b={"c": 2})
        out = [dict(s), s.a, "items" in s, isinstance(s, dict), json.dumps(s, sort_keys=True)]
        s.d = 4
        out.append((s["d"], s.d))
        s["e"] = 5
        out.append(hasattr(s, "e"))
        nested = structify({"x": [{"y": 1}, 2], "items": 3, "z": {"w": None}})
        out += [nested.x[0].y, type(nested.z).__name__, "items" in nested, nested.z.w]
        source = {"l": [1, [2]]}
        copied = structify(source)
        copied.l[1].append(3)
        out.append(source)
        deep = copy.deepcopy(nested)
        out += [deep == nested, deep.x[0].y]
        out.append(structify(5))
        return out

    assert exercise(vk.Struct, vk.structify) == exercise(utils.Struct, utils.structify)
