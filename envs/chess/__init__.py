"""Chess: two agents, Pgx's action encoding (4672 = 64 from-squares x 73 planes), rules and ends."""
