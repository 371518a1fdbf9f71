"""The converted-model cache: hashed once per process, converted once when sessions or processes start at once."""

import multiprocessing
import threading
from functools import partial

import pytest

from runner import default_model
from tests.helpers.waiting import wait_until


@pytest.fixture
def slow_conversion(tmp_path, monkeypatch):
    """A stand-in converter that logs each call to a file (readable across processes) and, when two starters
    are expected (`starters`), converts only once the other has arrived: it is then mid-conversion for sure."""
    monkeypatch.setenv(default_model.CACHE_ENV, str(tmp_path / "cache"))
    log, arrivals = tmp_path / "conversions.log", tmp_path / "arrivals.log"

    def convert(gguf, destination, progress):
        with log.open("a") as f:
            f.write(f"{destination}\n")
        if arrivals.exists():
            wait_until(lambda: len(arrivals.read_text().splitlines()) >= 2, "the other starter to arrive")
        (destination / "model.safetensors").write_bytes(b"weights" * 1000)
        default_model.write_marker(destination, gguf.name)

    monkeypatch.setattr(default_model, "_convert", convert)
    return log


def conversions(log) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def start(log):
    """default_model_dir() noting in a file next to the conversions' `log` that this starter has arrived."""
    arrivals = log.with_name("arrivals.log")

    def arrived(fraction, message):
        if fraction == 0.0:
            with arrivals.open("a") as f:
                f.write("arrived\n")
    return default_model.default_model_dir(arrived)


def expect_two_starters(log):
    log.with_name("arrivals.log").touch()


def test_two_threads_starting_at_once_convert_once(slow_conversion):
    folders = []
    expect_two_starters(slow_conversion)
    threads = [threading.Thread(target=lambda: folders.append(start(slow_conversion))) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert conversions(slow_conversion) == 1
    assert folders[0] == folders[1] and default_model.is_complete(folders[0])


def test_two_processes_starting_at_once_convert_once(slow_conversion):
    context = multiprocessing.get_context("fork")  # the children inherit the stand-in converter
    expect_two_starters(slow_conversion)
    processes = [context.Process(target=partial(start, slow_conversion)) for _ in range(2)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(30)
    assert [p.exitcode for p in processes] == [0, 0]
    assert conversions(slow_conversion) == 1
    folder = default_model.default_model_dir()
    assert default_model.is_complete(folder) and conversions(slow_conversion) == 1


def test_a_complete_cache_is_hashed_once_per_process(slow_conversion, monkeypatch):
    folder = default_model.default_model_dir()
    default_model._verified.clear()  # as a new process finds it
    hashed = []
    real_hash = default_model._file_hash
    monkeypatch.setattr(default_model, "_file_hash", lambda path: hashed.append(path) or real_hash(path))
    for _ in range(3):
        assert default_model.default_model_dir() == folder
    assert hashed == [folder / "model.safetensors"] and conversions(slow_conversion) == 1
