"""RGB frames as files and text: PNG (and contact sheets of an episode), animated GIFs, and
terminal text in 24-bit colour half-blocks, shown in place by ``TerminalView``.

Everything here works on plain (H, W, 3) uint8 arrays, so it serves any environment with an
``rgb_array`` renderer: the command line, the AISysProj pages, a user's notebook. PNG is written
with zlib and struct alone; GIF needs Pillow (optional).
"""

import math
import shutil
import struct
import time
import zlib
from pathlib import Path

import numpy as np


class RenderError(ValueError):
    """What was asked cannot be drawn or written (a missing Pillow, no frames, a file kind)."""


UPPER_HALF = "\u2580"
RESET = "\x1b[0m"
GIF_MAX_FRAMES = 500
GIF_MAX_WIDTH = 480
SHEET_MAX_FRAMES = 16
SHEET_THUMB_WIDTH = 240
SHEET_GAP = 4
SHEET_BACKGROUND = (96, 96, 96)


def as_rgb(frame):
    """``frame`` as a contiguous (H, W, 3) uint8 array (grey and RGBA are converted)."""
    img = np.asarray(frame)
    if img.ndim == 2:
        img = np.repeat(img[:, :, None], 3, axis=2)
    if img.ndim != 3 or img.shape[2] not in (3, 4) or 0 in img.shape[:2]:
        raise ValueError(f"expected an RGB frame of shape (H, W, 3), got {img.shape}")
    if img.dtype != np.uint8:
        img = np.clip(img, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(img[:, :, :3])


def downsample(img, width, height):
    """Box-filter ``img`` down to ``width`` x ``height`` (never up: each bound is clipped)."""
    img = as_rgb(img)
    h, w = img.shape[:2]
    width, height = max(1, min(width, w)), max(1, min(height, h))
    if (width, height) == (w, h):
        return img
    xs = np.linspace(0, w, width + 1).astype(np.int64)
    ys = np.linspace(0, h, height + 1).astype(np.int64)
    acc = np.add.reduceat(img.astype(np.float64), xs[:-1], axis=1)
    acc = np.add.reduceat(acc, ys[:-1], axis=0)
    acc /= np.outer(np.diff(ys), np.diff(xs))[:, :, None]
    return np.rint(acc).astype(np.uint8)


def fit(shape, columns, rows=None):
    """Width and pixel height of a frame of ``shape`` shown in ``columns`` x ``rows`` cells.

    A half-block cell shows two square-ish pixels stacked, so the aspect ratio is kept when the
    pixel height is twice the rows.
    """
    h, w = shape[:2]
    width = max(1, min(columns, w))
    height = max(2, round(h * width / w))
    if rows is not None and height > 2 * rows:
        height = 2 * rows
        width = max(1, min(w, round(w * height / h)))
    return width, height + (height % 2)


def to_ansi(frame, columns=80, rows=None):
    """An RGB frame as lines of upper-half blocks with 24-bit colours, about ``columns`` wide."""
    img = as_rgb(frame)
    width, height = fit(img.shape, columns, rows)
    small = downsample(img, width, height)
    if small.shape[0] % 2:
        small = np.concatenate([small, small[-1:]], axis=0)
    lines = []
    for top, bottom in zip(small[0::2].tolist(), small[1::2].tolist(), strict=True):
        parts, last = [], None
        for fg, bg in zip(top, bottom, strict=True):
            colours = (tuple(fg), tuple(bg))
            if colours != last:
                parts.append("\x1b[38;2;{};{};{}m\x1b[48;2;{};{};{}m".format(*fg, *bg))
                last = colours
            parts.append(UPPER_HALF)
        lines.append("".join(parts) + RESET)
    return "\n".join(lines)


def _chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def png_bytes(img):
    """An 8-bit RGB PNG of ``img`` (no filtering; zlib does the work)."""
    img = as_rgb(img)
    h, w = img.shape[:2]
    raw = np.zeros((h, 1 + 3 * w), dtype=np.uint8)  # filter byte 0 (None) before each row
    raw[:, 1:] = img.reshape(h, 3 * w)
    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(raw.tobytes(), 6))
        + _chunk(b"IEND", b"")
    )


def write_png(path, img):
    with open(path, "wb") as f:
        f.write(png_bytes(img))


def evenly_spaced(frames, count):
    """At most ``count`` frames, evenly spaced from the first to the last."""
    if len(frames) <= count:
        return list(frames)
    picks = np.linspace(0, len(frames) - 1, count).round().astype(int)
    return [frames[i] for i in picks]


def contact_sheet(frames, max_frames=SHEET_MAX_FRAMES, thumb_width=SHEET_THUMB_WIDTH):
    """A grid of evenly spaced thumbnails of ``frames`` on a grey background."""
    if not frames:
        raise ValueError("no frames to lay out")
    picks = [as_rgb(f) for f in evenly_spaced(frames, max_frames)]
    h, w = picks[0].shape[:2]
    tw = min(thumb_width, w)
    th = max(1, round(h * tw / w))
    thumbs = [downsample(f, tw, th) for f in picks]
    th, tw = thumbs[0].shape[:2]
    cols = math.ceil(math.sqrt(len(thumbs)))
    rows = math.ceil(len(thumbs) / cols)
    gap = SHEET_GAP
    sheet = np.empty((gap + rows * (th + gap), gap + cols * (tw + gap), 3), dtype=np.uint8)
    sheet[:] = SHEET_BACKGROUND
    for k, thumb in enumerate(thumbs):
        r, c = divmod(k, cols)
        y, x = gap + r * (th + gap), gap + c * (tw + gap)
        sheet[y : y + thumb.shape[0], x : x + thumb.shape[1]] = thumb
    return sheet


# -- showing and recording frames ------------------------------------------------------------


class TerminalView:
    """Frames on a stream: animated in place and paced to the frame rate on a terminal."""

    def __init__(self, out, fps):
        self.out = out
        self.live = bool(getattr(out, "isatty", None) and out.isatty())
        size = shutil.get_terminal_size((80, 24))
        self.columns = min(80, size.columns)
        self.rows = max(size.lines - 3, 4) if self.live else None
        self.period = 1.0 / fps if self.live and fps else 0.0
        self.height = 0
        self._next = 0.0

    def show(self, frame):
        text = frame if isinstance(frame, str) else to_ansi(frame, self.columns, self.rows)
        text = text.rstrip("\n")
        height = text.count("\n") + 1
        if self.live:
            up = f"\x1b[{self.height}A" if self.height else ""
            text = up + "\x1b[K\n".join(text.split("\n")) + "\x1b[K"
            wait = self._next - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
            self._next = time.perf_counter() + self.period
        self.out.write(text + "\n")
        self.out.flush()
        self.height = height

    def detach(self):
        """Other lines were printed below the frame: draw the next one below them."""
        self.height = 0


class GifRecorder:
    """Frames for an animated GIF, kept palettised (at most GIF_MAX_FRAMES)."""

    def __init__(self, path):
        try:
            from PIL import Image
        except ImportError:
            from vecenv import extras

            raise RenderError(
                f"writing a GIF needs Pillow ({extras.install_hint('render')}), or use .png"
            ) from None
        self.Image, self.path, self.frames = Image, path, []

    def add(self, frame):
        if len(self.frames) >= GIF_MAX_FRAMES:
            return
        img = np.asarray(frame)
        if img.shape[1] > GIF_MAX_WIDTH:
            img = downsample(img, GIF_MAX_WIDTH, round(img.shape[0] * GIF_MAX_WIDTH / img.shape[1]))
        rgb = self.Image.fromarray(np.ascontiguousarray(img[:, :, :3], dtype=np.uint8))
        self.frames.append(rgb.convert("P", palette=self.Image.Palette.ADAPTIVE))

    def save(self, fps):
        if not self.frames:
            raise RenderError("no frames were rendered")
        duration = max(20, round(1000 / fps))
        first, rest = self.frames[0], self.frames[1:]
        first.save(self.path, save_all=True, append_images=rest, duration=duration, loop=0)
        return len(self.frames)


class SheetRecorder:
    """Thumbnails for a contact sheet: every stride-th frame, thinned as the episode grows."""

    def __init__(self, path):
        self.path, self.kept, self.stride, self.count, self.last = path, [], 1, 0, None

    def add(self, frame):
        img = np.asarray(frame)
        tw = min(SHEET_THUMB_WIDTH, img.shape[1])
        thumb = downsample(img, tw, max(1, round(img.shape[0] * tw / img.shape[1])))
        if self.count % self.stride == 0:
            self.kept.append(thumb)
            if len(self.kept) > 4 * SHEET_MAX_FRAMES:
                self.kept, self.stride = self.kept[::2], 2 * self.stride
            self.last = None
        else:
            self.last = thumb
        self.count += 1

    def save(self, fps=None):
        frames = self.kept + ([self.last] if self.last is not None else [])
        if not frames:
            raise RenderError("no frames were rendered")
        write_png(self.path, contact_sheet(frames))
        return min(len(frames), SHEET_MAX_FRAMES)


def recorder_for(path):
    """The recorder for ``path``'s kind: an animated GIF or a PNG contact sheet."""
    suffix = Path(path).suffix.lower()
    if suffix == ".gif":
        return GifRecorder(path)
    if suffix == ".png":
        return SheetRecorder(path)
    raise RenderError(f"frames are written to a .gif or .png file, got {path!r}")
