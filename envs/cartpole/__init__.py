"""CartPole-v1: balance a pole on a cart (Barto, Sutton & Anderson, 1983), as gymnasium's."""
