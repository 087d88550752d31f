"""Request-level recovery: retries, budget, circuit breaker, model fallback, token escalation."""
