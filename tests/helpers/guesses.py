"""Driving session/limits.py's allowances in tests, on a clock the test moves."""

from session import limits


def waits_as_used_up(guesses: limits.Guesses, who: limits.Guesser, clock: list[float], allowance: int,
                     rounds: int) -> list[float]:
    """`who`'s session allowance (`allowance` guesses) used up `rounds` times, each after waiting out the last: the
    waits told (`clock[0]` is the time session.limits reads, moved on by each wait)."""
    waits = []
    for _ in range(rounds):
        for _ in range(allowance):
            guesses.take(who)
        waits.append(guesses.wait_s(who, shared=False))
        clock[0] += waits[-1]
    return waits
