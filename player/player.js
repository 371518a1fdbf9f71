/* schedlab's stage player: draws recorded frames and moves among them in the browser.
 *
 * What another script may use (player/lockstep.js drives several players with it; nothing else of a player is
 * theirs to read or set):
 *   SchedlabPlayer.mountStatic(element, message)  a player with every frame given, asking nothing
 *   SchedlabPlayer.mountStill(element, source, frame)  a player standing on a frame of the frames `source` holds
 *                                  (shared, not decoded again), in its words, its keys left to the page (handout.js)
 *   SchedlabPlayer.showTogether([[player, frame]...], speed)
 *                                  several players each to a frame, drawn together: every read of the page's layout
 *                                  before or after every write, so the page is laid out once, not once per player;
 *                                  `speed`: the steps per second being played, or null
 *   player.lastFrame(), player.shownFrame()   the last frame held, the frame shown (-1 before the first)
 *   player.releaseKeys()           its keys (arrows, space, Home, End) are left to the driver
 *   player.legendHtml()            its legends' markup, for a driver that shows them once for all its players
 *   player.fitPool(height)         the pool's cells shrunk until its grid is at most `height` px tall (a slide, a page)
 *   window.schedlabStagePlayer     the app's stage player (one a page), once mounted
 *   element.player, data-frame, data-last on the root: for tests and the GIF export
 *
 * The server sends messages: {run, from, frames: [delta...], last, over, cursor, cursor_moves, playing, answered,
 * title, model, key_frames, placeholder, error, lang, strings, leads, bound, bound_note}. Every word the player shows comes in
 * `strings` (i18n/ on the server: the player holds no text of its own). Frames are deltas (viz/frame_payload.py has the reference
 * decoder); the player keeps every decoded frame, so Step, Back, the slider and Play need no server. At the
 * end of what it holds it asks for more with a target step: {run, have, want, seq}.
 * In a class, the lecturer's player (`leads`) tells each stop, Play and Pause at once: {frame, speed} (speed 0:
 * stopped there); a follower's is moved to the lecturer's frame (`cursor_moves`) and plays on from it at the
 * lecturer's speed or stops there (`playing`); while the class is asked about a frame ahead, its frames end at the
 * lecturer's (`bound`: the server sends none after it, and the player says why it goes no further, `bound_note`).
 * Offline (the HTML export) the frames are embedded and nothing is asked.
 */
(function () {
  'use strict';
  if (window.SchedlabPlayer) return;

  let COLORS = {palette: ['#7B8794'], free: '#EEF0F3', cached_free: '#FFE9A8'};  // the server's (viz/colors.py) replace these
  const SHADES = {cached: 0.45, now: 0, pending: 0.82};
  const SPEEDS = [1, 2, 5, 10, 20];
  const MOVE_MS = 200;  // transitions; while playing fast, at most 80% of a frame's time
  // Slides drawn per second at most: faster (Play at 20 steps/s with two stages or more) each stage jumps to its
  // frame (bench/bench_lockstep.py: two stages at 20 steps/s sliding played slower than four that did not; at that
  // speed a slide lasts under a frame's time anyway).
  const SLIDES_PER_S = 20;
  const ANSWER_TIMEOUT_MS = 30000;  // a real-model step on a busy CPU can take seconds
  /* The wire format as the server names it (viz/frame_payload.py WIRE, written in here by
   * viz/html_export.player_sources): a request's fields, a block's, the metrics and a key frame travel as arrays,
   * read here only through the names of their positions (r[F.num_tokens], b[B.ref_count], m[M.num_running]). */
  const WIRE = SCHEDLAB_WIRE;
  const positions = names => Object.fromEntries(names.map((name, i) => [name, i]));
  const F = positions(WIRE.request), B = positions(WIRE.block), M = positions(WIRE.metrics), K = positions(WIRE.key_frame);
  const S = positions(WIRE.segment);  // a batch entry: one request's tokens this step (viz/budget.py)
  const EMPTY = WIRE.empty_view, SCALARS = WIRE.scalars, SPARSE = new Set(WIRE.sparse);
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

  /* The view a delta describes, given the view before it (the same rules as viz/frame_payload.decode). */
  function decode(prev, d) {
    if (!d || typeof d !== 'object') throw new Error('a frame is not an object');
    const view = {};
    for (const key of SCALARS) {
      if (!(key in d) && !SPARSE.has(key)) throw new Error('a frame lacks ' + key);
      view[key] = key in d ? d[key] : [];  // a sparse scalar is sent only when not empty
    }
    for (const key of ['running', 'waiting', 'cfg']) view[key] = key in d ? d[key] : prev[key];
    const blocks = 'nb' in d ? Array.from({length: d.nb}, () => WIRE.free_block) : prev.blocks.slice();
    for (const [id, ...block] of d.blk || []) {
      if (!(id >= 0 && id < blocks.length)) throw new Error('block ' + id + ' is outside the pool');
      blocks[id] = block;
    }
    const requests = prev.requests.slice(), tokens = prev.tokens.slice(), pieces = prev.pieces.slice();
    for (const [key, fields] of Object.entries(d.req || {})) {
      const rid = Number(key);
      if (rid === requests.length) { tokens.push([]); pieces.push(null); }
      else if (!(rid < requests.length)) throw new Error('request ' + rid + ' skips an id');
      requests[rid] = fields;
    }
    for (const [key, [length, runs]] of Object.entries(d.tok || {})) {  // a token not held is null
      const rid = Number(key);
      if (!(rid < tokens.length)) throw new Error('tokens of unknown request ' + rid);
      const ids = fit(tokens[rid], length);
      let texts = pieces[rid] === null ? null : fit(pieces[rid], length);
      for (const [start, runIds, runPieces] of runs) {
        if (!(start >= 0 && start + runIds.length <= length)) throw new Error(`tokens ${start}.. of request ${rid} are outside its ${length}`);
        ids.splice(start, runIds.length, ...runIds);
        if (runPieces === null) texts = null;
        else (texts = texts || fit([], length)).splice(start, runPieces.length, ...runPieces);
      }
      tokens[rid] = ids;
      pieces[rid] = texts;
    }
    return Object.assign(view, {blocks, requests, tokens, pieces});
  }

  const fit = (list, length) => Array.from({length}, (_, i) => (i < list.length ? list[i] : null));

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
    <div class="sp-queue sp-running"><div class="sp-qtitle"></div><div class="sp-rows"></div><div class="sp-more"></div></div>
    <div class="sp-queue sp-waiting"><div class="sp-qtitle"></div><div class="sp-rows"></div><div class="sp-more"></div></div>
    <div class="sp-legend"></div>
  </div>
  <div class="sp-story"><div class="sp-stitle"></div><div class="sp-narration"></div></div>
</div>
<div class="sp-lower">
  <div class="sp-pool"><div class="sp-ptitle"></div><div class="sp-canvas-box"><canvas class="sp-grid"></canvas></div>
    <div class="sp-plegend"></div></div>
  <div class="sp-tables"><div class="sp-ttitle"></div><div class="sp-trows"></div></div>
</div>
<div class="sp-tip" hidden></div>`;

  class Player {
    constructor(root, options) {
      this.root = root;
      this.send = options.send || null;  // (request) => void; null offline
      this.report = options.report || null;  // (frame) => void: the frame shown, when paused
      this.tell = options.tell || null;  // ({frame, speed}) => void: a lecturer's stops, Play and Pause
      this.leads = false;  // a class's lecturer: the class plays along (tell)
      this.bound = null;  // a class's follower while a question is open: the last frame it may show
      this.views = [];
      this.prev = EMPTY;
      this.run = null;
      this.shown = -1;
      this.desired = 0;
      this.playing = false;
      this.pending = null;
      this.seq = 0;
      this.over = false;
      this.cursorMoves = null;
      this.stepsCarried = 0;
      this.failures = 0;
      this.answerTimeoutMs = ANSWER_TIMEOUT_MS;
      this.header = {title: '', titles: [], model: '', key_frames: [], placeholder: null};
      this.strings = {};  // the server's words (player_strings in viz/frame_payload.py), set by the first message
      this.lang = null;
      this.colors = [];  // the block colours drawn now (animated toward the frame's)
      this.rows = new Map();  // request id -> its row element, kept across frames so moves can animate
      this.tallest = 0;  // the most requests the queues held at once: their room is kept, so the pool never jumps
      this.sized = null;  // the widths drawing depends on (measured()), kept until a box's width changes
      this.painted = {shape: '', cells: []};  // what the pool's canvas holds, so a frame repaints only what changed
      root.classList.add('sp');
      root.player = this;  // tests and the GIF export reach the player through its element
      root.setAttribute('data-testid', 'stage-player');
      root.innerHTML = HTML;
      this.$ = sel => root.querySelector(sel);
      this.bind();
      this.setMessage('');
    }

    /* -- receiving ----------------------------------------------------------------------------------- */

    receive(message) {
      try {
        this.apply(message);
      } catch (e) {
        this.failures += 1;
        this.setMessage(this.t('unreadable', {error: e.message, then: this.t(this.failures < 3 ? 'unreadable_retry' : 'unreadable_final')}));
        this.pending = null;
        if (this.failures < 3) this.ask(this.desired);
        return;
      }
      this.advance();
    }

    apply(m) {
      if (!m || typeof m !== 'object' || !Array.isArray(m.frames)) throw new Error('the message holds no frames');
      this.header = {title: m.title || '', titles: m.titles || [], model: m.model || '', key_frames: m.key_frames || [],
        placeholder: m.placeholder, end_note: m.end_note, bound_note: m.bound_note || ''};
      if (m.strings && m.lang !== this.lang) this.useStrings(m.lang, m.strings);
      this.leads = Boolean(m.leads);
      this.bound = Number.isInteger(m.bound) ? m.bound : null;
      if (m.colors) {
        COLORS = m.colors;
        this.paintSwatches();
      }
      if (m.run !== this.run) {
        // Step clicks not yet answered when the page switched runs (a settings change) carry over to the new run
        this.stepsCarried = this.shown >= 0 ? Math.max(0, this.desired - this.shown) : 0;
        this.run = m.run;
        this.views = [];
        this.prev = EMPTY;
        this.shown = -1;
        this.desired = 0;
        this.over = false;
        this.rows.forEach(row => row.remove());
        this.rows.clear();
        this.tallest = 0;
      }
      if (this.pending && m.answered >= this.pending.seq) this.pending = null;
      if (m.from > this.views.length) {
        this.ask(Math.max(this.desired, this.views.length));  // frames were missed: ask again from what is here
      } else {
        for (let k = this.views.length - m.from; k < m.frames.length; k++) {
          const view = decode(this.prev, m.frames[k]);
          if (view.step !== this.views.length) throw new Error(`frame ${view.step} came where ${this.views.length} belongs`);
          this.views.push(view);
          this.prev = view;
          this.tallest = Math.max(this.tallest, view.running.length + view.done.length + view.waiting.length);
        }
      }
      this.failures = 0;
      this.over = Boolean(m.over) && m.last === this.views.length - 1;
      if (m.error) {
        this.setMessage(m.error);
        this.desired = Math.min(this.desired, this.views.length - 1);
        this.pause();
      }
      if (m.cursor_moves !== this.cursorMoves) {  // the server moved the cursor (Run N, a reset, a link):
        // follow it once its frame is here (a long run comes in several messages), with the carried Step clicks
        this.desired = m.cursor + this.stepsCarried;
        if (m.cursor < this.views.length) {
          this.cursorMoves = m.cursor_moves;
          this.stepsCarried = 0;
          this.reported = m.cursor;  // the server's own cursor: nothing to report back
          if (m.playing === 0) {  // the lecturer stopped here
            this.pause();
            this.desired = m.cursor;
          }
          this.show(m.cursor);
          if (m.playing > 0) this.playAlong(m.playing);
        }
      }
      this.renderKeys();
    }

    /* Show what `desired` asks for, as far as it is held; ask for the rest. */
    advance() {
      const last = this.views.length - 1;
      if (last < 0) return;
      if (this.shown < 0) this.show(Math.min(this.desired, last));
      else if (this.desired > this.shown && !this.playing) this.show(Math.min(this.desired, last));
      if (this.desired > last) {
        if (this.over) {
          this.desired = last;
          this.setMessage(this.header.end_note || this.t('run_ends'));
          this.pause();
        } else {
          this.ask(this.desired + (this.playing ? this.lookahead() : 0));
        }
      }
      this.updateControls();
    }

    lookahead() { return Math.max(10, 3 * this.speed()); }

    ask(want) {
      if (this.bound !== null && want > this.bound) {  // a class's question is open: the lecturer's frame is the end
        if (this.desired > this.bound) {
          this.desired = Math.min(this.bound, this.views.length - 1);
          this.setMessage(this.header.bound_note);
          this.pause();
        }
        if (this.views.length - 1 >= this.bound) return;
        want = this.bound;
      }
      if (!this.send || this.pending || this.run === null) {
        if (!this.send && want > this.views.length - 1) this.desired = this.views.length - 1;
        return;
      }
      this.seq += 1;
      this.pending = {seq: this.seq, want, at: Date.now()};
      this.send({run: this.run, have: this.views.length - 1, want, seq: this.seq});
      clearTimeout(this.answerTimer);
      this.answerTimer = setTimeout(() => this.checkAnswer(), this.answerTimeoutMs + 100);
      this.updateControls();
    }

    /* -- moving --------------------------------------------------------------------------------------- */

    step() {
      this.setMessage('');
      this.desired = Math.max(this.desired, this.shown) + 1;
      if (this.desired <= this.views.length - 1) this.show(this.desired);
      this.advance();
    }

    back() {
      this.setMessage('');
      this.pause();
      this.desired = Math.max(0, this.shown - 1);
      this.show(this.desired);
    }

    goto(k) {
      this.setMessage('');
      this.desired = k;
      if (k <= this.views.length - 1) this.show(k);
      this.advance();
    }

    play() {
      if (this.playing) return;
      this.playing = true;
      this.due = 0;
      if (this.over && this.shown === this.views.length - 1) this.show(0);
      this.setMessage('');
      this.tellClass(this.speed());
      this.tick();
    }

    pause() {
      if (!this.playing) return;
      this.playing = false;
      clearTimeout(this.timer);
      this.desired = this.shown;
      this.updateControls();
      if (this.tellClass(0)) this.reported = this.shown;
      else this.reportSoon();
    }

    speed() { return Number(this.$('.sp-speed').value); }

    /* A lecturer's stop, Play or Pause, told the server at once; whether it was told. */
    tellClass(speed) {
      if (!this.leads || !this.tell || this.shown < 0) return false;
      this.tell({frame: this.shown, speed});
      return true;
    }

    /* A class's follower: the lecturer plays from the frame just shown, at `speed` (the nearest this player has). */
    playAlong(speed) {
      const nearest = SPEEDS.reduce((a, b) => (Math.abs(b - speed) < Math.abs(a - speed) ? b : a));
      this.$('.sp-speed').value = String(nearest);
      if (!this.playing) this.play();
      else {
        clearTimeout(this.timer);
        this.due = 0;
        this.tick();
      }
    }

    tick() {
      if (!this.playing || !this.root.isConnected) return;
      const last = this.views.length - 1;
      if (this.shown < last) {
        this.show(this.shown + 1);
        this.desired = this.shown;
        if (this.$('.sp-pause-key').checked && this.keySteps().has(this.shown)) this.pause();
      } else if (this.over) {
        this.setMessage(this.header.end_note || this.t('run_ends'));
        this.pause();
      } else if (this.bound !== null && this.shown >= this.bound) {
        this.setMessage(this.header.bound_note);
        this.pause();
      }
      if (this.playing && !this.over && last - this.shown < this.lookahead()) this.ask(last + this.lookahead());
      const now = performance.now(), interval = 1000 / this.speed();
      this.due = Math.max(now, (this.due || now) + interval);  // on the beat, however long drawing took
      this.timer = setTimeout(() => this.tick(), this.due - now);
    }

    /* Presentation mode (larger type, fewer and larger cells): the frame shown is drawn again at its sizes. */
    setPresent(present) {
      if (present === this.root.classList.contains('sp-present')) return;
      this.root.classList.toggle('sp-present', present);
      this.sized = null;
      if (this.shown >= 0) this.show(this.shown);
    }

    /* Moved into a new element by a page rerun: a Play that stopped while it was off the page goes on. */
    reattached() {
      if (this.playing) {
        clearTimeout(this.timer);
        this.tick();
      }
    }

    checkAnswer() {
      if (this.pending && Date.now() - this.pending.at > this.answerTimeoutMs) {
        this.pending = null;
        this.pause();
        this.setMessage(this.t('no_answer', {s: Math.round(this.answerTimeoutMs / 1000)}));
      }
    }

    keySteps() { return new Set(this.header.key_frames.map(k => k[K.step])); }

    reportSoon() {
      if (!this.report) return;
      clearTimeout(this.reportTimer);
      this.reportTimer = setTimeout(() => {
        if (this.root.isConnected && !this.playing && this.shown !== this.reported && this.shown >= 0) {
          this.reported = this.shown;
          if (!this.tellClass(0)) this.report(this.shown);
        }
      }, 300);
    }

    /* -- drawing -------------------------------------------------------------------------------------- */

    show(k) { showTogether([[this, k]], this.playing ? this.speed() : null); }

    lastFrame() { return this.views.length - 1; }

    shownFrame() { return this.shown; }

    releaseKeys() { document.removeEventListener('keydown', this.onKey); }

    legendHtml() { return this.$('.sp-legend').innerHTML + this.$('.sp-plegend').innerHTML; }

    fitPool(maxHeight) {
      const canvas = this.$('.sp-grid'), box = this.$('.sp-canvas-box');
      const height = canvas.getBoundingClientRect().height;
      if (height <= maxHeight) return;
      box.style.width = Math.max(120, Math.floor(box.clientWidth * maxHeight / height)) + 'px';
      this.sized = null;  // the box's new width, measured now (the ResizeObserver would only later)
      this.paintPool(this.views[this.shown], this.colors);
    }

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
      this.renderKeys();
      this.updateControls();
      this.root.setAttribute('data-frame', String(k));
      if (!this.playing) this.reportSoon();
    }

    /* showTogether's canvas, after every write: the pool's text needs the page laid out (its canvas's style), so
     * the first of the players lays it out, once for all of them. */
    paint({view, before, slideMs}) { this.fadePool(view, before ? slideMs : 0); }

    /* showTogether's reads after drawing: a row that moved slides from where it was (FLIP), a new one fades in. */
    slide({before, rects, slideMs}) {
      if (!before) return;
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

    renderQueues(v, before) {
      const sizes = this.sizes(), room = this.rowRoom();
      const used = new Set();
      const satOut = new Map(v.sat_out);
      const scheduled = new Map(v.batch.map(s => [s[S.request], s[S.tokens]]));
      const done = v.done.filter(([rid]) => !v.running.includes(rid) && !v.waiting.includes(rid));
      const queues = [['running', v.running.slice(0, sizes.rows), v.running.length - Math.min(v.running.length, sizes.rows)],
        ['waiting', v.waiting.slice(0, sizes.rows), v.waiting.length - Math.min(v.waiting.length, sizes.rows)]];
      this.drawn = {running: queues[0][1].slice(), waiting: queues[1][1].slice(), finished: done.map(([rid]) => rid)};
      const shownRunning = Math.max(1, queues[0][1].length + done.length);  // an empty queue still takes a row
      room.sharedHead = sharedStart(v, [...queues[0][1], ...queues[1][1], ...done.map(([rid]) => rid)]);
      for (const [name, ids, hidden] of queues) {
        const box = this.$('.sp-' + name);
        const rowsBox = box.querySelector('.sp-rows');
        const entries = ids.map(rid => [rid, null]);
        if (name === 'running') for (const [rid, how] of done) entries.push([rid, how]);
        const limit = name === 'running' ? ` <span class="sp-aside">· ${esc(this.t('queue_limit', {n: v.cfg.max_num_seqs}))}</span>` : '';
        setHtml(box.querySelector('.sp-qtitle'), `<b>${esc(this.t(name + '_queue'))}</b> · ` +
          `${esc(this.t('queue_count', {n: name === 'running' ? v.running.length : v.waiting.length}))}${limit}`);
        box.querySelector('.sp-more').textContent = hidden ? this.t('more_requests', {n: hidden}) : '';
        rowsBox.querySelectorAll('.sp-empty').forEach(e => e.remove());
        // The running queue takes the rows it draws; the waiting queue keeps the rest of the room the most requests
        // held at once need (requests move between the two, so the total seldom changes and the pool stays put).
        const kept = name === 'running' ? entries.length : Math.min(this.tallest, 2 * sizes.rows) - shownRunning;
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
      const flag = finished ? `<span class="sp-flag sp-done">${esc(finished)}</span>` :
        satOut ? `<span class="sp-flag" title="${esc(this.t('sits_out_title', {why: satOut}))}">${esc(flagText)}</span>` : '';
      const flagWidth = Math.min(room.flag, Math.ceil(flagText.length / 2 + 1) * room.char);  // on two lines
      const cellsWidth = this.cellsWidth(v, rid, room);
      let indices, width = room.cells - (flagText ? flagWidth : 0);
      for (let boxes = room.boxes; ; boxes -= 1) {
        indices = condense(n, boxes, computed - nNow, computed, room.sharedHead);
        if (boxes <= 3 || cellsWidth(indices) <= width) break;
      }
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

    owners(v) {
      const owners = v.blocks.map(() => []);
      v.requests.forEach((r, rid) => r[F.block_table].forEach(b => { if (owners[b]) owners[b].push(rid); }));
      return owners;
    }

    gridShape(n) {
      const columns = Math.max(1, Math.min(n, Math.max(this.sizes().grid, Math.ceil(Math.sqrt(n)))));
      return [Math.ceil(n / columns), columns];
    }

    /* A pool of a row or two (a preemption lesson's few blocks) sits above the narration, beside the queues, so a
     * projector shows it with them; a larger one has the width below. */
    placePool(n) {
      const pool = this.$('.sp-pool'), home = this.$(this.gridShape(n)[0] <= 2 ? '.sp-story' : '.sp-lower');
      if (pool.parentElement !== home) {
        home.prepend(pool);
        this.sized = null;
      }
      this.root.classList.toggle('sp-pool-beside', home.classList.contains('sp-story'));
    }

    /* The pool's title and what it holds; its canvas is painted after every write (fadePool). */
    renderPool(v) {
      this.placePool(v.blocks.length);
      const owners = this.owners(v);
      this.poolOwners = owners;
      this.poolColors = v.blocks.map((b, id) => b[B.ref_count] === 0 ? (b[B.hash] !== null ? COLORS.cached_free : COLORS.free)
        : owners[id].length ? color(owners[id][0]) : COLORS.reserved);  // in use by no request: vLLM's null block
      const m = v.metrics, reserved = this.poolColors.filter(c => c === COLORS.reserved).length;
      const n = v.blocks.length - reserved;  // vLLM's null block is not one of the pool's blocks
      setHtml(this.$('.sp-ptitle'), this.t('pool_title', {n, size: v.cfg.block_size, used: n - m[M.num_free_blocks], cached: m[M.num_cached_free_blocks],
        empty: m[M.num_free_blocks] - m[M.num_cached_free_blocks], reserved: reserved ? this.t('pool_reserved') : ''}));
      Object.assign(this.drawn, {owners, refs: v.blocks.map(b => b[B.ref_count]),
        cached_free: v.blocks.flatMap((b, i) => b[B.ref_count] === 0 && b[B.hash] !== null ? [i] : [])});
      this.$('.sp-overfull-key').hidden = !(v.overfull || []).length;
    }

    /* The pool's canvas to the frame's colours, fading from the ones drawn over `fadeMs` (0: at once). */
    fadePool(v, fadeMs) {
      const target = this.poolColors, from = this.colors.length === target.length ? this.colors : target;
      cancelAnimationFrame(this.poolFrame);
      if (!fadeMs || from === target) { this.paintPool(v, target); return; }
      const start = performance.now();
      const step = now => {
        const t = Math.min(1, (now - start) / fadeMs);
        this.paintPool(v, from.map((c, i) => c === target[i] ? c : mix(c, target[i], t)));
        if (t < 1) this.poolFrame = requestAnimationFrame(step);
      };
      this.colors = from;
      this.poolFrame = requestAnimationFrame(step);
    }

    /* The blocks in `colors`: only those whose colour, reference count or overfull mark changed since the canvas
     * was last painted at this shape (a step changes a few blocks of hundreds). */
    paintPool(v, colors) {
      this.colors = colors;
      const canvas = this.$('.sp-grid'), n = v.blocks.length;
      const [rows, columns] = this.gridShape(n);
      const width = Math.max(120, this.measured().canvas || 480);
      const cell = Math.max(4, Math.min(this.root.classList.contains('sp-present') ? 44 : 34, Math.floor(width / columns)));
      const ratio = window.devicePixelRatio || 1;
      if (canvas.width !== columns * cell * ratio || canvas.height !== rows * cell * ratio) {
        canvas.width = columns * cell * ratio;
        canvas.height = rows * cell * ratio;
        canvas.style.width = columns * cell + 'px';
        canvas.style.height = rows * cell + 'px';
      }
      this.cell = cell;
      const ctx = canvas.getContext('2d');
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      const shape = `${n} ${columns} ${cell} ${ratio}`;
      if (this.painted.shape !== shape) {  // (a canvas given a new size forgets its font too)
        this.painted = {shape, cells: []};
        ctx.clearRect(0, 0, columns * cell, rows * cell);
        ctx.font = `${Math.floor(cell * 0.36)}px sans-serif`;  // setting it lays the page out: once per shape
        ctx.textAlign = 'center';
        ctx.textBaseline = 'middle';
      }
      const gap = cell >= 12 ? 2 : 1;
      const labels = cell >= 24;
      const overfull = new Set((v.overfull || []).map(([id]) => id));
      for (let id = 0; id < n; id++) {
        const ref = v.blocks[id][B.ref_count], painted = `${colors[id]} ${ref} ${overfull.has(id)}`;
        if (this.painted.cells[id] === painted) continue;
        this.painted.cells[id] = painted;
        const x = (id % columns) * cell, y = Math.floor(id / columns) * cell;
        ctx.clearRect(x, y, cell, cell);
        ctx.fillStyle = colors[id];
        ctx.fillRect(x + gap / 2, y + gap / 2, cell - gap, cell - gap);
        if (overfull.has(id)) {  // more tokens than a block holds: the notebook's block-size bug
          ctx.strokeStyle = '#D62728';
          ctx.lineWidth = Math.max(2, cell / 10);
          ctx.strokeRect(x + gap / 2 + 1, y + gap / 2 + 1, cell - gap - 2, cell - gap - 2);
        }
        if (labels) {  // within its cell (the next one's may not be painted again)
          ctx.fillStyle = ref > 0 ? '#FFFFFF' : '#7B8794';
          ctx.fillText(ref > 1 ? `${id}×${ref}` : String(id), x + cell / 2, y + cell / 2, cell - gap);
        }
      }
    }

    blockTip(v, id) {
      const b = v.blocks[id], owners = this.poolOwners[id] || [];
      const ref = b[B.ref_count];
      const state = this.t(ref === 0 ? (b[B.hash] !== null ? 'block_cached_free' : 'block_free') : !owners.length ? 'block_reserved'
        : ref > 1 ? 'block_shared' : 'block_in_use');
      let [rid, start, count] = b[B.source] || [null, 0, 0];  // a cached-free block: the request that filled it
      if (owners.length) {
        const size = v.cfg.block_size;
        rid = owners[0];
        start = v.requests[rid][F.block_table].indexOf(id) * size;
        count = Math.min(size, v.requests[rid][F.num_tokens] - start);
      }
      const pieces = rid === null ? null : v.pieces[rid];
      const text = rid === null ? this.t('no_tokens') : pieces ? JSON.stringify(joinHeld(pieces.slice(start, start + count), ''))
        : joinHeld(v.tokens[rid].slice(start, start + count), ' ');
      const overfull = new Map(v.overfull || []).get(id);  // tokens held: the notebook's bug, a prefill in one block
      const lines = [`<b>${esc(this.t('block', {id}))}</b> · ${esc(state)}`,
        esc(this.t('owners', {owners: owners.length ? owners.map(o => this.t('owner', {id: o})).join(', ') : this.t('none')})),
        esc(this.t('ref_count', {n: ref})), esc(this.t('hash', {hash: b[B.hash] ? '0x' + b[B.hash] + '…' : this.t('no_hash')})),
        esc(this.t('block_tokens', {tokens: text.slice(0, 80)}))];
      if (overfull) lines.push(this.t('overfull', {n: overfull, size: v.cfg.block_size}));
      return lines.join('<br>');
    }

    renderTables(v) {
      const {font, tables} = this.measured();  // a cell is 2.6em of 0.85em text wide
      const width = Math.max(5, Math.floor((tables - 7.9 * font) / (2.6 * 0.85 * font + 2)));
      const limit = 2 * this.sizes().rows;
      const rows = [];
      let holders = 0;
      v.requests.forEach((r, rid) => {
        const table = r[F.block_table];
        if (!table.length || ++holders > limit) return;
        const cells = condense(table.length, width, 0, 0).map(i => i === null ? `<span class="sp-tok sp-gap" title="${esc(this.t('blocks_elided'))}">⋯</span>` :
          `<span class="sp-tok sp-bt" style="background:${color(rid)}" title="${esc(this.t('table_cell', {i, p: table[i], n: v.blocks[table[i]][B.ref_count]}))}">${table[i]}${v.blocks[table[i]][B.ref_count] > 1 ? '×' + v.blocks[table[i]][B.ref_count] : ''}</span>`);
        rows.push(`<div class="sp-trow"><span class="sp-label" style="color:${color(rid)}">ID:${rid}</span><span class="sp-cells">${cells.join('')}</span></div>`);
      });
      if (holders > limit) rows.push(`<div class="sp-more">${esc(this.t('more_holders', {n: holders - limit}))}</div>`);
      setHtml(this.$('.sp-trows'), rows.join('') || `<div class="sp-empty">${esc(this.t('no_holders'))}</div>`);
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
      this.$('.sp-ttitle').textContent = this.t('tables_title');
      const legend = strings.legend || {tokens: [], pool: [], hint: ''};
      const only = mark => ((legend.id_marks || []).includes(mark) ? ' class="sp-ids-key"'
        : (legend.text_marks || []).includes(mark) ? ' class="sp-text-key"' : '');  // shown on runs that draw them
      this.$('.sp-legend').innerHTML = legend.tokens.map(([mark, words]) => `<span${only(mark)}>${markHtml(mark)}${esc(words)}</span>`).join('') +
        `<span class="sp-hint">${esc(legend.hint)}</span>`;
      this.$('.sp-plegend').innerHTML = legend.pool.map(([mark, words]) =>
        `<span${mark === 'sw:overfull' ? ' class="sp-overfull-key" hidden' : ''}>${markHtml(mark)}${esc(words)}</span>`).join('');
      this.paintSwatches();
      this.updateControls();
      if (this.views[this.shown]) this.show(this.shown);
    }

    /* -- input ---------------------------------------------------------------------------------------- */

    bind() {
      this.$('.sp-step').addEventListener('click', () => this.step());
      this.$('.sp-back').addEventListener('click', () => this.back());
      this.$('.sp-play').addEventListener('click', () => (this.playing ? this.pause() : this.play()));
      this.$('.sp-speed').addEventListener('change', () => { if (this.playing) this.tellClass(this.speed()); });
      const slider = this.$('.sp-slider');
      slider.addEventListener('input', () => { this.dragging = true; this.pause(); this.desired = Number(slider.value); this.show(this.desired); });
      slider.addEventListener('change', () => { this.dragging = false; });
      this.$('.sp-keys').addEventListener('click', e => {
        const button = e.target.closest('button[data-step]');
        if (button) { this.pause(); this.goto(Number(button.dataset.step)); }
      });
      const canvas = this.$('.sp-grid'), tip = this.$('.sp-tip');
      canvas.addEventListener('mousemove', e => {
        const v = this.views[this.shown];
        if (!v || !this.cell) return;
        const box = canvas.getBoundingClientRect();
        const [, columns] = this.gridShape(v.blocks.length);
        const col = Math.floor((e.clientX - box.left) / this.cell), row = Math.floor((e.clientY - box.top) / this.cell);
        const id = row * columns + col;
        if (col >= columns || id >= v.blocks.length || id < 0) { tip.hidden = true; return; }
        tip.innerHTML = this.blockTip(v, id);
        tip.hidden = false;
        // Beside the pointer, on the side with room in the window (above it near the bottom of the window).
        const host = this.root.getBoundingClientRect(), size = tip.getBoundingClientRect();
        const x = e.clientX + 14 + size.width > window.innerWidth ? e.clientX - 14 - size.width : e.clientX + 14;
        const y = e.clientY + 14 + size.height > window.innerHeight ? e.clientY - 14 - size.height : e.clientY + 14;
        tip.style.left = (x - host.left) + 'px';
        tip.style.top = (y - host.top) + 'px';
      });
      canvas.addEventListener('mouseleave', () => { tip.hidden = true; });
      if (!Player.active) Player.active = this;  // with several players on a page, keys drive the last one used
      this.root.addEventListener('pointerdown', () => { Player.active = this; });
      this.onKey = e => {
        if (!this.root.isConnected) return;  // (off the page for now: mount() may put it back)
        if (Player.active !== this && Player.active && Player.active.root.isConnected) return;
        Player.active = this;
        const t = e.target;
        if (e.altKey || e.ctrlKey || e.metaKey || (t && t.closest && t.closest('input, textarea, select, [contenteditable]'))) return;
        const act = {ArrowRight: () => this.step(), ArrowLeft: () => this.back(), ' ': () => (this.playing ? this.pause() : this.play()),
          Home: () => { this.pause(); this.goto(0); }, End: () => { this.pause(); this.goto(this.views.length - 1); }}[e.key];
        if (act) { e.preventDefault(); act(); }
      };
      document.addEventListener('keydown', this.onKey);
      // A box a frame is drawn to that changed width (the window, a column, the pool moved beside the story): the
      // frame is drawn again to the new width (a change of height, as rows come and go, is none of this).
      const widths = new Map();
      this.resize = new ResizeObserver(entries => {
        let changed = false;
        for (const {target, contentRect} of entries) {
          changed = changed || widths.get(target) !== contentRect.width;
          widths.set(target, contentRect.width);
        }
        if (!changed) return;
        this.sized = null;
        if (this.views[this.shown]) this.show(this.shown);
      });
      ['.sp-bbar', '.sp-running .sp-rows', '.sp-canvas-box', '.sp-trows'].forEach(box => this.resize.observe(this.$(box)));
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

  function mix(a, b, t) {
    const x = [1, 3, 5].map(i => parseInt(a.slice(i, i + 2), 16)), y = [1, 3, 5].map(i => parseInt(b.slice(i, i + 2), 16));
    return '#' + x.map((v, i) => Math.round(v + (y[i] - v) * t).toString(16).padStart(2, '0')).join('');
  }

  /* The Streamlit component (st.components.v2): one stage player per page, fed each rerun's message. A full page
     rerun may mount the component in a new element under a new key (when something above it appears, or
     presentation mode is switched): the player moves there with its frames, options and pending clicks. (It is
     kept on the window: a remount may evaluate this module anew.) */
  function mount(component) {
    const {data, parentElement, setTriggerValue, setStateValue} = component;
    let player = window.schedlabStagePlayer;
    if (!player) {
      const host = document.createElement('div');
      host.className = 'sp-host';
      player = window.schedlabStagePlayer = new Player(host, {});
    }
    const host = player.root;
    if (host.parentElement !== parentElement) {
      parentElement.appendChild(host);
      player.reattached();
    }
    player.send = request => setTriggerValue('request', request);
    player.report = frame => setStateValue('frame', frame);
    player.tell = value => setStateValue('play', value);
    const present = Boolean(data && data.present);
    if (present && !host.classList.contains('sp-present')) collapseSidebar();  // turned on: make room
    player.setPresent(present);
    player.receive(data);
  }

  /* Presentation mode turned on collapses Streamlit's sidebar: the projector needs the width (a `present=1` link
   * opens the page with it collapsed, app.py). Turned off, the sidebar is open already: its toggle is in it. */
  function collapseSidebar() {
    const button = document.querySelector('[data-testid=stSidebar][data-collapsed=false] [data-testid=stSidebarCollapseButton] button');
    if (button) button.click();
  }

  /* The offline page: every frame embedded, nothing to ask. */
  function mountStatic(element, message, present) {
    const player = new Player(element, {});
    player.setPresent(Boolean(present));
    player.receive(message);
    return player;
  }

  /* A player standing still on frame k of the frames `source` holds: they are shared, not decoded again. */
  function mountStill(element, source, k) {
    const player = new Player(element, {});
    player.releaseKeys();
    player.useStrings(source.lang, source.strings);
    Object.assign(player, {header: source.header, views: source.views, tallest: source.tallest, over: source.over, run: source.run});
    player.show(k);
    return player;
  }

  window.SchedlabPlayer = {Player, decode, condense, mount, mountStatic, mountStill, showTogether};
})();
