"""The data shipped inside the package, found through importlib.resources.

Everything coqa needs to answer a question without any file of the user's
lives in the package: the SPARQL templates (`queries/`), the default model
(`models/`), the demo knowledge base and questions (`demo/`) and the
documented default settings (`config.yaml`). Reading them through
importlib.resources makes a wheel installed anywhere work like the source tree.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def package_path(*parts: str) -> Path:
    """The path of a file or folder shipped in the coqa package.

    coqa is installed as files (wheel or source tree, never a zip), so the
    resource is a real path that pyoxigraph and open() can read.
    """
    resource = files("coqa")
    for part in parts:
        resource = resource.joinpath(part)
    return Path(str(resource))


QUERIES_DIR = package_path("queries")
DEFAULT_MODEL = package_path("models", "default")
DEMO_DIR = package_path("demo")
DEFAULT_CONFIG_FILE = package_path("config.yaml")
