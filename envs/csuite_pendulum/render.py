"""CSuite pendulum frames: csuite's picture, drawn with numpy.

A 256 x 256 frame centred on the pivot: the reward region shaded as a light green sector at the
top, the rod in black with a red tip (hanging down at angle 0), and a blue arc with an arrow head on
the right (torque +1) or the left (torque -1). Coordinates follow PIL's, where pixel (i, j) is the
point (i, j) and angles run clockwise from 3 o'clock.
"""

import math

import numpy as np

from vecenv.render import draw

from .rules import REWARD_ANGLE

SIZE = 256
CENTER = SIZE // 2 - 1
SCALE = 0.75
ROD_WIDTH = SIZE // 64
TIP_RADIUS = SIZE // 24
ARROW_WIDTH = SIZE // 44
TORQUE_ANGLE = 20
LIGHT_GREEN = (0xD4, 0xFF, 0xD6)
RED = (255, 0, 0)
BLUE = (0, 0, 255)


def to_pixel(x, y):
    """Pixel coordinates of a point given relative to the pivot, in units of the rod."""
    return x * SCALE * CENTER + CENTER, y * SCALE * CENTER + CENTER


_YY, _XX = np.mgrid[0:SIZE, 0:SIZE].astype(np.float64)


def _box(x0, y0, x1, y1):
    """A bounding box as PIL takes it: corners truncated to whole pixels, both included."""
    return int(x0), int(y0), int(x1), int(y1)


def _sector_mask(box, width, start, end):
    """Pixels of the circle inscribed in ``box`` between the rays at ``start`` and ``end`` degrees
    (clockwise from 3 o'clock, less than a half turn apart); with ``width``, only a band that
    wide inside the rim."""
    x0, y0, x1, y1 = _box(*box)
    cx, cy, radius = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2
    dist = np.hypot(_XX - cx, _YY - cy)
    mask = dist <= radius + 0.5
    if width:
        mask &= dist > radius + 0.5 - width
    wedge = np.zeros((SIZE, SIZE), dtype=np.bool_)
    far = 2 * radius
    rays = [math.radians(start), math.radians((start + end) / 2), math.radians(end)]
    _convex(
        wedge, [(cx, cy)] + [(cx + far * math.cos(a), cy + far * math.sin(a)) for a in rays], True
    )
    return mask & wedge


def _convex(img, points, color):
    """Fill a convex polygon row by row: in each pixel row, from the nearest pixel to the leftmost
    crossing of its edges to the nearest to the rightmost, as PIL's scanline fill does."""
    pts = [(float(x), float(y)) for x, y in points]
    y_lo = max(math.ceil(min(y for _, y in pts)), 0)
    y_hi = min(math.floor(max(y for _, y in pts)), SIZE - 1)
    edges = list(zip(pts, pts[1:] + pts[:1], strict=True))
    for row in range(y_lo, y_hi + 1):
        xs = []
        for (ax, ay), (bx, by) in edges:
            if min(ay, by) <= row <= max(ay, by):
                if ay == by:
                    xs += [ax, bx]
                else:
                    xs.append(ax + (row - ay) * (bx - ax) / (by - ay))
        if xs:
            left = max(math.floor(min(xs) + 0.5), 0)
            right = min(math.floor(max(xs) + 0.5), SIZE - 1)
            if left <= right:
                img[row, left : right + 1] = color


def ellipse(img, x0, y0, x1, y1, color):
    x0, y0, x1, y1 = _box(x0, y0, x1, y1)
    draw.circle(img, (x0 + x1 + 1) / 2, (y0 + y1 + 1) / 2, (x1 - x0 + 1) / 2, color)


def _round_half_up(f):
    """The nearest whole number, halves away from zero."""
    return int(math.floor(f + 0.5)) if f >= 0 else -int(math.floor(-f + 0.5))


def _round_half_down(f):
    """The nearest whole number, halves towards zero."""
    return int(math.ceil(f - 0.5)) if f >= 0 else -int(math.ceil(-f - 0.5))


def wide_line(img, x0, y0, x1, y1, color, width):
    """A segment ``width`` pixels wide between whole-pixel ends, as PIL draws one."""
    x0, y0, x1, y1 = _box(x0, y0, x1, y1)
    dx, dy = x1 - x0, y1 - y0
    length = math.hypot(dx, dy)
    if length == 0:
        img[y0, x0] = color
        return
    half = (width - 1) / 2.0
    big, small = _round_half_up(half) / length, _round_half_down(half) / length
    dxmin, dxmax = _round_half_down(small * dy), _round_half_down(big * dy)
    dymin, dymax = _round_half_down(small * dx), _round_half_down(big * dx)
    _convex(
        img,
        [
            (x0 - dxmin, y0 + dymax),
            (x1 - dxmin, y1 + dymax),
            (x1 + dxmax, y1 - dymin),
            (x0 + dxmax, y0 - dymin),
        ],
        color,
    )


def regular_polygon(img, cx, cy, radius, sides, rotation, color):
    """PIL's regular polygon: a vertex at the top for rotation 0, turned counter-clockwise."""
    step = 360.0 / sides
    angles = [math.radians(270.0 - step / 2 + rotation + k * step) for k in range(sides)]
    # PIL rounds the vertices to hundredths and fills from whole-pixel (truncated) corners.
    points = [(cx + radius * math.cos(a), cy - radius * math.sin(a)) for a in angles]
    _convex(img, [(int(round(x, 2)), int(round(y, 2))) for x, y in points], color)


def pendulum_frame(state):
    img = draw.canvas(SIZE, SIZE)
    margin = CENTER * (1 - SCALE)
    box = (margin, margin, SIZE - margin, SIZE - margin)
    img[_sector_mask(box, 0, 270 - REWARD_ANGLE, 270 + REWARD_ANGLE)] = LIGHT_GREEN
    angle = float(state["angle"])
    tip_x, tip_y = to_pixel(math.sin(angle), math.cos(angle))
    wide_line(img, CENTER, CENTER, tip_x, tip_y, draw.BLACK, ROD_WIDTH)
    r = TIP_RADIUS
    ellipse(img, tip_x - r, tip_y - r, tip_x + r, tip_y + r, RED)
    torque = int(state["torque"])
    if torque != 0:
        side = 1.0 if torque > 0 else -1.0
        middle = 0.0 if torque > 0 else 180.0
        band = _sector_mask(box, ARROW_WIDTH, middle - TORQUE_ANGLE, middle + TORQUE_ANGLE)
        img[band] = BLUE
        t = math.radians(TORQUE_ANGLE)
        head_x, head_y = to_pixel(side * math.cos(t), -math.sin(t))
        regular_polygon(img, head_x, head_y, ARROW_WIDTH * 1.5, 3, side * TORQUE_ANGLE, BLUE)
    return img


def rgb_array(state, config):
    return pendulum_frame(state)


def ansi(state, config):
    """One line: the angle from hanging down (degrees), the velocity and the last torque."""
    return (
        f"angle={math.degrees(float(state['angle'])):7.2f}deg "
        f"velocity={float(state['velocity']):+.3f} torque={int(state['torque']):+d} "
        f"step={int(state['step'])}"
    )
