"""lpbench: hindsight-optimal bounds for LLM-inference scheduling, and online policies measured
against them. See README.md; the shared semantics are in :mod:`lpbench.semantics`."""
__version__ = "0.1.0"
