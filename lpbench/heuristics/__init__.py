"""Offline (hindsight) heuristics that produce incumbent schedules for the exact models."""
