"""Who gets into a class and its lectern, within the limits on guessing (no Streamlit; session/limits.py counts).

Each door first asks what is no guess at all, then this session's own allowance, then the shared ones (the
client identity's, the class's), which others can use up:
- a browser the class knows (its lecturer's, a named student's: a reload) is let in without a guess;
- an ended class's link is no wrong guess (it says the class ended);
- a class is entered from an identity it already has (the room: its code is on the projector) whatever others of
  that identity guessed; a personal code or the class's secret from the room is checked too;
- a secret too strong to be found by guessing (the class's secret, a server key of STRONG_KEY_CHARS or more) is
  checked whatever others guessed: the right one is never refused because others guessed.
Everything else waits while its session, identity or class must (refused unchecked: a script learns nothing).
A guess is counted as it is let through to be checked (`Guesses.take`: guessers at once on several processes get
no more checked than the allowance), and taken back when it was right (`Guesses.forgive`).
"""

from __future__ import annotations

import hmac

from session.class_error import ClassError
from session.classroom import Classroom, Registry
from session.limits import Guesser, code_guesses, key_guesses, new_names

STRONG_KEY_CHARS = 20  # a server key this long (the README's is drawn: 32 characters) cannot be found by guessing


def find_class(registry: Registry, code: str | None, guesser: Guesser, token: str) -> Classroom:
    """The class of a code typed or linked (TooManyGuesses, ClassError)."""
    guesses = code_guesses(registry.store)
    guesses.check(guesser, shared=False)
    here = registry.find(code)
    if here is not None and (here.knows(token) or here.knows_identity(guesser.identity)):
        return here
    if here is None and registry.ended_lately(code):
        raise ClassError("class.ended", code=(code or "").strip().upper())
    taken = guesses.take(guesser)
    if here is None:
        raise ClassError("class.unknown")
    guesses.forgive(taken)
    here.met(guesser.identity)
    return here


def claim_personal_code(here: Classroom, token: str, typed: str, guesser: Guesser) -> str:
    """The roster name of a personal code, bound to this browser (TooManyGuesses, ClassError)."""
    guesses = code_guesses(here.store)
    taken = guesses.take(guesser, here.code, shared=not here.knows_identity(guesser.identity))
    name = here.names.claim_code(token, typed)
    if name is None:
        raise ClassError("class.not_a_personal_code")
    guesses.forgive(taken)
    return name


def claim_name(here: Classroom, token: str, typed: str, guesser: Guesser) -> str:
    """A name typed, bound to this browser; a new name counts against the identity's allowance of new names (a
    flood of made-up names waits as a guesser does: TooManyGuesses, ClassError)."""
    if here.knows(token):
        return here.names.claim(token, typed)
    names = new_names(here.store)
    taken = names.take(guesser)  # counted: one more name from this identity
    try:
        return here.names.claim(token, typed)
    except ClassError:
        names.forgive(taken)  # no new name (taken, a look-alike, the class full)
        raise


def take_lectern(here: Classroom, token: str, secret: str, guesser: Guesser, agent: str = ""):
    """This browser (`agent`: its browser and system, for the desk's devices) becomes a lecturer's with the class's
    secret (drawn by the server: strong, so checked whatever others guessed; TooManyGuesses, ClassError)."""
    guesses = key_guesses(here.store)
    taken = guesses.take(guesser, shared=False)
    if not here.lectern.take_lectern(token, secret, agent):
        raise ClassError("class.wrong_secret")
    guesses.forgive(taken)


def check_server_key(registry: Registry, given: str | None, server_key: str, guesser: Guesser):
    """The server's key (TooManyGuesses, ClassError): a short key waits while others of the identity guessed
    (counted in the store of `registry`, the server's classes)."""
    guesses = key_guesses(registry.store)
    taken = guesses.take(guesser, shared=len(server_key) < STRONG_KEY_CHARS)
    if not hmac.compare_digest((given or "").encode(), server_key.encode()):
        raise ClassError("class.wrong_key")
    guesses.forgive(taken)
