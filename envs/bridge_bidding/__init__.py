"""Bridge bidding: four seats bid over a deal drawn from a table of double-dummy results."""
