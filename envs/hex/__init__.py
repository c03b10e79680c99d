"""Hex: two agents on an 11x11 rhombus (any size as a configuration), Pgx's rules and swap."""
