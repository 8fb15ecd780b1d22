"""Helpers and fixtures shared by every app's tests (the root conftest loads the fixtures).

Tests import helpers from here, never from a conftest.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
