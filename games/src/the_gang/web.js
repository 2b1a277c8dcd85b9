// The Gang in the web viewer: a card (four-colour deck), the table (every seat's chips and
// hand, the board, the last showdown, vaults and alarms) and the replay's chart (each heist:
// a vault opened or an alarm). Registered with the viewer (service/web/app.js) under the
// kind's name; served from the kind registry (gangs-games), so the viewer itself names no game.
"use strict";

(() => {
  const { el, svg, cardRow, cardBacks, seatName, words, scoreTable, SEAT_COLORS } = gangs.ui;

  const SUITS = {
    SUIT_CLUBS: ["♣", "clubs"],
    SUIT_DIAMONDS: ["♦", "diamonds"],
    SUIT_HEARTS: ["♥", "hearts"],
    SUIT_SPADES: ["♠", "spades"],
    SUIT_NONE: ["", "suitless"],
  };
  const RANKS = { 11: "J", 12: "Q", 13: "K", 14: "A" };

  // A The Gang card: rank and suit, four-colour deck (the suitless Jack of specialist 7 is grey).
  function gangCard(card) {
    if (!card) return null;
    const [symbol, suit] = SUITS[card.suit] || SUITS.SUIT_NONE;
    const rank = RANKS[card.rank] || String(card.rank);
    return el("span", { class: `card gang ${suit}`, "data-id": card.id, "data-word": rank + symbol, title: `${rank} of ${suit}` },
      el("span", { class: "rank", text: rank }), el("span", { class: "suit", text: symbol }));
  }

  function drawGang(state) {
    const v = state.view.the_gang;
    const hands = state.hands || [];
    const chipsOf = (seat) => (v.chips || []).map((c) => c.stars_by_seat[seat] ? `${words(c.street)} ${c.stars_by_seat[seat]}★` : null).filter(Boolean).join(" ");
    const seats = [];
    for (let seat = 0; seat < v.players; seat++) {
      const own = hands[seat];
      const extra = [];
      if (own && own.remembered && own.remembered.length) extra.push(el("span", { class: "meta", text: " held earlier: " }), cardRow(own.remembered, gangCard));
      if (own && own.received) extra.push(el("span", { class: "meta", text: ` passed from seat ${own.received.from_seat}: ` }), gangCard(own.received.card));
      for (const shown of (own && own.shown_to_me) || []) extra.push(el("span", { class: "meta", text: ` shown by seat ${shown.from_seat}: ` }), gangCard(shown.card));
      seats.push(el("section", { class: "seat", "data-seat": seat },
        el("h3", {}, el("span", { class: "dot", "data-color": seat % SEAT_COLORS.length }), seatName(state.names, seat),
          el("span", { class: "meta", text: ` ${chipsOf(seat)}${v.ready && v.ready[seat] ? " · ready" : ""}` })),
        el("div", { class: "hand" }, own ? cardRow(own.private_cards, gangCard) : cardBacks((v.hand_sizes || [])[seat] || 0),
          extra.length ? el("span", { class: "extra" }, extra) : null)));
    }
    const showdown = (v.last_showdown || []).map((r) =>
      el("div", { class: "play" }, el("span", { class: "who", text: `seat ${r.seat} ${r.stars}★` }), cardRow(r.cards, gangCard),
        el("span", { class: "kind", text: `${words(r.category)}${r.out_of_order ? " · out of order" : ""}` })));
    const status = `heist ${v.heist} · ${words(v.mode)} · ${words(v.stage)}${v.stage === "THE_GANG_STAGE_CHIPS" ? ` (${words(v.street)})` : ""}` +
      ` · vaults ${v.vaults}/3 · alarms ${v.alarms}/${v.alarms_to_lose}` +
      ((v.active_challenges || []).length ? ` · challenges ${v.active_challenges.join(", ")}` : "") +
      (v.active_specialist ? ` · specialist ${v.active_specialist}${v.specialist_used ? " (used)" : ""}` : "");
    return el("div", { class: "table gang" },
      el("p", { class: "status-line", text: status }),
      el("div", { class: "seats" }, seats),
      el("div", { class: "centre" },
        el("h4", { text: "board" }), el("div", { class: "board" }, cardRow(v.community, gangCard)),
        showdown.length ? [el("h4", { text: `last showdown: ${v.last_heist_success ? "success" : "failed"}` }), showdown] : null),
      el("table", { id: "scores", class: "scores" },
        el("tbody", {},
          el("tr", {}, el("th", { text: "vaults" }), el("td", { class: "score", "data-key": "vaults", text: v.vaults })),
          el("tr", {}, el("th", { text: "alarms" }), el("td", { class: "score", "data-key": "alarms", text: v.alarms })),
          v.game_over ? el("tr", {}, el("th", { text: "result" }), el("td", { class: "score", "data-key": "result", text: v.won ? "won" : "lost" })) : null)));
  }

  // The replay's chart. `jump(seq)` opens the step at `seq`.
  function chart(outline, jump) {
    const rounds = outline.rounds || [];
    const width = 960, height = 190, left = 40, right = 12, top = 12, bottom = 28;
    const plotW = width - left - right, plotH = height - top - bottom;
    const children = [];
    const x = (i) => left + (rounds.length <= 1 ? plotW / 2 : (i * plotW) / (rounds.length - 1));
    const barW = Math.max(6, Math.min(40, plotW / Math.max(rounds.length, 1) - 6));
    rounds.forEach((r, i) => {
      const result = r.summary;
      const ok = result && result.success;
      const h = result ? plotH / 2 : plotH / 6;
      const cx = x(i);
      children.push(svg("rect", { x: cx - barW / 2, y: ok ? top + plotH / 2 - h : top + plotH / 2, width: barW, height: h,
        class: result ? (ok ? "vault" : "alarm") : "open", onclick: () => jump(r.seq) },
        svg("title", { text: `heist ${r.number}: ${result ? `${ok ? "vault opened" : "alarm"} (${result.vaults} vaults, ${result.alarms} alarms)${result.challenges.length ? `; challenges ${result.challenges.join(", ")}` : ""}${result.specialist ? `; specialist ${result.specialist}` : ""}` : "not finished"}` })));
      children.push(svg("text", { x: cx, y: height - 8, class: "axis", "text-anchor": "middle", text: String(r.number) }));
    });
    children.push(svg("line", { x1: left, x2: width - right, y1: top + plotH / 2, y2: top + plotH / 2, class: "baseline" }));
    return el("figure", { class: "chart", id: "chart" },
      svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "result of each heist" }, children),
      el("figcaption", { text: "each heist: a vault opened (up) or an alarm (down)" }));
  }

  gangs.register("the-gang", { title: "The Gang", round: "heist", table: drawGang, chart });
})();
