"""Shared test doubles: a virtual clock, a scripted provider and a fake LLM HTTP server."""
