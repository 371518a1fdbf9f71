"""The converted-model cache: hashed once per process, converted once when sessions or processes start at once."""

import multiprocessing
import threading
import time

import pytest

from runner import default_model


@pytest.fixture
def slow_conversion(tmp_path, monkeypatch):
    """A stand-in converter that takes a while and logs each call to a file (readable across processes)."""
    monkeypatch.setenv(default_model.CACHE_ENV, str(tmp_path / "cache"))
    log = tmp_path / "conversions.log"

    def convert(gguf, destination, progress):
        with log.open("a") as f:
            f.write(f"{destination}\n")
        time.sleep(0.3)  # long enough for the other starter to arrive mid-conversion
        (destination / "model.safetensors").write_bytes(b"weights" * 1000)
        default_model.write_marker(destination, gguf.name)

    monkeypatch.setattr(default_model, "_convert", convert)
    return log


def conversions(log) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_two_threads_starting_at_once_convert_once(slow_conversion):
    folders = []
    threads = [threading.Thread(target=lambda: folders.append(default_model.default_model_dir())) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert conversions(slow_conversion) == 1
    assert folders[0] == folders[1] and default_model.is_complete(folders[0])


def test_two_processes_starting_at_once_convert_once(slow_conversion):
    context = multiprocessing.get_context("fork")  # the children inherit the stand-in converter
    processes = [context.Process(target=default_model.default_model_dir) for _ in range(2)]
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
