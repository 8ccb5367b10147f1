"""`coqa answer -o` never replaces what it must not, and ends cleanly when
stopped: the question file is refused, symbolic links, FIFOs and devices are
written through, SIGTERM/SIGHUP leave no `.part` file, a dead `--jobs`
worker ends the run with a message instead of a hang, Ctrl-C ends a `--jobs`
run with one line, and a killed run leaves no worker behind. Over the
shipped demo knowledge base."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

import pytest

from coqa.kb.demo import DEMO_QUESTIONS
from coqa.testing.local_process import clean_environment, worker_pids

QUESTION = "周星驰的身高是多少？\n"
ANSWER = '"174cm"\n'
WAIT = 120


def environment(work: Path) -> dict[str, str]:
    return clean_environment(COQA_CACHE_DIR=str(work / "cache"))


def coqa_answer(work: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "coqa.cli.main", "answer", *argv]
    return subprocess.run(command, capture_output=True, text=True, env=environment(work), timeout=WAIT, cwd=work)


@pytest.mark.parametrize("output", ["q.txt", "./q.txt", "link-to-q", "hard-link-to-q"])
def test_the_question_file_is_never_the_output(tmp_path: Path, output: str) -> None:
    questions = tmp_path / "q.txt"
    questions.write_text(QUESTION, encoding="utf-8")
    (tmp_path / "link-to-q").symlink_to("q.txt")
    os.link(questions, tmp_path / "hard-link-to-q")
    done = coqa_answer(tmp_path, "q.txt", "-o", output)
    assert done.returncode == 1
    # The last line (the demo knowledge base's notice may come first): the refusal.
    assert done.stderr.splitlines()[-1] == f"coqa: error: cannot write {output}: it is the input file q.txt: the results would replace it"
    assert questions.read_text(encoding="utf-8") == QUESTION
    assert (tmp_path / "link-to-q").is_symlink()
    assert sorted(path.name for path in tmp_path.iterdir() if path.name != "cache") == ["hard-link-to-q", "link-to-q", "q.txt"]


def test_a_symbolic_link_is_written_through(tmp_path: Path) -> None:
    (tmp_path / "q.txt").write_text(QUESTION, encoding="utf-8")
    (tmp_path / "results").mkdir()
    (tmp_path / "result.txt").symlink_to("results/latest.txt")
    done = coqa_answer(tmp_path, "q.txt", "-o", "result.txt")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "result.txt").is_symlink()
    assert (tmp_path / "results" / "latest.txt").read_text(encoding="utf-8") == ANSWER


def test_a_fifo_is_written_through(tmp_path: Path) -> None:
    (tmp_path / "q.txt").write_text(QUESTION, encoding="utf-8")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text(encoding="utf-8")), daemon=True)
    reader.start()
    done = coqa_answer(tmp_path, "q.txt", "-o", "pipe")
    reader.join(WAIT)
    assert done.returncode == 0, done.stderr
    assert received == [ANSWER]
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert not list(tmp_path.glob(".*.part"))


def test_a_device_is_written_to_not_replaced(tmp_path: Path) -> None:
    """A null device made in the test's folder (as root, -o /dev/null once replaced /dev/null itself)."""
    (tmp_path / "q.txt").write_text(QUESTION, encoding="utf-8")
    device = tmp_path / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        device = Path(os.devnull)  # not root: the real one, which this user cannot replace anyway
    done = coqa_answer(tmp_path, "q.txt", "-o", str(device))
    assert done.returncode == 0, done.stderr
    assert stat.S_ISCHR(device.stat().st_mode)


def many_questions(work: Path, copies: int) -> Path:
    demo = [line for line in DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    path = work / "many.txt"
    path.write_text("".join(q + "\n" for q in demo * copies), encoding="utf-8")
    return path


def start_answer(work: Path, *options: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "coqa.cli.main", "answer", "many.txt", "-o", "result.txt", *options]
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(work),
        cwd=work,
        start_new_session=True,  # its own process group, as a command of a terminal
    )


def wait_for(condition: object, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"no {what} within {WAIT} s"
        time.sleep(0.05)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_stopped_run_leaves_no_part_file(tmp_path: Path, signum: int) -> None:
    many_questions(tmp_path, 300)
    process = start_answer(tmp_path)
    try:
        wait_for(lambda: list(tmp_path.glob(".result.txt.*.part")) or process.poll() is not None, "part file")
        time.sleep(1)  # into the run: the pipeline is open and answering
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=WAIT)
    finally:
        process.kill()
    assert process.returncode == 128 + signum, stderr
    assert stderr.endswith(f"coqa: error: stopped by {signal.Signals(signum).name}\n"), stderr
    assert not list(tmp_path.glob(".*.part")) and not (tmp_path / "result.txt").exists()


def stopped_with_two_workers(work: Path, stop: Callable[[subprocess.Popen[str]], None]) -> tuple[int, str]:
    """`coqa answer --jobs 2` over many questions, stopped by `stop` a second
    after both workers started: its return code and stderr; it left no
    result and no `.part` file."""
    many_questions(work, 300)
    process = start_answer(work, "--jobs", "2")
    try:
        wait_for(lambda: len(worker_pids(process.pid)) == 2 or process.poll() is not None, "two workers")
        time.sleep(1)
        stop(process)
        _, stderr = process.communicate(timeout=WAIT)
    finally:
        process.kill()
    assert not list(work.glob(".*.part")) and not (work / "result.txt").exists()
    return process.returncode, stderr


def test_a_dead_worker_ends_the_run_with_a_message(tmp_path: Path) -> None:
    returncode, stderr = stopped_with_two_workers(tmp_path, lambda process: os.kill(worker_pids(process.pid)[0], signal.SIGKILL))
    assert returncode == 1, stderr
    assert stderr.splitlines()[-1].startswith("coqa: error: a worker process (of --jobs 2) died while answering: process "), stderr
    assert "was killed by SIGKILL" in stderr.splitlines()[-1] and "Traceback" not in stderr, stderr


def test_ctrl_c_ends_a_jobs_run_with_one_line(tmp_path: Path) -> None:
    # What Ctrl-C in a terminal does: SIGINT to every process of the group.
    returncode, stderr = stopped_with_two_workers(tmp_path, lambda process: os.killpg(process.pid, signal.SIGINT))
    assert returncode == 128 + signal.SIGINT, stderr
    assert stderr.endswith("coqa: error: interrupted\n") and "Traceback" not in stderr, stderr


def running(pid: int) -> bool:
    """Whether process `pid` exists and has not ended (a zombie has)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def test_a_killed_run_leaves_no_worker_behind(tmp_path: Path) -> None:
    many_questions(tmp_path, 300)
    process = start_answer(tmp_path, "--jobs", "2")
    workers: list[int] = []
    try:
        wait_for(lambda: len(worker_pids(process.pid)) == 2 or process.poll() is not None, "two workers")
        workers = worker_pids(process.pid)
        process.kill()
        process.wait(WAIT)
        wait_for(lambda: not any(running(pid) for pid in workers), "end of the orphaned workers")
    finally:
        process.kill()
        for pid in filter(running, workers):
            os.kill(pid, signal.SIGKILL)
        process.communicate(timeout=WAIT)
    assert len(workers) == 2
