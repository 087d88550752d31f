"""The guard: what a tool call may touch, decided before and enforced while it runs.

The command policy (`policy`), protected paths (`protected`, found from the files by
`protected_scan` with `git_roots` and `git_config`), confinement that never follows a
symlink (`safe_fs`), the words both file layers use for a path's trouble (`file_words`),
and the OS sandbox for commands (`sandbox`, over `landlock`).
"""
