"""``dm_env.Environment`` over a csuite environment, as csuite's ``DMEnvFromCSuite``.

``reset()`` starts the environment and returns a FIRST step; ``step`` returns MID steps with
discount 1.0 and never LAST (csuite environments are continuing). Stepping before a reset resets
and ignores the action, as dm_env prescribes.
"""

import dm_env


class DMEnvFromCSuite(dm_env.Environment):
    """A csuite environment (``vecenv.csuite.load(...)``) as a ``dm_env.Environment``."""

    def __init__(self, csuite_env):
        self._csuite_env = csuite_env
        self._started = False

    def reset(self):
        observation = self._csuite_env.start()
        self._started = True
        return dm_env.restart(observation)

    def step(self, action):
        if not self._started:
            return self.reset()
        observation, reward = self._csuite_env.step(action)
        return dm_env.TimeStep(
            step_type=dm_env.StepType.MID, reward=reward, discount=1.0, observation=observation
        )

    def observation_spec(self):
        return self._csuite_env.observation_spec()

    def action_spec(self):
        return self._csuite_env.action_spec()

    def get_state(self):
        return self._csuite_env.get_state()

    def set_state(self, state):
        self._csuite_env.set_state(state)

    def render(self):
        return self._csuite_env.render()
