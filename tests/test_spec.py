"""Specifications: parsing, configuration checks and configuration-dependent shapes."""

import numpy as np
import pytest

from vecenv.spec import GameSpec, evaluate

RAW = {
    "name": "grid",
    "agents": [1],
    "configuration": {
        "rows": {"type": "integer", "minimum": 2, "maximum": 9, "default": 3},
        "columns": {"type": "integer", "minimum": 2, "default": 4},
        "rate": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5},
        "mode": {"type": "string", "enum": ["a", "b"], "default": "b"},
        "flag": {"type": "boolean", "default": False},
    },
    "observation": {
        "board": {"shape": ["rows", "columns"], "dtype": "int8", "low": 0, "high": 2},
        "where": {"shape": [2], "dtype": "float32", "low": "-max", "high": ["rows - 1", "inf"]},
    },
    "action": {"type": "integer", "minimum": 0, "maximum": "columns - 1"},
}


def test_expressions_over_configuration():
    assert evaluate("rows * columns - 1", {"rows": 6, "columns": 7}) == 41
    assert evaluate("-(rows // 2)", {"rows": 7}) == -3
    for bad in ("__import__('os')", "rows.bit_length()", "unknown + 1", "rows ** 2"):
        with pytest.raises(ValueError, match="cannot evaluate"):
            evaluate(bad, {"rows": 6})


def test_shapes_and_bounds_resolve_for_a_configuration():
    spec = GameSpec(RAW)
    board, where = spec.observation
    assert board.shape == (3, 4) and board.dtype == np.int8
    assert (board.high == 2).all()
    np.testing.assert_array_equal(where.high, np.array([2, np.inf], dtype=np.float32))
    assert where.low[0] == -np.finfo(np.float32).max
    assert spec.action.high[0] == 3
    config = spec.resolve_configuration({"rows": 5, "columns": 8})
    board, where = spec.observation_fields(config)
    assert board.shape == (5, 8) and where.high[0] == 4
    assert spec.action_spec(config).high[0] == 7


def test_configuration_defaults_types_and_enum_index():
    spec = GameSpec(RAW)
    config = spec.resolve_configuration({"mode": "a", "rate": 1})
    assert config == {"rows": 3, "columns": 4, "rate": 1.0, "mode": "a", "flag": False}
    record = spec.config_record(config)
    assert record["mode"][0] == 0 and record["rate"][0] == 1.0


@pytest.mark.parametrize(
    "overrides, match",
    [
        ({"rows": 10}, r"'rows' must be an integer in \[2, 9\], got 10"),
        ({"rows": "3"}, "'rows' must be an integer"),
        ({"rows": True}, "'rows' must be an integer"),
        ({"rate": float("nan")}, "'rate' must be a number"),
        ({"rate": -0.1}, r"'rate' must be a number in \[0, 1\]"),
        ({"mode": "c"}, r"'mode' must be one of \['a', 'b'\]"),
        ({"flag": 0}, "'flag' must be a boolean"),
        ({"speed": 1}, "grid has no configuration 'speed'"),
    ],
)
def test_bad_configuration_is_a_value_error_naming_the_key(overrides, match):
    with pytest.raises(ValueError, match=match):
        GameSpec(RAW).resolve_configuration(overrides)


def test_integral_floats_are_accepted_as_integers():
    assert GameSpec(RAW).resolve_configuration({"rows": 4.0})["rows"] == 4


def test_infinite_numbers_only_where_the_spec_allows_them():
    raw = dict(
        RAW,
        configuration={
            "speed": {"type": "number", "minimum": 0, "default": "inf", "infinite": True},
            "rate": {"type": "number", "default": 1.0},
        },
        observation={"obs": {"shape": [1], "low": "-speed", "high": "speed"}},
        action={"type": "integer", "minimum": 0, "maximum": 1},
    )
    spec = GameSpec(raw)
    assert spec.resolve_configuration({}) == {"speed": float("inf"), "rate": 1.0}
    assert spec.observation[0].high[0] == np.inf
    assert spec.resolve_configuration({"speed": 3})["speed"] == 3.0
    with pytest.raises(ValueError, match=r"'rate' must be a number in \[-inf, inf\] \(finite\)"):
        spec.resolve_configuration({"rate": float("inf")})
    with pytest.raises(ValueError, match="'speed' must be a number"):
        spec.resolve_configuration({"speed": float("nan")})


def test_integers_beyond_int64_are_refused():
    import vecenv

    with pytest.raises(ValueError, match="configuration 'inarow'"):
        vecenv.make("connectx", inarow=10**30)
