"""Authorization: ACLs with Kafka's StandardAuthorizer semantics (docs/SECURITY.md)."""
