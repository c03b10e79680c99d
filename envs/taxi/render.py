"""Taxi frames: csuite's picture (grid, walls, coloured squares, taxi), drawn with numpy.

Boxes are inclusive of both corners, as PIL draws them: a square of the grid spans pixels
50 * (x + 1) to 50 * (x + 2).
"""

from vecenv.render import draw

from .rules import COLOR_X, COLOR_Y, IN_TAXI, NUM_COLUMNS, NUM_ROWS

SQUARE = 50
WIDTH = SQUARE * (NUM_COLUMNS + 2)
HEIGHT = SQUARE * (NUM_ROWS + 2)
THIN = SQUARE // 50
THICK = SQUARE // 10
OFFSET = SQUARE // 5  # the taxi's margin inside its square

SQUARE_COLORS = [(0xFF, 0x99, 0x99), (0x9C, 0xFF, 0x9C), (0xFF, 0xF8, 0x99), (0x99, 0xE2, 0xFF)]
PASSENGER = (0xD4, 0x00, 0xFF)
DESTINATION = (0x00, 0x8C, 0x21)
EMPTY_TAXI = (0x8F, 0x8F, 0x8F)


def _fill(img, x0, y0, x1, y1, color):
    img[y0 : y1 + 1, x0 : x1 + 1] = color


def _outline(img, x0, y0, x1, y1, color, width):
    """A rectangle's border ``width`` pixels wide, inside the box."""
    _fill(img, x0, y0, x1, y0 + width - 1, color)
    _fill(img, x0, y1 - width + 1, x1, y1, color)
    _fill(img, x0, y0, x0 + width - 1, y1, color)
    _fill(img, x1 - width + 1, y0, x1, y1, color)


def _square_box(x, y):
    return SQUARE * (x + 1), SQUARE * (y + 1), SQUARE * (x + 2), SQUARE * (y + 2)


def _wall(img, x, y0):
    """A wall two squares long going down from pixel (x, y0)."""
    half = THICK // 2
    _fill(img, x - half, y0, x + half, y0 + 2 * SQUARE, draw.BLACK)


def rgb_array(state, config):
    img = draw.canvas(WIDTH, HEIGHT)
    for k, color in enumerate(SQUARE_COLORS):
        _fill(img, *_square_box(COLOR_X[k], COLOR_Y[k]), color)
    right, bottom = SQUARE * (NUM_COLUMNS + 1), SQUARE * (NUM_ROWS + 1)
    for row in range(1, NUM_ROWS + 2):
        _fill(img, SQUARE, SQUARE * row, right, SQUARE * row + THIN - 1, draw.BLACK)
    for col in range(1, NUM_COLUMNS + 2):
        _fill(img, SQUARE * col, SQUARE, SQUARE * col + THIN - 1, bottom, draw.BLACK)
    _outline(img, SQUARE, SQUARE, right, bottom, draw.BLACK, THICK)
    _wall(img, 3 * SQUARE, SQUARE)
    _wall(img, 2 * SQUARE, 4 * SQUARE)
    _wall(img, 4 * SQUARE, 4 * SQUARE)

    passenger = int(state["passenger_loc"])
    if passenger == IN_TAXI:
        taxi_color = PASSENGER
    else:
        taxi_color = EMPTY_TAXI
        _outline(img, *_square_box(COLOR_X[passenger], COLOR_Y[passenger]), PASSENGER, THICK)
    x0, y0, x1, y1 = _square_box(int(state["taxi_x"]), int(state["taxi_y"]))
    x0, y0, x1, y1 = x0 + OFFSET, y0 + OFFSET, x1 - OFFSET, y1 - OFFSET
    draw.circle(img, (x0 + x1 + 1) / 2, (y0 + y1 + 1) / 2, (x1 - x0 + 1) / 2, taxi_color)
    destination = int(state["destination"])
    _outline(img, *_square_box(COLOR_X[destination], COLOR_Y[destination]), DESTINATION, THICK)
    return img


def ansi(state, config):
    """The grid as text: R, G, Y, B squares, the taxi as T (t when empty), walls as |."""
    x, y = int(state["taxi_x"]), int(state["taxi_y"])
    passenger, destination = int(state["passenger_loc"]), int(state["destination"])
    layout = ["R: | : :G", " : | : : ", " : : : : ", " | : | : ", "Y| : |B: "]
    rows = [list(line) for line in layout]
    rows[y][2 * x] = "T" if passenger == IN_TAXI else "t"
    names = "RGYB"
    where = "taxi" if passenger == IN_TAXI else names[passenger]
    lines = ["+---------+"] + ["|" + "".join(r) + "|" for r in rows] + ["+---------+"]
    lines.append(f"passenger: {where}  destination: {names[destination]}")
    return "\n".join(lines)
