"""Integrations with other Django packages (each optional: import only what you use)."""
