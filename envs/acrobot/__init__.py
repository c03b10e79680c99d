"""Acrobot-v1: swing the tip of a two-link pendulum above a line (Sutton, 1996), as gymnasium's."""
