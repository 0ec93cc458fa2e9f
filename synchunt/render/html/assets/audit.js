// Builds the audit matrix from the JSON data island. Path, file and function names only reach the DOM through
// textContent.
(function () {
  "use strict";
  var root = document.getElementById("report");
  var data = JSON.parse(document.getElementById("synchunt-data").textContent);
  var audit = data.audit;

  function stat(key, value) {
    return el("div", { cls: "stat" }, el("div", { cls: "k", text: key }), el("div", { cls: "v", text: String(value) }));
  }

  function num(value) { return el("td", { cls: "num", text: value === null ? "-" : String(value) }); }

  function row(r) {
    var sites = el("td", {});
    r.sites.forEach(function (line) { sites.appendChild(el("div", { cls: "site", text: line })); });
    if (!r.sites.length) sites.textContent = "-";
    return el("tr", {}, el("td", { cls: "site", text: r.path }), el("td", { text: r.variant }), num(r.trace),
      num(r.guard), el("td", { cls: r.agreement === "disagree" ? "new" : "", text: r.agree, title: r.notes.join("\n") }),
      el("td", { text: r.rules }), sites, el("td", { cls: r.passed ? "gone" : "new", text: r.passed ? "ok" : "FAIL" }));
  }

  function render() {
    document.title = data.title;
    root.appendChild(el("h1", { text: data.title }));
    root.appendChild(el("p", { cls: "sub", text: data.subtitle }));
    root.appendChild(el("div", { cls: "verdict " + (audit.passed ? "good" : "bad"), text: data.verdict }));
    var s = audit.summary;
    var stats = el("div", { cls: "stats" });
    [["paths", s.paths], ["runs", s.runs], ["failed", s.failed], ["agree", s.agree], ["blind spot", s["blind-spot"]],
      ["disagree", s.disagree]].forEach(function (pair) { stats.appendChild(stat(pair[0], pair[1])); });
    root.appendChild(stats);
    root.appendChild(el("h2", { text: "Matrix" }));
    var head = el("tr", {});
    ["path", "variant", "trace", "guard", "agree", "rules", "call sites", "result"].forEach(function (h) {
      head.appendChild(el("th", { text: h }));
    });
    var body = el("tbody", {});
    data.rows.forEach(function (r) { body.appendChild(row(r)); });
    root.appendChild(el("table", { id: "matrix" }, el("thead", {}, head), body));
    var notes = data.notes;
    if (notes.length) {
      root.appendChild(el("h2", { text: "Notes" }));
      var list = el("ul", {});
      notes.forEach(function (n) { list.appendChild(el("li", {}, el("b", { text: n[0] + ": " }), n[1])); });
      root.appendChild(list);
    }
    root.appendChild(el("p", { cls: "muted", text: data.legend }));
    root.appendChild(el("footer", { text: "synchunt " + data.version + " \u00b7 self-contained audit: no network access" }));
  }

  try {
    render();
    root.setAttribute("data-rendered", "ok");
  } catch (error) {
    root.setAttribute("data-rendered", "error");
    root.insertBefore(el("p", { cls: "error", text: "Audit rendering failed: " + error }), root.firstChild);
    throw error;
  }
})();
