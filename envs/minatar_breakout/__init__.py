"""MinAtar's Breakout: a paddle, a ball moving on diagonals and three rows of bricks on 10x10."""
