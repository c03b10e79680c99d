"""2048 on a 4x4 board, as OpenSpiel's ``2048``."""
