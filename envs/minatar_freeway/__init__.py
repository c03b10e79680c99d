"""MinAtar's Freeway: a chicken crosses eight lanes of traffic on 10x10, against the clock."""
