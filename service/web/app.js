// The gangs web viewer, hand-written, no dependencies. Three pages from one script:
//   /             the game list (filters, pages) from /api/games
//   /games/ID     a running game as a spectator (server-sent events from /api/games/ID/live),
//                 or a finished game's replay (/api/games/ID/replay and /steps): every hand,
//                 arrow keys to step, a deal or heist to jump to, a chart, the game file.
// Everything shown comes from the server's JSON (proto3 JSON mapping, the proto's field names);
// all text goes through textContent, never HTML.
"use strict";

const app = document.getElementById("app");

// ---- small DOM helpers ------------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "onclick") node.addEventListener("click", value);
    else if (key === "onchange") node.addEventListener("change", value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "text") node.textContent = value;
    else if (key === "onclick") node.addEventListener("click", value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat(Infinity)) if (child) node.append(child);
  return node;
}

async function getJson(url) {
  const response = await fetch(url, { headers: { accept: "application/json" } });
  // A keyed viewer whose session ended: reloading the page brings the login form back.
  if (response.status === 401) { window.location.reload(); throw new Error("log in again"); }
  const body = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

function showError(message) {
  app.replaceChildren(el("p", { class: "error", text: message }), el("p", {}, el("a", { href: "/", text: "back to the list" })));
  app.dataset.state = "error";
}

const SEAT_COLORS = ["#2b7bb9", "#d1495b", "#2e8b57", "#e09f3e", "#7b5ea7", "#555555"];

function seatName(names, seat) {
  const name = names && names[seat];
  return name ? `seat ${seat} · ${name}` : `seat ${seat}`;
}

// ---- cards ------------------------------------------------------------------------------------

// A Gang of Four card: its value in its colour (a Phoenix is P, the Dragon D).
function fourCard(card) {
  const color = (card.color || "").replace("GANG_OF_FOUR_COLOR_", "").toLowerCase();
  const face = card.value === 11 ? "P" : card.value === 12 ? "D" : String(card.value);
  const title = card.value === 11 ? `${color} Phoenix` : card.value === 12 ? "Dragon" : `${color} ${card.value}`;
  return el("span", { class: `card four ${color}`, "data-id": card.id, "data-word": card.word, title }, face);
}

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

function cardBacks(count) {
  const backs = [];
  for (let i = 0; i < count; i++) backs.push(el("span", { class: "card back" }));
  return backs;
}

function cardRow(cards, draw) {
  return el("span", { class: "cards" }, (cards || []).map(draw));
}

function words(name) {
  return (name || "").replace(/^[A-Z_]*?_(KIND|STREET|CATEGORY|MODE|STAGE|DIRECTION)_/, "").replace(/_/g, " ").toLowerCase();
}

// ---- the game list ----------------------------------------------------------------------------

async function listPage() {
  const params = new URLSearchParams(location.search);
  const query = new URLSearchParams();
  for (const key of ["kind", "status", "page_token"]) if (params.get(key)) query.set(key, params.get(key));
  query.set("limit", "50");
  let page;
  try {
    page = await getJson(`/api/games?${query}`);
  } catch (e) {
    return showError(`Cannot list the games: ${e.message}`);
  }
  const filter = (name, options) =>
    el("label", {}, `${name} `,
      el("select", {
        name, onchange: (event) => {
          const next = new URLSearchParams(location.search);
          if (event.target.value) next.set(name, event.target.value); else next.delete(name);
          next.delete("page_token");
          location.search = next.toString();
        },
      }, options.map(([value, label]) => el("option", { value, selected: (params.get(name) || "") === value, text: label }))));
  const rows = page.games.map((g) =>
    el("tr", { "data-game": g.game_id },
      el("td", {}, el("a", { href: `/games/${g.game_id}`, text: g.game_id })),
      el("td", { text: g.kind }),
      el("td", { text: `${g.seats_taken}/${g.players}` }),
      el("td", { class: `status ${g.state}`, text: g.state }),
      el("td", { text: (g.names || []).filter(Boolean).join(", ") }),
      el("td", { class: "num", text: g.last_seq })));
  const next = new URLSearchParams(location.search);
  if (page.next_page_token) next.set("page_token", page.next_page_token);
  const firstPage = new URLSearchParams(location.search);
  firstPage.delete("page_token");
  app.replaceChildren(
    el("h1", { text: "Games" }),
    el("div", { class: "filters" },
      filter("kind", [["", "any game"], ["gang-of-four", "Gang of Four"], ["the-gang", "The Gang"]]),
      filter("status", [["", "any status"], ["waiting", "waiting"], ["running", "running"], ["finished", "finished"], ["cancelled", "cancelled"], ["abandoned", "abandoned"]])),
    rows.length
      ? el("table", { class: "games" },
        el("thead", {}, el("tr", {}, ["game", "kind", "seats", "status", "players", "steps"].map((h) => el("th", { text: h })))),
        el("tbody", {}, rows))
      : el("p", { class: "note", text: "No game matches. Create one with `gangs new gang-of-four`." }),
    el("p", { class: "pager" },
      params.get("page_token") ? el("a", { href: `/?${firstPage}`, id: "first-page", text: "first page" }) : null, " ",
      page.next_page_token ? el("a", { href: `/?${next}`, id: "next-page", text: "next page" }) : null));
  app.dataset.state = "ready";
}

// ---- drawing a game's state -------------------------------------------------------------------

// `state`: { view (a GameView), hands (per seat: its own cards, replay only), names, players }.
function drawTable(state) {
  if (state.view && state.view.gang_of_four) return drawFour(state);
  if (state.view && state.view.the_gang) return drawGang(state);
  return el("p", { class: "note", text: "Waiting for the game to start." });
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

function scoreTable(state, rows, unit) {
  return el("table", { id: "scores", class: "scores" },
    el("thead", {}, el("tr", {}, el("th", { text: "seat" }), el("th", { text: unit }))),
    el("tbody", {}, rows.map((r) => el("tr", { "data-seat": r.seat },
      el("td", { text: seatName(state.names, r.seat) }), el("td", { class: "score", text: r.score })))));
}

// ---- a live game ------------------------------------------------------------------------------

// The states of a game that is over: it opens as a replay.
const OVER = ["finished", "cancelled", "abandoned"];

function livePage(id, summary) {
  const names = summary.names || [];
  const title = el("h1", {}, `${summary.kind} `, el("code", { text: id }), el("span", { class: "badge live", id: "mode", text: "live" }));
  const seqLine = el("p", { class: "meta", id: "live-seq", text: "connecting..." });
  const board = el("div", { id: "board" });
  const log = el("ol", { class: "events", id: "events" });
  app.replaceChildren(title, seqLine, board, el("h4", { text: "what happened" }), log,
    el("p", {}, el("a", { href: `/api/games/${id}/file`, download: `gangs-${id}.jsonl`, text: "download the game file (public part so far)" })));
  const source = new EventSource(`/api/games/${id}/live`);
  source.addEventListener("update", (message) => {
    const { update, events_text } = JSON.parse(message.data);
    board.replaceChildren(drawTable({ view: update.view, names, players: summary.players }));
    seqLine.textContent = `seq ${update.seq} · ${update.status.replace("GAME_STATUS_", "").toLowerCase()} · ${update.seats_taken}/${summary.players} seats taken`;
    for (const line of events_text) log.prepend(el("li", { text: `${update.seq}: ${line}` }));
    while (log.children.length > 200) log.lastChild.remove();
    app.dataset.seq = update.seq;
    app.dataset.state = "ready";
    if (OVER.includes(update.status.replace("GAME_STATUS_", "").toLowerCase())) {
      source.close();
      seqLine.append(" · ", el("a", { href: `/games/${id}`, id: "open-replay", text: "open the replay" }));
    }
  });
  source.addEventListener("error", (message) => {
    // A server-sent error (e.g. too slow a viewer) is followed by a reconnection from the last seq.
    if (message.data) seqLine.textContent = `${JSON.parse(message.data).error} (reconnecting)`;
  });
}

// ---- a finished game's replay -----------------------------------------------------------------

const WINDOW = 50;

function replayPage(id, outline) {
  const frames = new Map();
  const pending = new Map();
  const first = outline.first_seq;
  const last = outline.last_seq;
  const rounds = outline.rounds || [];
  const four = outline.kind === "gang-of-four";
  let current = first;
  let wanted = Number(new URLSearchParams(location.search).get("seq")) || last;
  wanted = Math.min(Math.max(wanted, first), last);

  const fetchWindow = (seq) => {
    const from = first + Math.floor((seq - first) / WINDOW) * WINDOW;
    if (!pending.has(from)) {
      pending.set(from, getJson(`/api/games/${id}/steps?from=${from}&limit=${WINDOW}`).then((page) => {
        for (const frame of page.steps) frames.set(frame.seq, frame);
      }).catch((e) => { pending.delete(from); throw e; }));
    }
    return pending.get(from);
  };

  const stepLabel = el("span", { id: "step" });
  const roundLabel = el("span", { id: "round" });
  const board = el("div", { id: "board" });
  const happened = el("ul", { class: "events", id: "step-events" });
  const chart = drawChart(outline, (seq) => go(seq));
  const button = (text, title, action) => el("button", { type: "button", title, onclick: action, text });
  const jumps = rounds.map((r) => el("button", { type: "button", class: "jump", "data-seq": r.seq, onclick: () => go(r.seq), text: `${four ? "deal" : "heist"} ${r.number}` }));

  app.replaceChildren(
    el("h1", {}, `${outline.kind} `, el("code", { text: id }), el("span", { class: "badge", id: "mode", text: "replay" })),
    el("p", { class: "outcome", id: "outcome", text: outline.outcome ? outline.outcome.summary : `the game was ${outline.game.state}` }),
    el("div", { class: "controls" },
      button("« first", "first step (Home)", () => go(first)),
      button("◀", "previous step (←)", () => go(current - 1)),
      stepLabel,
      button("▶", "next step (→)", () => go(current + 1)),
      button("last »", "last step (End)", () => go(last)),
      roundLabel,
      el("a", { href: `/api/games/${id}/file`, download: `gangs-${id}.jsonl`, id: "download", text: "download the game file" })),
    el("div", { class: "jumps", title: "jump to a deal (PageUp / PageDown)" }, jumps),
    board,
    el("h4", { text: "this step" }), happened,
    chart,
    el("p", { class: "help", text: "← → step · Home End first and last · PageUp PageDown previous and next " + (four ? "deal" : "heist") }));

  function roundAt(seq) {
    let found = null;
    for (const r of rounds) if (r.seq <= seq) found = r;
    return found;
  }

  function render(frame) {
    current = frame.seq;
    stepLabel.textContent = `step ${frame.seq} / ${last}`;
    const round = roundAt(frame.seq);
    roundLabel.textContent = round ? `${four ? "deal" : "heist"} ${round.number}` : "before the first deal";
    for (const jump of jumps) jump.classList.toggle("current", round !== null && Number(jump.dataset.seq) === round.seq);
    board.replaceChildren(drawTable({ view: frame.view, hands: frame.hands, names: outline.names, players: outline.players }));
    const lines = [];
    if (frame.record === "timed_out") lines.push(`seat ${frame.actor} ran out of time: ${frame.action} played for it`);
    else if (frame.action !== null) lines.push(`seat ${frame.actor}: ${frame.action}`);
    else if (frame.record === "joined") lines.push(`${seatName(outline.names, frame.actor)} joins`);
    else if (frame.record === "created") lines.push("the game is created");
    else if (frame.record === "expired") lines.push("the phase's deadline passed");
    else if (frame.record === "ended") lines.push(`the game was ${frame.ended}`);
    for (const line of frame.events_text) lines.push(line);
    happened.replaceChildren(...lines.map((line) => el("li", { text: line })));
    history.replaceState(null, "", `/games/${id}?seq=${frame.seq}`);
    app.dataset.seq = frame.seq;
    app.dataset.state = "ready";
  }

  // Shows `seq` as soon as its frame is here; a newer wish replaces an older one, so holding an
  // arrow key never queues requests.
  async function go(seq) {
    wanted = Math.min(Math.max(seq, first), last);
    if (frames.has(wanted)) {
      render(frames.get(wanted));
      if (wanted + WINDOW / 2 <= last && !frames.has(Math.min(wanted + WINDOW / 2, last))) fetchWindow(wanted + WINDOW / 2).catch(() => {});
      return;
    }
    app.dataset.state = "loading";
    const target = wanted;
    try {
      await fetchWindow(target);
    } catch (e) {
      return showError(`Cannot load step ${target}: ${e.message}`);
    }
    if (wanted === target && frames.has(target)) render(frames.get(target));
  }

  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const round = roundAt(current);
    const index = round ? rounds.indexOf(round) : -1;
    const moves = {
      ArrowRight: () => go(current + 1),
      ArrowLeft: () => go(current - 1),
      Home: () => go(first),
      End: () => go(last),
      PageDown: () => go(index + 1 < rounds.length ? rounds[index + 1].seq : last),
      PageUp: () => go(round && current > round.seq ? round.seq : index > 0 ? rounds[index - 1].seq : first),
    };
    if (moves[event.key]) {
      event.preventDefault();
      // Stepping from the frame already wanted, so quick presses add up.
      if (event.key === "ArrowRight" || event.key === "ArrowLeft") current = wanted;
      moves[event.key]();
    }
  });
  go(wanted);
}

// The chart: Gang of Four, each seat's total after each deal (lower is better; the target
// score as a line); The Gang, each heist's result (vault or alarm). A click jumps there.
function drawChart(outline, jump) {
  const rounds = outline.rounds || [];
  const width = 960, height = 190, left = 40, right = 12, top = 12, bottom = 28;
  const plotW = width - left - right, plotH = height - top - bottom;
  const children = [];
  const x = (i) => left + (rounds.length <= 1 ? plotW / 2 : (i * plotW) / (rounds.length - 1));
  if (outline.kind === "gang-of-four") {
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

// ---- routing ----------------------------------------------------------------------------------

async function gamePage(id) {
  let game;
  try {
    game = await getJson(`/api/games/${encodeURIComponent(id)}`);
  } catch (e) {
    return showError(`Cannot open game ${id}: ${e.message}`);
  }
  document.title = `gangs · ${game.game.kind} ${id}`;
  if (!OVER.includes(game.game.state)) return livePage(id, game.game);
  let outline;
  try {
    outline = await getJson(`/api/games/${encodeURIComponent(id)}/replay`);
  } catch (e) {
    return showError(`Cannot replay game ${id}: ${e.message}`);
  }
  replayPage(id, outline);
}

const route = location.pathname.match(/^\/games\/([A-Za-z0-9_-]{1,64})\/?$/);
if (route) gamePage(route[1]);
else listPage();
