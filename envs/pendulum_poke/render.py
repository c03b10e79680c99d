"""Pendulum Poke frames: csuite's pendulum picture plus a red arrow for the last action's poke,
near the top left (pointing left) for a positive poke, near the top right (pointing right) for a
negative one."""

from vecenv.envs.csuite_pendulum.render import (
    ARROW_WIDTH,
    RED,
    ROD_WIDTH,
    SIZE,
    TIP_RADIUS,
    pendulum_frame,
    regular_polygon,
    wide_line,
)
from vecenv.envs.csuite_pendulum.render import ansi as pendulum_ansi


def rgb_array(state, config):
    img = pendulum_frame(state)
    direction = int(state["perturb_direction"])
    y = SIZE // 8
    if direction == 1:
        x = SIZE // 4
        wide_line(img, x - TIP_RADIUS, y, x + TIP_RADIUS, y, RED, ROD_WIDTH)
        regular_polygon(img, x - TIP_RADIUS, y, ARROW_WIDTH * 1.2, 3, 90, RED)
    elif direction == -1:
        x = SIZE * 3 // 4
        wide_line(img, x - TIP_RADIUS, y, x + TIP_RADIUS, y, RED, ROD_WIDTH)
        regular_polygon(img, x + TIP_RADIUS, y, ARROW_WIDTH * 1.2, 3, 270, RED)
    return img


def ansi(state, config):
    """The pendulum's line and the last poke (+1, -1 or 0)."""
    return f"{pendulum_ansi(state, config)} poke={int(state['perturb_direction']):+d}"
