"""Tests of harnesses (real git, real files, real subprocesses)."""
