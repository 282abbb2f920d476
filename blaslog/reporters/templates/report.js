// The HTML report's one script (reporters/html.py puts it in the page, allowed by its hash): hover boxes on the
// charts, the map's filters, finding links that scroll to their card, sortable and filterable tables. It
// reads the page and writes text only (textContent, classes, hidden): nothing it shows is parsed as markup.
(function () {
  "use strict";
  function openCard(id) {
    var card = document.getElementById(id);
    if (!card) { return; }
    card.scrollIntoView({block: "start"});
    card.classList.remove("flash"); void card.offsetWidth; card.classList.add("flash");
    if (history.replaceState) { history.replaceState(null, "", "#" + id); }
  }
  window.blaslogOpenCard = openCard;
  document.querySelectorAll("a.finding-link").forEach(function (link) {
    link.addEventListener("click", function (event) { event.preventDefault(); openCard(link.dataset.target); });
  });

  // hover: a box with the element's <title>, taken out of the element on first use (so that the browser's
  // own tooltip does not show as well)
  function tipText(element) {
    var title = element.querySelector(":scope > title");
    if (title) { element.dataset.tip = title.textContent; title.remove(); }
    return element.dataset.tip || "";
  }
  var box = document.createElement("div");
  box.className = "tipbox";
  box.hidden = true;
  box.setAttribute("role", "tooltip");
  document.body.appendChild(box);
  function place(event) {
    var x = Math.min(event.clientX + 14, window.innerWidth - box.offsetWidth - 8);
    var y = event.clientY + 16;
    if (y + box.offsetHeight > window.innerHeight - 8) { y = event.clientY - box.offsetHeight - 12; }
    box.style.left = Math.max(x, 4) + "px";
    box.style.top = Math.max(y, 4) + "px";
  }
  document.querySelectorAll("svg.chart").forEach(function (svg) {
    var hot = null;
    svg.addEventListener("mouseover", function (event) {
      var element = event.target.closest(".tip");
      if (!element || element === hot) { return; }
      if (hot) { hot.classList.remove("hot"); }
      hot = element;
      element.classList.add("hot");
      box.replaceChildren();
      tipText(element).split("\n").forEach(function (line, index) {
        var part = document.createElement(index ? "div" : "b");
        part.textContent = line;
        box.appendChild(part);
      });
      box.hidden = false;
      place(event);
    });
    svg.addEventListener("mousemove", function (event) { if (!box.hidden) { place(event); } });
    svg.addEventListener("mouseleave", function () {
      if (hot) { hot.classList.remove("hot"); hot = null; }
      box.hidden = true;
    });
  });

  // the map's filters: cells whose hover text holds the words, or that showed a finding (of a class)
  document.querySelectorAll(".chart-tools").forEach(function (tools) {
    var svg = document.getElementById(tools.dataset.chart);
    var words = tools.querySelector("input"), kind = tools.querySelector("select"), count = tools.querySelector("output");
    var cells = Array.prototype.slice.call(svg.querySelectorAll(".cell"));
    function apply() {
      var needle = words.value.trim().toLowerCase(), cls = kind.value, shown = 0;
      cells.forEach(function (cell) {
        var found = cell.dataset.cls || "";
        var keep = (!needle || tipText(cell).toLowerCase().indexOf(needle) >= 0)
          && (!cls || (cls === "*" ? found !== "" : found === cls));
        // a ringed cell sits in a link (or group) with its ring: dim both
        (cell.parentNode.matches("g.cells") ? cell : cell.parentNode).classList.toggle("dim", !keep);
        shown += keep ? 1 : 0;
      });
      count.textContent = (needle || cls) ? shown + " of " + cells.length + " cells" : "";
    }
    words.addEventListener("input", apply);
    kind.addEventListener("change", apply);
    tools.hidden = false;
  });

  // sortable, filterable tables
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var body = table.tBodies[0];
    table.querySelectorAll("th").forEach(function (th, column) {
      th.addEventListener("click", function () {
        var ascending = !th.classList.contains("sorted-asc");
        table.querySelectorAll("th").forEach(function (h) { h.classList.remove("sorted-asc", "sorted-desc"); });
        th.classList.add(ascending ? "sorted-asc" : "sorted-desc");
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[column].textContent, y = b.cells[column].textContent;
          var nx = parseFloat(x), ny = parseFloat(y);
          var result = (!isNaN(nx) && !isNaN(ny) && String(nx) === x.trim() && String(ny) === y.trim())
            ? nx - ny : x.localeCompare(y, undefined, {numeric: true});
          return ascending ? result : -result;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
  document.querySelectorAll("input.filter").forEach(function (input) {
    var table = document.getElementById(input.dataset.table);
    input.addEventListener("input", function () {
      var needle = input.value.toLowerCase();
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        row.style.display = row.textContent.toLowerCase().indexOf(needle) >= 0 ? "" : "none";
      });
    });
    input.hidden = false;
  });
})();
