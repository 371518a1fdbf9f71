/* schedlab's stage player, 5 of 7: drawing a frame (the head, the token budget bar, the queues with their
 * token cells, the narration, key frames, controls) and the words it is drawn in. Several players are drawn
 * together by `showTogether`: every read of the page's layout before or after every write. The KV pool and the
 * block tables are pool.js's.
 */
(function () {
  'use strict';
  if (window.SchedlabPlayer) return;
  const parts = window.SchedlabPlayerParts, {WIRE, F, M, K, S, SPEEDS} = parts;

  const COLORS = {palette: ['#7B8794'], free: '#EEF0F3', cached_free: '#FFE9A8'};  // the server's (viz/colors.py) replace these
  const SHADES = {cached: 0.45, now: 0, pending: 0.82};
  const MOVE_MS = 200;  // transitions; while playing fast, at most 80% of a frame's time
  // Slides drawn per second at most: faster (Play at 20 steps/s with two stages or more) each stage jumps to its
  // frame (bench/bench_lockstep.py: two stages at 20 steps/s sliding played slower than four that did not; at that
  // speed a slide lasts under a frame's time anyway).
  const SLIDES_PER_S = 20;
  const ROW_ENDS = WIRE.row_ends;  // the tokens the server sends at each end of a long row
  // laptop: the rows and cells the server sends tokens for; a presentation draws fewer, larger.
  const SIZES = {laptop: {boxes: WIRE.row_cells, rows: WIRE.queue_rows, grid: 16}, present: {boxes: 18, rows: 6, grid: 12}};

  const color = id => COLORS.palette[id % COLORS.palette.length];
  function blend(hex, amount) {
    const c = [1, 3, 5].map(i => parseInt(hex.slice(i, i + 2), 16));
    return '#' + c.map(x => Math.round(x + (255 - x) * amount).toString(16).padStart(2, '0')).join('');
  }
  const esc = s => String(s).replace(/[&<>"']/g, ch => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[ch]));
  /* A message template's {name} placeholders filled from `params` (the values are the caller's to escape). */
  const fill = (template, params) => String(template).replace(/\{(\w+)\}/g, (all, name) => (name in params ? params[name] : all));
  /* A legend's mark: a swatch ("sw:<kind>", coloured by player.css) or a glyph. */
  const markHtml = mark => (mark.startsWith('sw:') ? `<i class="sp-sw sp-sw-${esc(mark.slice(3))}"></i>` :
    `<b${mark === '⋯' ? ' class="sp-gapmark"' : ''}>${esc(mark)}</b> `);
  const reducedMotion = () => window.matchMedia && window.matchMedia('(prefers-reduced-motion: reduce)').matches;
  /* `html` written into `element` only when it is not what was written there last: a part of the stage that did
   * not change costs no parse and no new layout. */
  function setHtml(element, html) {
    if (element.spHtml === html) return;
    element.innerHTML = html;
    element.spHtml = html;
  }

  /* Indices 0..n-1 to draw in at most max cells: both ends and the focus (this step's tokens), null for gaps.
   * With `sharedHead` (every row starts with the same tokens: a chat template) the start gets one cell, the end
   * the rest: that is where the rows differ. */
  function condense(n, max, focusStart, focusStop, sharedHead = false) {
    if (n <= max) return Array.from({length: n}, (_, i) => i);
    const keep = new Set(), budget = Math.max(2, max - 2);
    const share = Math.min(Math.max(0, focusStop - focusStart), Math.floor(budget / 3));
    for (let i = focusStop - share; i < focusStop; i++) if (i >= 0 && i < n) keep.add(i);
    const rest = budget - keep.size, head = sharedHead ? Math.min(1, rest) : Math.floor(rest / 2);
    for (let i = 0; i < head; i++) keep.add(i);
    for (let i = n - Math.min(rest - head, ROW_ENDS); i < n; i++) keep.add(i);
    const shown = [];
    let previous = -1;
    for (const i of [...keep].sort((a, b) => a - b)) {
      if (i > previous + 1) shown.push(null);
      shown.push(i);
      previous = i;
    }
    if (previous < n - 1) shown.push(null);
    return shown;
  }

  /* Whether the rows `rids` all start with the same SHARED_START tokens (a chat template's system prompt). */
  const SHARED_START = 4;
  function sharedStart(view, rids) {
    if (rids.length < 2) return false;
    const first = view.tokens[rids[0]];
    for (let i = 0; i < SHARED_START; i++) {
      if (first[i] === undefined || first[i] === null) return false;
      if (rids.some(rid => view.tokens[rid][i] !== first[i])) return false;
    }
    return true;
  }

  /* Tokens or pieces joined; a run of those not held (the server sends what the rows can show) reads ⋯. */
  const joinHeld = (items, sep) => items.filter((x, i) => x !== null || items[i - 1] !== null)
    .map(x => (x === null ? '⋯' : x)).join(sep);

  const VISIBLE = {' ': '·', '\n': '⏎', '\t': '⇥'};
  function tokenLabel(view, rid, i, placeholder) {
    const id = view.tokens[rid][i];
    if (id === null) return {text: '⋯'};  // not held: never drawn while rows draw what the server sends
    if (id === placeholder) return {text: '◌', pending: true};
    const pieces = view.pieces[rid];
    if (!pieces) return {text: '#' + id, id: true};
    const text = pieces[i].replace(/[ \n\t]/g, ch => VISIBLE[ch]);
    return {text: text || '∅'};
  }

  const QUEUE_HTML = '<div class="sp-qtitle"></div><div class="sp-rows"></div><div class="sp-more"></div>';
  const HTML = `
<div class="sp-head"><div class="sp-title"></div><div class="sp-caption"></div></div>
<div class="sp-controls">
  <button type="button" class="sp-back" data-action="back"></button>
  <button type="button" class="sp-step sp-primary" data-action="step"></button>
  <button type="button" class="sp-play" data-action="play"></button>
  <select class="sp-speed">${SPEEDS.map(s => `<option value="${s}"${s === 2 ? ' selected' : ''}></option>`).join('')}</select>
  <label class="sp-keystop"><input type="checkbox" class="sp-pause-key"> <span></span></label>
  <input type="range" class="sp-slider" min="0" max="0" value="0">
  <span class="sp-position"></span>
</div>
<div class="sp-keyrow"><div class="sp-keys"></div><div class="sp-message" role="status"></div></div>
<div class="sp-banner" aria-live="polite"></div>
<div class="sp-main">
  <div class="sp-queues">
    <div class="sp-budget"><div class="sp-btitle"></div><div class="sp-bbar"></div></div>
    <div class="sp-queue sp-running" data-queue="running">${QUEUE_HTML}</div>
    <div class="sp-queue sp-waiting" data-queue="waiting">${QUEUE_HTML}</div>
    <div class="sp-legend"></div>
  </div>
  <div class="sp-story"><div class="sp-stitle"></div><div class="sp-narration"></div></div>
</div>
<div class="sp-lower">
  <div class="sp-pool"><div class="sp-ptitle"></div><div class="sp-canvas-box"><canvas class="sp-grid"></canvas></div>
    <div class="sp-pmarks" hidden></div><div class="sp-side" hidden></div><div class="sp-plegend"></div></div>
  <div class="sp-tables"><div class="sp-ttitle"></div><div class="sp-trows"></div></div>
</div>
<div class="sp-panels"></div>
<div class="sp-moves"></div>
<div class="sp-tip" hidden></div>`;

  class Render {
    show(k) { showTogether([[this, k]], this.playing ? this.speed() : null); }

    legendHtml() { return this.$('.sp-legend').innerHTML + this.$('.sp-plegend').innerHTML; }

    /* showTogether's reads before drawing frame k: where the rows stand (for their slides to k, an adjacent frame)
     * and the widths the frame is drawn to. */
    plan(k, slideMs) {
      const view = this.views[k];
      if (!view) return null;
      const before = slideMs && Math.abs(k - this.shown) === 1 ? this.views[this.shown] : null;
      this.placePool(view.blocks.length);  // moves the pool only when its shape changes (then it is measured anew)
      const rects = new Map();
      if (before) this.rows.forEach((row, rid) => rects.set(rid, row.getBoundingClientRect()));
      this.measured();
      return {player: this, k, view, before, rects, slideMs};
    }

    /* showTogether's writes: frame k drawn, with no read of the layout. */
    draw({k, view, before, slideMs}) {
      this.shown = k;
      if (this.moveMs !== slideMs) this.root.style.setProperty('--sp-move', (this.moveMs = slideMs) + 'ms');  // player.css
      this.renderHead(view);
      this.renderBudget(view);
      this.renderQueues(view, before);
      this.renderNarration(view);
      this.renderLegend(view);
      this.renderPool(view);
      this.renderTables(view);
      parts.drawPanels(this, view, this.$('.sp-panels'));
      this.renderKeys();
      this.updateControls();
      this.root.setAttribute('data-frame', String(k));
      if (!this.playing) this.reportSoon();
    }

    /* showTogether's canvas, after every write: the pool's text needs the page laid out (its canvas's style), so
     * the first of the players lays it out, once for all of them. */
    paint({view, before, slideMs}) { this.fadePool(view, before ? slideMs : 0); }

    /* showTogether's reads after drawing: a row that moved slides from where it was (FLIP), a new one fades in; a
     * block copied between pools flies from its source unit to its destination (pool.js). */
    slide({view, before, rects, slideMs}) {
      if (!before) return;
      this.animateMoves(view, slideMs);
      for (const [rid, row] of this.rows) {
        const old = rects.get(rid);
        if (!old) { row.animate([{opacity: 0}, {opacity: 1}], {duration: slideMs}); continue; }
        const now = row.getBoundingClientRect();
        const dx = old.left - now.left, dy = old.top - now.top;
        if (Math.abs(dx) + Math.abs(dy) > 1) {
          row.animate([{transform: `translate(${dx}px, ${dy}px)`}, {transform: 'none'}], {duration: slideMs, easing: 'ease-out'});
        }
      }
    }

    /* The widths and sizes a frame is drawn to, read once and kept until a box's width changes (the ResizeObserver
     * in bind()), the pool moves or the presentation mode changes: read after the frame's writes, each stage's
     * read would lay the page out anew (bench/bench_lockstep.py). */
    measured() {
      if (this.sized) return this.sized;
      const style = getComputedStyle(this.root);
      const sized = {font: parseFloat(style.fontSize), cell: parseFloat(style.getPropertyValue('--sp-cell')) || 26,
        bar: this.$('.sp-bbar').clientWidth, rows: this.$('.sp-running .sp-rows').clientWidth,
        canvas: this.$('.sp-canvas-box').clientWidth, tables: this.$('.sp-trows').clientWidth};
      if (this.root.isConnected) this.sized = sized;  // off the page every width is 0: read again once on it
      return sized;
    }

    renderHead(v) {
      const m = v.metrics, last = this.views.length - 1;
      const titled = this.header.titles.filter(([first]) => first <= v.step).pop();  // as this frame ran
      this.$('.sp-title').textContent = titled ? titled[1] : this.header.title;
      const took = v.wall_ms !== null && this.header.model.startsWith('SmolLM2') ? this.t('took', {clock: esc(this.t('clock_real')), ms: Math.round(v.wall_ms)}) : '';
      setHtml(this.$('.sp-caption'), this.t('caption', {step: v.step, of: this.t(this.over ? 'of_last' : 'of_so_far', {n: last}), kind: esc(this.t('batch.' + v.kind)), running: m[M.num_running],
        waiting: m[M.num_waiting], kv: Math.round(100 * m[M.kv_usage]), clock: esc(this.t('clock_simulated')), time: v.time.toFixed(3), took,
        overlapped: v.overlapped ? this.t('overlapped') : '', model: esc(this.header.model)}));
      const here = this.header.key_frames.filter(kf => kf[K.step] === v.step), notes = here.map(kf => kf[K.note]);
      const holds = here.every(kf => kf[K.holds] !== false);  // a branched run may no longer show what a note says
      const banner = this.$('.sp-banner');
      banner.classList.toggle('sp-nothold', !holds);
      banner.classList.toggle('sp-on', notes.length > 0);
      setHtml(banner, !notes.length ? '' : `<b>${esc(this.t(holds ? 'key_holds' : 'key_not_held', {step: v.step}))}</b> ${esc(notes.join(' '))}`);
    }

    /* The token legend names the marks this run draws: ids on the simulated model, text pieces on the real one. */
    renderLegend(v) {
      const text = v.pieces.some(p => p);
      this.root.querySelectorAll('.sp-ids-key').forEach(e => { e.hidden = text; });
      this.root.querySelectorAll('.sp-text-key').forEach(e => { e.hidden = !text; });
    }

    /* The box of queue `name`: running and waiting are the stage's own; a queue a scheduler declares beyond them
     * (V0's swapped) gets one after the last, once. */
    queueBox(name) {
      let box = this.$(`.sp-queue[data-queue="${name}"]`);
      if (!box) {
        const boxes = this.root.querySelectorAll('.sp-queue');
        box = document.createElement('div');
        box.className = 'sp-queue sp-qdeclared';
        box.dataset.queue = name;
        box.innerHTML = QUEUE_HTML;
        boxes[boxes.length - 1].after(box);
      }
      return box;
    }

    /* The queues the frame's scheduler declares (running and waiting unless it says more), in its order. */
    renderQueues(v, before) {
      const sizes = this.sizes(), room = this.rowRoom();
      const used = new Set();
      const satOut = new Map(v.sat_out);
      const scheduled = new Map(v.batch.map(s => [s[S.request], s[S.tokens]]));
      const held = name => (name === 'running' ? v.running : name === 'waiting' ? v.waiting : v.queues[name] || []);
      const names = v.cfg.queues || ['running', 'waiting'];
      const everyHeld = names.flatMap(held);
      const done = v.done.filter(([rid]) => !everyHeld.includes(rid));
      const queues = names.map(name => [name, held(name).slice(0, sizes.rows), held(name).length - Math.min(held(name).length, sizes.rows)]);
      this.drawn = {finished: done.map(([rid]) => rid)};
      for (const [name, ids] of queues) this.drawn[name] = ids.slice();
      const shownRunning = Math.max(1, this.drawn.running.length + done.length);  // an empty queue still takes a row
      room.sharedHead = sharedStart(v, [...queues.flatMap(([, ids]) => ids), ...done.map(([rid]) => rid)]);
      this.root.querySelectorAll('.sp-qdeclared').forEach(box => { box.hidden = !names.includes(box.dataset.queue); });
      for (const [name, ids, hidden] of queues) {
        const box = this.queueBox(name);
        const rowsBox = box.querySelector('.sp-rows');
        const entries = ids.map(rid => [rid, null]);
        if (name === 'running') for (const [rid, how] of done) entries.push([rid, how]);
        const limitWords = v.cfg.words.queue_limit;  // the scheduler's own words (its declaration's message id)
        const limit = name === 'running' && limitWords ? ` <span class="sp-aside">· ${esc(this.t(limitWords, {n: v.cfg.max_num_seqs, name: v.cfg.max_num_seqs_name}))}</span>` : '';
        setHtml(box.querySelector('.sp-qtitle'), `<b>${esc(this.t(name + '_queue'))}</b> · ` +
          `${esc(this.t('queue_count', {n: held(name).length}))}${limit}`);
        box.querySelector('.sp-more').textContent = hidden ? this.t('more_requests', {n: hidden}) : '';
        rowsBox.querySelectorAll('.sp-empty').forEach(e => e.remove());
        // The running queue takes the rows it draws; the waiting queue keeps the rest of the room the most requests
        // held at once need (requests move between the two, so the total seldom changes and the pool stays put).
        const kept = name === 'waiting' ? Math.min(this.tallest, 2 * sizes.rows) - shownRunning : entries.length;
        rowsBox.style.minHeight = `calc(${Math.max(1, Math.min(sizes.rows, kept))} * (var(--sp-cell) + 4px))`;
        entries.forEach(([rid, finished], index) => {
          let row = this.rows.get(rid);
          if (!row) {
            row = document.createElement('div');
            row.className = 'sp-row';
            row.dataset.rid = rid;
            this.rows.set(rid, row);
          }
          used.add(rid);
          if (rowsBox.children[index] !== row) rowsBox.insertBefore(row, rowsBox.children[index] || null);
          this.fillRow(row, v, rid, scheduled.get(rid) || 0, finished, satOut.get(rid), before, room);
        });
        while (rowsBox.children.length > entries.length) rowsBox.lastChild.remove();
        if (!entries.length) rowsBox.innerHTML = `<div class="sp-empty">${esc(this.t('empty'))}</div>`;
      }
      for (const [rid, row] of this.rows) if (!used.has(rid)) { row.remove(); this.rows.delete(rid); }
    }

    /* The token budget bar: one segment per request in the batch, in its colour (a prefill chunk hatched, its
     * speculative lookahead pale), the unused rest, the sum, and the requests the budget held back. */
    renderBudget(v) {
      const box = this.$('.sp-budget');
      box.hidden = v.cfg.max_num_batched_tokens === null;  // a scheduler that reads no token budget: no bar
      if (box.hidden) return;
      const budget = v.cfg.max_num_batched_tokens, used = v.batch.reduce((sum, s) => sum + s[S.tokens], 0);
      const scale = Math.max(budget, used), bar = this.$('.sp-bbar'), width = this.measured().bar;
      const px = width / scale;  // a segment labels its tokens where they fit
      // A segment narrower than 2 px is drawn 2 px wide, while those together take at most 5% of the bar: each request
      // in a small batch stays visible, and a large one is not drawn fuller than it is.
      const floor = v.batch.length * 2 <= 0.05 * width;
      const segment = (cls, n, tip, background, rid = '') => `<i class="sp-bseg ${cls}${floor && n * px < 2 ? ' sp-bmin' : ''}" ` +
        `style="flex-grow:${n};background-color:${background}" data-rid="${rid}" title="${esc(tip)}">${n * px >= 9 * String(n).length + 6 ? n : ''}</i>`;
      const parts = v.batch.map(s => {
        const rid = s[S.request], n = s[S.tokens], phase = WIRE.phases[s[S.phase] || 0];
        const drafts = s[S.drafts] || 0, params = {rid, n, computed: s[S.computed], of: s[S.of], drafts, accepted: s[S.accepted] || 0};
        const tip = this.t('budget_tip_' + (drafts ? 'lookahead' : phase), params);
        if (!drafts) return segment('sp-b' + phase, n, tip, color(rid), rid);
        return segment('sp-bdecode', n - drafts, tip, color(rid), rid) + segment('sp-blookahead', drafts, tip, blend(color(rid), 0.55), rid);
      });
      if (budget > used) parts.push(segment('sp-bfree', budget - used, this.t('budget_tip_free', {n: budget - used}), COLORS.free));
      setHtml(bar, parts.join(''));
      bar.dataset.used = used;
      const held = v.budget_held, who = held.map(([rid, needed, left]) => this.t(needed === undefined ? 'budget_sits_out' : 'budget_waits', {rid, needed, left}));
      const note = !held.length ? '' : ` · <span class="sp-bheld" title="${esc(who.join('; '))}">` +
        `${esc(this.t(held.length === 1 ? 'budget_spent.one' : 'budget_spent.other', {rid: held[0][0], n: held.length}))}</span>`;
      const title = this.$('.sp-btitle');
      setHtml(title, `<b>${esc(this.t('budget_title'))}</b> · ${esc(this.t('budget_sum', {used, budget, pct: Math.round(100 * used / budget)}))}${note}`);
      title.title = this.t('budget_title_tip');
    }

    /* A request's row: its token cells (as many as fit, condensed around this step's tokens), progress and flags.
     * How many fit is estimated from the text, not measured: measuring every row would lay the page out each time. */
    fillRow(row, v, rid, nNow, finished, satOut, before, room) {
      const r = v.requests[rid];
      const n = r[F.num_tokens], computed = r[F.num_computed_tokens];
      const oldN = before && before.requests[rid] ? before.requests[rid][F.num_tokens] : n;
      const out = n - r[F.num_prompt_tokens], max = r[F.max_tokens];
      const badge = r[F.priority] ? `<span class="sp-badge" title="${esc(this.t('priority', {p: r[F.priority]}))}">P${r[F.priority]}</span>` : '';
      const flagText = finished || (satOut ? this.t('sits_out', {why: satOut}) : '');
      const flag = finished ? `<span class="sp-flag"><span class="sp-done">${esc(finished)}</span></span>` :
        satOut ? `<span class="sp-flag" title="${esc(this.t('sits_out_title', {why: satOut}))}">${esc(flagText)}</span>` : '';
      // on two lines; a Chinese character about as wide as two Latin ones
      const flagChars = [...flagText].reduce((sum, c) => sum + (c >= '\u2e80' ? 2 : 1), 0);
      const flagWidth = Math.min(room.flag, Math.ceil(flagChars / 2 + 1) * room.char);
      const cellsWidth = this.cellsWidth(v, rid, room);
      const fit = width => {
        for (let boxes = room.boxes; ; boxes -= 1) {
          const indices = condense(n, boxes, computed - nNow, computed, room.sharedHead);
          if (boxes <= 3 || cellsWidth(indices) <= width) return indices;
        }
      };
      let width = room.cells - (flagText ? flagWidth : 0), indices = fit(width);
      // Where even the fewest cells leave the flag too little room for two lines (a narrow lockstep column), it
      // takes a line of its own under the row, rather than being cut.
      const below = Boolean(flagText) && cellsWidth(indices) > width;
      if (below) indices = fit(width = room.cells);
      row.classList.toggle('sp-flag-below', below);
      row.classList.toggle('sp-bare', cellsWidth(indices) > width);  // too narrow: no labels
      row.classList.toggle('sp-sat', Boolean(satOut));
      row.classList.toggle('sp-finished', Boolean(finished));
      row.dataset.tokens = n;
      setHtml(row, `<span class="sp-label" style="color:${color(rid)}">ID:${rid} <small>(L:${n})</small>${badge}</span>` +
        `<span class="sp-cells">${this.tokenCells(v, rid, indices, computed, nNow, oldN)}</span>` +
        `<span class="sp-progress" title="${esc(this.t('progress_title'))}"><i style="width:${Math.min(100, 100 * out / max)}%;` +
        `background:${color(rid)}"></i><em>${out}/${max}</em></span>${flag}`);
    }

    /* A function giving the estimated width in px of some of request rid's token cells (a cell is at least a
     * square, at most 6.5em), each cell's estimated once. */
    cellsWidth(v, rid, room) {
      const widths = new Map(), narrowest = Math.min(room.widest, room.cell) + 2;
      const width = i => {
        if (!widths.has(i)) {
          const chars = i === null ? 1 : tokenLabel(v, rid, i, this.header.placeholder).text.length;
          widths.set(i, Math.min(room.widest, Math.max(room.cell, chars * room.char + room.pad)) + 2);
        }
        return widths.get(i);
      };
      return indices => {
        if (indices.length * narrowest > room.cells) return Infinity;  // wider than any row, whatever they hold
        return indices.reduce((total, i) => total + width(i), 0);
      };
    }

    /* The room a row's cells have. */
    rowRoom() {
      const {font, rows: width, cell} = this.measured(), cellFont = 0.9 * font;
      return {cells: width - 7.4 * font - 5.2 * font - 3 * 0.5 * font, flag: 16 * font, char: 0.6 * cellFont,
        pad: 0.5 * cellFont, cell, widest: 6.5 * cellFont, boxes: this.sizes().boxes};
    }

    tokenCells(v, rid, indices, computed, nNow, oldN) {
      return indices.map(i => {
        if (i === null) return `<span class="sp-tok sp-gap" title="${esc(this.t('tokens_elided'))}">⋯</span>`;
        const state = i >= computed ? 'pending' : i >= computed - nNow ? 'now' : 'cached';
        const label = tokenLabel(v, rid, i, this.header.placeholder);
        const pieces = v.pieces[rid];
        const what = label.pending ? this.t('still_computing') : pieces ? JSON.stringify(pieces[i]) : '';
        const tip = this.t('token_tip', {rid, i, id: label.pending ? '◌' : v.tokens[rid][i], what, state: this.t('state_' + state)});
        const cls = `sp-tok sp-${state}${label.pending ? ' sp-computing' : ''}${label.id ? ' sp-id' : ''}${i >= oldN ? ' sp-new' : ''}`;
        return `<span class="${cls}" style="background:${blend(color(rid), SHADES[state])}" title="${esc(tip)}">${esc(label.text)}</span>`;
      }).join('');
    }

    renderNarration(v) {
      const [first, ...rest] = v.narration;
      setHtml(this.$('.sp-narration'), `<p><b>${esc(first)}</b></p>` +
        (rest.length ? `<ul>${rest.map(line => `<li>${esc(line)}</li>`).join('')}</ul>` : `<p><i>${esc(this.t('no_decisions'))}</i></p>`));
    }

    renderKeys() {
      const keys = [...this.keySteps()].sort((a, b) => a - b);
      const held = s => this.header.key_frames.every(k => k[K.step] !== s || k[K.holds] !== false);  // greyed when it no longer does
      const html = keys.length ? `<b>${esc(this.t('key_frames'))}</b> ` + keys.map(s => `<button type="button" class="sp-key${s === this.shown ? ' sp-here' : ''}${held(s) ? '' : ' sp-nothold'}" data-step="${s}" title="${esc(this.header.key_frames.filter(k => k[K.step] === s).map(k => k[K.note]).join(' '))}">${s === this.shown ? '★ ' : ''}${esc(this.t('key_step', {step: s}))}</button>`).join('') : '';
      setHtml(this.$('.sp-keys'), html);
    }

    updateControls() {
      const last = this.views.length - 1;
      const slider = this.$('.sp-slider');
      slider.max = String(Math.max(0, last));
      if (document.activeElement !== slider || !this.dragging) slider.value = String(Math.max(0, this.shown));
      this.root.setAttribute('data-last', String(last));
      this.$('.sp-position').textContent = `${Math.max(0, this.shown)} / ${Math.max(0, last)}` +
        (this.pending ? this.t('computing') : this.over ? '' : this.t('so_far'));
      const play = this.$('.sp-play');
      play.textContent = this.t(this.playing ? 'pause' : 'play');
      play.setAttribute('aria-label', this.t(this.playing ? 'pause_name' : 'play_name'));
      this.$('.sp-back').disabled = this.shown <= 0;
    }

    setMessage(text) {
      const box = this.$('.sp-message');
      box.textContent = text;
      box.classList.toggle('sp-on', Boolean(text));
    }

    sizes() { return this.root.classList.contains('sp-present') ? SIZES.present : SIZES.laptop; }

    /* -- words ---------------------------------------------------------------------------------------- */

    paintSwatches() {  // the pool legend's free colours are the server's (viz/colors.py)
      this.root.querySelectorAll('.sp-sw-free').forEach(e => { e.style.background = COLORS.free; });
      this.root.querySelectorAll('.sp-sw-cachedfree').forEach(e => { e.style.background = COLORS.cached_free; });
    }

    t(key, params = {}) { return fill(key in this.strings ? this.strings[key] : key, params); }

    /* Take the server's words for `lang` and relabel what does not change from frame to frame. */
    useStrings(lang, strings) {
      this.lang = lang;
      this.strings = strings;
      this.root.setAttribute('lang', lang);
      for (const action of ['back', 'step', 'play']) {
        const button = this.$(`[data-action=${action}]`);
        button.textContent = this.t(action);
        button.setAttribute('aria-label', this.t(action + '_name'));
        button.title = this.t(action + '_title');
      }
      this.$('.sp-speed').setAttribute('aria-label', this.t('speed_name'));
      this.$('.sp-speed').querySelectorAll('option').forEach(o => { o.textContent = this.t(o.value === '1' ? 'speed.one' : 'speed.other', {n: o.value}); });
      this.$('.sp-keystop span').textContent = this.t('pause_at_keys');
      this.$('.sp-slider').setAttribute('aria-label', this.t('slider_name'));
      this.$('.sp-stitle').textContent = this.t('story_title');
      const legend = strings.legend || {tokens: []};
      const only = mark => ((legend.id_marks || []).includes(mark) ? ' class="sp-ids-key"'
        : (legend.text_marks || []).includes(mark) ? ' class="sp-text-key"' : '');  // shown on runs that draw them
      this.$('.sp-legend').innerHTML = legend.tokens.map(([mark, words]) => `<span${only(mark)}>${markHtml(mark)}${esc(words)}</span>`).join('') +
        '<span class="sp-hint"></span>';  // its words are the pool's (poolLegend)
      this.poolLegendShown = null;
      this.poolLegend('blocks');  // a radix tree's words once its frame is shown
      this.updateControls();
      if (this.views[this.shown]) this.show(this.shown);
    }

    /* The server's colours (viz/colors.py), for every player on the page. */
    useColors(colors) {
      Object.assign(COLORS, colors);
      this.paintSwatches();
    }

    /* Presentation mode (larger type, fewer and larger cells): the frame shown is drawn again at its sizes. */
    setPresent(present) {
      if (present === this.root.classList.contains('sp-present')) return;
      this.root.classList.toggle('sp-present', present);
      this.sized = null;
      if (this.shown >= 0) this.show(this.shown);
    }
  }

  /* Several players each to a frame, drawn together: first every player's reads (where its rows stand, the widths
   * it draws to), then every player's writes, then its pool's canvas and the reads its slides need, so the page is
   * laid out once however many players there are. Playing at `speed` steps per second (null: not playing), a slide lasts at most
   * 80% of a step, and none is drawn when more than SLIDES_PER_S would be. */
  function showTogether(moves, speed) {
    const slideMs = reducedMotion() || (speed && speed * moves.length > SLIDES_PER_S) ? 0
      : speed ? Math.min(MOVE_MS, 800 / speed) : MOVE_MS;
    const plans = moves.map(([player, k]) => player.plan(k, slideMs)).filter(Boolean);
    plans.forEach(plan => plan.player.draw(plan));
    plans.forEach(plan => plan.player.paint(plan));
    plans.forEach(plan => plan.player.slide(plan));
  }

  Object.assign(parts, {Render, COLORS, HTML, color, esc, setHtml, condense, joinHeld, markHtml, showTogether});
})();
