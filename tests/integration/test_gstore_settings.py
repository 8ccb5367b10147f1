"""The gStore launcher's settings (query log, log level) land in the work
folder's configuration, as the start script then uses it; a setting gStore
does not have is refused rather than silently ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from coqa.kb.base import KBError
from coqa.testing.gstore_server import configure_gstore

GSTORE_TOOLS = Path(__file__).resolve().parents[3] / "shared" / "tools" / "gstore-1.2"
pytestmark = pytest.mark.skipif(not (GSTORE_TOOLS / "share" / "gstore").is_dir(), reason=f"no gStore at {GSTORE_TOOLS}")


def test_query_log_and_log_level_are_set_in_the_work_folder(tmp_path: Path) -> None:
    home = tmp_path / "gstore-home"
    configure_gstore(GSTORE_TOOLS, home, {"querylog_mode": "0"}, log_level="WARN")
    assert "querylog_mode=0" in (home / "conf.ini").read_text().splitlines()
    assert (home / "slog.properties").read_text().splitlines()[0] == "log4cplus.rootLogger=WARN, ALL_MSGS, DEBUG_MSGS, FATAL_MSGS"
    assert (home / "slog.stdout.properties").read_text().splitlines()[0] == "log4cplus.rootLogger=WARN, STDOUT"
    assert (home / "init.conf").is_file()  # the start script sees a configured folder and keeps it


def test_a_setting_gstore_lacks_is_refused(tmp_path: Path) -> None:
    with pytest.raises(KBError, match="no setting 'query_log'"):
        configure_gstore(GSTORE_TOOLS, tmp_path / "gstore-home", {"query_log": "off"})
