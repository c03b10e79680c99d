"""MountainCarContinuous-v0: the mountain car with a continuous throttle, as gymnasium's."""
