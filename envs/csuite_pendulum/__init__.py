"""CSuite's continuing pendulum: swing up and balance with torques of -1, 0 and +1."""
