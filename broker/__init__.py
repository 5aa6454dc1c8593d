"""kipper's broker: engines (pure, synchronous) under an asyncio shell."""
