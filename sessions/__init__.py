"""Durable, crash-safe, resumable sessions stored as append-only JSONL."""
