"""Kuhn poker: two agents, three cards (J, Q, K), one betting round, Pgx's rules."""
