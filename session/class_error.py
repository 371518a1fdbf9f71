"""What every part of a class (session/classroom.py) shares: its one error, and the check each atomic change of
its state makes first, so that nothing is filed under a class that has ended (ending deletes its keys)."""

from i18n import MessageError
from session.class_keys import CLASSES, ClassKeys
from session.class_store import Tx


class ClassError(MessageError):
    """A class that cannot be joined (an unknown code, a full class, a name taken), with the reason in words."""


def is_open(tx: Tx, keys: ClassKeys) -> bool:
    """Within a change that watches CLASSES: whether the class is still open."""
    return tx.hget(CLASSES, keys.code) is not None


def class_open(tx: Tx, keys: ClassKeys):
    """Within a change that watches CLASSES: ClassError when the class has ended (the change then writes nothing)."""
    if not is_open(tx, keys):
        raise ClassError("class.unknown")
