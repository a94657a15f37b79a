"""The virtualised transcript: a column of entries laid out and shown only where they are seen."""

from .stack import TranscriptStack

__all__ = ["TranscriptStack"]
