"""CartPole frames: the same scene and proportions as gymnasium's renderer, drawn with numpy."""

import numpy as np

from vecenv.render import draw

from .rules import LENGTH, X_THRESHOLD

WIDTH, HEIGHT = 600, 400
SCALE = WIDTH / (X_THRESHOLD * 2)
POLE_WIDTH = 10.0
POLE_LEN = SCALE * (2 * LENGTH)
CART_W, CART_H = 50.0, 30.0
CART_Y = 100.0  # the track's height above the bottom edge


def rgb_array(state, config):
    img = draw.canvas(WIDTH, HEIGHT)
    cart_x = float(state["x"]) * SCALE + WIDTH / 2.0
    l, r, t, b = -CART_W / 2, CART_W / 2, CART_H / 2, -CART_H / 2
    cart = [(cart_x + x, CART_Y + y) for x, y in [(l, b), (l, t), (r, t), (r, b)]]
    draw.polygon(img, draw.flip_y(cart, HEIGHT), draw.BLACK)
    axle = CART_Y + CART_H / 4.0
    l, r, t, b = -POLE_WIDTH / 2, POLE_WIDTH / 2, POLE_LEN - POLE_WIDTH / 2, -POLE_WIDTH / 2
    pole = draw.rotate([(l, b), (l, t), (r, t), (r, b)], -float(state["theta"]), cart_x, axle)
    draw.polygon(img, draw.flip_y(pole, HEIGHT), (202, 152, 101))
    draw.circle(img, cart_x, HEIGHT - axle, POLE_WIDTH / 2, (129, 132, 203))
    img[HEIGHT - int(CART_Y)] = draw.BLACK
    return img


def ansi(state, config):
    """One line: a 41-cell track with the cart, and the pole's lean as an arrow."""
    cells = 41
    pos = int(
        np.clip(
            round((float(state["x"]) + X_THRESHOLD) / (2 * X_THRESHOLD) * (cells - 1)), 0, cells - 1
        )
    )
    track = ["-"] * cells
    theta = float(state["theta"])
    track[pos] = "/" if theta < -0.02 else "\\" if theta > 0.02 else "|"
    return (
        f"[{''.join(track)}] x={float(state['x']):+.3f} theta={theta:+.3f} "
        f"step={int(state['step'])}"
    )
