"""The whole command line under hostile arguments (hypothesis, in-process through
``vecenv.cli.main``): every subcommand, its every option, values drawn from what an attacker or a
careless user types. Whatever comes, the exit status is 0, 1 or 2, an error is one line on
stderr, and nothing prints a traceback.

Each example's work is bounded: the calls that would start long work (a training loop, matches,
a benchmark, a server, a game's checks, a Ray cluster) are replaced by one that raises ``Work``,
so what is fuzzed is everything a command does with its arguments before that (parsing, checks,
files read, configurations built); the work itself is tested elsewhere. Files are written only
under a temporary folder (the current directory of the test), or where they cannot be.
"""

import argparse

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vecenv.cli
from vecenv.cli import build_parser, main


class Work(Exception):
    """A stand-in for work a command would start: the example ends here."""


def _stop(*args, **kwargs):
    raise Work("the work would start here")


def _round_robin(game, agents, *args, **kwargs):
    from vecenv import tournament

    for agent in agents:  # the entrants are read as the real round robin reads them
        tournament.agent(agent, game)
    raise Work("the matches would start here")


STUBS = [
    ("vecenv.cli.train", "play_episodes", _stop),
    ("vecenv.cli.ppo", "play_episodes", _stop),
    ("vecenv.ppo", "train", _stop),
    ("vecenv.ppo.league", "train", _stop),
    ("vecenv.alphazero", "train", _stop),
    ("vecenv.selfplay", "play", _stop),
    ("vecenv.tournament", "round_robin", _round_robin),
    ("vecenv.cli.bench", "make_ours", _stop),
    ("vecenv.cli.bench", "make_theirs", _stop),
    ("vecenv.cli.bench", "measure", _stop),
    ("vecenv.cli.bench_gate", "measure_run", _stop),
    ("vecenv.cli.bench_gate", "history", _stop),
    ("vecenv.cli.bench_ref", "run", _stop),
    ("vecenv.arena.app", "serve", _stop),
    ("vecenv.arena.client", "play", _stop),
    ("vecenv.guarded_check", "run_checks", _stop),
    ("vecenv.warm", "warm", _stop),  # compiling every game is minutes of work
    ("vecenv.cli.play", "connect_ray", _stop),
    ("vecenv.cli.tournament", "connect_ray", _stop),
]


def leaves(parser, path=()):
    """``(command words, parser)`` of every subcommand."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for name, sub in subs[0].choices.items():
        yield from leaves(sub, (*path, name))


COMMANDS = list(leaves(build_parser()))
DEEP = "[" * 5000 + "]" * 5000
HOSTILE = [
    "", " ", "-1", "0", "1", "2", "7", "99999", "2147483648", str(2**64), "1e8", "1e8,1e8",
    "100000000,100000000", "nan", "inf", "-inf", "1e309", "0x10", "\u0661", "\x00", "\U0001f642",
    "nosuch", "os:system", "shutil:rmtree", "numpy:argmax", "mcts", "mcts:0", "mcts:16777216",
    "random", "negamax", "connectx", "CONNECTX", "tictactoe", "rps", "cartpole", "CartPole-v1",
    "gym.CartPole-v1", "gym.", "a=b", "rows=1000", "rows=" + DEEP, DEEP, '{"a": ' + DEEP + "}",
    "{}", "[1]", "file:///etc/passwd", "http://127.0.0.1:9", "http://h:99999/", "Alice",
    "alice.", "x" * 300, "--", "-",
]  # fmt: skip
# Paths a command reads; and where one may write: under the test's folder, or nowhere.
READ = ["/etc/passwd", "/dev/null", "/", "/proc/nope", "missing.pt", "junk.pt", "agent.json"]
WRITE = ["out", "out/x", "a.html", "r.json", "p.png", "db.sqlite", "/proc/nope/x", "", "\x00"]
WRITES = {
    "--run-dir", "--render-to", "--replay", "--html", "--save", "--plot", "--out", "--db", "--dir",
}  # fmt: skip
READS = {"--policy", "--compare", "--history"}


# What a user would type, so that examples get past the first check to the later ones: by
# option (or positional) name, else by the option's type.
PLAUSIBLE = {
    "--env": ["CartPole-v1", "cartpole", "connectx", "tictactoe", "gym.CartPole-v1"],
    "game": ["connectx", "tictactoe", "rps", "cartpole", "g"],
    "--agents": ["random", "negamax", "mcts:2", "junk.pt", "tests.test_cli_fuzz:policy"],
    "--agent": ["random", "mcts:2", "negamax", "tests.test_cli_fuzz:percept_policy"],
    "--hidden": ["8", "8,8"],
    "--opponents": ["random", "random,negamax"],
    "--game": ["connectx", "tictactoe"],
    "--class": ["vecenv.aisys.environment:TicTacToe", "vecenv.arena:Arena"],
    "--url": ["http://127.0.0.1:9"],
    "--opponent": ["random", "negamax"],
    "identifier": ["connectx", "tictactoe", "t1"],
    "name": ["alice", "bob", "walker"],
    "--name": ["A name"],
    "--only": ["spec", "batch"],
    "--num-envs": ["1,8", "8"],
    "--threads": ["1", "2"],
    "--host": ["127.0.0.1"],
    "--fail-over": ["10%"],
    "--compare-ref": ["HEAD"],
}
TYPED = {
    "an integer": ["1", "2", "8", "3"],
    "a number": ["0.5", "1", "0.1"],
    "a port": ["0", "8000"],
    "size": ["64M", "1K"],
    "int": ["1", "2"],
    "float": ["1", "0.5"],
    "seed": ["0", "7"],
}
CONFIG = {
    ("arena", "env", "add"): ['{"opponent": "random"}', "{}", '{"seat": 1}'],
    ("arena", "play"): ["agent.json"],
}
KEYS = ["rows=5", "columns=6", "inarow=3", "episodeSteps=9"]


def values(action, name, command, draw, hostility):
    if name in WRITES:
        return draw(st.sampled_from(WRITE))
    if name in READS or (command == ("arena", "play") and name == "--config"):
        return draw(st.sampled_from(READ + HOSTILE[:8] + CONFIG[("arena", "play")]))
    if hostility and draw(st.integers(0, hostility)) == 0:
        return draw(
            st.one_of(
                st.sampled_from(HOSTILE),
                st.integers(-(10**20), 10**20).map(str),
                st.floats().map(str),
                st.text(max_size=12),
            )
        )
    if name == "--config":
        return draw(st.sampled_from(CONFIG.get(command, KEYS)))
    typed = getattr(action.type, "__name__", None)
    plausible = TYPED.get(typed) or PLAUSIBLE.get(name) or ["1", "x"]
    return draw(st.sampled_from(plausible))


def policy(obs, legal):
    """A Python policy a command line may name (``module:function``): the first legal move."""
    import numpy as np

    return np.argmax(legal, axis=1).astype(np.int64)


def percept_policy(percept):
    return percept["legal"][0]


@st.composite
def invocations(draw):
    words, parser = draw(st.sampled_from(COMMANDS))
    argv = list(words)
    # Half the examples type what a user would (they reach the later checks), half put a
    # hostile value in about one place in three.
    hostility = draw(st.sampled_from([0, 2]))
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        name = action.option_strings[-1] if action.option_strings else action.dest
        if action.option_strings and not action.required and draw(st.integers(0, 3)) != 0:
            continue  # an optional option given one time in four
        if action.nargs == 0:
            argv.append(draw(st.sampled_from(action.option_strings)))
            continue
        count = {None: 1, "?": 1, "*": draw(st.integers(0, 3)), "+": draw(st.integers(1, 3))}
        count = count.get(action.nargs, action.nargs)
        if action.option_strings:
            argv.append(draw(st.sampled_from(action.option_strings)))
        for _ in range(count):
            if action.choices and draw(st.booleans()):
                argv.append(str(draw(st.sampled_from(list(action.choices)))))
            else:
                argv.append(values(action, name, tuple(words), draw, hostility))
    if hostility and draw(st.integers(0, 9)) == 0:  # now and then what no command takes
        argv.insert(draw(st.integers(0, len(argv))), draw(st.sampled_from(HOSTILE + ["--x"])))
    return argv


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    import importlib

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("VECENV_TRACEBACK", raising=False)
    (tmp_path / "junk.pt").write_bytes(b"PK\x03\x04 not a checkpoint")
    (tmp_path / "agent.json").write_text(
        '{"url": "http://127.0.0.1:9", "env": "e", "agent": "a", "pwd": "p"}'
    )
    for module, name, stub in STUBS:
        monkeypatch.setattr(importlib.import_module(module), name, stub)
    return tmp_path


def check(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), (argv, code, err[-2000:])
    assert "Traceback" not in err, (argv, err[-2000:])
    errors = [line for line in err.splitlines() if line.strip()]
    errors = [line for line in errors if not line.startswith("vecenv: warning:")]
    if code:
        assert len(errors) == 1, (argv, err[-2000:])
        assert errors[0].startswith("vecenv"), (argv, errors[0][:300])
    return code, errors


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(argv=invocations())
def test_hostile_command_lines_exit_0_1_or_2_with_one_line(sandbox, capsys, argv):
    check(argv, capsys)


@pytest.mark.parametrize(
    "argv",
    [
        ["train", "ppo", "--env", "CartPole-v1", "--hidden", "1e8,1e8"],
        ["train", "ppo", "--env", "CartPole-v1", "--hidden", "100000000,100000000"],
        ["train", "eval", "--policy", "/etc/passwd"],
        ["play", "connectx", "--agents", "os:system", "random"],
        ["tournament", "connectx", "--agents", "os:system", "random"],
        ["arena", "agents", "--db", "/proc/nope/x.sqlite"],
        ["arena", "agents", "--db", "nosuch://x"],
        ["arena", "serve", "--port", "-1"],
        ["arena", "serve", "--port", "99999"],
        ["arena", "serve", "--threads", "0"],
        ["train", "alphazero", "--env", "tictactoe", "--opponents", "nosuch", "--iterations", "1"],
        ["arena", "play", "--config", "agent.json", "--agent", "os:system"],
        ["new", "x", "--dir", "/proc/nope"],
        ["arena", "env", "add", "e", "--game", "connectx", "--config", DEEP],
        ["play", "connectx", "--agents", "random", "random", "--config", "rows=" + DEEP],
    ],
)
def test_the_issues_invocations_are_one_line_errors(sandbox, capsys, argv):
    code, errors = check(argv, capsys)
    assert code == 2, errors


def test_a_missing_database_driver_is_one_line(sandbox, capsys, monkeypatch):
    import sys

    for driver in ("psycopg2", "psycopg"):
        monkeypatch.setitem(sys.modules, driver, None)  # import psycopg2: ImportError
    code, errors = check(["arena", "agents", "--db", "postgresql://u@127.0.0.1:9/x"], capsys)
    assert code == 2 and "driver is not installed" in errors[0]


def test_an_arena_url_that_is_no_http_is_one_line(sandbox, capsys):
    (sandbox / "file.json").write_text(
        '{"url": "file:///etc/passwd", "env": "e", "agent": "a", "pwd": "p"}'
    )
    code, errors = check(["arena", "play", "--config", "file.json"], capsys)
    assert code == 2 and "must be http(s)" in errors[0]


def test_an_unforeseen_failure_is_one_line_and_status_1(sandbox, capsys, monkeypatch):
    def broken(args, out):
        raise RuntimeError("a bug\nover two lines")

    monkeypatch.setattr(vecenv.cli.listing, "cmd_list", broken, raising=False)
    parser = build_parser()
    monkeypatch.setattr(vecenv.cli, "build_parser", lambda: parser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            action.choices["list"].set_defaults(func=broken)
    code, errors = check(["list"], capsys)
    assert code == 1 and "RuntimeError: a bug over two lines" in errors[0]
    assert "VECENV_TRACEBACK=1" in errors[0]


def test_a_module_of_python_itself_is_never_imported_as_a_policy_or_class(sandbox, capsys):
    import sys

    for argv in (
        ["play", "connectx", "--agents", "antigravity:fly", "random"],
        ["arena", "env", "add", "e", "--class", "antigravity:Fly", "--db", "db.sqlite"],
        ["arena", "play", "--config", "agent.json", "--agent", "this:that"],
    ):
        code, errors = check(argv, capsys)
        assert code == 2 and "is part of Python itself" in errors[0], errors
    assert "antigravity" not in sys.modules and "this" not in sys.modules
