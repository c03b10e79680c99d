"""Hostile requests: a run has one spelling, another agent's run is as unknown as one that does
not exist, and whatever a request holds, every run's history agrees with its state."""

import functools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from vecenv.arena import Arena, ArenaError
from vecenv.arena.models import RunRow
from vecenv.arena.protocol import MAX_RUN_ID, parse_run_id

from .helpers import RPS, SHORT_RPS, assert_rps_runs_and_ratings, request, rows_of, snapshot

# Spellings of run 1 (or 10) that int() or str.isdigit accept, and identifiers past the column.
ALIASES = [
    "01",
    "001",
    "\u0661",  # ARABIC-INDIC DIGIT ONE
    "\uff11",  # FULLWIDTH DIGIT ONE
    "+1",
    " 1",
    "1\n",
    "1_0",  # int() reads 10
    "1.0",
    "0",
    "-1",
    "",
    "\u00b2",  # SUPERSCRIPT TWO: isdigit, yet no int
    "9" * 30,
    "9" * 5000,  # past int()'s digit limit
    str(MAX_RUN_ID + 1),
    str(2**63),
]


@pytest.fixture
def arena(tmp_path):
    arena = Arena(str(tmp_path / "arena.sqlite"))
    arena.add_environment("rps", env_class=RPS, config=SHORT_RPS)
    yield arena
    arena.close()


def _refused(arena, body, status):
    before = snapshot(arena)
    with pytest.raises(ArenaError) as info:
        arena.act("rps", body)
    assert info.value.status == status, info.value.message
    assert snapshot(arena) == before
    return info.value


def test_parse_run_id_takes_one_spelling():
    assert [parse_run_id(t) for t in ["1", "13", str(MAX_RUN_ID)]] == [1, 13, MAX_RUN_ID]
    assert [parse_run_id(t) for t in ALIASES] == [None] * len(ALIASES)
    assert parse_run_id(13) is None and parse_run_id(None) is None


@pytest.mark.parametrize("alias", ALIASES)
def test_other_spellings_of_a_run_are_refused(arena, alias):
    alice = arena.add_agent("rps", "alice")
    runs = [r["run"] for r in arena.act("rps", request(alice))["action_requests"]]
    assert runs[0] == "1"
    error = _refused(arena, request(alice, [{"run": alias, "act_no": 0, "action": 1}]), 400)
    assert "identifier" in error.message and len(error.message) < 300
    _refused(arena, request(alice, to_abandon=["1", alias]), 400)


def test_aliases_cannot_play_or_rate_one_run_several_times(arena):
    alice = arena.add_agent("rps", "alice")
    arena.act("rps", request(alice))
    _refused(arena, request(alice, to_abandon=["1", "01", "001"]), 400)
    moves = [{"run": r, "act_no": 0, "action": 1} for r in ["1", "01", "\u0661"]]
    _refused(arena, request(alice, moves), 400)
    _refused(arena, request(alice, moves[:1] * 2), 409)  # one spelling twice
    assert arena.agents("rps")[0]["runs"] == 0
    reply = arena.act("rps", request(alice, moves[:1], to_abandon=["2"]))
    assert reply["finished_runs"] == {"2": -1}
    assert arena.agents("rps")[0]["runs"] == 1
    assert_rps_runs_and_ratings(arena, 0)


def test_another_agents_run_is_answered_as_one_that_does_not_exist(arena):
    alice = arena.add_agent("rps", "alice")
    bob = arena.add_agent("rps", "bob")
    arena.act("rps", request(alice))
    theirs = arena.act("rps", request(bob))["action_requests"][0]["run"]
    missing = str(MAX_RUN_ID)
    for body in (
        lambda run: request(alice, [{"run": run, "act_no": 0, "action": 1}]),
        lambda run: request(alice, to_abandon=[run]),
    ):
        told = _refused(arena, body(theirs), 404)
        unknown = _refused(arena, body(missing), 404)
        assert told.message.replace(theirs, missing) == unknown.message


@pytest.mark.parametrize(
    "field, value, words",
    [
        ("agent", "\ud800", "'agent'"),  # a lone surrogate: no UTF-8 for the database
        ("agent", "alice\n", "'agent'"),
        ("agent", "a" * 65, "'agent'"),
        ("agent", "al\x00ice", "'agent'"),
        ("pwd", "\ud800", "'pwd'"),
        ("pwd", "p" * 10_000, "'pwd'"),
    ],
)
def test_names_and_passwords_that_cannot_be_are_400(arena, field, value, words):
    alice = arena.add_agent("rps", "alice")
    error = _refused(arena, request(alice) | {field: value}, 400)
    assert words in error.message


def _spellings(run):
    return st.sampled_from([str(run), "0" + str(run), "00" + str(run), chr(0x660 + run % 10)])


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_stored_history_always_agrees_with_stored_state(tmp_path_factory, data):
    """Requests of aliased, repeated, foreign and missing runs, accepted or refused: afterwards
    every run's history is as long as its state's steps, every outcome is its history's score,
    every rating is its outcomes'; and the other agent's rows are untouched."""
    arena = Arena(str(tmp_path_factory.mktemp("arena") / "arena.sqlite"))  # one per example
    try:
        arena.add_environment("rps", env_class=RPS, config=SHORT_RPS)
        alice, bob = arena.add_agent("rps", "alice"), arena.add_agent("rps", "bob")
        arena.act("rps", request(bob))  # bob's open runs, for alice to try
        arena.act("rps", request(alice))
        _play_hostile(arena, alice, data)
    finally:
        arena.close()


def _play_hostile(arena, alice, data):
    alice_id = rows_of(arena, "alice")[0][0]
    bob_before = rows_of(arena, "bob")
    for _ in range(data.draw(st.integers(1, 4), label="requests")):
        with arena.Session() as session:
            runs = session.scalars(select(RunRow)).all()
        played = {r.id: len(json.loads(r.history)) for r in runs}
        played[MAX_RUN_ID] = 0
        # mostly alice's open runs (so that two spellings of one can meet in a request), else
        # bob's, finished or missing ones
        mine = sorted(r.id for r in runs if r.agent_id == alice_id and not r.finished)
        others = sorted(set(played) - set(mine))
        pick = st.sampled_from(mine) | st.sampled_from(others) if mine else st.sampled_from(others)
        on = functools.partial(_action, played=played)
        actions = data.draw(st.lists(pick.flatmap(on), max_size=4), label="actions")
        abandon = data.draw(st.lists(pick.flatmap(_spellings), max_size=2), label="to_abandon")
        try:
            arena.act("rps", request(alice, actions, to_abandon=abandon))
        except ArenaError as exc:
            assert 400 <= exc.status < 500, exc.message
        assert_rps_runs_and_ratings(arena, 0)
        assert rows_of(arena, "bob") == bob_before


def _action(run, played):
    """An action on ``run``, mostly at its current number (so aliases of it would be played)."""
    return st.fixed_dictionaries(
        {
            "run": _spellings(run),
            "act_no": st.just(played[run]) | st.integers(0, 2),
            "action": st.integers(0, 2),
        }
    )
