"""coqa: Chinese question answering over knowledge graphs (PKU BASE, CCKS COQA / CKBQA)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("coqa")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"
