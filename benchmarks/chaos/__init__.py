"""pass^k under chaos: this agent, a naive SDK agent and ``--no-recovery`` (`run`)."""
