"""Stand-in scripts and process utilities for the supervision tests."""
