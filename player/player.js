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
 *   SchedlabPlayer.registerPanel(id, draw)  the renderer of a scheduler's panel `id` (player/panels.js, the one
 *                                  registry): draw(player, data, element) for every frame that has that panel, `data`
 *                                  what the server sent of it, `element` its box below the stage; words: player.t
 *   SchedlabPlayer.registerShape(shape, draw)  the renderer of every panel of a generic `shape` (a card: any kind's,
 *                                  scheduler/panel_shapes.py), the same arguments (player/panel_shapes.js)
 *   SchedlabPlayer.barHtml(used, limit, marks)  a bar's markup, `used` of `limit` with marks [at, label] (a meter's)
 *   SchedlabPlayer.placeBeside(element, aboveLegend)  a panel's box moved under the queues, beside the narration
 *                                  (below the stage where the stage is too narrow for the two side by side)
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
 *
 * The player is seven files, one job each, served in this order (player/assets.PLAYER_FILES) and sharing their
 * internals through window.SchedlabPlayerParts (no other script's to read): decode.js (the wire delta's decoder
 * and names), transport.js (messages, asks, Step/Back/Play and the clock), follow.js (a class's lecturer and
 * followers), panels.js (the one registry of the renderers of the schedulers' own panels), render.js (drawing a
 * frame, its words), pool.js (the KV pools' canvas and cells, the moves between them, and the block tables) and this
 * one (the Player class made of their methods, its input, and the API above).
 */
(function () {
  'use strict';
  if (window.SchedlabPlayer) return;
  const parts = window.SchedlabPlayerParts, {EMPTY, ANSWER_TIMEOUT_MS, HTML, decode, condense, showTogether, registerPanel, registerShape, barHtml, placeBeside} = parts;

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

    /* -- asked by other scripts (see the top of this file) -------------------------------------------------- */

    lastFrame() { return this.views.length - 1; }

    shownFrame() { return this.shown; }

    releaseKeys() { document.removeEventListener('keydown', this.onKey); }

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

  /* The player's jobs, each a file (player/assets.PLAYER_FILES), as the methods of one class. */
  for (const job of [parts.Transport, parts.Follow, parts.Render, parts.Pool]) {
    for (const name of Object.getOwnPropertyNames(job.prototype)) {
      if (name !== 'constructor') Object.defineProperty(Player.prototype, name, Object.getOwnPropertyDescriptor(job.prototype, name));
    }
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

  window.SchedlabPlayer = {Player, decode, condense, mount, mountStatic, mountStill, showTogether, registerPanel, registerShape, barHtml, placeBeside};
})();
