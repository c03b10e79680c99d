"""MountainCar frames: the same scene and proportions as gymnasium's renderer, drawn with numpy."""

import math

import numpy as np

from vecenv.render import draw

from .rules import GOAL_POSITION, MAX_POSITION, MIN_POSITION

WIDTH, HEIGHT = 600, 400
SCALE = WIDTH / (MAX_POSITION - MIN_POSITION)
CAR_W, CAR_H = 40.0, 20.0
CLEARANCE = 10.0
WHEEL_RADIUS = int(CAR_H / 2.5)
GREY = (128, 128, 128)
FLAG = (204, 204, 0)


def height(x):
    return np.sin(3 * x) * 0.45 + 0.55


def scene(position, goal_position):
    """The valley, the car at ``position`` and the flag at ``goal_position``."""
    img = draw.canvas(WIDTH, HEIGHT)
    xs = np.linspace(MIN_POSITION, MAX_POSITION, 100)
    track = list(zip((xs - MIN_POSITION) * SCALE, height(xs) * SCALE, strict=True))
    draw.polyline(img, draw.flip_y(track, HEIGHT), draw.BLACK)

    # The car tilts by cos(3x) radians, gymnasium's approximation of the slope.
    angle = math.cos(3 * position)
    base_x = (position - MIN_POSITION) * SCALE
    base_y = CLEARANCE + float(height(position)) * SCALE
    l, r, t, b = -CAR_W / 2, CAR_W / 2, CAR_H, 0.0
    body = draw.rotate([(l, b), (l, t), (r, t), (r, b)], angle, base_x, base_y)
    draw.polygon(img, draw.flip_y(body, HEIGHT), draw.BLACK)
    for wx, wy in draw.rotate([(CAR_W / 4, 0.0), (-CAR_W / 4, 0.0)], angle, base_x, base_y):
        draw.circle(img, int(wx) + 0.5, HEIGHT - int(wy) - 0.5, WHEEL_RADIUS, GREY)

    flag_x = int((goal_position - MIN_POSITION) * SCALE)
    flag_y1 = int(height(goal_position) * SCALE)
    flag_y2 = flag_y1 + 50
    top, bottom = max(HEIGHT - 1 - flag_y2, 0), min(HEIGHT - flag_y1, HEIGHT)
    if 0 <= flag_x < WIDTH and top < bottom:
        img[top:bottom, flag_x] = draw.BLACK
    pennant = [(flag_x, flag_y2), (flag_x, flag_y2 - 10), (flag_x + 25, flag_y2 - 5)]
    draw.polygon(img, draw.flip_y(pennant, HEIGHT), FLAG)
    return img


def rgb_array(state, config):
    return scene(float(state["position"]), GOAL_POSITION)


def track_line(position, goal_position, cells=41):
    """A text track from MIN_POSITION to MAX_POSITION with the flag (F) and the car (o)."""
    span = MAX_POSITION - MIN_POSITION

    def cell(x):
        return int(np.clip(round((x - MIN_POSITION) / span * (cells - 1)), 0, cells - 1))

    track = ["_"] * cells
    track[cell(goal_position)] = "F"
    track[cell(position)] = "o"
    return "".join(track)


def ansi(state, config):
    position, velocity = float(state["position"]), float(state["velocity"])
    return (
        f"[{track_line(position, GOAL_POSITION)}] position={position:+.4f} "
        f"velocity={velocity:+.5f} step={int(state['step'])}"
    )
