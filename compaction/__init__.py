"""Context compaction: token accounting and the stages that shrink a conversation."""
