// Gang of Four in the web viewer: a card, the table (every seat, the trick, the exchange, the
// scores) and the replay's chart (each seat's total after each deal, lower is better, the
// target score as a line). Registered with the viewer (service/web/app.js) under the kind's
// name; served from the kind registry (gangs-games), so the viewer itself names no game.
"use strict";

(() => {
  const { el, svg, cardRow, cardBacks, seatName, words, scoreTable, SEAT_COLORS } = gangs.ui;

  // A Gang of Four card: its value in its colour (a Phoenix is P, the Dragon D).
  function fourCard(card) {
    const color = (card.color || "").replace("GANG_OF_FOUR_COLOR_", "").toLowerCase();
    const face = card.value === 11 ? "P" : card.value === 12 ? "D" : String(card.value);
    const title = card.value === 11 ? `${color} Phoenix` : card.value === 12 ? "Dragon" : `${color} ${card.value}`;
    return el("span", { class: `card four ${color}`, "data-id": card.id, "data-word": card.word, title }, face);
  }

  function drawFour(state) {
    const v = state.view.gang_of_four;
    const hands = state.hands || [];
    const seats = v.seats.map((s) => {
      const hand = hands[s.seat] && hands[s.seat].hand;
      const mark = [];
      if (v.turn === s.seat && v.phase !== "PHASE_OVER") mark.push("to play");
      if (s.announced_last_card) mark.push("last card!");
      if (s.barred) mark.push("barred");
      return el("section", { class: `seat${v.turn === s.seat ? " turn" : ""}`, "data-seat": s.seat },
        el("h3", {}, el("span", { class: "dot", "data-color": s.seat % SEAT_COLORS.length }), seatName(state.names, s.seat),
          el("span", { class: "meta", text: ` ${s.card_count} cards · ${s.score} points ${mark.join(" · ")}` })),
        el("div", { class: "hand" }, hand ? cardRow(hand, fourCard) : cardBacks(s.card_count)));
    });
    const trick = (v.trick || []).map((p) =>
      el("div", { class: "play" }, el("span", { class: "who", text: `seat ${p.seat}` }),
        p.pass ? el("span", { class: "pass", text: "pass" }) : [cardRow(p.cards, fourCard), el("span", { class: "kind", text: words(p.kind) })]));
    const exchange = (v.exchange || []).map((x) =>
      el("div", { class: "play" }, el("span", { class: "who", text: `seat ${x.from_seat} → seat ${x.to_seat}` }), fourCard(x.card)));
    return el("div", { class: "table four" },
      el("p", { class: "status-line", text: `deal ${v.deal_number} · ${words(v.direction)} · ${v.phase.replace("PHASE_", "").replace("_", " ").toLowerCase()}${v.must_play_multicolor_one ? " · the first lead holds m1" : ""}` }),
      el("div", { class: "seats" }, seats),
      el("div", { class: "centre" },
        el("h4", { text: "trick" }), trick.length ? trick : el("p", { class: "note", text: "(a new trick)" }),
        exchange.length ? [el("h4", { text: "exchange" }), exchange] : null),
      scoreTable(state, v.seats.map((s) => ({ seat: s.seat, score: s.score })), "points"));
  }

  // The replay's chart. `jump(seq)` opens the step at `seq`.
  function chart(outline, jump) {
    const rounds = outline.rounds || [];
    const width = 960, height = 190, left = 40, right = 12, top = 12, bottom = 28;
    const plotW = width - left - right, plotH = height - top - bottom;
    const children = [];
    const x = (i) => left + (rounds.length <= 1 ? plotW / 2 : (i * plotW) / (rounds.length - 1));
    const scored = rounds.filter((r) => r.summary);
    const target = outline.options && outline.options.gang_of_four && outline.options.gang_of_four.target_score;
    let max = Math.max(1, target || 0);
    for (const r of scored) for (const s of r.summary.seats) max = Math.max(max, s.total);
    const y = (v) => top + plotH - (v * plotH) / max;
    for (let seat = 0; seat < outline.players; seat++) {
      const points = scored.map((r, i) => [x(i), y((r.summary.seats[seat] || { total: 0 }).total)]);
      children.push(svg("polyline", { class: "line", points: points.map((p) => p.join(",")).join(" "), stroke: SEAT_COLORS[seat], fill: "none" }));
      points.forEach((p, i) => children.push(svg("circle", { cx: p[0], cy: p[1], r: 4, fill: SEAT_COLORS[seat], class: "point", onclick: () => jump(scored[i].seq) },
        svg("title", { text: `deal ${scored[i].number}: ${seatName(outline.names, seat)} ${scored[i].summary.seats[seat].total} points` }))));
    }
    if (target) {
      children.push(svg("line", { x1: left, x2: width - right, y1: y(target), y2: y(target), class: "target" }));
      children.push(svg("text", { x: width - right, y: y(target) - 3, class: "axis", "text-anchor": "end", text: `target ${target}` }));
    }
    children.push(svg("text", { x: 4, y: top + 10, class: "axis", text: String(max) }), svg("text", { x: 4, y: top + plotH, class: "axis", text: "0" }));
    scored.forEach((r, i) => children.push(svg("text", { x: x(i), y: height - 8, class: "axis", "text-anchor": "middle", text: String(r.number) })));
    const legend = [];
    for (let seat = 0; seat < outline.players; seat++) legend.push(el("span", { class: "legend" }, el("span", { class: "dot", "data-color": seat }), seatName(outline.names, seat)));
    return el("figure", { class: "chart", id: "chart" },
      svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "points per seat after each deal" }, children),
      el("figcaption", {}, "points after each deal (lower is better) ", legend));
  }

  gangs.register("gang-of-four", { title: "Gang of Four", round: "deal", table: drawFour, chart });
})();
