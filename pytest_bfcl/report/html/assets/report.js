// The entry browser of the BFCL HTML report. Every value from the run is inserted as text
// (textContent), never as markup: model output is hostile. Rows exist only for the visible
// page of the list, and an entry's details are built when it is opened.
"use strict";
(function () {
  const PAGE_SIZE = 50;
  const FILTERS = [
    ["regressed", "regressed", (r) => r.regression === true],
    ["failing", "failing", (r) => r.valid === false || r.outcome === "failed"],
    ["improved", "improved", (r) => r.improvement === true],
    ["errored", "errored", (r) => r.outcome === "error"],
    ["skipped", "skipped", (r) => r.outcome === "skipped"],
    ["all", "all", () => true],
  ];
  const ALL = "*";
  // exact: the one entry a deep link (#entry=ID) names; typing a search replaces it
  const state = { category: ALL, filter: "all", query: "", exact: null, page: 0, open: new Set() };
  let data = null;
  let records = [];

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }

  // Decoded calls, one a line (strings as they are, anything else as JSON).
  function callsText(decoded) {
    if (typeof decoded === "string" && decoded.startsWith("[")) {
      try {
        decoded = JSON.parse(decoded); // the record keeps it as bounded JSON text
      } catch (error) {
        return decoded; // cut at the size bound: shown as it is
      }
    }
    if (!Array.isArray(decoded)) return asText(decoded);
    if (!decoded.length) return "(none)";
    return decoded.map((c) => (typeof c === "string" ? c : JSON.stringify(c))).join("\n        ");
  }

  function asText(value) {
    if (value === null || value === undefined) return "";
    return typeof value === "string" ? value : JSON.stringify(value, null, 1);
  }

  // The text of a data element, inflated when it was stored compressed.
  async function elementText(id) {
    const node = document.getElementById(id);
    if (node.dataset.encoding !== "gzip") return node.textContent;
    const binary = atob(node.textContent);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text();
  }

  // Details: one JSON line per record, split once and parsed per entry when it is opened.
  let detailJsonLines = null;
  function loadDetails() {
    if (!detailJsonLines) detailJsonLines = elementText("bfcl-details").then((text) => text.split("\n"));
    return detailJsonLines;
  }

  async function fullRecord(index) {
    const lines = await loadDetails();
    return Object.assign({}, JSON.parse(lines[index] || "{}"), records[index]);
  }

  // -- selection ----------------------------------------------------------------------------

  function filterTest(name) {
    return FILTERS.find((f) => f[0] === name)[2];
  }

  function matchesQuery(record) {
    if (state.exact !== null) return record.id === state.exact;
    return !state.query || record._id.includes(state.query);
  }

  function inCategory(record) {
    return state.category === ALL || record.category === state.category;
  }

  function visibleRecords() {
    const test = filterTest(state.filter);
    return records.filter((r) => inCategory(r) && matchesQuery(r) && test(r));
  }

  // -- lists ----------------------------------------------------------------------------------

  function renderCategories() {
    const nav = document.getElementById("categories");
    const test = filterTest(state.filter);
    const counts = new Map();
    let total = 0;
    for (const r of records) {
      if (!matchesQuery(r) || !test(r)) continue;
      counts.set(r.category, (counts.get(r.category) || 0) + 1);
      total++;
    }
    const item = (name, label, count) =>
      el(
        "button",
        {
          class: "cat" + (state.category === name ? " selected" : "") + (count ? "" : " empty"),
          "data-category": name,
          onclick: () => select({ category: name }),
        },
        el("span", { class: "name", text: label }),
        el("span", { class: "count", text: String(count) }),
      );
    const items = [item(ALL, "all categories", total)];
    for (const name of data.categories) {
      if (!data.present.has(name)) continue;
      items.push(item(name, name, counts.get(name) || 0));
    }
    nav.replaceChildren(...items);
  }

  function renderFilters() {
    const counts = Object.fromEntries(FILTERS.map((f) => [f[0], 0]));
    for (const r of records) {
      if (!inCategory(r) || !matchesQuery(r)) continue;
      for (const [name, , test] of FILTERS) if (test(r)) counts[name]++;
    }
    const buttons = FILTERS.map(([name, label]) =>
      el(
        "button",
        {
          class: "filter" + (state.filter === name ? " selected" : ""),
          "data-filter": name,
          "aria-pressed": String(state.filter === name),
          onclick: () => select({ filter: name }),
        },
        label + " ",
        el("span", { class: "count", text: String(counts[name]) }),
      ),
    );
    document.getElementById("filters").replaceChildren(...buttons);
  }

  function renderRows() {
    const shown = visibleRecords();
    const pages = Math.max(1, Math.ceil(shown.length / PAGE_SIZE));
    state.page = Math.min(state.page, pages - 1);
    const start = state.page * PAGE_SIZE;
    const slice = shown.slice(start, start + PAGE_SIZE);
    const where = state.category === ALL ? "all categories" : state.category;
    document.getElementById("list-status").textContent =
      `${shown.length} ${state.filter === "all" ? "" : state.filter + " "}entries in ${where}` +
      (state.query ? ` with "${state.query}" in the id` : "") +
      (shown.length > PAGE_SIZE ? ` (${start + 1}-${start + slice.length} shown)` : "");
    document.getElementById("rows").replaceChildren(...slice.map(row));
    renderPager(pages);
  }

  function renderPager(pages) {
    const pager = document.getElementById("pager");
    if (pages <= 1) return pager.replaceChildren();
    const go = (page) => () => {
      state.page = page;
      renderRows();
      document.getElementById("entries").scrollIntoView();
    };
    const first = state.page === 0 ? "" : null;
    const last = state.page === pages - 1 ? "" : null;
    pager.replaceChildren(
      el("button", { class: "page", onclick: go(0), disabled: first }, "« first"),
      el("button", { class: "page", onclick: go(state.page - 1), disabled: first }, "‹ prev"),
      el("span", { class: "muted", text: ` page ${state.page + 1} of ${pages} ` }),
      el("button", { class: "page", onclick: go(state.page + 1), disabled: last }, "next ›"),
      el("button", { class: "page", onclick: go(pages - 1), disabled: last }, "last »"),
    );
  }

  function outcomeBadge(r) {
    const bad = r.outcome === "failed" || r.outcome === "error";
    const css = bad ? "bad" : r.outcome === "passed" || r.outcome === "xpassed" ? "good" : "neutral";
    return el("span", { class: "badge " + css, text: r.outcome });
  }

  function row(r) {
    const item = el("li", { class: "row", "data-id": r.id });
    const head = el(
      "button",
      { class: "row-head", "aria-expanded": "false", onclick: () => toggle(r, item, head) },
      outcomeBadge(r),
      el("span", { class: "id", text: r.id }),
      r.regression && !r.within_noise ? el("span", { class: "badge bad", text: "REGRESSION" }) : null,
      r.within_noise ? el("span", { class: "badge neutral", text: "worse, within the noise" }) : null,
      r.improvement ? el("span", { class: "badge good", text: "improved" }) : null,
      r.error_type ? el("span", { class: "etype", text: r.error_type }) : null,
      state.category === ALL ? el("span", { class: "muted cat-label", text: r.category }) : null,
    );
    item.append(head);
    if (state.open.has(r.id)) toggle(r, item, head);
    return item;
  }

  function toggle(r, item, head) {
    const existing = item.querySelector(".detail");
    if (existing) {
      existing.remove();
      state.open.delete(r.id);
      head.setAttribute("aria-expanded", "false");
      return;
    }
    state.open.add(r.id);
    head.setAttribute("aria-expanded", "true");
    const placeholder = el("div", { class: "detail loading" }, el("p", { class: "muted", text: "reading..." }));
    item.append(placeholder);
    fullRecord(r._index).then(
      (full) => placeholder.isConnected && placeholder.replaceWith(detail(full)),
      (error) => (placeholder.textContent = "This entry could not be read: " + error),
    );
  }

  // -- one entry ------------------------------------------------------------------------------

  function field(title, value, css) {
    if (value === null || value === undefined || value === "") return null;
    return el("div", { class: "field " + (css || "") },
      el("h4", { text: title }),
      el("pre", { text: asText(value) }));
  }

  function verdictLine(r) {
    const parts = [
      ["outcome", r.outcome],
      ["checker", r.valid === true ? "valid" : r.valid === false ? "invalid" : "not scored"],
      ["error type", r.error_type],
      ["baseline", r.baseline_valid === true ? "valid" : r.baseline_valid === false ? "invalid" : null],
      ["latency", typeof r.latency === "number" ? r.latency.toFixed(2) + " s" : null],
      ["tokens in/out", r.input_tokens != null ? `${r.input_tokens} / ${r.output_tokens ?? "?"}` : null],
    ];
    return el("dl", { class: "verdict" },
      ...parts.filter((p) => p[1] !== null && p[1] !== undefined).flatMap(([k, v]) =>
        [el("dt", { text: k }), el("dd", { text: String(v) })]));
  }

  function detail(r) {
    const agentic = data.agentic_prefixes.some((p) => r.category.startsWith(p));
    const failingTurn = failingTurnOf(r.detail || []);
    return el("div", { class: "detail" },
      verdictLine(r),
      r.reasons && r.reasons.length
        ? el("div", { class: "field reasons" }, el("h4", { text: "reasons" }),
            el("ul", {}, ...r.reasons.map((x) => el("li", { text: x }))))
        : null,
      detailLines(r.detail || []),
      answersBeside(r),
      field("question", r.question),
      functionsBlock(r.functions_key),
      agentic ? finalAnswer(r) : null,
      r.conversation ? conversation(r.conversation, agentic, failingTurn, r.detail || []) : null,
      field("model output (raw)", r.output),
      field("reasoning", r.reasoning),
      field("decoded", r.decoded),
      field("expected", r.expected),
    );
  }

  // A changed entry: the baseline's answer and this run's side by side, what only one of them
  // has marked (runs of ["=" | "-" | "+", text] made by report/html/answer_diff.py).
  function answersBeside(r) {
    if (r.baseline_answer == null && r.answer == null) return null;
    const runs = r.answer_diff;
    const side = (title, text, keep, mark, missing) => {
      const pre = el("pre", { class: "answer" });
      if (runs) {
        for (const [op, piece] of runs) {
          if (op === "=") pre.append(piece);
          else if (op === keep) pre.append(el("mark", { class: mark, text: piece }));
        }
      } else {
        pre.textContent = text == null ? `(none: ${missing} holds no answer for it)` : text;
      }
      return el("div", { class: "answer-side" }, el("h4", { text: title }), pre);
    };
    return el("div", { class: "field answers-beside" },
      side("baseline's answer", r.baseline_answer, "-", "removed", "the baseline"),
      side("this run's answer", r.answer, "+", "added", "this run"));
  }

  // The checker's lines; from "state differences" (or "results ... never did") on they are the
  // failure itself, marked as such.
  function detailLines(lines) {
    if (!lines.length) return null;
    const pre = el("pre", { class: "detail-lines" });
    let marked = false;
    for (const line of lines) {
      if (/state differences|never did/.test(line)) marked = true;
      pre.append(el("span", { class: marked ? "diff" : "", text: line + "\n" }));
    }
    return el("div", { class: "field" }, el("h4", { text: "checker detail" }), pre);
  }

  function failingTurnOf(lines) {
    for (const line of lines) {
      const m = /^\s*turn (\d+): the model made/.exec(line);
      if (m) return Number(m[1]);
    }
    return -1;
  }

  function functionsBlock(key) {
    if (!key || !data.functions[key]) return null;
    const docs = data.functions[key];
    const box = el("details", { class: "functions" },
      el("summary", { text: `functions (${docs.length})` }));
    box.addEventListener("toggle", () => {
      if (box.open && box.children.length === 1) box.append(...docs.map(functionDoc));
    });
    return box;
  }

  function typeOf(spec) {
    if (!spec || typeof spec !== "object") return "";
    let type = spec.type || "";
    if (spec.items && spec.items.type) type += ` of ${spec.items.type}`;
    if (Array.isArray(spec.enum)) type += ` (one of ${spec.enum.map((v) => JSON.stringify(v)).join(", ")})`;
    return type;
  }

  function functionDoc(doc) {
    const params = (doc.parameters && doc.parameters.properties) || {};
    const required = new Set((doc.parameters && doc.parameters.required) || []);
    const rows = Object.entries(params).map(([name, spec]) =>
      el("tr", {},
        el("td", {}, el("code", { text: name })),
        el("td", { text: typeOf(spec) }),
        el("td", { text: required.has(name) ? "required" : "optional" }),
        el("td", { text: asText(spec && spec.description) +
          (spec && spec.default !== undefined ? ` (default ${JSON.stringify(spec.default)})` : "") })));
    return el("div", { class: "fn" },
      el("code", { class: "fn-name", text: String(doc.name) }),
      el("p", { text: asText(doc.description) }),
      rows.length ? el("table", { class: "params" }, ...rows) : el("p", { class: "muted", text: "no parameters" }));
  }

  function stepKeys(turn) {
    return Object.keys(turn)
      .filter((k) => /^step_\d+$/.test(k))
      .sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)));
  }

  function lastAssistant(turns) {
    for (let t = turns.length - 1; t >= 0; t--) {
      const keys = stepKeys(turns[t]);
      for (let s = keys.length - 1; s >= 0; s--) {
        const messages = turns[t][keys[s]] || [];
        for (let m = messages.length - 1; m >= 0; m--) {
          if (messages[m].role === "assistant") return messages[m].content;
        }
      }
    }
    return null;
  }

  function finalAnswer(r) {
    const answer = r.conversation ? lastAssistant(r.conversation) : r.output;
    return field("final answer", answer, "final");
  }

  function message(msg) {
    if (typeof msg !== "object" || msg === null) return el("pre", { text: asText(msg) });
    const role = msg.role || "?";
    const label = { assistant: "model", tool: "result", handler_log: "log" }[role] || role;
    return el("div", { class: "msg role-" + role.replace(/[^a-z_]/g, "") },
      el("span", { class: "role", text: label }),
      el("pre", { text: asText(msg.content) }),
      msg.reasoning_content ? el("pre", { class: "reasoning", text: "reasoning: " + asText(msg.reasoning_content) }) : null,
      msg.decoded !== undefined ? el("pre", { class: "calls", text: "calls: " + callsText(msg.decoded) }) : null);
  }

  function conversation(turns, agentic, failingTurn, lines) {
    const box = el("div", { class: "field conversation" },
      el("h4", { text: agentic ? "steps (memory / search calls and results)" : "conversation, turn by turn" }));
    turns.forEach((turn, index) => {
      if (turn.note !== undefined) return box.append(el("p", { class: "muted", text: turn.note }));
      const failing = index === failingTurn;
      const section = el("div", { class: "turn" + (failing ? " failing" : "") },
        el("h5", { text: `turn ${index}` + (failing ? " (the checker's failing turn)" : "") }));
      for (const msg of turn.begin_of_turn_query || []) section.append(message(msg));
      for (const key of stepKeys(turn)) {
        const step = el("div", { class: "step" }, el("span", { class: "step-label", text: key.replace("_", " ") }));
        for (const msg of turn[key] || []) step.append(message(msg));
        section.append(step);
      }
      for (const [key, value] of Object.entries(turn)) {
        if (key !== "begin_of_turn_query" && !/^step_\d+$/.test(key)) section.append(field(key, value));
      }
      if (failing) {
        const diff = lines.filter((l, i) => lines.slice(0, i + 1).some((x) => /state differences|never did/.test(x)));
        if (diff.length) section.append(el("pre", { class: "detail-lines diff", text: diff.join("\n") }));
      }
      box.append(section);
    });
    return box;
  }

  // -- state ----------------------------------------------------------------------------------

  function select(change) {
    // browsing again (another category, filter or search) leaves the linked entry
    if (!("exact" in change) && !("page" in change)) state.exact = null;
    Object.assign(state, change);
    if (!("page" in change)) state.page = 0;
    render();
  }

  function render() {
    renderCategories();
    renderFilters();
    renderRows();
  }

  function fromHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    const entry = params.get("entry");
    if (!entry) return false;
    const record = records.find((r) => r.id === entry);
    if (!record) return false;
    Object.assign(state, { category: record.category, filter: "all", query: "", exact: entry, page: 0 });
    state.open.add(entry);
    document.getElementById("search").value = entry;
    return true;
  }

  function scrollToEntry(entry) {
    const item = document.querySelector(`li.row[data-id="${CSS.escape(entry)}"]`);
    if (item) item.scrollIntoView({ block: "start" });
  }

  function followHash() {
    if (!fromHash()) return;
    render();
    scrollToEntry(state.exact);
  }

  function defaultFilter() {
    if (records.some((r) => r.regression)) return "regressed";
    if (records.some(filterTest("failing"))) return "failing";
    return "all";
  }

  async function start() {
    try {
      data = JSON.parse(await elementText("bfcl-data"));
    } catch (error) {
      document.getElementById("list-status").textContent =
        "The entries could not be read in this browser: " + error;
      return;
    }
    records = data.records;
    const failedByGate = new Set(data.gate_failed || []);
    records.forEach((r, index) => {
      r._id = r.id.toLowerCase();
      r._index = index;
      // worse than the baseline: the record was made before the gate decided; a failure
      // where it failed on the entry, within the noise elsewhere
      if (r.regression && failedByGate.has(r.id)) r.outcome = "failed";
      else if (r.regression) r.within_noise = true;
    });
    data.present = new Set(records.map((r) => r.category));
    state.filter = defaultFilter();
    const linked = fromHash();
    window.addEventListener("hashchange", followHash);
    let timer = null;
    document.getElementById("search").addEventListener("input", (event) => {
      clearTimeout(timer);
      const query = event.target.value.trim().toLowerCase();
      timer = setTimeout(() => select({ query, exact: null }), 120);
    });
    for (const link of document.querySelectorAll("a.cat-link")) {
      link.addEventListener("click", (event) => {
        event.preventDefault();
        select({ category: link.dataset.category });
        document.getElementById("entries").scrollIntoView();
      });
    }
    render();
    if (linked) scrollToEntry(state.exact);
    document.body.dataset.ready = "1";
    window.bfclReadyMs = performance.now();
    // read the details once the list is on screen, so the first opened entry is quick
    setTimeout(() => loadDetails().then(() => (window.bfclDetailsMs = performance.now())), 0);
  }

  start();
})();
