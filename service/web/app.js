// The gangs web viewer, hand-written, no dependencies. Five pages from one script:
//   /             the game list (filters, pages) from /api/games
//   /ladders      the ladders (/api/ladders); /ladders/NAME a ladder's leaderboard and its
//                 recent games, each linking to its replay (/api/ladders/NAME, .../games), kept
//                 up to date by server-sent events (/api/ladders/NAME/live), with a CSV download;
//                 /ladders/NAME/bots/BOT@V one bot's page (/api/ladders/NAME/bots/BOT@V)
//   /games/ID     a running game as a spectator (server-sent events from /api/games/ID/live),
//                 or a finished game's replay (/api/games/ID/replay and /steps): every hand,
//                 arrow keys to step, a deal or heist to jump to, a chart, the game file.
// Everything shown comes from the server's JSON (proto3 JSON mapping, the proto's field names);
// all text goes through textContent, never HTML. This script names no game: each game's table
// and chart come from its renderer (/assets/games.js, every kind's script from the kind
// registry), which calls `gangs.register(kind, { title, round, table(state), chart(outline, jump) })`
// and draws with `gangs.ui`. Pages are drawn once every script has run (DOMContentLoaded).
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

// ---- the games' renderers ---------------------------------------------------------------------

const gangs = {
  renderers: new Map(),
  register(kind, renderer) { this.renderers.set(kind, renderer); },
  renderer(kind) { return this.renderers.get(kind); },
  // What one round of `kind` is called ("deal", "heist"); "round" for a kind without a renderer.
  round(kind) { const r = this.renderer(kind); return r ? r.round : "round"; },
};
window.gangs = gangs;

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
    laddersTabs("games"),
    el("h1", { text: "Games" }),
    el("div", { class: "filters" },
      filter("kind", [["", "any game"], ...[...gangs.renderers].map(([kind, r]) => [kind, r.title])]),
      filter("status", [["", "any status"], ["waiting", "waiting"], ["running", "running"], ["finished", "finished"], ["cancelled", "cancelled"], ["abandoned", "abandoned"]])),
    rows.length
      ? el("table", { class: "games" },
        el("thead", {}, el("tr", {}, ["game", "kind", "seats", "status", "players", "steps"].map((h) => el("th", { text: h })))),
        el("tbody", {}, rows))
      : el("p", { class: "note", text: `No game matches. Create one with \`gangs new ${[...gangs.renderers.keys()][0] || "KIND"}\`.` }),
    el("p", { class: "pager" },
      params.get("page_token") ? el("a", { href: `/?${firstPage}`, id: "first-page", text: "first page" }) : null, " ",
      page.next_page_token ? el("a", { href: `/?${next}`, id: "next-page", text: "next page" }) : null));
  app.dataset.state = "ready";
}

// ---- drawing a game's state -------------------------------------------------------------------

// `state`: { kind, view (a GameView), hands (per seat: its own cards, replay only), names, players }.
function drawTable(state) {
  const renderer = gangs.renderer(state.kind);
  const started = state.view && Object.keys(state.view).length > 0;
  if (!started) return el("p", { class: "note", text: "Waiting for the game to start." });
  if (!renderer) return el("p", { class: "note", text: `This viewer cannot draw ${state.kind} games.` });
  return renderer.table(state);
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
    board.replaceChildren(drawTable({ kind: summary.kind, view: update.view, names, players: summary.players }));
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
  const roundWord = gangs.round(outline.kind);
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
  const renderer = gangs.renderer(outline.kind);
  const chart = renderer ? renderer.chart(outline, (seq) => go(seq)) : null;
  const button = (text, title, action) => el("button", { type: "button", title, onclick: action, text });
  const jumps = rounds.map((r) => el("button", { type: "button", class: "jump", "data-seq": r.seq, onclick: () => go(r.seq), text: `${roundWord} ${r.number}` }));

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
    el("div", { class: "jumps", title: `jump to a ${roundWord} (PageUp / PageDown)` }, jumps),
    board,
    el("h4", { text: "this step" }), happened,
    chart,
    el("p", { class: "help", text: "← → step · Home End first and last · PageUp PageDown previous and next " + roundWord }));

  function roundAt(seq) {
    let found = null;
    for (const r of rounds) if (r.seq <= seq) found = r;
    return found;
  }

  function render(frame) {
    current = frame.seq;
    stepLabel.textContent = `step ${frame.seq} / ${last}`;
    const round = roundAt(frame.seq);
    roundLabel.textContent = round ? `${roundWord} ${round.number}` : `before the first ${roundWord}`;
    for (const jump of jumps) jump.classList.toggle("current", round !== null && Number(jump.dataset.seq) === round.seq);
    board.replaceChildren(drawTable({ kind: outline.kind, view: frame.view, hands: frame.hands, names: outline.names, players: outline.players }));
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

// ---- the ladders ------------------------------------------------------------------------------

function laddersTabs(current) {
  return el("p", { class: "tabs" },
    el("a", { href: "/", class: current === "games" ? "current" : null, text: "games" }), " · ",
    el("a", { href: "/ladders", class: current === "ladders" ? "current" : null, text: "ladders" }));
}

async function laddersPage() {
  document.title = "gangs · ladders";
  let answer;
  try {
    answer = await getJson("/api/ladders");
  } catch (e) {
    return showError(`Cannot list the ladders: ${e.message}`);
  }
  const ladders = answer.ladders || [];
  const rows = ladders.map((l) =>
    el("tr", { "data-ladder": l.name },
      el("td", {}, el("a", { href: `/ladders/${encodeURIComponent(l.name)}`, text: l.name })),
      el("td", { text: l.kind }),
      el("td", { class: "num", text: l.players }),
      el("td", { class: "num", text: l.bots }),
      el("td", { class: "num", text: l.games }),
      el("td", { text: `${l.turn_ms} ms a turn${l.duplicate ? ", duplicate" : ""}` })));
  app.replaceChildren(
    laddersTabs("ladders"),
    el("h1", { text: "Ladders" }),
    rows.length
      ? el("table", { class: "games", id: "ladders" },
        el("thead", {}, el("tr", {}, ["ladder", "kind", "seats", "bots", "games", "clocks"].map((h) => el("th", { text: h })))),
        el("tbody", {}, rows))
      : el("p", { class: "note", text: "No ladder yet. Create one with `gangs ladder create NAME --kind KIND`." }));
  app.dataset.state = "ready";
}

// A small line of the last conservative ratings, oldest first.
function trendLine(trend) {
  if (!trend || trend.length < 2) return el("span", { class: "note", text: trend && trend.length ? "—" : "" });
  const width = 90, height = 22, low = Math.min(...trend), high = Math.max(...trend);
  const span = high - low || 1;
  const points = trend.map((v, i) => `${(i * width / (trend.length - 1)).toFixed(1)},${(height - 2 - (v - low) * (height - 4) / span).toFixed(1)}`);
  const rising = trend[trend.length - 1] >= trend[0];
  return svg("svg", { class: `trend ${rising ? "up" : "down"}`, viewBox: `0 0 ${width} ${height}`, width, height },
    svg("title", { text: `last ${trend.length} ratings: ${trend.map((v) => v.toFixed(1)).join(" → ")}` }),
    svg("polyline", { points: points.join(" "), fill: "none" }));
}

function fixed(value, digits) {
  return Number(value || 0).toFixed(digits);
}

// The words of a standing's state, and its reason.
const STATE_WORDS = {
  BOT_STATE_IDLE: "idle", BOT_STATE_PLAYING: "playing", BOT_STATE_QUEUED: "queued",
  BOT_STATE_PAUSED: "paused", BOT_STATE_CAPPED: "capped", BOT_STATE_RETIRED: "retired",
};

function stateWord(s) {
  if (s.house) return "the game itself";
  const word = STATE_WORDS[s.state] || (s.retired ? "retired" : s.paused ? "paused" : "idle");
  return word === "playing" && s.playing ? `playing ${s.playing}` : word;
}

// The leaderboard's name of a row: the house entry of a team game is the game itself (its
// opponent), not one of the house bots (house-crew@1, ...).
function rowName(s, ladderName) {
  if (s.house) return el("span", { class: "note", text: `the game itself (${String(s.version).replace(/p$/, "")} seats)` });
  const href = `/ladders/${encodeURIComponent(ladderName)}/bots/${encodeURIComponent(`${s.bot}@${s.version}`)}`;
  return el("a", { href, class: "bot-link" }, el("strong", { text: s.bot }), el("span", { class: "note", text: ` @${s.version}` }));
}

// The ladder's live stream (server-sent events): `onChange(board)` each time its standings
// change. One at a time; the browser reconnects by itself after a drop.
let ladderStream = null;
function followLadder(name, onChange) {
  if (ladderStream) ladderStream.close();
  ladderStream = new EventSource(`/api/ladders/${encodeURIComponent(name)}/live`);
  let first = true;
  ladderStream.addEventListener("standings", (event) => {
    // The first event is the board the page was drawn from.
    if (first) { first = false; return; }
    onChange(JSON.parse(event.data));
  });
}

async function ladderPage(name) {
  document.title = `gangs · ladder ${name}`;
  const params = new URLSearchParams(location.search);
  const query = new URLSearchParams({ limit: "20" });
  if (params.get("page_token")) query.set("page_token", params.get("page_token"));
  if (params.get("season")) query.set("season", params.get("season"));
  let board, games;
  try {
    [board, games] = await Promise.all([
      getJson(`/api/ladders/${encodeURIComponent(name)}${seasonQuery(params)}`),
      getJson(`/api/ladders/${encodeURIComponent(name)}/games?${query}`),
    ]);
  } catch (e) {
    return showError(`Cannot open ladder ${name}: ${e.message}`);
  }
  drawLadder(name, params, board, games);
  // A past season's table is frozen: nothing to follow (the stream tells the current one).
  if (params.get("season")) return;
  followLadder(name, async (fresh) => {
    let freshGames = games;
    try { freshGames = await getJson(`/api/ladders/${encodeURIComponent(name)}/games?${query}`); } catch (e) { /* the board alone */ }
    drawLadder(name, params, fresh, freshGames);
  });
}

let ladderDraws = 0;
function drawLadder(name, params, board, games) {
  const ladder = board.ladder;
  const standings = board.standings || [];
  const rows = standings.map((s, i) => {
    const mu = s.rating ? s.rating.mu : 0;
    const sigma = s.rating ? s.rating.sigma : 0;
    const state = stateWord(s);
    return el("tr", { "data-bot": `${s.bot}@${s.version}`, "data-state": state, class: s.house ? "house" : null },
      el("td", { class: "num", text: i + 1 }),
      el("td", {}, rowName(s, ladder.name)),
      el("td", { class: "num rating", text: fixed(s.conservative, 1) }),
      el("td", { class: "num", title: "μ ± 3σ: the rating's interval", text: `${fixed(mu, 1)} ± ${fixed(3 * sigma, 1)}` }),
      el("td", { class: "num games", text: s.games }),
      el("td", { class: "num", text: `${fixed(100 * s.win_share, 0)}% (${fixed(100 * s.win_share_low, 0)}–${fixed(100 * s.win_share_high, 0)}%)` }),
      el("td", { class: "num", title: board.mean_score_means || null, text: fixed(s.mean_score, 1) }),
      el("td", { class: "num", text: s.timeouts }),
      el("td", {}, trendLine(s.trend)),
      el("td", { class: `state ${state.split(" ")[0].replace(/ /g, "-")}` },
        state === "capped" ? el("span", { class: "cap-mark", title: s.state_reason || "capped", text: "capped" }) : el("span", { text: state }),
        s.state_reason && !s.retired ? el("span", { class: "note reason", text: ` — ${s.state_reason}` }) : null));
  });
  const gameRows = (games.games || []).map((g) => {
    const outcome = g.void ? `void (not rated)${g.void_reason ? `: ${g.void_reason}` : ""}` : g.outcome && g.outcome.summary ? g.outcome.summary : "playing";
    return el("tr", { "data-game": g.game_id },
      el("td", {}, g.game_id ? el("a", { href: `/games/${g.game_id}`, text: g.game_id }) : el("span", { class: "note", text: "starting" })),
      el("td", { class: "num", text: g.match }),
      el("td", { text: new Date(Number(g.matched_unix_ms)).toLocaleString() }),
      el("td", { text: (g.names || []).join(", ") }),
      el("td", { text: outcome }));
  });
  const next = new URLSearchParams();
  if (games.next_page_token) next.set("page_token", games.next_page_token);
  if (params.get("season")) next.set("season", params.get("season"));
  const house = standings.some((s) => s.house);
  ladderDraws += 1;
  app.replaceChildren(
    laddersTabs("ladders"),
    el("h1", {}, "Ladder ", el("code", { text: ladder.name })),
    el("p", { class: "meta", id: "ladder-meta", text: `${ladder.kind}, ${ladder.players} seats, ${ladder.turn_ms} ms a turn${ladder.duplicate ? ", duplicate deals" : ""} · ${ladder.bots} bots${house ? " and the game itself as their opponent" : ""} · ${ladder.games} games rated` }),
    rows.length
      ? el("table", { class: "games standings", id: "standings" },
        el("thead", {}, el("tr", {}, ["#", "bot", "rating (μ−3σ)", "μ ± 3σ", "games", "win share (95%)", "mean score", "timeouts", "trend", "state"].map((h) => el("th", { text: h, title: h === "mean score" ? board.mean_score_means || null : null })))),
        el("tbody", {}, rows))
      : el("p", { class: "note", text: "No bot yet: `gangs ladder register` gives each bot its key." }),
    el("p", { class: "help", text: `Sorted by the conservative rating μ−3σ (Weng-Lin): a bot climbs by playing. The win share's interval is a 95% Wilson interval.${board.mean_score_means ? ` Mean score: ${board.mean_score_means}.` : ""} A bot's name opens its page.` }),
    // A bare `download`: the file is named by the server (Content-Disposition names a past season).
    el("p", {}, el("a", { id: "standings-csv", href: `/api/ladders/${encodeURIComponent(ladder.name)}/standings.csv${seasonQuery(params)}`, download: true, text: "download the standings (CSV)" })),
    el("h4", { text: "recent games" }),
    gameRows.length
      ? el("table", { class: "games", id: "ladder-games" },
        el("thead", {}, el("tr", {}, ["game", "match", "matched", "seats", "result"].map((h) => el("th", { text: h })))),
        el("tbody", {}, gameRows))
      : el("p", { class: "note", text: "No game yet: bots queue with their key (`--ladder NAME --bot-key KEY`)." }),
    el("p", { class: "pager" },
      params.get("page_token") ? el("a", { href: `/ladders/${encodeURIComponent(name)}`, id: "first-page", text: "newest games" }) : null, " ",
      games.next_page_token ? el("a", { href: `/ladders/${encodeURIComponent(name)}?${next}`, id: "next-page", text: "older games" }) : null));
  seasonPicker(name, board);
  app.dataset.state = "ready";
  app.dataset.draws = String(ladderDraws);
}

const PAUSE_WORDS = {
  REASON_TIMEOUTS: "timeouts in a row", REASON_ADMIN: "by an organizer",
  REASON_RETIRED: "retired", REASON_NO_FIRST_ACTION: "no first action",
};

function when(ms) {
  return ms && Number(ms) ? new Date(Number(ms)).toLocaleString() : "";
}

async function botPage(name, bot) {
  document.title = `gangs · ${bot} on ${name}`;
  const url = `/api/ladders/${encodeURIComponent(name)}/bots/${encodeURIComponent(bot)}`;
  let report;
  try {
    report = await getJson(url);
  } catch (e) {
    return showError(`Cannot open ${bot} on ladder ${name}: ${e.message}`);
  }
  drawBot(name, report);
  followLadder(name, async () => {
    try { drawBot(name, await getJson(url)); } catch (e) { /* keep what is shown */ }
  });
}

let botDraws = 0;
function drawBot(name, r) {
  const s = r.standing || {};
  const rating = r.rating || { mu: 0, sigma: 0 };
  const state = stateWord({ ...s, state: r.state });
  const history = (r.history || []).map((p) => Number(p.conservative));
  const games = (r.recent_games || []).map((g) => {
    const how = g.ended === "aborted" ? `aborted${g.void_reason ? `: ${g.void_reason}` : ""}` : g.ended;
    return el("tr", { "data-game": g.game_id, "data-ended": g.ended },
      el("td", {}, g.game_id ? el("a", { href: `/games/${g.game_id}`, text: g.game_id }) : el("span", { class: "note", text: "starting" })),
      el("td", { text: when(g.matched_unix_ms) }),
      el("td", { class: "num", text: g.seat || 0 }),
      el("td", { text: (g.names || []).join(", ") }),
      el("td", { class: "result", text: g.result }),
      el("td", { class: "num", text: g.ended === "finished" ? g.score || 0 : "" }),
      el("td", { class: "num", text: g.timeouts || 0 }),
      el("td", { class: "ended", text: how }),
      el("td", { class: "note", text: g.summary || "" }));
  });
  const pauses = (r.pauses || []).map((p) =>
    el("tr", {},
      el("td", { text: when(p.unix_ms) }),
      el("td", { text: p.lifted ? "lifted" : PAUSE_WORDS[p.reason] || "paused" }),
      el("td", { text: p.detail })));
  const caps = (r.caps || []).map((c) =>
    el("tr", {},
      el("td", { text: when(c.unix_ms) }),
      el("td", { text: `${c.cap} (${c.flag} ${c.limit})` }),
      el("td", { text: when(c.until_unix_ms) }),
      el("td", { text: c.detail })));
  botDraws += 1;
  app.replaceChildren(
    laddersTabs("ladders"),
    el("p", {}, el("a", { href: `/ladders/${encodeURIComponent(name)}`, text: `← ladder ${name}` })),
    el("h1", {}, el("code", { text: `${r.bot}@${r.version}` })),
    el("p", { class: "meta", id: "bot-state" },
      el("strong", { class: `state ${state.split(" ")[0]}`, text: state }),
      r.state_reason ? el("span", { id: "bot-reason", text: ` — ${r.state_reason}` }) : null),
    el("p", { class: "meta", id: "bot-rating", text: `#${r.rank || "?"} · rating ${fixed(s.conservative, 1)} (μ ${fixed(rating.mu, 2)}, σ ${fixed(rating.sigma, 2)}) · ${r.games || 0} games rated, ${s.wins || 0} won · ${s.timeouts || 0} timeouts` }),
    el("h4", { text: "rating after each game" }),
    history.length > 1 ? trendLine(history) : el("p", { class: "note", text: history.length ? fixed(history[0], 1) : "no rated game yet" }),
    el("h4", { text: "pauses" }),
    pauses.length
      ? el("table", { class: "games", id: "bot-pauses" }, el("thead", {}, el("tr", {}, ["when", "what", "why"].map((h) => el("th", { text: h })))), el("tbody", {}, pauses))
      : el("p", { class: "note", text: "never paused" }),
    el("h4", { text: "caps" }),
    caps.length
      ? el("table", { class: "games", id: "bot-caps" }, el("thead", {}, el("tr", {}, ["when", "cap", "until", "why"].map((h) => el("th", { text: h })))), el("tbody", {}, caps))
      : el("p", { class: "note", text: "never capped" }),
    el("h4", { text: "recent games" }),
    games.length
      ? el("table", { class: "games", id: "bot-games" },
        el("thead", {}, el("tr", {}, ["game", "matched", "seat", "seats", "result", "score", "timeouts", "ended", "summary"].map((h) => el("th", { text: h })))),
        el("tbody", {}, games))
      : el("p", { class: "note", text: "No game yet." }));
  app.dataset.state = "ready";
  app.dataset.draws = String(botDraws);
}

// ---- a ladder's seasons -----------------------------------------------------------------------

// "?season=N" when the page shows season N, else "".
function seasonQuery(params) {
  const season = params.get("season");
  return season ? `?${new URLSearchParams({ season })}` : "";
}

// A picker of the ladder's seasons under its title; a season that is over shows its frozen table.
function seasonPicker(name, board) {
  const current = Number(board.ladder.season || 1);
  const shown = board.season ? Number(board.season.number) : current;
  const when = (ms) => new Date(Number(ms)).toLocaleString();
  const options = [];
  for (let n = current; n >= 1; n--) {
    options.push(el("option", { value: n, text: n === current ? `season ${n} (current)` : `season ${n} (over)` }));
  }
  const picker = el("select", { id: "season" }, options);
  picker.value = String(shown);
  picker.addEventListener("change", () => {
    const n = Number(picker.value);
    location.href = `/ladders/${encodeURIComponent(name)}${n === current ? "" : `?season=${n}`}`;
  });
  const season = board.season || {};
  const note = season.ended_unix_ms
    ? `Season ${shown} is over (${when(season.started_unix_ms)} – ${when(season.ended_unix_ms)}): its standings are frozen; its games are listed below.`
    : season.ends_unix_ms
      ? `Season ${shown} began ${when(season.started_unix_ms)} and ends ${when(season.ends_unix_ms)}.`
      : `Season ${shown} began ${when(season.started_unix_ms || board.ladder.created_unix_ms)}.`;
  const line = el("p", { class: "meta", id: "season-line" }, el("label", {}, "season ", picker), " ",
    el("span", { id: "season-note", class: season.ended_unix_ms ? "frozen" : null, text: note }));
  const meta = document.getElementById("ladder-meta");
  if (meta) meta.after(line);
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

// The helpers the games' renderers draw with.
gangs.ui = { el, svg, cardRow, cardBacks, seatName, words, scoreTable, SEAT_COLORS };

document.addEventListener("DOMContentLoaded", () => {
  const route = location.pathname.match(/^\/games\/([A-Za-z0-9_-]{1,64})\/?$/);
  const ladder = location.pathname.match(/^\/ladders\/([A-Za-z0-9_.-]{1,64})\/?$/);
  const bot = location.pathname.match(/^\/ladders\/([A-Za-z0-9_.-]{1,64})\/bots\/([A-Za-z0-9_.@%-]{1,120})\/?$/);
  if (route) gamePage(route[1]);
  else if (bot) botPage(bot[1], decodeURIComponent(bot[2]));
  else if (ladder) ladderPage(ladder[1]);
  else if (/^\/ladders\/?$/.test(location.pathname)) laddersPage();
  else listPage();
});
