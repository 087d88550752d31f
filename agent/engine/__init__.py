"""The engine: the think → act → observe loop, turn-level recovery and how a turn ended.

It talks to the model through a `providers.Provider` (the recovering one, in practice), runs
tools through `tools.ToolExecutor`, and reports everything as events on one `EventBus`; it
never draws anything itself.
"""
