"""Acrobot frames: the same scene and proportions as gymnasium's renderer, drawn with numpy."""

import math

from vecenv.render import draw

from .rules import LINK_LENGTH_1, LINK_LENGTH_2

SIZE = 500
BOUND = LINK_LENGTH_1 + LINK_LENGTH_2 + 0.2  # world units from the pivot to the frame's edge
SCALE = SIZE / (BOUND * 2)
OFFSET = SIZE / 2
LINK_COLOR = (0, 204, 204)
JOINT_COLOR = (204, 204, 0)
JOINT_RADIUS = int(0.1 * SCALE)


def rgb_array(state, config):
    # Points are in gymnasium's surface coordinates, which it flips upside down at the end.
    img = draw.canvas(SIZE, SIZE)
    theta1, theta2 = float(state["theta1"]), float(state["theta2"])
    # The target line, one link length above the pivot.
    img[SIZE - 1 - int(1 * SCALE + OFFSET)] = draw.BLACK
    elbow = (LINK_LENGTH_1 * math.sin(theta1) * SCALE, -LINK_LENGTH_1 * math.cos(theta1) * SCALE)
    links = [
        ((0.0, 0.0), theta1 - math.pi / 2, LINK_LENGTH_1 * SCALE),
        (elbow, theta1 + theta2 - math.pi / 2, LINK_LENGTH_2 * SCALE),
    ]
    for (x, y), angle, length in links:
        x, y = x + OFFSET, y + OFFSET
        half = 0.1 * SCALE
        rect = [(0.0, -half), (0.0, half), (length, half), (length, -half)]
        draw.polygon(img, draw.flip_y(draw.rotate(rect, angle, x, y), SIZE), LINK_COLOR)
        # gymnasium centres joints on whole pixels; +0.5 is that pixel's centre after the flip.
        draw.circle(img, int(x) + 0.5, SIZE - int(y) - 0.5, JOINT_RADIUS, JOINT_COLOR)
    return img


def ansi(state, config):
    """One line: both angles, both velocities, the tip's height over the pivot and the step."""
    theta1, theta2 = float(state["theta1"]), float(state["theta2"])
    height = -math.cos(theta1) - math.cos(theta1 + theta2)
    return (
        f"theta1={theta1:+.3f} theta2={theta2:+.3f} dtheta1={float(state['dtheta1']):+.3f} "
        f"dtheta2={float(state['dtheta2']):+.3f} tip={height:+.3f}/1.000 "
        f"step={int(state['step'])}"
    )
