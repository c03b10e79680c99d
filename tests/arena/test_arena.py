"""The arena without HTTP: administration, protocol v1's requests, ratings, refusals."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from vecenv.arena import Arena, ArenaError
from vecenv.arena.models import AgentRow, RunRow
from vecenv.arena.passwords import check_password

from .helpers import (
    ROUNDS,
    RPS,
    SHORT_RPS,
    TICTACTOE,
    answer,
    expected_ratings,
    play_runs,
    random_moves,
    request,
    rps_score,
    snapshot,
)


@pytest.fixture
def arena(tmp_path):
    arena = Arena(str(tmp_path / "arena.sqlite"))
    arena.add_environment("ttt", env_class=TICTACTOE, config={"opponent": "random"})
    arena.add_environment("rps", env_class=RPS, config=SHORT_RPS, name="Short rps")
    yield arena
    arena.close()


# -- administration ------------------------------------------------------------------------------


def test_agents_get_configs_and_only_salted_hashes_are_stored(arena):
    a = arena.add_agent("ttt", "alice", url="http://127.0.0.1:9")
    b = arena.add_agent("ttt", "bob")
    assert set(a) == {"protocol_version", "env", "agent", "pwd", "url"}
    assert (a["env"], a["agent"], a["url"], a["protocol_version"]) == (
        "ttt",
        "alice",
        "http://127.0.0.1:9",
        1,
    )
    assert len(a["pwd"]) >= 40 and a["pwd"] != b["pwd"]
    with arena.Session() as session:
        stored = {r.name: r.password_hash for r in session.scalars(select(AgentRow))}
    assert a["pwd"] not in stored["alice"]
    assert check_password(a["pwd"], stored["alice"])
    assert not check_password(b["pwd"], stored["alice"])
    # the same password under another salt hashes differently
    assert stored["alice"].split("$")[1] != stored["bob"].split("$")[1]


def test_administration_refuses_what_it_cannot_keep(arena):
    arena.add_agent("ttt", "alice")
    with pytest.raises(ValueError, match="exists already"):
        arena.add_agent("ttt", "alice")
    arena.add_agent("rps", "alice")  # names are per environment
    with pytest.raises(ValueError, match="no environment"):
        arena.add_agent("nope", "carol")
    with pytest.raises(ValueError, match="letters, digits"):
        arena.add_agent("ttt", "a b")
    with pytest.raises(ValueError, match="exists already"):
        arena.add_environment("ttt", env_class=TICTACTOE)
    with pytest.raises(ValueError, match="no GenericEnvironment"):
        arena.add_environment("x", env_class="vecenv.arena.arena:Arena")
    with pytest.raises(ValueError, match="unknown game"):
        arena.add_environment("x", game="no_such_game")
    with pytest.raises(ValueError, match="cannot load"):
        arena.add_environment("x", env_class="vecenv.aisys.environment:Nothing")
    with pytest.raises(ValueError, match="nobody"):
        arena.add_environment("x", env_class=TICTACTOE, config={"opponent": "nobody"})
    assert [e["identifier"] for e in arena.environments()] == ["rps", "ttt"]
    assert arena.environment("rps")["display_name"] == "Short rps"


# -- playing ---------------------------------------------------------------------------------------


def test_first_request_starts_runs_and_asks_for_actions(arena):
    config = arena.add_agent("ttt", "alice")
    reply = arena.act("ttt", request(config))
    assert set(reply) == {"action_requests", "active_runs", "messages", "finished_runs"}
    requests = reply["action_requests"]
    assert len(requests) == 5  # NUMBER_OF_ACTION_REQUESTS
    assert [r["act_no"] for r in requests] == [0] * 5
    assert reply["active_runs"] == [r["run"] for r in requests]
    assert requests[0]["percept"]["legal"] == list(range(9))
    # asking again without answering gives the same requests, no new runs
    assert arena.act("ttt", request(config))["action_requests"] == requests
    other = arena.add_agent("ttt", "bob")
    assert len(arena.act("ttt", request(other, parallel_runs=False))["action_requests"]) == 1


def test_runs_are_played_to_their_outcome_and_rated(arena):
    config = arena.add_agent("rps", "alice")
    finished, _ = play_runs(arena, "rps", config, 30, random_moves(1))
    live = arena._environment("rps")
    with arena.Session() as session:
        agent = session.scalars(select(AgentRow)).one()
        runs = session.scalars(
            select(RunRow).where(RunRow.finished.is_(True)).order_by(RunRow.finish_no)
        ).all()
    assert {str(r.id): json.loads(r.outcome) for r in runs} == finished
    assert [r.finish_no for r in runs] == list(range(1, len(runs) + 1))
    for run in runs:
        history = json.loads(run.history)
        assert len(history) == ROUNDS
        # the rock opponent's reply is each action's extra info; the outcome is the score
        assert {extra for _, extra in history} == {0}
        assert json.loads(run.outcome) == rps_score(history)
    outcomes = [json.loads(r.outcome) for r in runs]
    current, best, evaluated = expected_ratings(outcomes, live.settings)
    assert agent.total_runs == len(runs)
    assert agent.current_rating == pytest.approx(current)
    assert agent.best_rating == pytest.approx(best)
    assert agent.fully_evaluated == evaluated
    listed = arena.agents("rps")
    assert listed[0]["rating"] == agent.best_rating and listed[0]["runs"] == len(runs)


def test_refused_action_leaves_the_run_and_asks_again(arena):
    config = arena.add_agent("ttt", "alice")
    first = arena.act("ttt", request(config))["action_requests"][0]
    before = snapshot(arena)
    bad = {"run": first["run"], "act_no": 0, "action": 9}  # off the board
    reply = arena.act("ttt", request(config, [bad]))
    assert [m["type"] for m in reply["messages"]] == ["error"]
    assert reply["messages"][0]["run"] == first["run"]
    assert "out of range" in reply["messages"][0]["content"]
    assert reply["action_requests"][0] == first  # the same run, the same act_no
    assert snapshot(arena) == before


def test_outstanding_runs_are_asked_first(arena):
    config = arena.add_agent("ttt", "alice")
    requests = arena.act("ttt", request(config))["action_requests"]
    reply = arena.act("ttt", request(config, answer(requests[:2], random_moves())))
    # the three unanswered runs come back; no new runs while they are open
    assert [r["run"] for r in reply["action_requests"]] == [r["run"] for r in requests[2:]]


def test_abandoned_runs_count_as_lost(arena):
    config = arena.add_agent("ttt", "alice")
    run = arena.act("ttt", request(config))["action_requests"][0]["run"]
    reply = arena.act("ttt", request(config, to_abandon=[run]))
    assert reply["finished_runs"] == {run: -1}
    assert reply["messages"][0]["type"] == "warning"
    assert run not in reply["active_runs"]
    assert arena.agents("ttt")[0]["current_rating"] == -1


def _refusal(arena, env, body, status, match):
    before = snapshot(arena)
    with pytest.raises(ArenaError, match=match) as info:
        arena.act(env, body)
    assert info.value.status == status
    assert snapshot(arena) == before


def test_refusals_are_4xx_and_write_nothing(arena):
    alice = arena.add_agent("ttt", "alice")
    bob = arena.add_agent("ttt", "bob")
    mine = arena.act("ttt", request(alice))["action_requests"]
    theirs = arena.act("ttt", request(bob))["action_requests"][0]
    good = answer(mine[:1], random_moves())
    _refusal(arena, "nope", request(alice), 404, "no environment")
    _refusal(arena, "ttt", request(alice) | {"pwd": "guess"}, 401, "wrong password")
    _refusal(arena, "ttt", request(alice) | {"agent": "carol"}, 401, "unknown agent")
    _refusal(arena, "rps", request(alice), 401, "unknown agent")  # agents are per environment
    _refusal(arena, "ttt", {"agent": "alice"}, 401, "no password")
    _refusal(arena, "ttt", [], 400, "JSON object")
    _refusal(arena, "ttt", request(alice) | {"protocol_version": 2}, 400, "protocol version")
    _refusal(arena, "ttt", request(alice) | {"actions": {}}, 400, "list")
    _refusal(arena, "ttt", request(alice, [{"run": 1, "act_no": 0}]), 400, "identifier")
    _refusal(arena, "ttt", request(alice, [{"run": "1", "act_no": -1, "action": 0}]), 400, "act_no")
    _refusal(arena, "ttt", request(alice, [{"run": "1", "act_no": 0}]), 400, "no action")
    # a valid action next to a bad one: the valid one is not applied either
    stale = dict(good[0], act_no=1)
    _refusal(arena, "ttt", request(alice, good + [stale]), 409, "twice")
    _refusal(arena, "ttt", request(alice, [stale]), 409, "stale")
    other = {"run": theirs["run"], "act_no": 0, "action": 4}
    # another agent's run is answered as one that does not exist
    _refusal(arena, "ttt", request(alice, good + [other]), 404, "no run")
    _refusal(arena, "ttt", request(alice, [dict(good[0], run="999")]), 404, "no run")
    _refusal(arena, "ttt", request(alice, [dict(good[0], run="x1")]), 400, "identifier")
    _refusal(arena, "ttt", request(alice, to_abandon=[theirs["run"]]), 404, "no run")
    arena.add_environment("keep", env_class="tests.arena.helpers:Unabandonable", config=SHORT_RPS)
    keeper = arena.add_agent("keep", "alice")
    run = arena.act("keep", request(keeper))["action_requests"][0]["run"]
    _refusal(arena, "keep", request(keeper, to_abandon=[run]), 400, "abandoned")
    # after all that, the valid action alone is applied
    reply = arena.act("ttt", request(alice, good))
    assert not [m for m in reply["messages"] if m["type"] == "error"]


def test_a_finished_run_takes_no_more_actions(arena):
    config = arena.add_agent("rps", "alice")
    finished, _ = play_runs(arena, "rps", config, 1, random_moves())
    run = next(iter(finished))
    _refusal(
        arena,
        "rps",
        request(config, [{"run": run, "act_no": ROUNDS, "action": 0}]),
        409,
        "finished",
    )


def test_a_failing_plugin_is_a_500_and_writes_nothing(arena):
    arena.add_environment("bug", env_class="tests.arena.helpers:Failing", config=SHORT_RPS)
    config = arena.add_agent("bug", "alice")
    requests = arena.act("bug", request(config))["action_requests"]
    fine = {"run": requests[0]["run"], "act_no": 0, "action": 1}
    failing = {"run": requests[1]["run"], "act_no": 0, "action": 2}
    _refusal(arena, "bug", request(config, [fine, failing]), 500, "a bug in the plugin")
    arena.act("bug", request(config, [fine]))  # the arena goes on


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    body=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(
                    ["agent", "pwd", "actions", "run", "act_no", "action", "to_abandon"]
                ),
                inner,
                max_size=4,
            )
        ),
        max_leaves=10,
    )
)
def test_garbage_is_refused_with_4xx(arena, body):
    before = snapshot(arena)
    with pytest.raises(ArenaError) as info:
        arena.act("ttt", body)
    assert 400 <= info.value.status < 500
    assert snapshot(arena) == before


def test_pages_show_the_leaderboard_agents_and_runs(arena):
    config = arena.add_agent("rps", "alice")
    finished, _ = play_runs(arena, "rps", config, 3, random_moves())
    page = arena.view_env("rps")
    assert "Short rps" in page and "alice" in page
    assert "alice" in arena.view_agent("rps", "alice")
    run = next(iter(finished))
    assert "<html" in arena.view_run("rps", run).lower()
    open_run = arena.act("rps", request(config))["action_requests"][0]["run"]
    with pytest.raises(ArenaError, match="in progress") as info:
        arena.view_run("rps", open_run)  # only its agent sees a run in progress
    assert info.value.status == 403
    for call, args in [
        (arena.view_agent, ("rps", "bob")),
        (arena.view_run, ("rps", "999")),
        (arena.view_run, ("ttt", run)),  # a run of another environment
        (arena.view_env, ("nope",)),
    ]:
        with pytest.raises(ArenaError) as info:
            call(*args)
        assert info.value.status == 404


@pytest.mark.parametrize("game", ["cartpole", "connectx"])
def test_games_are_added_by_name_and_played(arena, game):
    from vecenv.arena.client import random_policy

    env = arena.add_environment(game)
    assert env["env_class"].endswith({"cartpole": ":CartPole", "connectx": ":ConnectX"}[game])
    config = arena.add_agent(game, "alice")
    finished, _ = play_runs(arena, game, config, 3, random_policy(0))
    assert all(isinstance(v, int | float) for v in finished.values())
    assert arena.agents(game)[0]["runs"] == len(finished) >= 3
