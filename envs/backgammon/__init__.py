"""Backgammon: two agents, dice drawn from the episode's stream, Pgx's rules and actions."""
