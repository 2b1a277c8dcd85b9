/* A hosted gangs bot in C, for both games (docs/hosted-bots.md).
 *
 * The server runs this module once per decision: it reads the seat's Update, one line of JSON
 * on stdin, and prints one line on stdout, the 0-based index of the legal action it plays.
 * A line on stderr says what it chose; the server keeps it as the bot's log.
 *
 * The policies are those of the Python example (examples/python), kept simple:
 * - Gang of Four: give back the weakest card; otherwise play the combination that sheds the
 *   most cards, weakest first (card ids are ordered by single-card strength); pass only when
 *   nothing else is legal.
 * - The Gang: take the chip whose stars match a rough estimate of the hand (more stars for a
 *   stronger hand), preferring chips nobody holds, then say `ready`; accept every specialist
 *   proposal, never propose one; guess and choose cards at random.
 *
 * No JSON library: the input is the proto3 JSON of one message, and a few functions that skip
 * values and look up keys are all it takes. Random draws come from getentropy(), which the
 * host answers from the game's seed: a rerun of the decision draws the same numbers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- reading the JSON ------------------------------------------------------------------ */

static const char *ws(const char *p) {
  while (p && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
  return p;
}

/* Past the string that starts at p (at its opening quote), or NULL if it does not end. */
static const char *skip_string(const char *p) {
  if (!p || *p != '"') return NULL;
  for (p++; *p; p++) {
    if (*p == '\\') {
      if (!*++p) return NULL;
    } else if (*p == '"') {
      return p + 1;
    }
  }
  return NULL;
}

/* Past the value that starts at p (after white space), or NULL if it is malformed. */
static const char *skip(const char *p) {
  p = ws(p);
  if (!p || !*p) return NULL;
  if (*p == '"') return skip_string(p);
  if (*p == '{' || *p == '[') {
    char close = *p == '{' ? '}' : ']';
    p = ws(p + 1);
    if (*p == close) return p + 1;
    for (;;) {
      if (close == '}') { /* a member: "key": value */
        p = ws(skip_string(ws(p)));
        if (!p || *p != ':') return NULL;
        p++;
      }
      p = ws(skip(p));
      if (!p) return NULL;
      if (*p == ',') { p++; continue; }
      if (*p == close) return p + 1;
      return NULL;
    }
  }
  const char *start = p; /* a number, true, false or null */
  while (*p && strchr("+-.0123456789eEtrufalsn", *p)) p++;
  return p == start ? NULL : p;
}

/* The value of `key` in the object at p, or NULL (no object, no such key). */
static const char *get(const char *p, const char *key) {
  p = ws(p);
  if (!p || *p != '{') return NULL;
  size_t len = strlen(key);
  p = ws(p + 1);
  while (p && *p == '"') {
    const char *name = p + 1;
    const char *end = skip_string(p);
    p = ws(end);
    if (!p || *p != ':') return NULL;
    p = ws(p + 1);
    if (end && (size_t)(end - 1 - name) == len && memcmp(name, key, len) == 0) return p;
    p = ws(skip(p));
    if (p && *p == ',') p = ws(p + 1);
  }
  return NULL;
}

/* The first element of the array at p, or NULL (empty, or not an array). */
static const char *first(const char *p) {
  p = ws(p);
  if (!p || *p != '[') return NULL;
  p = ws(p + 1);
  return *p == ']' ? NULL : p;
}

/* The element after the one at p, or NULL after the last. Loops over arrays with first() and
   next() take one pass: an update may list hundreds of legal actions. */
static const char *next(const char *p) {
  p = ws(skip(p));
  return p && *p == ',' ? ws(p + 1) : NULL;
}

/* The i-th element (0-based) of the array at p, or NULL. */
static const char *nth(const char *p, int i) {
  for (p = first(p); p && i > 0; i--) p = next(p);
  return p;
}

/* How many elements the array at p has (0 when it is not an array). */
static int count(const char *p) {
  int n = 0;
  for (p = first(p); p; p = next(p)) n++;
  return n;
}

static long num(const char *p, long otherwise) {
  p = ws(p);
  return p && (*p == '-' || (*p >= '0' && *p <= '9')) ? strtol(p, NULL, 10) : otherwise;
}

/* Whether the value at p is the string `s` (enum names, as the proto3 JSON mapping writes). */
static int is(const char *p, const char *s) {
  size_t len = strlen(s);
  p = ws(p);
  return p && *p == '"' && strncmp(p + 1, s, len) == 0 && p[1 + len] == '"';
}

/* Whether the values at a and b are the same string. */
static int same(const char *a, const char *b) {
  const char *end = skip_string(ws(a));
  a = ws(a);
  return end && b && strncmp(a, ws(b), (size_t)(end - a)) == 0;
}

/* ---- randomness ---------------------------------------------------------------------------- */

static uint32_t random_below(uint32_t n) {
  uint32_t r = 0;
  if (getentropy(&r, sizeof r) != 0) r = 0;
  return n ? r % n : 0;
}

/* ---- Gang of Four ------------------------------------------------------------------------- */

static int gang_of_four(const char *legal, const char **why) {
  int best = -1, i = 0;
  long best_cards = -1, best_top = 0;
  const char *action;
  for (action = first(legal), i = 0; action; action = next(action), i++) {
    /* the weakest card to give back */
    const char *give = get(get(action, "gang_of_four"), "give_back");
    long id = num(get(give, "card_id"), -1);
    if (give && (best < 0 || id < best_top)) best = i, best_top = id;
  }
  if (best >= 0) return *why = "gives back its weakest card", best;
  for (action = first(legal), i = 0; action; action = next(action), i++) {
    /* the play shedding the most cards, weakest first */
    const char *ids = get(get(get(action, "gang_of_four"), "play"), "card_ids");
    long cards = 0, top = 0;
    for (const char *id = first(ids); id; id = next(id), cards++)
      if (num(id, 0) > top) top = num(id, 0);
    if (ids && (cards > best_cards || (cards == best_cards && top < best_top)))
      best = i, best_cards = cards, best_top = top;
  }
  if (best >= 0) return *why = "sheds the most cards, weakest first", best;
  return *why = "passes", 0; /* only a pass is left */
}

/* ---- The Gang ------------------------------------------------------------------------------ */

/* The best poker category (0 high card .. 8 straight flush) among the cards of both lists,
   roughly: enough to choose a chip. `top` is the highest rank it involves. */
static int category(const char *lists[2], int *top) {
  int ranks[15] = {0}, suits[5] = {0}, in_suit[5][15] = {{0}};
  *top = 2;
  for (int l = 0; l < 2; l++) {
    for (const char *card = first(lists[l]); card; card = next(card)) {
      long rank = num(get(card, "rank"), 0); /* 2 .. 14, the Ace high */
      const char *suit = get(card, "suit");
      int s = is(suit, "SUIT_CLUBS") ? 1 : is(suit, "SUIT_DIAMONDS") ? 2
            : is(suit, "SUIT_HEARTS") ? 3 : is(suit, "SUIT_SPADES") ? 4 : 0;
      if (rank < 2 || rank > 14) continue;
      ranks[rank]++;
      if (rank > *top) *top = (int)rank;
      if (s) suits[s]++, in_suit[s][rank] = 1; /* the suitless Jack (s = 0) makes no flush */
    }
  }
  int most = 0, second = 0, paired = 0;
  for (int r = 2; r <= 14; r++) {
    if (ranks[r] >= most) second = most, most = ranks[r];
    else if (ranks[r] > second) second = ranks[r];
    if (ranks[r] >= 2) paired = r;
  }
  int straight = 0, flush = 0, straight_flush = 0;
  for (int r = 5; r <= 14; r++) { /* r: the straight's highest rank; the Ace is also a 1 */
    int run = 1;
    for (int k = 0; k < 5 && run; k++) run = ranks[r - k == 1 ? 14 : r - k] > 0;
    straight |= run;
  }
  for (int s = 1; s <= 4; s++) {
    if (suits[s] < 5) continue;
    flush = 1;
    for (int r = 5; r <= 14; r++) {
      int run = 1;
      for (int k = 0; k < 5 && run; k++) run = in_suit[s][r - k == 1 ? 14 : r - k];
      straight_flush |= run;
    }
  }
  if (straight_flush) return 8;
  if (most >= 4) return 7;
  if (most == 3 && second >= 2) return 6;
  if (flush) return 5;
  if (straight) return 4;
  if (paired) *top = paired;
  if (most == 3) return 3;
  if (most == 2 && second == 2) return 2;
  return most == 2 ? 1 : 0;
}

/* Where the hand probably stands among the players, as stars 1..players: the category
   decides, the highest rank refines. */
static long wanted_stars(const char *view) {
  static const int share[9] = {5, 35, 60, 70, 80, 85, 90, 95, 95}; /* percent, by category */
  const char *lists[2] = {get(view, "private_cards"), get(view, "community")};
  int top, cat = category(lists, &top);
  long players = num(get(view, "players"), 1);
  long percent = share[cat] + top * 25 / 14;
  if (percent > 95) percent = 95;
  long stars = (percent * players + 50) / 100;
  return stars < 1 ? 1 : stars > players ? players : stars;
}

static int the_gang(const char *update, const char *legal, int n, const char **why) {
  const char *view = get(get(update, "view"), "the_gang"), *action;
  long seat = num(get(update, "seat"), 0);
  int ready = -1, guesses = 0, i;
  for (action = first(legal), i = 0; action; action = next(action), i++) {
    const char *inner = get(action, "the_gang");
    const char *accept = ws(get(get(inner, "vote"), "accept"));
    if (accept && strncmp(accept, "true", 4) == 0) return *why = "accepts the proposal", i;
    if (get(inner, "guess") || get(inner, "choose_card")) guesses++;
    if (get(inner, "ready")) ready = i;
  }
  if (guesses) { /* a team guess or a card to choose: any of them, at random */
    int pick = (int)random_below((uint32_t)guesses);
    for (action = first(legal), i = 0; action; action = next(action), i++) {
      const char *inner = get(action, "the_gang");
      if ((get(inner, "guess") || get(inner, "choose_card")) && pick-- == 0)
        return *why = "guesses or chooses at random", i;
    }
  }
  /* Who holds which chip of the open street (stars by seat, 0: none). */
  const char *street = get(view, "street"), *held = NULL;
  for (const char *chips = first(get(view, "chips")); chips; chips = next(chips))
    if (same(get(chips, "street"), street)) held = get(chips, "stars_by_seat");
  long mine = num(nth(held, (int)seat), 0);
  if (mine && ready >= 0) return *why = "is content with its chip", ready;
  if (!mine) { /* the chip nearest the hand's estimate, one nobody holds if there is one */
    long want = wanted_stars(view), best_distance = 1 << 20;
    int best = -1;
    for (action = first(legal), i = 0; action; action = next(action), i++) {
      long stars = num(get(get(get(action, "the_gang"), "take"), "stars"), 0);
      if (!stars) continue;
      int taken = 0;
      for (const char *s = first(held); s; s = next(s)) taken |= num(s, 0) == stars;
      long distance = labs(stars - want) + (taken ? 100 : 0);
      if (distance < best_distance) best = i, best_distance = distance;
    }
    if (best >= 0) return *why = "takes the chip its hand is worth", best;
  }
  if (ready >= 0) return *why = "says ready", ready;
  return *why = "plays a random legal action", (int)random_below((uint32_t)n);
}

/* ---- the decision ------------------------------------------------------------------------- */

/* The whole of stdin, NUL-terminated (the update can be tens of kilobytes). */
static char *read_stdin(void) {
  size_t size = 0, capacity = 1 << 16;
  char *text = malloc(capacity);
  for (;;) {
    if (!text) return NULL;
    size_t got = fread(text + size, 1, capacity - size - 1, stdin);
    size += got;
    if (got == 0) break;
    if (size + 1 == capacity) text = realloc(text, capacity *= 2);
  }
  text[size] = 0;
  return text;
}

int main(void) {
  char *update = read_stdin();
  const char *legal = get(update, "legal_actions");
  int n = count(legal), choice = 0;
  const char *why = "could not read its update";
  if (get(first(legal), "gang_of_four")) {
    choice = gang_of_four(legal, &why);
  } else if (get(first(legal), "the_gang")) {
    choice = the_gang(update, legal, n, &why);
  } else if (n > 0) {
    why = "plays a random legal action (a game it does not know)";
    choice = (int)random_below((uint32_t)n);
  }
  /* The log first: the decision ends as soon as the answer's line reaches stdout. */
  fprintf(stderr, "c-bot: seq %ld seat %ld: %d legal, chose %d: %s\n", num(get(update, "seq"), -1),
          num(get(update, "seat"), -1), n, choice, why);
  printf("%d\n", choice);
  return 0;
}
