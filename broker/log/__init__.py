"""In-memory topic-partition logs and the topic registry."""
