"""Rock Paper Scissors frames: the last round's two signs and the score.

``ansi`` writes a line in the manner of Kaggle's renderer (the round, both signs, both rewards) and,
once the match is over, how it ended. ``rgb_array`` draws agent 0's sign on the left and agent 1's
on the right as coloured squares (the colours of the replay's), each over a strip telling its
status: white while the match runs, green for the winner, grey for a tie or a loss, red for an
agent that failed (ERROR, INVALID or TIMEOUT).
"""

import numpy as np

from vecenv.kernels.turns import ACTIVE, STATUS_NAMES, failed

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

SQUARE = 24
MARGIN = 4
STRIP = 4


def _reward(state, k):
    """Agent ``k``'s reward as Kaggle reports it: None for a failed agent."""
    if failed(int(state["status"][k])):
        return None
    value = float(state["reward"][k])
    return int(value) if value.is_integer() else value


def ansi(state, config):
    signs = [int(x) for x in state["sign"]]
    rewards = [_reward(state, k) for k in range(2)]
    round_ = int(state["step"])
    if signs[0] == NO_SIGN:
        played = "no signs shown yet"
    else:
        played = f"{SIGN_NAMES[signs[0]]} vs {SIGN_NAMES[signs[1]]}"
    lines = [f"Round {round_}: {played}, Score: {rewards[0]} to {rewards[1]}"]
    statuses = [int(x) for x in state["status"]]
    if all(code != ACTIVE for code in statuses):
        names = " and ".join(STATUS_NAMES[code] for code in statuses)
        lines.append(
            f"Game ended on round {round_}, final score: {rewards[0]} to {rewards[1]} ({names})"
        )
    return "\n".join(lines)


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
