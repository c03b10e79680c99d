"""MinAtar's Space Invaders: a cannon shoots at a descending block of aliens on 10x10."""
