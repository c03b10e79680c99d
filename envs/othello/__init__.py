"""Othello: two agents on an 8x8 board, Pgx's rules (passes are plies; two passes end it)."""
