"""Tandem's desktop application (PySide6 + qasync) and its command line."""
