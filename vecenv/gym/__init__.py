"""The Gymnasium face: ``gymnasium.Env`` and ``gymnasium.vector.VectorEnv`` over the engine."""
