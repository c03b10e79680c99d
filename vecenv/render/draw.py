"""A tiny numpy rasteriser for the games' RGB renderers (no pygame needed).

A canvas is an (H, W, 3) uint8 array with y growing downwards; helpers take float coordinates
and paint in place. Shapes are filled by testing pixel centres, which is exact enough for frames.
"""

import numpy as np

WHITE = (255, 255, 255)
BLACK = (0, 0, 0)


def canvas(width, height, color=WHITE):
    img = np.empty((height, width, 3), dtype=np.uint8)
    img[:] = color
    return img


def _box(img, xs, ys, pad=1.0):
    h, w = img.shape[:2]
    x0 = max(int(np.floor(min(xs) - pad)), 0)
    x1 = min(int(np.ceil(max(xs) + pad)) + 1, w)
    y0 = max(int(np.floor(min(ys) - pad)), 0)
    y1 = min(int(np.ceil(max(ys) + pad)) + 1, h)
    if x0 >= x1 or y0 >= y1:
        return None
    yy, xx = np.mgrid[y0:y1, x0:x1]
    return (slice(y0, y1), slice(x0, x1)), xx + 0.5, yy + 0.5


def polygon(img, points, color):
    """Fill a convex or concave polygon given as [(x, y), ...] (even-odd rule)."""
    pts = np.asarray(points, dtype=np.float64)
    box = _box(img, pts[:, 0], pts[:, 1])
    if box is None:
        return
    region, px, py = box
    inside = np.zeros(px.shape, dtype=bool)
    x0, y0 = pts[-1]
    for x1, y1 in pts:
        crosses = (y1 > py) != (y0 > py)
        with np.errstate(divide="ignore", invalid="ignore"):
            xcross = (x0 - x1) * (py - y1) / (y0 - y1) + x1
        inside ^= crosses & (px < xcross)
        x0, y0 = x1, y1
    img[region][inside] = color


def circle(img, cx, cy, radius, color):
    box = _box(img, [cx - radius, cx + radius], [cy - radius, cy + radius])
    if box is None:
        return
    region, px, py = box
    img[region][(px - cx) ** 2 + (py - cy) ** 2 <= radius * radius] = color


def line(img, x0, y0, x1, y1, color, width=1.0):
    """A segment of the given width, drawn as a filled rectangle."""
    dx, dy = x1 - x0, y1 - y0
    length = float(np.hypot(dx, dy))
    if length == 0.0:
        circle(img, x0, y0, width / 2, color)
        return
    nx, ny = -dy / length * width / 2, dx / length * width / 2
    polygon(
        img, [(x0 + nx, y0 + ny), (x1 + nx, y1 + ny), (x1 - nx, y1 - ny), (x0 - nx, y0 - ny)], color
    )


def polyline(img, points, color, width=1.0):
    pts = list(points)
    for (x0, y0), (x1, y1) in zip(pts[:-1], pts[1:], strict=False):
        line(img, x0, y0, x1, y1, color, width)


def rotate(points, angle, cx=0.0, cy=0.0):
    """Rotate [(x, y), ...] by ``angle`` radians (counter-clockwise in y-up coordinates)."""
    c, s = np.cos(angle), np.sin(angle)
    return [(cx + x * c - y * s, cy + x * s + y * c) for x, y in points]


def flip_y(points, height):
    """Turn y-up world coordinates into image rows."""
    return [(x, height - y) for x, y in points]


# A 5 x 7 pixel font for the few characters frames print (cards' ranks, counts): each glyph is
# seven rows of five bits, the leftmost pixel the highest bit.
GLYPHS = {
    "0": (14, 17, 19, 21, 25, 17, 14),
    "1": (4, 12, 4, 4, 4, 4, 14),
    "2": (14, 17, 1, 2, 4, 8, 31),
    "3": (31, 2, 4, 2, 1, 17, 14),
    "4": (2, 6, 10, 18, 31, 2, 2),
    "5": (31, 16, 30, 1, 1, 17, 14),
    "6": (6, 8, 16, 30, 17, 17, 14),
    "7": (31, 1, 2, 4, 8, 8, 8),
    "8": (14, 17, 17, 14, 17, 17, 14),
    "9": (14, 17, 17, 15, 1, 2, 12),
    "A": (14, 17, 17, 31, 17, 17, 17),
    "J": (7, 2, 2, 2, 2, 18, 12),
    "K": (17, 18, 20, 24, 20, 18, 17),
    "Q": (14, 17, 17, 17, 21, 18, 13),
    "?": (14, 17, 1, 2, 4, 0, 4),
    "+": (0, 4, 4, 31, 4, 4, 0),
    "-": (0, 0, 0, 31, 0, 0, 0),
    " ": (0, 0, 0, 0, 0, 0, 0),
}


def text(img, string, x, y, scale, color):
    """``string`` (characters of ``GLYPHS``) with its top-left corner at (x, y), each font pixel
    a ``scale`` x ``scale`` square, one font pixel between characters."""
    h, w = img.shape[:2]
    for k, char in enumerate(string):
        rows = GLYPHS[char]
        left = x + k * 6 * scale
        for r, bits in enumerate(rows):
            for c in range(5):
                if bits >> (4 - c) & 1:
                    x0, y0 = int(left + c * scale), int(y + r * scale)
                    img[max(y0, 0) : min(y0 + scale, h), max(x0, 0) : min(x0 + scale, w)] = color
