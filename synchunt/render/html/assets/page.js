// Builds the report from the JSON data island. Trace text only ever reaches the DOM through textContent.
(function () {
  "use strict";
  var root = document.getElementById("report");
  var data = JSON.parse(document.getElementById("synchunt-data").textContent);
  var pending = [];

  // Rule docs use `backticks` for code: alternate text nodes and <code> elements.
  function prose(tag, text, cls) {
    var node = el(tag, cls ? { cls: cls } : {});
    String(text || "").split("`").forEach(function (part, i) {
      node.appendChild(i % 2 ? el("code", { text: part }) : document.createTextNode(part));
    });
    return node;
  }

  function us(value) {
    var v = Math.abs(value);
    var sign = value < 0 ? "\u2212" : "";
    if (v >= 1e6) return sign + (v / 1e6).toFixed(2) + " s";
    if (v >= 1e3) return sign + (v / 1e3).toFixed(2) + " ms";
    return sign + v.toFixed(1) + " \u00b5s";
  }

  function plural(count, noun) { return count + " " + noun + (count === 1 ? "" : "s"); }

  function stat(key, value) {
    return el("div", { cls: "stat" }, el("div", { cls: "k", text: key }), el("div", { cls: "v", text: String(value) }));
  }

  function figure(id, spec, extraConfig) {
    var box = el("div", { cls: "figure", id: id, "data-figure": id });
    var config = { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["select2d", "lasso2d"] };
    for (var key in extraConfig || {}) config[key] = extraConfig[key];
    pending.push(function () { return Plotly.newPlot(box, spec.data, spec.layout, config); });
    return box;
  }

  function table(headers, rows) {
    var head = el("tr", {});
    headers.forEach(function (h) { head.appendChild(el("th", { text: h })); });
    var body = el("tbody", {});
    rows.forEach(function (cells) {
      var tr = el("tr", {});
      cells.forEach(function (cell) {
        if (cell instanceof Node) tr.appendChild(cell);
        else tr.appendChild(el("td", { text: String(cell) }));
      });
      body.appendChild(tr);
    });
    return el("table", {}, el("thead", {}, head), body);
  }

  function num(text, cls) { return el("td", { cls: "num" + (cls ? " " + cls : ""), text: String(text) }); }

  function traceLine(trace) {
    var what = [trace.target, trace.label].filter(Boolean).join(" ");
    var parts = [trace.path];
    if (what) parts.push(what);
    if (trace.rank !== null && trace.rank !== undefined) parts.push("rank " + trace.rank);
    parts.push(trace.mode + (trace.device_activity ? " (device activity traced)" : " (no device activity)"));
    return parts.join(" \u00b7 ");
  }

  function header(side) {
    var h = side.model.header;
    var box = el("div", {});
    box.appendChild(el("div", { cls: "verdict " + (h.clean ? "good" : "bad"), "data-verdict": side.key, text: h.verdict }));
    h.traces.forEach(function (t) {
      box.appendChild(el("p", { cls: "sub", text: traceLine(t) }));
      if (t.partial) box.appendChild(el("p", { cls: "note", "data-note": "partial", text: t.partial }));
    });
    var stats = el("div", { cls: "stats" },
      stat("syncs", h.syncs), stat("confirmed", h.confirmed), stat("latent", h.latent),
      stat(h.warmup ? "steady-state stall" : "total stall", h.stall), stat("max stall", h.max_stall),
      stat("device idle caused", h.device_idle === null ? (h.syncs ? "unknown" : "none") : h.device_idle));
    stats.lastChild.setAttribute("data-stat", "device-idle");
    if (h.warmup) {
      stats.appendChild(stat("warm-up syncs", h.warmup + " (" + h.warmup_stall + ")"));
      stats.lastChild.setAttribute("data-stat", "warm-up");
    }
    if (h.collective_delay_us !== null) {
      stats.appendChild(stat("collective delay", us(h.collective_delay_us)));
      stats.lastChild.setAttribute("data-stat", "collective-delay");
    }
    [stat("device", h.device || "unknown"), stat("torch", h.torch || "unknown"),
      stat("threads with syncs", h.threads.join(", ") || "none")].forEach(function (node) { stats.appendChild(node); });
    box.appendChild(stats);
    if (h.collective_delay_us !== null) {
      box.appendChild(el("p", { cls: "muted", text: "Collective delay: for each sync, how much later than the first " +
        "rank this rank started its next collective (NCCL/RCCL): every peer already inside waited that long." }));
    }
    if (h.set_aside) box.appendChild(el("p", { cls: "muted", "data-note": "set-aside", text: h.set_aside }));
    if (h.sites_left_out || h.scopes_left_out) {
      var parts = [];
      if (h.sites_left_out) parts.push(h.sites_left_out + " call sites with the fewest syncs");
      if (h.scopes_left_out) parts.push(h.scopes_left_out + " scopes with the fewest syncs");
      box.appendChild(el("p", { cls: "note", "data-note": "left-out", text: "Not shown on this page: " +
        parts.join(" and ") + ". The JSON output (--format json) lists every one." }));
    }
    h.notes.forEach(function (text) {
      box.appendChild(el("p", { cls: "note", "data-note": "analysis", text: text }));
    });
    if (h.shared.length) {
      box.appendChild(el("p", { cls: "muted", "data-shared": "" }, "Every call site: " + h.shared.map(function (d) {
        return d.label + " " + d.text; }).join(" \u00b7 ")));
    }
    var filters = Object.keys(h.filters).filter(function (k) { return k !== "mode"; });
    if (filters.length) {
      box.appendChild(el("p", { cls: "muted", text: "filtered: " + filters.map(function (k) {
        return k + " = " + h.filters[k]; }).join(", ") }));
    }
    return box;
  }

  function siteTable(side) {
    var rules = side.model.rules;
    var delays = side.model.header.collective_delay_us !== null;
    var rows = side.model.sites.map(function (s, i) {
      var shared = side.model.header.shared.map(function (d) { return d.field + "\u0000" + d.text; });
      var heading = el("div", {}, el("span", { cls: "site", text: s.where || s.site }));
      if (s.call_site && !s.call_site.user) heading.appendChild(el("span", { cls: "badge", "data-library": "", text: "library" }));
      var where = el("td", {}, heading);
      if (s.via) {
        where.appendChild(el("div", { cls: "via", "data-via": "" }, "via ",
          el("span", { cls: "site", text: s.via.file + ":" + s.via.line + " " + s.via.function }), " (your code)"));
      }
      if (s.call_site && s.call_site.line_note) {
        where.appendChild(el("div", { cls: "muted", "data-line-note": "", text: s.call_site.line_note }));
      }
      s.details.forEach(function (d) {
        if (shared.indexOf(d.field + "\u0000" + d.text) >= 0) return;
        where.appendChild(el("div", { cls: "muted", "data-detail": d.field, text: d.label + ": " + d.text }));
      });
      var why = el("td", {});
      var fix = el("td", {});
      var ruleCell = el("td", {});
      if (s.source) {
        // The site's own line above the advice: the reader maps the rule's pattern onto their code.
        fix.appendChild(el("div", { cls: "muted", text: (s.source.user ? "your line, " : "the library's line, ") +
          s.source.file.split("/").pop() + ":" + s.source.line }));
        fix.appendChild(el("pre", { cls: "source", "data-source": "", text: s.source.text }));
      }
      if (s.rewrite) {
        var w = s.rewrite;
        fix.appendChild(el("div", { cls: "muted", "data-rewrite": w.pattern, text: "rewrite of this line: " + w.title +
          (w.checked ? " (checked)" : " (a suggestion, not checked: synchunt lint --check-fixes checks it)") }));
        fix.appendChild(el("pre", { cls: "rewrite", text: w.original + "\n\u2192 " + w.replacement }));
        if (w.condition) fix.appendChild(el("div", { cls: "muted", text: "equivalent when: " + w.condition }));
      }
      s.rules.forEach(function (code) {
        var r = rules[code];
        ruleCell.appendChild(el("div", {}, el("b", { text: r.code }), " " + r.name));
        ruleCell.appendChild(prose("div", r.title, "muted"));
        why.appendChild(prose("p", r.mechanism));
        why.appendChild(el("details", {}, el("summary", { text: "why it hurts" }), prose("p", r.why_bad)));
        fix.appendChild(prose("p", r.fix, "fix"));
        // The catalogue's example is the rule's, not a rewrite of the line above: it says so.
        if (r.example || r.use_instead) {
          var example = el("details", { open: "", "data-rule-example": r.code },
            el("summary", { text: "the rule's example (" + r.code + "), not a rewrite of this line" }));
          if (r.example) example.appendChild(el("div", { cls: "muted", text: "instead of" }));
          if (r.example) example.appendChild(el("pre", { text: r.example }));
          if (r.use_instead) example.appendChild(el("div", { cls: "muted", text: "write" }));
          if (r.use_instead) example.appendChild(el("pre", { text: r.use_instead }));
          fix.appendChild(example);
        }
      });
      var idle = s.device_idle_us === null ? (s.latent ? "unknown\n(latent)" : "-") :
        us(s.device_idle_us) + (s.count > 1 && s.max_idle_us !== null ? "\n(" + us(s.max_idle_us) + " max)" : "");
      var cells = [num(i + 1), where, num(s.count + (s.confirmed && s.latent ? " (" + s.confirmed + " confirmed)" : "")),
        num(s.unmeasured === s.count ? "not measured\n(guard only)" : us(s.stall_us) + "\n(" + us(s.max_stall_us) +
          " max)" + (s.unmeasured ? "\n" + s.unmeasured + " not measured" : "")), num(idle, s.device_idle_us ? "idle" : "")];
      if (delays) cells.push(num(s.collective_delay_us === null ? "-" : "+" + us(s.collective_delay_us), "delay"));
      return cells.concat([ruleCell, why, fix]);
    });
    var headers = ["#", "call site", "syncs", "stall", "device idle caused"];
    if (delays) headers.push("collective delay");
    var result = table(headers.concat(["rule", "why it syncs", "sync-free alternative"]), rows);
    result.className = "sites" + (delays ? " delays" : "");
    return result;
  }

  function stackList(side) {
    var box = el("div", {});
    side.model.sites.forEach(function (s) {
      var details = el("details", { open: "" }, el("summary", {}, el("span", { cls: "site", text: s.site }),
        " \u2014 " + plural(s.count, "sync") + ", " + plural(s.paths.length + s.other_paths, "distinct path")));
      s.paths.forEach(function (entry) {
        var list = el("ol", { cls: "stack" });
        entry.frames.forEach(function (f) {
          list.appendChild(el("li", { cls: f.user ? "user" : "", text: f.file + ":" + f.line + "  " + f.function }));
        });
        details.appendChild(el("div", { cls: "muted", "data-path-op": entry.op_chain }, plural(entry.count, "sync") +
          " through this path (innermost frame first), syncing in ", el("code", { text: entry.op_chain }),
          " (" + entry.rule + "):"));
        details.appendChild(list);
      });
      if (s.other_paths) {
        details.appendChild(el("div", { cls: "muted", text: "\u2026 and " + s.other_paths + " rarer paths" }));
      }
      box.appendChild(details);
    });
    return box;
  }

  function sideSection(side) {
    var section = el("section", { "data-side": side.key });
    if (side.heading) section.appendChild(el("h2", { text: side.heading }));
    section.appendChild(header(side));
    section.appendChild(el("h3", { text: "Timeline" }));
    if (!side.timelines.length) {
      section.appendChild(el("p", { cls: "muted", "data-no-timeline": "", text: "No timeline: this page was made " +
        "from the analysis alone (a saved analysis read back without its traces), so there are no events to place " +
        "the syncs among. Render it from the trace (synchunt report TRACE) to get one." }));
    }
    var gpu = side.timelines.some(function (t) { return t.gpu_lanes > 0; });
    if (side.timelines.length) section.appendChild(el("p", { cls: "muted", text: "Scope lanes (record_function), " +
      "the outermost ops and every sync, labelled with its rule and op (size and colour: stall; hover for op chain, call site, rule and cost)" +
      (gpu ? "; below them one lane per GPU stream: the work each sync waited for in purple, a dotted line from " +
        "the sync to its end, and the device idle the sync caused as a red hatched gap" : "") +
      ". Lane names are shortened; hover a bar for the full name. Drag to zoom, scroll to zoom, the modebar to pan." }));
    side.timelines.forEach(function (t, i) {
      if (side.timelines.length > 1) section.appendChild(el("div", { cls: "muted", text: t.title }));
      section.appendChild(el("p", { cls: t.decimated ? "note" : "muted", "data-decimation": "", text: t.note }));
      section.appendChild(figure(side.key + "-timeline-" + i, t.figure, { scrollZoom: true, doubleClick: "autosize" }));
    });
    if (!side.model.sites.length) {
      section.appendChild(el("p", { cls: "muted", text: "No syncs: nothing to break down by call site or scope." }));
      return section;
    }
    section.appendChild(el("h3", { text: "Syncs by call site" }));
    section.appendChild(figure(side.key + "-sites", side.figures.sites));
    section.appendChild(siteTable(side));
    section.appendChild(el("h3", { text: "Syncs by scope" }));
    if (side.model.scopes.length === 1) {
      var only = side.model.scopes[0];
      section.appendChild(el("p", { cls: "muted", "data-note": "one-scope", text: !only.named ?
        "No record_function scope encloses " + (only.count === 1 ? "the sync." : "any of these syncs.") :
        (only.count === 1 ? "The sync is" : "All " + only.count + " syncs are") + " in one scope: " + only.scope }));
    } else {
      side.model.sites.forEach(function (s) {
        var scopes = s.details.filter(function (d) { return d.field === "scope"; });
        section.appendChild(el("p", { cls: "muted" }, el("span", { cls: "site", text: s.site }),
          ": " + (scopes.length ? scopes[0].text : "-")));
      });
    }
    if (side.figures.scopes) section.appendChild(figure(side.key + "-scopes", side.figures.scopes));
    section.appendChild(el("h3", { text: "Python call paths" }));
    if (!side.figures.callpath) {
      section.appendChild(el("p", { cls: "muted", "data-note": "no-stacks", text: "The trace records no Python " +
        "frames for these syncs: profile with torch.profiler's with_stack=True to see where they come from." }));
      return section;
    }
    section.appendChild(el("p", { cls: "muted", text: "Outermost frame at the top, each path's own op and rule at the bottom (blue: your code); click a box to zoom in." }));
    section.appendChild(figure(side.key + "-callpath", side.figures.callpath));
    section.appendChild(stackList(side));
    return section;
  }

  function comparison(cmp) {
    var section = el("section", { "data-side": "comparison" });
    var good = cmp.after.syncs < cmp.before.syncs || (cmp.after.syncs === cmp.before.syncs && cmp.stall_saved_us > 0);
    section.appendChild(el("div", { cls: "verdict " + (good || cmp.after.syncs === 0 ? "good" : "bad"),
      "data-verdict": "comparison", text: cmp.headline }));
    var pair = el("div", { cls: "pair" });
    [["before", cmp.before], ["after", cmp.after]].forEach(function (entry) {
      var s = entry[1];
      pair.appendChild(el("div", { cls: "card " + (s.syncs ? "bad" : "good") },
        el("h3", { text: entry[0] + ": " + s.labels.join(", ") }),
        el("div", { cls: "v", text: s.verdict }),
        el("div", { cls: "muted", text: "stall " + us(s.stall_us) + " total, " + us(s.max_stall_us) + " max" +
          (s.device_idle_us === null ? "" : " \u00b7 device idle " + us(s.device_idle_us) + " caused") })));
    });
    section.appendChild(pair);
    section.appendChild(el("h3", { text: "Per call site" }));
    var idle = cmp.sites.some(function (s) { return s.before_idle_us !== null || s.after_idle_us !== null; });
    function idleText(value) { return value === null ? "-" : us(value); }
    section.appendChild(table(["call site", "rule", "before", "after", "\u0394 syncs", "stall before", "stall after",
      "\u0394 stall"].concat(idle ? ["idle before", "idle after"] : [], [""]), cmp.sites.map(function (s) {
      var where = el("td", {}, el("div", { cls: "site", text: s.site }));
      if (s.after_site && s.after_site !== s.site) where.appendChild(el("div", { cls: "muted", text: "\u2192 " + s.after_site }));
      return [where, s.rules.join(", "), num(s.before), num(s.after), num((s.delta > 0 ? "+" : "") + s.delta, s.status),
        num(us(s.before_stall_us)), num(us(s.after_stall_us)), num(us(-s.stall_saved_us), s.status)].concat(
        idle ? [num(idleText(s.before_idle_us)), num(idleText(s.after_idle_us))] : [],
        [el("td", { cls: s.status, text: s.status })]);
    })));
    if (cmp.ops.length) {
      section.appendChild(el("h3", { text: "Per op" }));
      section.appendChild(table(["op", "before", "after", ""], cmp.ops.map(function (o) {
        var status = o.before && !o.after ? "gone" : o.after && !o.before ? "new" : "";
        return [o.key, num(o.before), num(o.after), el("td", { cls: status, text: status })];
      })));
    }
    if (cmp.sites.length) section.appendChild(figure("comparison-figure", cmp.figure));
    return section;
  }

  function render() {
    document.title = data.title;
    root.appendChild(el("h1", { text: data.title }));
    root.appendChild(el("p", { cls: "sub", text: data.subtitle }));
    if (data.comparison) root.appendChild(comparison(data.comparison));
    data.sides.forEach(function (side) { root.appendChild(sideSection(side)); });
    root.appendChild(el("footer", { text: "synchunt " + data.version + " \u00b7 self-contained report: no network " +
      "access \u00b7 rule " + "docs from the synchunt catalogue" }));
    return pending.reduce(function (chain, draw) { return chain.then(draw); }, Promise.resolve());
  }

  Promise.resolve().then(render).then(function () { root.setAttribute("data-rendered", "ok"); }, function (error) {
    root.setAttribute("data-rendered", "error");
    root.insertBefore(el("p", { cls: "error", text: "Report rendering failed: " + error }), root.firstChild);
    throw error;
  });
})();
