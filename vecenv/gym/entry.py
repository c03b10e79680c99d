"""The registered ``vector_entry_point`` of every game (``vecenv.gym.entry:<game>``).

``gymnasium.make_vec("vecenv/<Id>", num_envs=N)`` makes the game's ``GameVectorEnv``;
with ``num_workers=W`` it makes a ``vecenv.ray.VectorEnv`` instead, its N episodes spread over
W Ray workers (the same trajectories; its other arguments, such as ``address``, pass through).
The Ray package is a layer above this face: it registers its ``VectorEnv`` with
``vecenv.variants``, which imports it here on first use.
"""

import functools

from vecenv import variants


def vector_env(game, num_workers=None, **kwargs):
    """The VectorEnv of ``game``: local, or over ``num_workers`` Ray workers."""
    if num_workers is None:
        from . import vector

        return getattr(vector, game)(**kwargs)  # the game's own class
    on_ray = variants.find("ray", "gym.vector")  # vecenv.ray.VectorEnv
    return on_ray(game, num_workers=num_workers, **kwargs)


@functools.cache
def __getattr__(name):
    from vecenv import registry

    if name.startswith("__") or name not in registry.specs():
        raise AttributeError(name)
    return functools.partial(vector_env, name)
