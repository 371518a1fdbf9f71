/* schedlab's handouts: the stepper's run beside its stage player (player.js), offline, printed and as slides.
 *
 * The handout (viz/handout.py): {cover: the title page's HTML, pages: [the key frames' steps: those held are printed],
 * prompts: {request id: its prompt line}, texts: [per frame: [request id, status and progress, characters of the
 * output kept, characters added]...], strings}. Offline (viz/html_export.handout_html) the player plays with each
 * request's generated text under it, and a print (Ctrl+P, Chromium's PDF) shows the title page and one page per key
 * frame, each a still player on that frame. In the app a component of its own (ui/handout.py) carries the handout
 * without texts, and Ctrl+P prints the same pages from the frames the stage player holds. A slide is the player without its controls, the
 * queues beside the whole KV pool.
 */
(function () {
  'use strict';
  if (window.SchedlabHandout) return;

  const PRINT_POOL_PX = 330;  // the pool's height on a printed page (A4 landscape), its cells shrunk to fit
  const SLIDE_POOL_PX = 300;  // on a 1280x720 slide
  const esc = s => String(s).replace(/[&<>"']/g, ch => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[ch]));

  /* Each request's generated text at the frame shown, rebuilt from the deltas (from frame 0 when moving back). */
  class Texts {
    constructor(box, handout, palette) {
      this.box = box;
      this.handout = handout;
      this.palette = palette;
      this.k = -1;
      this.lines = new Map();  // request id -> [status and progress, output]
      const s = handout.strings;
      box.innerHTML = `<h3>${esc(s.texts_title)}</h3>` + (s.caveat ? `<p class="sh-caveat">${esc(s.caveat)}</p>` : '') +
        '<div class="sh-rows"></div>';
    }

    show(k) {
      if (k < this.k) { this.lines.clear(); this.k = -1; }
      for (let i = this.k + 1; i <= k; i++) {
        for (const [rid, head, keep, added] of this.handout.texts[i] || []) {
          const old = this.lines.get(rid);
          this.lines.set(rid, [head, (old ? old[1].slice(0, keep) : '') + added]);
        }
      }
      this.k = k;
      const nothing = this.handout.strings.nothing_yet;
      this.box.querySelector('.sh-rows').innerHTML = [...this.lines].sort((a, b) => a[0] - b[0]).map(([rid, [head, out]]) =>
        `<div class="sh-text" data-rid="${rid}"><b style="color:${this.palette[rid % this.palette.length]}">ID:${rid}</b> ` +
        `<span class="sh-head">${esc(head)} · ${esc(this.handout.prompts[rid] || '')}</span><br>` +
        `<code>${esc(out || nothing)}</code></div>`).join('');
    }
  }

  /* Shrink the pool's cells until the grid is at most `maxHeight` px tall: a slide or a page holds all of it. */
  function fitPool(player, maxHeight) {
    const canvas = player.$('.sp-grid'), box = player.$('.sp-canvas-box');
    const height = canvas.getBoundingClientRect().height;
    if (height <= maxHeight) return;
    box.style.width = Math.max(120, Math.floor(box.clientWidth * maxHeight / height)) + 'px';
    player.paintPool(player.views[player.shown], player.colors);
  }

  /* A player standing still on frame k of `main`'s frames (shared, not decoded again), laid out as a sheet. */
  function still(main, element, k) {
    element.classList.add('sh-sheet');
    const player = new window.SchedlabPlayer.Player(element, {});
    document.removeEventListener('keydown', player.onKey);  // the page's keys are the main player's
    player.useStrings(main.lang, main.strings);
    Object.assign(player, {header: main.header, views: main.views, tallest: main.tallest, over: main.over, run: main.run});
    player.show(k);
    fitPool(player, PRINT_POOL_PX);
    return player;
  }

  /* The printed handout in `host`: the title page, then one page per step of `handout.pages` held (none: the frame
   * shown). */
  function printPages(host, main, handout) {
    const last = main.views.length - 1;
    const steps = (handout.pages || []).filter(k => k <= last);
    if (!steps.length && main.shown >= 0) steps.push(main.shown);
    host.setAttribute('lang', main.lang || '');
    host.innerHTML = `<section class="sh-page sh-cover">${handout.cover}</section>` +
      steps.map(k => `<section class="sh-page sh-frame" data-step="${k}"><div></div></section>`).join('');
    host.querySelector('.sh-frames').textContent = handout.strings.frames.replace('{last}', last);
    host.querySelectorAll('.sh-frame').forEach(page => still(main, page.firstElementChild, Number(page.dataset.step)));
  }

  /* The offline page: the player, the generated texts following the frame it shows, the printed pages. */
  function mountStatic(element, message, handout) {
    element.classList.add('sh-handout');
    element.innerHTML = '<div class="sh-screen"><div class="sh-stage"></div><section class="sh-texts"></section></div>' +
      '<div class="sh-print"></div>';
    const player = window.SchedlabPlayer.mountStatic(element.querySelector('.sh-stage'), message);
    const texts = new Texts(element.querySelector('.sh-texts'), handout, message.colors.palette);
    texts.show(player.shown);
    new MutationObserver(() => texts.show(player.shown)).observe(player.root, {attributes: true, attributeFilter: ['data-frame']});
    printPages(element.querySelector('.sh-print'), player, handout);
    return player;
  }

  /* A slide: the player without its controls, presentation-sized, the queues beside the pool and the story. */
  function mountSlide(element, message) {
    element.classList.add('sh-sheet', 'sh-slide');
    const player = window.SchedlabPlayer.mountStatic(element, message, true);
    showSlide(player, player.shown);
    return player;
  }

  function showSlide(player, k) {
    player.show(k);
    fitPool(player, SLIDE_POOL_PX);
  }

  /* In the app: the print component's data is the handout; Ctrl+P prints its pages, from the frames the stage
   * player holds, in place of the page. */
  let appHandout = null;
  function follow(handout) {
    if (handout && handout.cover) appHandout = handout;
  }
  window.addEventListener('beforeprint', () => {
    const main = window.schedlabStagePlayer;
    if (!main || !appHandout || !main.views.length || document.querySelector('body > .sh-print')) return;
    const host = document.createElement('div');
    host.className = 'sh-print';
    document.body.appendChild(host);
    printPages(host, main, appHandout);
  });
  window.addEventListener('afterprint', () => document.querySelectorAll('body > .sh-print').forEach(e => e.remove()));

  window.SchedlabHandout = {mountStatic, mountSlide, showSlide, printPages, follow};
})();
