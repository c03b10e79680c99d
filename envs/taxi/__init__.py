"""CSuite's continuing Taxi: drive passengers between four coloured squares (Dietterich, 2000)."""
