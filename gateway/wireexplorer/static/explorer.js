// The wire explorer's page: bytes in (pasted, uploaded or fetched from this server as protobuf),
// the server's decoding out (POST /debug/wire/decode: the tree `protokube wire` prints), shown as
// a tree beside the bytes. Hovering a field lights its bytes (its value darker); hovering a byte
// lights the innermost field that holds it. No framework, no network but this server.
"use strict";

const PROTOBUF = "application/vnd.kubernetes.protobuf";

// ---- pure helpers (also tested with node: tests/gateway/test_wire_explorer.py) ----

/** Bytes from text: hex (spaces, newlines and 0x allowed) or else base64. */
function parseInput(text) {
  const compact = text.replace(/0x/gi, "").replace(/[\s,:]/g, "");
  if (compact.length % 2 === 0 && /^[0-9a-f]*$/i.test(compact)) {
    const bytes = new Uint8Array(compact.length / 2);
    for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(compact.substr(i * 2, 2), 16);
    return bytes;
  }
  const b64 = text.replace(/\s/g, "").replace(/-/g, "+").replace(/_/g, "/");
  if (!/^[A-Za-z0-9+/]*=*$/.test(b64)) throw new Error("neither hex nor base64");
  const raw = typeof atob === "function" ? atob(b64) : Buffer.from(b64, "base64").toString("binary");
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

/** Every node of the tree, depth first, each with its depth. */
function flatten(nodes, depth = 0, out = []) {
  for (const node of nodes) {
    out.push({ node, depth });
    flatten(node.children, depth + 1, out);
  }
  return out;
}

/** The innermost node whose bytes include index (null when none does). */
function innermost(nodes, index) {
  for (const node of nodes) {
    if (node.start <= index && index < node.end) return innermost(node.children, index) || node;
  }
  return null;
}

// ---- the page ----

function el(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  Object.assign(node, attrs);
  if (text) node.textContent = text;
  return node;
}

const state = { bytes: new Uint8Array(), rows: new Map(), cells: [] };

function setStatus(text, error = false) {
  const status = document.getElementById("status");
  status.textContent = text;
  status.className = error ? "error" : "";
}

function light(node, on) {
  const row = state.rows.get(node);
  if (row) row.classList.toggle("lit", on);
  for (let i = node.start; i < node.end && i < state.cells.length; i++) {
    state.cells[i].classList.toggle("lit", on);
    if (node.valueStart !== undefined && node.valueStart >= 0 && i >= node.valueStart) {
      state.cells[i].classList.toggle("val", on);
    }
  }
}

function renderTree(nodes) {
  const list = el("ul");
  for (const node of nodes) {
    const item = el("li");
    const row = el("div", { className: "row" + (node.unknown ? " unknown" : "") });
    row.append(el("span", { className: "offset" }, String(node.start).padStart(6, "0")), node.text);
    row.dataset.start = node.start;
    row.dataset.end = node.end;
    row.addEventListener("mouseenter", () => light(node, true));
    row.addEventListener("mouseleave", () => light(node, false));
    state.rows.set(node, row);
    item.append(row);
    if (node.children.length) item.append(renderTree(node.children));
    list.append(item);
  }
  return list;
}

function renderHex(bytes, tree) {
  const hex = document.getElementById("hex");
  hex.replaceChildren();
  state.cells = [];
  const unknown = new Set();
  for (const { node } of flatten(tree)) {
    if (node.unknown) for (let i = node.start; i < node.end; i++) unknown.add(i);
  }
  for (let line = 0; line < bytes.length; line += 16) {
    const div = el("div", { className: "line" });
    div.append(el("span", { className: "addr" }, line.toString(16).padStart(6, "0")));
    for (let i = line; i < Math.min(line + 16, bytes.length); i++) {
      const cell = el("span", { className: "b" + (unknown.has(i) ? " unknown" : "") }, bytes[i].toString(16).padStart(2, "0") + " ");
      cell.dataset.index = i;
      cell.addEventListener("mouseenter", () => hover(i, true));
      cell.addEventListener("mouseleave", () => hover(i, false));
      state.cells.push(cell);
      div.append(cell);
    }
    hex.append(div);
  }
}

function hover(index, on) {
  const node = innermost(state.tree, index);
  if (node) {
    light(node, on);
    if (on) state.rows.get(node).scrollIntoView({ block: "nearest" });
  }
}

function renderEncodings(answer) {
  const section = document.getElementById("encodings");
  section.hidden = !answer.sizes;
  if (!answer.sizes) return;
  const sizes = document.getElementById("sizes");
  sizes.replaceChildren(el("tr"));
  sizes.firstChild.append(el("th", {}, "encoding"), el("th", {}, "bytes"));
  for (const [name, size] of Object.entries(answer.sizes)) {
    const row = el("tr");
    row.append(el("td", {}, name), el("td", {}, String(size)));
    sizes.append(row);
  }
  const costs = document.getElementById("costs");
  costs.replaceChildren(el("tr"));
  costs.firstChild.append(el("th", {}, "field"), el("th", {}, "protobuf"), el("th", {}, "JSON"));
  for (const field of answer.fields) {
    const row = el("tr");
    row.append(el("td", {}, field.name), el("td", {}, String(field.protobuf)), el("td", {}, String(field.json)));
    costs.append(row);
  }
  document.getElementById("json").textContent = JSON.stringify(answer.object, null, 2);
}

async function decode(bytes, type) {
  state.bytes = bytes;
  state.rows = new Map();
  const query = type ? "?type=" + encodeURIComponent(type) : "";
  const response = await fetch("/debug/wire/decode" + query, {
    method: "POST",
    headers: { "Content-Type": "application/octet-stream" },
    body: bytes,
    credentials: "same-origin",
  });
  const answer = await response.json();
  if (!response.ok) {
    setStatus(answer.message || response.statusText, true);
    return;
  }
  state.tree = answer.tree;
  document.getElementById("tree").replaceChildren(renderTree(answer.tree));
  renderHex(bytes, answer.tree);
  renderEncodings(answer);
  const unknown = flatten(answer.tree).filter(({ node }) => node.unknown).length;
  setStatus(`${answer.size} bytes, ${flatten(answer.tree).length} nodes, ${unknown} unknown fields`);
}

async function fetchPath(path) {
  setStatus("fetching " + path + " …");
  const response = await fetch(path, { headers: { Accept: PROTOBUF }, credentials: "same-origin" });
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (!response.ok) {
    setStatus(`${response.status} ${response.statusText} from ${path}`, true);
  }
  await decode(bytes, "");
}

function start() {
  document.getElementById("by-path").addEventListener("submit", (event) => {
    event.preventDefault();
    fetchPath(document.getElementById("path").value.trim());
  });
  document.getElementById("by-text").addEventListener("submit", (event) => {
    event.preventDefault();
    try {
      decode(parseInput(document.getElementById("text").value), document.getElementById("type").value.trim());
    } catch (error) {
      setStatus(error.message, true);
    }
  });
  document.getElementById("file").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    if (file) decode(new Uint8Array(await file.arrayBuffer()), document.getElementById("type").value.trim());
  });
  // #path=/api/v1/... or #hex=... or #base64=... decodes at once (links to share, tests).
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.get("path")) {
    document.getElementById("path").value = fragment.get("path");
    fetchPath(fragment.get("path"));
  } else if (fragment.get("hex") || fragment.get("base64")) {
    document.getElementById("text").value = fragment.get("hex") || fragment.get("base64");
    decode(parseInput(document.getElementById("text").value), fragment.get("type") || "");
  }
}

if (typeof module !== "undefined") {
  module.exports = { parseInput, flatten, innermost };
} else {
  start();
}
