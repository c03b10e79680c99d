"""``MultiAgentVectorEnv``: the batched self-play env's N matches spread over Ray actors."""

from vecenv.gym.multiagent import batched, read_only
from vecenv.gym.multiagent import flat as multiagent_flat

from .vector import VectorEnv


class MultiAgentVectorEnv(VectorEnv):
    """``vecenv.gym.MultiAgentVectorEnv``'s N matches of a game of A >= 2 agents, spread over Ray
    actors as ``VectorEnv`` spreads one-agent episodes: the same (N, A) observations, rewards
    and flags, the same ``infos["action_mask"]`` and ``infos["to_play"]`` (kept in the shared
    arrays with the results), autoreset modes and trajectories, bit for bit, for any number of
    workers. Its arguments are ``VectorEnv``'s; ``step`` takes (N, A) actions. A match lost with a
    worker is reported truncated for every agent, with reward 0."""

    _kind = "multiagent"
    flat = staticmethod(multiagent_flat)

    def _spaces(self, obs_space, act_space):
        (self.num_agents,) = self._action_shape
        self.possible_agents = [f"player_{k}" for k in range(self.num_agents)]
        head = (self.num_envs, self.num_agents)
        self.observation_space = batched(obs_space, head)
        self.action_space = batched(act_space, head)
        self.moves = act_space.n

    @property
    def to_play(self):
        """(N, A) bool: the agents to move now (a read-only view, no copy)."""
        return read_only(self._steady["to_play"])

    @property
    def action_mask(self):
        """(N, A, moves) bool: the legal moves of the agents to move (a read-only view)."""
        return read_only(self._steady["action_mask"])

    def __repr__(self):
        return super().__repr__().replace("VectorEnv(", "MultiAgentVectorEnv(", 1)
