"""``vecenv arena``'s refusals: one line on stderr, exit status 2, nothing added."""

import pytest

from vecenv.arena import Arena
from vecenv.cli import main

from .helpers import RPS, SHORT_RPS, request


@pytest.mark.parametrize(
    "args, words",
    [
        (
            ["env", "add", "t", "--game", "tictactoe", "--config", "[1]", "--opponent", "random"],
            "need --config to be an object",
        ),
        (["env", "add", "t", "--game", "tictactoe", "--config", "{bad"], "must be JSON"),
        (["env", "add", "t", "--game", "tictactoe", "--config", '{"seat": 5}'], "seat must be"),
        (["env", "add", "t", "--game", "no_such_game"], "unknown game"),
        (["env", "add", "a b"], "letters, digits"),
        (["env", "add", "t", "--game", "tictactoe", "--class", "x:Y"], "not both"),
        (["agent", "add", "alice"], "give --env"),
        (["agents", "--env", "nope"], "no environment"),
    ],
)
def test_bad_requests_print_one_line(tmp_path, capsys, args, words):
    db = str(tmp_path / "arena.sqlite")
    assert main(["arena", *args, "--db", db]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1
    assert main(["arena", "env", "list", "--db", db]) == 0
    assert capsys.readouterr().out.strip().splitlines()[1:] == []  # no environment was added


def test_play_refuses_a_bad_config_file(tmp_path, capsys):
    config = tmp_path / "agent.json"
    config.write_text("{")
    assert main(["arena", "play", "--config", str(config)]) == 2
    assert "vecenv arena: error:" in capsys.readouterr().err
    config.write_text('{"url": "http://127.0.0.1:9", "env": "e", "agent": "a"}')
    assert main(["arena", "play", "--config", str(config)]) == 2
    assert "lacks pwd" in capsys.readouterr().err


def test_agents_shows_each_agents_mean_until_it_is_rated(tmp_path, capsys):
    db = str(tmp_path / "arena.sqlite")
    arena = Arena(db)
    arena.add_environment("rps", env_class=RPS, config=SHORT_RPS)
    for name, abandoned in (("alice", 2), ("bob", 1)):
        config = arena.add_agent("rps", name)
        runs = [r["run"] for r in arena.act("rps", request(config))["action_requests"]]
        arena.act("rps", request(config, to_abandon=runs[:abandoned]))  # each counts -1
    # carol played one run to +2 (paper twice against rock)
    carol = arena.add_agent("rps", "carol", url="")
    for act_no in range(2):
        run = arena.act("rps", request(carol, parallel_runs=False))["action_requests"][0]["run"]
        arena.act("rps", request(carol, [{"run": run, "act_no": act_no, "action": 1}]))
    arena.close()
    assert main(["arena", "agents", "--db", db]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].split() == ["env", "agent", "rating", "mean", "runs", "evaluated"]
    rows = {line.split()[1]: line.split()[2:] for line in lines[1:]}
    # not fully evaluated: no rating yet (not INITIAL_RATING's 0.000), the mean of the outcomes
    assert rows == {
        "alice": ["-", "-1", "2", "no"],
        "bob": ["-", "-1", "1", "no"],
        "carol": ["-", "2", "1", "no"],
    }
