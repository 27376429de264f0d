// The item table and item detail of a chatjudge report.
// Every piece of data is set with textContent: conversation and judge text is shown, never run.
(function () {
  "use strict";

  var config = JSON.parse(document.getElementById("page-config").textContent);
  var items = JSON.parse(document.getElementById("items-data").textContent);
  var PAGE_SIZE = 50;
  var HISTORY_FIELDS = ["chat_history", "history"];
  var TURN_FIELDS = ["chat", "prompt"];
  var BASELINE_FIELDS = ["baseline_model_response", "baseline"];
  var CANDIDATE_FIELDS = ["response", "candidate"];
  var FIELD_LABELS = { question: "Question", answer: "Ground truth" };
  var CHOICES = {
    CANDIDATE: { text: "Candidate wins", tone: "win" },
    BASELINE: { text: "Baseline wins", tone: "loss" },
    TIE: { text: "Tie", tone: "tie" }
  };
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

  // ---------- filtering and sorting ----------
  function buildHaystack() {
    haystack = items.map(function (item) {
      var parts = [String(item.id)];
      var f = item.fields || {};
      Object.keys(f).forEach(function (k) { parts.push(valueText(f[k])); });
      return parts.join("\n").toLowerCase();
    });
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
    if (q && !haystack) buildHaystack();
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
  columns.push({ label: "Conversation", cls: "preview", cell: function (it) { return el("td", "preview", preview(it)); } });

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
      columns.forEach(function (c) { tr.appendChild(c.cell(item)); });
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
  function bubble(msg) {
    if (!msg || typeof msg !== "object") return el("div", "msg other", valueText(msg));
    var role = String(msg.role || "message");
    var known = role === "user" || role === "assistant" || role === "system";
    var node = el("div", "msg " + (known ? role : "other"));
    node.appendChild(el("span", "role", role));
    node.appendChild(document.createTextNode(valueText(msg.content)));
    return node;
  }
  function conversationField(value, asUser) {
    var box = el("div", "conversation");
    if (Array.isArray(value)) value.forEach(function (m) { box.appendChild(bubble(m)); });
    else if (asUser) box.appendChild(bubble({ role: "user", content: value }));
    else box.appendChild(el("div", "text-block", valueText(value)));
    return box;
  }
  function textField(label, value) {
    var wrap = el("div", "field");
    wrap.appendChild(el("div", "field-label", label));
    wrap.appendChild(Array.isArray(value) ? conversationField(value) : el("div", "text-block", valueText(value)));
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

  function renderResponses(body, fields, used) {
    var base = firstField(fields, BASELINE_FIELDS), cand = firstField(fields, CANDIDATE_FIELDS);
    if (!base || !cand) return;
    used[base] = used[cand] = true;
    body.appendChild(el("h3", null, "Responses"));
    var grid = el("div", "side-by-side");
    [[base, "Baseline", "loss"], [cand, "Candidate", "win"]].forEach(function (r) {
      var col = el("div", "response");
      var head = el("div", "response-head");
      head.appendChild(el("span", "badge " + r[2], r[1]));
      head.appendChild(el("span", "field-label", r[0]));
      col.appendChild(head);
      col.appendChild(Array.isArray(fields[r[0]]) ? conversationField(fields[r[0]]) : el("div", "text-block", valueText(fields[r[0]])));
      grid.appendChild(col);
    });
    body.appendChild(grid);
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
    var item = items[i];
    state.selected = i;
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
    if (item.usage) add("tokens", (item.usage.input_tokens || 0) + " in / " + (item.usage.output_tokens || 0) + " out");
    body.appendChild(facts);
    if (item.status !== "ok") {
      var hasCalls = item.calls && item.calls.length;
      body.appendChild(errorBox(item.error, hasCalls ? undefined : (item.raw === undefined ? null : item.raw)));
    }

    var fields = item.fields || {}, used = {};
    renderConversation(body, fields, used);
    if (pairwise) renderResponses(body, fields, used);
    var rest = Object.keys(fields).filter(function (k) { return !used[k] && !isEmpty(fields[k]); });
    if (rest.length) {
      body.appendChild(el("h3", null, pairwise ? "Other fields" : "Question and ground truth"));
      rest.forEach(function (k) { body.appendChild(textField(FIELD_LABELS[k] || k, fields[k])); });
    }

    var calls = (item.calls || []).slice().sort(function (a, b) {
      return String(a.judge).localeCompare(String(b.judge)) || a.sample - b.sample || (a.flipped ? 1 : 0) - (b.flipped ? 1 : 0);
    });
    body.appendChild(el("h3", null, "Judge calls (" + calls.length + ")"));
    calls.forEach(function (c) { body.appendChild(renderCall(c, pairwise)); });
    if (!calls.length && item.rationale) {
      Object.keys(item.rationale).forEach(function (k) { body.appendChild(textField(k, item.rationale[k])); });
    }
    var rows = document.querySelectorAll("#item-rows tr");
    for (var r = 0; r < rows.length; r++) rows[r].classList.toggle("selected", rows[r].dataset.index === String(i));
    var pos = view.indexOf(i);
    $("detail-prev").disabled = pos <= 0;
    $("detail-next").disabled = pos === -1 || pos >= view.length - 1;
    history.replaceState(null, "", "#item=" + encodeURIComponent(String(item.id)));
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

  buildToolbar();
  refresh();
  var wanted = /^#item=(.*)$/.exec(location.hash);
  if (wanted) {
    var id = decodeURIComponent(wanted[1]);
    for (var k = 0; k < items.length; k++) if (String(items[k].id) === id) { openItem(k); break; }
  }
})();
