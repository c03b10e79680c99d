"""The HTML replay page of the Kaggle face, driven in the system Chromium.

Episodes come from kaggle-environments itself (``env.toJSON()``), except tictactoe, which it no
longer ships: that one is a toJSON-shaped dict built here. Pixel checks read the canvas at the cell
centres the game's drawing code reports and compare them with the colours of the board's values.
The browser comes from ``tests/browser.py``.
"""

import io
import json
from dataclasses import dataclass, field

import pytest

from vecenv.kaggle.html import CANVAS_HEIGHT, CANVAS_WIDTH, game_js, replay_page

CONNECTX_FILLS = {0: (0xFF, 0xFF, 0xFF), 1: (0xE5, 0x39, 0x35), 2: (0xFD, 0xD8, 0x35)}
CONNECTX_BOARD = (0x15, 0x65, 0xC0)
TICTACTOE_FILLS = {0: (0xFF, 0xFF, 0xFF), 1: (0x1E, 0x88, 0xE5), 2: (0xE5, 0x39, 0x35)}
RPS_SIGNS = [
    ("Rock", (0x79, 0x55, 0x48)),
    ("Paper", (0xFA, 0xFA, 0xFA)),
    ("Scissors", (0x9E, 0x9E, 0x9E)),
    ("Spock", (0x39, 0x49, 0xAB)),
    ("Lizard", (0x43, 0xA0, 0x47)),
]
GAMES = ["connectx", "tictactoe", "rps"]


@dataclass
class Opened:
    page: object
    errors: list = field(default_factory=list)
    requests: list = field(default_factory=list)

    def show(self, step):
        """Sets the replay to ``step`` through the page's API and waits for it to be drawn."""
        self.page.evaluate("k => window.vecenvReplay.setStep(k)", step)
        self.page.wait_for_selector(f'body[data-step="{step}"]', state="attached")
        return self.state()

    def state(self):
        state = self.page.evaluate(
            """() => ({
                numSteps: window.vecenvReplay.numSteps,
                step: window.vecenvReplay.step,
                layout: window.vecenvReplay.layout,
                status: document.getElementById("status").textContent,
                error: document.body.dataset.error || null,
            })"""
        )
        assert state["error"] is None, state["error"]
        assert self.errors == []
        return state

    def canvas_pixels(self):
        """The canvas as an RGB image and the factor from drawing units to its pixels."""
        from PIL import Image

        png = self.page.locator("#board").screenshot()
        img = Image.open(io.BytesIO(png)).convert("RGB")
        scale = img.width / CANVAS_WIDTH
        assert img.height == pytest.approx(CANVAS_HEIGHT * scale, abs=1)
        return img, scale


def _pixel(img, scale, x, y):
    return img.getpixel((int(x * scale), int(y * scale)))


@pytest.fixture
def open_page(browser):
    contexts = []

    def _open(html):
        context = browser.new_context(viewport={"width": 900, "height": 800}, device_scale_factor=1)
        contexts.append(context)
        page = context.new_page()
        opened = Opened(page)
        page.on("pageerror", lambda err: opened.errors.append(str(err)))

        def _block(route):
            opened.requests.append(route.request.url)
            route.abort()

        page.route("**/*", _block)
        page.set_content(html)
        page.wait_for_selector('body[data-ready="1"]', state="attached")
        return opened

    yield _open
    for context in contexts:
        context.close()


def _window_kaggle(environment, **extra):
    out = {
        "environment": environment,
        "step": len(environment["steps"]) - 1,
        "playing": False,
        "controls": True,
        "debug": False,
        "logs": [],
    }
    out.update(extra)
    return out


def _kaggle_episode(name, configuration, actions):
    ke = pytest.importorskip("kaggle_environments")
    env = ke.make(name, configuration=configuration, debug=True)
    for pair in actions:
        env.step(list(pair))
    return env.toJSON()


def _connectx_episode(rows, columns, moves):
    """A connectx episode; ``moves`` are the columns played in turn, player 1 first."""
    env = _kaggle_episode("connectx", {"rows": rows, "columns": columns}, [(m, m) for m in moves])
    assert env["steps"][-1][0]["status"] == "DONE"
    return env


CONNECTX_CASES = {
    # Player 1 stacks column 3 while player 2 answers in column 4: a vertical four.
    "6x7": (6, 7, [3, 4, 3, 4, 3, 4, 3]),
    # A horizontal four on the bottom row of a wider, lower board.
    "5x8": (5, 8, [0, 0, 1, 1, 2, 2, 3]),
}


def _assert_grid_colours(opened, state, board, rows, columns, fills):
    cells = state["layout"]["cells"]
    assert len(cells) == rows * columns == len(board)
    # Row-major, top row first: one y per row, one x per column, y growing down the board.
    ys = [cells[r * columns][1] for r in range(rows)]
    xs = [cells[c][0] for c in range(columns)]
    assert ys == sorted(ys) and len(set(ys)) == rows
    assert xs == sorted(xs) and len(set(xs)) == columns
    img, scale = opened.canvas_pixels()
    got = [_pixel(img, scale, x, y) for x, y in cells]
    want = [fills[v] for v in board]
    assert got == want
    return img, scale


# ---- the page as text ---------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_game_js_defines_render_step(game):
    assert "function renderStep(" in game_js(game)


def test_game_js_rejects_unknown_and_unsafe_names():
    with pytest.raises(FileNotFoundError):
        game_js("no_such_game")
    with pytest.raises(ValueError):
        game_js("../connectx")


@pytest.mark.parametrize("game", GAMES)
def test_page_without_data_is_self_contained_and_ready_for_injection(game):
    page = replay_page(game_js(game))
    low = page.lower()
    assert low.startswith("<!doctype html>")
    assert "http://" not in low and "https://" not in low
    assert "<link" not in low and " src=" not in low and "url(" not in low
    assert "<script>window.kaggle" not in page
    # kaggle-environments' get_player injects its data before the first </head>: that must be the
    # real end of <head>, before every script of the page.
    assert low.count("</head>") == 1
    assert low.index("</head>") < low.index("<script")


def test_embedded_data_is_escaped_inside_script():
    hostile = "</script><script>window.pwned = 1</script><!--"
    env = {"name": "connectx", "title": hostile, "configuration": {}, "steps": []}
    page = replay_page(game_js("connectx"), _window_kaggle(env))
    assert hostile not in page
    head = page[: page.lower().index("</head>")]
    assert head.count("<script>") == 1 and head.count("</script>") == 1
    # The embedded object decodes back to the same data.
    start = head.index("window.kaggle = ") + len("window.kaggle = ")
    end = head.rindex(";</script>")
    assert json.loads(head[start:end])["environment"]["title"] == hostile


# ---- the page in Chromium -----------------------------------------------------------------------


def test_hostile_title_stays_text_in_the_browser(open_page):
    hostile = "</script><script>window.pwned = 1</script>"
    env = {"name": "connectx", "title": hostile, "configuration": {}, "steps": []}
    opened = open_page(replay_page(game_js("connectx"), _window_kaggle(env)))
    assert opened.page.evaluate("window.pwned === undefined")
    assert opened.page.text_content("#title") == hostile
    assert opened.page.evaluate("window.vecenvReplay.numSteps") == 0


@pytest.mark.parametrize("case", sorted(CONNECTX_CASES))
def test_connectx_final_board_pixels_and_winner(open_page, case):
    rows, columns, moves = CONNECTX_CASES[case]
    env = _connectx_episode(rows, columns, moves)
    steps = env["steps"]
    opened = open_page(replay_page(game_js("connectx"), _window_kaggle(env)))
    assert opened.page.evaluate("window.vecenvReplay.numSteps") == len(steps)

    last = len(steps) - 1
    state = opened.show(last)
    assert state["step"] == last
    assert "Player 1 (red) wins" in state["status"]
    board = steps[last][0]["observation"]["board"]
    assert board.count(1) == 4 and board.count(2) == 3
    img, scale = _assert_grid_colours(opened, state, board, rows, columns, CONNECTX_FILLS)
    # Between two neighbouring cells lies the blue board.
    (x0, y0), (x1, _) = state["layout"]["cells"][:2]
    assert _pixel(img, scale, (x0 + x1) / 2, y0) == CONNECTX_BOARD
    assert opened.requests == []


@pytest.mark.parametrize("case", sorted(CONNECTX_CASES))
def test_connectx_intermediate_step_draws_that_board(open_page, case):
    rows, columns, moves = CONNECTX_CASES[case]
    env = _connectx_episode(rows, columns, moves)
    steps = env["steps"]
    opened = open_page(replay_page(game_js("connectx"), _window_kaggle(env)))
    mid = 3
    board = steps[mid][0]["observation"]["board"]
    assert board != steps[-1][0]["observation"]["board"]
    assert sorted(v for v in board if v) == [1, 1, 2]
    state = opened.show(mid)
    assert state["status"] == "Player 2 (yellow) to move"
    assert opened.page.text_content("#counter") == f"{mid + 1} / {len(steps)}"
    _assert_grid_colours(opened, state, board, rows, columns, CONNECTX_FILLS)


def _tictactoe_episode(moves):
    """A toJSON-shaped tictactoe episode; ``moves`` are cells played in turn, X (mark 1) first."""
    board = [0] * 9
    steps = []

    def record(actions, statuses, rewards):
        steps.append(
            [
                {
                    "action": actions[k],
                    "reward": rewards[k],
                    "info": {},
                    "observation": (
                        {"board": list(board), "mark": 1, "step": len(steps)}
                        if k == 0
                        else {"mark": 2}
                    ),
                    "status": statuses[k],
                }
                for k in range(2)
            ]
        )

    record([0, 0], ["ACTIVE", "INACTIVE"], [0, 0])
    for i, cell in enumerate(moves):
        mover = i % 2
        board[cell] = mover + 1
        actions = [cell, 0] if mover == 0 else [0, cell]
        if i == len(moves) - 1:
            rewards = [1, -1] if mover == 0 else [-1, 1]
            record(actions, ["DONE", "DONE"], rewards)
        else:
            statuses = ["INACTIVE", "ACTIVE"] if mover == 0 else ["ACTIVE", "INACTIVE"]
            record(actions, statuses, [0, 0])
    return {
        "name": "tictactoe",
        "title": "Tic Tac Toe",
        "configuration": {"episodeSteps": 10, "actTimeout": 2},
        "info": {},
        "steps": steps,
    }


def test_tictactoe_boards_and_winner(open_page):
    # X takes the anti-diagonal 2, 4, 6.
    env = _tictactoe_episode([4, 0, 2, 8, 6])
    steps = env["steps"]
    opened = open_page(replay_page(game_js("tictactoe"), _window_kaggle(env)))
    assert opened.page.evaluate("window.vecenvReplay.numSteps") == len(steps) == 6

    last = len(steps) - 1
    state = opened.show(last)
    assert "Player 1 (X) wins" in state["status"]
    final = steps[last][0]["observation"]["board"]
    assert final == [2, 0, 1, 0, 1, 0, 1, 0, 2]
    _assert_grid_colours(opened, state, final, 3, 3, TICTACTOE_FILLS)

    state = opened.show(2)
    assert state["status"] == "Player 1 (X) to move"
    _assert_grid_colours(opened, state, steps[2][0]["observation"]["board"], 3, 3, TICTACTOE_FILLS)
    assert opened.requests == []


def _rps_episode():
    # Five rounds with all five signs; a low tie threshold makes player 2's lead a win.
    config = {"episodeSteps": 6, "signs": 5, "tieRewardThreshold": 2}
    rounds = [(0, 1), (1, 1), (2, 0), (3, 4), (4, 2)]
    return _kaggle_episode("rps", config, rounds), rounds


def test_rps_signs_and_score(open_page):
    env, rounds = _rps_episode()
    steps = env["steps"]
    assert [s[0]["status"] for s in steps] == ["ACTIVE"] * 5 + ["DONE"]
    opened = open_page(replay_page(game_js("rps"), _window_kaggle(env)))
    assert opened.page.evaluate("window.vecenvReplay.numSteps") == len(steps)

    state = opened.show(0)
    assert state["status"].startswith("Round 0:")
    img, scale = opened.canvas_pixels()
    colours = {c for _, c in RPS_SIGNS}
    assert all(_pixel(img, scale, x, y) not in colours for x, y in state["layout"]["boxes"])

    for t in range(1, len(steps)):
        state = opened.show(t)
        # Agent 0's sign is what agent 1 saw as its opponent's last action, and vice versa.
        signs = (
            steps[t][1]["observation"]["lastOpponentAction"],
            steps[t][0]["observation"]["lastOpponentAction"],
        )
        assert signs == rounds[t - 1]
        scores = [steps[t][k]["observation"]["reward"] for k in range(2)]
        names = [RPS_SIGNS[s][0] for s in signs]
        expected = f"Round {t}: {names[0]} vs {names[1]} \u2014 score {scores[0]} : {scores[1]}"
        assert state["status"].startswith(expected)
        img, scale = opened.canvas_pixels()
        boxes = state["layout"]["boxes"]
        assert [_pixel(img, scale, x, y) for x, y in boxes] == [RPS_SIGNS[s][1] for s in signs]

    assert state["status"] == "Round 5: Lizard vs Scissors \u2014 score -4 : 4 \u2014 Player 2 wins"
    assert opened.requests == []


def test_kaggle_get_player_injects_into_the_page(open_page):
    utils = pytest.importorskip("kaggle_environments.utils")
    rows, columns, moves = CONNECTX_CASES["5x8"]
    env = _connectx_episode(rows, columns, moves)
    steps = env["steps"]
    html = utils.get_player(_window_kaggle(env), replay_page(game_js("connectx")))
    assert html.count("<script>window.kaggle =") == 1
    opened = open_page(html)
    # No setStep: the page shows the step window.kaggle names, here the last one.
    opened.page.wait_for_selector(f'body[data-step="{len(steps) - 1}"]', state="attached")
    state = opened.state()
    assert state["numSteps"] == len(steps)
    assert "Player 1 (red) wins" in state["status"]
    assert opened.page.text_content("#title") == "ConnectX"
    board = steps[-1][0]["observation"]["board"]
    _assert_grid_colours(opened, state, board, rows, columns, CONNECTX_FILLS)
    assert opened.requests == []


def test_window_kaggle_step_and_controls_are_honoured(open_page):
    env = _tictactoe_episode([4, 0, 2, 8, 6])
    opened = open_page(
        replay_page(game_js("tictactoe"), _window_kaggle(env, step=2, controls=False))
    )
    opened.page.wait_for_selector('body[data-step="2"]', state="attached")
    assert opened.state()["step"] == 2
    assert opened.page.is_hidden("#controls")
    assert opened.page.is_visible("#board")


def test_playing_runs_to_the_last_step_and_stops(open_page):
    env = _tictactoe_episode([4, 0, 2, 8, 6])
    last = len(env["steps"]) - 1
    opened = open_page(
        replay_page(game_js("tictactoe"), _window_kaggle(env, step=0, playing=True, speed=0))
    )
    opened.page.wait_for_selector(f'body[data-step="{last}"]', state="attached")
    opened.page.wait_for_function("!window.vecenvReplay.playing")
    assert opened.state()["step"] == last
    assert opened.page.text_content("#play") == "Play"
    # play() at the last step starts over from the first and draws every step in turn.
    opened.page.evaluate(
        """() => {
            window.drawn = [];
            new MutationObserver(() => window.drawn.push(document.body.dataset.step))
                .observe(document.body, {attributes: true, attributeFilter: ["data-step"]});
            window.vecenvReplay.play();
        }"""
    )
    opened.page.wait_for_function("!window.vecenvReplay.playing")
    assert opened.state()["step"] == last
    drawn = [int(k) for k in opened.page.evaluate("window.drawn")]
    assert drawn[0] == 0 and drawn[-1] == last
    assert sorted(set(drawn)) == list(range(last + 1))


def test_slider_sets_the_step(open_page):
    env = _tictactoe_episode([4, 0, 2, 8, 6])
    opened = open_page(replay_page(game_js("tictactoe"), _window_kaggle(env)))
    opened.page.fill("#slider", "1")
    opened.page.wait_for_selector('body[data-step="1"]', state="attached")
    state = opened.state()
    assert state["status"] == "Player 2 (O) to move"
    board = env["steps"][1][0]["observation"]["board"]
    _assert_grid_colours(opened, state, board, 3, 3, TICTACTOE_FILLS)
