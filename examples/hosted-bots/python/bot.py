"""A hosted gangs bot in Python, for both games (docs/hosted-bots.md).

Built into a WebAssembly component with componentize-py (see the README): the server calls
`decide` once per decision, on a fresh instance, with the seat's update as one line of JSON,
and plays the action it answers: the 0-based index of a legal action. What it prints on stderr
is its log, kept per decision.

The policies are those of the C example, kept simple:
- Gang of Four: give back the weakest card; otherwise play the combination that sheds the most
  cards, weakest first (card ids are ordered by single-card strength); pass only when nothing
  else is legal.
- The Gang: take the chip whose stars match a rough estimate of the hand (more stars for a
  stronger hand), preferring chips nobody holds, then say `ready`; accept every specialist
  proposal, never propose one; guess and choose cards at random.

`random` draws from bytes the host derives from the game's seed, so a rerun of a decision
draws the same numbers.
"""

import json
import random
import sys

import wit_world


def gang_of_four(legal):
    gives = [
        (action["gang_of_four"]["give_back"]["card_id"], i)
        for i, action in enumerate(legal)
        if "give_back" in action.get("gang_of_four", {})
    ]
    if gives:
        return min(gives)[1], "gives back its weakest card"
    plays = [
        (-len(ids), max(ids), i)
        for i, action in enumerate(legal)
        for ids in [action.get("gang_of_four", {}).get("play", {}).get("card_ids")]
        if ids
    ]
    if plays:
        return min(plays)[2], "sheds the most cards, weakest first"
    return 0, "passes"


SUITS = {"SUIT_CLUBS", "SUIT_DIAMONDS", "SUIT_HEARTS", "SUIT_SPADES"}
# Percent of the table a hand of each category (high card .. straight flush) probably beats.
SHARE = [5, 35, 60, 70, 80, 85, 90, 95, 95]


def runs_of_five(ranks):
    """Whether the set of ranks (2..14, the Ace also low) holds five in a row."""
    return any(
        all((14 if r - k == 1 else r - k) in ranks for k in range(5)) for r in range(5, 15)
    )


def category(cards):
    """The best poker category (0 high card .. 8 straight flush) among `cards`, roughly, and
    the highest rank it involves."""
    counts = {}
    by_suit = {}
    for card in cards:
        rank = card.get("rank", 0)
        if not 2 <= rank <= 14:
            continue
        counts[rank] = counts.get(rank, 0) + 1
        if card.get("suit") in SUITS:  # the suitless Jack makes no flush
            by_suit.setdefault(card["suit"], set()).add(rank)
    if not counts:
        return 0, 2
    sizes = sorted(counts.values(), reverse=True) + [0]
    top = max(counts)
    paired = max((r for r, c in counts.items() if c >= 2), default=0)
    flush = [ranks for ranks in by_suit.values() if len(ranks) >= 5]
    if any(runs_of_five(ranks) for ranks in flush):
        return 8, top
    if sizes[0] >= 4:
        return 7, top
    if sizes[0] == 3 and sizes[1] >= 2:
        return 6, top
    if flush:
        return 5, top
    if runs_of_five(set(counts)):
        return 4, top
    top = paired or top
    if sizes[0] == 3:
        return 3, top
    if sizes[0] == 2 and sizes[1] == 2:
        return 2, top
    return (1 if sizes[0] == 2 else 0), top


def wanted_stars(view):
    cat, top = category(view.get("private_cards", []) + view.get("community", []))
    players = max(view.get("players", 1), 1)
    percent = min(SHARE[cat] + top * 25 // 14, 95)
    return min(max((percent * players + 50) // 100, 1), players)


def the_gang(update, legal):
    view = update.get("view", {}).get("the_gang", {})
    seat = update.get("seat", 0)
    inner = [action.get("the_gang", {}) for action in legal]
    for i, action in enumerate(inner):
        if action.get("vote", {}).get("accept"):
            return i, "accepts the proposal"
    guesses = [i for i, action in enumerate(inner) if "guess" in action or "choose_card" in action]
    if guesses:
        return random.choice(guesses), "guesses or chooses at random"
    ready = next((i for i, action in enumerate(inner) if "ready" in action), None)
    held = next(
        (c.get("stars_by_seat", []) for c in view.get("chips", []) if c.get("street") == view.get("street")),
        [],
    )
    mine = held[seat] if seat < len(held) else 0
    if mine and ready is not None:
        return ready, "is content with its chip"
    if not mine:
        want = wanted_stars(view)
        takes = [
            (abs(stars - want) + (100 if stars in held else 0), i)
            for i, action in enumerate(inner)
            for stars in [action.get("take", {}).get("stars", 0)]
            if stars
        ]
        if takes:
            return min(takes)[1], "takes the chip its hand is worth"
    if ready is not None:
        return ready, "says ready"
    return random.randrange(len(legal)), "plays a random legal action"


def choose(update):
    legal = update.get("legal_actions", [])
    if not legal:
        return 0, "has no legal action"
    if "gang_of_four" in legal[0]:
        return gang_of_four(legal)
    if "the_gang" in legal[0]:
        return the_gang(update, legal)
    return random.randrange(len(legal)), "plays a random legal action (a game it does not know)"


class WitWorld(wit_world.WitWorld):
    def decide(self, update: str) -> str:
        parsed = json.loads(update)
        choice, why = choose(parsed)
        # The log: one line per decision, kept by the server for the bot's owner.
        print(
            f"python-bot: seq {parsed.get('seq')} seat {parsed.get('seat')}: "
            f"{len(parsed.get('legal_actions', []))} legal, chose {choice}: {why}",
            file=sys.stderr,
        )
        return str(choice)
