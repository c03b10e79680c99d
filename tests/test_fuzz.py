"""Random input never crashes a kernel: it is either accepted or refused with ValueError, and a
refusal leaves every episode as it was."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import vecenv
from vecenv import registry

GAMES = registry.list_envs()
N = 4
FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

dtypes = st.sampled_from(
    [np.int8, np.int32, np.int64, np.uint8, np.uint64, np.float32, np.float64, np.bool_]
)
shapes = st.sampled_from([(N,), (N, 1), (N, 1, 1), (N - 1,), (N, 2), (), (1,)])


@pytest.fixture(scope="module", params=GAMES)
def engine(request):
    return vecenv.make(request.param, num_envs=N, seed=0)


@FUZZ
@given(data=st.data())
def test_random_action_arrays(engine, data):
    dtype = data.draw(dtypes)
    shape = data.draw(shapes)
    if engine.spec.action.shape and shape in ((N,), (N, 1)):
        shape = (N,) + engine.spec.action.shape if data.draw(st.booleans()) else shape
    actions = data.draw(hnp.arrays(dtype, shape))
    before = engine.get_state()
    try:
        engine.step(actions)
    except ValueError:
        np.testing.assert_array_equal(engine.get_state(), before)
    else:
        # Every episode either advanced by one step or was restarted by autoreset.
        after = engine.states["step"]
        assert ((after == before["step"] + 1) | (after == 0)).all()


field_values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-10, 10),
    st.integers(-(2**63), 2**63 - 1),
)


@FUZZ
@given(data=st.data())
def test_random_state_records(engine, data):
    state = engine.get_state()
    for name in state.dtype.names:
        column = state[name]
        for i in range(N):
            if not data.draw(st.booleans()):
                continue
            value = data.draw(field_values)
            try:
                column[i] = value
            except (OverflowError, ValueError, TypeError):
                continue
    before = engine.get_state()
    try:
        engine.set_state(state)
    except ValueError:
        np.testing.assert_array_equal(engine.get_state(), before)
        return
    # An accepted state must be steppable without a crash.
    spec = engine.spec.action
    head = (N,) if engine.num_agents == 1 else (N, engine.num_agents)
    if spec.discrete:
        actions = np.full(head, int(spec.low[0]), dtype=np.int64)
    else:
        actions = np.zeros(head + spec.shape)
    for _ in range(3):
        engine.step(actions)
    engine.reset(seed=0)
