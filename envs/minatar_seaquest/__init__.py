"""MinAtar's Seaquest: a submarine shoots enemies, rescues divers and comes up for air on 10x10."""
