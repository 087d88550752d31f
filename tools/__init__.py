"""Coding tools the model can call, and the executor that runs them safely."""
