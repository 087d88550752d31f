"""`agent` — a terminal coding agent that does not break."""

__version__ = "0.1.0"
__all__ = ["__version__"]
