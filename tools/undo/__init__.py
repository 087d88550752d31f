"""Undo: what each path held before a tool changed it, and putting it back.

File tools record checkpoints (`checkpoints`, stored by `checkpoint_files`); shell commands are
covered by workspace snapshots (`snapshots`, `command_changes`); `restore` puts a path back
without losing anyone's work.
"""
