"""Pendulum-v1: swing up and balance an inverted pendulum, as gymnasium's."""
