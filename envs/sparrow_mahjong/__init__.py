"""Sparrow mahjong: three agents, 44 tiles, discards only, Pgx's rules."""
