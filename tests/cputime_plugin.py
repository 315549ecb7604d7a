"""Opt-in CPU-time accounting of the test suite (``BAYESCAL_CPUTIME=DIR python -m pytest``).

Wall time on a shared 2-core machine is noise; CPU seconds are not. For every test phase
(setup, call, teardown) this records the CPU time of the test process
(``time.process_time``, all its threads) plus that of the child processes it waited for
(``resource.getrusage(RUSAGE_CHILDREN)``: CLI subprocesses), plus the CPU that child
processes still alive spent meanwhile (``psutil``: a session's notebook kernel, which is
reaped only when the session ends, so ``RUSAGE_CHILDREN`` alone put the CPU of every
notebook run in it on the teardown of the worker's last test), and per
process the fixed cost before the first test (interpreter start, imports, collection). Each
process (each xdist worker) writes ``DIR/<worker>.jsonl``; ``python tests/cputime_plugin.py
DIR`` prints the totals per file, per worker and the slowest tests.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest


def _live_children_cpu() -> float:
    """CPU seconds so far of this process's children that are not yet reaped (and of the
    children they reaped). Once reaped, a child's CPU moves into ``RUSAGE_CHILDREN``, so the
    sum of the two counts each child once, in the phases it ran in."""
    try:
        import psutil
    except ImportError:  # the accounting then falls back to reaped children only
        return 0.0
    total = 0.0
    for child in psutil.Process().children():
        try:
            t = child.cpu_times()
        except psutil.Error:  # gone meanwhile: reaped, so in RUSAGE_CHILDREN
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def _cpu() -> tuple[float, float]:
    live = _live_children_cpu()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time(), children.ru_utime + children.ru_stime + live


class CPUTime:
    """The plugin: one JSON line per test phase, one for the fixed cost of the process."""

    def __init__(self, directory: str) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        self.out = (self.directory / f"{self.worker}.jsonl").open("a")
        self.wall0 = time.time()

    def _write(self, **record) -> None:
        self.out.write(json.dumps(record) + "\n")
        self.out.flush()

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session) -> None:
        own, children = _cpu()
        self._write(kind="fixed", worker=self.worker, own=own, children=children)

    def _phase(self, item, when):
        own0, child0 = _cpu()
        wall0 = time.perf_counter()
        yield
        own1, child1 = _cpu()
        self._write(
            kind="phase",
            worker=self.worker,
            nodeid=item.nodeid,
            file=item.nodeid.split("::")[0],
            when=when,
            own=own1 - own0,
            children=child1 - child0,
            wall=time.perf_counter() - wall0,
        )

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item):
        yield from self._phase(item, "setup")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        yield from self._phase(item, "call")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item):
        yield from self._phase(item, "teardown")

    def pytest_sessionfinish(self, session) -> None:
        own, children = _cpu()
        self._write(
            kind="end",
            worker=self.worker,
            own=own,
            children=children,
            wall=time.time() - self.wall0,
        )
        self.out.close()


def report(directory: str, top: int = 40) -> str:
    """The table: CPU seconds per file (own + children), per worker, and the slowest tests."""
    by_file: dict[str, float] = defaultdict(float)
    by_test: dict[tuple[str, str], float] = defaultdict(float)
    by_worker: dict[str, float] = defaultdict(float)
    lines = []
    for path in sorted(Path(directory).glob("*.jsonl")):
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            cpu = rec["own"] + rec["children"]
            if rec["kind"] == "phase":
                by_file[rec["file"]] += cpu
                by_test[(rec["nodeid"], rec["when"])] += cpu
                by_worker[rec["worker"]] += cpu
            elif rec["kind"] == "fixed":
                lines.append(f"fixed cost (start+imports+collection) {rec['worker']}: {cpu:8.2f} s")
            else:
                lines.append(
                    f"process total {rec['worker']}: {cpu:8.2f} s CPU, {rec['wall']:.1f} s wall"
                )
    lines += [f"tests on {w}: {s:8.2f} s CPU" for w, s in sorted(by_worker.items())]
    lines.append(f"tests total: {sum(by_file.values()):8.2f} s CPU in {len(by_file)} files")
    lines.append("\nCPU s per file")
    lines += [f"{s:8.2f}  {f}" for f, s in sorted(by_file.items(), key=lambda kv: -kv[1])]
    lines.append(f"\nslowest {top} test phases (CPU s)")
    ranked = sorted(by_test.items(), key=lambda kv: -kv[1])[:top]
    lines += [f"{s:8.2f}  {when:8s} {nodeid}" for (nodeid, when), s in ranked]
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 40))
