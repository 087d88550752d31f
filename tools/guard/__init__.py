"""The guard: what a tool call may touch, decided before and enforced while it runs.

The command policy (`policy`), protected paths (`protected`), confinement that never follows a
symlink (`safe_fs`), and the OS sandbox for commands (`sandbox`, over `landlock`).
"""
