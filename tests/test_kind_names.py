"""No module outside a scheduler's own package names a kind (tests/helpers/kind_names.py says what naming is): the
app's Python and the player's JavaScript read a scheduler through its declaration, and a message that speaks of one
kind lives under that kind's prefix in the catalogues. The factory is the one place naming the kinds; tests, the
reference checks (tools/), benchmarks and scenario files may name any.

Any naming fails: read it from the kind's declaration instead (docs/schedulers.md says where a kind's knowledge
goes). The guard is itself tested: namings planted in a tree of a test's own are found."""

from pathlib import Path

import pytest

from i18n import CATALOGUES
from scheduler.factory import SCHEDULERS
from tests.helpers.kind_names import catalogue_namings, js_namings, kind_words, python_namings
from tests.helpers.source import ROOT

APP_FOLDERS = ("app.py", "app_pages", "ui", "session", "viz", "render", "engine", "runner", "scheduler", "player")
ALLOWED = ("scheduler/factory.py",)


def _kinds() -> dict[str, str | None]:
    """Kind id -> its package under scheduler/ (None for a kind that is a module of scheduler/ itself)."""
    return {kind: cls.__module__.split(".")[1] if cls.__module__.count(".") > 1 else None
            for kind, cls in SCHEDULERS.items()}


KINDS = _kinds()
WORDS = kind_words(KINDS)
SAMPLE_WORDS = kind_words({"article": None, "vllm": "vllm_v1", "sglang": "sglang"})


# What a kind owns: its package (every package under scheduler/ is one kind's, in the factory or on its way
# there), or, for a kind that is a module of scheduler/ (the article's), that module
OWNED = tuple(f"scheduler/{p.name}/" for p in sorted((ROOT / "scheduler").iterdir()) if (p / "__init__.py").exists()
              ) + tuple(cls.__module__.replace(".", "/") + ".py" for cls in SCHEDULERS.values()
                        if cls.__module__.count(".") == 1)


def _own_package(relative: str) -> bool:
    return relative.startswith(OWNED)


def _app_files(root: Path, suffix: str):
    for folder in APP_FOLDERS:
        top = root / folder
        for path in [top] if top.is_file() else sorted(top.rglob(f"*{suffix}")):
            relative = path.relative_to(root).as_posix()
            if path.suffix == suffix and relative not in ALLOWED and not _own_package(relative):
                yield relative, path.read_text()


def namings_in(root: Path, catalogues) -> set[str]:
    """Every naming of a kind outside its package in the tree at `root` and in `catalogues` (language -> its
    messages), each as `path:line: text`."""
    found = {str(n) for relative, source in _app_files(root, ".py")
             for n in python_namings(Path(relative), source, WORDS)}
    found |= {str(n) for relative, source in _app_files(root, ".js")
              for n in js_namings(Path(relative), source, WORDS)}
    for lang, messages in catalogues.items():
        found |= {f"i18n/{lang}.py: {key}" for key in catalogue_namings(messages, WORDS, KINDS)}
    return found


def test_no_module_outside_a_kinds_package_names_the_kind():
    found = namings_in(ROOT, CATALOGUES)
    assert not found, "named a kind outside its package (read it from the kind's declaration):\n" + "\n".join(
        sorted(found))


def test_the_guard_finds_a_naming_planted_in_a_tree_and_lets_a_kinds_own_package_be(tmp_path):
    planted = {"viz/planted.py": 'label = "vLLM" if frame.decided_by is None else frame.decided_by.system\n'
                                 'fallback = "sglang"\n',
               "player/planted.js": "const fallback = 'article';\n",
               "ui/nested/deeper.py": "from scheduler.vllm_v1 import VllmScheduler\n",
               "scheduler/sglang/planted.py": 'kind = "sglang"\n',  # its own package may
               "scheduler/factory.py": 'PACKAGES = ("scheduler.article",)\n'}  # the one place naming them
    for relative, source in planted.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(source)
    assert namings_in(tmp_path, {"en": {"sidebar.scheduler.sglang": "x", "sglang.name": "SGLang"}}) == {
        'viz/planted.py:1: "vLLM"', 'viz/planted.py:2: "sglang"', "player/planted.js:1: 'article'",
        "ui/nested/deeper.py:1: vllm_v1", "ui/nested/deeper.py:1: VllmScheduler",
        "i18n/en.py: sidebar.scheduler.sglang"}


@pytest.mark.parametrize("code", [
    'if info.kind == "sglang":\n    pass\n',
    'kind = frame.decided_by.kind if frame.decided_by else "article"\n',
    'from viz.vllm_view import vllm_view\n',
    'say("sglang.no_token")\n',
])
def test_the_guard_finds_a_kind_named_in_python(code):
    assert python_namings(Path("x.py"), code, SAMPLE_WORDS)


@pytest.mark.parametrize("code", [
    "const id = kind === 'sglang' ? 'a' : 'b';\n",
    "renderVllmView(panel);\n",
    "const fallback = 'article';\n",
])
def test_the_guard_finds_a_kind_named_in_javascript(code):
    assert js_namings(Path("x.js"), code, SAMPLE_WORDS)


@pytest.mark.parametrize("code", [
    '"""A docstring may speak of vLLM\'s scheduler and SGLang\'s tree."""\nx = 1  # and so may a comment on vllm\n',
    'scenario = "article_2_preemption"\nkey = f"batch.{batch.kind}"\n',
])
def test_the_guard_lets_prose_and_other_words_be(code):
    assert not python_namings(Path("x.py"), code, SAMPLE_WORDS)


def test_the_guard_lets_a_javascript_comment_be():
    code = "// vLLM's SchedulerOutput, drawn\n/* sglang's tree */ const x = 'a // b';\n"
    assert not js_namings(Path("x.js"), code, SAMPLE_WORDS)


def test_a_message_about_a_kind_lives_under_its_prefix():
    kinds = {"article": None, "vllm": "vllm_v1", "sglang": "sglang"}
    ids = ["sidebar.scheduler.sglang", "player.vllm_head", "sglang.no_token", "vllm.head", "preset.article_1.title",
           "narrate.sent_back.article"]
    assert catalogue_namings(ids, SAMPLE_WORDS, kinds) == ["sidebar.scheduler.sglang", "player.vllm_head",
                                                           "narrate.sent_back.article"]
