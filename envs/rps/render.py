"""Rock Paper Scissors frames: the rounds' signs and the score.

``ansi_episode`` writes the Kaggle face's text as Kaggle's renderer writes it from the steps: a line
per round played and one telling how it ended. ``ansi`` writes one record's line in that manner
(the last round's signs, both rewards) and, once the match is over, how it ended. ``rgb_array``
draws agent 0's sign on the left and agent 1's on the right as coloured squares (the colours of the
replay's), each over a strip telling its status: white while the match runs, green for the winner,
grey for a tie or a loss, red for an agent that failed (ERROR, INVALID or TIMEOUT).
"""

import numpy as np

from vecenv.kernels.turns import ACTIVE, ERROR, INVALID, STATUS_NAMES, TIMEOUT, failed

from .rules import NO_SIGN

SIGN_NAMES = ("Rock", "Paper", "Scissors", "Spock", "Lizard")
SIGN_COLOURS = (
    (0x79, 0x55, 0x48),
    (0xFA, 0xFA, 0xFA),
    (0x9E, 0x9E, 0x9E),
    (0x39, 0x49, 0xAB),
    (0x43, 0xA0, 0x47),
)
BACKGROUND = (0x26, 0x32, 0x38)
NO_SIGN_COLOUR = (0x37, 0x47, 0x4F)
RUNNING, WINNER, OTHER, FAILED = (
    (255, 255, 255),
    (0x43, 0xA0, 0x47),
    (0x75, 0x75, 0x75),
    (0xE5, 0x39, 0x35),
)

FAILED_NAMES = {STATUS_NAMES[code] for code in (ERROR, INVALID, TIMEOUT)}

SQUARE = 24
MARGIN = 4
STRIP = 4


def _reward(state, k):
    """Agent ``k``'s reward as Kaggle reports it: None for a failed agent."""
    if failed(int(state["status"][k])):
        return None
    value = float(state["reward"][k])
    return int(value) if value.is_integer() else value


def _round_line(round_, signs, rewards):
    """``Round i: Left vs Right, Score: a to b``; ``signs`` is None where no sign was shown."""
    if signs is None:
        played = "no signs shown"
    else:
        played = f"{SIGN_NAMES[signs[0]]} vs {SIGN_NAMES[signs[1]]}"
    return f"Round {round_}: {played}, Score: {rewards[0]} to {rewards[1]}"


def _ended_line(round_, first, second):
    return f"Game ended on round {round_}, final score: {first} to {second}"


def ansi(state, config):
    signs = [int(x) for x in state["sign"]]
    rewards = [_reward(state, k) for k in range(2)]
    round_ = int(state["step"])
    lines = [_round_line(round_, None if signs[0] == NO_SIGN else signs, rewards)]
    statuses = [int(x) for x in state["status"]]
    if all(code != ACTIVE for code in statuses):
        names = " and ".join(STATUS_NAMES[code] for code in statuses)
        lines.append(f"{_ended_line(round_, *rewards)} ({names})")
    return "\n".join(lines)


def _kaggle_reward(value, floats):
    """A state's reward as the Python value Kaggle's state would hold."""
    return float(value) if floats and value is not None else value


def ansi_episode(steps, config):
    """Kaggle's rps text for the steps so far: ``Round i: ...`` for every round after the reset,
    then ``Game ended on round n, final score: r to r`` (agent 0's reward twice, as Kaggle writes
    it), each line ending in a newline, the last one written while the match runs too.

    The states hold integral rewards as ints; Kaggle's are the Python values its interpreter left:
    a float from the first decisive round on (it adds ``math.copysign(1, delta)``), an int while
    every round tied, and the ints it sets when a round is not scored (an agent without a valid
    action) or when the final score is within ``tieRewardThreshold`` (both 0). Where Kaggle's
    renderer raises (a first round without two valid actions leaves no ``lastOpponentAction``),
    the round reads "no signs shown".
    """
    lines = []
    decided = False  # a round has had a winner: Kaggle's running rewards are floats
    last = steps[0][0]["reward"]  # agent 0's, as the final line writes it
    for i in range(1, len(steps)):
        state = steps[i]
        # Each agent observes the other's sign; an unscored round leaves the last round's.
        signs = [state[1]["observation"].get("lastOpponentAction")]
        signs.append(state[0]["observation"].get("lastOpponentAction"))
        statuses = [agent["status"] for agent in state]
        scored = not FAILED_NAMES.intersection(statuses)
        floats = False
        if scored:
            decided = decided or signs[0] != signs[1]
            final = "ACTIVE" not in statuses
            score = state[0]["observation"]["reward"]  # agent 0's, before any tie rule
            floats = decided and not (final and abs(score) < config["tieRewardThreshold"])
        rewards = [_kaggle_reward(agent["reward"], floats) for agent in state]
        lines.append(_round_line(i, None if None in signs else signs, rewards))
        last = rewards[0]
    lines.append(_ended_line(len(steps) - 1, last, last))
    return "".join(line + "\n" for line in lines)


def _strip_colour(state, k):
    status = int(state["status"][k])
    if failed(status):
        return FAILED
    if status == ACTIVE:
        return RUNNING
    other = 1 - k
    if failed(int(state["status"][other])) or state["reward"][k] > state["reward"][other]:
        return WINNER
    return OTHER


def rgb_array(state, config):
    height = 2 * MARGIN + SQUARE + STRIP + MARGIN
    width = 3 * MARGIN + 2 * SQUARE
    frame = np.empty((height, width, 3), dtype=np.uint8)
    frame[:, :] = BACKGROUND
    for k in range(2):
        sign = int(state["sign"][k])
        left = MARGIN + k * (SQUARE + MARGIN)
        colour = NO_SIGN_COLOUR if sign == NO_SIGN else SIGN_COLOURS[sign]
        frame[MARGIN : MARGIN + SQUARE, left : left + SQUARE] = colour
        top = 2 * MARGIN + SQUARE
        frame[top : top + STRIP, left : left + SQUARE] = _strip_colour(state, k)
    return frame
