"""MinAtar's Asterix: the player picks up gold and dodges enemies crossing eight rows of 10x10."""
