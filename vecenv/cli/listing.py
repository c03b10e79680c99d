"""``vecenv list``: the games, their Gymnasium ids, the faces they are available through."""

from .common import print_table

# -- games ---------------------------------------------------------------------------------------

# Each face and the test telling whether a game's specification offers it; more faces append here.
FACES = (
    ("gym", lambda spec: bool(spec.gym.get("id"))),
    ("csuite", lambda spec: "csuite" in spec.raw),
    ("kaggle", lambda spec: spec.kaggle is not None),
    ("aisys", lambda spec: _aisys_playable(spec)),
)


def _aisys_playable(spec):
    from vecenv.aisys.catalog import playable

    return playable(spec)


def faces(spec):
    """The names of the faces a game is available through."""
    return [name for name, offered in FACES if offered(spec)]


def describe_action(spec):
    action = spec.action
    if action.discrete:
        low, high = int(action.low[0]), int(action.high[0])
        return f"Discrete({high - low + 1})" + (f" from {low}" if low else "")
    return f"Box{action.shape}"


def describe_observation(spec):
    fields = spec.observation
    if len(fields) == 1:
        return str(fields[0].shape)
    return " ".join(f"{f.name}{f.shape}" for f in fields)


def cmd_list(args, out):
    from vecenv import list_envs, registry

    rows = []
    for name in list_envs():
        spec = registry.get_spec(name)
        rows.append(
            [
                name,
                spec.gym.get("id", "-"),
                ",".join(faces(spec)) or "-",
                ",".join(str(a) for a in spec.agents),
                describe_action(spec),
                describe_observation(spec),
            ]
        )
    print_table(rows, ["name", "gym id", "faces", "agents", "action", "observation"], out)
    return 0


def add_parser(sub):
    sub.add_parser("list", help="list the games and their faces").set_defaults(func=cmd_list)
