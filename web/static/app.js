// perflab web UI behaviour that plain HTML cannot do. Pages work without
// it; names from profiles are only ever set with textContent.
"use strict";

// Filter selects submit their form when changed.
for (const sel of document.querySelectorAll("select[data-autosubmit]")) {
  sel.addEventListener("change", () => sel.form.submit());
}

// Upload: drag and drop onto the drop zone fills the file input and
// submits, so dropping behaves like choosing a file and pressing Open.
(function () {
  const drop = document.getElementById("drop");
  const input = document.getElementById("file");
  if (!drop || !input) return;
  for (const ev of ["dragenter", "dragover"]) {
    drop.addEventListener(ev, (e) => { e.preventDefault(); drop.classList.add("over"); });
  }
  for (const ev of ["dragleave", "drop"]) {
    drop.addEventListener(ev, () => drop.classList.remove("over"));
  }
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    if (!e.dataTransfer || e.dataTransfer.files.length === 0) return;
    input.files = e.dataTransfer.files;
    drop.querySelector("span").textContent = e.dataTransfer.files[0].name;
    input.form.requestSubmit();
  });
  input.addEventListener("change", () => {
    if (input.files.length > 0) drop.querySelector("span").textContent = input.files[0].name;
  });
})();

// Flame graphs: package flame's viewer (flame.js) draws the JSON that the
// page carries in <script id="flame-data" type="application/json">, or, for
// large graphs and comparisons, fetches from data-src. data-state tells
// tests (and curious people) where it got to: loading, ready or error.
for (const box of document.querySelectorAll(".flame[data-src]")) {
  box.dataset.state = "loading";
  const note = document.createElement("p");
  note.className = "note";
  note.textContent = "Loading the flame graph…";
  box.appendChild(note);
  const inline = box.id === "flame" && document.getElementById("flame-data");
  const data = inline
    ? Promise.resolve().then(() => JSON.parse(inline.textContent))
    : fetch(box.dataset.src).then((r) => r.json().then((d) => {
      if (!r.ok) throw new Error(d.error || r.statusText);
      return d;
    }));
  data
    .then((d) => {
      box.removeChild(note);
      window.PerflabFlame.mount(box, d);
      box.dataset.state = "ready";
    })
    .catch((err) => {
      note.className = "error";
      note.textContent = "No flame graph: " + err.message;
      box.dataset.state = "error";
    });
}
