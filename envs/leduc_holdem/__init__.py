"""Leduc hold'em: two agents, six cards (two each of J, Q, K), two betting rounds, Pgx's rules."""
