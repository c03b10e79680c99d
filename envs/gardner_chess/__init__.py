"""Gardner's minichess: two agents on a 5x5 board, Pgx's action encoding (1225 = 25 from-squares x
49 planes), rules and ends."""
