"""Rewrite tests/data/kind_names_left.txt from the tree as it is (tests/test_kind_names.py): after a change that took
namings of a kind out, or moved one from a module to another. It prints what came and went: a naming that came is
one to read from the kind's declaration instead, not one to list."""

from tests.test_kind_names import LEFT, namings_now

HEADER = ("# Namings of a scheduler kind outside its package, not yet read from its declaration\n"
          "# (tests/test_kind_names.py): each 'path: what names it'. Take a line off when its naming is gone; never\n"
          "# add one (python -m tools.kind_names_left rewrites it, saying what came and went).\n")


def main():
    before = {line for line in LEFT.read_text().splitlines() if line and not line.startswith("#")}
    now = namings_now()
    for line in sorted(now - before):
        print("+", line)
    for line in sorted(before - now):
        print("-", line)
    print(f"{len(before)} -> {len(now)}")
    LEFT.write_text(HEADER + "\n".join(sorted(now)) + "\n")


if __name__ == "__main__":
    main()
