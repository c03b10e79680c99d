"""Go: two agents on a 9x9, 13x13 or 19x19 board, Pgx's rules (superko, area scoring, komi)."""
