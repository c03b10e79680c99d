"""Animal shogi: two agents on a 3x4 board, Pgx's action encoding (132 labels), rules and ends."""
