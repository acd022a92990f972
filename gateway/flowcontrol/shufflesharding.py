"""Shuffle sharding (k8s.io/apiserver pkg/util/shufflesharding): a flow's hash deals it a hand of
distinct queues out of a deck, and the sizing arithmetic behind the table of
kubernetes.io/docs/concepts/cluster-administration/flow-control/ (shuffle sharding).

The deal reads the hash as mixed-radix digits (deck, deck-1, ...): each digit picks one of the
cards not dealt yet, so equal hashes always get the same hand and the hand has no repeats.
"""

from __future__ import annotations

import argparse
import math
from fractions import Fraction

MAX_HASH_BITS = 60
MAX_DECK_SIZE = 1 << 26


def required_entropy_bits(deck_size: int, hand_size: int) -> int:
    return math.ceil(math.log2(deck_size) * hand_size)


def check_dealer(deck_size: int, hand_size: int) -> str | None:
    """Why a dealer of these sizes cannot be made (upstream's NewDealer), or None."""
    if deck_size <= 0 or hand_size <= 0:
        return f"deckSize {deck_size} or handSize {hand_size} is not positive"
    if hand_size > deck_size:
        return f"handSize {hand_size} is greater than deckSize {deck_size}"
    if deck_size > MAX_DECK_SIZE:
        return f"deckSize {deck_size} is impractically large"
    if required_entropy_bits(deck_size, hand_size) > MAX_HASH_BITS:
        return f"required entropy bits of deckSize {deck_size} and handSize {hand_size} is greater than {MAX_HASH_BITS}"
    return None


def deal(hash_value: int, deck_size: int, hand_size: int) -> list[int]:
    """The hand of ``hand_size`` distinct cards in [0, deck_size) that ``hash_value`` selects."""
    remainders = []
    for i in range(hand_size):
        hash_value, digit = divmod(hash_value, deck_size - i)
        remainders.append(digit)
    hand = []
    for i, card in enumerate(remainders):
        # The digit counts among the cards still in the deck: skip those dealt before it.
        for j in range(i, 0, -1):
            if card >= remainders[j - 1]:
                card += 1
        hand.append(card)
    return hand


def crush_probability(hand_size: int, queues: int, elephants: int) -> Fraction:
    """The chance that a mouse flow finds every queue of its hand taken by one of ``elephants``
    elephant flows, each with an independent uniformly random hand (exact).

    A Markov chain over how many of the mouse's queues are covered so far: an elephant's hand
    meets the mouse's in j queues (hypergeometric), of which m are newly covered."""
    hands = math.comb(queues, hand_size)
    meets = [
        Fraction(math.comb(hand_size, j) * math.comb(queues - hand_size, hand_size - j), hands)
        for j in range(hand_size + 1)
    ]
    covered = [Fraction(0)] * (hand_size + 1)
    covered[0] = Fraction(1)
    for _ in range(elephants):
        after = [Fraction(0)] * (hand_size + 1)
        for k, p in enumerate(covered):
            if not p:
                continue
            for j, pj in enumerate(meets):
                if not pj:
                    continue
                for m in range(max(0, j - k), min(j, hand_size - k) + 1):
                    split = Fraction(math.comb(hand_size - k, m) * math.comb(k, j - m), math.comb(hand_size, j))
                    after[k + m] += p * pj * split
        covered = after
    return covered[hand_size]


def sizing_main(argv: list[str]) -> int:
    """``protokube apf shuffle-sharding``: a row of the APF documentation's sizing table (15
    significant digits, the precision its floating-point figures agree with the exact values to)."""
    parser = argparse.ArgumentParser(
        prog="protokube apf shuffle-sharding",
        description="the probability that a mouse flow is crushed by elephant flows (all its queues taken)",
    )
    parser.add_argument("--hand-size", type=int, required=True)
    parser.add_argument("--queues", type=int, required=True)
    parser.add_argument("--elephants", type=int, nargs="+", required=True, help="one or more elephant counts")
    args = parser.parse_args(argv)
    problem = check_dealer(args.queues, args.hand_size)
    if problem is not None:
        parser.error(problem)
    if any(e < 0 for e in args.elephants):
        parser.error("--elephants must not be negative")
    values = [f"{float(crush_probability(args.hand_size, args.queues, e)):.15g}" for e in args.elephants]
    print(args.hand_size, args.queues, *values)
    return 0
