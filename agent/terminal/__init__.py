"""The terminal face: the REPL, rendering of the event stream, slash commands and approval.

It renders what the engine reports and asks the person what the engine needs to know; it
holds no recovery logic of its own.
"""
