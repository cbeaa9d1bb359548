from .engine import Batch, SimResult, simulate

__all__ = ["Batch", "SimResult", "simulate"]
