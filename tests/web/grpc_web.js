// A minimal gRPC-Web client, hand-written for the browser test (tests/e2e_grpc_web.rs): the
// protobuf wire format for the few fields it needs, gRPC-Web framing (binary,
// application/grpc-web+proto), unary calls and server streams over fetch. No build step.
"use strict";

// ---- protobuf: writing ------------------------------------------------------------------------

function varint(value) {
  const out = [];
  let v = BigInt(value);
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}

// fields: [number, "varint" | "string" | "bytes", value]; undefined values are left out.
function encode(fields) {
  const out = [];
  for (const [number, type, value] of fields) {
    if (value === undefined) continue;
    if (type === "varint") {
      out.push(...varint((number << 3) | 0), ...varint(value));
    } else {
      const bytes = type === "string" ? new TextEncoder().encode(value) : value;
      out.push(...varint((number << 3) | 2), ...varint(bytes.length), ...bytes);
    }
  }
  return new Uint8Array(out);
}

// ---- protobuf: reading ------------------------------------------------------------------------

// The fields of a message: number -> list of values (numbers for varints, Uint8Array otherwise).
function decode(bytes) {
  const fields = new Map();
  let at = 0;
  const readVarint = () => {
    let result = 0n, shift = 0n;
    for (;;) {
      const byte = bytes[at++];
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (at < bytes.length) {
    const key = Number(readVarint());
    const number = key >> 3, wire = key & 7;
    let value;
    if (wire === 0) value = Number(readVarint());
    else if (wire === 2) { const len = Number(readVarint()); value = bytes.slice(at, at + len); at += len; }
    else if (wire === 1) { value = bytes.slice(at, at + 8); at += 8; }
    else if (wire === 5) { value = bytes.slice(at, at + 4); at += 4; }
    else throw new Error(`unsupported wire type ${wire}`);
    if (!fields.has(number)) fields.set(number, []);
    fields.get(number).push(value);
  }
  return fields;
}

const text = (fields, n) => new TextDecoder().decode(fields.get(n)?.[0] ?? new Uint8Array());
const num = (fields, n) => fields.get(n)?.[0] ?? 0;

// ---- gRPC-Web ---------------------------------------------------------------------------------

function frame(message) {
  const out = new Uint8Array(5 + message.length);
  new DataView(out.buffer).setUint32(1, message.length);
  out.set(message, 5);
  return out;
}

// Calls `method` of gangs.v1.Games; calls onMessage(bytes) for each message. Resolves with the
// call's status {code, message} (from the trailers, or the headers of a trailers-only answer).
async function call(server, method, request, onMessage) {
  const response = await fetch(`${server}/gangs.v1.Games/${method}`, {
    method: "POST",
    headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
    body: frame(request),
  });
  if (!response.ok) throw new Error(`${method}: HTTP ${response.status}`);
  let status = { code: Number(response.headers.get("grpc-status") ?? -1), message: response.headers.get("grpc-message") ?? "" };
  const reader = response.body.getReader();
  let buffer = new Uint8Array();
  for (;;) {
    const { value, done } = await reader.read();
    if (value) {
      const joined = new Uint8Array(buffer.length + value.length);
      joined.set(buffer);
      joined.set(value, buffer.length);
      buffer = joined;
    }
    while (buffer.length >= 5) {
      const length = new DataView(buffer.buffer, buffer.byteOffset).getUint32(1);
      if (buffer.length < 5 + length) break;
      const flag = buffer[0];
      const body = buffer.slice(5, 5 + length);
      buffer = buffer.slice(5 + length);
      if (flag & 0x80) {
        for (const line of new TextDecoder().decode(body).split("\r\n")) {
          const [name, ...rest] = line.split(":");
          if (name.trim().toLowerCase() === "grpc-status") status.code = Number(rest.join(":").trim());
          if (name.trim().toLowerCase() === "grpc-message") status.message = decodeURIComponent(rest.join(":").trim());
        }
      } else {
        await onMessage(body);
      }
    }
    if (done) return status;
  }
}

async function unary(server, method, request) {
  let answer = null;
  const status = await call(server, method, request, (bytes) => { answer = bytes; });
  if (status.code !== 0) throw new Error(`${method}: status ${status.code} ${status.message}`);
  return decode(answer);
}

// ---- the scenario the test drives -------------------------------------------------------------

const log = (line) => {
  const item = document.createElement("li");
  item.textContent = line;
  document.getElementById("log").append(item);
};

async function play(server, wantActs) {
  const page = document.body.dataset;
  const created = await unary(server, "CreateGame", encode([[1, "string", "gang-of-four"], [3, "varint", 42]]));
  const gameId = text(created, 1);
  page.gameId = gameId;
  log(`created ${gameId}`);
  const joined = await unary(server, "JoinGame", encode([[1, "string", gameId], [2, "varint", 0], [3, "string", "browser"]]));
  const token = text(joined, 2);
  page.seat = num(joined, 1);
  log(`joined seat ${page.seat}`);
  let acted = 0;
  let acting = false;
  const status = await call(server, "Watch", encode([[1, "string", gameId], [2, "string", token]]), async (bytes) => {
    const update = decode(bytes);
    const seq = num(update, 1);
    page.lastSeq = seq;
    page.status = num(update, 7);
    const legal = update.get(5) ?? [];
    if (legal.length === 0 || acting || acted >= wantActs) return;
    acting = true;
    const action = legal[0];
    const answer = await unary(server, "Act", encode([
      [1, "string", gameId], [2, "string", token], [3, "bytes", action],
      [4, "varint", seq], [5, "string", `browser-${seq}`],
    ]));
    acted += 1;
    page.acted = acted;
    page.actedSeqs = `${page.actedSeqs ?? ""}${num(answer, 1)},`;
    log(`acted at seq ${seq}: record ${num(answer, 1)}`);
    acting = false;
  });
  log(`watch ended: ${status.code} ${status.message}`);
}

window.addEventListener("DOMContentLoaded", () => {
  const params = new URLSearchParams(location.search);
  play(params.get("server"), Number(params.get("acts") ?? 3)).catch((error) => {
    document.body.dataset.error = String(error);
    log(`error: ${error}`);
  });
});
