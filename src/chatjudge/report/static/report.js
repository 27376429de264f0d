// The item table and item detail of a chatjudge report.
// Every piece of data is set with textContent: conversation and judge text is shown, never run.
(function () {
  "use strict";

  var config = JSON.parse(document.getElementById("page-config").textContent);
  // `items`: what the table reads of each item, from the page's plain index; the whole item
  // (its conversation, calls, rationale) is in a compressed chunk, read by `loadItem`.
  var INDEX = JSON.parse(document.getElementById("items-index").textContent);
  var items = tableRows(INDEX);
  var PAGE_SIZE = 50;
  var HISTORY_FIELDS = ["chat_history", "history"];
  var TURN_FIELDS = ["chat", "prompt"];
  var BASELINE_FIELDS = ["baseline_model_response", "baseline"];
  var CANDIDATE_FIELDS = ["response", "candidate"];
  var TRAJECTORIES = { baseline_model_response: "baseline_trajectory", response: "response_trajectory" };
  var FIELD_LABELS = { question: "Question", answer: "Ground truth" };
  var CHOICES = {
    CANDIDATE: { text: "Candidate wins", tone: "win" },
    BASELINE: { text: "Baseline wins", tone: "loss" },
    TIE: { text: "Tie", tone: "tie" }
  };
  var JUDGE_FREE = !!config.judgeFree;  // scored by the protocol's rules: no judge, no labelling
  var collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });

  var state = { query: "", filters: {}, sort: "index", dir: 1, page: 0, selected: -1 };
  var view = [];
  var haystack = null;

  // ---------- helpers ----------
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function append(parent, children) {
    children.forEach(function (c) { if (c) parent.appendChild(c); });
    return parent;
  }
  function $(id) { return document.getElementById(id); }
  function fmtNumber(v) {
    if (v === null || v === undefined) return "—";  // none: a precision over no call
    if (typeof v !== "number") return String(v);
    return Number.isInteger(v) ? String(v) : String(Math.round(v * 100) / 100);
  }
  function fmtShare(v) { return (v * 100).toFixed(0) + "%"; }
  function choiceBadge(value) {
    var c = CHOICES[value] || { text: String(value), tone: "plain" };
    return el("span", "badge " + c.tone, c.text);
  }
  function statusBadge(status) { return el("span", "badge " + (status === "ok" ? "ok" : "failed"), status); }
  function isEmpty(value) {
    return value === undefined || value === null || value === "" || (Array.isArray(value) && !value.length);
  }
  function firstField(fields, names) {
    for (var i = 0; i < names.length; i++) {
      if (fields && !isEmpty(fields[names[i]])) return names[i];
    }
    return null;
  }
  function valueText(value) {
    if (value === null || value === undefined) return "";
    if (typeof value === "string") return value;
    if (Array.isArray(value)) {
      return value.map(function (m) { return m && typeof m === "object" ? (m.role || "") + ": " + (m.content || "") : String(m); }).join("\n");
    }
    return JSON.stringify(value);
  }
  function preview(item) {
    var f = item.fields || {};
    var name = firstField(f, TURN_FIELDS) || Object.keys(f)[0];
    if (!name) return "";
    var v = f[name];
    if (Array.isArray(v)) {
      var user = v.filter(function (m) { return m && m.role === "user"; })[0] || v[0];
      v = user ? user.content : "";
    }
    return valueText(v).slice(0, 240);
  }

  // ---------- the items: a plain index, and compressed chunks inflated on demand ----------
  // The index holds one column per field; a row object per item keeps the table's code plain.
  function tableRows(index) {
    var names = Object.keys(index.scores), rows = new Array(index.id.length);
    for (var i = 0; i < rows.length; i++) {
      var scores = {};
      for (var k = 0; k < names.length; k++) {
        var v = index.scores[names[k]][i];
        if (v !== null && v !== undefined) scores[names[k]] = v;
      }
      rows[i] = {
        id: index.id[i], index: index.index[i], status: index.ok[i] ? "ok" : "failed", scores: scores,
        consistent: index.consistent ? index.consistent[i] : null,
        agreement: index.agreement ? index.agreement[i] : null
      };
    }
    return rows;
  }

  // One chunk a line: a JSON array of items, gzipped, then base64.
  var STARTS = INDEX.chunks;  // the position of each chunk's first item
  var CHUNKS = STARTS.length ? document.getElementById("items-data").textContent.trim().split("\n") : [];
  var KEPT_CHUNKS = 64;  // inflated chunks kept, the most recently used
  var inflated = new Map();

  function chunkOf(i) {
    var lo = 0, hi = STARTS.length - 1;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (STARTS[mid] <= i) lo = mid; else hi = mid - 1;
    }
    return lo;
  }
  function inflate(text) {
    var bin = atob(text), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }
  // A chunk's items (a promise); `keep`: false for a pass over every chunk (search), which
  // would push out the chunks the table and the open item use.
  function loadChunk(c, keep) {
    var hit = inflated.get(c);
    if (hit) {
      inflated.delete(c);
      inflated.set(c, hit);  // most recently used last
      return hit;
    }
    var loading = inflate(CHUNKS[c]);
    if (keep === false) return loading;
    inflated.set(c, loading);
    loading.catch(function () { inflated.delete(c); });
    if (inflated.size > KEPT_CHUNKS) inflated.delete(inflated.keys().next().value);
    return loading;
  }
  function loadItem(i) {
    var c = chunkOf(i);
    return loadChunk(c).then(function (chunk) { return chunk[i - STARTS[c]]; });
  }

  // ---------- filtering and sorting ----------
  // Search reads the ids and every field of every item: the first search inflates each chunk
  // once, in turn, and keeps only the lowercased text.
  var searching = null;
  function buildHaystack() {
    if (searching) return searching;
    var texts = new Array(items.length);
    function next(c) {
      if (c >= CHUNKS.length) { haystack = texts; return null; }
      return loadChunk(c, false).then(function (chunk) {
        chunk.forEach(function (item, k) {
          var parts = [String(item.id)];
          var f = item.fields || {};
          Object.keys(f).forEach(function (name) { parts.push(valueText(f[name])); });
          texts[STARTS[c] + k] = parts.join("\n").toLowerCase();
        });
        return next(c + 1);
      });
    }
    searching = Promise.resolve(0).then(next);
    return searching;
  }

  var FILTERS = [];
  FILTERS.push({
    key: "status", label: "Status",
    options: [["", "All"], ["ok", "OK"], ["failed", "Failed"]],
    test: function (item, v) { return item.status === v; }
  });
  config.choiceScores.forEach(function (name) {
    FILTERS.push({
      key: "choice:" + name, label: config.kind === "pairwise" ? "Verdict" : name,
      options: [["", "All"]].concat(Object.keys(CHOICES).map(function (k) { return [k, CHOICES[k].text]; })),
      test: function (item, v) { return (item.scores || {})[name] === v; }
    });
  });
  config.numericScores.forEach(function (name) {
    var values = config.scoreValues[name];
    if (!values) return;
    FILTERS.push({
      key: "score:" + name, label: name,
      options: [["", "All"]].concat(values.map(function (v) { return [String(v), fmtNumber(v)]; })),
      test: function (item, v) { var s = (item.scores || {})[name]; return s !== undefined && String(s) === v; }
    });
  });
  if (config.hasConsistency) {
    FILTERS.push({
      key: "consistency", label: "Orders",
      options: [["", "All"], ["yes", "Consistent"], ["no", "Inconsistent"]],
      test: function (item, v) { return item.consistent === (v === "yes"); }
    });
  }

  var SORTS = [["index", "Input order"], ["id", "ID"], ["status", "Status"]];
  config.numericScores.forEach(function (n) { SORTS.push(["score:" + n, n]); });
  config.choiceScores.forEach(function (n) { SORTS.push(["score:" + n, config.kind === "pairwise" ? "Verdict" : n]); });

  function sortKey(item, key) {
    if (key === "index") return item.index;
    if (key === "id") return String(item.id);
    if (key === "status") return item.status === "ok" ? 1 : 0;
    var s = (item.scores || {})[key.slice(6)];
    return s === undefined ? null : s;
  }
  function compare(a, b) {
    var ka = sortKey(items[a], state.sort), kb = sortKey(items[b], state.sort);
    if (ka === kb) return items[a].index - items[b].index;
    if (ka === null) return 1;  // items without the value go last either way
    if (kb === null) return -1;
    var c = typeof ka === "string" ? collator.compare(ka, kb) : ka - kb;
    return (c || items[a].index - items[b].index) * state.dir;
  }

  function refresh() {
    var q = state.query.trim().toLowerCase();
    if (q && !haystack) {
      $("items-count").textContent = "Searching " + items.length.toLocaleString() + " items…";
      buildHaystack().then(refresh);
      return;
    }
    var active = FILTERS.filter(function (f) { return state.filters[f.key]; });
    view = [];
    for (var i = 0; i < items.length; i++) {
      var item = items[i], keep = true;
      for (var j = 0; j < active.length && keep; j++) keep = active[j].test(item, state.filters[active[j].key]);
      if (keep && q) keep = haystack[i].indexOf(q) !== -1;
      if (keep) view.push(i);
    }
    view.sort(compare);
    var pages = Math.max(1, Math.ceil(view.length / PAGE_SIZE));
    if (state.page >= pages) state.page = pages - 1;
    renderTable();
  }

  // ---------- table ----------
  var columns = [
    { key: "index", label: "#", cls: "num", cell: function (it) { return el("td", "num", it.index + 1); } },
    { key: "id", label: "ID", cell: function (it) { return el("td", "id", it.id); } },
    { key: "status", label: "Status", cell: function (it) { return append(el("td"), [statusBadge(it.status)]); } }
  ];
  config.choiceScores.forEach(function (n) {
    columns.push({ key: "score:" + n, label: config.kind === "pairwise" ? "Verdict" : n, cell: function (it) {
      var s = (it.scores || {})[n];
      return append(el("td"), [s === undefined ? el("span", "muted", "—") : choiceBadge(s)]);
    } });
  });
  config.numericScores.forEach(function (n) {
    columns.push({ key: "score:" + n, label: n, cls: "num", cell: function (it) {
      var s = (it.scores || {})[n];
      return el("td", "num", s === undefined ? "—" : fmtNumber(s));
    } });
  });
  if (config.hasConsistency) {
    columns.push({ label: "Orders agree", cell: function (it) {
      if (it.consistent === null || it.consistent === undefined) return el("td", "muted", "—");
      return el("td", it.consistent ? "yes" : "no", it.consistent ? "✓ yes" : "✗ no");
    } });
  }
  if (config.hasAgreement) {
    columns.push({ label: "Agreement", cls: "num", cell: function (it) {
      return el("td", "num", it.agreement === null || it.agreement === undefined ? "—" : fmtShare(it.agreement));
    } });
  }
  columns.push({ label: "Conversation", cls: "preview", cell: function (it, i) {
    var td = el("td", "preview");
    loadItem(i).then(function (item) { td.textContent = preview(item); });
    return td;
  } });

  function renderHead() {
    var row = $("item-head");
    row.textContent = "";
    columns.forEach(function (c) {
      var th = el("th", (c.cls || "") + (c.key ? " sortable" : ""), c.label);
      if (c.key) {
        th.dataset.sort = c.key;
        if (state.sort === c.key) th.appendChild(el("span", "arrow", state.dir > 0 ? "▲" : "▼"));
        th.addEventListener("click", function () {
          if (state.sort === c.key) state.dir = -state.dir; else { state.sort = c.key; state.dir = 1; }
          $("sort").value = state.sort;
          state.page = 0;
          refresh();
        });
      }
      row.appendChild(th);
    });
  }

  function renderTable() {
    renderHead();
    var body = $("item-rows");
    body.textContent = "";
    var start = state.page * PAGE_SIZE;
    var rows = view.slice(start, start + PAGE_SIZE);
    var frag = document.createDocumentFragment();
    rows.forEach(function (i) {
      var item = items[i];
      var tr = el("tr");
      tr.dataset.index = String(i);
      tr.dataset.id = String(item.id);
      tr.dataset.status = item.status;
      if (i === state.selected) tr.className = "selected";
      columns.forEach(function (c) { tr.appendChild(c.cell(item, i)); });
      tr.addEventListener("click", function () { openItem(i); });
      frag.appendChild(tr);
    });
    body.appendChild(frag);
    $("empty").hidden = view.length > 0;
    var pages = Math.max(1, Math.ceil(view.length / PAGE_SIZE));
    var count = $("items-count");
    count.dataset.count = String(view.length);
    count.textContent = view.length === items.length
      ? items.length.toLocaleString() + " items"
      : view.length.toLocaleString() + " of " + items.length.toLocaleString() + " items match";
    $("page-info").textContent = view.length
      ? "Page " + (state.page + 1) + " of " + pages + " · items " + (start + 1).toLocaleString() + "–" +
        Math.min(start + PAGE_SIZE, view.length).toLocaleString()
      : "";
    $("prev-page").disabled = state.page === 0;
    $("next-page").disabled = state.page >= pages - 1;
  }

  function buildToolbar() {
    var holder = $("filters");
    FILTERS.forEach(function (f) {
      var label = el("label", "select");
      label.appendChild(el("span", null, f.label));
      var select = el("select");
      select.id = "filter-" + f.key.replace(/[^a-z0-9_-]/gi, "-");
      select.dataset.filter = f.key;
      f.options.forEach(function (o) { var opt = el("option", null, o[1]); opt.value = o[0]; select.appendChild(opt); });
      select.addEventListener("change", function () { state.filters[f.key] = select.value; state.page = 0; refresh(); });
      label.appendChild(select);
      holder.appendChild(label);
    });
    var sort = $("sort");
    SORTS.forEach(function (s) { var opt = el("option", null, s[1]); opt.value = s[0]; sort.appendChild(opt); });
    sort.addEventListener("change", function () { state.sort = sort.value; state.dir = 1; state.page = 0; refresh(); });
    var timer = null;
    $("search").addEventListener("input", function (e) {
      clearTimeout(timer);
      timer = setTimeout(function () { state.query = e.target.value; state.page = 0; refresh(); }, 150);
    });
    $("prev-page").addEventListener("click", function () { state.page--; renderTable(); scrollToItems(); });
    $("next-page").addEventListener("click", function () { state.page++; renderTable(); scrollToItems(); });
  }
  function scrollToItems() { $("items-title").scrollIntoView({ block: "start" }); }

  // ---------- item detail ----------
  // A tool call or result as a collapsible block, its summary line and its text in a <pre>.
  function toolBlock(cls, summary, text) {
    var box = el("details", "tool " + cls);
    box.appendChild(el("summary", null, summary));
    box.appendChild(el("pre", "raw", text));
    return box;
  }
  function callsOf(msg) { return Array.isArray(msg.tool_calls) ? msg.tool_calls : []; }
  function argumentsText(args) {
    if (args === undefined || args === null) return "";
    return typeof args === "string" ? args : JSON.stringify(args);
  }
  // `names`: a call's id -> its tool, naming the results that answer it.
  function bubble(msg, names) {
    if (!msg || typeof msg !== "object") return el("div", "msg other", valueText(msg));
    var role = String(msg.role || "message");
    if (role === "tool") {
      var content = valueText(msg.content);
      var name = msg.name || (names && names[msg.tool_call_id]) || "";
      var head = "tool" + (name ? " (" + name + ")" : "") + " returned · " + content.length.toLocaleString() + " characters";
      return toolBlock("result", head, content);
    }
    var known = role === "user" || role === "assistant" || role === "system";
    var node = el("div", "msg " + (known ? role : "other"));
    node.appendChild(el("span", "role", role));
    var text = valueText(msg.content);
    if (text || !callsOf(msg).length) node.appendChild(document.createTextNode(text));
    callsOf(msg).forEach(function (call) {
      var fn = (call && call.function) || call || {};
      if (names && call && call.id) names[call.id] = fn.name;
      node.appendChild(toolBlock("call", "called " + String(fn.name || "?"), argumentsText(fn.arguments)));
    });
    return node;
  }
  function conversationField(value, asUser) {
    var box = el("div", "conversation");
    var names = {};
    if (Array.isArray(value)) value.forEach(function (m) { box.appendChild(bubble(m, names)); });
    else if (asUser) box.appendChild(bubble({ role: "user", content: value }));
    else box.appendChild(el("div", "text-block", valueText(value)));
    return box;
  }
  // A response's trajectory (its tool calls, their results, the final message), where the
  // row holds one with a tool call: what the judge saw with `--judge-sees trajectory`.
  function trajectoryOf(fields, name) {
    var value = fields[TRAJECTORIES[name]];
    if (typeof value === "string") { try { value = JSON.parse(value); } catch (e) { return null; } }
    if (!Array.isArray(value)) return null;
    var acted = value.some(function (m) { return m && (m.role === "tool" || callsOf(m).length); });
    return acted ? value : null;
  }
  function isMessages(value) {
    return Array.isArray(value) && value.every(function (m) { return m && typeof m === "object" && "role" in m; });
  }
  function textField(label, value) {
    var wrap = el("div", "field");
    wrap.appendChild(el("div", "field-label", label));
    // a list that is no conversation (expected_tool_calls) is shown as its JSON
    var text = Array.isArray(value) && !isMessages(value) ? JSON.stringify(value) : valueText(value);
    wrap.appendChild(isMessages(value) ? conversationField(value) : el("div", "text-block", text));
    return wrap;
  }

  function renderConversation(body, fields, used) {
    var hist = firstField(fields, HISTORY_FIELDS);
    var turn = firstField(fields, TURN_FIELDS);
    if (!hist && !turn) return;
    body.appendChild(el("h3", null, "Conversation"));
    if (hist) {
      used[hist] = true;
      var h = el("div", "history");
      h.appendChild(el("div", "history-label", "Earlier conversation (" + hist + ")"));
      h.appendChild(conversationField(fields[hist]));
      body.appendChild(h);
    }
    if (turn) {
      used[turn] = true;
      if (hist) body.appendChild(el("div", "field-label", turn === "chat" ? "Follow-up conversation" : "Prompt"));
      body.appendChild(conversationField(fields[turn], turn === "prompt"));
    }
  }

  // `blind`: named Response A and B as the judge's template shows them, not baseline and candidate.
  function renderResponses(body, fields, used, blind) {
    var base = firstField(fields, BASELINE_FIELDS), cand = firstField(fields, CANDIDATE_FIELDS);
    if (!base || !cand) return;
    used[base] = used[cand] = used[TRAJECTORIES[base]] = used[TRAJECTORIES[cand]] = true;
    body.appendChild(el("h3", null, "Responses"));
    var grid = el("div", "side-by-side");
    var sides = blind
      ? [[base, "Response A", "plain"], [cand, "Response B", "plain"]]
      : [[base, "Baseline", "loss"], [cand, "Candidate", "win"]];
    sides.forEach(function (r) {
      var col = el("div", "response");
      var head = el("div", "response-head");
      head.appendChild(el("span", "badge " + r[2], r[1]));
      if (!blind) head.appendChild(el("span", "field-label", r[0]));
      col.appendChild(head);
      var shown = trajectoryOf(fields, r[0]) || fields[r[0]];
      col.appendChild(Array.isArray(shown) ? conversationField(shown) : el("div", "text-block", valueText(shown)));
      grid.appendChild(col);
    });
    body.appendChild(grid);
  }

  // tool-trajectory: the expected calls beside the calls made, one row per matched pair,
  // then the expected calls missed and the calls made beyond them; `cmp` is the record's
  // `tool_calls` (match, matched, expected, actual, pairs, left_at).
  function callText(call) { return String(call.name) + "(" + argumentsText(call.arguments) + ")"; }
  function renderToolCalls(body, cmp) {
    if (!cmp || !Array.isArray(cmp.expected) || !Array.isArray(cmp.actual)) return;
    body.appendChild(el("h3", null, "Tool calls"));
    var verdict = el("div", "facts");
    verdict.appendChild(el("span", "badge " + (cmp.matched ? "win" : "loss"), cmp.matched ? "matches" : "does not match"));
    verdict.appendChild(el("span", null, "match mode " + String(cmp.match)));
    if (cmp.left_at != null) verdict.appendChild(el("span", null, "left the expected trajectory at call " + cmp.left_at));
    body.appendChild(verdict);
    var table = el("table", "tool-calls");
    var head = el("tr");
    ["", "Expected", "Made"].forEach(function (h) { head.appendChild(el("th", null, h)); });
    table.appendChild(append(el("thead"), [head]));
    var rows = el("tbody");
    var pairedExpected = {}, pairedActual = {};
    (cmp.pairs || []).forEach(function (p) { pairedExpected[p[0]] = p[1]; pairedActual[p[1]] = true; });
    function row(kind, expected, step) {
      var tr = el("tr", kind);
      tr.appendChild(append(el("td"), [el("span", "badge " + ({ matched: "ok", missed: "failed", extra: "tie" })[kind], kind)]));
      var exp = el("td", "call-text");
      if (expected) {
        exp.appendChild(el("code", null, callText(expected)));
        if (expected.compare) exp.appendChild(el("div", "muted", "compared " + JSON.stringify(expected.compare)));
      }
      var made = el("td", "call-text");
      if (step !== null) {
        made.appendChild(el("span", "muted", "call " + (step + 1) + " "));
        made.appendChild(el("code", null, callText(cmp.actual[step])));
        if (cmp.left_at === step + 1) { tr.classList.add("left"); made.appendChild(el("div", "muted", "left the expected trajectory here")); }
      }
      rows.appendChild(append(tr, [exp, made]));
    }
    cmp.expected.forEach(function (e, i) { row(i in pairedExpected ? "matched" : "missed", e, i in pairedExpected ? pairedExpected[i] : null); });
    cmp.actual.forEach(function (a, j) { if (!pairedActual[j]) row("extra", null, j); });
    table.appendChild(rows);
    body.appendChild(table);
  }

  // An item's data as the judge saw it: the conversation, the responses, every other field.
  function renderFields(body, fields, pairwise, blind, scored) {
    var used = {};
    renderConversation(body, fields, used);
    if (pairwise) renderResponses(body, fields, used, blind);
    var rest = Object.keys(fields).filter(function (k) { return !used[k] && !isEmpty(fields[k]); });
    if (rest.length) {
      body.appendChild(el("h3", null, pairwise ? "Other fields" : scored ? "Fields" : "Question and ground truth"));
      rest.forEach(function (k) { body.appendChild(textField(FIELD_LABELS[k] || k, fields[k])); });
    }
  }

  function callVerdict(call) {
    if (call.status !== "ok") return el("span", "call-verdict", "no verdict");
    var scores = call.scores || {};
    var span = el("span", "call-verdict");
    var parts = [];
    Object.keys(scores).forEach(function (k) {
      var v = scores[k];
      if (typeof v === "string") {
        if (call.label) span.appendChild(el("span", "muted", "wrote " + call.label + " → "));
        span.appendChild(choiceBadge(v));
      } else {
        parts.push(k + " " + fmtNumber(v));
      }
    });
    if (parts.length) span.appendChild(document.createTextNode((span.childNodes.length ? "  " : "") + parts.join(" · ")));
    return span;
  }

  function renderCall(call, pairwise) {
    var box = el("div", "call" + (call.status === "ok" ? "" : " failed"));
    box.dataset.judge = String(call.judge);
    box.dataset.sample = String(call.sample);
    box.dataset.flipped = String(!!call.flipped);
    var head = el("div", "call-head");
    append(head, [el("span", "chip", call.judge), el("span", null, "sample " + ((call.sample || 0) + 1))]);
    if (pairwise) {
      head.appendChild(el("span", null, call.flipped ? "flipped: candidate shown as A" : "candidate shown as B"));
    }
    head.appendChild(statusBadge(call.status));
    head.appendChild(callVerdict(call));
    var facts = [];
    if (call.cached) facts.push("from cache");
    if (call.input_tokens != null) facts.push(call.input_tokens + " in / " + (call.output_tokens || 0) + " out tokens");
    if (call.latency != null) facts.push(call.latency.toFixed(2) + " s");
    if (facts.length) head.appendChild(el("span", "muted", facts.join(" · ")));
    box.appendChild(head);
    var rationale = call.rationale || {};
    Object.keys(rationale).forEach(function (k) {
      if (!rationale[k]) return;
      var r = el("div", "rationale");
      append(r, [el("div", "label", k === "pairwise_choice" ? "explanation" : k), el("p", null, rationale[k])]);
      box.appendChild(r);
    });
    if (call.status !== "ok") box.appendChild(errorBox(call.error, call.raw === undefined ? null : call.raw));
    return box;
  }

  function sortedCalls(item) {
    return (item.calls || []).slice().sort(function (a, b) {
      return String(a.judge).localeCompare(String(b.judge)) || a.sample - b.sample || (a.flipped ? 1 : 0) - (b.flipped ? 1 : 0);
    });
  }

  // `raw` undefined: the reply is shown elsewhere (with the failed call); null: none came back.
  function errorBox(error, raw) {
    var box = el("div", "error-box");
    box.appendChild(el("div", "label", "Error"));
    box.appendChild(el("div", "error-text", error || "unknown error"));
    if (raw === undefined) return box;
    box.appendChild(el("div", "label", raw === null ? "No reply came back" : "Raw reply"));
    if (raw !== null) box.appendChild(el("pre", "raw", raw));
    return box;
  }

  function openItem(i) {
    state.selected = i;
    var rows = document.querySelectorAll("#item-rows tr");
    for (var r = 0; r < rows.length; r++) rows[r].classList.toggle("selected", rows[r].dataset.index === String(i));
    var pos = view.indexOf(i);
    $("detail-prev").disabled = pos <= 0;
    $("detail-next").disabled = pos === -1 || pos >= view.length - 1;
    history.replaceState(null, "", "#item=" + encodeURIComponent(String(items[i].id)));
    loadItem(i).then(function (item) { if (state.selected === i) renderItem(item); });
  }

  function renderItem(item) {
    var panel = $("detail"), body = $("detail-body");
    body.textContent = "";
    body.scrollTop = 0;
    panel.hidden = false;
    panel.dataset.itemId = String(item.id);
    $("detail-title").textContent = String(item.id);
    var pairwise = config.kind === "pairwise";

    var head = el("div", "detail-head");
    head.appendChild(statusBadge(item.status));
    var scores = item.scores || {};
    Object.keys(scores).forEach(function (k) {
      var v = scores[k];
      head.appendChild(typeof v === "string" ? choiceBadge(v) : el("span", "badge plain", k + " " + fmtNumber(v)));
    });
    body.appendChild(head);
    var facts = el("div", "facts");
    var add = function (label, value) { var s = el("span", null, label + " "); s.appendChild(el("b", null, value)); facts.appendChild(s); };
    add("row", item.index + 1);
    if (item.consistent !== null && item.consistent !== undefined) add("orders agree", item.consistent ? "yes" : "no");
    if (item.agreement !== null && item.agreement !== undefined) add("calls agreeing", fmtShare(item.agreement));
    if (item.usage && !JUDGE_FREE) add("tokens", (item.usage.input_tokens || 0) + " in / " + (item.usage.output_tokens || 0) + " out");
    body.appendChild(facts);
    if (item.status !== "ok") {
      var hasCalls = item.calls && item.calls.length;
      body.appendChild(errorBox(item.error, hasCalls ? undefined : (item.raw === undefined ? null : item.raw)));
    }

    renderToolCalls(body, item.tool_calls);
    renderFields(body, item.fields || {}, pairwise, false, !!item.tool_calls);

    var calls = JUDGE_FREE ? [] : sortedCalls(item);  // a judge-free item's one call is its scores
    if (!JUDGE_FREE) body.appendChild(el("h3", null, "Judge calls (" + calls.length + ")"));
    calls.forEach(function (c) { body.appendChild(renderCall(c, pairwise)); });
    var judged = calls.some(function (c) { return c.rationale && Object.keys(c.rationale).length; });
    if (!judged && item.rationale) {
      Object.keys(item.rationale).forEach(function (k) { body.appendChild(textField(k, item.rationale[k])); });
    }
  }

  function step(delta) {
    var pos = view.indexOf(state.selected) + delta;
    if (pos < 0 || pos >= view.length) return;
    var page = Math.floor(pos / PAGE_SIZE);
    if (page !== state.page) { state.page = page; renderTable(); }
    openItem(view[pos]);
  }
  function closeItem() {
    $("detail").hidden = true;
    state.selected = -1;
    var sel = document.querySelector("#item-rows tr.selected");
    if (sel) sel.classList.remove("selected");
    history.replaceState(null, "", location.pathname + location.search);
  }

  $("detail-close").addEventListener("click", closeItem);
  $("detail-prev").addEventListener("click", function () { step(-1); });
  $("detail-next").addEventListener("click", function () { step(1); });
  document.addEventListener("keydown", function (e) {
    if ($("detail").hidden || e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
    if (e.key === "Escape") closeItem();
    else if (e.key === "j") step(1);
    else if (e.key === "k") step(-1);
  });

  // ---------- views: the report and labelling ----------
  function showView(name, focus) {
    var label = name === "label";
    if (label) closeItem();
    $("report-view").hidden = label;
    $("label-view").hidden = !label;
    [["tab-report", !label], ["tab-label", label]].forEach(function (t) {
      $(t[0]).setAttribute("aria-selected", String(t[1]));
      $(t[0]).tabIndex = t[1] ? 0 : -1;
    });
    if (label) {
      startLabelling();
      history.replaceState(null, "", "#label");
    } else if (location.hash === "#label") {
      history.replaceState(null, "", location.pathname + location.search);
    }
    if (focus) $(label ? "tab-label" : "tab-report").focus();
  }
  if (!JUDGE_FREE) {  // the tabs: a judge-free page has none
    $("tab-report").addEventListener("click", function () { showView("report"); });
    $("tab-label").addEventListener("click", function () { showView("label"); });
    [$("tab-report"), $("tab-label")].forEach(function (tab) {
      tab.addEventListener("keydown", function (e) {
        if (e.key === "ArrowLeft" || e.key === "ArrowRight" || e.key === "Home" || e.key === "End") {
          e.preventDefault();
          var other = $("label-view").hidden ? "label" : "report";
          showView(e.key === "Home" ? "report" : e.key === "End" ? "label" : other, true);
        }
      });
    });
  }

  // ---------- labelling: a person labels a seeded random sample ----------
  // The sample: the ids of the items the judge judged, sorted in JavaScript's default string
  // order (UTF-16 code units), then shuffled by Fisher-Yates (i from the last position down
  // to 1, swap i with j = floor(r * (i + 1))) with r drawn from mulberry32(seed). The first
  // `size` ids are the sample, in that order, and rank k is position k. A larger sample with
  // the same seed extends a smaller one, so labels are kept per seed.
  var LABEL = config.label;
  var PAIRWISE = config.kind === "pairwise";
  var STORE_KEY = "chatjudge-labels|" + LABEL.run;
  var MAX_SEED = 4294967295;
  var DEFAULT_SIZE = 50;
  var PAIR_ANSWERS = [  // Response A is the baseline, Response B the candidate, as the judge saw them
    { value: "BASELINE", text: "A is better", keys: ["a", "1"] },
    { value: "TIE", text: "Tie", keys: ["t", "2"] },
    { value: "CANDIDATE", text: "B is better", keys: ["b", "3"] }
  ];
  // One question per column of the labels file: `label` (pairwise) or one per score.
  var QUESTIONS = PAIRWISE
    ? [{ column: "label", title: "Which response is better?", answers: PAIR_ANSWERS }]
    : LABEL.scales.map(function (s) {
        return {
          column: s.name,
          title: s.name + " (" + fmtNumber(s.min) + "–" + fmtNumber(s.max) + ")",
          scale: s,
          answers: s.values && s.values.map(function (v) {
            return { value: v, text: String(v), keys: v >= 0 && v <= 9 ? [String(v)] : [] };
          })
        };
      });

  // `item`: the whole item shown, once inflated; `shown`: counts the items put on screen
  var lab = { seed: 0, size: 0, order: [], pos: 0, labels: {}, active: 0, undo: [], showVerdict: true, item: null, shown: 0 };
  var judged = null;  // ids of the items judged ok, gathered when labelling first opens
  var byId = {};
  var storage = null;

  function mulberry32(seed) {
    var a = seed >>> 0;
    return function () {
      a = (a + 0x6d2b79f5) >>> 0;
      var t = Math.imul(a ^ (a >>> 15), a | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  function seededOrder(ids, seed) {
    var order = ids.slice().sort();
    var rand = mulberry32(seed);
    for (var i = order.length - 1; i > 0; i--) {
      var j = Math.floor(rand() * (i + 1));
      var t = order[i]; order[i] = order[j]; order[j] = t;
    }
    return order;
  }

  // localStorage may be missing or refuse pages opened from disk: labelling still works, unsaved.
  function openStorage() {
    try {
      var probe = STORE_KEY + "|probe";
      window.localStorage.setItem(probe, "1");
      window.localStorage.removeItem(probe);
      return window.localStorage;
    } catch (e) { return null; }
  }
  function load(key) {
    try {
      var value = storage && JSON.parse(storage.getItem(key));
      return value && typeof value === "object" ? value : {};
    } catch (e) { return {}; }
  }
  function save(key, value) {
    if (!storage) return;
    try { storage.setItem(key, JSON.stringify(value)); } catch (e) { $("label-storage").hidden = false; }
  }
  function labelsKey() { return STORE_KEY + "|seed=" + lab.seed; }
  function saveLabels() { save(labelsKey(), { version: 1, labels: lab.labels, pos: lab.pos }); }
  function saveSettings() {
    save(STORE_KEY + "|settings", { version: 1, seed: lab.seed, size: lab.size, showVerdict: lab.showVerdict });
  }
  function wholeNumber(value, lo, hi) {
    var n = typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
    return typeof n === "number" && Math.floor(n) === n && n >= lo && n <= hi ? n : null;
  }

  function useSeed(seed) {
    lab.seed = seed;
    lab.order = seededOrder(judged, seed);
    var saved = load(labelsKey());
    lab.labels = saved.labels && typeof saved.labels === "object" ? saved.labels : {};
    lab.pos = Math.min(wholeNumber(saved.pos, 0, MAX_SEED) || 0, lab.size - 1);
    lab.undo = [];
    lab.active = firstOpenQuestion();
  }

  function startLabelling() {
    if (judged) return;
    judged = [];
    items.forEach(function (item, i) {
      if (item.status !== "ok") return;
      judged.push(String(item.id));
      byId[String(item.id)] = i;
    });
    storage = openStorage();
    $("label-storage").hidden = !!storage;
    if (!QUESTIONS.length) judged = [];  // a pointwise protocol without a numeric score
    if (!judged.length) {
      $("label-empty").hidden = false;
      ["label-item", "label-answer", "label-verdict", "label-keys"].forEach(function (id) { $(id).hidden = true; });
      ["label-seed", "label-size", "label-draw", "label-export", "label-reset"].forEach(function (id) { $(id).disabled = true; });
      return;
    }
    var settings = load(STORE_KEY + "|settings");
    lab.showVerdict = settings.showVerdict !== false;
    lab.size = wholeNumber(settings.size, 1, judged.length) || Math.min(DEFAULT_SIZE, judged.length);
    useSeed(wholeNumber(settings.seed, 0, MAX_SEED) || 0);
    $("label-seed").value = String(lab.seed);
    $("label-size").value = String(lab.size);
    $("label-size").max = String(judged.length);
    $("label-show-verdict").checked = lab.showVerdict;
    buildAnswers();
    buildKeys();
    renderLabel();
  }

  function drawSample() {
    var seed = wholeNumber($("label-seed").value, 0, MAX_SEED);
    var size = wholeNumber($("label-size").value, 1, judged.length);
    var error = seed === null ? "The seed must be a whole number from 0 to " + MAX_SEED + "."
      : size === null ? "The sample size must be a whole number from 1 to " + judged.length + "." : "";
    $("label-setup-error").textContent = error;
    $("label-setup-error").hidden = !error;
    $("label-seed").setAttribute("aria-invalid", String(seed === null));
    $("label-size").setAttribute("aria-invalid", String(seed !== null && size === null));
    if (error) return;
    lab.size = size;
    if (seed !== lab.seed) useSeed(seed);
    else lab.pos = Math.min(lab.pos, size - 1);
    saveSettings();
    saveLabels();
    renderLabel();
  }

  function currentId() { return lab.order[lab.pos]; }
  function given(ans, q) { return !!ans && ans[q.column] !== undefined && ans[q.column] !== null; }
  function answered(ans) { return QUESTIONS.every(function (q) { return given(ans, q); }); }
  function firstOpenQuestion() {
    var ans = lab.labels[currentId()];
    for (var i = 0; i < QUESTIONS.length; i++) if (!given(ans, QUESTIONS[i])) return i;
    return 0;
  }

  function answer(qi, value) {
    var id = currentId(), q = QUESTIONS[qi];
    var ans = lab.labels[id] || {};
    lab.active = Math.min(qi + 1, QUESTIONS.length - 1);
    if (ans[q.column] !== value) {
      lab.undo.push({ id: id, pos: lab.pos, before: lab.labels[id] ? JSON.stringify(lab.labels[id]) : null });
      ans[q.column] = value;
      lab.labels[id] = ans;
      saveLabels();
    }
    renderLabelState();
  }
  function undo() {
    var last = lab.undo.pop();
    if (!last) return;
    if (last.before) lab.labels[last.id] = JSON.parse(last.before); else delete lab.labels[last.id];
    saveLabels();
    if (last.pos < lab.size && last.pos !== lab.pos) { go(last.pos); return; }
    lab.active = firstOpenQuestion();
    renderLabelState();
  }
  function go(pos) {
    if (pos < 0 || pos >= lab.size) return;
    lab.pos = pos;
    lab.active = firstOpenQuestion();
    saveLabels();
    renderLabel();
    var card = $("label-item");
    $("label-item-title").focus({ preventScroll: true });
    if (card.getBoundingClientRect().top < 0) card.scrollIntoView({ block: "start" });
  }

  // The title and the controls come from the index at once; the item's fields (and its
  // judge calls, once answered) follow when its chunk is inflated, unless the page has
  // shown another since.
  function renderLabel() {
    var id = currentId(), pos = lab.pos, shown = ++lab.shown;
    $("label-item-title").textContent = "Item " + (pos + 1) + " of " + lab.size + " · " + id;
    $("label-item").dataset.itemId = id;
    $("label-item").dataset.rank = String(pos + 1);
    $("label-item").dataset.loaded = "false";
    $("label-body").textContent = "";
    $("label-prev").disabled = pos === 0;
    $("label-next").disabled = pos >= lab.size - 1;
    renderLabelState();
    loadItem(byId[id]).then(function (item) {
      if (lab.shown !== shown) return;
      lab.item = item;
      renderFields($("label-body"), item.fields || {}, PAIRWISE, true);
      $("label-item").dataset.loaded = "true";
      renderVerdict();
    });
  }
  function renderLabelState() {
    updateAnswers();
    renderVerdict();
    renderProgress();
  }

  // The answer controls are built once and updated in place, so keyboard focus stays put.
  function buildAnswers() {
    var box = $("label-answer");
    box.textContent = "";
    QUESTIONS.forEach(function (q, qi) {
      var row = el("div", "question");
      row.dataset.column = q.column;
      var title = el("div", "question-title", q.title);
      title.id = "question-" + qi;
      row.appendChild(title);
      var group = el("div", "answers");
      group.setAttribute("role", "group");
      group.setAttribute("aria-labelledby", title.id);
      if (q.answers) {
        q.answers.forEach(function (a) {
          var b = el("button", "answer-btn", a.text);
          b.type = "button";
          b.dataset.column = q.column;
          b.dataset.value = String(a.value);
          if (a.keys.length) b.setAttribute("aria-keyshortcuts", a.keys.join(" "));
          if (a.keys.length && a.keys.join() !== a.text) b.appendChild(el("kbd", null, a.keys.join(" · ")));
          b.addEventListener("click", function () { answer(qi, a.value); });
          group.appendChild(b);
        });
      } else {
        group.appendChild(numberAnswer(q, qi));
      }
      row.appendChild(group);
      box.appendChild(row);
    });
  }
  function numberAnswer(q, qi) {
    var s = q.scale;
    var input = el("input", "answer-input");
    input.type = "number";
    input.min = String(s.min);
    input.max = String(s.max);
    input.step = s.integer ? "1" : "any";
    input.dataset.column = q.column;
    input.setAttribute("aria-labelledby", "question-" + qi);
    input.addEventListener("change", function () {
      var v = input.value.trim() === "" ? NaN : Number(input.value);
      var ok = v >= s.min && v <= s.max && (!s.integer || Math.floor(v) === v);
      input.setAttribute("aria-invalid", String(!ok));
      if (ok) answer(qi, v);
    });
    return input;
  }
  function updateAnswers() {
    var ans = lab.labels[currentId()] || {};
    var rows = $("label-answer").querySelectorAll(".question");
    for (var r = 0; r < rows.length; r++) {
      rows[r].classList.toggle("active", QUESTIONS.length > 1 && r === lab.active);
      rows[r].classList.toggle("done", given(ans, QUESTIONS[r]));
    }
    var buttons = $("label-answer").querySelectorAll(".answer-btn");
    for (var b = 0; b < buttons.length; b++) {
      var v = ans[buttons[b].dataset.column];
      buttons[b].setAttribute("aria-pressed", String(v !== undefined && v !== null && String(v) === buttons[b].dataset.value));
    }
    var inputs = $("label-answer").querySelectorAll(".answer-input");
    for (var i = 0; i < inputs.length; i++) {
      var w = ans[inputs[i].dataset.column];
      if (document.activeElement !== inputs[i]) inputs[i].value = w === undefined || w === null ? "" : String(w);
      inputs[i].removeAttribute("aria-invalid");
    }
  }

  function answerBadge(value) {
    var text = { BASELINE: "A is better", CANDIDATE: "B is better", TIE: "Tie" }[value];
    return el("span", "badge " + (CHOICES[value] || { tone: "plain" }).tone, text || String(value));
  }
  // The verdict enters the page only once the item is answered: before, nothing of it is in the DOM.
  function renderVerdict() {
    var box = $("label-verdict"), id = currentId(), ans = lab.labels[id];
    var state = !answered(ans) ? "waiting" : lab.showVerdict ? "shown" : "hidden";
    box.dataset.state = state;
    box.dataset.itemId = id;
    box.textContent = "";
    box.appendChild(el("h3", null, "The judge's verdict"));
    if (state === "waiting") {
      box.appendChild(el("p", "note", "Shown once you have answered, so that it cannot sway you."));
      return;
    }
    if (state === "hidden") {
      box.appendChild(el("p", "note", "Kept hidden: “Show the judge's verdict after I answer” is off."));
      return;
    }
    var item = lab.item && String(lab.item.id) === id ? lab.item : null;
    var scores = items[byId[id]].scores;
    var table = el("div", "verdict-compare");
    QUESTIONS.forEach(function (q) {
      var name = PAIRWISE ? config.choiceScores[0] : q.column;
      var judge = scores[name], mine = ans[q.column];
      var row = el("div", "verdict-row");
      row.dataset.column = q.column;
      row.appendChild(el("span", "field-label", PAIRWISE ? "Verdict" : q.column));
      var you = el("span", null, "you ");
      you.appendChild(PAIRWISE ? answerBadge(mine) : el("b", null, fmtNumber(mine)));
      var them = el("span", "judge-says", "judge ");
      them.appendChild(judge === undefined ? el("span", "muted", "—") : PAIRWISE ? answerBadge(judge) : el("b", null, fmtNumber(judge)));
      var same = judge !== undefined && String(judge) === String(mine);
      append(row, [you, them, el("span", same ? "yes" : "no", same ? "✓ same" : "✗ different")]);
      table.appendChild(row);
    });
    box.appendChild(table);
    if (PAIRWISE) box.appendChild(el("p", "note", "Response A was the baseline, Response B the candidate."));
    if (item) sortedCalls(item).forEach(function (c) { box.appendChild(renderCall(c, PAIRWISE)); });
  }

  function renderProgress() {
    var n = 0, last = -1;
    for (var k = 0; k < lab.size; k++) if (answered(lab.labels[lab.order[k]])) { n++; last = k; }
    var gaps = last + 1 - n;  // items ranked before the last labelled one and not labelled
    var progress = $("label-progress");
    progress.textContent = n.toLocaleString() + " of " + lab.size.toLocaleString() + " labelled · seed " + lab.seed;
    progress.dataset.labelled = String(n);
    progress.dataset.size = String(lab.size);
    $("label-bar").style.width = (100 * n / lab.size).toFixed(2) + "%";
    var note = $("label-gaps");
    note.hidden = gaps === 0;
    note.dataset.count = String(gaps);
    note.textContent = gaps ? gaps + " item(s) ranked before #" + (last + 1) + " are not labelled. " +
      "Skipped items make the labelled rows less of a random sample: label them, or say why they were left out." : "";
    $("label-export").disabled = exportRows().length === 0;
    $("label-command").textContent = "chatjudge agree RUN --human " + fileName();
  }

  // ---------- labelling: export, reset, keys ----------
  // One JSON object a line, as `chatjudge agree --human` reads: id, the answer columns
  // (`label`: BASELINE / CANDIDATE / TIE, or one column per score), and where the row
  // stands in the seeded sample (seed, rank, sample_size). Only items with every answer
  // given: `--human` refuses a row with an empty rating.
  function exportRows() {
    var rows = [];
    for (var k = 0; k < lab.size; k++) {
      var id = lab.order[k], ans = lab.labels[id];
      if (!answered(ans)) continue;
      var row = { id: id };
      QUESTIONS.forEach(function (q) { row[q.column] = ans[q.column]; });
      row.seed = lab.seed;
      row.rank = k + 1;
      row.sample_size = lab.size;
      rows.push(row);
    }
    return rows;
  }
  function fileName() {
    return "labels-" + String(LABEL.protocol || "run").replace(/[^A-Za-z0-9_.-]+/g, "-") + "-seed" + lab.seed + ".jsonl";
  }
  function exportLabels() {
    var text = exportRows().map(function (r) { return JSON.stringify(r); }).join("\n") + "\n";
    var url = URL.createObjectURL(new Blob([text], { type: "application/x-ndjson" }));
    var link = el("a");
    link.href = url;
    link.download = fileName();
    link.hidden = true;
    document.body.appendChild(link);
    link.click();
    document.body.removeChild(link);
    setTimeout(function () { URL.revokeObjectURL(url); }, 10000);
  }

  function askReset() {
    var n = Object.keys(lab.labels).length;
    $("label-reset-text").textContent = "Erase the " + n + " label(s) of seed " + lab.seed + "?";
    $("label-reset").hidden = true;
    $("label-reset-confirm").hidden = false;
    $("label-reset-no").focus();
  }
  function endReset(erase) {
    if (erase) {
      lab.labels = {};
      lab.undo = [];
      lab.pos = 0;
      lab.active = 0;
      saveLabels();
      renderLabel();
    }
    $("label-reset-confirm").hidden = true;
    $("label-reset").hidden = false;
    $("label-reset").focus();
  }

  function buildKeys() {
    var keys = $("label-keys");
    keys.textContent = "";
    keys.appendChild(el("span", "muted", "Keys: "));
    var list = PAIRWISE
      ? [["a / 1", "A is better"], ["t / 2", "tie"], ["b / 3", "B is better"]]
      : [["0–9", QUESTIONS.length > 1 ? "answer the highlighted score" : "answer"]];
    if (QUESTIONS.length > 1) list.push(["↑ ↓", "choose the score"]);
    list.push(["n", "next"], ["p", "previous"], ["u", "undo"]);
    list.forEach(function (k) {
      var item = el("span", "key");
      append(item, [el("kbd", null, k[0]), document.createTextNode(" " + k[1])]);
      keys.appendChild(item);
    });
  }
  function answerKey(key) {
    var q = QUESTIONS[lab.active];
    if (!q || !q.answers) return false;
    for (var i = 0; i < q.answers.length; i++) {
      if (q.answers[i].keys.indexOf(key) !== -1) { answer(lab.active, q.answers[i].value); return true; }
    }
    return false;
  }
  document.addEventListener("keydown", function (e) {
    if (JUDGE_FREE || $("label-view").hidden || !judged || !judged.length || e.ctrlKey || e.metaKey || e.altKey) return;
    var tag = e.target.tagName, typing = tag === "SELECT" || tag === "TEXTAREA" ||
      (tag === "INPUT" && e.target.type !== "checkbox");
    if (typing || !$("label-reset-confirm").hidden) return;
    var key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (key === "n") go(lab.pos + 1);
    else if (key === "p") go(lab.pos - 1);
    else if (key === "u") undo();
    else if ((key === "ArrowDown" || key === "ArrowUp") && QUESTIONS.length > 1) {
      lab.active = Math.max(0, Math.min(QUESTIONS.length - 1, lab.active + (key === "ArrowDown" ? 1 : -1)));
      updateAnswers();
    } else if (!answerKey(key)) return;
    e.preventDefault();
  });

  if (!JUDGE_FREE) {  // the labelling view's controls
    $("label-draw").addEventListener("click", drawSample);
    ["label-seed", "label-size"].forEach(function (id) {
      $(id).addEventListener("keydown", function (e) { if (e.key === "Enter") drawSample(); });
    });
    $("label-show-verdict").addEventListener("change", function () {
      lab.showVerdict = $("label-show-verdict").checked;
      saveSettings();
      renderVerdict();
    });
    $("label-prev").addEventListener("click", function () { go(lab.pos - 1); });
    $("label-next").addEventListener("click", function () { go(lab.pos + 1); });
    $("label-export").addEventListener("click", exportLabels);
    $("label-reset").addEventListener("click", askReset);
    $("label-reset-yes").addEventListener("click", function () { endReset(true); });
    $("label-reset-no").addEventListener("click", function () { endReset(false); });
  }

  buildToolbar();
  refresh();
  var wanted = /^#item=(.*)$/.exec(location.hash);
  if (location.hash === "#label" && !JUDGE_FREE) showView("label");
  else if (wanted) {
    var id = decodeURIComponent(wanted[1]);
    for (var k = 0; k < items.length; k++) if (String(items[k].id) === id) { openItem(k); break; }
  }
})();
