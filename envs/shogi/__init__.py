"""Shogi: two agents on a 9x9 board, Pgx's action encoding (2187 = 27 directions x 81 squares),
rules and ends."""
