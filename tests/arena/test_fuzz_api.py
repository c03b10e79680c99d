"""The arena's HTTP API fuzzed from its OpenAPI description (``vecenv/arena/openapi.json``) with
schemathesis: requests that follow the schema and requests that break it, sent as an agent that
exists (alice) or as anyone, on runs that exist or not. No answer may be a 500, and no request may
change another agent's (bob's) rows."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from vecenv.arena import Arena
from vecenv.arena.app import OPENAPI, create_app
from vecenv.arena.models import RunRow

from .helpers import RPS, SHORT_RPS, request, rows_of

schemathesis = pytest.importorskip("schemathesis")

SCHEMA = schemathesis.openapi.from_dict(json.loads(OPENAPI.read_text()))
CASES = st.one_of(
    SCHEMA.as_strategy(schemathesis.GenerationMode.POSITIVE),
    SCHEMA.as_strategy(schemathesis.GenerationMode.NEGATIVE),
)
# Values the schema's own negative cases rarely reach: run identifiers that int() or isdigit
# take (other scripts' digits, leading zeros, signs), past the column, past int()'s digit limit;
# text with lone surrogates, which no database can store.
ODD_DIGITS = "0123456789\u0660\u0661\u06f1\u00b2\uff11+-_. "
ODD_IDS = st.one_of(
    st.text(st.sampled_from(ODD_DIGITS), min_size=1, max_size=12),
    st.integers(2**31, 10**40).map(str),
    st.just("9" * 5000),
)
ODD_TEXT = st.text(
    st.characters() | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    min_size=1,
    max_size=8,
)


@pytest.fixture
def served(tmp_path):
    """An arena with alice and bob of rps, both with open runs and bob with finished ones; its
    Flask app."""
    arena = Arena(str(tmp_path / "arena.sqlite"))
    arena.add_environment("rps", env_class=RPS, config=SHORT_RPS)
    alice, bob = arena.add_agent("rps", "alice"), arena.add_agent("rps", "bob")
    runs = [r["run"] for r in arena.act("rps", request(bob))["action_requests"]]
    arena.act("rps", request(bob, to_abandon=runs[:2]))
    arena.act("rps", request(alice))
    yield arena, create_app(arena), alice
    arena.close()


def test_the_served_description_is_the_packaged_one(served):
    _, app, _ = served
    answer = app.test_client().get("/openapi.json")
    assert answer.status_code == 200 and answer.get_json() == json.loads(OPENAPI.read_text())


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=CASES, data=st.data())
def test_fuzzed_requests_are_never_500_and_leave_others_data_alone(served, case, data):
    arena, app, alice = served
    bob_before = rows_of(arena, "bob")
    if "env" in case.path_parameters and data.draw(st.booleans(), label="the arena's env"):
        case.path_parameters["env"] = "rps"
    if "agent" in case.path_parameters and data.draw(st.booleans(), label="an agent of it"):
        case.path_parameters["agent"] = data.draw(st.sampled_from(["alice", "bob"]))
    if isinstance(case.body, dict) and data.draw(st.booleans(), label="as alice"):
        case.body.update(agent="alice", pwd=alice["pwd"])
        runs = st.sampled_from(_run_ids(arena)) | ODD_IDS
        actions = case.body.get("actions")
        if isinstance(actions, list) and data.draw(st.booleans(), label="chosen runs"):
            for action in actions:
                if isinstance(action, dict):
                    action["run"] = data.draw(runs)
        if isinstance(case.body.get("to_abandon"), list):
            case.body["to_abandon"] = data.draw(st.lists(runs, max_size=3))
    if isinstance(case.body, dict) and data.draw(st.booleans(), label="odd credentials"):
        case.body[data.draw(st.sampled_from(["agent", "pwd"]))] = data.draw(ODD_TEXT)
    if "run" in case.path_parameters and data.draw(st.booleans(), label="odd run in the path"):
        case.path_parameters["run"] = data.draw(ODD_IDS.filter(lambda t: len(t) < 100))
    response = case.call(app=app)
    assert response.status_code < 500, (case.method, case.formatted_path, response.text[:300])
    assert rows_of(arena, "bob") == bob_before


def _run_ids(arena):
    with arena.Session() as session:
        return [str(run_id) for run_id in session.scalars(select(RunRow.id))]
