// sim/timeline: the page's only script. The chart is laid out in Go; this
// switches the axis (every shape carries its place on both: data-t, data-o)
// and its caption, fills the details panel on a click, and opens on the
// violating read (else the first blamed event), zoomed out if need be so
// that the read's stale interval and the claim's window are in view.
// It writes text with textContent only, never as HTML.
(function () {
  "use strict";
  var root = document.getElementById("tl");
  var data = JSON.parse(document.getElementById("tl-data").textContent);
  var scroller = document.getElementById("tl-scroll");
  var panel = document.getElementById("tl-panel");
  var events = data.events;
  var pos = {};
  var i;
  for (i = 0; i < events.length; i++) {
    pos[events[i].seq] = i;
  }
  var byStep = {};
  for (i = 0; i < data.trace.length; i++) {
    var t = data.trace[i];
    if (!byStep[t.step]) {
      byStep[t.step] = [];
    }
    byStep[t.step].push(t.line);
  }
  var placed = root.querySelectorAll("[data-t]");
  var chart = document.getElementById("tl-chart");
  var svg = root.querySelector(".chart svg.arrows");
  var labelW = Number(chart.getAttribute("data-label-w")) || 190;
  var baseWidth = Number(chart.getAttribute("data-width")) || chart.offsetWidth;
  var ticks = root.querySelectorAll(".chart .tick[data-x]");
  var caption = document.getElementById("tl-reason");
  var zoomNote = document.getElementById("tl-zoom");
  // zoom scales x past the lane names: 1 is the layout Go made.
  var zoom = 1;

  function scaled(x) {
    return labelW + (Number(x) - labelW) * zoom;
  }

  function setAxis(axis) {
    var key = axis === "time" ? "data-t" : "data-o";
    for (var k = 0; k < placed.length; k++) {
      var el = placed[k];
      var v = el.getAttribute(key).split(" ");
      if (el.tagName.toLowerCase() === "line") {
        el.setAttribute("x1", String(scaled(v[0])));
        el.setAttribute("x2", String(scaled(v[1])));
      } else if (el.classList.contains("mk")) {
        // A marker is a point: its middle moves, its size stays.
        var w = Number(v[1]);
        el.style.left = scaled(Number(v[0]) + w / 2) - w / 2 + "px";
      } else {
        el.style.left = scaled(v[0]) + "px";
        if (v.length > 1) {
          el.style.width = Math.max(Number(v[1]) * zoom, 2) + "px";
        }
      }
    }
    var width = labelW + (baseWidth - labelW) * zoom;
    chart.style.width = width + "px";
    if (svg) {
      svg.setAttribute("width", String(width));
    }
    // Ticks closer than a label's width to the one before are hidden.
    var last = {};
    for (k = 0; k < ticks.length; k++) {
      var t = ticks[k];
      var x = scaled(t.getAttribute("data-x"));
      var group = t.parentNode.className;
      t.style.left = x + "px";
      t.hidden = last[group] !== undefined && x - last[group] < 90;
      if (!t.hidden) {
        last[group] = x;
      }
    }
    root.setAttribute("data-axis", axis);
    if (caption) {
      caption.textContent = caption.getAttribute(axis === "time" ? "data-caption-time" : "data-caption-ordinal");
    }
    if (zoomNote) {
      zoomNote.hidden = zoom === 1;
      document.getElementById("tl-zoom-text").textContent =
        "Zoomed out to " + Math.round(zoom * 100) + "% so that the violating read's stale interval and the claim's window fit.";
    }
  }

  function node(tag, cls, text) {
    var n = document.createElement(tag);
    if (cls) {
      n.className = cls;
    }
    if (text !== undefined && text !== null) {
      n.textContent = String(text);
    }
    return n;
  }

  function row(table, name, value, cls) {
    if (value === undefined || value === null || value === "") {
      return;
    }
    var tr = node("tr");
    tr.appendChild(node("th", "", name));
    tr.appendChild(node("td", cls || "", value));
    table.appendChild(tr);
  }

  function eventBox(e) {
    var box = node("div", e.blame ? "evt isblamed" : "evt");
    var table = node("table");
    row(table, "event", "#" + e.seq + " " + e.kind);
    row(table, "task", e.task);
    row(table, "object", e.object);
    row(table, "time", e.from ? e.from + " to " + e.at : e.at);
    row(table, "step", e.step);
    row(table, "ref", e.ref);
    row(table, "text", e.text);
    row(table, "blame", e.blame ? "\u2717 " + e.blame : "", "blame");
    box.appendChild(table);
    return box;
  }

  function summary(e) {
    var s = e.kind;
    if (e.object) {
      s += " " + e.object;
    }
    if (e.text) {
      s += " " + e.text;
    }
    return s;
  }

  // reveal scrolls the chart so that a shape is in view, past the lane names.
  function reveal(el) {
    if (!scroller || el.offsetLeft === undefined) {
      return;
    }
    var x = el.offsetLeft;
    var y = el.offsetTop + (el.offsetParent ? el.offsetParent.offsetTop : 0);
    if (x < scroller.scrollLeft + 200 || x > scroller.scrollLeft + scroller.clientWidth - 40) {
      // Past the lane names, a little left of the middle: what led to it shows.
      scroller.scrollLeft = Math.max(0, x - 190 - (scroller.clientWidth - 190) * 0.6);
    }
    if (y < scroller.scrollTop + 30 || y > scroller.scrollTop + scroller.clientHeight - 20) {
      scroller.scrollTop = Math.max(0, y - 80);
    }
  }

  function select(seqs, from) {
    var old = root.querySelectorAll(".sel");
    for (var k = 0; k < old.length; k++) {
      old[k].classList.remove("sel");
    }
    var shape = null;
    if (from && from.closest(".chart")) {
      shape = from;
    } else if (seqs.length > 0) {
      shape = root.querySelector('.chart .lane [data-ev~="' + seqs[0] + '"]');
    }
    if (shape) {
      shape.classList.add("sel");
      reveal(shape);
    }
    panel.textContent = "";
    panel.appendChild(node("h2", "", "Details"));
    var known = [];
    for (k = 0; k < seqs.length; k++) {
      if (pos[seqs[k]] !== undefined) {
        known.push(events[pos[seqs[k]]]);
      }
    }
    if (known.length === 0) {
      panel.appendChild(node("p", "hint", "That event is not on this page."));
      return;
    }
    panel.appendChild(node("h3", "", known.length === 1 ? "The event" : "Its " + known.length + " events"));
    for (k = 0; k < known.length; k++) {
      panel.appendChild(eventBox(known[k]));
    }
    var here = pos[known[0].seq];
    panel.appendChild(node("h3", "", "Around it in the record (\u00b110 events; click one)"));
    var near = node("table", "near");
    for (k = Math.max(0, here - 10); k <= Math.min(events.length - 1, here + 10); k++) {
      var e = events[k];
      var tr = node("tr", (k === here ? "here" : "") + (e.blame ? " isblamed" : ""));
      tr.setAttribute("data-ev", String(e.seq));
      tr.appendChild(node("td", "", "#" + e.seq));
      tr.appendChild(node("td", "", e.at));
      tr.appendChild(node("td", "", e.task));
      tr.appendChild(node("td", "", summary(e) + (e.blame ? "  \u2717 " + e.blame : "")));
      near.appendChild(tr);
    }
    panel.appendChild(near);
    var steps = [];
    for (k = 0; k < known.length; k++) {
      if (steps.indexOf(known[k].step) < 0) {
        steps.push(known[k].step);
      }
    }
    for (k = 0; k < steps.length; k++) {
      var lines = byStep[steps[k]];
      panel.appendChild(node("h3", "", "Trace lines of step " + steps[k]));
      panel.appendChild(node("pre", "trace", lines ? lines.join("\n") : data.traced ? "(none on this page)" : "(no trace was given for this page)"));
    }
    root.setAttribute("data-selected", String(known[0].seq));
  }

  root.addEventListener("click", function (ev) {
    var target = ev.target;
    var el = target && target.closest ? target.closest("[data-ev]") : null;
    if (!el || !root.contains(el)) {
      return;
    }
    var parts = el.getAttribute("data-ev").split(" ");
    var seqs = [];
    for (var k = 0; k < parts.length; k++) {
      if (parts[k] !== "") {
        seqs.push(Number(parts[k]));
      }
    }
    select(seqs, el);
  });

  var violating = root.querySelector(".chart .lane [data-violating]");

  // fit zooms out until the violating read, its stale interval and the
  // claim's window fit in the visible part of the chart, and scrolls them
  // into view: the page opens on what broke the claim.
  function fit() {
    if (!violating) {
      return;
    }
    var axis = root.getAttribute("data-axis");
    var parts = [violating, root.querySelector(".chart [data-stale]"), root.querySelector(".chart [data-window]")];
    function extent() {
      var lo = Infinity;
      var hi = -Infinity;
      for (var k = 0; k < parts.length; k++) {
        if (parts[k]) {
          lo = Math.min(lo, parts[k].offsetLeft);
          hi = Math.max(hi, parts[k].offsetLeft + parts[k].offsetWidth);
        }
      }
      return [lo, hi];
    }
    zoom = 1;
    setAxis(axis);
    var room = scroller.clientWidth - labelW - 40;
    var ext = extent();
    if (ext[1] - ext[0] > room && room > 0) {
      zoom = Math.max(room / (ext[1] - ext[0]), 0.01);
      setAxis(axis);
      ext = extent();
    }
    scroller.scrollLeft = Math.max(0, ext[0] - labelW - 20);
    var y = violating.offsetTop + violating.offsetParent.offsetTop;
    if (y < scroller.scrollTop + 30 || y > scroller.scrollTop + scroller.clientHeight - 20) {
      scroller.scrollTop = Math.max(0, y - 80);
    }
    // The chart may start below the fold (a long failure, many blamed rows).
    var r = violating.getBoundingClientRect();
    if (r.bottom > window.innerHeight || r.top < 0) {
      window.scrollBy(0, r.top - window.innerHeight / 2);
    }
  }

  function rect(el) {
    if (!el) {
      return "";
    }
    var r = el.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom].map(Math.round).join(" ");
  }

  // boxes records where the read, the window and the visible chart are on
  // the screen ("left top right bottom"), for the browser test and for a
  // person asking why the page opened where it did.
  function boxes() {
    var s = scroller.getBoundingClientRect();
    root.setAttribute("data-box-viewport", "0 0 " + window.innerWidth + " " + window.innerHeight);
    root.setAttribute("data-box-plot", [s.left + labelW, s.top, s.left + scroller.clientWidth, s.top + scroller.clientHeight].map(Math.round).join(" "));
    root.setAttribute("data-box-read", rect(violating));
    root.setAttribute("data-box-window", rect(root.querySelector(".chart [data-window]")));
    root.setAttribute("data-box-stale", rect(root.querySelector(".chart [data-stale]")));
    root.setAttribute("data-zoom", String(zoom));
  }

  var button = document.getElementById("tl-axis");
  if (button) {
    button.addEventListener("click", function () {
      zoom = 1;
      setAxis(root.getAttribute("data-axis") === "time" ? "ordinal" : "time");
      fit();
      var sel = root.querySelector(".chart .sel");
      if (sel && !violating) {
        reveal(sel);
      }
      boxes();
    });
  }
  var reset = document.getElementById("tl-zoom-reset");
  if (reset) {
    reset.addEventListener("click", function () {
      zoom = 1;
      setAxis(root.getAttribute("data-axis"));
      if (violating) {
        reveal(violating);
      }
      boxes();
    });
  }

  setAxis(root.getAttribute("data-default-axis") || "time");
  var first = violating || root.querySelector(".chart .lane [data-blamed]");
  if (first) {
    var seqs = first.getAttribute("data-ev").split(" ");
    select(seqs.map(Number), first);
  }
  fit();
  boxes();
  root.setAttribute("data-shapes", String(root.querySelectorAll(".chart [data-ev]").length));
  root.setAttribute("data-rendered", "1");
})();
