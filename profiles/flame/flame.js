// perflab interactive flame graph: draws the compact JSON of
// profiles/flame (Tree.WriteJSON) on a canvas.
//
// Usage: PerflabFlame.mount(element, data). Every string from the profile
// reaches the page through textContent or canvas fillText, never as markup.
(function () {
  'use strict';

  var ROW = 18;           // row height, px
  var MIN_PX = 0.35;      // frames narrower than this are not drawn
  var MATCH = '#e040fb';  // search highlight
  // Browsers refuse a canvas taller than 32,767 device pixels or larger than
  // about 268M pixels and then draw nothing at all; a recursive stack 10,000
  // frames deep would need 180,000. Past these, a view shows the rows it
  // can, starting at the zoomed frame: clicking a frame goes deeper.
  var MAX_CANVAS_H = 32000;
  var MAX_CANVAS_AREA = 1.5e8;

  // ---- trees -------------------------------------------------------------

  // A tree is pre-order arrays: name (index into names), value (the drawn
  // width), cat, parent, depth, end (one past the last node of the
  // subtree), off (offset from the root's left edge in value units), gap
  // (room left by pruned elder siblings). A diff adds nv (the new value;
  // value is the width in the union's layout), base (scaled to the new
  // total), sig (+1/-1 significant change, 0 within noise), and bsq/nsq
  // (square-weight fractions, parts per billion) for testing merged frames.
  function fromData(data) {
    var raw = data.nodes, n = raw.length / 4;
    var t = alloc(n, data.diff);
    var path = []; // path[d] is the latest frame at depth d
    var gaps = data.gaps || [];
    for (var g = 0; g + 1 < gaps.length; g += 2) t.gap[gaps[g]] = gaps[g + 1];
    for (var i = 0; i < n; i++) {
      var d = raw[4 * i + 3];
      t.name[i] = raw[4 * i];
      t.value[i] = raw[4 * i + 1];
      t.cat[i] = raw[4 * i + 2];
      t.depth[i] = d;
      if (data.diff) {
        t.nv[i] = t.value[i];
        t.value[i] = data.width[i];
        t.base[i] = data.base[i];
        t.sig[i] = data.sig[i];
        t.bsq[i] = data.bsq[i];
        t.nsq[i] = data.nsq[i];
      }
      // Frames deeper than or as deep as this one are finished.
      while (path.length > d) t.end[path.pop()] = i;
      t.parent[i] = d > 0 ? path[d - 1] : -1;
      path.push(i);
    }
    while (path.length) t.end[path.pop()] = n;
    return finish(t);
  }

  function alloc(n, diff) {
    return {
      n: n, name: new Int32Array(n), value: new Float64Array(n), cat: new Uint8Array(n),
      parent: new Int32Array(n), depth: new Int32Array(n), end: new Int32Array(n),
      off: new Float64Array(n), gap: new Float64Array(n),
      nv: diff ? new Float64Array(n) : null, base: diff ? new Float64Array(n) : null,
      sig: diff ? new Int8Array(n) : null, bsq: diff ? new Float64Array(n) : null,
      nsq: diff ? new Float64Array(n) : null
    };
  }

  function finish(t) {
    var cursor = new Float64Array(t.n);
    var maxDepth = 0;
    for (var i = 1; i < t.n; i++) {
      var p = t.parent[i];
      cursor[p] += t.gap[i];
      t.off[i] = cursor[p];
      cursor[p] += t.value[i];
      cursor[i] = t.off[i];
      if (t.depth[i] > maxDepth) maxDepth = t.depth[i];
    }
    if (t.n > 0) cursor[0] = 0;
    t.maxDepth = maxDepth;
    return t;
  }

  // Linked trees are built by the focus view, then flattened to pre-order.
  function Linked() {
    this.nodes = [node(-1, 5)];
  }
  function node(name, cat) {
    return { name: name, value: 0, nv: 0, base: 0, bsq: 0, nsq: 0, cat: cat, kids: new Map() };
  }
  Linked.prototype.child = function (p, name, cat) {
    var k = this.nodes[p].kids.get(name);
    if (k === undefined) {
      k = this.nodes.length;
      this.nodes.push(node(name, cat));
      this.nodes[p].kids.set(name, k);
    }
    return k;
  };
  // add adds frame i of tree t to node k (the focus view merges frames).
  Linked.prototype.add = function (k, t, i) {
    var s = this.nodes[k];
    s.value += t.value[i];
    if (t.nv) { s.nv += t.nv[i]; s.base += t.base[i]; s.bsq += t.bsq[i]; s.nsq += t.nsq[i]; }
  };
  // flatten returns the pre-order tree; for a diff, each merged frame is
  // tested again (stats), at the threshold of the whole graph.
  Linked.prototype.flatten = function (names, diff, stats, total) {
    var src = this.nodes, t = alloc(src.length, diff), i = 0;
    var stack = [[0, -1, 0]];
    while (stack.length) {
      var it = stack.pop(), s = src[it[0]], me = i++;
      t.name[me] = s.name; t.value[me] = s.value; t.cat[me] = s.cat;
      if (diff) {
        t.nv[me] = s.nv; t.base[me] = s.base; t.bsq[me] = s.bsq; t.nsq[me] = s.nsq;
        t.sig[me] = significance(stats, s.base / total, s.nv / total, s.bsq / 1e9, s.nsq / 1e9);
      }
      t.parent[me] = it[1]; t.depth[me] = it[2];
      var kids = Array.from(s.kids.values());
      kids.sort(function (a, b) {
        var x = names[src[a].name], y = names[src[b].name];
        return x < y ? -1 : x > y ? 1 : 0;
      });
      for (var j = kids.length - 1; j >= 0; j--) stack.push([kids[j], me, it[2] + 1]);
    }
    // end[] from parents: walk backwards.
    for (var a = 0; a < t.n; a++) t.end[a] = a + 1;
    for (var b = t.n - 1; b > 0; b--) {
      var p = t.parent[b];
      if (t.end[b] > t.end[p]) t.end[p] = t.end[b];
    }
    return finish(t);
  };

  // sandwich returns the callers and callees trees of function name f:
  // both rooted at f, over its outermost occurrences (recursion counted once).
  function sandwich(t, f) {
    var callers = new Linked(), callees = new Linked();
    callers.nodes[0].name = callees.nodes[0].name = f;
    var i = 1;
    var map = new Int32Array(t.n);
    while (i < t.n) {
      if (t.name[i] !== f) { i++; continue; }
      callers.add(0, t, i); callees.add(0, t, i);
      callers.nodes[0].cat = callees.nodes[0].cat = t.cat[i];
      var cur = 0;
      for (var a = t.parent[i]; a > 0; a = t.parent[a]) {
        cur = callers.child(cur, t.name[a], t.cat[a]);
        callers.add(cur, t, i); // a caller's frame is as wide as f under it
      }
      map[i] = 0;
      for (var j = i + 1; j < t.end[i]; j++) {
        var k = callees.child(map[t.parent[j]], t.name[j], t.cat[j]);
        map[j] = k;
        callees.add(k, t, j);
      }
      i = t.end[i];
    }
    return { callers: callers, callees: callees };
  }

  // ---- significance (the same test as stats.go) --------------------------

  var Z95 = 1.959963984540054;
  function variance(p, a, n) { return Math.max(a * (1 - 2 * p) + p * p, 0) / n; }
  // erfc with a fractional error below 1.2e-7 (Numerical Recipes' erfcc).
  function erfc(x) {
    var z = Math.abs(x), t = 1 / (1 + 0.5 * z);
    var r = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
      t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
    return x >= 0 ? r : 2 - r;
  }
  // significance tests a change of share p1 → p2 (square-weight fractions
  // a1, a2) at the graph's false-discovery threshold: +1, -1 or 0.
  function significance(st, p1, p2, a1, a2) {
    if (!st || !st.ok) return 0;
    var n1 = st.nBase, n2 = st.n, ev = 0;
    if (a1 > 0) ev += p1 * p1 * n1 / a1;
    if (a2 > 0) ev += p2 * p2 * n2 / a2;
    if (ev < Z95 * Z95) return 0;
    var pp = (p1 * n1 + p2 * n2) / (n1 + n2), v = variance(pp, a1, n1) + variance(pp, a2, n2);
    if (!(v > 0)) return 0;
    var pv = erfc(Math.abs(p2 - p1) / Math.sqrt(v) / Math.SQRT2);
    return pv <= st.pcut ? (p2 > p1 ? 1 : -1) : 0;
  }
  // interval returns the change of share and the half-width of its 95%
  // interval.
  function interval(st, p1, p2, a1, a2) {
    return [p2 - p1, Z95 * Math.sqrt(variance(p1, a1, st.nBase) + variance(p2, a2, st.n))];
  }

  // ---- formatting and colour ---------------------------------------------

  function fmtValue(v, unit) {
    if (unit === 'nanoseconds') {
      if (v >= 1e9) return (v / 1e9).toFixed(2) + ' s';
      if (v >= 1e6) return (v / 1e6).toFixed(2) + ' ms';
      if (v >= 1e3) return (v / 1e3).toFixed(2) + ' µs';
      return Math.round(v) + ' ns';
    }
    if (unit === 'bytes') {
      if (v >= 1073741824) return (v / 1073741824).toFixed(2) + ' GiB';
      if (v >= 1048576) return (v / 1048576).toFixed(2) + ' MiB';
      if (v >= 1024) return (v / 1024).toFixed(2) + ' KiB';
      return Math.round(v) + ' B';
    }
    if (unit === 'count' || !unit) return String(Math.round(v));
    return Math.round(v) + ' ' + unit;
  }

  function pct(a, b) { return b > 0 ? (100 * a / b).toFixed(2) + '%' : '0%'; }

  function hexToRgb(h) {
    return [parseInt(h.substr(1, 2), 16), parseInt(h.substr(3, 2), 16), parseInt(h.substr(5, 2), 16)];
  }
  function mix(a, b, f) {
    var x = hexToRgb(a), y = hexToRgb(b);
    return 'rgb(' + Math.round(x[0] * (1 - f) + y[0] * f) + ',' +
      Math.round(x[1] * (1 - f) + y[1] * f) + ',' + Math.round(x[2] * (1 - f) + y[2] * f) + ')';
  }
  // fnv32a over the name's UTF-16 units: the same as the SVG's shades for
  // ASCII names.
  function hash(s) {
    var h = 0x811c9dc5;
    for (var i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i) & 0xff;
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    return h >>> 0;
  }
  function change(v, base) {
    var m = Math.max(v, base);
    return m > 0 ? (v - base) / m : 0;
  }

  // cut shortens a name to MAX_NAME characters with an ellipsis, as the
  // SVG's tooltips (MaxNameRunes in budget.go): a hostile profile's 1 MiB
  // name is shown whole only in the detail pane.
  var MAX_NAME = 256;
  function cut(name) {
    return name.length > MAX_NAME ? name.slice(0, MAX_NAME - 1) + '\u2026' : name;
  }

  function shortName(name) {
    var br = name.indexOf('[');
    var head = br >= 0 ? name.slice(0, br) : name;
    var slash = head.lastIndexOf('/');
    return slash >= 0 ? name.slice(slash + 1) : name;
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // ---- the viewer ----------------------------------------------------------

  function mount(root, data) {
    var names = data.names;
    // Labels are computed once per name, from its cut form: a frame's
    // label must not cost the length of its name on every draw.
    var labels = names.map(function (n) { return shortName(cut(n)); });
    var full = fromData(data);
    var colorCache = new Map();
    var state = {
      inverted: false, highlight: new Set(), match: null, matchRe: null,
      focus: null // {name, views}
    };

    root.classList.add('pf');
    var header = el('div', 'pf-head');
    var title = el('div', 'pf-title', data.title);
    var sub = el('div', 'pf-sub');
    var subText = data.type + ' (' + data.unit + '), total ' + fmtValue(data.total, data.unit) +
      ', ' + (full.n - 1) + ' frames';
    if (data.pruned) subText += ' (' + data.pruned + ' narrow frames pruned)';
    if (!(data.total > 0)) subText += ': no samples, nothing to draw (nothing was recorded for this sample type in the profile\u2019s window)';
    if (data.diff) subText += '; diff against a base of ' + fmtValue(data.baseTotal, data.unit) +
      ', scaled to the same total, on the ' + data.layout + ' profile\u2019s shape';
    sub.textContent = subText;
    header.appendChild(title);
    header.appendChild(sub);
    var stats = data.diff ? data.stats : null;
    if (stats) header.appendChild(el('div', 'pf-sub pf-key', stats.key));

    var controls = el('div', 'pf-controls');
    var search = el('input', 'pf-search');
    search.type = 'search';
    search.placeholder = 'Search (regexp)';
    search.setAttribute('aria-label', 'Search functions');
    var matchInfo = el('span', 'pf-match');
    var reset = el('button', 'pf-btn', 'Reset zoom');
    var invert = el('button', 'pf-btn', 'Icicle');
    invert.setAttribute('aria-pressed', 'false');
    var unfocus = el('button', 'pf-btn', 'Exit focus');
    unfocus.hidden = true;
    controls.appendChild(search);
    controls.appendChild(matchInfo);
    controls.appendChild(reset);
    controls.appendChild(invert);
    controls.appendChild(unfocus);
    // Work patterns, as perflab flame --work: frames whose names match are
    // work, and so are the unclassified frames they call. Not for diffs,
    // whose colours are changes, not categories.
    var work = el('input', 'pf-work');
    work.type = 'search';
    work.placeholder = 'Work (regexp), as --work';
    work.setAttribute('aria-label', 'Work patterns');
    if (!data.diff) controls.insertBefore(work, reset);
    controls.appendChild(el('span', 'pf-hint', 'click: zoom · shift-click or right-click: focus on function (callers and callees)'));

    var legend = el('div', 'pf-legend');
    var legendText = [];
    data.cats.forEach(function (c, i) {
      var b = el('button', 'pf-cat');
      var sw = el('span', 'pf-swatch');
      sw.style.background = data.colors[i];
      b.appendChild(sw);
      var share = data.total > 0 ? 100 * data.catTotals[i] / data.total : 0;
      var text = c + ' ' + share.toFixed(1) + '%';
      if (stats) text = stats.catText[i];
      var label = document.createTextNode(text);
      b.appendChild(label);
      legendText.push(label);
      b.title = (stats ? stats.catTip[i] + '. ' : '') + 'Highlight ' + c + ' frames';
      b.setAttribute('aria-pressed', 'false');
      b.addEventListener('click', function () {
        if (state.highlight.has(i)) state.highlight.delete(i); else state.highlight.add(i);
        b.setAttribute('aria-pressed', String(state.highlight.has(i)));
        draw();
      });
      legend.appendChild(b);
    });

    var details = el('div', 'pf-details', '\u00a0');
    var clipNote = el('div', 'pf-sub');
    clipNote.hidden = true;
    var canvasBox = el('div', 'pf-canvas-box');
    var canvas = el('canvas', 'pf-canvas');
    var tip = el('div', 'pf-tip');
    tip.hidden = true;
    canvasBox.appendChild(canvas);
    canvasBox.appendChild(tip);
    root.appendChild(header);
    root.appendChild(controls);
    root.appendChild(legend);
    root.appendChild(details);
    root.appendChild(clipNote);
    root.appendChild(canvasBox);

    var ctx = canvas.getContext('2d');
    var charW = 7;
    // Frames only in the base are hatched, as in the SVG: blue if their
    // going is significant, grey if it is within the noise.
    var hatch = { sig: hatchPattern('#2166ac'), ns: hatchPattern('#a8a8a8') };
    function hatchPattern(c) {
      var cv = document.createElement('canvas');
      cv.width = cv.height = 6;
      var g = cv.getContext('2d');
      g.fillStyle = mix(c, '#ffffff', 0.72);
      g.fillRect(0, 0, 6, 6);
      g.strokeStyle = mix(c, '#ffffff', 0.15);
      g.lineWidth = 1.5;
      g.beginPath();
      g.moveTo(-1, 7); g.lineTo(7, -1);
      g.moveTo(-4, 4); g.lineTo(4, -4);
      g.moveTo(2, 10); g.lineTo(10, 2);
      g.stroke();
      return ctx.createPattern(cv, 'repeat');
    }

    // A view draws one tree in a band of rows: the main graph, or one half
    // of the focus sandwich.
    function View(tree, upward) {
      this.t = tree;
      this.upward = upward; // root at the bottom, callees above
      this.zoom = 0;
      this.rows = [];
      this.y0 = 0;
      this.d0 = 0;                      // depth of the lowest row shown
      this.nRows = tree.maxDepth + 1;   // rows shown
    }
    // layout picks the rows to show when at most maxRows fit: all of them
    // if the tree is shallow enough, else from the zoomed frame up.
    View.prototype.layout = function (maxRows) {
      var t = this.t, all = t.maxDepth + 1;
      this.d0 = all > maxRows ? t.depth[this.zoom] : 0;
      this.nRows = Math.min(all - this.d0, maxRows);
      return all > maxRows;
    };
    View.prototype.height = function () { return this.nRows * ROW; };
    View.prototype.rowY = function (d) {
      d -= this.d0;
      return this.upward ? this.y0 + this.height() - (d + 1) * ROW : this.y0 + d * ROW;
    };
    View.prototype.draw = function (width) {
      var t = this.t, z = this.zoom, rows = this.rows = [], top = this.d0 + this.nRows;
      for (var d = 0; d < this.nRows; d++) rows.push([]);
      var scale = t.value[z] > 0 ? width / t.value[z] : 0;
      // Ancestors of the zoomed frame span the full width.
      for (var a = t.parent[z]; a >= 0 && t.depth[a] >= this.d0; a = t.parent[a]) this.frame(a, 0, width);
      var x0 = t.off[z];
      for (var i = z; i < t.end[z];) {
        var w = t.value[i] * scale;
        if (w < MIN_PX || t.depth[i] >= top) { i = t.end[i]; continue; }
        this.frame(i, (t.off[i] - x0) * scale, w);
        i++;
      }
    };
    View.prototype.frame = function (i, x, w) {
      var t = this.t, y = this.rowY(t.depth[i]);
      this.rows[t.depth[i] - this.d0].push(x, x + w, i);
      var name = t.name[i] < 0 ? 'all' : names[t.name[i]];
      ctx.globalAlpha = state.highlight.size && !state.highlight.has(t.cat[i]) ? 0.25 : 1;
      ctx.fillStyle = this.color(i, name);
      ctx.fillRect(x + 0.5, y + 0.5, Math.max(w - 1, 0.5), ROW - 2);
      if (w > 3 * charW) {
        var label = t.name[i] < 0 ? 'all' : labels[t.name[i]];
        var max = Math.floor((w - 6) / charW);
        if (label.length > max) label = max >= 5 ? label.slice(0, max - 2) + '..' : '';
        if (label) {
          ctx.fillStyle = '#000';
          ctx.fillText(label, x + 3, y + ROW - 5.5);
        }
      }
      ctx.globalAlpha = 1;
    };
    View.prototype.color = function (i, name) {
      var t = this.t;
      if (state.matchRe && t.name[i] >= 0 && state.match[t.name[i]]) return MATCH;
      if (t.base) {
        // As diffColor in diff.go: grey unless significant.
        if (t.nv[i] === 0 && i !== 0) return t.sig[i] ? hatch.sig : hatch.ns;
        if (!t.sig[i]) return '#dedede';
        var f = 0.35 + 0.65 * Math.abs(change(t.nv[i], t.base[i]));
        return mix('#dedede', t.sig[i] > 0 ? '#d7301f' : '#2166ac', f);
      }
      var key = t.cat[i] + ':' + t.name[i];
      var col = colorCache.get(key);
      if (!col) {
        col = mix(data.colors[t.cat[i]], '#ffffff', (hash(name) % 1000) / 1000 * 0.3);
        colorCache.set(key, col);
      }
      return col;
    };
    View.prototype.hit = function (x, y) {
      if (y < this.y0 || y >= this.y0 + this.height()) return -1;
      var d = this.upward ? Math.floor((this.y0 + this.height() - y) / ROW) : Math.floor((y - this.y0) / ROW);
      var r = this.rows[d];
      if (!r) return -1;
      var lo = 0, hi = r.length / 3 - 1;
      while (lo <= hi) {
        var mid = (lo + hi) >> 1;
        if (x < r[3 * mid]) hi = mid - 1;
        else if (x >= r[3 * mid + 1]) lo = mid + 1;
        else return r[3 * mid + 2];
      }
      return -1;
    };

    var main = new View(full, true);

    function views() { return state.focus ? state.focus.views : [main]; }

    function draw() {
      var width = Math.max(canvasBox.clientWidth, 200);
      var vs = views(), h = 0;
      main.upward = !state.inverted;
      var dpr = window.devicePixelRatio || 1;
      var maxH = Math.min(MAX_CANVAS_H / dpr, MAX_CANVAS_AREA / (width * dpr * dpr));
      var maxRows = Math.max(4, Math.floor(maxH / vs.length / ROW) - 1), clipped = false;
      vs.forEach(function (v) {
        if (v.layout(maxRows)) clipped = true;
        v.y0 = h;
        h += v.height() + (state.focus ? ROW / 2 : 0);
      });
      clipNote.hidden = !clipped;
      clipNote.textContent = clipped ? 'Stacks here are deeper than the ' + maxRows +
        ' rows a canvas can hold: the graph starts at the zoomed frame; click a frame to go deeper, Reset zoom to go back.' : '';
      canvas.width = Math.round(width * dpr);
      canvas.height = Math.round(h * dpr);
      canvas.style.width = width + 'px';
      canvas.style.height = h + 'px';
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.font = '12px Verdana, "DejaVu Sans", sans-serif';
      charW = ctx.measureText('abcdefghijklmnopqrstuvwxyz').width / 26;
      ctx.clearRect(0, 0, width, h);
      vs.forEach(function (v) { v.draw(width); });
    }

    function describe(v, i, short) {
      var t = v.t, name = t.name[i] < 0 ? 'all' : names[t.name[i]];
      if (short) name = cut(name);
      if (t.base) return name + ' — ' + describeDiff(t, i) + ', ' + data.cats[t.cat[i]];
      var s = name + ' — ' + fmtValue(t.value[i], data.unit) + ' (' + pct(t.value[i], data.total) + ' of total';
      if (v.zoom !== 0) s += ', ' + pct(t.value[i], t.value[v.zoom]) + ' of zoom';
      s += '), ' + data.cats[t.cat[i]];
      return s;
    }
    // describeDiff is diffText in diff.go: both values, the change in
    // share with its interval, and whether it is beyond the noise.
    function describeDiff(t, i) {
      var baseRaw = data.total > 0 ? t.base[i] * data.baseTotal / data.total : 0;
      var s = 'new ' + fmtValue(t.nv[i], data.unit) + ' (' + pct(t.nv[i], data.total) + '), base ' +
        fmtValue(baseRaw, data.unit) + ' (' + pct(t.base[i], data.total) + ')';
      if (t.base[i] === 0) s += ', only in new';
      else if (t.nv[i] === 0) s += ', only in base';
      if (!stats || !stats.ok || i === 0 && t.name[i] < 0) return s;
      var r = interval(stats, t.base[i] / data.total, t.nv[i] / data.total, t.bsq[i] / 1e9, t.nsq[i] / 1e9);
      var sg = function (x) { return (x >= 0 ? '+' : '') + (100 * x).toFixed(2); };
      s += '; ' + sg(r[0]) + ' pt [' + sg(r[0] - r[1]) + ', ' + sg(r[0] + r[1]) + '] (95%): ' +
        (t.sig[i] > 0 ? 'larger share, significant' : t.sig[i] < 0 ? 'smaller share, significant' :
          'within sampling noise (not significant at 5% false discoveries over ' + stats.tested + ' frames)');
      return s;
    }

    function at(ev) {
      var r = canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
      var vs = views();
      for (var k = 0; k < vs.length; k++) {
        var i = vs[k].hit(x, y);
        if (i >= 0) return { view: vs[k], i: i, x: x, y: y };
      }
      return null;
    }

    canvas.addEventListener('mousemove', function (ev) {
      var h = at(ev);
      if (!h) { tip.hidden = true; canvas.style.cursor = ''; return; }
      var text = describe(h.view, h.i);
      details.textContent = text;
      tip.textContent = describe(h.view, h.i, true);
      tip.hidden = false;
      var left = Math.min(h.x + 12, canvasBox.clientWidth - 320);
      tip.style.left = Math.max(left, 0) + 'px';
      tip.style.top = (h.y + 16) + 'px';
      canvas.style.cursor = 'pointer';
    });
    canvas.addEventListener('mouseleave', function () { tip.hidden = true; });
    canvas.addEventListener('click', function (ev) {
      var h = at(ev);
      if (!h) return;
      if (ev.shiftKey) { focusOn(h.view.t.name[h.i]); return; }
      h.view.zoom = h.i;
      draw();
    });
    canvas.addEventListener('contextmenu', function (ev) {
      var h = at(ev);
      if (!h || h.view.t.name[h.i] < 0) return;
      ev.preventDefault();
      focusOn(h.view.t.name[h.i]);
    });

    function focusOn(f) {
      if (f < 0) return;
      var sw = sandwich(full, f);
      var callers = new View(sw.callers.flatten(names, !!data.diff, stats, data.total), true);
      var callees = new View(sw.callees.flatten(names, !!data.diff, stats, data.total), false);
      state.focus = { name: f, views: [callers, callees] };
      unfocus.hidden = false;
      details.textContent = 'Focus on ' + names[f] + ': callers above, callees below (' +
        fmtValue(focusValue(callers.t), data.unit) + ', ' + pct(focusValue(callers.t), data.total) + ' of total)';
      draw();
    }
    function focusValue(t) { return t.nv ? t.nv[0] : t.value[0]; }
    unfocus.addEventListener('click', function () {
      state.focus = null;
      unfocus.hidden = true;
      draw();
    });
    reset.addEventListener('click', function () {
      views().forEach(function (v) { v.zoom = 0; });
      draw();
    });
    invert.addEventListener('click', function () {
      state.inverted = !state.inverted;
      invert.setAttribute('aria-pressed', String(state.inverted));
      draw();
    });

    // reclassify makes frames matching re work, and the unclassified
    // frames below them (a frame's category is its own rule's, else its
    // caller's: profiles.Class.Under), then recounts the legend by self
    // value. An empty pattern restores the server's classification.
    var origCat = full.cat.slice();
    var WORK = data.cats.indexOf('work'), OTHER = data.cats.indexOf('other');
    function reclassify(re) {
      var t = full;
      for (var i = 0; i < t.n; i++) {
        var c = origCat[i];
        if (re && i > 0 && t.name[i] >= 0) {
          if (re.test(names[t.name[i]])) c = WORK;
          else if (c === OTHER && t.cat[t.parent[i]] === WORK) c = WORK;
        }
        t.cat[i] = c;
      }
      var totals = data.cats.map(function () { return 0; });
      for (var j = 0; j < t.n; j++) {
        var self = t.value[j];
        for (var k = j + 1; k < t.end[j]; k = t.end[k]) self -= t.value[k];
        if (j === 0 && self > 0) totals[OTHER] += self; else if (self > 0) totals[t.cat[j]] += self;
      }
      if (!re) totals = data.catTotals; // exact, pruned frames included
      legendText.forEach(function (node, c) {
        var share = data.total > 0 ? 100 * totals[c] / data.total : 0;
        node.textContent = data.cats[c] + ' ' + share.toFixed(1) + '%';
      });
      state.focus = null;
      unfocus.hidden = true;
      details.textContent = '\u00a0';
      draw();
    }
    var workTimer = 0;
    work.addEventListener('input', function () {
      clearTimeout(workTimer);
      workTimer = setTimeout(function () {
        var q = work.value, re = null;
        if (q) {
          try { re = new RegExp(q); } catch (e) { re = new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')); }
        }
        reclassify(re);
      }, 200);
    });

    var searchTimer = 0;
    search.addEventListener('input', function () {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(runSearch, 120);
    });
    function runSearch() {
      var q = search.value;
      if (!q) {
        state.matchRe = null;
        matchInfo.textContent = '';
        draw();
        return;
      }
      var re;
      try { re = new RegExp(q, 'i'); } catch (e) {
        re = new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
      }
      state.matchRe = re;
      state.match = new Uint8Array(names.length);
      for (var k = 0; k < names.length; k++) state.match[k] = re.test(names[k]) ? 1 : 0;
      // Matched share: outermost matching frames only, so recursion and
      // nested matches are not counted twice.
      var sum = 0, t = full;
      for (var i = 1; i < t.n;) {
        if (state.match[t.name[i]]) { sum += t.nv ? t.nv[i] : t.value[i]; i = t.end[i]; } else i++;
      }
      matchInfo.textContent = 'matched ' + fmtValue(sum, data.unit) + ' (' + pct(sum, data.total) + ')';
      draw();
    }

    var resizeTimer = 0;
    window.addEventListener('resize', function () {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(draw, 100);
    });
    draw();
    return { redraw: draw };
  }

  window.PerflabFlame = { mount: mount };
})();
