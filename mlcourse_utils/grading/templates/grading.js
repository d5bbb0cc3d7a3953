// Manual grading in the page: points and comments typed under each answer, kept in this
// browser (localStorage) and saved as the CSV that `mlcourse grade-import` reads
// (student_id, grade_id, points, comment). A local file: the page's Content-Security-Policy
// allows no inline script and no request, and nothing here makes one.
(function () {
  "use strict";
  var form = document.getElementById("grading");
  if (!form) { return; }
  var gid = form.dataset.gradeId, max = Number(form.dataset.max);
  var key = form.dataset.key + "@" + location.pathname;
  var rows = Array.prototype.slice.call(document.querySelectorAll(".grade[data-student]"));
  var progress = document.getElementById("progress"), message = document.getElementById("message");

  function field(row, name) { return row.querySelector("[name=" + name + "]"); }

  function valid(text) {
    if (text.trim() === "") { return true; }
    var x = Number(text.trim().replace(",", "."));
    return isFinite(x) && x >= 0 && x <= max;
  }

  function state() {
    var data = {};
    rows.forEach(function (row) {
      var points = field(row, "points").value, comment = field(row, "comment").value;
      if (points !== "" || comment !== "") {
        data[row.dataset.student] = {points: points, comment: comment};
      }
    });
    return data;
  }

  function update() {
    var done = 0, bad = 0;
    rows.forEach(function (row) {
      var points = field(row, "points").value;
      var ok = valid(points) && field(row, "points").validity.valid;
      row.classList.toggle("invalid", !ok);
      if (!ok) { bad += 1; } else if (points.trim() !== "") { done += 1; }
    });
    progress.textContent = done + " / " + rows.length + " graded" +
      (bad ? ", " + bad + " with points outside 0 to " + max : "");
    try { localStorage.setItem(key, JSON.stringify(state())); } catch (e) { /* not kept */ }
    return bad;
  }

  function cell(text) {
    // As the grader writes CSV cells: a leading formula character is quoted with '.
    if (/^[=+\-@\t\r]/.test(text)) { text = "'" + text; }
    return '"' + text.replace(/"/g, '""') + '"';
  }

  function csv() {
    var lines = ["student_id,grade_id,points,comment"];
    rows.forEach(function (row) {
      var points = field(row, "points").value.trim();
      lines.push([cell(row.dataset.student), cell(gid), cell(points),
                  cell(field(row, "comment").value)].join(","));
    });
    return lines.join("\r\n") + "\r\n";
  }

  function parse(text) {  // RFC 4180: quoted fields, doubled quotes, newlines inside quotes
    var out = [], row = [], value = "", quoted = false, i, c;
    for (i = 0; i < text.length; i += 1) {
      c = text[i];
      if (quoted) {
        if (c === '"' && text[i + 1] === '"') { value += '"'; i += 1; }
        else if (c === '"') { quoted = false; }
        else { value += c; }
      } else if (c === '"') { quoted = true; }
      else if (c === ",") { row.push(value); value = ""; }
      else if (c === "\n" || c === "\r") {
        if (c === "\r" && text[i + 1] === "\n") { i += 1; }
        row.push(value); out.push(row); row = []; value = "";
      } else { value += c; }
    }
    if (value !== "" || row.length) { row.push(value); out.push(row); }
    return out;
  }

  function unquote(text) { return /^'[=+\-@\t\r]/.test(text) ? text.slice(1) : text; }

  function fill(data) {
    rows.forEach(function (row) {
      var entry = data[row.dataset.student];
      if (entry) {
        field(row, "points").value = entry.points || "";
        field(row, "comment").value = entry.comment || "";
      }
    });
    update();
  }

  function load(text) {
    var table = parse(text.replace(/^\ufeff/, "")), head = table.shift() || [], data = {}, n = 0;
    var s = head.indexOf("student_id"), g = head.indexOf("grade_id");
    var p = head.indexOf("points"), m = head.indexOf("comment");
    if (s < 0 || p < 0) { message.textContent = "not a manual-grading CSV"; return; }
    table.forEach(function (r) {
      if (g >= 0 && r[g] !== undefined && r[g] !== gid) { return; }
      if (r[s] === undefined) { return; }
      data[r[s]] = {points: r[p] || "", comment: m >= 0 ? unquote(r[m] || "") : ""};
      n += 1;
    });
    fill(data);
    message.textContent = "loaded " + n + " rows";
  }

  function save() {
    var bad = update();
    if (bad) { message.textContent = "fix the points marked in red first"; return; }
    var link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([csv()], {type: "text/csv;charset=utf-8"}));
    link.download = form.dataset.csv;
    document.body.appendChild(link);
    link.click();
    link.remove();
    message.textContent = "saved " + form.dataset.csv + " (in your downloads folder)";
  }

  try { fill(JSON.parse(localStorage.getItem(key) || "{}")); } catch (e) { update(); }
  form.addEventListener("input", function (e) { e.stopPropagation(); });
  document.addEventListener("input", update);
  document.getElementById("save-csv").addEventListener("click", save);
  document.getElementById("load-csv").addEventListener("change", function (e) {
    var file = e.target.files[0];
    if (file) { file.text().then(load); }
  });
  window.mlcourseManual = {csv: csv, load: load};
}());
