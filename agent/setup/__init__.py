"""Setup: configuration, project trust, the model chain and the logs, before a session runs.

Everything here is decided once at start-up; a problem is a `SetupError` that says what to
change (exit 2).
"""
