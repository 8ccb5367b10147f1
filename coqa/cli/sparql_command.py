"""Placeholder: replaced by the module's owner."""

import argparse


def register(commands: argparse._SubParsersAction) -> None:
    """Add this module's subcommands."""
