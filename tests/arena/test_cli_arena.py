"""``vecenv arena``'s refusals: one line on stderr, exit status 2, nothing added."""

import pytest

from vecenv.cli import main


@pytest.mark.parametrize(
    "args, words",
    [
        (
            ["env", "add", "t", "--game", "tictactoe", "--config", "[1]", "--opponent", "random"],
            "need --config to be an object",
        ),
        (["env", "add", "t", "--game", "tictactoe", "--config", "{bad"], "must be JSON"),
        (["env", "add", "t", "--game", "tictactoe", "--config", '{"seat": 5}'], "seat must be"),
        (["env", "add", "t", "--game", "chess"], "unknown game"),
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
