"""Chess pieces drawn as simple shapes on numpy canvases: the chess games' frames (``chess``,
``gardner_chess``) draw their boards' pieces with ``chessman``."""

from . import draw


def chessman(img, kind, cx, cy, fill, line, cell):
    """Piece ``kind`` (1 pawn, 2 knight, 3 bishop, 4 rook, 5 queen, 6 king) centred on (cx, cy)
    in a square of side ``cell``: a shape per kind, outlined so either colour shows."""
    r = cell * 0.36
    if kind == 1:  # pawn: a head on a cone
        base = [(cx - r * 0.6, cy + r), (cx + r * 0.6, cy + r), (cx, cy - r * 0.1)]
        draw.polygon(img, base, fill)
        draw.polyline(img, base + [base[0]], line, width=1.2)
        draw.circle(img, cx, cy - r * 0.3, r * 0.45, line)
        draw.circle(img, cx, cy - r * 0.3, r * 0.32, fill)
        return
    if kind == 2:  # knight: a leaning head
        shape = [
            (cx - r * 0.7, cy + r),
            (cx + r * 0.7, cy + r),
            (cx + r * 0.5, cy - r),
            (cx - r * 0.8, cy - r * 0.2),
        ]
    elif kind == 3:  # bishop: a diamond
        shape = [(cx, cy - r), (cx + r * 0.6, cy), (cx, cy + r), (cx - r * 0.6, cy)]
    elif kind == 4:  # rook: a square tower
        shape = [
            (cx - r * 0.7, cy - r),
            (cx + r * 0.7, cy - r),
            (cx + r * 0.7, cy + r),
            (cx - r * 0.7, cy + r),
        ]
    elif kind == 5:  # queen: a crown of three points
        shape = [
            (cx - r, cy - r),
            (cx - r * 0.4, cy),
            (cx, cy - r),
            (cx + r * 0.4, cy),
            (cx + r, cy - r),
            (cx + r * 0.7, cy + r),
            (cx - r * 0.7, cy + r),
        ]
    else:  # king: a cross on a block
        shape = [
            (cx - r * 0.2, cy - r),
            (cx + r * 0.2, cy - r),
            (cx + r * 0.2, cy - r * 0.5),
            (cx + r * 0.7, cy - r * 0.5),
            (cx + r * 0.7, cy + r),
            (cx - r * 0.7, cy + r),
            (cx - r * 0.7, cy - r * 0.5),
            (cx - r * 0.2, cy - r * 0.5),
        ]
    draw.polygon(img, shape, fill)
    draw.polyline(img, shape + [shape[0]], line, width=1.2)
