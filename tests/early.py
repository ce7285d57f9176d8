"""Subprocesses that a test needs, started as soon as the session's tests are collected.

A cold Numba compile (an empty cache) keeps one core busy for tens of seconds; a test that
started it and waited would leave the machine's other core idle all that time. A test
names the processes it needs with ``@pytest.mark.early(process, ...)``; ``tests/conftest.py``
starts every process that a selected test names when collection ends, so each runs beside
the tests before its own, which then takes the result (:meth:`Early.result`), starting the
process itself if nothing started it. Each process gets a folder of its own (its empty
Numba cache, if asked for, and its output), removed when the session ends.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile


class Early:
    """``python -c code`` in a fresh process, started early, with its output kept in files.

    Parameters
    ----------
    code : str
        The program.
    env : dict, optional
        Environment variables set for it, beside this process's own.
    cold_cache : bool, default False
        Give it an empty Numba cache of its own (``NUMBA_CACHE_DIR``), :attr:`cache`.
    """

    started: list[Early] = []  # closed when the session ends (tests/conftest.py)

    def __init__(self, code: str, env: dict | None = None, cold_cache: bool = False):
        self.code = code
        self.env = dict(env or {})
        self.cold_cache = cold_cache
        self.folder: pathlib.Path | None = None
        self._process: subprocess.Popen | None = None
        self._done: subprocess.CompletedProcess | None = None

    @property
    def cache(self) -> pathlib.Path:
        """The process's own Numba cache folder (``cold_cache=True``)."""
        self.start()
        return self.folder / "numba-cache"

    def start(self) -> None:
        """Start the process, unless it has started already."""
        if self._process is not None:
            return
        self.folder = pathlib.Path(tempfile.mkdtemp(prefix="simhash-nb-early-"))
        env = dict(os.environ, **self.env)
        if self.cold_cache:
            env["NUMBA_CACHE_DIR"] = str(self.folder / "numba-cache")
        # files, not pipes: nothing reads the output until the test runs
        with open(self.folder / "stdout", "w") as out, open(self.folder / "stderr", "w") as err:
            self._process = subprocess.Popen([sys.executable, "-c", self.code], stdout=out,
                                             stderr=err, env=env, text=True)
        Early.started.append(self)

    @property
    def running_or_done(self) -> bool:
        """Whether the process has been started (it may have ended)."""
        return self._process is not None

    def result(self, timeout: float = 900) -> subprocess.CompletedProcess:
        """Wait for the process (starting it if it has not started) and return its exit
        status and output."""
        if self._done is None:
            self.start()
            self._process.wait(timeout=timeout)
            self._done = subprocess.CompletedProcess(
                self._process.args, self._process.returncode,
                (self.folder / "stdout").read_text(), (self.folder / "stderr").read_text())
        return self._done

    def close(self) -> None:
        """Stop the process if it still runs and remove its folder."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


# On a cold Numba cache (a fresh clone) each kernel would be compiled by the first process
# that calls it, in each process: the tests' own, the Dask workers and the CLI tests'
# processes would each compile most of them. In one process (the default), a second
# process compiles sh.prepare's paths into the shared cache beside the first tests, on the
# core they leave idle (the kernels it has written by the time a test needs them are
# loaded, not compiled); with xdist workers (PYTEST_WORKERS, Makefile), two processes
# compile half each and the controller waits for them before its workers start. On a warm
# cache none is started (tests/conftest.py starts them).
WARM_CACHE = Early("import simhash_nb as sh; sh.prepare()")
# every path of sh.prepare in one half or the other (tests/test_prepare.py checks it),
# balanced by what each compiles on an empty cache: 43.7 s and 40.9 s side by side
# (measured; the halves before, split by name, took 32.1 s and 48.7 s)
WARM_CACHE_HALF_PATHS = (("fingerprint", "features", "streaming"),
                         ("search", "windows", "hamming", "index", "evaluate", "verified"))
WARM_CACHE_HALVES = tuple(Early(f"import simhash_nb as sh; sh.prepare(paths={paths!r})")
                          for paths in WARM_CACHE_HALF_PATHS)


_KERNELS = pathlib.Path(__file__).resolve().parents[1] / "simhash_nb" / "_kernels"


def cold_kernel_cache() -> bool:
    """Whether the package's kernels have no entry in Numba's default cache yet (the
    ``__pycache__`` beside their source; not asked when ``NUMBA_CACHE_DIR`` moves it)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return False
    return not any((_KERNELS / "__pycache__").glob("*.nbi"))


def warm_up_in_halves() -> int:
    """Compile sh.prepare's paths in two processes, half each, and wait for both: what
    ``make test`` runs on a cold cache before the docs build and the tests start, so that
    none of their processes (the notebooks' kernels, the workers, the CLI tests') compiles
    a kernel that ``sh.prepare`` compiles. The exit status: 0, or 1 with the error."""
    if not cold_kernel_cache():
        return 0
    print("A cold Numba cache: compiling the kernels (sh.prepare, in two processes)",
          file=sys.stderr, flush=True)
    for process in WARM_CACHE_HALVES:
        process.start()
    try:
        for process in WARM_CACHE_HALVES:
            done = process.result()
            if done.returncode != 0:
                print(done.stderr[-3000:], file=sys.stderr)
                return 1
    finally:
        for process in WARM_CACHE_HALVES:
            process.close()
    return 0


def wait_for_warm_up() -> None:
    """Wait for the processes that compile the kernels into the shared cache, where this
    session started them (a cold cache); return at once otherwise."""
    for process in (WARM_CACHE, *WARM_CACHE_HALVES):
        if process.running_or_done:
            done = process.result()
            assert done.returncode == 0, done.stderr[-3000:]


if __name__ == "__main__":
    sys.exit(warm_up_in_halves())
