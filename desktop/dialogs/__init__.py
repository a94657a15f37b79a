"""Desktop dialogs: one dialog per module (settings, ...)."""
