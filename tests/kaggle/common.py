"""What the Kaggle face's tests share: the reference's built-in agents, steps as plain data."""

# kaggle-environments' built-in agents of each game, by the names it gives them.
BUILTIN_NAMES = {
    "connectx": ["random", "negamax"],
    "tictactoe": ["random", "reaction"],
    "rps": [
        "rock",
        "paper",
        "scissors",
        "copy_opponent",
        "reactionary",
        "counter_reactionary",
        "statistical",
    ],
}


def plain(steps, overage=True):
    """Steps as plain data: every agent's action, reward, status and observation (without the
    banked ``remainingOverageTime`` unless ``overage``, as it depends on real durations)."""
    out = []
    for step in steps:
        states = []
        for agent in step:
            observation = dict(agent["observation"])
            if not overage:
                observation.pop("remainingOverageTime", None)
            states.append(
                {
                    "action": agent["action"],
                    "reward": agent["reward"],
                    "status": agent["status"],
                    "observation": observation,
                }
            )
        out.append(states)
    return out
