"""Registers every game that names a Gymnasium id in its spec as ``vecenv/<id>``."""

import gymnasium

from vecenv import registry

NAMESPACE = "vecenv"


def register_all():
    for name, spec in registry.specs().items():
        gym = spec.gym
        if "id" not in gym:
            continue
        env_id = f"{NAMESPACE}/{gym['id']}"
        if env_id in gymnasium.registry:
            continue
        gymnasium.register(
            id=env_id,
            entry_point=f"vecenv.gym.env:{name}",
            vector_entry_point=f"vecenv.gym.entry:{name}",
            max_episode_steps=gym.get("max_episode_steps"),
            reward_threshold=gym.get("reward_threshold"),
            nondeterministic=False,
        )


def unregister(gym_id):
    """Drop ``vecenv/<gym_id>`` from gymnasium's registry (a game forgotten)."""
    if gym_id:
        gymnasium.registry.pop(f"{NAMESPACE}/{gym_id}", None)


# Whoever imports this module first finds the ids registered (vecenv's own callback on
# gymnasium's import may have come while this module was still importing).
register_all()
