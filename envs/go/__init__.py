"""Go: two agents on a 9x9 (or 19x19) board, Pgx's rules (superko, area scoring, komi 7.5)."""
