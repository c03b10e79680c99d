"""The gallery, made at build time: every registered game (bundled, from ``VECENV_GAMES_PATH`` or
an entry point) with an animation of an episode drawn by its own renderer (``render.py``'s
``rgb_array``; its ``ansi`` text where it has no pictures), its spaces, its reference and its
measured speed. The reference and the speed are the cells of README's game table (the section
between its ``games`` snippet markers, shown on the Games page too), so each figure has one home.

``gallery.md``'s ``<!-- gallery -->`` line is replaced by the games; the GIFs are written into
the build only (``gallery/<game>.gif``), never into the repository.
"""

import io
import logging
import re
from pathlib import Path

import numpy as np
from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MARKER = "<!-- gallery -->"
PAGE = "gallery.md"
FOLDER = "gallery"
MAX_STEPS = 96  # an episode's first steps (the continuing games never end)...
MAX_FRAMES = 32  # ...shown as at most this many frames
SIZE = 240  # pixels of a picture's longer side
SEED = 0

log = logging.getLogger("mkdocs.hooks.gallery")
_made = {}  # game -> what on_page_markdown writes about it


# -- README's game table ----------------------------------------------------------------------


def game_table(text=None):
    """{game: {column: cell}} from README's game table (its ``games`` snippet section)."""
    text = README.read_text() if text is None else text
    match = re.search(r"\[start:games\].*?\n(.*?)\n[^\n]*\[end:games\]", text, re.S)
    if match is None:
        raise ValueError("README.md has no game table between its --8<-- [start:games] markers")
    rows = [line for line in match[1].splitlines() if line.startswith("|")]
    header = _cells(rows[0])
    table = {}
    for line in rows[2:]:
        cells = _cells(line)
        name = cells[0].strip("`")
        cells = (cells + [""] * len(header))[: len(header)]  # a row may leave out its last cells
        table[name] = dict(zip(header, cells, strict=True))
    return table


def _cells(line):
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


# -- an episode's frames ----------------------------------------------------------------------


def _legal_actions(engine, rng):
    """One uniformly drawn legal move per agent, from the observation's ``legal`` mask."""
    field = next(f for f in engine.observation if f.name == "legal")
    legal = np.asarray(engine.obs["legal"][0])
    # A shared mask is the mover's moves: every agent draws from it (an idle agent's is ignored).
    legal = np.tile(legal.reshape(1, -1), (engine.num_agents, 1)) if field.shared else legal
    legal = legal.reshape(engine.num_agents, -1)
    moves = []
    for row in legal:
        options = np.flatnonzero(row)
        moves.append(int(rng.choice(options)) if len(options) else 0)
    low = int(engine.action.low[0])
    actions = np.asarray(moves, dtype=np.int64) + low
    return actions.reshape(1, -1) if engine.num_agents > 1 else actions[:1]


def render_mode(game):
    """ "rgb_array" where the game draws pictures, else "ansi" where it writes text, else None."""
    from vecenv import registry

    renderer = registry.game_module(game, "render")
    modes = [m for m in ("rgb_array", "ansi") if getattr(renderer, m, None) is not None]
    return modes[0] if modes else None


def episode(engine, mode):
    """Frames (``mode``) of the first episode of the one-episode ``engine``, played with random
    legal moves up to its end or ``MAX_STEPS``: at most ``MAX_FRAMES`` of its states, evenly
    spaced, the last included. Returns (frames, steps per frame)."""
    from vecenv import registry
    from vecenv.testing import random_actions

    draw = getattr(registry.game_module(engine.name, "render"), mode)
    rng = np.random.default_rng(SEED)
    has_legal = "legal" in engine.obs
    states = [engine.get_state()[0]]
    for _ in range(MAX_STEPS):
        actions = _legal_actions(engine, rng) if has_legal else random_actions(engine, rng)
        _, _, terminated, truncated = engine.step(actions)
        states.append(engine.get_state()[0])
        if terminated[0] or truncated[0]:
            break
    stride = -(-len(states) // MAX_FRAMES)
    shown = states[::stride] + ([states[-1]] if (len(states) - 1) % stride else [])
    return [draw(state, engine.config) for state in shown], stride


def resized(frame):
    """``frame`` as a Pillow image whose longer side is ``SIZE``: box-filtered down, or scaled
    up by whole pixels (grid games draw a pixel per cell: csuite's catch is 10 x 5)."""
    from PIL import Image

    image = Image.fromarray(np.ascontiguousarray(np.asarray(frame)[:, :, :3], dtype=np.uint8))
    scale = SIZE / max(image.size)
    if scale < 1:
        size = tuple(max(1, round(s * scale)) for s in image.size)
        return image.resize(size, Image.Resampling.BOX)
    factor = int(scale)
    return image.resize((image.width * factor, image.height * factor), Image.Resampling.NEAREST)


def gif_bytes(frames, fps):
    """An animated GIF of the frames, looping, shown at ``fps`` frames a second."""
    from PIL import Image

    images = [resized(f).convert("P", palette=Image.Palette.ADAPTIVE, colors=64) for f in frames]
    duration = max(20, round(1000 / fps))
    out = io.BytesIO()
    images[0].save(
        out, format="GIF", save_all=True, append_images=images[1:], duration=duration, loop=0
    )
    return out.getvalue()


# -- the page -----------------------------------------------------------------------------------


def _space(field):
    bounds = ""
    low, high = np.unique(field.low), np.unique(field.high)
    if len(low) == 1 and len(high) == 1:
        bounds = f" in [{low[0]:g}, {high[0]:g}]"
    shape = "()" if field.shape == () else str(tuple(int(s) for s in field.shape))
    who = " (shared)" if getattr(field, "shared", False) else ""
    return f"`{field.name}`: {shape} {np.dtype(field.dtype).name}{bounds}{who}"


def _action(engine):
    action = engine.action
    if action.discrete:
        low, high = int(action.low[0]), int(action.high[0])
        text = f"Discrete({high - low + 1})" + (f" from {low}" if low else "")
    else:
        low, high = np.unique(action.low), np.unique(action.high)
        bounds = f" in [{low[0]:g}, {high[0]:g}]" if len(low) == len(high) == 1 else ""
        text = f"Box{tuple(int(s) for s in action.shape)} {np.dtype(action.dtype).name}{bounds}"
    return text + (" per agent" if engine.num_agents > 1 else "")


def describe(engine, row, picture, text_frame, page_link):
    """The gallery's markdown for the game of ``engine``."""
    spec, game = engine.spec, engine.name
    title = spec.raw.get("title") or game
    gym_id = spec.gym.get("id")
    lines = [f"## {title} {{#{game}}}", ""]
    if picture:
        lines += [f"![{title}: an episode of random moves]({picture})", ""]
    elif text_frame is not None:
        lines += ["```text", text_frame.rstrip("\n"), "```", ""]
    facts = [
        ("name", f"`{game}`"),
        ("Gymnasium id", f"`vecenv/{gym_id}`" if gym_id else "none"),
        ("agents", str(engine.num_agents)),
        ("actions", _action(engine)),
        ("observation", "; ".join(_space(f) for f in engine.observation)),
        ("reference", row.get("reference") or "none named"),
        (
            "speed against a peer",
            row.get("speed against a peer") or "not measured against a peer yet",
        ),
    ]
    if page_link:
        facts.append(("its page", f"[{title}]({page_link})"))
    lines += [f"- **{k}**: {v}" for k, v in facts] + [""]
    description = spec.raw.get("description")
    if description:
        lines += [description, ""]
    return "\n".join(lines)


def on_files(files, config):
    import vecenv
    from vecenv import warm

    table = game_table()
    _made.clear()
    # Every game's engine compiled first, one process per CPU (vecenv warm): the loop below then
    # loads each from the cache instead of compiling the games one after another.
    for failed in (w for w in warm.warm(parts=("engine",)) if w.error):
        log.warning(f"gallery: {failed.game} does not compile: {failed.error}")
    for game in sorted(vecenv.list_envs()):
        if game not in table:
            log.warning(f"gallery: {game} has no row in README.md's game table: add it there")
        engine = vecenv.make(game, num_envs=1, seed=SEED)
        mode = render_mode(game)
        frames, stride = episode(engine, mode) if mode else ([], 1)
        picture = text_frame = None
        if mode == "rgb_array":
            fps = (engine.spec.raw.get("render") or {}).get("fps", 10)
            uri = f"{FOLDER}/{game}.gif"
            gif = gif_bytes(frames, min(max(fps / stride, 6), 25))
            files.append(File.generated(config, uri, content=gif))
            picture = uri
        elif mode == "ansi":
            text_frame = frames[-1]
        page = f"games/{game}.md"
        _made[game] = (engine, table.get(game, {}), picture, text_frame, page)
    return files


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"{PAGE} lost its {MARKER} line")
    parts = []
    for engine, row, picture, text_frame, game_page in _made.values():
        link = game_page if files.get_file_from_path(game_page) else None
        parts.append(describe(engine, row, picture, text_frame, link))
    return markdown.replace(MARKER, "\n".join(parts))
