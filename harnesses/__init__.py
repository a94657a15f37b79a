"""Local implementations of the seams core defines (shell executor, patch editor, computer...)."""
