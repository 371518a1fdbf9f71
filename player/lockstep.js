/* schedlab's lockstep stages: two or more stage players (player.js; the server caps how many: RUN_BOUNDS["variants"]
 * in engine/run/recipe.py) driven by one bar (Back, Step, Play, a slider),
 * every stage showing its run's frame at the same step. The steps where the runs' decisions part are marked under
 * the slider and told in words (viz/lockstep.py computes them and their sentences; this file only shows them).
 *
 * The message: {runs: [a player message with every frame, as the offline export embeds it], partings:
 * [[step, sentence]...], colors: [one per run], stopped: [per run, what stopped it early (a learner's scheduler
 * that broke an invariant), or null], lang, strings, key (optional: which stages, see mount)}. Its words
 * are the server's: the shared buttons
 * reuse the players' own (`runs[0].strings`), the rest are `strings` (lockstep.ui.* in i18n/). A run shorter than
 * the others stays on its last frame, marked as ended (a stopped one says why from its last frame on). Each player keeps its own drawing; its controls are hidden
 * and its keys are this bar's. Of a player this file uses only the API player.js lists at its top: every stage is
 * drawn by one SchedlabPlayer.showTogether, so a step lays the page out once, not once per stage.
 */
(function () {
  'use strict';
  if (window.SchedlabLockstep) return;

  const SPEEDS = [1, 2, 5, 10, 20];
  const MIN_COLUMN_PX = 260;  // narrower than this, the stages take another row (four: two by two; five: three, then two)
  const esc = s => String(s).replace(/[&<>"']/g, ch => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[ch]));
  const fill = (template, params) => String(template).replace(/\{(\w+)\}/g, (all, name) => (name in params ? params[name] : all));

  const HTML = `
<div class="sp-ls-bar">
  <div class="sp-ls-controls">
    <button type="button" data-action="back"></button>
    <button type="button" class="sp-primary" data-action="step"></button>
    <button type="button" data-action="play"></button>
    <select class="sp-ls-speed">${SPEEDS.map(s => `<option value="${s}"${s === 2 ? ' selected' : ''}></option>`).join('')}</select>
    <label class="sp-keystop"><input type="checkbox" class="sp-ls-pause-at"> <span></span></label>
    <span class="sp-ls-position"></span>
    <button type="button" data-action="prev-parting"></button>
    <button type="button" data-action="next-parting"></button>
  </div>
  <div class="sp-ls-track"><input type="range" class="sp-ls-slider" min="0" max="0" value="0"><div class="sp-ls-marks"></div></div>
  <div class="sp-ls-said" aria-live="polite"></div>
</div>
<div class="sp-ls-stages"></div>
<div class="sp-legend sp-ls-legend"></div>
<details class="sp-ls-list"><summary></summary><ol></ol></details>`;

  class Lockstep {
    constructor(root, message) {
      this.root = root;
      this.strings = Object.assign({}, message.runs[0].strings, message.strings);
      this.partings = new Map(message.partings);  // step -> its sentence
      this.partingSteps = message.partings.map(([step]) => step);
      this.shown = -1;
      this.playing = false;
      root.classList.add('sp', 'sp-ls');
      root.setAttribute('data-testid', 'lockstep');
      root.setAttribute('lang', message.lang);
      root.innerHTML = HTML;
      this.$ = sel => root.querySelector(sel);
      this.columns = [];
      this.players = message.runs.map((run, i) => {
        const column = document.createElement('section');
        column.className = 'sp-ls-column';
        column.style.borderTopColor = message.colors[i];
        column.innerHTML = '<div class="sp-ls-ended"></div><div class="sp-ls-stage"></div>';
        this.$('.sp-ls-stages').appendChild(column);
        this.columns.push(column);
        const player = window.SchedlabPlayer.mountStatic(column.querySelector('.sp-ls-stage'), run);
        player.releaseKeys();  // the bar's keys move every stage
        return player;
      });
      this.ended = this.columns.map(column => column.querySelector('.sp-ls-ended'));
      this.stopped = message.stopped || [];
      this.last = Math.max(...this.players.map(p => p.lastFrame()));
      this.$('.sp-ls-legend').innerHTML = this.players[0].legendHtml();  // the stages' legends, once for all of them
      this.words();
      this.bind();
      this.show(0);
    }

    t(key, params = {}) { return fill(key in this.strings ? this.strings[key] : key, params); }

    /* -- moving ----------------------------------------------------------------------------------------- */

    /* Every stage to step k (a run that ended before k stays on its last frame). */
    show(k) {
      k = Math.max(0, Math.min(this.last, k));
      const moves = this.players.map((player, i) => [player, Math.min(k, player.lastFrame()), this.columns[i]])
        .filter(([player, frame, column]) => player.shownFrame() !== frame && !(this.playing && this.offScreen.has(column)));
      window.SchedlabPlayer.showTogether(moves, this.playing ? Number(this.$('.sp-ls-speed').value) : null);
      this.players.forEach((player, i) => {
        const last = player.lastFrame(), stopped = this.stopped[i] && k >= last;
        const ended = stopped ? this.stopped[i] : k > last ? this.t('ended', {last}) : '';
        this.columns[i].classList.toggle('sp-ls-over', k > last);
        if (this.ended[i].textContent !== ended) this.ended[i].textContent = ended;
      });
      this.shown = k;
      this.root.setAttribute('data-step', String(k));
      this.update();
    }

    step() { this.show(this.shown + 1); }

    back() { this.pause(); this.show(this.shown - 1); }

    goto(k) { this.pause(); this.show(k); }

    /* The parting before (direction -1) or after (+1) the step shown. */
    parting(direction) {
      const steps = direction > 0 ? this.partingSteps : [...this.partingSteps].reverse();
      return steps.find(s => (direction > 0 ? s > this.shown : s < this.shown));
    }

    play() {
      if (this.playing) return;
      this.playing = true;
      this.due = 0;
      if (this.shown >= this.last) this.show(0);
      this.tick();
    }

    pause() {
      if (!this.playing) return;
      this.playing = false;
      clearTimeout(this.timer);
      this.show(this.shown);  // the stages off the screen too
    }

    tick() {
      if (!this.playing || !this.root.isConnected) return;
      if (this.shown >= this.last) { this.pause(); return; }
      this.show(this.shown + 1);
      if (this.$('.sp-ls-pause-at').checked && this.partings.has(this.shown)) { this.pause(); return; }
      const now = performance.now(), interval = 1000 / Number(this.$('.sp-ls-speed').value);
      this.due = Math.max(now, (this.due || now) + interval);  // on the beat, however long drawing took
      this.timer = setTimeout(() => this.tick(), this.due - now);
    }

    /* Moved into a new element by a page rerun: a Play that stopped while it was off the page goes on. */
    reattached() {
      if (this.playing) { clearTimeout(this.timer); this.tick(); }
    }

    destroy() {
      this.pause();
      document.removeEventListener('keydown', this.onKey);
      this.resize.disconnect();
      this.watch.disconnect();
      this.root.remove();
    }

    /* -- drawing ---------------------------------------------------------------------------------------- */

    words() {
      for (const action of ['back', 'step', 'play']) {
        const button = this.$(`[data-action=${action}]`);
        button.textContent = this.t(action);
        button.setAttribute('aria-label', this.t(action + '_name'));
        button.title = this.t(action + '_title');
      }
      for (const [action, key] of [['prev-parting', 'prev'], ['next-parting', 'next']]) {
        const button = this.$(`[data-action=${action}]`);
        button.textContent = this.t(key);
        button.title = this.t(key + '_title');
      }
      const speed = this.$('.sp-ls-speed');
      speed.setAttribute('aria-label', this.t('speed_name'));
      speed.querySelectorAll('option').forEach(o => { o.textContent = this.t(o.value === '1' ? 'speed.one' : 'speed.other', {n: o.value}); });
      this.$('.sp-keystop span').textContent = this.t('pause_at');
      this.$('.sp-ls-slider').setAttribute('aria-label', this.t('slider_name'));
      this.$('.sp-ls-slider').max = String(this.last);
      const n = this.partingSteps.length;
      // A mark sits where the slider's thumb stands at its step (the thumb's centre runs from 8 px to width - 8 px)
      this.$('.sp-ls-marks').innerHTML = this.partingSteps.map(s => `<button type="button" class="sp-ls-mark" data-step="${s}" ` +
        `style="left:calc(8px + (100% - 16px) * ${this.last ? s / this.last : 0})" title="${esc(this.partings.get(s))}" ` +
        `aria-label="${esc(this.partings.get(s))}"></button>`).join('');
      const list = this.$('.sp-ls-list');
      list.hidden = n === 0;
      list.querySelector('summary').textContent = this.t(n === 1 ? 'list.one' : 'list.other', {n});
      list.querySelector('ol').innerHTML = this.partingSteps.map(s =>
        `<li data-step="${s}"><a href="#" data-step="${s}">${esc(this.partings.get(s))}</a></li>`).join('');
    }

    update() {
      const k = this.shown, slider = this.$('.sp-ls-slider');
      if (!this.dragging) slider.value = String(k);
      this.$('.sp-ls-position').textContent = this.t('position', {step: k, last: this.last});
      const play = this.$('[data-action=play]');
      play.textContent = this.t(this.playing ? 'pause' : 'play');
      play.setAttribute('aria-label', this.t(this.playing ? 'pause_name' : 'play_name'));
      this.$('[data-action=back]').disabled = k <= 0;
      this.$('[data-action=step]').disabled = k >= this.last;
      this.$('[data-action=prev-parting]').disabled = this.parting(-1) === undefined;
      this.$('[data-action=next-parting]').disabled = this.parting(1) === undefined;
      const said = this.$('.sp-ls-said'), here = this.partings.get(k), next = this.parting(1);
      said.classList.toggle('sp-on', here !== undefined);
      const html = here !== undefined ? `<b>${esc(this.t('here'))}</b> ${esc(here)}` :
        !this.partingSteps.length ? esc(this.t('never')) :
          esc(this.t('agree', {step: k}) + ' ' + (next === undefined ? this.t('no_more') : this.t('next_at', {step: next})));
      if (this.saidHtml !== html) said.innerHTML = this.saidHtml = html;
      const marked = `.sp-ls-marks [data-step="${here}"], .sp-ls-list [data-step="${here}"]`;  // none, between partings
      this.root.querySelectorAll('.sp-ls-marks .sp-here, .sp-ls-list .sp-here').forEach(e => e.classList.remove('sp-here'));
      if (here !== undefined) this.root.querySelectorAll(marked).forEach(e => e.classList.add('sp-here'));
    }

    /* Stages side by side while each keeps MIN_COLUMN_PX; else in as few rows as let each keep it, as even as they
       go (four: two by two; five or six: three a row), or one under another. (A stage whose width changed draws its
       frame again itself: its rows hold as many token cells as fit.) */
    layout() {
      const stages = this.$('.sp-ls-stages'), n = this.players.length, width = stages.clientWidth || 1200;
      let rows = 1, columns = n;
      while (columns > 1 && width / columns < MIN_COLUMN_PX) columns = Math.ceil(n / ++rows);
      stages.style.gridTemplateColumns = `repeat(${columns}, minmax(0, 1fr))`;
    }

    /* -- input ------------------------------------------------------------------------------------------ */

    bind() {
      this.$('[data-action=step]').addEventListener('click', () => this.step());
      this.$('[data-action=back]').addEventListener('click', () => this.back());
      this.$('[data-action=play]').addEventListener('click', () => (this.playing ? this.pause() : this.play()));
      this.$('[data-action=prev-parting]').addEventListener('click', () => this.goto(this.parting(-1)));
      this.$('[data-action=next-parting]').addEventListener('click', () => this.goto(this.parting(1)));
      const slider = this.$('.sp-ls-slider');
      slider.addEventListener('input', () => { this.dragging = true; this.goto(Number(slider.value)); });
      slider.addEventListener('change', () => { this.dragging = false; });
      this.root.addEventListener('click', e => {
        const target = e.target.closest('.sp-ls-marks [data-step], .sp-ls-list a[data-step]');
        if (target) { e.preventDefault(); this.goto(Number(target.dataset.step)); }
      });
      this.onKey = e => {
        if (!this.root.isConnected) return;
        const t = e.target;
        if (e.altKey || e.ctrlKey || e.metaKey || (t && t.closest && t.closest('input, textarea, select, [contenteditable]'))) return;
        const act = {ArrowRight: () => this.step(), ArrowLeft: () => this.back(), ' ': () => (this.playing ? this.pause() : this.play()),
          Home: () => this.goto(0), End: () => this.goto(this.last)}[e.key];
        if (act) { e.preventDefault(); act(); }
      };
      document.addEventListener('keydown', this.onKey);
      this.resize = new ResizeObserver(() => this.layout());
      this.resize.observe(this.$('.sp-ls-stages'));
      // A stage off the screen (the lower row at 1280x720) is not drawn while Play runs: it catches up
      // when it comes into view, and when Play stops.
      this.offScreen = new Set();
      this.watch = new IntersectionObserver(entries => {
        entries.forEach(({target, isIntersecting}) => this.offScreen[isIntersecting ? 'delete' : 'add'](target));
        if (this.shown >= 0) this.show(this.shown);
      });
      this.columns.forEach(column => this.watch.observe(column));
      this.layout();
    }
  }

  /* The Streamlit component (st.components.v2) of the policy lab: one lockstep per page, sent as JSON text. A rerun
     that sends the same text keeps it as it is, playing or not; another comparison or language builds it anew at
     the step shown. (Kept on the window: a remount may evaluate this module anew.) */
  function mount(component) {
    const {data, parentElement} = component;
    let lockstep = window.schedlabLockstep;
    if (!lockstep || lockstep.source !== data) {
      const message = JSON.parse(data);
      // the same stages sent again (another language) keep their step; other stages (`key`: a tour's stop) start at 0
      const at = lockstep && lockstep.key === message.key ? lockstep.shown : 0;
      if (lockstep) lockstep.destroy();
      lockstep = window.schedlabLockstep = new Lockstep(document.createElement('div'), message);
      lockstep.source = data;
      lockstep.key = message.key;
      lockstep.show(at);
    }
    if (lockstep.root.parentElement !== parentElement) {
      parentElement.appendChild(lockstep.root);
      lockstep.layout();
      lockstep.reattached();
    }
  }

  /* The offline page: every run's frames embedded. */
  function mountStatic(element, message) { return new Lockstep(element, message); }

  window.SchedlabLockstep = {Lockstep, mount, mountStatic};
})();
