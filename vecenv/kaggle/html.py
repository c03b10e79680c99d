"""Self-contained HTML replay pages for the Kaggle face.

:func:`replay_page` builds one HTML document that animates an episode on a canvas, with a
play/pause button, a step slider, a step counter and a status line. The page needs no network: all
of its code and styles are inline. It reads its data from ``window.kaggle``, the object the
kaggle-environments player contract defines::

    window.kaggle = {
        "environment": <env.toJSON()>,   # steps, configuration, name, title, info, ...
        "step": int,                     # the step shown first
        "playing": bool,                 # start playing at load
        "controls": bool,                # False hides the controls
        "debug": bool,                   # True shows the logs of the step shown
        "logs": [...],                   # per step, per agent
        "speed": int,                    # optional: milliseconds per step while playing
    }

The object is either embedded by :func:`replay_page` itself (``window_kaggle=...``) or injected by
kaggle-environments' ``get_player``, which puts ``<script>window.kaggle = ...;</script>`` right
before ``</head>``. Every script of the page sits at the end of ``<body>``, so either way the data
is defined before the player starts, and the first ``</head>`` in the page is the real one.

Each game supplies its drawing code (``envs/<game>/replay.js``, read with :func:`game_js`). It
defines::

    function renderStep({canvas, ctx, width, height, step, steps, configuration, environment,
                         statusEl}) { ... }

drawing step index ``step`` of ``steps`` (``environment.steps``) onto ``ctx``, whose units are CSS
pixels of a ``width`` x ``height`` drawing area, and optionally setting ``statusEl.textContent``.
It may return a layout object (for example ``{cells: [[x, y], ...]}``, cell centres in those
units), which the page exposes as ``window.vecenvReplay.layout``. The page defines two helpers for
it: ``playerName(environment, k)`` and ``turnStatus(agents, label)``, the status line of a
two-agent turn-based game (whose move it is, or who won, drew or failed).

For automation the page defines ``window.vecenvReplay`` with ``numSteps``, ``step``, ``layout``,
``setStep(k)``, ``play()`` and ``pause()``; after drawing step ``k`` it sets
``document.body.dataset.step = k`` and ``document.body.dataset.ready = "1"`` (and
``document.body.dataset.error`` when the game's code threw).
"""

from __future__ import annotations

import html
import json
import re

from vecenv import registry

__all__ = ["game_js", "replay_page"]

# Drawing area of the canvas, in CSS pixels; the backing store is scaled by devicePixelRatio.
CANVAS_WIDTH = 640
CANVAS_HEIGHT = 480


def game_js(folder_name: str) -> str:
    """The replay drawing code of a game: ``replay.js`` in its folder."""
    if not folder_name or not re.fullmatch(r"[A-Za-z0-9_]+", folder_name):
        raise ValueError(f"not a game folder name: {folder_name!r}")
    try:
        folder = registry.get_game(folder_name).folder
    except ValueError:
        raise FileNotFoundError(f"no game {folder_name!r}") from None
    path = folder / "replay.js"
    if not path.is_file():
        raise FileNotFoundError(f"game {folder_name!r} has no replay.js")
    return path.read_text(encoding="utf-8")


def _script_safe(code: str) -> str:
    """Code that cannot end its ``<script>`` element early or open an HTML comment in it."""
    code = re.sub(r"</(script)", r"<\\/\1", code, flags=re.IGNORECASE)
    return code.replace("<!--", "<\\!--")


def _json_for_script(value) -> str:
    """JSON that is inert inside ``<script>``: ``<``, ``>`` and ``&`` become unicode escapes."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def replay_page(game_js: str, window_kaggle: dict | None = None, title: str = "") -> str:
    """A complete, self-contained HTML document that replays an episode.

    ``game_js`` is the game's drawing code (see the module docstring for its contract).
    ``window_kaggle``, when given, is embedded as ``window.kaggle`` in ``<head>``; when None the
    page holds no data and expects ``window.kaggle`` to be injected (as kaggle-environments'
    ``get_player`` does). ``title`` names the page; empty means the environment's own title.
    """
    data = ""
    if window_kaggle is not None:
        data = f"<script>window.kaggle = {_json_for_script(window_kaggle)};</script>\n"
    return _TEMPLATE.format(
        title=html.escape(title or "Replay"),
        width=CANVAS_WIDTH,
        height=CANVAS_HEIGHT,
        data=data,
        shared=_SHARED_JS,
        game=_script_safe(game_js),
        player=_script_safe(_PLAYER_JS.replace("__TITLE__", _json_for_script(title))),
    )


_PLAYER_JS = r"""
(function () {
  "use strict";
  var WIDTH = __WIDTH__, HEIGHT = __HEIGHT__, TITLE = __TITLE__, DEFAULT_SPEED = 333;
  var canvas = document.getElementById("board");
  var ctx = canvas.getContext("2d");
  var statusEl = document.getElementById("status");
  var titleEl = document.getElementById("title");
  var controlsEl = document.getElementById("controls");
  var playBtn = document.getElementById("play");
  var slider = document.getElementById("slider");
  var counter = document.getElementById("counter");
  var logsEl = document.getElementById("logs");

  var state = {kaggle: {}, steps: [], step: 0, playing: false, timer: null, layout: null};

  function clamp(k) {
    var n = state.steps.length;
    k = Math.floor(Number(k));
    if (!isFinite(k)) k = 0;
    return Math.max(0, Math.min(n - 1, k));
  }

  function speed() {
    var s = Number(state.kaggle.speed);
    return isFinite(s) && s >= 0 ? s : DEFAULT_SPEED;
  }

  function sizeCanvas() {
    var dpr = window.devicePixelRatio || 1;
    var w = Math.round(WIDTH * dpr), h = Math.round(HEIGHT * dpr);
    if (canvas.width !== w || canvas.height !== h) {
      canvas.width = w;
      canvas.height = h;
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  }

  function draw() {
    var n = state.steps.length;
    var body = document.body;
    slider.max = String(Math.max(n - 1, 0));
    slider.value = String(state.step);
    slider.disabled = n === 0;
    counter.textContent = n ? (state.step + 1) + " / " + n : "0 / 0";
    playBtn.textContent = state.playing ? "Pause" : "Play";
    playBtn.disabled = n === 0;
    sizeCanvas();
    ctx.clearRect(0, 0, WIDTH, HEIGHT);
    delete body.dataset.error;
    if (!n) {
      statusEl.textContent = "No episode data.";
      state.layout = null;
      body.dataset.ready = "1";
      return;
    }
    var env = state.kaggle.environment || {};
    try {
      ctx.save();
      statusEl.textContent = "";
      state.layout = renderStep({
        canvas: canvas, ctx: ctx, width: WIDTH, height: HEIGHT, step: state.step,
        steps: state.steps, configuration: env.configuration || {}, environment: env,
        statusEl: statusEl
      }) || null;
    } catch (err) {
      state.layout = null;
      statusEl.textContent = "Render error: " + (err && err.message ? err.message : err);
      body.dataset.error = String(err && err.message ? err.message : err);
    } finally {
      ctx.restore();
    }
    if (state.kaggle.debug) {
      var logs = state.kaggle.logs;
      var entry = Array.isArray(logs) ? logs[state.step] : null;
      var empty = !entry || (Array.isArray(entry) && !entry.some(function (a) {
        return a && (typeof a !== "object" || Object.keys(a).length);
      }));
      logsEl.hidden = false;
      logsEl.textContent = empty ? "No logs for this step." : JSON.stringify(entry, null, 1);
    } else {
      logsEl.hidden = true;
    }
    body.dataset.step = String(state.step);
    body.dataset.ready = "1";
  }

  function stopTimer() {
    if (state.timer !== null) {
      clearTimeout(state.timer);
      state.timer = null;
    }
  }

  function tick() {
    state.timer = null;
    if (!state.playing) return;
    if (state.step < state.steps.length - 1) {
      state.step += 1;
      draw();
    }
    if (state.step >= state.steps.length - 1) {
      pause();
    } else {
      state.timer = setTimeout(tick, speed());
    }
  }

  function play() {
    if (state.playing || state.steps.length < 2) return;
    if (state.step >= state.steps.length - 1) state.step = 0;
    state.playing = true;
    draw();
    stopTimer();
    state.timer = setTimeout(tick, speed());
  }

  function pause() {
    stopTimer();
    if (!state.playing) return;
    state.playing = false;
    draw();
  }

  function setStep(k) {
    stopTimer();
    state.playing = false;
    state.step = clamp(k);
    draw();
  }

  function load(kaggle, fresh) {
    state.kaggle = kaggle && typeof kaggle === "object" ? kaggle : {};
    var env = state.kaggle.environment || {};
    state.steps = Array.isArray(env.steps) ? env.steps : [];
    var name = TITLE || env.title || env.name || "Replay";
    titleEl.textContent = name;
    if (!TITLE) document.title = name;
    controlsEl.hidden = state.kaggle.controls === false;
    if (fresh) {
      var k = state.kaggle.step;
      var last = state.steps.length - 1;
      state.step = clamp(typeof k === "number" ? k : (state.kaggle.playing ? 0 : last));
    } else {
      state.step = clamp(state.step);
    }
    stopTimer();
    state.playing = false;
    draw();
    if (fresh && state.kaggle.playing) {
      if (state.step >= state.steps.length - 1) state.step = 0;
      state.playing = state.steps.length > 1;
      draw();
      if (state.playing) state.timer = setTimeout(tick, speed());
    }
  }

  playBtn.addEventListener("click", function () {
    if (state.playing) pause(); else play();
  });
  slider.addEventListener("input", function () { setStep(slider.value); });
  window.addEventListener("keydown", function (e) {
    if (e.target && e.target.tagName === "INPUT") return;
    if (e.key === " ") { e.preventDefault(); if (state.playing) pause(); else play(); }
    else if (e.key === "ArrowLeft") setStep(state.step - 1);
    else if (e.key === "ArrowRight") setStep(state.step + 1);
  });
  // A host page may send a new episode, as it does to the kaggle-environments player.
  window.addEventListener("message", function (e) {
    var d = e.data;
    if (!d || typeof d !== "object") return;
    if (d.environment && typeof d.environment === "object") {
      window.kaggle = d;
      load(d, true);
    } else if (Array.isArray(d.setSteps)) {
      var cur = window.kaggle || {};
      var env = Object.assign({}, cur.environment || {}, {steps: d.setSteps});
      window.kaggle = Object.assign({}, cur, {environment: env});
      load(window.kaggle, false);
    }
  });
  window.addEventListener("resize", draw);

  window.vecenvReplay = {
    get numSteps() { return state.steps.length; },
    get step() { return state.step; },
    get playing() { return state.playing; },
    get layout() { return state.layout; },
    setStep: setStep,
    play: play,
    pause: pause
  };

  load(window.kaggle, true);
})();
"""

_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
html, body {{ margin: 0; padding: 0; background: #212121; color: #eeeeee;
  font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }}
main {{ display: flex; flex-direction: column; align-items: center; gap: 6px; padding: 8px; }}
h1 {{ margin: 0; font-size: 16px; font-weight: 600; }}
canvas {{ display: block; width: min({width}px, 100%, calc((100vh - 110px) * {width} / {height}));
  height: auto; aspect-ratio: {width} / {height}; background: #263238; }}
#controls {{ display: flex; align-items: center; gap: 10px; width: min({width}px, 100%); }}
#controls[hidden], #logs[hidden] {{ display: none; }}
#play {{ min-width: 64px; padding: 4px 10px; border: 0; border-radius: 4px; background: #1e88e5;
  color: #ffffff; font: inherit; cursor: pointer; }}
#play:disabled {{ background: #616161; cursor: default; }}
#slider {{ flex: 1; }}
#counter {{ min-width: 72px; text-align: right; font-variant-numeric: tabular-nums; }}
#status {{ min-height: 1.4em; text-align: center; }}
#logs {{ max-width: {width}px; max-height: 160px; overflow: auto; margin: 0; padding: 6px;
  background: #000000; color: #b0bec5; font-size: 12px; white-space: pre-wrap; }}
</style>
{data}</head>
<body>
<main>
<h1 id="title"></h1>
<canvas id="board" width="{width}" height="{height}"></canvas>
<div id="controls">
<button id="play" type="button">Play</button>
<input id="slider" type="range" min="0" max="0" step="1" value="0" aria-label="Step">
<span id="counter">0 / 0</span>
</div>
<div id="status" role="status"></div>
<pre id="logs" hidden></pre>
</main>
<script>
{shared}
</script>
<script>
{game}
</script>
<script>
{player}
</script>
</body>
</html>
"""

# Helpers every game's drawing code may call: agents' names (Kaggle's ``info.TeamNames``, else
# "Player k") and the status line of a finished or running two-agent turn-based game.
_SHARED_JS = r"""
function playerName(environment, k) {
  var names = (environment.info && environment.info.TeamNames) || [];
  return names[k] || "Player " + (k + 1);
}

function turnStatus(agents, label) {
  for (var k = 0; k < agents.length; k++) {
    if (agents[k].status === "ACTIVE") return label(k) + " to move";
  }
  var faults = [];
  for (k = 0; k < agents.length; k++) {
    var s = agents[k].status;
    if (s !== "DONE" && s !== "INACTIVE") faults.push(k);
  }
  var parts = faults.map(function (i) { return label(i) + ": " + agents[i].status; });
  var r0 = agents[0].reward, r1 = agents[1].reward;
  if (faults.length === 1 && agents.length === 2) {
    parts.push(label(1 - faults[0]) + " wins");
  } else if (typeof r0 === "number" && typeof r1 === "number" && r0 !== r1) {
    parts.push(label(r0 > r1 ? 0 : 1) + " wins");
  } else if (!faults.length) {
    parts.push("Draw");
  }
  return parts.join(" \u2014 ");
}
"""

_PLAYER_JS = _PLAYER_JS.replace("__WIDTH__", str(CANVAS_WIDTH)).replace(
    "__HEIGHT__", str(CANVAS_HEIGHT)
)


def episode_page(env, **kwargs) -> str:
    """``env``'s episode as a replay page, with the player settings Kaggle's ``render`` passes
    (``playing``, ``step``, ``controls``, ``debug``; any other keyword reaches the page too)."""
    playing = bool(kwargs.get("playing", env.done))
    window_kaggle = {
        "debug": bool(kwargs.get("debug", env.debug)),
        "playing": playing,
        "step": 0 if playing else len(env.steps) - 1,
        "controls": bool(kwargs.get("controls", env.done)),
        "environment": env.toJSON(),
        "logs": env.logs,
        **{k: v for k, v in kwargs.items() if k != "mode"},
    }
    return replay_page(game_js(env.name), window_kaggle, title=env.specification.get("title", ""))
