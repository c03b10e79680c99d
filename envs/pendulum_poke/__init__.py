"""CSuite's pendulum_poke: the continuing pendulum, randomly poked when near upright."""
