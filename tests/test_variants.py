"""``vecenv.variants``: the faces find their Ray and GPU variants through it, never importing the
layer above themselves (tests/test_imports.py checks the sources; these tests check what runs)."""

import gymnasium
import pytest

import vecenv
from vecenv import variants

from .child import run_python


def test_unknown_kinds_and_names_are_clear_errors():
    with pytest.raises(ValueError, match="no kind of variant 'tpu'"):
        variants.find("tpu", "engine")
    with pytest.raises(ValueError, match="no kind of variant 'tpu'"):
        variants.register("tpu", "engine", object())
    with pytest.raises(LookupError, match="vecenv.cuda offers no cuda variant of 'no such face'"):
        variants.find("cuda", "no such face")


def test_the_packages_above_register_their_variants_on_import():
    from vecenv.cuda import vector

    assert variants.find("cuda", "gym.vector") is vector
    assert callable(variants.find("cuda", "engine"))
    pytest.importorskip("ray")
    import vecenv.ray

    assert variants.find("ray", "gym.vector") is vecenv.ray.VectorEnv


def test_make_vec_with_workers_makes_the_registered_ray_env(monkeypatch):
    """``gymnasium.make_vec(..., num_workers=W)`` hands its arguments to whatever the Ray
    package registered (here a stand-in, so no cluster is needed)."""
    from vecenv.gym.vector import GameVectorEnv

    made = []

    class StandIn(GameVectorEnv):
        pass

    def stand_in(game, num_workers, **kwargs):
        made.append((game, num_workers, kwargs))
        return StandIn(game, **kwargs)

    monkeypatch.setitem(variants._offers, ("ray", "gym.vector"), stand_in)
    env = gymnasium.make_vec(
        "vecenv/CartPole-v1", num_envs=4, vectorization_mode="vector_entry_point", num_workers=2
    )
    assert isinstance(env, StandIn) and env.spec.id == "vecenv/CartPole-v1"
    ((game, num_workers, kwargs),) = made
    assert (game, num_workers, kwargs["num_envs"]) == ("cartpole", 2, 4)
    env.close()
    # Without workers the face makes its own local env, asking nothing of the lookup.
    local = gymnasium.make_vec(
        "vecenv/CartPole-v1", num_envs=2, vectorization_mode="vector_entry_point"
    )
    assert isinstance(local, GameVectorEnv) and not isinstance(local, StandIn)
    assert len(made) == 1
    local.close()


def test_make_on_cuda_calls_the_registered_engine(monkeypatch):
    calls = []
    monkeypatch.setitem(
        variants._offers, ("cuda", "engine"), lambda *a, **k: calls.append((a, k)) or "engine"
    )
    assert vecenv.make("cartpole", 3, seed=1, device="cuda") == "engine"
    ((args, kwargs),) = calls
    assert args == ("cartpole", 3, 1, 1, "next_step") and kwargs == {"memory_budget": None}
    with pytest.raises(ValueError, match="device must be 'cpu' or 'cuda'"):
        vecenv.make("cartpole", 3, device="tpu")


def test_the_faces_leave_the_layers_above_unimported():
    """Importing and using the Gymnasium face imports neither Ray's package nor the GPU's; the
    GPU's package imports numba.cuda only when its engine is made."""
    out = run_python(
        """
        import sys
        import gymnasium
        import vecenv
        import vecenv.gym.entry, vecenv.gym.vector, vecenv.gym.multiagent, vecenv.opponent

        mode = "vector_entry_point"
        env = gymnasium.make_vec("vecenv/CartPole-v1", num_envs=2, vectorization_mode=mode)
        env.reset(seed=0)
        above = ("vecenv.ray", "vecenv.cuda", "vecenv.selfplay")
        print(sorted(m for m in above if m in sys.modules))
        from vecenv import variants

        variants.find("cuda", "gym.vector")
        print("vecenv.cuda" in sys.modules, "numba.cuda" in sys.modules)
        """
    )
    assert out.split("\n")[:2] == ["[]", "True False"]
