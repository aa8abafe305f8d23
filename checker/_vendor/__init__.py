"""Third-party code checker compiles and ships: durable-rules 2.0.28 (durable/README.md)."""
