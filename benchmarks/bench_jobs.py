"""`coqa answer --jobs N`: its time against one process, and how it ends
when one of its workers is killed at a random moment.

    python benchmarks/bench_jobs.py QUESTIONS --store S [--jobs 2] [--rounds 3]
        [--kills 0] [--kill-wait 60] [--checkouts DIR ...]

Each round answers QUESTIONS with `--jobs 1` and `--jobs N` from every
checkout (`--checkouts`: repository folders put first on PYTHONPATH, to
compare two versions side by side; default: the coqa this Python imports),
interleaved, and prints wall and CPU seconds (the process and its workers)
and whether all result files are the same. With `--kills K`, each checkout
then runs K times with one worker killed (SIGKILL) 0-2.5 s after both
started, and counts the runs that ended with coqa's message, otherwise, or
not within `--kill-wait` seconds (those are killed with their workers,
and the stacks of their threads kept in the work folder).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchutil import machine_load, run_in_work_dir  # noqa: E402

from coqa.testing.local_process import clean_environment, worker_pids  # noqa: E402

WORKER_DIED = "coqa: error: a worker process"


def coqa_answer(checkout: Path | None, arguments: list[str], work: Path) -> subprocess.Popen[bytes]:
    """`coqa answer ARGUMENTS` in its own process group, stderr to work/stderr.txt."""
    environment = clean_environment() if checkout is None else clean_environment(PYTHONPATH=str(checkout))
    # -X faulthandler: a run that hangs prints every thread's stack on SIGABRT.
    command = [sys.executable, "-X", "faulthandler", "-m", "coqa.cli.main", "answer", *arguments]
    with open(work / "stderr.txt", "wb") as stderr:
        return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=environment, start_new_session=True)


def timed_run(checkout: Path | None, arguments: list[str], work: Path) -> tuple[float, float]:
    """Wall and CPU seconds (with its children) of one run that must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = coqa_answer(checkout, arguments, work)
    if process.wait() != 0:
        raise SystemExit(f"coqa answer {' '.join(arguments)} failed:\n{(work / 'stderr.txt').read_text(encoding='utf-8')}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return time.perf_counter() - started, cpu


def kill_one_worker(checkout: Path | None, arguments: list[str], work: Path, wait: float, rng: random.Random) -> str:
    """How a run ended whose worker was killed: 'message', 'other' or 'hung'."""
    process = coqa_answer(checkout, arguments, work)
    try:
        deadline = time.monotonic() + wait
        while len(worker_pids(process.pid)) < 2 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(rng.uniform(0, 2.5))
        workers = worker_pids(process.pid)
        if workers:
            os.kill(rng.choice(workers), signal.SIGKILL)
        process.wait(wait)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)
        process.wait()
        hung = work / f"hung-{process.pid}.txt"
        (work / "stderr.txt").rename(hung)
        print(f"a run hung: its threads' stacks are in {hung}", flush=True)
        return "hung"
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # the run and any worker left behind
        except ProcessLookupError:
            pass
        process.wait()
    lines = (work / "stderr.txt").read_text(encoding="utf-8").splitlines()
    return "message" if process.returncode == 1 and lines and lines[-1].startswith(WORKER_DIED) else "other"


def run(args: argparse.Namespace, work: Path) -> int:
    checkouts: list[Path | None] = list(args.checkouts) or [None]
    print(machine_load())
    digests = set()
    for round_number in range(1, args.rounds + 1):
        for checkout in checkouts:
            for jobs in sorted({1, args.jobs}):
                result = work / "result.txt"
                arguments = [str(args.questions), "--store", str(args.store), "--jobs", str(jobs), "-o", str(result)]
                wall, cpu = timed_run(checkout, arguments, work)
                digests.add(hashlib.sha256(result.read_bytes()).hexdigest())
                print(f"round {round_number}  {checkout or 'installed coqa'}  --jobs {jobs}: {wall:.1f} s wall, {cpu:.1f} CPU-s", flush=True)
    if args.rounds:
        print(f"result files: {'all the same' if len(digests) == 1 else f'{len(digests)} different'}")
    rng = random.Random(0)
    for checkout in checkouts:
        if not args.kills:
            break
        arguments = [str(args.questions), "--store", str(args.store), "--jobs", str(args.jobs), "-o", str(work / "killed.txt")]
        endings = [kill_one_worker(checkout, arguments, work, args.kill_wait, rng) for _ in range(args.kills)]
        counts = ", ".join(f"{endings.count(name)} {name}" for name in ("message", "other", "hung"))
        print(f"{checkout or 'installed coqa'}: {args.kills} runs with a worker killed: {counts}", flush=True)
    print(machine_load())
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("questions", type=Path)
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (0: none)")
    parser.add_argument("--kills", type=int, default=0, help="runs with one worker killed, per checkout")
    parser.add_argument("--kill-wait", type=float, default=60.0, help="seconds a run with a killed worker may take to end")
    parser.add_argument("--checkouts", type=Path, nargs="+", default=[], help="repository folders to compare (PYTHONPATH)")
    parser.add_argument("--work", type=Path, help="keep the result files here")
    return run_in_work_dir(parser.parse_args(), run)


if __name__ == "__main__":
    sys.exit(main())
