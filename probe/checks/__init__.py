"""Checks judge what the engine recorded; the catalogue defines every check once."""
