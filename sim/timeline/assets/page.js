// sim/timeline: the page's only script. The chart is laid out in Go; this
// switches the axis (every shape carries its place on both: data-t, data-o),
// fills the details panel on a click, and opens on the first blamed event.
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

  function setAxis(axis) {
    var key = axis === "time" ? "data-t" : "data-o";
    for (var k = 0; k < placed.length; k++) {
      var el = placed[k];
      var v = el.getAttribute(key).split(" ");
      if (el.tagName.toLowerCase() === "line") {
        el.setAttribute("x1", v[0]);
        el.setAttribute("x2", v[1]);
      } else {
        el.style.left = v[0] + "px";
        if (v.length > 1) {
          el.style.width = v[1] + "px";
        }
      }
    }
    root.setAttribute("data-axis", axis);
    var sel = root.querySelector(".chart .sel");
    if (sel) {
      reveal(sel);
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

  var button = document.getElementById("tl-axis");
  if (button) {
    button.addEventListener("click", function () {
      setAxis(root.getAttribute("data-axis") === "time" ? "ordinal" : "time");
    });
  }

  setAxis(root.getAttribute("data-default-axis") || "time");
  var first = root.querySelector(".chart .lane [data-blamed]");
  if (first) {
    var seqs = first.getAttribute("data-ev").split(" ");
    select(seqs.map(Number), first);
  }
  root.setAttribute("data-shapes", String(root.querySelectorAll(".chart [data-ev]").length));
  root.setAttribute("data-rendered", "1");
})();
