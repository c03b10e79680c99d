"""Pendulum frames: the same scene and proportions as gymnasium's renderer, drawn with numpy."""

import math

import numpy as np

from vecenv.render import draw

from .rules import MAX_TORQUE

SIZE = 500
BOUND = 2.2
SCALE = SIZE / (BOUND * 2)
OFFSET = SIZE // 2
ROD_LENGTH = 1 * SCALE
ROD_WIDTH = 0.2 * SCALE
ROD = (204, 77, 77)


def _dot(img, x, y, radius, color):
    """A filled circle centred on pixel (x, y) of a y-up surface, as gfxdraw's after the flip."""
    draw.circle(img, int(x) + 0.5, SIZE - int(y) - 0.5, radius, color)


def _torque_arrow(img, u):
    """gymnasium's clockwise.png, scaled with |u| and mirrored for a positive torque."""
    size = int(SCALE * abs(u) / 2)
    if size < 2:
        return
    cx = cy = float(OFFSET)
    radius = 0.47 * size
    sign = -1.0 if u > 0 else 1.0
    # In image rows (y down): from the top, clockwise round the right, to just above the left.
    angles = np.radians(np.linspace(-90.0, 185.0, 48))
    arc = [(cx + sign * radius * math.cos(a), cy + radius * math.sin(a)) for a in angles]
    draw.polyline(img, arc, draw.BLACK, width=max(0.035 * size, 1.0))
    end = angles[-1]
    tx, ty = -sign * math.sin(end), math.cos(end)  # the direction of travel at the end
    nx, ny = -ty, tx
    x0, y0 = arc[-1]
    head_len, head_half = 0.15 * size, 0.065 * size
    tip = (x0 + tx * head_len * 0.6, y0 + ty * head_len * 0.6)
    back = (x0 - tx * head_len * 0.4, y0 - ty * head_len * 0.4)
    draw.polygon(
        img,
        [
            tip,
            (back[0] + nx * head_half, back[1] + ny * head_half),
            (back[0] - nx * head_half, back[1] - ny * head_half),
        ],
        draw.BLACK,
    )


def rgb_array(state, config):
    img = draw.canvas(SIZE, SIZE)
    angle = float(state["theta"]) + np.pi / 2
    l, r, t, b = 0.0, ROD_LENGTH, ROD_WIDTH / 2, -ROD_WIDTH / 2
    rod = draw.rotate([(l, b), (l, t), (r, t), (r, b)], angle, OFFSET, OFFSET)
    draw.polygon(img, draw.flip_y(rod, SIZE), ROD)
    _dot(img, OFFSET, OFFSET, int(ROD_WIDTH / 2), ROD)
    ((end_x, end_y),) = draw.rotate([(ROD_LENGTH, 0.0)], angle, OFFSET, OFFSET)
    _dot(img, end_x, end_y, int(ROD_WIDTH / 2), ROD)
    _torque_arrow(img, float(np.clip(state["last_u"], -MAX_TORQUE, MAX_TORQUE)))
    _dot(img, OFFSET, OFFSET, int(0.05 * SCALE), draw.BLACK)
    return img


def ansi(state, config):
    """One line: the angle from upright (degrees), angular velocity and last torque."""
    theta = (float(state["theta"]) + math.pi) % (2 * math.pi) - math.pi
    return (
        f"theta={math.degrees(theta):+7.2f}deg theta_dot={float(state['theta_dot']):+.3f} "
        f"torque={float(state['last_u']):+.3f} step={int(state['step'])}"
    )
