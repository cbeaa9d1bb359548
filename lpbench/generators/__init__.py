"""Instance generators (seeded, deterministic). Each returns plain instance data (a dict in the v1
format) so it can be written, validated and loaded like any file."""
