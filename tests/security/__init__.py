"""Security tests: one module per attack class (CONVENTIONS item 17)."""
