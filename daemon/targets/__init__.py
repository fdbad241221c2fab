"""Target profiles: what a board (or the simulator) is and needs, as data (one
YAML file per target)."""
